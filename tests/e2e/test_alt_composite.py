"""Multi-attribute GSI keys (up to four HASH and four RANGE attributes, GSIs only), end to end.

Checked against ScyllaDB Alternator's composite-key suite and DynamoDB's developer guide
("Multi-attribute key schema"): key schema rules at CreateTable and UpdateTable, backfill,
sparse membership as writes add and remove key attributes, type checks on every write
path, the left-to-right query rules, legacy KeyConditions (DynamoDB accepts them on a
multi-attribute key), filters that name an index key, pagination start keys, and
dropping an index. The rules for a single-attribute key are tested elsewhere."""
import time

import pytest

TABLE = "Matches"
INDEX = "ByTournamentRegion"


def s(v):
    return {"S": v}


def n(v):
    return {"N": str(v)}


def b(v):
    return {"B": v}


def key_schema(hashes, ranges=()):
    return ([{"AttributeName": a, "KeyType": "HASH"} for a in hashes] +
            [{"AttributeName": a, "KeyType": "RANGE"} for a in ranges])


def attr_defs(**types):
    return [{"AttributeName": a, "AttributeType": t} for a, t in types.items()]


def make_table(q, name, index_keys, types, projection="ALL", index=INDEX):
    hashes, ranges = index_keys
    return q.call("CreateTable", {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": attr_defs(id="S", **types),
        "GlobalSecondaryIndexes": [{"IndexName": index, "KeySchema": key_schema(hashes, ranges),
                                    "Projection": {"ProjectionType": projection}}]})


@pytest.fixture
def matches(q):
    """tournament, region (HASH) and round, bracket (RANGE), all strings."""
    make_table(q, TABLE, (["tournament", "region"], ["round", "bracket"]),
               dict(tournament="S", region="S", round="S", bracket="S"))
    return q


def match(mid, tournament="WINTER", region="EU", rnd="R1", bracket="UPPER", **extra):
    item = {"id": s(mid), "tournament": s(tournament), "region": s(region), "round": s(rnd), "bracket": s(bracket)}
    item.update(extra)
    return item


def query(q, expr, values, table=TABLE, index=INDEX, **extra):
    req = {"TableName": table, "IndexName": index, "KeyConditionExpression": expr, "ExpressionAttributeValues": values}
    req.update(extra)
    return q.call("Query", req)


def ids(resp):
    return [it["id"]["S"] for it in resp["Items"]]


PK = {":t": s("WINTER"), ":r": s("EU")}
PK_EXPR = "tournament = :t AND #region = :r"
NAMES = {"#region": "region"}


def wait_active(q, table, index):
    deadline = time.time() + 30
    while time.time() < deadline:
        gsis = q.call("DescribeTable", {"TableName": table})["Table"].get("GlobalSecondaryIndexes", [])
        g = [x for x in gsis if x["IndexName"] == index]
        if g and g[0]["IndexStatus"] == "ACTIVE":
            return
        time.sleep(0.1)
    raise AssertionError(f"index {index} never became ACTIVE")


# ---- key schema rules ----

def test_key_schema_rules_for_multi_attribute_indexes(q):
    many = {f"a{i}": "S" for i in range(5)}
    rejected = [
        (key_schema([f"a{i}" for i in range(5)]), many, "HASH"),
        (key_schema(["a0"], [f"a{i}" for i in range(1, 5)] + ["a5"]), dict(many, a5="S"), "RANGE"),
        (key_schema([], ["a0", "a1"]), many, "HASH"),
        (key_schema(["a0"], ["a1"]) + key_schema(["a2"]), many, "HASH"),
        (key_schema(["a0", "a1"], ["a0"]), many, "KeySchema"),
        (key_schema(["a0", "a1"]), dict(a0="S"), "AttributeDefinitions"),
    ]
    for schema, types, word in rejected:
        e = q.error("CreateTable", {
            "TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "AttributeDefinitions": attr_defs(id="S", **types),
            "GlobalSecondaryIndexes": [{"IndexName": "Idx", "KeySchema": schema,
                                        "Projection": {"ProjectionType": "ALL"}}]})
        assert e.type == "ValidationException", schema
        assert word in e.message, (schema, e.message)
    # Only a GSI takes more than one attribute per key part: not an LSI, not the table.
    e = q.error("CreateTable", {
        "TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": key_schema(["id"], ["c"]), "AttributeDefinitions": attr_defs(id="S", c="S", l="S"),
        "LocalSecondaryIndexes": [{"IndexName": "Local", "KeySchema": key_schema(["id"], ["c", "l"]),
                                   "Projection": {"ProjectionType": "ALL"}}]})
    assert e.type == "ValidationException" and "2" in e.message
    e = q.error("CreateTable", {"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST",
                                "KeySchema": key_schema(["id", "c"]), "AttributeDefinitions": attr_defs(id="S", c="S")})
    assert e.type == "ValidationException"
    assert q.call("ListTables", {})["TableNames"] == []


