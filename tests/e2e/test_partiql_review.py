"""PartiQL, second look: paging that returns every item exactly once, projections of nested
paths, parameters of every type, the limits and exact messages DynamoDB documents for IN,
indexes, BatchExecuteStatement members and ExecuteTransaction, and statements built to
exhaust the parser."""
import base64

import pytest

T = "Tab"


@pytest.fixture
def t(q):
    q.call("CreateTable", {
        "TableName": T, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "N"},
                                 {"AttributeName": "g", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "byG", "Projection": {"ProjectionType": "ALL"},
                                    "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}]})
    return q


def ex(q, statement, params=None, **kw):
    req = dict({"Statement": statement}, **kw)
    if params is not None:
        req["Parameters"] = params
    return q.call("ExecuteStatement", req)


def ex_err(q, statement, params=None, **kw):
    req = dict({"Statement": statement}, **kw)
    if params is not None:
        req["Parameters"] = params
    return q.error("ExecuteStatement", req)


def s(v):
    return {"S": v}


def n(v):
    return {"N": str(v)}


def keys(items):
    return [(i["pk"]["S"], int(i["sk"]["N"])) for i in items]


def all_pages(q, statement, limit=None):
    """Every page of a SELECT; returns the keys in order and the number of calls."""
    got, token, calls = [], None, 0
    while True:
        kw = {} if limit is None else {"Limit": limit}
        if token:
            kw["NextToken"] = token
        r = ex(q, statement, **kw)
        calls += 1
        got += keys(r["Items"])
        token = r.get("NextToken")
        if not token:
            return got, calls
        assert calls < 500


def seed(q, parts=3, per=12):
    items = [{"pk": s("p%d" % p), "sk": n(i), "v": n(i), "tag": s("hit" if i % 5 == 0 else "miss")}
             for p in range(parts) for i in range(per)]
    for i in range(0, len(items), 25):
        q.call("BatchWriteItem", {"RequestItems": {T: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}})
    return items


def test_paging_returns_every_match_exactly_once(t):
    seed(t)
    hits = sorted(("p%d" % p, i) for p in range(3) for i in range(0, 12, 5))
    for limit in (None, 1, 4, 7):
        got, calls = all_pages(t, "SELECT * FROM Tab WHERE tag = 'hit'", limit)
        assert sorted(got) == hits and len(got) == len(set(got))
        if limit:
            assert calls >= 36 // limit
    want = [("p2", i) for i in range(12)] + [("p0", i) for i in range(12)]
    for limit in (None, 1, 5, 12, 13):
        got, _ = all_pages(t, "SELECT * FROM Tab WHERE pk IN ['p2', 'p0', 'p2']", limit)
        assert got == want
    want = [("p1", i) for i in range(11, 2, -1)]
    for limit in (None, 2, 9):
        got, _ = all_pages(t, "SELECT * FROM Tab WHERE pk = 'p1' AND sk > 2 ORDER BY sk DESC", limit)
        assert got == want
    got, _ = all_pages(t, "SELECT * FROM Tab WHERE pk IN ('p0', 'p1') AND v >= 10 ORDER BY sk DESC", 3)
    assert got == [("p0", 11), ("p0", 10), ("p1", 11), ("p1", 10)]


def test_in_on_a_partition_key_takes_at_most_50_values(t):
    seed(t, parts=1, per=2)
    fifty = ", ".join("'p%d'" % i for i in range(50))
    assert len(ex(t, "SELECT * FROM Tab WHERE pk IN [%s]" % fifty)["Items"]) == 2
    e = ex_err(t, "SELECT * FROM Tab WHERE pk IN [%s, 'x']" % fifty)
    assert e.type == "ValidationException" and "at most 50" in e.message
    many = ", ".join(str(i) for i in range(100))
    assert ex(t, "SELECT * FROM Tab WHERE v IN [%s]" % many)["Items"] != []
    e = ex_err(t, "SELECT * FROM Tab WHERE v IN [%s, 100]" % many)
    assert e.type == "ValidationException" and "at most 100" in e.message


def test_projection_names_each_value_by_its_last_path_component(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'm': {'n': {'o': 1}, 'l': ['x', {'y': 'it''s'}]}, "
          "'odd.name': 'q', 'u': 'ünï ☃'}")
    r = ex(t, "SELECT m.n.o, m.l[1].y, m.l[0], \"odd.name\", u, m.absent FROM Tab WHERE pk = 'a'")
    assert r["Items"] == [{"o": n(1), "y": s("it's"), "_3": s("x"), "odd.name": s("q"), "u": s("ünï ☃")}]
    r = ex(t, "SELECT m['n'].o, sk FROM Tab WHERE pk = 'a' AND sk = 1")
    assert r["Items"] == [{"o": n(1), "sk": n(1)}]
    b = t.call("BatchExecuteStatement", {"Statements": [
        {"Statement": "SELECT m.n FROM Tab WHERE pk = 'a' AND sk = 1"}]})
    assert b["Responses"][0]["Item"] == {"n": {"M": {"o": n(1)}}}
    x = t.call("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT m.l[0] FROM Tab WHERE pk = 'a' AND sk = 1"}]})
    assert x["Responses"] == [{"Item": {"_1": s("x")}}]


