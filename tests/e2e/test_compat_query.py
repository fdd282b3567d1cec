"""Query and batch behaviours DynamoDB shows that an independent compatibility suite checks.

A Query's ExclusiveStartKey must lie in the partition its key condition names, and a
BatchWriteItem list longer than 25 for one table breaks that list's length constraint."""
import pytest

T = "CompatQuery"


@pytest.fixture
def t(q):
    q.create(T, sk=("sk", "N"))
    for pk in ("a", "b"):
        q.batch_put(T, [{"pk": {"S": pk}, "sk": {"N": str(i)}} for i in range(3)])
    return q


def query(t, **extra):
    return dict({"TableName": T, "KeyConditionExpression": "pk = :p",
                 "ExpressionAttributeValues": {":p": {"S": "a"}}}, **extra)


def test_start_key_in_the_queried_partition_resumes(t):
    r = t.call("Query", query(t, ExclusiveStartKey={"pk": {"S": "a"}, "sk": {"N": "0"}}))
    assert [it["sk"]["N"] for it in r["Items"]] == ["1", "2"]


@pytest.mark.parametrize("forward", [True, False])
def test_start_key_in_another_partition_is_refused(t, forward):
    e = t.error("Query", query(t, ScanIndexForward=forward, ExclusiveStartKey={"pk": {"S": "b"}, "sk": {"N": "1"}}))
    assert e.type == "ValidationException"
    assert e.message == "The provided starting key is outside query boundaries based on provided conditions"


def test_legacy_key_conditions_check_the_start_key_too(t):
    e = t.error("Query", {"TableName": T, "KeyConditions": {
        "pk": {"AttributeValueList": [{"S": "a"}], "ComparisonOperator": "EQ"}},
        "ExclusiveStartKey": {"pk": {"S": "zz"}, "sk": {"N": "1"}}})
    assert "outside query boundaries" in e.message
