/* layer.c — this thread's value-checking layer (see layer.h). */
#include "model/layer.h"

static _Thread_local value_layer this_thread_layer = VALUE_LAYER_CURRENT;

value_layer value_layer_enter(value_layer l)
{
    value_layer before = this_thread_layer;
    this_thread_layer = l;
    return before;
}

value_layer value_layer_now(void)
{
    return this_thread_layer;
}
