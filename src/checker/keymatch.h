/* keymatch.h — reading a model's key templates backwards: which entity an item of a table
 * is (the entity whose pk and sk templates its key matches), the values its template
 * variables hold, and the key of the item a copied attribute came from. Pure: items are
 * DynamoDB JSON (jansson), nothing is read or written. */
#ifndef QR_CHECKER_KEYMATCH_H
#define QR_CHECKER_KEYMATCH_H

#include <jansson.h>

#include "checker/model.h"

/* Matches text against template t. Returns 1 and adds each variable's value to vars (an
 * object, name -> string) when it matches, 0 when it does not. Where a variable could take
 * several values (USER#{a}#{b} against USER#x#y#z) the split agreeing with the attributes
 * item stores is taken (item may be NULL). */
int keymatch_template(const m_template *t, const char *text, const json_t *item, json_t *vars);

/* The entity of table tb whose key templates item's key matches, choosing the one whose
 * templates fix the most literal text when several do (ORDER#{id}#ITEM#{line} before
 * ORDER#{id}); NULL when none does or the key is binary. On a match, *vars (when not
 * NULL) is a new object of the template variables' values. */
const m_entity *keymatch_entity(const qr_model *m, const m_table *tb, const json_t *item,
                                json_t **vars);

/* The Key (attribute name -> AttributeValue, a new object) of the item copy attribute a
 * of entity e came from, built from a's source entity's key templates with the values of
 * copy item: each variable from the attribute of e that gives it (model_copy_key_attr),
 * as the item stores it or, when it does not, as e's key templates hold it (vars, from
 * keymatch_entity). NULL when a variable has no value, with *missing naming it. */
json_t *keymatch_source_key(const m_entity *e, const m_attr *a, const json_t *item,
                            const json_t *vars, const char **missing);

/* The text of a scalar AttributeValue ({"S": ..} or {"N": ..}), or NULL. */
const char *keymatch_scalar(const json_t *av);

#endif