@pytest.mark.parametrize("schema,message", [
    (key_schema(["a0", "a1", "a2", "a3", "a4"]),
     "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of HASH key "
     "attributes"),
    (key_schema(["a0"], ["a1", "a2", "a3", "a4", "a5"]),
     "One or more parameter values were invalid: The KeySchema exceeds the maximum allowed number of RANGE key "
     "attributes"),
    (key_schema(["a0"], ["a1"]) + key_schema(["a2"]),
     "One or more parameter values were invalid: All HASH key attributes must precede RANGE key attributes in the "
     "KeySchema"),
    (key_schema(["a0", "a1"], ["a0"]), "The KeySchema contains multiple key attributes with the same name"),
    (key_schema(["a0", "a0"]), "The KeySchema contains multiple key attributes with the same name"),
    (key_schema(["a0"], ["a0"]), "Both the Hash Key and the Range Key element in the KeySchema have the same name"),
])
def test_key_schema_messages_are_dynamodbs(q, schema, message):
    e = q.error("CreateTable", {
        "TableName": "Bad", "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        "AttributeDefinitions": attr_defs(id="S", **{f"a{i}": "S" for i in range(6)}),
        "GlobalSecondaryIndexes": [{"IndexName": "Idx", "KeySchema": schema, "Projection": {"ProjectionType": "ALL"}}]})
    assert e.type == "ValidationException" and e.message == message


def test_largest_key_schema_round_trips_in_order(q):
    hashes, ranges = ["h1", "h2", "h3", "h4"], ["r1", "r2", "r3", "r4"]
    types = dict(h1="S", h2="S", h3="S", h4="S", r1="N", r2="S", r3="B", r4="S")
    make_table(q, "Eight", (hashes, ranges), types)
    d = q.call("DescribeTable", {"TableName": "Eight"})["Table"]
    assert d["GlobalSecondaryIndexes"][0]["KeySchema"] == key_schema(hashes, ranges)
    assert sorted(x["AttributeName"] for x in d["AttributeDefinitions"]) == sorted(["id"] + hashes + ranges)
    item = {"id": s("1"), "h1": s("a"), "h2": s("b"), "h3": s("c"), "h4": s("d"),
            "r1": n(10), "r2": s("x"), "r3": b("AQI="), "r4": s("y")}
    q.call("PutItem", {"TableName": "Eight", "Item": item})
    vals = {":h1": s("a"), ":h2": s("b"), ":h3": s("c"), ":h4": s("d"),
            ":r1": n(10), ":r2": s("x"), ":r3": b("AQI="), ":r4": s("y")}
    r = query(q, "h1 = :h1 AND h2 = :h2 AND h3 = :h3 AND h4 = :h4 AND r1 = :r1 AND r2 = :r2 AND r3 = :r3 "
                 "AND r4 = :r4", vals, table="Eight")
    assert r["Items"] == [item]


# ---- adding an index to a table with data ----

def test_update_table_adds_and_backfills_a_multi_attribute_index(q):
    q.create("Live", ("id", "S"), None)
    items = [{"id": s(f"m{i}"), "tournament": s("WINTER"), "region": s("EU"), "round": s(f"R{i}")} for i in range(5)]
    items.append({"id": s("no-region"), "tournament": s("WINTER"), "round": s("R9")})
    q.batch_put("Live", items)
    wide = attr_defs(**{f"a{i}": "S" for i in range(5)})
    e = q.error("UpdateTable", {"TableName": "Live", "AttributeDefinitions": wide,
                                "GlobalSecondaryIndexUpdates": [{"Create": {
                                    "IndexName": "TooWide", "KeySchema": key_schema([f"a{i}" for i in range(5)]),
                                    "Projection": {"ProjectionType": "ALL"}}}]})
    assert e.type == "ValidationException"
    q.call("UpdateTable", {"TableName": "Live",
                           "AttributeDefinitions": attr_defs(tournament="S", region="S", round="S"),
                           "GlobalSecondaryIndexUpdates": [{"Create": {
                               "IndexName": INDEX, "KeySchema": key_schema(["tournament", "region"], ["round"]),
                               "Projection": {"ProjectionType": "ALL"}}}]})
    wait_active(q, "Live", INDEX)
    r = query(q, PK_EXPR, PK, table="Live", ExpressionAttributeNames=NAMES)
    assert ids(r) == [f"m{i}" for i in range(5)]
    assert q.call("Scan", {"TableName": "Live", "IndexName": INDEX, "Select": "COUNT"})["Count"] == 5
    assert q.verify("Live").returncode == 0