def test_parameters_of_every_type_round_trip_and_compare(t):
    b = base64.b64encode(b"\x00\x01\xfe").decode()
    params = [s("k"), n("10.50"), {"B": b}, {"BS": [b, "AQ=="]}, {"SS": ["x", ""]}, {"NS": ["1", "2.0"]},
              {"L": [{"NULL": True}, {"BOOL": False}]}, {"M": {"in": {"B": b}}}, {"BOOL": True}, {"NULL": True},
              s("")]
    ex(t, "INSERT INTO Tab VALUE {'pk': ?, 'sk': ?, 'b': ?, 'bs': ?, 'ss': ?, 'ns': ?, 'l': ?, 'm': ?, "
          "'t': ?, 'z': ?, 'e': ?}", params)
    item = ex(t, "SELECT * FROM Tab WHERE pk = 'k' AND sk = 10.5")["Items"][0]
    assert item["b"] == {"B": b} and sorted(item["bs"]["BS"]) == sorted([b, "AQ=="])
    assert sorted(item["ss"]["SS"]) == ["", "x"] and item["e"] == s("")
    assert item["m"] == {"M": {"in": {"B": b}}} and item["t"] == {"BOOL": True} and item["z"] == {"NULL": True}
    for cond, p in (("b = ?", [{"B": b}]), ("m.\"in\" = ?", [{"B": b}]), ("contains(bs, ?)", [{"B": "AQ=="}]),
                    ("sk = 1.05e1", []), ("sk BETWEEN 10.4999 AND 10.5000001", []), ("e = ''", []),
                    ("contains(ns, 2)", []), ("l[1] = false", [])):
        r = ex(t, "SELECT pk FROM Tab WHERE pk = 'k' AND " + cond, p or None)
        assert r["Items"] == [{"pk": s("k")}], cond


def test_index_refusals_in_dynamodb_words(t):
    e = ex_err(t, "SELECT * FROM \"Tab\".\"nope\" WHERE pk = 'a'")
    assert (e.type, e.message) == ("ValidationException", "The table does not have the specified index")
    e = ex_err(t, "SELECT * FROM \"Tab\".\"Tab\"")
    assert e.message == "The table does not have the specified index"
    e = ex_err(t, "SELECT * FROM \"Tab\".\"byG\" WHERE g = 'x'", ConsistentRead=True)
    assert e.message == "Strongly consistent read is not supported on Global Secondary Indexes"
    assert ex(t, "SELECT * FROM \"Tab\".\"byG\" WHERE g = 'x'") == {"Items": []}


def test_a_statement_that_is_no_statement(t):
    e = ex_err(t, "SLECT * FROM Tab")
    assert e.message == "Statement wasn't well formed, can't be processed: Expected data manipulation"


def test_nesting_past_the_bound_is_refused_not_followed(t):
    for statement in ("SELECT * FROM Tab WHERE " + "size(" * 300 + "a" + ")" * 300 + " > 1",
                      "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'm': " + "{'m': " * 300 + "1" + "}" * 301,
                      "SELECT * FROM Tab WHERE " + "NOT (" * 300 + "a = 1" + ")" * 300):
        e = ex_err(t, statement)
        assert e.type == "ValidationException" and "nests more than" in e.message


