"""Query and Scan behaviours that running ScyllaDB Alternator's query tests against quarry
brought up, each checked against DynamoDB's documented or recorded answers.

A start key for an index read holds exactly the table's key attributes and the index's;
any other attribute makes it invalid, as it does for a read of the table. A Query of an
index that does not project every attribute may filter only on attributes it projects; a
Scan's filter sees the index entry. A local index reads the table for attributes asked
for that it does not hold; a global index cannot, so asking one for them is refused."""
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


def lquery(index, **extra):
    return dict({"TableName": LOCAL, "IndexName": index, "KeyConditionExpression": "pk = :p",
                 "ExpressionAttributeValues": {":p": s("p")}}, **extra)


@pytest.mark.parametrize("index", ["Keys", "WithA"])
@pytest.mark.parametrize("select", [None, "ALL_PROJECTED_ATTRIBUTES", "ALL_ATTRIBUTES"])
def test_local_index_query_refuses_filter_on_what_it_does_not_project(local, index, select):
    req = lquery(index, FilterExpression="#b = :b OR size(zz) > :n",
                 ExpressionAttributeNames={"#b": "b"}, ExpressionAttributeValues={":p": s("p"), ":b": s("B"), ":n": {"N": "1"}})
    if select:
        req["Select"] = select
    e = local.error("Query", req)
    assert e.type == "ValidationException"
    assert e.message == ("One or more parameter values were invalid: Secondary index %s does not project one or more "
                         "filter attributes: [b, zz]" % index)
    e = local.error("Query", {"TableName": LOCAL, "IndexName": index,
                              "KeyConditions": {"pk": {"AttributeValueList": [s("p")], "ComparisonOperator": "EQ"}},
                              "QueryFilter": {"b": {"AttributeValueList": [s("B")], "ComparisonOperator": "EQ"}}})
    assert e.message.endswith("does not project one or more filter attributes: [b]")


def test_local_index_filter_on_what_it_projects(local):
    r = local.call("Query", lquery("WithA", FilterExpression="a = :a AND sk = :one",
                                   ExpressionAttributeValues={":p": s("p"), ":a": s("A"), ":one": s("1")}))
    assert r["Items"] == [{"pk": s("p"), "sk": s("1"), "l": s("L"), "a": s("A")}] and r["ScannedCount"] == 2
    r = local.call("Query", lquery("Keys", Select="ALL_ATTRIBUTES", FilterExpression="sk = :one",
                                   ExpressionAttributeValues={":p": s("p"), ":one": s("2")}))
    assert r["Items"] == [{"pk": s("p"), "sk": s("2"), "l": s("M"), "a": s("A"), "b": s("C")}]


@pytest.mark.parametrize("index", ["Keys", "WithA"])
def test_local_index_scan_filter_sees_only_what_it_projects(local, index):
    r = local.call("Scan", {"TableName": LOCAL, "IndexName": index, "FilterExpression": "b = :b",
                            "ExpressionAttributeValues": {":b": s("B")}})
    assert r["Items"] == [] and r["Count"] == 0 and r["ScannedCount"] == 2
    r = local.call("Scan", {"TableName": LOCAL, "IndexName": index, "FilterExpression": "attribute_not_exists(b)",
                            "ProjectionExpression": "b, sk"})
    assert sorted(it["sk"]["S"] for it in r["Items"]) == ["1", "2"] and all("b" in it for it in r["Items"])


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


def test_global_index_query_refuses_filter_on_what_it_does_not_project(glob):
    e = glob.error("Query", gquery("WithA", FilterExpression="b = :b", ExpressionAttributeValues={":g": s("G"), ":b": s("B")}))
    assert e.message == ("One or more parameter values were invalid: Secondary index WithA does not project one or more "
                         "filter attributes: [b]")
    r = glob.call("Query", gquery("Everything", FilterExpression="b = :b", ExpressionAttributeValues={":g": s("G"), ":b": s("B")}))
    assert r["Count"] == 1
    r = glob.call("Scan", {"TableName": GLOBAL, "IndexName": "WithA", "FilterExpression": "b = :b",
                           "ExpressionAttributeValues": {":b": s("B")}})
    assert r["Count"] == 0 and r["ScannedCount"] == 1


def test_extra_key_condition_on_a_partition_only_table(q):
    """A second condition beside the partition key of a table keyed by it alone is refused
    as DynamoDB refuses it, in both Query forms (it named the partition key as missing)."""
    q.call("CreateTable", {"TableName": "Solo", "AttributeDefinitions": [{"AttributeName": "p", "AttributeType": "S"}],
                           "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"})
    eq = {"AttributeValueList": [{"S": "a"}], "ComparisonOperator": "EQ"}
    for req in ({"KeyConditions": {"p": eq, "z": eq}},
                {"KeyConditionExpression": "p = :a AND z = :a", "ExpressionAttributeValues": {":a": {"S": "a"}}}):
        e = q.error("Query", {"TableName": "Solo", **req})
        assert e.type == "ValidationException" and e.message == "Query key condition not supported"