# ---- membership and writes ----

def test_item_is_indexed_only_while_every_key_attribute_is_present(matches):
    q = matches
    q.call("PutItem", {"TableName": TABLE, "Item": {"id": s("a"), "tournament": s("WINTER"), "region": s("EU"),
                                                    "round": s("R1")}})
    q.call("PutItem", {"TableName": TABLE, "Item": {"id": s("b"), "tournament": s("WINTER"), "round": s("R1"),
                                                    "bracket": s("UPPER")}})
    assert query(q, PK_EXPR, PK, ExpressionAttributeNames=NAMES)["Items"] == []
    q.call("UpdateItem", {"TableName": TABLE, "Key": {"id": s("a")}, "UpdateExpression": "SET bracket = :v",
                          "ExpressionAttributeValues": {":v": s("LOWER")}})
    assert ids(query(q, PK_EXPR, PK, ExpressionAttributeNames=NAMES)) == ["a"]
    for attr in ["tournament", "round"]:
        q.call("UpdateItem", {"TableName": TABLE, "Key": {"id": s("a")}, "UpdateExpression": f"REMOVE {attr}"})
        assert query(q, PK_EXPR, PK, ExpressionAttributeNames=NAMES)["Items"] == []
        q.call("UpdateItem", {"TableName": TABLE, "Key": {"id": s("a")}, "UpdateExpression": f"SET {attr} = :v",
                              "ExpressionAttributeValues": {":v": s("WINTER" if attr == "tournament" else "R1")}})
        assert ids(query(q, PK_EXPR, PK, ExpressionAttributeNames=NAMES)) == ["a"]
    # Moving the item to another key tuple leaves nothing behind under the old one.
    q.call("UpdateItem", {"TableName": TABLE, "Key": {"id": s("a")}, "UpdateExpression": "SET #region = :r",
                          "ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": {":r": s("US")}})
    assert query(q, PK_EXPR, PK, ExpressionAttributeNames=NAMES)["Items"] == []
    assert ids(query(q, PK_EXPR, dict(PK, **{":r": s("US")}), ExpressionAttributeNames=NAMES)) == ["a"]
    q.call("DeleteItem", {"TableName": TABLE, "Key": {"id": s("a")}})
    assert q.call("Scan", {"TableName": TABLE, "IndexName": INDEX})["Items"] == []
    assert q.verify(TABLE).returncode == 0


def test_every_write_path_checks_each_key_attribute_type(matches):
    q = matches
    mismatch = ("One or more parameter values were invalid: Type mismatch for Index Key {} Expected: S Actual: N "
                "IndexName: " + INDEX)
    for attr in ["region", "bracket"]:
        e = q.error("PutItem", {"TableName": TABLE, "Item": dict(match("x"), **{attr: n(1)})})
        assert (e.type, e.message) == ("ValidationException", mismatch.format(attr))
    e = q.error("PutItem", {"TableName": TABLE, "Item": dict(match("x"), region=s(""))})
    assert e.type == "ValidationException" and "empty string" in e.message and "region" in e.message
    q.call("PutItem", {"TableName": TABLE, "Item": match("x")})
    e = q.error("UpdateItem", {"TableName": TABLE, "Key": {"id": s("x")}, "UpdateExpression": "SET #b = :v",
                               "ExpressionAttributeNames": {"#b": "bracket"},
                               "ExpressionAttributeValues": {":v": n(2)}})
    assert e.message == mismatch.format("bracket")
    # One bad item refuses the whole batch.
    e = q.error("BatchWriteItem", {"RequestItems": {TABLE: [{"PutRequest": {"Item": match("y")}},
                                                            {"PutRequest": {"Item": match("z", round=n(3))}}]}})
    assert e.message == mismatch.format("round")
    assert sorted(it["id"]["S"] for it in q.call("Scan", {"TableName": TABLE})["Items"]) == ["x"]


