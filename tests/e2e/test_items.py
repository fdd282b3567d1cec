"""Single-item operations through `quarry call`: PutItem, GetItem, UpdateItem, DeleteItem."""
import pytest

T = "Items"


@pytest.fixture
def t(q):
    q.create(T)
    return q


def key(pk, sk):
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def test_put_get_all_types(t):
    item = dict(key("a", "1"), s={"S": "text"}, n={"N": "01.50"}, b={"B": "AAEC"}, t={"BOOL": True},
                z={"NULL": True}, m={"M": {"x": {"L": [{"N": "1"}, {"S": "y"}]}}},
                ss={"SS": ["x", "y"]}, ns={"NS": ["1", "2.0"]}, bs={"BS": ["AQ==", "Ag=="]})
    t.call("PutItem", {"TableName": T, "Item": item})
    got = t.call("GetItem", {"TableName": T, "Key": key("a", "1")})["Item"]
    assert got["n"] == {"N": "1.5"}
    assert got["ns"]["NS"] == ["1", "2"]
    assert got["m"] == item["m"]
    assert got["b"] == {"B": "AAEC"}
    assert t.call("GetItem", {"TableName": T, "Key": key("a", "2")}) == {}


def test_projection_and_capacity(t):
    t.call("PutItem", {"TableName": T, "Item": dict(key("a", "1"), x={"S": "1"}, y={"M": {"p": {"S": "q"}, "r": {"S": "s"}}})})
    r = t.call("GetItem", {"TableName": T, "Key": key("a", "1"), "ProjectionExpression": "x, y.p",
                           "ReturnConsumedCapacity": "TOTAL"})
    assert r["Item"] == {"x": {"S": "1"}, "y": {"M": {"p": {"S": "q"}}}}
    assert r["ConsumedCapacity"]["CapacityUnits"] == 0.5
    r = t.call("GetItem", {"TableName": T, "Key": key("a", "1"), "ConsistentRead": True, "ReturnConsumedCapacity": "TOTAL"})
    assert r["ConsumedCapacity"]["CapacityUnits"] == 1.0
    big = "x" * 5000
    r = t.call("PutItem", {"TableName": T, "Item": dict(key("a", "2"), big={"S": big}), "ReturnConsumedCapacity": "TOTAL"})
    assert r["ConsumedCapacity"]["CapacityUnits"] == 5.0


def test_return_values(t):
    t.call("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v={"N": "1"})})
    r = t.call("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v={"N": "2"}), "ReturnValues": "ALL_OLD"})
    assert r["Attributes"]["v"] == {"N": "1"}
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "1"), "ReturnValues": "ALL_NEW"})
    assert e.message == "1 validation error detected: ReturnValues can only be ALL_OLD or NONE"
    r = t.call("UpdateItem", {"TableName": T, "Key": key("a", "1"), "UpdateExpression": "SET v = v + :one, w = :w",
                              "ExpressionAttributeValues": {":one": {"N": "1"}, ":w": {"S": "w"}}, "ReturnValues": "UPDATED_NEW"})
    assert r["Attributes"] == {"v": {"N": "3"}, "w": {"S": "w"}}
    r = t.call("UpdateItem", {"TableName": T, "Key": key("a", "1"), "UpdateExpression": "REMOVE w", "ReturnValues": "UPDATED_OLD"})
    assert r["Attributes"] == {"w": {"S": "w"}}
    r = t.call("UpdateItem", {"TableName": T, "Key": key("a", "1"), "UpdateExpression": "ADD v :one",
                              "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "ALL_NEW"})
    assert r["Attributes"] == dict(key("a", "1"), v={"N": "4"})
    r = t.call("DeleteItem", {"TableName": T, "Key": key("a", "1"), "ReturnValues": "ALL_OLD"})
    assert r["Attributes"]["v"] == {"N": "4"}
    assert t.call("GetItem", {"TableName": T, "Key": key("a", "1")}) == {}


def test_update_creates_item_and_counters(t):
    for _ in range(3):
        t.call("UpdateItem", {"TableName": T, "Key": key("c", "counter"), "UpdateExpression": "ADD hits :one",
                              "ExpressionAttributeValues": {":one": {"N": "1"}}})
    assert t.call("GetItem", {"TableName": T, "Key": key("c", "counter")})["Item"]["hits"] == {"N": "3"}
    e = t.error("UpdateItem", {"TableName": T, "Key": key("c", "counter"), "UpdateExpression": "SET pk = :v",
                               "ExpressionAttributeValues": {":v": {"S": "x"}}})
    assert "Cannot update attribute pk" in e.message


def test_conditions(t):
    t.call("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v={"N": "1"}),
                       "ConditionExpression": "attribute_not_exists(pk)"})
    e = t.error("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v={"N": "9"}),
                            "ConditionExpression": "attribute_not_exists(pk)"})
    assert e.type == "ConditionalCheckFailedException"
    assert "Item" not in e.body
    e = t.error("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v={"N": "9"}),
                            "ConditionExpression": "attribute_not_exists(pk)",
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
    assert e.body["Item"]["v"] == {"N": "1"}
    t.call("UpdateItem", {"TableName": T, "Key": key("a", "1"), "UpdateExpression": "SET v = :two",
                          "ConditionExpression": "v = :one",
                          "ExpressionAttributeValues": {":one": {"N": "1.0"}, ":two": {"N": "2"}}})
    e = t.error("DeleteItem", {"TableName": T, "Key": key("a", "1"), "ConditionExpression": "v > :v",
                               "ExpressionAttributeValues": {":v": {"N": "5"}}})
    assert e.type == "ConditionalCheckFailedException"
    t.call("DeleteItem", {"TableName": T, "Key": key("a", "1"), "Expected": {"v": {"Value": {"N": "2"}}}})
    assert t.call("GetItem", {"TableName": T, "Key": key("a", "1")}) == {}


def test_key_errors(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "a"}}})
    assert e.message == "One or more parameter values were invalid: Missing the key sk in the item"
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"N": "1"}, "sk": {"S": "a"}}})
    assert "Type mismatch for key pk expected: S actual: N" in e.message
    e = t.error("GetItem", {"TableName": T, "Key": {"pk": {"S": "a"}}})
    assert e.message == "The provided key element does not match the schema"
    e = t.error("GetItem", {"TableName": T, "Key": dict(key("a", "b"), extra={"S": "x"})})
    assert e.message == "The provided key element does not match the schema"
    e = t.error("PutItem", {"TableName": T, "Item": key("", "b")})
    assert "empty string value" in e.message
    e = t.error("PutItem", {"TableName": T, "Item": key("a" * 2049, "b")})
    assert "2048" in e.message
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "b" * 1025)})
    assert "1024" in e.message
    e = t.error("GetItem", {"TableName": "Missing", "Key": key("a", "b")})
    assert e.type == "ResourceNotFoundException"


