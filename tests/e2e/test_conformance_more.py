"""Further answers of real DynamoDB to the core operations, where quarry once differed.

Each test pins what DynamoDB answers to one request, as two public conformance suites
recorded it region by region. Where regions disagree (a rollout under way), the answer
pinned here is the one most regions gave in the latest recordings (October 2026)."""
import pytest

H = "MoreHash"


@pytest.fixture
def t(q):
    q.create(H, sk=None)
    return q


ONE = "1 validation error detected: "


# ---- Scan: most regions still use the older parameter wording ----

def test_scan_parameter_errors_in_the_older_wording(t):
    cases = [
        ({"Limit": 0}, ONE + "Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than "
                             "or equal to 1"),
        ({"Segment": -1, "TotalSegments": 3}, ONE + "Value '-1' at 'segment' failed to satisfy constraint: Member "
                                                    "must have value greater than or equal to 0"),
        ({"Segment": 4, "TotalSegments": 4}, "The Segment parameter is zero-based and must be less than parameter "
                                             "TotalSegments: Segment: 4 is not less than TotalSegments: 4"),
        ({"ExclusiveStartKey": {"other": {"S": "x"}}}, "The provided starting key is invalid: The provided key "
                                                       "element does not match the schema"),
        ({"Select": "SPECIFIC_ATTRIBUTES"}, "Must specify the AttributesToGet or ProjectionExpression when choosing "
                                            "to get SPECIFIC_ATTRIBUTES"),
    ]
    for extra, message in cases:
        e = t.error("Scan", dict({"TableName": H}, **extra))
        assert e.type == "ValidationException"
        assert e.message == message, extra


def test_query_keeps_the_newer_wording(t):
    base = {"TableName": H, "KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"S": "v"}}}
    e = t.error("Query", dict(base, Limit=0))
    assert e.message == ONE + "Value at 'Limit' failed to satisfy constraint: Member must have value greater than or " \
                              "equal to 1"
    e = t.error("Query", dict(base, ExclusiveStartKey={"other": {"S": "x"}}))
    assert e.message == "The provided starting key is invalid"


# ---- BatchWriteItem ----

def test_batch_write_with_no_tables_names_the_parameter(t):
    e = t.error("BatchWriteItem", {"RequestItems": {}})
    assert e.type == "ValidationException"
    assert e.message == "The requestItems parameter is required for BatchWriteItem"