def test_mixed_type_keys_sort_by_each_attribute_in_turn(q):
    make_table(q, "Mixed", (["player", "season"], ["score", "tag"]), dict(player="S", season="N", score="N", tag="B"))
    scores = [100, 5, -3, 2.5, 1000, 5]
    for i, sc in enumerate(scores):
        q.call("PutItem", {"TableName": "Mixed", "Item": {"id": s(str(i)), "player": s("p"), "season": n(2026),
                                                          "score": n(sc), "tag": b("AQ==" if i else "Ag==")}})
    vals = {":p": s("p"), ":s": n(2026)}
    r = query(q, "player = :p AND season = :s", vals, table="Mixed")
    got = [(float(it["score"]["N"]), it["tag"]["B"]) for it in r["Items"]]
    assert got == [(-3, "AQ=="), (2.5, "AQ=="), (5, "AQ=="), (5, "AQ=="), (100, "Ag=="), (1000, "AQ==")]
    r = query(q, "player = :p AND season = :s", vals, table="Mixed", ScanIndexForward=False)
    assert [float(it["score"]["N"]) for it in r["Items"]] == [1000, 100, 5, 5, 2.5, -3]
    r = query(q, "score > :lo AND season = :s AND player = :p", dict(vals, **{":lo": n(4)}), table="Mixed")
    assert [float(it["score"]["N"]) for it in r["Items"]] == [5, 5, 100, 1000]


# ---- queries ----

def test_query_clauses_may_come_in_any_order(matches):
    q = matches
    q.batch_put(TABLE, [match("a", rnd="R1", bracket="UPPER"), match("b", rnd="R1", bracket="LOWER"),
                        match("c", rnd="R2", bracket="UPPER")])
    vals = dict(PK, **{":rnd": s("R1"), ":br": s("UPPER")})
    for expr in ["bracket = :br AND round = :rnd AND #region = :r AND tournament = :t",
                 "round = :rnd AND tournament = :t AND bracket = :br AND #region = :r"]:
        assert ids(query(q, expr, vals, ExpressionAttributeNames=NAMES)) == ["a"]
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "ExpressionAttributeNames": NAMES,
                          "KeyConditionExpression": PK_EXPR + " AND round > :rnd AND bracket > :br",
                          "ExpressionAttributeValues": vals})
    assert e.message == ("RANGE key attributes round must have equality conditions specified in the query because "
                         "a condition is present on key attribute bracket")
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "ConsistentRead": True, "KeyConditionExpression":
                          PK_EXPR, "ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": PK})
    assert e.message == "Consistent reads are not supported on global secondary indexes"


def test_begins_with_on_a_number_key_attribute(q):
    make_table(q, "Nums", (["player"], ["score", "tag"]), dict(player="S", score="N", tag="S"))
    base = "player = :p AND begins_with(score, :x)"
    e = q.error("Query", {"TableName": "Nums", "IndexName": INDEX, "KeyConditionExpression": base,
                          "ExpressionAttributeValues": {":p": s("p"), ":x": s("1")}})
    assert e.message == "One or more parameter values were invalid: Condition parameter type does not match schema type"
    e = q.error("Query", {"TableName": "Nums", "IndexName": INDEX, "KeyConditionExpression": base,
                          "ExpressionAttributeValues": {":p": s("p"), ":x": n(1)}})
    assert e.message == ("Invalid KeyConditionExpression: Incorrect operand type for operator or function; "
                         "operator or function: begins_with, operand type: N")


def test_legacy_key_conditions_work_on_a_multi_attribute_key(matches):
    q = matches
    q.batch_put(TABLE, [match("a", bracket="A"), match("b", bracket="B"), match("c", bracket="C"),
                        match("d", region="US")])

    def eq(v):
        return {"ComparisonOperator": "EQ", "AttributeValueList": [s(v)]}

    r = q.call("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditions": {
        "tournament": eq("WINTER"), "region": eq("EU"), "round": eq("R1"),
        "bracket": {"ComparisonOperator": "LE", "AttributeValueList": [s("B")]}}})
    assert ids(r) == ["a", "b"]
    r = q.call("Query", {"TableName": TABLE, "IndexName": INDEX,
                         "KeyConditions": {"region": eq("EU"), "tournament": eq("WINTER")}})
    assert ids(r) == ["a", "b", "c"]
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditions": {"tournament": eq("WINTER")}})
    assert e.message == "Query condition missed key schema element: region"
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditions": {
        "tournament": eq("WINTER"), "region": eq("EU"), "bracket": eq("A")}})
    assert e.message == ("RANGE key attributes round must have equality conditions specified in the query because "
                         "a condition is present on key attribute bracket")


