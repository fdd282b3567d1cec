"""Name-length limits DynamoDB enforces that an independent compatibility suite checks.

Key attribute names (of the table and of its indexes) and names an index projects are
at most 255 bytes; any other attribute name is below 64 KiB wherever a request names
it: in an item, through ExpressionAttributeNames, or in a legacy parameter."""
import pytest

T = "CompatLimits"
LONG = "n" * 65536


def table(name, key, extra_defs=(), **more):
    req = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
           "KeySchema": [{"AttributeName": key, "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
           "AttributeDefinitions": [{"AttributeName": key, "AttributeType": "S"},
                                    {"AttributeName": "sk", "AttributeType": "S"}] + list(extra_defs)}
    req.update(more)
    return req


def test_key_names_of_255_bytes_work(q):
    q.call("CreateTable", table(T, "k" * 255))
    key = {"k" * 255: {"S": "a"}, "sk": {"S": "b"}}
    q.call("PutItem", {"TableName": T, "Item": dict(key, v={"N": "1"})})
    assert q.call("GetItem", {"TableName": T, "Key": key})["Item"]["v"] == {"N": "1"}


def test_table_key_name_over_255_bytes_is_refused(q):
    e = q.error("CreateTable", table(T, "k" * 256))
    assert e.type == "ValidationException"
    assert "length less than or equal to 255" in e.message


@pytest.mark.parametrize("kind", ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"])
def test_index_key_name_over_255_bytes_is_refused(q, kind):
    long = "i" * 256
    schema = ([{"AttributeName": long, "KeyType": "HASH"}] if kind[0] == "G" else
              [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": long, "KeyType": "RANGE"}])
    e = q.error("CreateTable", table(T, "pk", [{"AttributeName": long, "AttributeType": "S"}], **{
        kind: [{"IndexName": "idx", "KeySchema": schema, "Projection": {"ProjectionType": "ALL"}}]}))
    assert "length less than or equal to 255" in e.message
    assert q.call("ListTables", {})["TableNames"] == []


def test_projected_name_over_255_bytes_is_refused(q):
    e = q.error("CreateTable", table(T, "pk", [{"AttributeName": "g", "AttributeType": "S"}], GlobalSecondaryIndexes=[
        {"IndexName": "idx", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
         "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x" * 256]}}]))
    assert "length less than or equal to 255" in e.message


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    q.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "a"}, LONG[:-1]: {"N": "1"}}})
    return q


def test_name_just_under_64k_works_in_expressions(t):
    r = t.call("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "a"}}, "UpdateExpression": "SET #n = #n + :one",
                              "ConditionExpression": "#n = :one", "ExpressionAttributeNames": {"#n": LONG[:-1]},
                              "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "UPDATED_NEW"})
    assert r["Attributes"] == {LONG[:-1]: {"N": "2"}}


@pytest.mark.parametrize("op,req", [
    ("GetItem", {"ProjectionExpression": "#n", "ExpressionAttributeNames": {"#n": LONG}}),
    ("GetItem", {"AttributesToGet": [LONG]}),
    ("UpdateItem", {"AttributeUpdates": {LONG: {"Action": "PUT", "Value": {"N": "2"}}}}),
    ("UpdateItem", {"UpdateExpression": "SET #n = :v", "ExpressionAttributeNames": {"#n": LONG},
                    "ExpressionAttributeValues": {":v": {"N": "3"}}}),
    ("UpdateItem", {"UpdateExpression": "SET a = :v", "ConditionExpression": "#n = :v",
                    "ExpressionAttributeNames": {"#n": LONG}, "ExpressionAttributeValues": {":v": {"N": "3"}}}),
    ("DeleteItem", {"Expected": {LONG: {"Exists": False}}}),
])
def test_name_of_64k_is_refused_wherever_named(t, op, req):
    e = t.error(op, dict({"TableName": T, "Key": {"pk": {"S": "a"}}}, **req))
    assert e.type == "ValidationException"
    assert "Attribute name is too large, must be less than 65536 bytes" in e.message


def test_index_key_name_length_is_judged_before_its_definition(t):
    """An index key attribute name over 255 bytes is refused for its length even when
    AttributeDefinitions does not define it: the length is part of the request's shape."""
    name = "k" * 256
    gsi = {"IndexName": "Long", "KeySchema": [{"AttributeName": name, "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "ALL"}}
    e = t.error("CreateTable", {"TableName": "LongKey", "BillingMode": "PAY_PER_REQUEST",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                                         {"AttributeName": "short", "AttributeType": "S"}],
                                "GlobalSecondaryIndexes": [gsi]})
    assert e.message == (f"1 validation error detected: Value '{name}' at 'globalSecondaryIndexes.1.member.keySchema."
                         "1.member.attributeName' failed to satisfy constraint: Member must have length less than or "
                         "equal to 255")
    t.call("CreateTable", {"TableName": "LongKey", "BillingMode": "PAY_PER_REQUEST",
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                           "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})
    e = t.error("UpdateTable", {"TableName": "LongKey",
                                "AttributeDefinitions": [{"AttributeName": "short", "AttributeType": "S"}],
                                "GlobalSecondaryIndexUpdates": [{"Create": gsi}]})
    assert "globalSecondaryIndexUpdates.1.member.create.keySchema.1.member.attributeName" in e.message
    assert "Member must have length less than or equal to 255" in e.message
