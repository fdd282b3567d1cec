"""Batch and transaction behaviour found by running ScyllaDB Alternator's suite against
quarry (each test names the DynamoDB behaviour it pins down)."""
import pytest

T = "Big"


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    return q


def key(i):
    return {"pk": {"S": f"k{i}"}}


def test_transaction_may_delete_more_than_4mb_of_items(t):
    # DynamoDB's 4 MB cap is on the transaction's payload, not on the stored items its
    # actions touch: a short request deleting fifty 100 KB items (5 MB) succeeds.
    big = "y" * 100_000
    t.batch_put(T, [dict(key(i), v={"S": big}) for i in range(50)])
    assert t.call("TransactWriteItems", {"TransactItems": [
        {"Delete": {"TableName": T, "Key": key(i)}} for i in range(50)]}) == {}
    assert t.call("Scan", {"TableName": T})["Count"] == 0


def test_transaction_may_update_large_items_with_small_values(t):
    big = "y" * 100_000
    t.batch_put(T, [dict(key(i), v={"S": big}) for i in range(50)])
    t.call("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": T, "Key": key(i), "UpdateExpression": "SET n = :one",
                    "ConditionExpression": "attribute_exists(v)",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}} for i in range(50)]})
    got = t.call("GetItem", {"TableName": T, "Key": key(49), "ConsistentRead": True})["Item"]
    assert got["n"] == {"N": "1"} and len(got["v"]["S"]) == 100_000


def test_transaction_payload_over_4mb_is_refused(t):
    # Values carried by Updates count toward the payload just as Put items do.
    big = "y" * 100_000
    e = t.error("TransactWriteItems", {"TransactItems": [
        {"Update": {"TableName": T, "Key": key(i), "UpdateExpression": "SET v = :v",
                    "ExpressionAttributeValues": {":v": {"S": big}}}} for i in range(50)]})
    assert e.type == "ValidationException"
    assert e.message == "The transaction payload size cannot exceed 4 MB"
    assert t.call("Scan", {"TableName": T})["Count"] == 0


def item_bytes(item):
    # DynamoDB's item size for string attributes: names plus UTF-8 values.
    return sum(len(k) + len(v["S"]) for k, v in item.items())


def test_batch_get_answer_never_passes_16_mb(t):
    # DynamoDB answers as many items as fit in 16 MB and leaves the rest, whole, in
    # UnprocessedKeys; the item that would cross the limit is not answered.
    big = "z" * 390_000
    keys = [key(i) for i in range(45)]
    t.batch_put(T, [dict(k, v={"S": big}) for k in keys])
    r = t.call("BatchGetItem", {"RequestItems": {T: {"Keys": keys, "ConsistentRead": True}}})
    got = r["Responses"][T]
    assert sum(item_bytes(i) for i in got) <= 16 * 1024 * 1024
    assert len(got) == 43
    rest = r["UnprocessedKeys"][T]
    assert rest["ConsistentRead"] is True and len(rest["Keys"]) == 2
    again = t.call("BatchGetItem", {"RequestItems": {T: rest}})
    assert again["UnprocessedKeys"] == {}
    names = {i["pk"]["S"] for i in got} | {i["pk"]["S"] for i in again["Responses"][T]}
    assert names == {k["pk"]["S"] for k in keys}


def test_transaction_reports_item_collections_of_local_index_tables(q):
    # TransactWriteItems' ItemCollectionMetrics names, per table with a local secondary
    # index, the collection of each item a Put, Update or Delete changed; condition checks
    # and tables without local indexes add nothing.
    q.call("CreateTable", {
        "TableName": "Coll", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "l")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "LocalSecondaryIndexes": [{"IndexName": "byl", "Projection": {"ProjectionType": "ALL"},
                                   "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                 {"AttributeName": "l", "KeyType": "RANGE"}]}]})
    q.create("Flat", sk=None)
    q.call("PutItem", {"TableName": "Coll", "Item": {"pk": {"S": "gone"}, "sk": {"S": "1"}}})

    def k(pk):
        return {"pk": {"S": pk}, "sk": {"S": "1"}}
    r = q.call("TransactWriteItems", {"ReturnItemCollectionMetrics": "SIZE", "TransactItems": [
        {"Put": {"TableName": "Coll", "Item": dict(k("put"), l={"S": "x"})}},
        {"ConditionCheck": {"TableName": "Coll", "Key": k("checked"), "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Update": {"TableName": "Coll", "Key": k("updated"), "UpdateExpression": "SET n = :n",
                    "ExpressionAttributeValues": {":n": {"N": "1"}}}},
        {"Delete": {"TableName": "Coll", "Key": k("gone")}},
        {"Put": {"TableName": "Flat", "Item": {"pk": {"S": "flat"}}}}]})
    got = r["ItemCollectionMetrics"]
    assert list(got) == ["Coll"]
    assert [m["ItemCollectionKey"] for m in got["Coll"]] == [{"pk": {"S": p}} for p in ("put", "updated", "gone")]
    for m in got["Coll"]:
        assert m["SizeEstimateRangeGB"] == [0.0, 1.0]
    r = q.call("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": "Flat", "Item": {"pk": {"S": "f2"}}}}],
                                      "ReturnItemCollectionMetrics": "SIZE"})
    assert r["ItemCollectionMetrics"] == {}
