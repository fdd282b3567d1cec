"""Query and Scan through `quarry call`, on the seed models: a chat app and an order store."""
import base64
import random

import pytest


def s(v):
    return {"S": v}


@pytest.fixture
def chat(q):
    """USER#7 holds conversation pointers; THREAD#123 holds messages and members."""
    q.create("Chat", ("PK", "S"), ("SK", "S"))
    items = []
    for i in range(3):
        items.append({"PK": s("USER#7"), "SK": s(f"CONV#2026-03-0{i + 1}T10:00:00Z"), "thread": s(f"THREAD#{120 + i}")})
    for i in range(120):
        items.append({"PK": s("THREAD#123"), "SK": s(f"MSG#2026-03-14T10:{i // 60:02d}:{i % 60:02d}Z"),
                      "body": s(f"message {i}"), "from": s(f"USER#{i % 3}")})
    for u in (7, 8):
        items.append({"PK": s("THREAD#123"), "SK": s(f"MEMBER#USER#{u}"), "role": s("member")})
    q.batch_put("Chat", items)
    return q


def test_last_50_messages(chat):
    r = chat.call("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :t AND begins_with(SK, :m)",
                            "ExpressionAttributeValues": {":t": s("THREAD#123"), ":m": s("MSG#")},
                            "ScanIndexForward": False, "Limit": 50})
    assert r["Count"] == 50
    sks = [it["SK"]["S"] for it in r["Items"]]
    assert sks == sorted(sks, reverse=True)
    assert sks[0] == "MSG#2026-03-14T10:01:59Z"
    assert r["LastEvaluatedKey"] == {"PK": s("THREAD#123"), "SK": s(sks[-1])}


def test_members_and_conversations(chat):
    r = chat.call("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :t AND begins_with(SK, :m)",
                            "ExpressionAttributeValues": {":t": s("THREAD#123"), ":m": s("MEMBER#")}})
    assert [it["SK"]["S"] for it in r["Items"]] == ["MEMBER#USER#7", "MEMBER#USER#8"]
    r = chat.call("Query", {"TableName": "Chat", "KeyConditionExpression": "#p = :u",
                            "ExpressionAttributeNames": {"#p": "PK"}, "ExpressionAttributeValues": {":u": s("USER#7")},
                            "ScanIndexForward": False})
    assert [it["thread"]["S"] for it in r["Items"]] == ["THREAD#122", "THREAD#121", "THREAD#120"]


def test_pagination_both_directions(chat):
    for forward in (True, False):
        seen, start = [], None
        while True:
            req = {"TableName": "Chat", "KeyConditionExpression": "PK = :t AND SK BETWEEN :a AND :b",
                   "ExpressionAttributeValues": {":t": s("THREAD#123"), ":a": s("MSG#2026-03-14T10:00:10Z"),
                                                 ":b": s("MSG#2026-03-14T10:01:10Z")},
                   "ScanIndexForward": forward, "Limit": 7}
            if start:
                req["ExclusiveStartKey"] = start
            r = chat.call("Query", req)
            seen += [it["SK"]["S"] for it in r["Items"]]
            start = r.get("LastEvaluatedKey")
            if not start:
                break
        assert len(seen) == 61
        assert seen == sorted(seen, reverse=not forward)


def test_sort_key_operators(chat):
    def count(expr, values):
        vals = {":t": s("THREAD#123")}
        vals.update(values)
        return chat.call("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :t AND " + expr,
                                   "ExpressionAttributeValues": vals, "Select": "COUNT"})["Count"]
    m = "MSG#2026-03-14T10:00:30Z"
    assert count("SK = :v", {":v": s(m)}) == 1
    # MEMBER#… items sort before MSG#… ones.
    assert count("SK < :v", {":v": s(m)}) == 30 + 2
    assert count("SK <= :v", {":v": s(m)}) == 31 + 2
    assert count("SK > :v", {":v": s(m)}) == 89
    assert count("SK >= :v", {":v": s(m)}) == 90
    assert count("begins_with(SK, :v)", {":v": s("MSG#2026-03-14T10:01")}) == 60


