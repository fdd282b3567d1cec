/* test_wire.c — the wire helpers around a DynamoDB call: target, CRC32, request ids,
 * error documents, table names for logs, and the server's option parsing helpers.
 * None of these need the engine or a socket. */
#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "server/server.h"
#include "server/wire.h"

static int failures, checks;

#define CHECK(cond)                                                                    \
    do {                                                                               \
        checks++;                                                                      \
        if (!(cond)) {                                                                 \
            failures++;                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);   \
        }                                                                              \
    } while (0)

#define CHECK_STR(got, want)                                                           \
    do {                                                                               \
        checks++;                                                                      \
        const char *g_ = (got), *w_ = (want);                                          \
        if (g_ == NULL || strcmp(g_, w_) != 0) {                                       \
            failures++;                                                                \
            fprintf(stderr, "%s:%d: got '%s'\n  want '%s'\n", __FILE__, __LINE__,      \
                    g_ ? g_ : "(null)", w_);                                           \
        }                                                                              \
    } while (0)

static void test_operation(void)
{
    static const char *const ops[] = {"GetItem", "PutItem", "Query", NULL};
    CHECK_STR(wire_operation("DynamoDB_20120810.PutItem", ops), "PutItem");
    CHECK(wire_operation("DynamoDB_20120810.PutItem", ops) == ops[1]);
    CHECK_STR(wire_operation("DynamoDB_20120810.Query", ops), "Query");
    CHECK(wire_operation("DynamoDB_20120810.putitem", ops) == NULL);
    CHECK(wire_operation("DynamoDB_20111205.PutItem", ops) == NULL);
    CHECK(wire_operation("DynamoDB_20120810PutItem", ops) == NULL);
    CHECK(wire_operation("DynamoDB_20120810.", ops) == NULL);
    CHECK(wire_operation("DynamoDB_20120810.PutItem.x", ops) == NULL);
    CHECK(wire_operation("", ops) == NULL);
    CHECK(wire_operation(NULL, ops) == NULL);
}

static void test_crc(void)
{
    CHECK(wire_crc32("", 0) == 0);
    CHECK(wire_crc32("123456789", 9) == 0xCBF43926u); /* the CRC-32 check value */
    CHECK(wire_crc32("{}", 2) == 2745614147u);
    CHECK(wire_crc32("{\"TableNames\":[]}", 17) == 1315925753u);
}

static void test_request_id(void)
{
    char a[53], b[53];
    wire_request_id(a);
    wire_request_id(b);
    CHECK(strlen(a) == 52);
    CHECK(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 52);
    CHECK(strcmp(a, b) != 0);
}

static void test_error_body(void)
{
    buf b;
    buf_init(&b, 0);
    CHECK(wire_error_body(&b, "SerializationException", "bad \"json\"\n") == 0);
    CHECK_STR(b.data, "{\"__type\":\"com.amazon.coral.service#SerializationException\","
                      "\"message\":\"bad \\\"json\\\"\\n\"}");
    json_t *doc = json_loadb(b.data, b.len, 0, NULL);
    CHECK(doc != NULL);
    CHECK_STR(json_string_value(json_object_get(doc, "message")), "bad \"json\"\n");
    json_decref(doc);
    buf_reset(&b);
    CHECK(wire_error_body(&b, "ResourceNotFoundException", NULL) == 0);
    CHECK_STR(b.data, "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\"}");
    buf_reset(&b);
    CHECK(wire_error_body(&b, "ValidationException", "x") == 0);
    CHECK(strstr(b.data, "com.amazon.coral.validate#ValidationException") != NULL);
    CHECK_STR(wire_error_namespace("UnrecognizedClientException"), "com.amazon.coral.service#");
    CHECK_STR(wire_error_namespace("InvalidSignatureException"), "com.amazon.coral.service#");
    CHECK_STR(wire_error_namespace("UnknownOperationException"), "com.amazon.coral.service#");
    CHECK_STR(wire_error_namespace("ConditionalCheckFailedException"),
              "com.amazonaws.dynamodb.v20120810#");
    buf_free(&b);
}

