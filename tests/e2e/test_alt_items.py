"""Item and expression behaviours found by running ScyllaDB Alternator's item and expression
tests against quarry, pinned here in our own words.

Each test names one thing DynamoDB does that quarry once did differently, or that the
Alternator run could not check with the installed SDK and was confirmed by hand."""
import pytest

T = "AltItems"
ONE = "1 validation error detected: "
MISUSED = "The function is not allowed to be used this way in an expression; function: list_append"


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    return q


def key(pk):
    return {"pk": {"S": pk}}


def update(t, pk, **extra):
    return t.call("UpdateItem", dict({"TableName": T, "Key": key(pk)}, **extra))


def update_error(t, pk, **extra):
    return t.error("UpdateItem", dict({"TableName": T, "Key": key(pk)}, **extra))


def item(t, pk):
    return t.call("GetItem", {"TableName": T, "Key": key(pk), "ConsistentRead": True}).get("Item")


def strs(*xs):
    return {"L": [{"S": x} for x in xs]}


@pytest.mark.parametrize("expression", [
    "SET a = list_append(list_append(:x, :y), :z)",
    "SET a = list_append(:x, list_append(:y, :z))",
    "SET a = if_not_exists(a, list_append(:x, :y))",
])
def test_list_append_cannot_be_an_operand_of_another_function(t, expression):
    values = {":x": strs("1"), ":y": strs("2"), ":z": strs("3")}
    used = {k: v for k, v in values.items() if k in expression}
    e = update_error(t, "nest", UpdateExpression=expression, ExpressionAttributeValues=used)
    assert e.type == "ValidationException"
    assert e.message == ONE + "Invalid UpdateExpression: " + MISUSED
    assert item(t, "nest") is None


def test_if_not_exists_first_operand_is_told_to_be_a_path(t):
    # Nested there, list_append is reported as the document path if_not_exists lacks.
    e = update_error(t, "path", UpdateExpression="SET a = if_not_exists(list_append(a, :x), :x)",
                     ExpressionAttributeValues={":x": strs("1")})
    assert e.message == ONE + ("Invalid UpdateExpression: Operator or function requires a document path; "
                               "operator or function: if_not_exists")


def test_if_not_exists_may_still_feed_list_append_and_itself(t):
    # The idiom for appending to a list that may not exist yet.
    for _ in range(2):
        update(t, "idiom", UpdateExpression="SET a = list_append(if_not_exists(a, :empty), :v)",
               ExpressionAttributeValues={":empty": {"L": []}, ":v": strs("x")})
    assert item(t, "idiom")["a"] == strs("x", "x")
    # if_not_exists as the fallback of another if_not_exists picks the first present value.
    update(t, "idiom", UpdateExpression="SET b = if_not_exists(c, if_not_exists(a, :d))",
           ExpressionAttributeValues={":d": {"N": "7"}})
    assert item(t, "idiom")["b"] == strs("x", "x")


def test_nested_list_append_is_refused_before_the_item_is_read(t):
    # The refusal is a property of the expression: it does not depend on the item, and a
    # condition that would fail is not evaluated.
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "cond"}, "a": strs("old")}})
    e = update_error(t, "cond", UpdateExpression="SET a = list_append(list_append(a, :v), :v)",
                     ConditionExpression="attribute_not_exists(pk)",
                     ExpressionAttributeValues={":v": strs("new")})
    assert e.type == "ValidationException"
    assert MISUSED in e.message
    assert item(t, "cond")["a"] == strs("old")


@pytest.mark.parametrize("op,extra", [
    ("PutItem", {"Item": {"pk": {"S": "rv"}, "s": {"S": "cow"}}}),
    ("DeleteItem", {"Key": key("rv")}),
    ("UpdateItem", {"Key": key("rv"), "UpdateExpression": "SET s = :n"}),
])
def test_failed_condition_returns_the_old_item_only_when_asked(t, op, extra):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "rv"}, "s": {"S": "cat"}}})
    values = {":v": {"S": "dog"}}
    if op == "UpdateItem":
        values[":n"] = {"S": "cow"}
    request = dict({"TableName": T, "ConditionExpression": "s = :v", "ExpressionAttributeValues": values}, **extra)
    e = t.error(op, dict(request, ReturnValuesOnConditionCheckFailure="ALL_OLD"))
    assert e.type == "ConditionalCheckFailedException"
    assert e.body["Item"] == {"pk": {"S": "rv"}, "s": {"S": "cat"}}
    e = t.error(op, dict(request, ReturnValuesOnConditionCheckFailure="NONE"))
    assert e.type == "ConditionalCheckFailedException"
    assert "Item" not in e.body
    # Only ALL_OLD and NONE exist for this parameter.
    e = t.error(op, dict(request, ReturnValuesOnConditionCheckFailure="UPDATED_OLD"))
    assert e.type == "ValidationException"
    assert "returnValuesOnConditionCheckFailure" in e.message
    assert item(t, "rv")["s"] == {"S": "cat"}


def test_failed_condition_on_a_missing_item_has_no_item(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "none"}}, "ConditionExpression": "s = :v",
                            "ExpressionAttributeValues": {":v": {"S": "dog"}},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"})
    assert e.type == "ConditionalCheckFailedException"
    assert "Item" not in e.body


# A name may be at most 65535 bytes, in a map nested at any depth as well as at the top.
TOO_LARGE = ONE + "Attribute name is too large, must be less than 65536 bytes"
NAME_MAX = "n" * 65535


@pytest.mark.parametrize("shape", ["top", "map", "map in list"])
def test_put_refuses_a_name_over_the_limit_at_any_depth(t, shape):
    name = NAME_MAX + "n"
    value = {"N": "1"}
    if shape == "top":
        attrs = {name: value}
    elif shape == "map":
        attrs = {"doc": {"M": {"x": {"M": {name: value}}}}}
    else:
        attrs = {"doc": {"L": [{"S": "a"}, {"M": {name: value}}]}}
    e = t.error("PutItem", {"TableName": T, "Item": dict({"pk": {"S": "long"}}, **attrs)})
    assert e.type == "ValidationException"
    assert e.message == TOO_LARGE
    assert item(t, "long") is None


def test_put_takes_a_nested_name_at_the_limit(t):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "max"}, "doc": {"M": {NAME_MAX: {"N": "1"}}}}})
    assert item(t, "max")["doc"] == {"M": {NAME_MAX: {"N": "1"}}}


def test_update_refuses_a_value_that_brings_a_name_over_the_limit(t):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "upd"}, "doc": {"M": {}}}})
    for expression in ["SET doc = :m", "SET doc.part = :m"]:
        e = update_error(t, "upd", UpdateExpression=expression,
                         ExpressionAttributeValues={":m": {"M": {NAME_MAX + "n": {"S": "x"}}}})
        assert e.type == "ValidationException"
        assert e.message == TOO_LARGE
    assert item(t, "upd")["doc"] == {"M": {}}
    # A map key exactly at the limit is written.
    update(t, "upd", UpdateExpression="SET doc = :m", ExpressionAttributeValues={":m": {"M": {NAME_MAX: {"S": "x"}}}})
    assert item(t, "upd")["doc"] == {"M": {NAME_MAX: {"S": "x"}}}