def test_filter_counts_scanned(chat):
    r = chat.call("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :t",
                            "FilterExpression": "#f = :u", "ExpressionAttributeNames": {"#f": "from"},
                            "ExpressionAttributeValues": {":t": s("THREAD#123"), ":u": s("USER#1")},
                            "ReturnConsumedCapacity": "TOTAL"})
    assert r["Count"] == 40
    assert r["ScannedCount"] == 122
    assert r["ConsumedCapacity"]["CapacityUnits"] >= 0.5
    e = chat.error("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :t", "FilterExpression": "SK = :u",
                             "ExpressionAttributeValues": {":t": s("THREAD#123"), ":u": s("x")}})
    assert "Filter Expression can only contain non-primary key attributes" in e.message


def test_order_store(q):
    q.create("Shop", ("PK", "S"), ("SK", "S"))
    items = [{"PK": s("CUSTOMER#123"), "SK": s("METADATA"), "name": s("Ada")}]
    for o in (455, 456, 457):
        items.append({"PK": s("CUSTOMER#123"), "SK": s(f"ORDER#{o}"), "status": s("PENDING")})
        for i in range(1, 4):
            items.append({"PK": s("CUSTOMER#123"), "SK": s(f"ORDER#{o}#ITEM#{i}"), "qty": {"N": str(i)}})
    q.batch_put("Shop", items)
    r = q.call("Query", {"TableName": "Shop", "KeyConditionExpression": "PK = :c AND begins_with(SK, :o)",
                         "ExpressionAttributeValues": {":c": s("CUSTOMER#123"), ":o": s("ORDER#456")}})
    assert [it["SK"]["S"] for it in r["Items"]] == ["ORDER#456", "ORDER#456#ITEM#1", "ORDER#456#ITEM#2", "ORDER#456#ITEM#3"]
    r = q.call("Query", {"TableName": "Shop", "KeyConditionExpression": "PK = :c AND SK = :m",
                         "ExpressionAttributeValues": {":c": s("CUSTOMER#123"), ":m": s("METADATA")}})
    assert r["Items"][0]["name"] == s("Ada")
    r = q.call("Query", {"TableName": "Shop", "KeyConditions": {
        "PK": {"ComparisonOperator": "EQ", "AttributeValueList": [s("CUSTOMER#123")]},
        "SK": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [s("ORDER#457")]}}})
    assert r["Count"] == 4


