"""Secondary indexes through `quarry call`: sparse, overloaded and status GSIs, LSIs with
projections and item collection limits, GSIs added to a live table, and misuse."""
import time

import pytest


def s(v):
    return {"S": v}


def defs(*names):
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


def keys(pk, sk=None):
    k = [{"AttributeName": pk, "KeyType": "HASH"}]
    if sk:
        k.append({"AttributeName": sk, "KeyType": "RANGE"})
    return k


def gsi(name, pk, sk=None, projection="ALL", include=None):
    p = {"ProjectionType": projection}
    if include:
        p["NonKeyAttributes"] = include
    return {"IndexName": name, "KeySchema": keys(pk, sk), "Projection": p}


def query(q, table, index, expr, values, names=None, **extra):
    req = {"TableName": table, "IndexName": index, "KeyConditionExpression": expr, "ExpressionAttributeValues": values}
    if names:
        req["ExpressionAttributeNames"] = names
    req.update(extra)
    return q.call("Query", req)


def test_sparse_open_tickets(q):
    q.call("CreateTable", {"TableName": "Tickets", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": defs("pk", "open_queue", "opened"), "KeySchema": keys("pk"),
                           "GlobalSecondaryIndexes": [gsi("OpenTickets", "open_queue", "opened")]})
    for i in range(5):
        q.call("PutItem", {"TableName": "Tickets", "Item": {"pk": s(f"TICKET#{i}"), "open_queue": s("SUPPORT"),
                                                             "opened": s(f"2026-03-0{i + 1}"), "title": s(f"t{i}")}})
    q.call("PutItem", {"TableName": "Tickets", "Item": {"pk": s("TICKET#9"), "title": s("closed long ago")}})
    r = query(q, "Tickets", "OpenTickets", "open_queue = :q", {":q": s("SUPPORT")})
    assert [it["pk"]["S"] for it in r["Items"]] == [f"TICKET#{i}" for i in range(5)]
    for i in (1, 3):
        q.call("UpdateItem", {"TableName": "Tickets", "Key": {"pk": s(f"TICKET#{i}")}, "UpdateExpression": "REMOVE open_queue"})
    q.call("DeleteItem", {"TableName": "Tickets", "Key": {"pk": s("TICKET#4")}})
    r = query(q, "Tickets", "OpenTickets", "open_queue = :q", {":q": s("SUPPORT")})
    assert [it["pk"]["S"] for it in r["Items"]] == ["TICKET#0", "TICKET#2"]
    d = q.call("DescribeTable", {"TableName": "Tickets"})["Table"]
    assert d["GlobalSecondaryIndexes"][0]["ItemCount"] == 2
    assert d["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"


def test_overloaded_gsi_two_entities(q):
    q.call("CreateTable", {"TableName": "Company", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": defs("PK", "SK", "GSI1PK", "GSI1SK"), "KeySchema": keys("PK", "SK"),
                           "GlobalSecondaryIndexes": [gsi("GSI1", "GSI1PK", "GSI1SK")]})
    items = [
        {"PK": s("ORDER#1"), "SK": s("ORDER#1"), "GSI1PK": s("STATUS#OPEN"), "GSI1SK": s("2026-03-01"), "type": s("order")},
        {"PK": s("ORDER#2"), "SK": s("ORDER#2"), "GSI1PK": s("STATUS#SHIPPED"), "GSI1SK": s("2026-03-02"), "type": s("order")},
        {"PK": s("ORDER#3"), "SK": s("ORDER#3"), "GSI1PK": s("STATUS#OPEN"), "GSI1SK": s("2026-03-03"), "type": s("order")},
        {"PK": s("EMP#1"), "SK": s("EMP#1"), "GSI1PK": s("DEPT#FINANCE"), "GSI1SK": s("Ada"), "type": s("employee")},
        {"PK": s("EMP#2"), "SK": s("EMP#2"), "GSI1PK": s("DEPT#FINANCE"), "GSI1SK": s("Bob"), "type": s("employee")},
        {"PK": s("EMP#3"), "SK": s("EMP#3"), "GSI1PK": s("DEPT#SALES"), "GSI1SK": s("Cy"), "type": s("employee")},
    ]
    q.batch_put("Company", items)
    r = query(q, "Company", "GSI1", "GSI1PK = :p", {":p": s("STATUS#OPEN")}, ScanIndexForward=False)
    assert [it["PK"]["S"] for it in r["Items"]] == ["ORDER#3", "ORDER#1"]
    r = query(q, "Company", "GSI1", "GSI1PK = :p AND begins_with(GSI1SK, :a)", {":p": s("DEPT#FINANCE"), ":a": s("A")})
    assert [it["PK"]["S"] for it in r["Items"]] == ["EMP#1"]
    r = query(q, "Company", "GSI1", "GSI1PK = :p", {":p": s("DEPT#FINANCE")}, ReturnConsumedCapacity="INDEXES")
    assert {it["type"]["S"] for it in r["Items"]} == {"employee"} and r["Count"] == 2
    assert r["ConsumedCapacity"]["GlobalSecondaryIndexes"]["GSI1"]["CapacityUnits"] == 0.5
    # Moving an item to another index partition costs the table one write and the index two.
    r = q.call("PutItem", {"TableName": "Company", "Item": dict(items[0], GSI1PK=s("STATUS#SHIPPED")),
                           "ReturnConsumedCapacity": "INDEXES"})
    c = r["ConsumedCapacity"]
    assert c["Table"]["CapacityUnits"] == 1.0
    assert c["GlobalSecondaryIndexes"]["GSI1"]["CapacityUnits"] == 2.0
    assert c["CapacityUnits"] == 3.0
    r = q.call("PutItem", {"TableName": "Company", "Item": {"PK": s("X"), "SK": s("X")}, "ReturnConsumedCapacity": "TOTAL"})
    assert r["ConsumedCapacity"]["CapacityUnits"] == 1.0  # not in the sparse index: no index write


def test_pending_orders_across_customers(q):
    q.call("CreateTable", {"TableName": "Store", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": defs("PK", "SK", "status", "orderDate"), "KeySchema": keys("PK", "SK"),
                           "GlobalSecondaryIndexes": [gsi("ByStatus", "status", "orderDate", "INCLUDE", ["total"])]})
    items = []
    for c in range(4):
        for o in range(3):
            items.append({"PK": s(f"CUSTOMER#{c}"), "SK": s(f"ORDER#{o}"), "status": s("PENDING" if o != 1 else "SHIPPED"),
                          "orderDate": s(f"2026-03-{c}{o}"), "total": {"N": str(c * 10 + o)}, "notes": s("x")})
    q.batch_put("Store", items)
    pages, start, seen = 0, None, []
    while True:
        extra = {"Limit": 3}
        if start:
            extra["ExclusiveStartKey"] = start
        r = query(q, "Store", "ByStatus", "#s = :p", {":p": s("PENDING")}, {"#s": "status"}, **extra)
        seen += r["Items"]
        pages += 1
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    assert len(seen) == 8 and pages >= 3
    assert [it["orderDate"]["S"] for it in seen] == sorted(it["orderDate"]["S"] for it in seen)
    assert set(seen[0]) == {"PK", "SK", "status", "orderDate", "total"}  # INCLUDE projection, no notes
    e = q.error("Query", {"TableName": "Store", "IndexName": "ByStatus", "KeyConditionExpression": "#s = :p",
                          "ExpressionAttributeNames": {"#s": "status"}, "ExpressionAttributeValues": {":p": s("PENDING")},
                          "ConsistentRead": True})
    assert "Consistent reads are not supported on global secondary indexes" in e.message
    e = q.error("Query", {"TableName": "Store", "IndexName": "ByStatus", "KeyConditionExpression": "#s = :p",
                          "ExpressionAttributeNames": {"#s": "status"}, "ExpressionAttributeValues": {":p": s("PENDING")},
                          "Select": "ALL_ATTRIBUTES"})
    assert "ALL_ATTRIBUTES" in e.message
    r = q.call("Scan", {"TableName": "Store", "IndexName": "ByStatus"})
    assert r["Count"] == 12


def test_lsi_projection_and_collection_limit(q, tmp_path):
    q.call("CreateTable", {"TableName": "Chat", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": defs("PK", "SK", "sender"), "KeySchema": keys("PK", "SK"),
                           "LocalSecondaryIndexes": [gsi("BySender", "PK", "sender", "KEYS_ONLY")]})
    for i in range(4):
        q.call("PutItem", {"TableName": "Chat", "Item": {"PK": s("THREAD#1"), "SK": s(f"MSG#{i}"), "sender": s(f"USER#{i % 2}"),
                                                         "body": s(f"hello {i}")}})
    r = query(q, "Chat", "BySender", "PK = :t AND sender = :u", {":t": s("THREAD#1"), ":u": s("USER#1")}, ConsistentRead=True)
    assert [set(it) for it in r["Items"]] == [{"PK", "SK", "sender"}] * 2
    r = query(q, "Chat", "BySender", "PK = :t AND sender = :u", {":t": s("THREAD#1"), ":u": s("USER#1")},
              Select="ALL_ATTRIBUTES")
    assert [it["body"]["S"] for it in r["Items"]] == ["hello 1", "hello 3"]
    r = q.call("PutItem", {"TableName": "Chat", "Item": {"PK": s("THREAD#1"), "SK": s("MSG#9"), "sender": s("USER#1")},
                           "ReturnItemCollectionMetrics": "SIZE"})
    assert r["ItemCollectionMetrics"]["ItemCollectionKey"] == {"PK": s("THREAD#1")}
    assert len(r["ItemCollectionMetrics"]["SizeEstimateRangeGB"]) == 2
    # With the limit lowered, a collection that would pass it refuses the write.
    rc, body = q.raw_opts(["--lsi-collection-limit", "2000"], "PutItem",
                          {"TableName": "Chat", "Item": {"PK": s("THREAD#1"), "SK": s("MSG#10"), "body": s("x" * 3000)}})
    assert rc == 1 and body["__type"].endswith("ItemCollectionSizeLimitExceededException")
    rc, body = q.raw_opts(["--lsi-collection-limit", "2000"], "PutItem",
                          {"TableName": "Chat", "Item": {"PK": s("THREAD#2"), "SK": s("MSG#1"), "body": s("small")}})
    assert rc == 0


def test_gsi_added_to_live_table(q, tmp_path):
    q.create("Live", ("PK", "S"), ("SK", "S"))
    q.batch_put("Live", [{"PK": s(f"U#{i}"), "SK": s("PROFILE"), "email": s(f"user{i}@example.com")} for i in range(300)])
    r = q.call("UpdateTable", {"TableName": "Live", "AttributeDefinitions": defs("email"),
                               "GlobalSecondaryIndexUpdates": [{"Create": gsi("ByEmail", "email")}]})
    g = r["TableDescription"]["GlobalSecondaryIndexes"][0]
    assert g["IndexName"] == "ByEmail" and g["IndexStatus"] in ("CREATING", "ACTIVE")
    deadline = time.time() + 30
    while time.time() < deadline:
        d = q.call("DescribeTable", {"TableName": "Live"})["Table"]["GlobalSecondaryIndexes"][0]
        if d["IndexStatus"] == "ACTIVE":
            break
        time.sleep(0.1)
    assert d["IndexStatus"] == "ACTIVE" and "Backfilling" not in d
    r = query(q, "Live", "ByEmail", "email = :e", {":e": s("user42@example.com")})
    assert r["Items"][0]["PK"] == s("U#42")
    assert q.call("Scan", {"TableName": "Live", "Select": "COUNT"})["Count"] == 300
    assert q.call("Scan", {"TableName": "Live", "IndexName": "ByEmail", "Select": "COUNT"})["Count"] == 300
    assert q.verify("Live").returncode == 0
    e = q.error("UpdateTable", {"TableName": "Live", "AttributeDefinitions": defs("email"),
                                "GlobalSecondaryIndexUpdates": [{"Create": gsi("ByEmail", "email")}]})
    assert "already exists" in e.message
    r = q.call("UpdateTable", {"TableName": "Live", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "ByEmail"}}]})
    e = q.error("Query", {"TableName": "Live", "IndexName": "ByEmail", "KeyConditionExpression": "email = :e",
                          "ExpressionAttributeValues": {":e": s("x")}})
    assert "does not have the specified index" in e.message
    verify = q.verify()
    assert verify.returncode == 0, verify.stdout


