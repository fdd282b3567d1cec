/* render.h — rows of the rendered single-table layout, shared by the text (render.c) and
 * HTML (render_html.c) renderers. Internal to the checker. */
#ifndef QR_CHECKER_RENDER_H
#define QR_CHECKER_RENDER_H

#include "checker/output.h"

#define RENDER_EXAMPLES 2
#define RENDER_CELL 256

typedef struct row {
    char pk[RENDER_CELL], sk[RENDER_CELL];
    const m_entity *e;
    const char *serves; /* the patterns this item shape serves (in r's arena) */
} row;

/* The example rows of table t (ix NULL) or of index ix, sorted as DynamoDB stores them;
 * *n gets their count. The caller frees the array with free(); NULL when memory runs out. */
row *render_collect(ck_report *r, const m_table *t, const m_index *ix, size_t *n);
/* "all attributes", "keys only" or "keys and listed attributes". */
const char *render_projection_name(const m_index *ix);

#endif
