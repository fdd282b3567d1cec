"""BatchGetItem and BatchWriteItem through `quarry call`."""


def k(i):
    return {"pk": {"S": f"k{i}"}}


def test_batch_write_and_get(q):
    q.create("Bat1", sk=None)
    q.create("Bat2", sk=None)
    r = q.call("BatchWriteItem", {"RequestItems": {
        "Bat1": [{"PutRequest": {"Item": dict(k(i), v={"N": str(i)})}} for i in range(20)],
        "Bat2": [{"PutRequest": {"Item": k(1)}}]}, "ReturnConsumedCapacity": "TOTAL"})
    assert r["UnprocessedItems"] == {}
    assert {c["TableName"]: c["CapacityUnits"] for c in r["ConsumedCapacity"]} == {"Bat1": 20.0, "Bat2": 1.0}
    r = q.call("BatchGetItem", {"RequestItems": {"Bat1": {"Keys": [k(1), k(2), k(99)], "ProjectionExpression": "v"},
                                                 "Bat2": {"Keys": [k(1)]}}})
    assert sorted(it["v"]["N"] for it in r["Responses"]["Bat1"]) == ["1", "2"]
    assert r["Responses"]["Bat2"] == [k(1)]
    assert r["UnprocessedKeys"] == {}
    q.call("BatchWriteItem", {"RequestItems": {"Bat1": [{"DeleteRequest": {"Key": k(i)}} for i in range(10)]}})
    assert q.call("Scan", {"TableName": "Bat1", "Select": "COUNT"})["Count"] == 10


def test_batch_limits_and_validation(q):
    q.create("Bat3", sk=None)
    # Over 25 in one table breaks that list's length constraint (DynamoDB names the length);
    # 25 or fewer per table but more than 25 in all is "Too many items".
    e = q.error("BatchWriteItem", {"RequestItems": {"Bat3": [{"PutRequest": {"Item": k(i)}} for i in range(26)]}})
    assert e.type == "ValidationException"
    assert "Member must have length less than or equal to 25" in e.message
    q.create("Bat4", sk=None)
    e = q.error("BatchWriteItem", {"RequestItems": {t: [{"PutRequest": {"Item": k(i)}} for i in range(13)]
                                                    for t in ("Bat3", "Bat4")}})
    assert e.message == "Too many items requested for the BatchWriteItem call"
    e = q.error("BatchWriteItem", {"RequestItems": {"Bat3": [{"PutRequest": {"Item": k(1)}}, {"DeleteRequest": {"Key": k(1)}}]}})
    assert e.message == "Provided list of item keys contains duplicates"
    e = q.error("BatchGetItem", {"RequestItems": {"Bat3": {"Keys": [k(i) for i in range(101)]}}})
    assert e.message == ("1 validation error detected: Value at 'RequestItems.Bat3.member.Keys' failed to satisfy "
                         "constraint: Member must have length less than or equal to 100")
    e = q.error("BatchGetItem", {"RequestItems": {"Bat3": {"Keys": [k(1), k(1)]}}})
    assert e.message == "Provided list of item keys contains duplicates"
    # A bad request anywhere in the batch writes nothing.
    e = q.error("BatchWriteItem", {"RequestItems": {"Bat3": [{"PutRequest": {"Item": k(1)}},
                                                          {"PutRequest": {"Item": {"pk": {"N": "1"}}}}]}})
    assert e.type == "ValidationException"
    assert q.call("Scan", {"TableName": "Bat3", "Select": "COUNT"})["Count"] == 0
    e = q.error("BatchWriteItem", {"RequestItems": {"Missing": [{"PutRequest": {"Item": k(1)}}]}})
    assert e.type == "ResourceNotFoundException"
