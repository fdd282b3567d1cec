/* open.c — qr_open: the engine's database (engine_open), then the model files of
 * qr_options.models loaded into the model watch (watch.h). A model that does not load
 * closes the database again and fails the open with the loader's FILE:LINE:COL message;
 * qr_close (the engine's) frees the watch with the rest. */
#include <stdlib.h>

#include "ops/ops.h"
#include "watch/watch.h"

int qr_open(const char *dir, const qr_options *opts, qr_db **out, char **errmsg)
{
    qr_db *db;
    if (errmsg) *errmsg = NULL;
    if (engine_open(dir, opts, &db, errmsg) != QR_OK) return QR_ERR;
    if (opts && opts->models && opts->models[0]) {
        char *msg = NULL;
        if (watch_open(db, opts->models, opts->model_strict, &msg)) {
            qr_close(db);
            if (errmsg)
                *errmsg = msg;
            else
                free(msg);
            return QR_ERR;
        }
    }
    *out = db;
    return QR_OK;
}
