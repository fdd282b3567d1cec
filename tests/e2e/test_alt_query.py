"""Query and Scan behaviours that running ScyllaDB Alternator's query tests against quarry
brought up, each checked against DynamoDB's documented or recorded answers.

A start key for an index read holds exactly the table's key attributes and the index's;
any other attribute makes it invalid, as it does for a read of the table. A filter on a
local index may test attributes the index does not hold (they are read from the table),
but the items returned hold what the index projects unless the request asks for more. A
global index cannot fetch from the table, so asking one for an attribute it does not
project is refused."""
import pytest

T = "AltQuery"


@pytest.fixture
def t(q):
    q.call("CreateTable", {
        "TableName": T, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g", "l")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "ByG", "Projection": {"ProjectionType": "ALL"},
                                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
        "LocalSecondaryIndexes": [{"IndexName": "ByL", "Projection": {"ProjectionType": "ALL"},
                                   "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                 {"AttributeName": "l", "KeyType": "RANGE"}]}]})
    q.batch_put(T, [{"pk": {"S": "a"}, "sk": {"S": str(i)}, "g": {"S": "G"}, "l": {"S": str(9 - i)}}
                    for i in range(4)])
    return q


def s(v):
    return {"S": v}


GSI_QUERY = {"TableName": T, "IndexName": "ByG", "KeyConditionExpression": "g = :g",
             "ExpressionAttributeValues": {":g": s("G")}}
LSI_QUERY = {"TableName": T, "IndexName": "ByL", "KeyConditionExpression": "pk = :p",
             "ExpressionAttributeValues": {":p": s("a")}}


def test_gsi_query_resumes_from_its_own_last_evaluated_key(t):
    first = t.call("Query", dict(GSI_QUERY, Limit=1))
    assert set(first["LastEvaluatedKey"]) == {"pk", "sk", "g"}
    rest = t.call("Query", dict(GSI_QUERY, ExclusiveStartKey=first["LastEvaluatedKey"]))
    assert first["Count"] + rest["Count"] == 4


@pytest.mark.parametrize("request_", [GSI_QUERY, LSI_QUERY], ids=["gsi", "lsi"])
def test_index_query_start_key_with_another_attribute_is_invalid(t, request_):
    key = t.call("Query", dict(request_, Limit=1))["LastEvaluatedKey"]
    key["other"] = s("x")
    e = t.error("Query", dict(request_, ExclusiveStartKey=key))
    assert e.type == "ValidationException"
    assert e.message == "The provided starting key is invalid"


def test_index_scan_start_key_with_another_attribute_is_invalid(t):
    key = t.call("Scan", {"TableName": T, "IndexName": "ByG", "Limit": 1})["LastEvaluatedKey"]
    key["other"] = s("x")
    e = t.error("Scan", {"TableName": T, "IndexName": "ByG", "ExclusiveStartKey": key})
    assert e.type == "ValidationException"
    assert e.message == "The provided starting key is invalid: The provided key element does not match the schema"


LOCAL = "AltQueryLocal"


@pytest.fixture
def local(q):
    def lsi(name, projection):
        return {"IndexName": name, "Projection": projection,
                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}]}
    q.call("CreateTable", {
        "TableName": LOCAL, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "l")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "LocalSecondaryIndexes": [lsi("Keys", {"ProjectionType": "KEYS_ONLY"}),
                                  lsi("WithA", {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]})]})
    q.call("PutItem", {"TableName": LOCAL, "Item": {"pk": s("p"), "sk": s("1"), "l": s("L"), "a": s("A"), "b": s("B")}})
    q.call("PutItem", {"TableName": LOCAL, "Item": {"pk": s("p"), "sk": s("2"), "l": s("M"), "a": s("A"), "b": s("C")}})
    return q


