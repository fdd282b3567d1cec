/* test_wire.c — the wire helpers around a DynamoDB call: target, CRC32, request ids,
 * error documents, table names for logs, and the server's option parsing helpers.
 * None of these need the engine or a socket. */
#include <arpa/inet.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "server/server.h"
#include "server/wire.h"

#include "check.h"

static void test_operation(void)
{
    static const char *const ops[] = {"GetItem", "PutItem", "Query", NULL};
    CHECK_STR(wire_operation("DynamoDB_20120810.PutItem", ops, NULL), "PutItem");
    CHECK_THAT(wire_operation("DynamoDB_20120810.PutItem", ops, NULL) == ops[1]);
    CHECK_STR(wire_operation("DynamoDB_20120810.Query", ops, NULL), "Query");
    CHECK_THAT(wire_operation("DynamoDB_20120810.putitem", ops, NULL) == NULL);
    CHECK_THAT(wire_operation("DynamoDB_20111205.PutItem", ops, NULL) == NULL);
    CHECK_THAT(wire_operation("DynamoDB_20120810PutItem", ops, NULL) == NULL);
    CHECK_THAT(wire_operation("DynamoDB_20120810.", ops, NULL) == NULL);
    CHECK_THAT(wire_operation("DynamoDB_20120810.PutItem.x", ops, NULL) == NULL);
    CHECK_THAT(wire_operation("", ops, NULL) == NULL);
    CHECK_THAT(wire_operation(NULL, ops, NULL) == NULL);
    /* Each API's operations under its own prefix only. */
    static const char *const streams[] = {"GetRecords", NULL};
    CHECK_STR(wire_operation("DynamoDBStreams_20120810.GetRecords", ops, streams), "GetRecords");
    CHECK_THAT(wire_operation("DynamoDB_20120810.GetRecords", ops, streams) == NULL);
    CHECK_THAT(wire_operation("DynamoDBStreams_20120810.PutItem", ops, streams) == NULL);
    CHECK_THAT(wire_operation("DynamoDBStreams_20120810.GetRecords", ops, NULL) == NULL);
}

static void test_crc(void)
{
    CHECK_THAT(wire_crc32("", 0) == 0);
    CHECK_THAT(wire_crc32("123456789", 9) == 0xCBF43926u); /* the CRC-32 check value */
    CHECK_THAT(wire_crc32("{}", 2) == 2745614147u);
    CHECK_THAT(wire_crc32("{\"TableNames\":[]}", 17) == 1315925753u);
}

