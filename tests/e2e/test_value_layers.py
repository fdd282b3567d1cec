"""The two layers in which DynamoDB checks attribute values (src/model/layer.h).

The operation decides the layer, and the layer the words of a malformed number or a
repeated set member: the current one (PutItem, UpdateItem and DeleteItem inside the
"1 validation error detected: " envelope; GetItem, BatchGetItem and Query bare) or the older
one (BatchWriteItem, the transactions, Scan and PartiQL's parameters: bare, expression values
named by their key, numbers read as Java's BigDecimal reads them). Recorded in four regions
in October 2026 by a public conformance suite."""
import pytest

T = "Layers"
ENV = "1 validation error detected: "
NAN = "The parameter cannot be converted to a numeric value"
OVER = "Number overflow. Attempting to store a number with magnitude larger than supported range"
UNDER = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
INVALID = "One or more parameter values were invalid: "
SHAPES = ["abc", "", "1e126", "1e2147483647"]
CURRENT = [f"{NAN}: abc", f"{NAN}: ", OVER, OVER]
OLDER = [f"{NAN}: abc", NAN, OVER, UNDER]


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    return q


def messages(t, op, make):
    return [t.error(op, make({"N": n})).message for n in SHAPES]


def test_put_item_envelopes_every_malformed_number(t):
    got = messages(t, "PutItem", lambda v: {"TableName": T, "Item": {"pk": {"S": "a"}, "n": v}})
    assert got == [ENV + m for m in CURRENT]
    nested = messages(t, "PutItem", lambda v: {"TableName": T, "Item": {"pk": {"S": "a"}, "m": {"M": {"x": {"L": [v]}}}}})
    assert nested == [ENV + m for m in CURRENT]


def test_condition_values_are_not_wrapped_in_the_current_layer(t):
    got = messages(t, "DeleteItem", lambda v: {"TableName": T, "Key": {"pk": {"S": "a"}},
                                               "ConditionExpression": "n = :v", "ExpressionAttributeValues": {":v": v}})
    assert got == [ENV + m for m in CURRENT]
    got = messages(t, "Query", lambda v: {"TableName": T, "KeyConditionExpression": "pk = :p", "FilterExpression": "n = :v",
                                          "ExpressionAttributeValues": {":p": {"S": "a"}, ":v": v}})
    assert got == CURRENT


def test_key_values_are_judged_before_the_schema(t):
    assert messages(t, "DeleteItem", lambda v: {"TableName": T, "Key": {"pk": v}}) == [ENV + m for m in CURRENT]
    assert messages(t, "GetItem", lambda v: {"TableName": T, "Key": {"pk": v}}) == CURRENT


def test_batch_write_reads_numbers_in_the_older_layer(t):
    got = messages(t, "BatchWriteItem", lambda v: {"RequestItems": {T: [{"PutRequest": {"Item": {"pk": {"S": "a"}, "n": v}}}]}})
    assert got == OLDER


def test_scan_and_transactions_name_the_value_key(t):
    got = messages(t, "Scan", lambda v: {"TableName": T, "FilterExpression": "n = :v", "ExpressionAttributeValues": {":v": v}})
    assert got == [f"ExpressionAttributeValues contains invalid value: {m} for key :v" for m in OLDER]
    got = messages(t, "TransactWriteItems", lambda v: {"TransactItems": [{"Update": {
        "TableName": T, "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET n = :v", "ExpressionAttributeValues": {":v": v}}}]})
    assert got == [f"ExpressionAttributeValues contains invalid value: {m} for key :v" for m in OLDER]


def test_a_malformed_key_fails_a_transaction_up_front(t):
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": T, "Key": {"pk": {"N": "abc"}}}}]})
    assert (e.type, e.message) == ("ValidationException", f"{NAN}: abc")
    e = t.error("TransactWriteItems", {"TransactItems": [{"Delete": {"TableName": T, "Key": {"pk": {"SS": ["b", "b"]}}}}]})
    assert e.type == "ValidationException"


def test_partiql_parameters_are_read_as_big_decimal_and_literals_are_not(t):
    t.create("LayersN", pk=("pk", "N"), sk=None)
    e = t.error("ExecuteStatement", {"Statement": 'SELECT * FROM "LayersN" WHERE pk = ?',
                                     "Parameters": [{"N": "1e2147483647"}]})
    assert e.message == UNDER
    e = t.error("ExecuteStatement", {"Statement": 'SELECT * FROM "LayersN" WHERE pk = ?', "Parameters": [{"N": ""}]})
    assert e.message == NAN
    e = t.error("ExecuteStatement", {"Statement": 'SELECT * FROM "LayersN" WHERE pk = 1e2147483647'})
    assert e.message.startswith(OVER)


# ---- repeated set members ----

SETS = [{"SS": ["b", "a", "b"]}, {"BS": ["/w==", "AA==", "AA=="]}, {"NS": ["2", "1", "2"]}]
DUP_CURRENT = [f'{INVALID}Input collection ["a", "b", "b"] contains duplicates.',
               f'{INVALID}Input collection ["AA==","/w==","AA=="]of type BS contains duplicates.',
               f"{INVALID}Input collection contains duplicates."]
DUP_OLDER = [f"{INVALID}Input collection [b, a, b] contains duplicates.",
             f"{INVALID}Input collection [/w==, AA==, AA==]of type BS contains duplicates.",
             "Input collection contains duplicates"]


def test_current_layer_sorts_members_until_the_repeat(t):
    got = [t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "d"}, "s": s}}).message for s in SETS]
    assert got == [ENV + m for m in DUP_CURRENT]
    got = [t.error("GetItem", {"TableName": T, "Key": {"pk": s}}).message for s in SETS]
    assert got == DUP_CURRENT
    # After the repeat, the rest follow as sent.
    e = t.error("GetItem", {"TableName": T, "Key": {"pk": {"SS": ["c", "a", "c", "z", "b"]}}})
    assert e.message == f'{INVALID}Input collection ["a", "c", "c", "z", "b"] contains duplicates.'


def test_older_layer_lists_members_as_sent(t):
    got = [t.error("BatchWriteItem", {"RequestItems": {T: [{"PutRequest": {"Item": {"pk": {"S": "d"}, "s": s}}}]}}).message
           for s in SETS]
    assert got == DUP_OLDER


def test_exclusive_start_key_reports_a_malformed_value_as_such(t):
    e = t.error("Query", {"TableName": T, "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}},
                          "ExclusiveStartKey": {"pk": {"SS": ["b", "a", "b"]}}})
    assert e.message == DUP_CURRENT[0]