def test_number_sort_key_order(q):
    q.create("Nums", ("pk", "S"), ("n", "N"))
    values = ["-1E+125", "-100", "-1.5", "-1", "-0.001", "-1E-130", "0", "1E-130", "0.001", "1", "1.5", "2", "10",
              "100", "12345678901234567890123456789012345678", "9.9999999999999999999999999999999999999E+125"]
    shuffled = values[:]
    random.Random(7).shuffle(shuffled)
    q.batch_put("Nums", [{"pk": s("p"), "n": {"N": v}} for v in shuffled])
    r = q.call("Query", {"TableName": "Nums", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": s("p")}})
    from decimal import Decimal
    got = [Decimal(it["n"]["N"]) for it in r["Items"]]
    assert got == sorted(Decimal(v) for v in values)
    r = q.call("Query", {"TableName": "Nums", "KeyConditionExpression": "pk = :p AND n BETWEEN :a AND :b",
                         "ExpressionAttributeValues": {":p": s("p"), ":a": {"N": "-1"}, ":b": {"N": "1"}}})
    assert len(r["Items"]) == 7


def test_binary_sort_key(q):
    q.create("Bins", ("pk", "S"), ("b", "B"))
    raw = [bytes([x]) for x in (0, 1, 127, 128, 255)] + [b"\x01\x00", b"\x01\xff"]
    q.batch_put("Bins", [{"pk": s("p"), "b": {"B": base64.b64encode(x).decode()}} for x in raw])
    r = q.call("Query", {"TableName": "Bins", "KeyConditionExpression": "pk = :p AND begins_with(b, :x)",
                         "ExpressionAttributeValues": {":p": s("p"), ":x": {"B": base64.b64encode(b"\x01").decode()}}})
    assert [base64.b64decode(it["b"]["B"]) for it in r["Items"]] == [b"\x01", b"\x01\x00", b"\x01\xff"]


def test_scan_pages_and_segments(q):
    q.create("Scan1", ("pk", "S"), None)
    q.batch_put("Scan1", [{"pk": s(f"user{i}"), "v": {"N": str(i)}} for i in range(200)])
    seen, start = [], None
    while True:
        req = {"TableName": "Scan1", "Limit": 33}
        if start:
            req["ExclusiveStartKey"] = start
        r = q.call("Scan", req)
        seen += [it["pk"]["S"] for it in r["Items"]]
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    assert sorted(seen) == sorted(f"user{i}" for i in range(200))
    assert len(seen) == 200
    segs = []
    for seg in range(4):
        r = q.call("Scan", {"TableName": "Scan1", "Segment": seg, "TotalSegments": 4})
        segs.append({it["pk"]["S"] for it in r["Items"]})
    assert sum(len(x) for x in segs) == 200
    assert set().union(*segs) == set(seen)
    r = q.call("Scan", {"TableName": "Scan1", "FilterExpression": "v < :ten", "ExpressionAttributeValues": {":ten": {"N": "10"}}})
    assert r["Count"] == 10 and r["ScannedCount"] == 200
    e = q.error("Scan", {"TableName": "Scan1", "Segment": 4, "TotalSegments": 4})
    assert "Segment" in e.message


def test_one_megabyte_pages(q):
    q.create("Big", ("pk", "S"), ("sk", "N"))
    blob = "x" * 100_000
    q.batch_put("Big", [{"pk": s("p"), "sk": {"N": str(i)}, "d": s(blob)} for i in range(25)])
    r = q.call("Query", {"TableName": "Big", "KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": s("p")}})
    assert 10 <= r["Count"] <= 11
    assert "LastEvaluatedKey" in r
    total, start = 0, None
    while True:
        req = {"TableName": "Big", "Select": "COUNT"}
        if start:
            req["ExclusiveStartKey"] = start
        r = q.call("Scan", req)
        total += r["Count"]
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    assert total == 25


def test_query_errors(q):
    q.create("QErr")
    e = q.error("Query", {"TableName": "QErr"})
    assert "KeyConditions or KeyConditionExpression" in e.message
    e = q.error("Query", {"TableName": "QErr", "KeyConditionExpression": "sk = :v", "ExpressionAttributeValues": {":v": s("x")}})
    assert e.type == "ValidationException"
    e = q.error("Query", {"TableName": "QErr", "IndexName": "nope", "KeyConditionExpression": "pk = :v",
                          "ExpressionAttributeValues": {":v": s("x")}})
    assert "does not have the specified index" in e.message
    e = q.error("Query", {"TableName": "QErr", "KeyConditionExpression": "pk = :v", "Limit": 0,
                          "ExpressionAttributeValues": {":v": s("x")}})
    assert "greater than or equal to 1" in e.message


def test_key_values_longer_than_keys_can_be(chat):
    # A key condition's values are held to the stored keys' limits, with GetItem's messages;
    # a 20 KB partition value once got InternalServerError and a 3 KB one an empty answer.
    for n in (2049, 20000):
        e = chat.error("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :p",
                                 "ExpressionAttributeValues": {":p": s("x" * n)}})
        assert e.type == "ValidationException"
        assert "Size of hashkey has exceeded the maximum size limit of2048 bytes" in e.message
    for cond in ("PK = :p AND SK = :s", "PK = :p AND begins_with(SK, :s)", "PK = :p AND SK > :s"):
        e = chat.error("Query", {"TableName": "Chat", "KeyConditionExpression": cond,
                                 "ExpressionAttributeValues": {":p": s("THREAD#123"), ":s": s("m" * 1025)}})
        assert "Aggregated size of all range keys has exceeded the size limit of 1024 bytes" in e.message, cond
    ok = chat.call("Query", {"TableName": "Chat", "KeyConditionExpression": "PK = :p AND SK > :s",
                             "ExpressionAttributeValues": {":p": s("x" * 2048), ":s": s("m" * 1024)}})
    assert ok["Count"] == 0