def test_batch_members_as_dynamodb_answers_them(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'v': 'old'}")
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 2, 'v': 'keep'}")
    r = t.call("BatchExecuteStatement", {"Statements": [
        {"Statement": "UPDATE Tab SET v = 'new' WHERE pk = 'a' AND sk = 1 RETURNING ALL NEW *"},
        {"Statement": "DELETE FROM Tab WHERE pk = 'a' AND sk = 2 RETURNING ALL OLD *"},
        {"Statement": "UPDATE Tab SET w = 1 WHERE pk = 'a' AND sk = 1 AND v = 'wrong'",
         "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        {"Statement": "UPDATE Tab REMOVE nothing WHERE pk = 'a' AND sk = 1 RETURNING MODIFIED NEW *"},
        {"Statement": "DELETE FROM Tab WHERE pk = 'a'"},
        {"Statement": "DELETE FROM Tab WHERE pk = 'a' AND sk = 3 RETURNING MODIFIED OLD *"},
    ]})["Responses"]
    assert r[0] == {"TableName": T, "Item": {"pk": s("a"), "sk": n(1), "v": s("new")}}
    assert r[1] == {"TableName": T, "Item": {"pk": s("a"), "sk": n(2), "v": s("keep")}}
    assert r[2] == {"TableName": T, "Error": {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}}
    assert r[3] == {"TableName": T}
    assert r[4] == {"Error": {"Code": "ValidationError", "Message":
                              "Where clause does not contain a mandatory equality on all key attributes"}}
    assert r[5] == {"Error": {"Code": "ValidationError", "Message":
                              "Invalid returning clause: RETURNING MODIFIED OLD *. Only RETURNING ALL OLD * is "
                              "allowed in DELETE statements."}}
    r = t.call("BatchExecuteStatement", {"Statements": [
        {"Statement": "SELECT * FROM Tab WHERE pk = 'a'"},
        {"Statement": "SELECT * FROM \"Tab\".\"byG\" WHERE g = 'x'"},
        {"Statement": "SELECT v FROM Tab WHERE pk = 'a' AND sk = 1"},
    ]})["Responses"]
    msg = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
    assert r[0] == {"Error": {"Code": "ValidationError", "Message": msg}}
    assert r[1] == {"Error": {"Code": "ValidationError", "Message": msg}}
    assert r[2] == {"TableName": T, "Item": {"v": s("new")}}


def test_transaction_refusals_name_the_statement(t):
    ok = {"Statement": "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1}"}
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        ok, {"Statement": "UPDATE Tab SET v = 1 WHERE pk = 'b' AND sk = 1 RETURNING ALL NEW *"}]})
    assert (e.type, e.message) == (
        "ValidationException",
        "Validation failed in TransactStatements[1]: RETURNING clause is not supported in ExecuteTransaction.")
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT * FROM \"Tab\".\"byG\" WHERE g = 'x'"}]})
    assert e.message == ("Validation failed in TransactStatements[0]: Reads on indices are not supported "
                         "within transactions.")
    assert ex(t, "SELECT * FROM Tab") == {"Items": []}
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "INSERT INTO Tab VALUE {'pk': 'a', 'sk': ?}", "Parameters": [n(i)]} for i in range(101)]})
    assert "Member must have length less than or equal to 100" in e.message
    e = t.error("ExecuteTransaction", {"TransactStatements": [ok, ok]})
    assert "multiple operations on one item" in e.message
    assert ex(t, "SELECT * FROM Tab") == {"Items": []}


def test_statement_length_counts_characters_not_bytes(t):
    head = "SELECT * FROM Tab WHERE v = '"
    fits = head + "☃" * (8192 - len(head) - 1) + "'"
    assert len(fits) == 8192 and len(fits.encode()) > 8192
    assert ex(t, fits) == {"Items": []}
    e = ex_err(t, head + "☃" * (8192 - len(head)) + "'")
    assert "Member must have length less than or equal to 8192" in e.message
    e = ex_err(t, head + "\U0001F600" * 4096 + "'")
    assert "Member must have length less than or equal to 8192" in e.message


