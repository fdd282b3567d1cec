/* verify_api.h — `quarry verify --endpoint`: qr_verify's index check through DynamoDB's
 * API, for a server that holds its data (or any endpoint). Only reads. */
#ifndef QR_CHECKER_VERIFY_API_H
#define QR_CHECKER_VERIFY_API_H

#include "checker/conn.h"
#include "util/buf.h"

/* Checks every index of table (every table when NULL) against its table's items, read
 * with Scan; appends what was checked and every difference to report, in qr_verify's
 * words. quiet: no progress lines on stderr. Returns the number of differences, or -1
 * with err set when the API could not be read. */
long verify_api(conn *c, const char *table, int quiet, buf *report, qr_err *err);

#endif