def test_filter_may_not_name_any_attribute_of_the_index_key(matches):
    q = matches
    q.batch_put(TABLE, [match("a", colour=s("red")), match("b", colour=s("blue"))])
    for attr in ["region", "bracket"]:
        e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditionExpression": PK_EXPR,
                              "FilterExpression": "#f = :v", "ExpressionAttributeNames": dict(NAMES, **{"#f": attr}),
                              "ExpressionAttributeValues": dict(PK, **{":v": s("x")})})
        assert e.message == ("Filter Expression can only contain non-primary key attributes: Primary key attribute: "
                             + attr)
    r = query(q, PK_EXPR, dict(PK, **{":v": s("a")}), ExpressionAttributeNames=NAMES, FilterExpression="id = :v")
    assert ids(r) == ["a"]
    r = query(q, PK_EXPR, dict(PK, **{":v": s("red")}), ExpressionAttributeNames=NAMES, FilterExpression="colour = :v")
    assert ids(r) == ["a"]


def test_keys_only_projection_returns_table_and_index_keys(q):
    make_table(q, "Slim", (["tournament", "region"], []), dict(tournament="S", region="S"), projection="KEYS_ONLY")
    q.call("PutItem", {"TableName": "Slim", "Item": {"id": s("1"), "tournament": s("W"), "region": s("EU"),
                                                     "notes": s("left out")}})
    r = q.call("Scan", {"TableName": "Slim", "IndexName": INDEX})
    assert r["Items"] == [{"id": s("1"), "tournament": s("W"), "region": s("EU")}]


# ---- pagination ----

def test_pages_resume_from_a_key_naming_every_key_attribute(matches):
    q = matches
    q.batch_put(TABLE, [match(f"m{i}", rnd=f"R{i % 3}", bracket=f"B{i}") for i in range(7)])
    got, start = [], None
    while True:
        extra = {"Limit": 2, "ExpressionAttributeNames": NAMES}
        if start:
            extra["ExclusiveStartKey"] = start
        r = query(q, PK_EXPR, PK, **extra)
        got += ids(r)
        start = r.get("LastEvaluatedKey")
        if not start:
            break
        assert sorted(start) == ["bracket", "id", "region", "round", "tournament"]
    assert len(got) == 7 and len(set(got)) == 7
    page = query(q, PK_EXPR, PK, Limit=1, ExpressionAttributeNames=NAMES)["LastEvaluatedKey"]
    incomplete = {k: v for k, v in page.items() if k != "region"}
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditionExpression": PK_EXPR,
                          "ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": PK,
                          "ExclusiveStartKey": incomplete})
    assert (e.type, e.message) == ("ValidationException", "The provided starting key is invalid")
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditionExpression": PK_EXPR,
                          "ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": PK,
                          "ExclusiveStartKey": dict(page, region=s("US"))})
    assert e.message == "The provided starting key is outside query boundaries based on provided conditions"
    scanned, start = [], None
    while True:
        req = {"TableName": TABLE, "IndexName": INDEX, "Limit": 3}
        if start:
            req["ExclusiveStartKey"] = start
        r = q.call("Scan", req)
        scanned += ids(r)
        start = r.get("LastEvaluatedKey")
        if not start:
            break
    assert sorted(scanned) == sorted(got)


def test_start_key_with_an_attribute_outside_the_keys_is_refused(matches):
    q = matches
    q.batch_put(TABLE, [match("a", bracket="A"), match("b", bracket="B")])
    page = query(q, PK_EXPR, PK, Limit=1, ExpressionAttributeNames=NAMES)["LastEvaluatedKey"]
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditionExpression": PK_EXPR,
                          "ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": PK,
                          "ExclusiveStartKey": dict(page, colour=s("red"))})
    assert (e.type, e.message) == ("ValidationException", "The provided starting key is invalid")


# ---- dropping the index ----

def test_dropping_the_index_drops_its_type_rule(matches):
    q = matches
    q.call("PutItem", {"TableName": TABLE, "Item": match("a")})
    assert q.error("PutItem", {"TableName": TABLE, "Item": dict(match("b"), region=n(7))}).type == "ValidationException"
    q.call("UpdateTable", {"TableName": TABLE, "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": INDEX}}]})
    q.call("PutItem", {"TableName": TABLE, "Item": dict(match("b"), region=n(7))})
    d = q.call("DescribeTable", {"TableName": TABLE})["Table"]
    assert "GlobalSecondaryIndexes" not in d
    assert d["AttributeDefinitions"] == attr_defs(id="S")
    e = q.error("Query", {"TableName": TABLE, "IndexName": INDEX, "KeyConditionExpression": PK_EXPR,
                          "ExpressionAttributeNames": NAMES, "ExpressionAttributeValues": PK})
    assert "does not have the specified index: " + INDEX in e.message
    assert q.verify(TABLE).returncode == 0