def test_an_index_read_names_only_what_the_index_holds(q):
    q.call("CreateTable", {
        "TableName": T, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "N"},
                                 {"AttributeName": "g", "AttributeType": "S"},
                                 {"AttributeName": "l", "AttributeType": "N"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "gInc", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["inc"]}}],
        "LocalSecondaryIndexes": [{"IndexName": "lKeys", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                   "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                 {"AttributeName": "l", "KeyType": "RANGE"}]}]})
    ex(q, "INSERT INTO Tab VALUE {'pk': 'p', 'sk': 1, 'g': 'y', 'l': 5, 'inc': 'i', 'np': 'n'}")
    r = ex(q, "SELECT pk, sk, g, inc FROM \"Tab\".\"gInc\" WHERE g = 'y' AND inc = 'i' AND sk = 1")
    assert r["Items"] == [{"pk": s("p"), "sk": n(1), "g": s("y"), "inc": s("i")}]
    e = ex_err(q, "SELECT pk FROM \"Tab\".\"gInc\" WHERE g = 'y' AND np = 'n'")
    assert (e.type, e.message) == ("ValidationException", "One or more parameter values were invalid: Secondary "
                                   "index gInc does not project one or more filter attributes: [np]")
    e = ex_err(q, "SELECT np FROM \"Tab\".\"gInc\" WHERE g = 'y'")
    assert e.message == "One or more parameter values were invalid: Global secondary index gInc does not project [np]"
    e = ex_err(q, "SELECT * FROM \"Tab\".\"lKeys\" WHERE pk = 'p' AND (np = 'n' OR inc.x[0] = 1 OR np = 'm')")
    assert e.message == ("One or more parameter values were invalid: Secondary index lKeys does not project one or "
                         "more filter attributes: [np, inc]")
    r = ex(q, "SELECT np, l FROM \"Tab\".\"lKeys\" WHERE pk = 'p' AND l = 5")
    assert r["Items"] == [{"np": s("n"), "l": n(5)}]
    # unkeyed, the read scans the index, where the attribute is absent: no refusal, no match
    assert ex(q, "SELECT pk FROM \"Tab\".\"gInc\" WHERE np = 'n'") == {"Items": []}
    assert ex(q, "SELECT pk FROM \"Tab\".\"gInc\" WHERE (g = 'y' AND np = 'n') OR g = 'z'") == {"Items": []}
    r = ex(q, "SELECT sk FROM \"Tab\".\"gInc\" WHERE NOT np = 'n'")
    assert r["Items"] == [{"sk": n(1)}]
    e = ex_err(q, "SELECT pk FROM \"Tab\".\"gInc\" WHERE g IN ['y', 'z'] AND np IS MISSING")
    assert e.message.endswith("does not project one or more filter attributes: [np]")


def test_capacity_of_several_reads_adds_up_in_every_part(t):
    for i in range(4):
        ex(t, "INSERT INTO Tab VALUE {'pk': ?, 'sk': 1, 'g': ?}", [s("p%d" % i), s("g%d" % (i % 2))])
    cc = ex(t, "SELECT * FROM \"Tab\".\"byG\" WHERE g IN ['g0', 'g1']", ReturnConsumedCapacity="INDEXES")[
        "ConsumedCapacity"]
    assert cc["TableName"] == T and cc["CapacityUnits"] == 1.0
    assert cc["GlobalSecondaryIndexes"]["byG"]["CapacityUnits"] == 1.0
    cc = ex(t, "SELECT * FROM Tab WHERE pk IN ['p0', 'p1', 'p2']", ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert cc["CapacityUnits"] == cc["Table"]["CapacityUnits"] == 1.5
    b = t.call("BatchExecuteStatement", {"ReturnConsumedCapacity": "TOTAL", "Statements": [
        {"Statement": "SELECT * FROM Tab WHERE pk = 'p%d' AND sk = 1" % i} for i in range(3)]})
    assert len(b["ConsumedCapacity"]) == 1
    assert b["ConsumedCapacity"][0]["TableName"] == T and b["ConsumedCapacity"][0]["CapacityUnits"] == 1.5
    x = t.call("ExecuteTransaction", {"ReturnConsumedCapacity": "TOTAL", "TransactStatements": [
        {"Statement": "UPDATE Tab SET v = 1 WHERE pk = 'p%d' AND sk = 1" % i} for i in range(2)]})
    assert x["ConsumedCapacity"][0]["TableName"] == T and x["ConsumedCapacity"][0]["CapacityUnits"] > 0


def test_writes_through_an_index_are_refused_each_in_its_own_way(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'g': 'x'}")
    for statement in ("INSERT INTO \"Tab\".\"byG\" VALUE {'pk': 'b', 'sk': 1}",
                      "INSERT INTO \"Tab\".\"nope\" VALUE {'pk': 'b', 'sk': 1}"):
        e = ex_err(t, statement)
        assert e.message.startswith("FROM clause may only contain a single table name")
    for statement in ("UPDATE \"Tab\".\"byG\" SET v = 1 WHERE pk = 'a' AND sk = 1",
                      "DELETE FROM \"Tab\".\"byG\" WHERE pk = 'a' AND sk = 1 RETURNING ALL OLD *"):
        e = ex_err(t, statement)
        assert (e.type, e.message) == ("ValidationException", "This operation is not supported on an index")
    assert ex(t, "SELECT * FROM Tab") == {"Items": [{"pk": s("a"), "sk": n(1), "g": s("x")}]}
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "UPDATE \"Tab\".\"byG\" SET v = 1 WHERE pk = 'a' AND sk = 1"}]})
    assert e.message == "This operation is not supported on an index"