def test_index_misuse(q):
    base = {"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST", "KeySchema": keys("pk", "sk")}
    e = q.error("CreateTable", dict(base, AttributeDefinitions=defs("pk", "sk", "a"),
                                    LocalSecondaryIndexes=[gsi(f"L{i}xx", "pk", "a") for i in range(6)]))
    assert "LocalSecondaryIndexes" in e.message
    e = q.error("CreateTable", dict(base, AttributeDefinitions=defs("pk", "sk", "a"),
                                    GlobalSecondaryIndexes=[gsi(f"G{i}xx", "a") for i in range(21)]))
    assert "limit of 20" in e.message
    e = q.error("CreateTable", dict(base, AttributeDefinitions=defs("pk", "sk", "a"),
                                    LocalSecondaryIndexes=[gsi("Lxx", "a", "sk")]))
    assert "same leading hash key" in e.message
    e = q.error("CreateTable", dict(base, AttributeDefinitions=defs("pk", "sk", "a"),
                                    GlobalSecondaryIndexes=[gsi("Gxx", "a", projection="INCLUDE",
                                                                include=[f"x{i}" for i in range(101)])]))
    assert "projected attributes" in e.message
    q.call("CreateTable", dict(base, AttributeDefinitions=defs("pk", "sk", "a"), GlobalSecondaryIndexes=[gsi("Gxx", "a")]))
    e = q.error("PutItem", {"TableName": "Bad", "Item": {"pk": s("1"), "sk": s("1"), "a": {"N": "5"}}})
    assert "Type mismatch for Index Key a Expected: S Actual: N IndexName: Gxx" in e.message
    e = q.error("PutItem", {"TableName": "Bad", "Item": {"pk": s("1"), "sk": s("1"), "a": s("")}})
    assert "IndexName: Gxx" in e.message
    e = q.error("GetItem", {"TableName": "Bad", "IndexName": "Gxx", "Key": {"pk": s("1"), "sk": s("1")}})
    assert e.type == "ValidationException"
    # UpdateTable has no LocalSecondaryIndexes member: one sent alone changes nothing.
    e = q.error("UpdateTable", {"TableName": "Bad", "LocalSecondaryIndexes": [gsi("Lxx", "pk", "a")]})
    assert "At least one of" in e.message
    e = q.error("Query", {"TableName": "Bad", "IndexName": "Nope", "KeyConditionExpression": "a = :a",
                          "ExpressionAttributeValues": {":a": s("x")}})
    assert "does not have the specified index: Nope" in e.message