def test_item_size_limit(t):
    ok = "x" * (400 * 1024 - 100)
    t.call("PutItem", {"TableName": T, "Item": dict(key("a", "1"), d={"S": ok})})
    e = t.error("PutItem", {"TableName": T, "Item": dict(key("a", "2"), d={"S": "x" * (400 * 1024 + 1)})})
    assert e.message == "Item size has exceeded the maximum allowed size"
    e = t.error("UpdateItem", {"TableName": T, "Key": key("a", "1"), "UpdateExpression": "SET e = :e",
                               "ExpressionAttributeValues": {":e": {"S": "y" * 1000}}})
    assert "exceeded the maximum allowed size" in e.message
    assert len(t.call("GetItem", {"TableName": T, "Key": key("a", "1")})["Item"]["d"]["S"]) == len(ok)


def test_value_errors(t):
    cases = [
        ({"SS": []}, "may not be empty"),
        ({"SS": ["a", "a"]}, "contains duplicates"),
        ({"NS": ["1", "1.0"]}, "contains duplicates"),
        ({"N": "1" * 39}, "38 significant digits"),
        ({"N": "1E+126"}, "overflow"),
        ({"N": "1E-131"}, "underflow"),
        ({"N": "abc"}, "numeric"),
        ({"NULL": False}, "Null attribute value types must have the value of true"),
        ({"S": "a", "N": "1"}, "more than one datatypes"),
        ({}, "Supplied AttributeValue is empty"),
    ]
    for value, text in cases:
        e = t.error("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v=value)})
        assert e.type == "ValidationException", value
        assert text in e.message, (value, e.message)
    deep = {"S": "x"}
    for _ in range(33):
        deep = {"L": [deep]}
    e = t.error("PutItem", {"TableName": T, "Item": dict(key("a", "1"), v=deep)})
    assert "Nesting Levels" in e.message


def test_expression_errors(t):
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "1"), "ConditionExpression": "a = :v"})
    assert e.type == "ValidationException" and ":v" in e.message
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "1"), "ConditionExpression": "a = :v",
                            "ExpressionAttributeValues": {":v": {"S": "x"}, ":w": {"S": "y"}}})
    assert "unused" in e.message and ":w" in e.message
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "1"), "ConditionExpression": "a = = b"})
    assert "Syntax error" in e.message
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "1"), "ConditionExpression": "a = :v",
                            "Expected": {"a": {"Exists": False}}, "ExpressionAttributeValues": {":v": {"S": "x"}}})
    assert "Can not use both expression and non-expression parameters" in e.message
    e = t.error("PutItem", {"TableName": T, "Item": key("a", "1"), "ExpressionAttributeValues": {":v": {"S": "x"}}})
    assert "ExpressionAttributeValues can only be specified when using expressions" in e.message