def test_errors_in_translated_expressions_do_not_name_them(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'val': 'x', 'l': [1]}")
    msg = "Incorrect operand type for operator or function; operator or function: %s, operand type: BOOL"
    for op in ("<", "<=", ">", ">="):
        e = ex_err(t, "SELECT pk FROM Tab WHERE pk = 'a' AND val %s ?" % op, [{"BOOL": True}])
        assert (e.type, e.message) == ("ValidationException", msg % op)
    e = ex_err(t, "SELECT pk FROM Tab WHERE val BETWEEN ? AND ?", [{"BOOL": True}, {"BOOL": False}])
    assert e.message == msg % "BETWEEN"
    e = ex_err(t, "UPDATE Tab SET v = 1 WHERE pk = 'a' AND sk = 1 AND val > ?", [{"BOOL": True}])
    assert e.message == msg % ">"
    r = t.call("BatchExecuteStatement", {"Statements": [
        {"Statement": "SELECT pk FROM Tab WHERE pk = 'a' AND sk = 1 AND val < ?", "Parameters": [{"BOOL": True}]}]})
    assert r["Responses"][0]["Error"]["Message"] == msg % "<"
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT pk FROM Tab WHERE pk = 'a' AND sk = 1 AND val >= ?", "Parameters": [{"BOOL": True}]}]})
    assert e.message == msg % ">="


def test_comments_of_both_kinds_are_whitespace(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1}")
    ex(t, "INSERT INTO Tab VALUE {'pk': 'b', 'sk': 1}")
    for statement in ("/* lead */ SELECT pk FROM Tab /* a note */ WHERE pk = 'a' /* trail */",
                      "SELECT pk FROM Tab -- a note\nWHERE /**/ pk = 'a' /* *** */",
                      "SELECT pk FROM Tab WHERE pk = '/* not a comment */' OR pk = 'a' -- end"):
        assert ex(t, statement) == {"Items": [{"pk": s("a")}]}, statement
    for statement in ("SELECT * FROM Tab /* never closed", "SELECT * FROM Tab /*/", "SELECT * FROM Tab # note"):
        e = ex_err(t, statement)
        assert e.type == "ValidationException" and e.message.startswith("Statement wasn't well formed")


