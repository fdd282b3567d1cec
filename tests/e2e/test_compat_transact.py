"""Transaction behaviours DynamoDB shows that an independent compatibility suite checks.

An action whose key has a value the table's schema refuses cancels the transaction with
a ValidationError reason for that action (None for the others, which are not looked at),
rather than failing the request; an over-large transaction names its size."""
import pytest

T = "CompatTx"


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    return q


def put(pk, **extra):
    return {"Put": dict({"TableName": T, "Item": {"pk": pk}}, **extra)}


def test_wrong_key_type_cancels_with_validation_error(t):
    e = t.error("TransactWriteItems", {"TransactItems": [
        put({"N": "7"}), put({"N": "8"}), put({"S": "c"}, ConditionExpression="attribute_exists(pk)")]})
    assert e.type == "TransactionCanceledException"
    reasons = e.body["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["ValidationError", "None", "None"]
    assert "Message" in reasons[0] and "Message" not in reasons[1] and "Message" not in reasons[2]
    assert "[ValidationError, None, None]" in e.message
    assert t.call("Scan", {"TableName": T})["Count"] == 0


def test_wrong_key_type_in_a_key_cancels_too(t):
    e = t.error("TransactWriteItems", {"TransactItems": [
        put({"S": "a"}), {"Delete": {"TableName": T, "Key": {"pk": {"B": "AAE="}}}}]})
    assert e.type == "TransactionCanceledException"
    assert [r["Code"] for r in e.body["CancellationReasons"]] == ["None", "ValidationError"]


def test_expression_errors_still_fail_the_request(t):
    e = t.error("TransactWriteItems", {"TransactItems": [put({"S": "a"}, ConditionExpression="hello!")]})
    assert e.type == "ValidationException"
    e = t.error("TransactWriteItems", {"TransactItems": [put({"S": "a"}, ConditionExpression="attribute_exists(#xyz)")]})
    assert e.type == "ValidationException" and "#xyz" in e.message


def test_over_four_megabytes_names_the_size(t):
    big = "x" * 100000
    e = t.error("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": T, "Item": {"pk": {"S": str(i)}, "v": {"S": big}}}} for i in range(50)]})
    assert e.type == "ValidationException"
    assert "size cannot exceed" in e.message
