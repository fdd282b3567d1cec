/* export_js.c — the entity and key questions the JavaScript exporters (ElectroDB,
 * dynamodb-toolbox) share, declared in export_js.h. It only reads the model; the code each
 * library needs is written by its own exporter. */
#include "checker/export_js.h"

int js_exports_entity(const m_entity *e)
{
    return e->table != NULL && e->table->cql == NULL && e->pk.text != NULL;
}

int js_in_template(const m_template *t, const m_attr *a)
{
    for (size_t i = 0; i < t->nseg; i++)
        if (t->seg[i].is_var && t->seg[i].attr == a) return 1;
    return 0;
}

int js_in_any_key(const m_entity *e, const m_attr *a)
{
    if (js_in_template(&e->pk, a) || js_in_template(&e->sk, a)) return 1;
    for (size_t k = 0; k < e->nkeys; k++)
        if (js_in_template(&e->keys[k].pk, a) || js_in_template(&e->keys[k].sk, a)) return 1;
    return 0;
}