def test_a_transaction_of_writes_answers_an_empty_responses_list(t):
    r = t.call("ExecuteTransaction", {"ReturnConsumedCapacity": "TOTAL", "TransactStatements": [
        {"Statement": "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1}"},
        {"Statement": "DELETE FROM Tab WHERE pk = 'never' AND sk = 1"}]})
    assert r["Responses"] == [] and r["ConsumedCapacity"][0]["TableName"] == T
    assert t.call("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "UPDATE Tab SET v = 1 WHERE pk = 'a' AND sk = 1"}]}) == {"Responses": []}


def test_the_from_first_form_of_update(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'x': 1, 'y': 'why', 'ss': <<'a'>>}")
    ex(t, "FROM Tab WHERE pk = 'a' AND sk = 1 SET c = 1")
    r = ex(t, "from \"Tab\" where pk = ? and sk = ? and x = 1 set d = ? remove y set ss = SET_ADD(ss, <<'b'>>) "
              "returning all new *", [s("a"), n(1), n(2)])
    item = r["Items"][0]
    assert item["c"] == n(1) and item["d"] == n(2) and "y" not in item and sorted(item["ss"]["SS"]) == ["a", "b"]
    e = ex_err(t, "FROM Tab WHERE pk = 'a' AND sk = 1 AND x = 2 SET c = 5")
    assert e.type == "ConditionalCheckFailedException"
    e = ex_err(t, "FROM Tab WHERE pk = 'none' AND sk = 1 SET c = 5")
    assert e.type == "ConditionalCheckFailedException"
    assert ex(t, "SELECT * FROM Tab WHERE pk = 'none'") == {"Items": []}
    for statement in ("FROM Tab SET c = 1", "FROM Tab WHERE pk = 'a' SET c = 1", "FROM Tab WHERE x = 1 SET c = 1"):
        e = ex_err(t, statement)
        assert e.message == "Where clause does not contain a mandatory equality on all key attributes", statement
    e = ex_err(t, "FROM Tab WHERE pk = 'a' AND sk = 1")
    assert e.type == "ValidationException"
    r = t.call("BatchExecuteStatement", {"Statements": [{"Statement": "FROM Tab WHERE pk = 'a' AND sk = 1 SET f = 1"}]})
    assert r["Responses"] == [{"TableName": T}]
    t.call("ExecuteTransaction", {"TransactStatements": [{"Statement": "FROM Tab WHERE pk = 'a' AND sk = 1 REMOVE f"}]})
    assert "f" not in ex(t, "SELECT * FROM Tab WHERE pk = 'a'")["Items"][0]


def test_condition_functions_and_type_names_in_where(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'ss': <<'x'>>, 's': 'str', 'm': {'sub': 'x'}, 'nul': NULL, "
          "'flag': TRUE, 'b': ?, 'n': 5, 'l': [1]}", [{"B": "AQ=="}])
    ex(t, "INSERT INTO Tab VALUE {'pk': 'b', 'sk': 1}")

    def hit(cond):
        return [i["pk"]["S"] for i in ex(t, "SELECT pk FROM Tab WHERE pk = 'a' AND " + cond)["Items"]] == ["a"]

    for cond in ("attribute_exists(ss)", "ATTRIBUTE_EXISTS(\"ss\")", "attribute_exists(m.sub)",
                 "attribute_not_exists(nope)", "NOT attribute_exists(nope)", "attribute_exists(ss) = true",
                 "attribute_exists(nope) = FALSE", "attribute_exists(nope) <> true",
                 "(attribute_exists(nope) OR attribute_exists(ss))", "attribute_exists(pk)",
                 "flag IS BOOL", "flag IS BOOLEAN", "s IS STRING", "n IS NUMERIC", "b IS BLOB", "m IS STRUCT",
                 "m IS TUPLE", "l IS LIST", "nul IS NULL", "s IS NOT NULL", "s IS NOT BOOL"):
        assert hit(cond), cond
    for cond in ("attribute_exists(nope)", "attribute_exists(m.nope)", "attribute_not_exists(ss)",
                 "attribute_exists(ss) = false", "s IS BOOL", "nul IS NOT NULL", "nope IS STRING"):
        assert not hit(cond), cond
    assert ex(t, "SELECT pk FROM Tab WHERE attribute_exists(flag)")["Items"] == [{"pk": s("a")}]
    e = ex_err(t, "SELECT pk FROM Tab WHERE s IS DATE")
    assert e.message.startswith("Unsupported data type for IS operator: DATE.")
    ex(t, "UPDATE Tab SET y = 1 WHERE pk = 'b' AND sk = 1 AND attribute_not_exists(y)")
    e = ex_err(t, "UPDATE Tab SET y = 2 WHERE pk = 'b' AND sk = 1 AND attribute_not_exists(y)")
    assert e.type == "ConditionalCheckFailedException"
    e = ex_err(t, "DELETE FROM Tab WHERE pk = 'b' AND sk = 1 AND attribute_exists(nope)")
    assert e.type == "ConditionalCheckFailedException"
    e = ex_err(t, "UPDATE Tab SET z = 1 WHERE pk = 'none' AND sk = 1 AND attribute_not_exists(pk)")
    assert e.type == "ConditionalCheckFailedException"
    assert ex(t, "DELETE FROM Tab WHERE pk = 'b' AND sk = 1 AND attribute_not_exists(nope)") == {"Items": []}
    assert ex(t, "SELECT pk FROM Tab WHERE pk = 'b'") == {"Items": []}


def test_refused_grammar_in_dynamodb_words(q):
    q.call("CreateTable", {"TableName": "TabN", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "N"}],
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    envelope = "Statement wasn't well formed, can't be processed: "
    leftover = envelope + "Unexpected token after expression"
    over = "Number overflow. Attempting to store a number with magnitude larger than supported range"
    under = "Number underflow. Attempting to store a number with magnitude smaller than supported range"
    digits = "Attempting to store more than 38 significant digits in a Number"
    cases = [
        ("SELECT * FROM TabN WHERE pk = 1 foo", leftover),
        ("SELECT * FROM TabN WHERE pk = 1 e5", leftover),
        ("SELECT * FROM TabN WHERE pk = 1)", leftover),
        ("INSERT INTO TabN VALUE {'pk': 1} foo", leftover),
        ("UPDATE TabN SET a = 9 WHERE pk = 2 foo", leftover),
        ("DELETE FROM TabN WHERE pk = 3 ORDER BY pk", leftover),
        ("SELECT * FROM TabN ORDER BY pk WHERE pk = 1", leftover),
        ("INSERT INTO TabN t VALUE {'pk': 1}", leftover),
        ("SELECT * FROM TabN t WHERE pk = 1", "Aliasing is not supported"),
        ("SELECT * FROM TabN AS t WHERE pk = 1", "Aliasing is not supported"),
        ("UPDATE TabN t SET a = 3 WHERE pk = 1", "Aliasing is not supported"),
        ("DELETE FROM TabN t WHERE pk = 1", "Aliasing is not supported"),
        ("SELECT * FROM TabN WHERE pk = 1e2147483648", envelope),
        ("SELECT * FROM TabN WHERE pk = 1e99999999999", envelope),
        ("SELECT * FROM TabN WHERE pk = 1.5e-2147483647", envelope),
        ("SELECT * FROM TabN WHERE pk = 1 # note", envelope),
        ("SELECT * FROM TabN WHERE pk = 1 /* note", envelope),
        ("SELECT * FROM TabN WHERE pk = 'open", envelope),
        ("SELECT * FROM TabN WHERE pk = 1e126", over + " under root"),
        ("SELECT * FROM TabN WHERE pk = 1e-131", under + " under root"),
        ("SELECT * FROM TabN WHERE pk = 123456789012345678901234567890123456789", digits + " under root"),
        ("INSERT INTO TabN VALUE {'pk': 1e126}", over + " under root"),
        ("UPDATE TabN SET a = 1e-131 WHERE pk = 5", under + " under root"),
        ("INSERT INTO TabN VALUE {'pk': 6, 'm': {'x': {'y': 1e126}}}", over + " under root.x.y"),
        ("INSERT INTO TabN VALUE {'pk': 7, 'l': [1, 1e126]}", over + " under root[1]"),
        ("SELECT * FROM TabN WHERE pk IN [1, [{'k': 1e126}]]", over + " under root[0].k"),
        ("SELECT * FROM TabN ORDER BY pk", "Must have WHERE clause in the statement when using ORDER BY clause."),
    ]
    for statement, message in cases:
        e = q.error("ExecuteStatement", {"Statement": statement})
        assert (e.type, e.message) == ("ValidationException", message), statement
    e = q.error("ExecuteStatement", {"Statement": "SELECT * FROM TabN WHERE pk = 1e2147483647"})
    assert e.message == over + " under root"
    assert q.call("Scan", {"TableName": "TabN"})["Items"] == []


def test_exists_needs_a_condition_beyond_the_key(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'v': 1}")
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "UPDATE Tab SET z = 1 WHERE pk = 'b' AND sk = 1"},
        {"Statement": "EXISTS(SELECT * FROM Tab WHERE pk = 'a' AND sk = 1)"}]})
    assert (e.type, e.message) == ("ValidationException", "Validation failed in TransactStatements[1]: EXISTS() must "
                                   "contain a single item read with additional condition")
    t.call("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "INSERT INTO Tab VALUE {'pk': 'b', 'sk': 1}"},
        {"Statement": "EXISTS(SELECT * FROM Tab WHERE pk = 'a' AND sk = 1 AND v = 1)"}]})
    assert len(ex(t, "SELECT * FROM Tab WHERE pk = 'b'")["Items"]) == 1