static void test_table_names(void)
{
    char out[64];
    const char *get = "{\"TableName\":\"Music\",\"Key\":{\"TableName\":{\"S\":\"x\"}}}";
    wire_table_names(get, strlen(get), out, sizeof out);
    CHECK_STR(out, "Music");
    const char *batch = "{\"RequestItems\":{\"A\":[],\"B\":[]}}";
    wire_table_names(batch, strlen(batch), out, sizeof out);
    CHECK_STR(out, "A,B");
    const char *txn = "{\"TransactItems\":[{\"Put\":{\"TableName\":\"T1\"}},{\"Update\":{\"TableName\":"
                      "\"T10\"}},{\"Delete\":{\"TableName\":\"T1\"}}]}";
    wire_table_names(txn, strlen(txn), out, sizeof out);
    CHECK_STR(out, "T1,T10");
    wire_table_names("{not json", 9, out, sizeof out);
    CHECK_STR(out, "");
    wire_table_names("{}", 2, out, sizeof out);
    CHECK_STR(out, "");
    char small[4];
    wire_table_names(get, strlen(get), small, sizeof small);
    CHECK_STR(small, "Mus");
    char why[128];
    CHECK(wire_json_valid("{\"a\":1}", 7, why, sizeof why));
    CHECK(!wire_json_valid("{\"a\":", 5, why, sizeof why));
    CHECK(strlen(why) > 0);
}

static void test_listen(void)
{
    struct sockaddr_storage a;
    socklen_t len;
    char err[256];
    CHECK(server_parse_listen("127.0.0.1:8000", &a, &len, err, sizeof err) == 0);
    CHECK(a.ss_family == AF_INET && ntohs(((struct sockaddr_in *)&a)->sin_port) == 8000);
    CHECK(server_addr_is_loopback((struct sockaddr *)&a));
    CHECK(server_parse_listen("127.5.6.7:0", &a, &len, err, sizeof err) == 0);
    CHECK(server_addr_is_loopback((struct sockaddr *)&a));
    CHECK(server_parse_listen("[::1]:9000", &a, &len, err, sizeof err) == 0);
    CHECK(a.ss_family == AF_INET6 && server_addr_is_loopback((struct sockaddr *)&a));
    CHECK(server_parse_listen("0.0.0.0:8000", &a, &len, err, sizeof err) == 0);
    CHECK(!server_addr_is_loopback((struct sockaddr *)&a));
    CHECK(server_parse_listen("10.1.2.3:8000", &a, &len, err, sizeof err) == 0);
    CHECK(!server_addr_is_loopback((struct sockaddr *)&a));
    CHECK(server_parse_listen("[::]:8000", &a, &len, err, sizeof err) == 0);
    CHECK(!server_addr_is_loopback((struct sockaddr *)&a));
    CHECK(server_parse_listen("8000", &a, &len, err, sizeof err) == -1);
    CHECK_STR(err, "bad listen address '8000' (expected HOST:PORT)");
    CHECK(server_parse_listen("127.0.0.1:99999", &a, &len, err, sizeof err) == -1);
    CHECK(server_parse_listen("127.0.0.1:", &a, &len, err, sizeof err) == -1);
    CHECK(server_parse_listen("[::1:80", &a, &len, err, sizeof err) == -1);

    server_log_level l;
    CHECK(server_log_level_parse("warn", &l) == 0 && l == SERVER_LOG_WARN);
    CHECK(server_log_level_parse("none", &l) == 0 && l == SERVER_LOG_NONE);
    CHECK(server_log_level_parse("loud", &l) == -1);
}

int main(void)
{
    test_operation();
    test_crc();
    test_request_id();
    test_error_body();
    test_table_names();
    test_listen();
    printf("test_wire: %d passed, %d failed\n", checks - failures, failures);
    return failures ? 1 : 0;
}
