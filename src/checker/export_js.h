/* export_js.h — what the exporters that write JavaScript entity definitions (ElectroDB,
 * dynamodb-toolbox) share: which entities they write and which attributes a key reads.
 * Nothing here writes code; each library's exporter does. */
#ifndef QR_CHECKER_EXPORT_JS_H
#define QR_CHECKER_EXPORT_JS_H

#include "checker/model.h"

/* True when the entity is written: its table is a DynamoDB table (not CQL) and it has keys. */
int js_exports_entity(const m_entity *e);
/* True when template t reads attribute a. */
int js_in_template(const m_template *t, const m_attr *a);
/* True when any key template of e (primary or index) reads attribute a. */
int js_in_any_key(const m_entity *e, const m_attr *a);

#endif