def deep(depth, leaf):
    for _ in range(depth):
        leaf = {"M": {"n": leaf}}
    return leaf


def test_parameters_that_are_no_numbers_or_nest_too_deep(t):
    cannot = "The parameter cannot be converted to a numeric value"
    nest = "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit"
    statements = ["SELECT * FROM Tab WHERE pk = 'a' AND n = ?", "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'n': ?}",
                  "UPDATE Tab SET n = ? WHERE pk = 'a' AND sk = 1", "SELECT * FROM Tab WHERE pk = 'a' AND sk = ?"]
    for value in ("1e99999999999", "-1e99999999999", "1e-99999999999", "1e2147483648", "1e-2147483648", "abc",
                  "1.5e-2147483647", "1e", "."):
        for statement in statements:
            e = ex_err(t, statement, [{"N": value}])
            assert (e.type, e.message) == ("ValidationException", cannot + ": " + value), (statement, value)
    assert ex_err(t, statements[0], [{"N": ""}]).message == cannot
    for p in ({"L": [n(1), {"N": "1e99999999999"}]}, {"M": {"x": {"N": "1e99999999999"}}},
              {"NS": ["1", "1e99999999999"]}):
        assert ex_err(t, statements[0], [p]).message == cannot + ": 1e99999999999"
    pair = "SELECT * FROM Tab WHERE pk = 'a' AND x = ? AND y = ?"
    assert ex_err(t, pair, [deep(40, s("leaf")), {"N": "abc"}]).message == nest
    assert ex_err(t, pair, [{"N": "abc"}, deep(40, s("leaf"))]).message == cannot + ": abc"
    assert ex_err(t, statements[0], [{"M": {"d": deep(40, s("x")), "bad": {"N": "abc"}}}]).message == nest
    assert ex_err(t, statements[0], [{"M": {"bad": {"N": "abc"}, "d": deep(40, s("x"))}}]).message == cannot + ": abc"
    assert ex_err(t, statements[0], [deep(40, {"N": "abc"})]).message == nest
    for good in ("1e2", "-.5", "5.", "+7E+1", "0.000"):
        ex(t, statements[0], [{"N": good}])
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": statements[2], "Parameters": [{"N": "1e99999999999"}]}]})
    assert e.message == cannot + ": 1e99999999999"
    r = t.call("BatchExecuteStatement", {"Statements": [
        {"Statement": "SELECT * FROM Tab WHERE pk = 'a' AND sk = 1 AND n = ?", "Parameters": [{"N": "1e99999999999"}]},
        {"Statement": "SELECT * FROM Tab WHERE pk = 'a' AND sk = 1 AND n = ?",
         "Parameters": [deep(40, s("x"))]},
        {"Statement": "SELECT * FROM Tab WHERE pk = 'a' AND sk = 1"}]})["Responses"]
    assert r[0] == {"Error": {"Code": "ValidationError", "Message": cannot + ": 1e99999999999"}}
    assert r[1] == {"Error": {"Code": "ValidationError", "Message": nest}}
    assert r[2] == {"TableName": T}