@pytest.mark.parametrize("index,held", [("Keys", {"pk", "sk", "l"}), ("WithA", {"pk", "sk", "l", "a"})])
@pytest.mark.parametrize("select", [None, "ALL_PROJECTED_ATTRIBUTES"])
def test_filter_on_local_index_returns_projected_attributes(local, index, held, select):
    req = {"TableName": LOCAL, "IndexName": index, "KeyConditionExpression": "pk = :p",
           "FilterExpression": "b = :b", "ExpressionAttributeValues": {":p": s("p"), ":b": s("B")}}
    if select:
        req["Select"] = select
    r = local.call("Query", req)
    assert [set(it) for it in r["Items"]] == [held]
    assert r["Items"][0]["sk"] == s("1") and r["ScannedCount"] == 2
    scan = local.call("Scan", {"TableName": LOCAL, "IndexName": index, "FilterExpression": "b = :b",
                               "ExpressionAttributeValues": {":b": s("C")}})
    assert [set(it) for it in scan["Items"]] == [held]


def test_filter_on_local_index_with_more_asked_for(local):
    base = {"TableName": LOCAL, "IndexName": "Keys", "KeyConditionExpression": "pk = :p",
            "FilterExpression": "b = :b", "ExpressionAttributeValues": {":p": s("p"), ":b": s("B")}}
    whole = local.call("Query", dict(base, Select="ALL_ATTRIBUTES"))["Items"]
    assert whole == [{"pk": s("p"), "sk": s("1"), "l": s("L"), "a": s("A"), "b": s("B")}]
    named = local.call("Query", dict(base, ProjectionExpression="b, sk"))["Items"]
    assert named == [{"b": s("B"), "sk": s("1")}]


GLOBAL = "AltQueryGlobal"


@pytest.fixture
def glob(q):
    def gsi(name, projection):
        return {"IndexName": name, "Projection": projection, "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}
    q.call("CreateTable", {
        "TableName": GLOBAL, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "g")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [gsi("Keys", {"ProjectionType": "KEYS_ONLY"}),
                                   gsi("WithA", {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]}),
                                   gsi("Everything", {"ProjectionType": "ALL"})]})
    q.call("PutItem", {"TableName": GLOBAL, "Item": {"pk": s("p"), "g": s("G"), "a": {"M": {"k": s("v")}}, "b": s("B")}})
    return q


def gquery(index, **extra):
    return dict({"TableName": GLOBAL, "IndexName": index, "KeyConditionExpression": "g = :g",
                 "ExpressionAttributeValues": {":g": s("G")}}, **extra)


@pytest.mark.parametrize("extra,missing", [
    ({"ProjectionExpression": "b"}, "[b]"),
    ({"ProjectionExpression": " pk ,  b.x , #z[0]", "ExpressionAttributeNames": {"#z": "z"}}, "[b, z]"),
])
def test_global_index_refuses_attributes_it_does_not_project(glob, extra, missing):
    for index, lacks in (("Keys", "[a, " + missing[1:]), ("WithA", missing)):
        more = dict(extra)
        if index == "Keys":
            more["ProjectionExpression"] = "a, " + more["ProjectionExpression"]
        e = glob.error("Query", gquery(index, **more))
        assert e.type == "ValidationException"
        assert e.message == ("One or more parameter values were invalid: Global secondary index %s does not project %s"
                             % (index, lacks))


def test_global_index_scan_refuses_attributes_to_get_it_does_not_project(glob):
    e = glob.error("Scan", {"TableName": GLOBAL, "IndexName": "WithA", "AttributesToGet": ["pk", "b"]})
    assert e.message == "One or more parameter values were invalid: Global secondary index WithA does not project [b]"


def test_global_index_serves_what_it_projects(glob):
    r = glob.call("Query", gquery("WithA", ProjectionExpression="a.k, #g", ExpressionAttributeNames={"#g": "g"}))
    assert r["Items"] == [{"a": {"M": {"k": s("v")}}, "g": s("G")}]
    r = glob.call("Query", gquery("Keys", ProjectionExpression="pk"))
    assert r["Items"] == [{"pk": s("p")}]
    r = glob.call("Query", gquery("Everything", ProjectionExpression="b, zz"))
    assert r["Items"] == [{"b": s("B")}]
