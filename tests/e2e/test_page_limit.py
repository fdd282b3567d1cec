"""Which item is the last a 1 MB Query or Scan page holds, as DynamoDB decides it: a page
ends after the item that brings what it has read to 1 MB, counted as DynamoDB counts
items toward a page (names one byte each, values with their framing, the sort key once
per 3 KB), and LastEvaluatedKey names that item, even when it is the last of the range.
Each case is one recorded against DynamoDB by an independent suite (25 items of about
42 KB, one byte either side of the boundary)."""
import pytest

T = "Paged"
ID = "1234567890"  # a ten-character partition key, as in the recorded cases


def items(sizes, name):
    """25 items {a, b, name} whose `name` holds sizes[i] letters."""
    return [{"a": {"S": ID}, "b": {"S": "%02d" % i}, name: {"S": "e" * n}} for i, n in enumerate(sizes)]


CASES = [
    # (value sizes, attribute name, Count, the index of the item LastEvaluatedKey names)
    ([41645] * 25, "e" * 255, 25, None),  # just under: all 25, no key
    ([41645] * 24 + [41646], "e", 25, 24),  # one byte more: the last item ends the page
    ([43372] * 23 + [43387, 44999], "e" * 255, 25, 24),  # item 24 passes 1 MB: it ends the page
    ([43372] * 23 + [43388, 44999], "e", 24, 23),  # one byte more: item 23 does
]


@pytest.mark.parametrize("sizes,name,count,last", CASES)
def test_the_page_ends_where_dynamodb_ends_it(q, sizes, name, count, last):
    q.create(T, ("a", "S"), ("b", "S"))
    q.batch_put(T, items(sizes, name))
    for op, extra in [("Query", {"KeyConditionExpression": "a = :a",
                                 "ExpressionAttributeValues": {":a": {"S": ID}}}),
                      ("Scan", {})]:
        r = q.call(op, {"TableName": T, "Select": "COUNT", **extra})
        want = {"Count": count, "ScannedCount": count}
        if last is not None:
            want["LastEvaluatedKey"] = {"a": {"S": ID}, "b": {"S": "%02d" % last}}
        assert r == want, op
