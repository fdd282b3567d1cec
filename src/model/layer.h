/* layer.h — which of DynamoDB's two value-checking layers the current request runs. The
 * layer belongs to the thread running the request: qr_call sets it for each call. */
#ifndef QR_LAYER_H
#define QR_LAYER_H

/* DynamoDB checks the attribute values of a request in one of two layers, and the operation
 * decides which (recorded in four regions in October 2026 by a public conformance suite).
 * The current layer (PutItem, UpdateItem, DeleteItem, GetItem, BatchGetItem, Query, PartiQL
 * statements, the control plane) and the older one (BatchWriteItem, the transactions, Scan,
 * PartiQL's parameters) word a malformed number or a duplicate set member differently, and
 * the older one reads numbers as Java's BigDecimal does. */
typedef enum value_layer { VALUE_LAYER_CURRENT = 0, VALUE_LAYER_OLDER = 1 } value_layer;

/* Makes l this thread's layer and returns the one it replaces. */
value_layer value_layer_enter(value_layer l);

/* This thread's layer (VALUE_LAYER_CURRENT unless a call set another). */
value_layer value_layer_now(void);

#endif