def test_multi_attribute_gsi_keys(q):
    q.call("CreateTable", {"TableName": "Scores", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": defs("pk", "tournament", "region", "player") +
                           [{"AttributeName": "score", "AttributeType": "N"}],
                           "KeySchema": keys("pk"),
                           "GlobalSecondaryIndexes": [{"IndexName": "ByTournamentRegion", "KeySchema": [
                               {"AttributeName": "tournament", "KeyType": "HASH"},
                               {"AttributeName": "region", "KeyType": "HASH"},
                               {"AttributeName": "score", "KeyType": "RANGE"},
                               {"AttributeName": "player", "KeyType": "RANGE"}],
                               "Projection": {"ProjectionType": "ALL"}}]})
    items = []
    for i in range(12):
        items.append({"pk": s(f"GAME#{i}"), "tournament": s("WINTER"), "region": s("EU" if i % 2 else "US"),
                      "score": {"N": str(100 + i % 4)}, "player": s(f"p{i:02d}")})
    items.append({"pk": s("GAME#99"), "tournament": s("WINTER"), "score": {"N": "1"}, "player": s("no-region")})
    q.batch_put("Scores", items)
    vals = {":t": s("WINTER"), ":r": s("EU")}
    r = query(q, "Scores", "ByTournamentRegion", "tournament = :t AND #r = :r", vals, {"#r": "region"})
    assert r["Count"] == 6
    scores = [(int(it["score"]["N"]), it["player"]["S"]) for it in r["Items"]]
    assert scores == sorted(scores)
    r = query(q, "Scores", "ByTournamentRegion", "tournament = :t AND #r = :r AND score > :s",
              dict(vals, **{":s": {"N": "101"}}), {"#r": "region"}, ScanIndexForward=False)
    assert [int(it["score"]["N"]) for it in r["Items"]] == [103, 103, 103]
    r = query(q, "Scores", "ByTournamentRegion", "tournament = :t AND #r = :r AND score = :s AND begins_with(player, :p)",
              dict(vals, **{":s": {"N": "101"}, ":p": s("p0")}), {"#r": "region"})
    assert [it["player"]["S"] for it in r["Items"]] == ["p01", "p05", "p09"]
    e = q.error("Query", {"TableName": "Scores", "IndexName": "ByTournamentRegion",
                          "KeyConditionExpression": "tournament = :t", "ExpressionAttributeValues": {":t": s("WINTER")}})
    assert e.type == "ValidationException" and "region" in e.message
    assert q.verify("Scores").returncode == 0


def test_update_table_checks_new_attribute_definitions(q):
    """Found by fuzzing: UpdateTable's AttributeDefinitions get CreateTable's checks."""
    q.create("Flat", ("id", "N"), None)
    create = {"Create": gsi("ByC", "c", projection="KEYS_ONLY")}
    # A definition that is no structure cannot be read at all (DynamoDB's reader).
    e = q.error("UpdateTable", {"TableName": "Flat", "AttributeDefinitions": [5],
                                "GlobalSecondaryIndexUpdates": [create]})
    assert (e.type, e.message) == ("SerializationException", "Unexpected value type in payload")
    for defs_, text in (([{"AttributeName": "c", "AttributeType": "X"}], "enum value set"),
                        ([{"AttributeType": "N"}], "attributeName"),
                        ([{"AttributeName": "c"}], "attributeType")):
        e = q.error("UpdateTable", {"TableName": "Flat", "AttributeDefinitions": defs_,
                                    "GlobalSecondaryIndexUpdates": [create]})
        assert e.type == "ValidationException" and text in e.message, (defs_, e.message)
    assert "GlobalSecondaryIndexes" not in q.call("DescribeTable", {"TableName": "Flat"})["Table"]
