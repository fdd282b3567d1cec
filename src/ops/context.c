/* context.c — what the operations share beyond their parameters: the call's context
 * (the region it was received for) and the writing of documents into answers.
 *
 * The context is set by qr_call_in for the calls of one thread; nothing here parses
 * requests or reads tables. */
#include "model/value.h"
#include "ops/ops.h"

/* The context of the call this thread is running, for what handlers ask of it. */
static __thread const qr_call_context *current_context;

const qr_call_context *ops_enter_context(const qr_call_context *ctx)
{
    const qr_call_context *outer = current_context;
    current_context = ctx;
    return outer;
}

const char *ops_request_region(void)
{
    const char *r = current_context ? current_context->region : NULL;
    return r && *r ? r : "ddblocal";
}

int json_append(buf *out, const json_t *v)
{
    if (!json_is_object(v) && !json_is_array(v))
        return -1; /* as json_dump_callback without JSON_ENCODE_ANY */
    return value_dump(out, v);
}