static void test_request_id(void)
{
    char a[53], b[53];
    wire_request_id(a);
    wire_request_id(b);
    CHECK_THAT(strlen(a) == 52);
    CHECK_THAT(strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") == 52);
    CHECK_THAT(strcmp(a, b) != 0);
}

static void test_error_body(void)
{
    buf b;
    buf_init(&b, 0);
    CHECK_THAT(wire_error_body(&b, "SerializationException", "bad \"json\"\n") == 0);
    CHECK_STR(b.data, "{\"__type\":\"com.amazon.coral.service#SerializationException\","
                      "\"Message\":\"bad \\\"json\\\"\\n\"}");
    json_t *doc = json_loadb(b.data, b.len, 0, NULL);
    CHECK_THAT(doc != NULL);
    CHECK_STR(json_string_value(json_object_get(doc, "Message")), "bad \"json\"\n");
    json_decref(doc);
    buf_reset(&b);
    CHECK_THAT(wire_error_body(&b, "ResourceNotFoundException", NULL) == 0);
    CHECK_STR(b.data,
              "{\"__type\":\"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException\"}");
    buf_reset(&b);
    CHECK_THAT(wire_error_body(&b, "ValidationException", "x") == 0);
    CHECK_THAT(strstr(b.data, "com.amazon.coral.validate#ValidationException") != NULL);
    CHECK_THAT(strstr(b.data, "\"message\":\"x\"") != NULL);
    /* Serialization and access errors say "Message", as three of the model's shapes do. */
    CHECK_STR(err_message_member("SerializationException"), "Message");
    CHECK_STR(err_message_member("AccessDeniedException"), "Message");
    CHECK_STR(err_message_member("TransactionCanceledException"), "Message");
    CHECK_STR(err_message_member("UnrecognizedClientException"), "message");
    CHECK_STR(err_message_member("ResourceNotFoundException"), "message");
    CHECK_STR(err_namespace("UnrecognizedClientException"), "com.amazon.coral.service#");
    CHECK_STR(err_namespace("InvalidSignatureException"), "com.amazon.coral.service#");
    CHECK_STR(err_namespace("UnknownOperationException"), "com.amazon.coral.service#");
    CHECK_STR(err_namespace("ConditionalCheckFailedException"),
              "com.amazonaws.dynamodb.v20120810#");
    buf_free(&b);
}

static void test_table_names(void)
{
    char out[64];
    const char *get = "{\"TableName\":\"Music\",\"Key\":{\"TableName\":{\"S\":\"x\"}}}";
    qr_request_tables(get, strlen(get), out, sizeof out);
    CHECK_STR(out, "Music");
    const char *batch = "{\"RequestItems\":{\"A\":[],\"B\":[]}}";
    qr_request_tables(batch, strlen(batch), out, sizeof out);
    CHECK_STR(out, "A,B");
    const char *txn =
        "{\"TransactItems\":[{\"Put\":{\"TableName\":\"T1\"}},{\"Update\":{\"TableName\":"
        "\"T10\"}},{\"Delete\":{\"TableName\":\"T1\"}}]}";
    qr_request_tables(txn, strlen(txn), out, sizeof out);
    CHECK_STR(out, "T1,T10");
    qr_request_tables("{not json", 9, out, sizeof out);
    CHECK_STR(out, "");
    qr_request_tables("{}", 2, out, sizeof out);
    CHECK_STR(out, "");
    char small[4];
    qr_request_tables(get, strlen(get), small, sizeof small);
    CHECK_STR(small, "Mus");
    char why[128];
    CHECK_THAT(wire_json_valid("{\"a\":1}", 7, why, sizeof why));
    CHECK_THAT(!wire_json_valid("{\"a\":", 5, why, sizeof why));
    CHECK_THAT(strlen(why) > 0);
}

static void test_listen(void)
{
    struct sockaddr_storage a;
    socklen_t len;
    char err[256];
    CHECK_THAT(server_parse_listen("127.0.0.1:8000", &a, &len, err, sizeof err) == 0);
    CHECK_THAT(a.ss_family == AF_INET && ntohs(((struct sockaddr_in *)&a)->sin_port) == 8000);
    CHECK_THAT(server_addr_is_loopback((struct sockaddr *)&a));
    CHECK_THAT(server_parse_listen("127.5.6.7:0", &a, &len, err, sizeof err) == 0);
    CHECK_THAT(server_addr_is_loopback((struct sockaddr *)&a));
    CHECK_THAT(server_parse_listen("[::1]:9000", &a, &len, err, sizeof err) == 0);
    CHECK_THAT(a.ss_family == AF_INET6 && server_addr_is_loopback((struct sockaddr *)&a));
    CHECK_THAT(server_parse_listen("0.0.0.0:8000", &a, &len, err, sizeof err) == 0);
    CHECK_THAT(!server_addr_is_loopback((struct sockaddr *)&a));
    CHECK_THAT(server_parse_listen("10.1.2.3:8000", &a, &len, err, sizeof err) == 0);
    CHECK_THAT(!server_addr_is_loopback((struct sockaddr *)&a));
    CHECK_THAT(server_parse_listen("[::]:8000", &a, &len, err, sizeof err) == 0);
    CHECK_THAT(!server_addr_is_loopback((struct sockaddr *)&a));
    CHECK_THAT(server_parse_listen("8000", &a, &len, err, sizeof err) == -1);
    CHECK_STR(err, "bad listen address '8000' (expected HOST:PORT)");
    CHECK_THAT(server_parse_listen("127.0.0.1:99999", &a, &len, err, sizeof err) == -1);
    CHECK_THAT(server_parse_listen("127.0.0.1:", &a, &len, err, sizeof err) == -1);
    CHECK_THAT(server_parse_listen("[::1:80", &a, &len, err, sizeof err) == -1);

    server_log_level l;
    CHECK_THAT(server_log_level_parse("warn", &l) == 0 && l == SERVER_LOG_WARN);
    CHECK_THAT(server_log_level_parse("none", &l) == 0 && l == SERVER_LOG_NONE);
    CHECK_THAT(server_log_level_parse("loud", &l) == -1);
}

int main(void)
{
    test_operation();
    test_crc();
    test_request_id();
    test_error_body();
    test_table_names();
    test_listen();
    printf("test_wire: %d passed, %d failed\n", check_count - check_failures, check_failures);
    return check_failures ? 1 : 0;
}
