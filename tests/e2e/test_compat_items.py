"""Single-item behaviours DynamoDB shows that an independent compatibility suite checks.

Each test pins one thing real DynamoDB does that quarry once did differently: an update
that only removes does not create the item, an empty AttributesToGet is refused, and a
NUL character inside a string is data, not the end of it."""
import pytest

T = "CompatItems"


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    return q


def get(t, pk):
    return t.call("GetItem", {"TableName": T, "Key": {"pk": {"S": pk}}, "ConsistentRead": True})


@pytest.mark.parametrize("update", [
    {"UpdateExpression": "REMOVE a"},
    {"UpdateExpression": "DELETE s :v", "ExpressionAttributeValues": {":v": {"SS": ["x"]}}},
    {"AttributeUpdates": {"a": {"Action": "DELETE"}}},
    {"AttributeUpdates": {"s": {"Action": "DELETE", "Value": {"NS": ["4"]}}}},
])
def test_removing_update_does_not_create_missing_item(t, update):
    r = t.call("UpdateItem", dict({"TableName": T, "Key": {"pk": {"S": "gone"}}, "ReturnValues": "ALL_NEW"}, **update))
    assert "Attributes" not in r
    assert get(t, "gone") == {}


def test_update_without_actions_still_creates_item(t):
    t.call("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "bare"}}})
    t.call("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "bare2"}}, "AttributeUpdates": {}})
    assert get(t, "bare")["Item"] == {"pk": {"S": "bare"}}
    assert get(t, "bare2")["Item"] == {"pk": {"S": "bare2"}}


def test_removing_update_of_existing_item_keeps_key_only_item(t):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "k"}, "a": {"N": "1"}}})
    t.call("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "k"}}, "UpdateExpression": "REMOVE a"})
    assert get(t, "k")["Item"] == {"pk": {"S": "k"}}


def test_removing_transact_update_does_not_create_missing_item(t):
    t.call("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": T, "Key": {"pk": {"S": "tx"}}, "UpdateExpression": "REMOVE a"}}]})
    assert get(t, "tx") == {}


def test_empty_attributes_to_get_is_refused(t):
    e = t.error("GetItem", {"TableName": T, "Key": {"pk": {"S": "k"}}, "AttributesToGet": []})
    assert e.type == "ValidationException"
    assert "attributesToGet" in e.message


def test_nul_inside_strings_is_kept(t):
    item = {"pk": {"S": "a\u0000b"}, "v": {"S": "c\u0000d"}}
    t.call("PutItem", {"TableName": T, "Item": item})
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "a"}, "v": {"S": "c"}}})
    assert get(t, "a\u0000b")["Item"] == item
    assert get(t, "a")["Item"]["v"] == {"S": "c"}
    r = t.call("Scan", {"TableName": T, "FilterExpression": "v = :v", "ExpressionAttributeValues": {":v": {"S": "c\u0000d"}}})
    assert r["Items"] == [item]


@pytest.mark.parametrize("path", ["a.c[5]", "a.b.q", "a.c[0].q", "a.zz"])
def test_projection_of_missing_nested_path_leaves_no_empty_parent(t, path):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "n"}, "a": {"M": {"b": {"S": "x"}, "c": {"L": [{"N": "1"}]}}}}})
    r = t.call("GetItem", {"TableName": T, "Key": {"pk": {"S": "n"}}, "ProjectionExpression": path})
    assert r["Item"] == {}


def test_updated_new_past_list_end_returns_nothing(t):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "l"}, "a": {"M": {"c": {"L": [{"N": "1"}]}}}}})
    r = t.call("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "l"}}, "UpdateExpression": "SET a.c[100] = :v",
                              "ExpressionAttributeValues": {":v": {"N": "7"}}, "ReturnValues": "UPDATED_NEW"})
    assert "Attributes" not in r
    assert get(t, "l")["Item"]["a"] == {"M": {"c": {"L": [{"N": "1"}, {"N": "7"}]}}}