def test_function_refusals_in_dynamodb_words(t):
    ex(t, "INSERT INTO Tab VALUE {'pk': 'a', 'sk': 1, 'ss': <<'a'>>, 's': 'str'}")

    def msg(statement, params=None):
        e = ex_err(t, statement, params)
        assert e.type == "ValidationException", statement
        return e.message

    def pos(statement, token, length=None, start=0):
        return "at 1:%d:%d" % (statement.index(token, start) + 1, length or len(token))

    where = "SELECT * FROM Tab WHERE pk = 'a' AND "
    need_path = "Operator or function requires a document path; operator or function: attribute_exists"
    assert msg(where + "attribute_exists('ss')") == need_path
    assert msg(where + "attribute_exists(?)", [s("ss")]) == need_path
    count = "Incorrect number of operands for operator or function; operator or function: %s, number of operands: %d"
    assert msg(where + "attribute_exists()") == count % ("attribute_exists", 0)
    assert msg(where + "attribute_exists(ss, s)") == count % ("attribute_exists", 2)
    assert msg(where + "begins_with(s)") == count % ("begins_with", 1)
    st = "SELECT attribute_exists(ss) FROM Tab WHERE pk = 'a'"
    assert msg(st) == "Unexpected path component " + pos(st, "attribute_exists")
    st = where + "EXISTS(ss)"
    assert msg(st) == "Unrecognized function: exists " + pos(st, "EXISTS")
    st = where + "set_add(ss, <<'x'>>) = ss"
    assert msg(st) == "Unrecognized function: set_add " + pos(st, "set_add")
    st = "INSERT INTO Tab VALUE {'pk': 'b', 'sk': 1, 'ss': set_add(<<'a'>>, <<'b'>>)}"
    assert msg(st) == "Unsupported data type: set_add under key root " + pos(st, "set_add")
    upd = "UPDATE Tab SET %s WHERE pk = 'a' AND sk = 1"
    st = upd % "t = set_add(ss, <<'x'>>)"
    assert msg(st) == "The first argument to SET_ADD must equal the assignment value " + pos(st, "set_add")
    st = upd % "ss = set_add(<<'a'>>, <<'b'>>)"
    assert msg(st) == "The first argument to SET_ADD must equal the assignment value " + pos(st, "set_add")
    st = upd % "ss = set_add(ss, 'x')"
    assert msg(st) == ("The second argument to SET_ADD must be a value with type SET "
                       + pos(st, "ss", 2, st.index("set_add(")))
    st = upd % "ss = set_delete(ss, ['x'])"
    assert msg(st) == ("The second argument to SET_DELETE must be a value with type SET "
                       + pos(st, "ss", 2, st.index("set_delete(")))
    for args in ("ss", "ss, <<'x'>>, <<'y'>>"):
        st = upd % ("ss = set_add(%s)" % args)
        assert msg(st) == "SET_ADD must have exactly two arguments " + pos(st, "set_add")
    st = "UPDATE Tab\nSET  \"☃\" = 1, ss = set_add(x, <<'a'>>) WHERE pk = 'a' AND sk = 1"
    assert msg(st).endswith(" at 2:%d:7" % (st.split("\n")[1].index("set_add") + 1))
    assert ex(t, "SELECT pk FROM Tab WHERE pk = 'a' AND attribute_exists(ss)")["Items"] == [{"pk": s("a")}]


def test_a_transaction_read_names_the_statement_without_its_key(t):
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT * FROM Tab WHERE pk = 'a' AND sk = 1"},
        {"Statement": "SELECT * FROM Tab WHERE pk = 'a' AND attribute_exists(ss)"}]})
    assert e.message == ("Validation failed in TransactStatements[1]: Select statements within ExecuteTransaction "
                         "must specify the primary key in the where clause.")
