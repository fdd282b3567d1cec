"""PartiQL through `quarry call`: ExecuteStatement (SELECT as Query or Scan, INSERT, UPDATE,
DELETE, paging with NextToken), BatchExecuteStatement (per-statement results and errors) and
ExecuteTransaction (all or nothing, EXISTS, DuplicateItem), with DynamoDB's error types."""
import base64
import json

import pytest

T = "Music"


@pytest.fixture
def t(q):
    q.create(T, pk=("Artist", "S"), sk=("Song", "S"))
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


def get(q, artist, song):
    return q.call("GetItem", {"TableName": T, "Key": {"Artist": {"S": artist}, "Song": {"S": song}},
                              "ConsistentRead": True}).get("Item")


def s(v):
    return {"S": v}


def n(v):
    return {"N": str(v)}


def songs(resp):
    return sorted(i["Song"]["S"] for i in resp["Items"])


def seed(q, artist, count, **extra):
    q.batch_put(T, [dict({"Artist": s(artist), "Song": s("s%02d" % i), "n": n(i)}, **extra) for i in range(count)])


def test_insert_every_literal_type_and_read_it_back(t):
    b = base64.b64encode(b"\x00\xff").decode()
    r = ex(t, "INSERT INTO \"Music\" VALUE {'Artist': 'Acme', 'Song': 'It''s', 'year': 2020, 'neg': -1.50, "
              "'exp': 1e3, 'ok': TRUE, 'no': false, 'nil': NULL, 'list': [1, 'a', [true]], "
              "'map': {'k': {'deep': 'v'}}, 'ss': <<'x', 'y'>>, 'ns': <<1, 2>>, 'bin': ?, 'bs': <<?, ?>>}",
           [{"B": b}, {"B": b}, {"B": "AQ=="}])
    assert r == {"Items": []}
    item = get(t, "Acme", "It's")
    assert item["year"] == n(2020) and item["neg"] == n("-1.5") and item["exp"] == n(1000)
    assert item["ok"] == {"BOOL": True} and item["no"] == {"BOOL": False} and item["nil"] == {"NULL": True}
    assert item["list"] == {"L": [n(1), s("a"), {"L": [{"BOOL": True}]}]}
    assert item["map"] == {"M": {"k": {"M": {"deep": s("v")}}}}
    assert sorted(item["ss"]["SS"]) == ["x", "y"] and sorted(item["ns"]["NS"]) == ["1", "2"]
    assert item["bin"] == {"B": b} and sorted(item["bs"]["BS"]) == sorted([b, "AQ=="])
    got = ex(t, "SELECT * FROM Music WHERE Artist = ? AND Song = ?", [s("Acme"), s("It's")])
    assert got["Items"] == [item]


def test_insert_of_an_existing_item_is_a_duplicate(t):
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'b', 'v': 1}")
    e = ex_err(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'b', 'v': 2}")
    assert (e.type, e.message) == ("DuplicateItemException", "Duplicate primary key exists in table")
    assert get(t, "a", "b")["v"] == n(1)


def test_insert_refusals(t):
    e = ex_err(t, "INSERT INTO Music VALUE {'Artist': 'a'}")
    assert e.type == "ValidationException" and "Missing the key Song" in e.message
    e = ex_err(t, "INSERT INTO Music VALUE [1, 2]")
    assert e.message.startswith("Unsupported format in item expression")
    e = ex_err(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'b'} RETURNING ALL NEW *")
    assert e.message == "RETURNING is not supported in INSERT"
    e = ex_err(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Artist': 'b', 'Song': 'c'}")
    assert e.message.startswith("Duplicate keys in tuple")
    e = ex_err(t, "INSERT INTO Nope VALUE {'Artist': 'a', 'Song': 'b'}")
    assert (e.type, e.message) == ("ResourceNotFoundException", "Requested resource not found")


def test_parameters_and_syntax_errors(t):
    e = ex_err(t, "SELECT * FROM Music WHERE Artist = ?")
    assert e.message == "Number of parameters in request and statement don't match."
    e = ex_err(t, "SELECT * FROM Music WHERE Artist = ?", [s("a"), s("b")])
    assert e.message == "Number of parameters in request and statement don't match."
    e = ex_err(t, "SELECT * FROM Music WHERE Artist = ?", [])
    assert "Member must have length greater than or equal to 1" in e.message
    e = ex_err(t, "SELECT * FROM Music WHERE Artist = ?", [{"N": "abc"}])
    assert e.type == "ValidationException"
    for bad in ["SELEC * FROM Music", "SELECT * FROM", "SELECT * FROM Music WHERE", "SELECT * FROM Music WHERE a = 'x",
                "SELECT * FROM Music WHERE a == 1", "SELECT * FROM Music WHERE (a = 1", "SELECT * FROM Music WHERE a = 1 #",
                "UPDATE Music WHERE Artist = 'a'", "DELETE Music WHERE Artist = 'a'"]:
        e = ex_err(t, bad)
        assert e.type == "ValidationException", bad
        assert e.message.startswith("Statement wasn't well formed, can't be processed: "), (bad, e.message)
    e = ex_err(t, "SELECT * FROM Music; SELECT * FROM Music")
    assert e.message == "Only one operation is allowed in a statement."
    e = t.error("ExecuteStatement", {})
    assert "Value null at 'statement'" in e.message
    e = ex_err(t, "x" * 8193)
    assert "Member must have length less than or equal to 8192" in e.message
    e = ex_err(t, "SELECT * FROM Music WHERE a IS MISSING AND b = MISSING")
    assert e.message == "MISSING must be compared using IS operator"


def test_select_query_scan_and_conditions(t):
    seed(t, "A", 6)
    seed(t, "B", 3, tag=s("hot"))
    ex(t, "INSERT INTO Music VALUE {'Artist': 'C', 'Song': 'x', 'nested': {'list': [10, 20]}, 'nil': null}")
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist = 'A'")) == ["s%02d" % i for i in range(6)]
    assert songs(ex(t, "SELECT * FROM Music WHERE 'A' = Artist AND Song BETWEEN 's01' AND 's03'")) == ["s01", "s02", "s03"]
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist = 'A' AND Song < 's02'")) == ["s00", "s01"]
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist = 'A' AND begins_with(Song, 's0') AND n >= 4")) == ["s04", "s05"]
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist = 'A' AND Song > 's01' AND Song <= 's03'")) == ["s02", "s03"]
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist IN ['A', 'B'] AND n = 1")) == ["s01", "s01"]
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist = 'A' OR Artist = 'B'")) == sorted(
        ["s%02d" % i for i in range(6)] + ["s00", "s01", "s02"])
    assert songs(ex(t, "SELECT * FROM Music WHERE tag = 'hot' AND NOT n = 0")) == ["s01", "s02"]
    assert songs(ex(t, "SELECT * FROM Music WHERE tag IS MISSING AND n <> 0 AND n IN (1, 5)")) == ["s01", "s05"]
    assert songs(ex(t, "SELECT * FROM Music WHERE nil IS NULL")) == ["x"]
    # ("list" is a PartiQL keyword: after a dot it must be quoted)
    assert songs(ex(t, 'SELECT * FROM Music WHERE nested."list"[1] = 20 AND size(nested."list") = 2')) == ["x"]
    assert songs(ex(t, 'SELECT * FROM Music WHERE attribute_type(nested, \'M\') AND contains(nested."list", 10)')) == ["x"]
    assert songs(ex(t, "SELECT * FROM Music WHERE (n = 1 OR n = 2) AND Artist = 'A'")) == ["s01", "s02"]
    r = ex(t, 'SELECT Song, nested."list"[0] FROM Music WHERE Artist = \'C\'')
    assert r["Items"] == [{"Song": s("x"), "_2": n(10)}]
    r = ex(t, "SELECT Song FROM Music WHERE Artist = 'A' AND Song >= 's03' ORDER BY Song DESC")
    assert [i["Song"]["S"] for i in r["Items"]] == ["s05", "s04", "s03"]
    assert len(ex(t, "SELECT * FROM Music")["Items"]) == 10
    # more conditions on key attributes than a key condition holds: still one partition, in order
    r = ex(t, "select n from Music where Artist = 'A' and Song > 's01' and Song < 's04' order by Song desc")
    assert r["Items"] == [{"n": n(3)}, {"n": n(2)}]
    r = ex(t, "SELECT Song FROM Music WHERE Artist = 'A' AND (Song = 's01' OR n = 3) AND Song <> 's05'")
    assert r["Items"] == [{"Song": s("s01")}, {"Song": s("s03")}]
    assert songs(ex(t, "SELECT * FROM Music WHERE Artist = 'A' AND BEGINS_WITH(Song, 's0') AND Artist <> 'B'")) == \
        ["s%02d" % i for i in range(6)]
    e = ex_err(t, "SELECT * FROM Music WHERE n = 1 ORDER BY Song")
    assert e.message.startswith("Must have at least one non-optional hash key condition")
    e = ex_err(t, "SELECT * FROM Music WHERE Artist = 'A' ORDER BY n")
    assert e.message == "Variable reference n in ORDER BY clause must be part of the primary key"
    e = ex_err(t, "SELECT *, Song FROM Music")
    assert e.message == "Other attributes should not be present in the projection when '*' is used."
    e = ex_err(t, "SELECT * FROM Nope WHERE Artist = 'a'")
    assert e.type == "ResourceNotFoundException"


def test_names_that_need_quoting_and_reserved_words(t):
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'b', 'odd name.x-y': 1, 'size': 2, 'year': 3}")
    r = ex(t, "SELECT \"odd name.x-y\", \"size\", year FROM Music WHERE \"odd name.x-y\" = 1 AND year = 3")
    assert r["Items"] == [{"odd name.x-y": n(1), "size": n(2), "year": n(3)}]
    ex(t, "UPDATE Music SET \"odd name.x-y\" = \"odd name.x-y\" + 1 WHERE Artist = 'a' AND Song = 'b'")
    assert get(t, "a", "b")["odd name.x-y"] == n(2)


def test_paging_with_limit_and_next_token(t):
    seed(t, "A", 7)
    seed(t, "B", 5)
    for stmt, want in [("SELECT * FROM Music", 12), ("SELECT * FROM Music WHERE Artist = 'A'", 7),
                       ("SELECT * FROM Music WHERE Artist IN ['A', 'B', 'Z']", 12)]:
        seen, token, pages = [], None, 0
        while True:
            kw = {"Limit": 3}
            if token:
                kw["NextToken"] = token
            r = ex(t, stmt, **kw)
            pages += 1
            assert len(r["Items"]) <= 3
            seen += [(i["Artist"]["S"], i["Song"]["S"]) for i in r["Items"]]
            token = r.get("NextToken")
            if not token:
                break
            assert pages < 20
        assert len(seen) == want and len(set(seen)) == want, stmt
        assert pages >= want // 3
    token = ex(t, "SELECT * FROM Music", Limit=2)["NextToken"]
    e = ex_err(t, "SELECT * FROM Music WHERE n > 0", Limit=2, NextToken=token)
    assert e.message == "NextToken does not match request"
    for bad in ["garbage!", base64.b64encode(b"{}").decode(), base64.b64encode(b"[1]").decode()]:
        assert ex_err(t, "SELECT * FROM Music", NextToken=bad).message == "Invalid NextToken"


def test_select_from_an_index(q):
    q.call("CreateTable", {
        "TableName": T, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "Artist", "AttributeType": "S"},
                                 {"AttributeName": "Song", "AttributeType": "S"},
                                 {"AttributeName": "genre", "AttributeType": "S"},
                                 {"AttributeName": "n", "AttributeType": "N"}],
        "KeySchema": [{"AttributeName": "Artist", "KeyType": "HASH"}, {"AttributeName": "Song", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "byGenre", "Projection": {"ProjectionType": "ALL"},
                                    "KeySchema": [{"AttributeName": "genre", "KeyType": "HASH"},
                                                  {"AttributeName": "n", "KeyType": "RANGE"}]}]})
    seed(q, "A", 5, genre=s("rock"))
    seed(q, "B", 2, genre=s("jazz"))
    r = ex(q, "SELECT Song, n FROM \"Music\".\"byGenre\" WHERE genre = 'rock' AND n > 2 ORDER BY n DESC")
    assert [i["n"]["N"] for i in r["Items"]] == ["4", "3"]
    assert len(ex(q, "SELECT * FROM Music.byGenre WHERE n < 1")["Items"]) == 2
    e = ex_err(q, "SELECT * FROM Music.nope WHERE genre = 'rock'")
    assert e.type == "ValidationException"


def test_update_forms_and_conditions(t):
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'b', 'plays': 1, 'l': [1], 'tags': <<'x', 'y'>>, 'gone': 1, "
          "'m': {}}")
    r = ex(t, "UPDATE Music SET plays = plays + 2 SET l = list_append(l, [2, 3]) SET tags = set_delete(tags, <<'x'>>) "
              "REMOVE gone SET m.k = 'v' WHERE Artist = 'a' AND Song = 'b' RETURNING MODIFIED OLD *")
    old = r["Items"][0]
    assert sorted(old["tags"]["SS"]) == ["x", "y"]
    del old["tags"]
    assert old == {"plays": n(1), "l": {"L": [n(1)]}, "gone": n(1)}
    item = get(t, "a", "b")
    assert item["plays"] == n(3) and item["l"] == {"L": [n(1), n(2), n(3)]} and item["tags"] == {"SS": ["y"]}
    assert "gone" not in item and item["m"] == {"M": {"k": s("v")}}
    r = ex(t, "UPDATE Music SET plays = plays - 1, x = ? WHERE Artist = 'a' AND Song = 'b' AND plays = 3 "
              "RETURNING MODIFIED NEW *", [{"L": [s("p")]}])
    assert r["Items"] == [{"plays": n(2), "x": {"L": [s("p")]}}]
    assert ex(t, "UPDATE Music SET q = 1 WHERE Artist = 'a' AND Song = 'b'") == {"Items": []}
    e = ex_err(t, "UPDATE Music SET q = 2 WHERE Artist = 'a' AND Song = 'b' AND plays > 10",
               ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert e.type == "ConditionalCheckFailedException"
    assert e.body["Item"]["plays"] == n(2)
    e = ex_err(t, "UPDATE Music SET q = 1 WHERE Artist = 'a' AND Song = 'missing'")
    assert e.type == "ConditionalCheckFailedException"
    assert get(t, "a", "missing") is None
    e = ex_err(t, "UPDATE Music SET q = 1 WHERE Artist = 'a'")
    assert e.message == "Where clause does not contain a mandatory equality on all key attributes"
    e = ex_err(t, "UPDATE Music SET q = 1 WHERE Artist = 'a' OR Song = 'b'")
    assert e.message == "Where clause does not contain a mandatory equality on all key attributes"
    e = ex_err(t, "UPDATE Music SET q = 1")
    assert e.message == "Where clause does not contain a mandatory equality on all key attributes"
    e = ex_err(t, "UPDATE Music SET Song = 'c' WHERE Artist = 'a' AND Song = 'b'")
    assert "part of the key" in e.message
    e = ex_err(t, "UPDATE Music SET tags = set_add(other, <<'z'>>) WHERE Artist = 'a' AND Song = 'b'")
    assert e.message.startswith("The first argument to SET_ADD must equal the assignment value at 1:")
    e = ex_err(t, "UPDATE Music SET tags = set_add(tags, 'z') WHERE Artist = 'a' AND Song = 'b'")
    assert e.message.startswith("The second argument to SET_ADD must be a value with type SET at 1:")
    e = ex_err(t, "UPDATE Music SET a = 1 WHERE Artist = 'a' AND Song = 'b' RETURNING ALL NEW")
    assert e.message == "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"
    e = ex_err(t, "UPDATE \"Music\".\"idx\" SET a = 1 WHERE Artist = 'a' AND Song = 'b'")
    assert e.message == "This operation is not supported on an index"


def test_delete(t):
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'b', 'v': 1}")
    e = ex_err(t, "DELETE FROM Music WHERE Artist = 'a' AND Song = 'b' AND v = 2")
    assert e.type == "ConditionalCheckFailedException"
    assert get(t, "a", "b") is not None
    assert ex(t, "DELETE FROM Music WHERE Artist = 'a' AND Song = 'nothing' AND v = 2") == {"Items": []}
    r = ex(t, "DELETE FROM Music WHERE Artist = 'a' AND Song = 'b' AND v = 1 RETURNING ALL OLD *")
    assert r["Items"] == [{"Artist": s("a"), "Song": s("b"), "v": n(1)}]
    assert get(t, "a", "b") is None
    assert ex(t, "DELETE FROM Music WHERE Artist = 'a' AND Song = 'b'") == {"Items": []}
    e = ex_err(t, "DELETE FROM Music WHERE Artist = 'a'")
    assert e.message == "Where clause does not contain a mandatory equality on all key attributes"
    e = ex_err(t, "DELETE FROM Music WHERE Artist = 'a' AND Song = 'b' RETURNING ALL NEW *")
    assert "Only RETURNING ALL OLD * is allowed in DELETE statements." in e.message
    e = ex_err(t, "DELETE FROM Music WHERE Artist = 'a' AND Song = 'b' AND Song = 'c'")
    assert e.message.startswith("Multiple conditions on same key Song")


def test_batch_writes_report_each_statement(t):
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'dup'}")
    r = t.call("BatchExecuteStatement", {"Statements": [
        {"Statement": "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'new', 'v': 1}"},
        {"Statement": "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'dup'}"},
        {"Statement": "UPDATE Music SET v = ? WHERE Artist = 'a' AND Song = 'dup'", "Parameters": [n(5)]},
        {"Statement": "UPDATE Music SET v = 1 WHERE Artist = 'a' AND Song = 'none'"},
        {"Statement": "DELETE FROM Music WHERE Artist = 'a'"},
        {"Statement": "DELETE FROM Nope WHERE Artist = 'a' AND Song = 'b'"},
        {"Statement": "INSERT INTO"},
    ]})["Responses"]
    assert len(r) == 7
    assert r[0] == {"TableName": T}
    assert r[1]["Error"] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert r[2] == {"TableName": T}
    assert r[3]["Error"]["Code"] == "ConditionalCheckFailed"
    assert r[4]["Error"]["Code"] == "ValidationError"
    assert r[4]["Error"]["Message"] == "Where clause does not contain a mandatory equality on all key attributes"
    assert r[5]["Error"]["Code"] == "ResourceNotFound"
    assert r[6]["Error"]["Code"] == "ValidationError" and "TableName" not in r[6]
    assert get(t, "a", "new")["v"] == n(1) and get(t, "a", "dup")["v"] == n(5)


def test_batch_reads(t):
    seed(t, "a", 3)
    r = t.call("BatchExecuteStatement", {"ReturnConsumedCapacity": "TOTAL", "Statements": [
        {"Statement": "SELECT Song FROM Music WHERE Artist = 'a' AND Song = ?", "Parameters": [s("s01")]},
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a' AND Song = 's09'", "ConsistentRead": True},
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a' AND Song = 's02' AND n = 5"},
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a'"},
        {"Statement": "SELECT * FROM Music.idx WHERE Artist = 'a' AND Song = 's01'"},
        {"Statement": "EXISTS(SELECT * FROM Music WHERE Artist = 'a' AND Song = 's01')"},
    ]})
    res = r["Responses"]
    assert res[4]["Error"] == {"Code": "ValidationError", "Message": "Select statements within BatchExecuteStatement "
                                                                     "must specify the primary key in the where clause."}
    assert res[5]["Error"]["Message"] == "EXISTS can only be used in ExecuteTransaction write requests."
    assert res[0] == {"TableName": T, "Item": {"Song": s("s01")}}
    assert res[1] == {"TableName": T}
    # a condition beside the key equalities makes the member no GetItem: refused
    assert res[2] == {"Error": {"Code": "ValidationError", "Message": "Select statements within BatchExecuteStatement "
                                                                      "must specify the primary key in the where clause."}}
    assert res[3]["Error"]["Code"] == "ValidationError"
    assert r["ConsumedCapacity"][0]["TableName"] == T and r["ConsumedCapacity"][0]["CapacityUnits"] > 0


def test_batch_request_checks(t):
    e = t.error("BatchExecuteStatement", {"Statements": [
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a' AND Song = 'b'"},
        {"Statement": "DELETE FROM Music WHERE Artist = 'a' AND Song = 'b'"}]})
    assert e.type == "ValidationException"
    e = t.error("BatchExecuteStatement", {"Statements": [{"Statement": "SELECT * FROM Music"}] * 26})
    assert "Member must have length less than or equal to 25" in e.message
    e = t.error("BatchExecuteStatement", {"Statements": []})
    assert "Member must have length greater than or equal to 1" in e.message
    e = t.error("BatchExecuteStatement", {})
    assert "Value null at 'statements'" in e.message
    e = t.error("BatchExecuteStatement", {"Statements": [{}]})
    assert "Value null at 'statements.1.member.statement'" in e.message


def test_transaction_writes_all_or_nothing(t):
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'acct', 'bal': 10}")
    ex(t, "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'rules', 'max': 10}")
    stmts = [
        {"Statement": "UPDATE Music SET bal = bal - 5 WHERE Artist = 'a' AND Song = 'acct' AND bal >= 5"},
        {"Statement": "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'log1', 'amt': 5}"},
        {"Statement": "EXISTS(SELECT * FROM Music WHERE Artist = 'a' AND Song = 'rules' AND max > 100)"},
    ]
    e = t.error("ExecuteTransaction", {"TransactStatements": stmts})
    assert e.type == "TransactionCanceledException"
    assert [r["Code"] for r in e.body["CancellationReasons"]] == ["None", "None", "ConditionalCheckFailed"]
    assert get(t, "a", "acct")["bal"] == n(10) and get(t, "a", "log1") is None
    stmts[2] = {"Statement": "EXISTS(SELECT * FROM Music WHERE Artist = ? AND Song = 'rules' AND max = 10)",
                "Parameters": [s("a")]}
    assert t.call("ExecuteTransaction", {"TransactStatements": stmts, "ClientRequestToken": "tok-1"}) == {"Responses": []}
    assert get(t, "a", "acct")["bal"] == n(5) and get(t, "a", "log1")["amt"] == n(5)
    stmts = [{"Statement": "INSERT INTO Music VALUE {'Artist': 'a', 'Song': 'log1'}"},
             {"Statement": "DELETE FROM Music WHERE Artist = 'a' AND Song = 'acct'"}]
    e = t.error("ExecuteTransaction", {"TransactStatements": stmts})
    reasons = e.body["CancellationReasons"]
    assert reasons[0] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert reasons[1] == {"Code": "None"}
    assert "[DuplicateItem, None]" in e.message
    assert get(t, "a", "acct") is not None


def test_transaction_reads_and_refusals(t):
    seed(t, "a", 2)
    r = t.call("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT n FROM Music WHERE Artist = 'a' AND Song = 's01'"},
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a' AND Song = 'zz'"},
    ]})
    assert r["Responses"] == [{"Item": {"n": n(1)}}, {}]
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a' AND Song = 's00' AND n = 7"}]})
    assert e.message == ("Validation failed in TransactStatements[0]: Select statements within ExecuteTransaction "
                         "must specify the primary key in the where clause.")
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT * FROM Music WHERE Artist = 'a' AND Song = 's01'"},
        {"Statement": "DELETE FROM Music WHERE Artist = 'a' AND Song = 's01'"}]})
    assert e.type == "ValidationException"
    e = t.error("ExecuteTransaction", {"TransactStatements": [{"Statement": "SELECT * FROM Music WHERE Artist = 'a'"}]})
    assert e.message == ("Validation failed in TransactStatements[0]: Select statements within ExecuteTransaction "
                         "must specify the primary key in the where clause.")
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "SELECT * FROM Music.idx WHERE Artist = 'a' AND Song = 'b'"}]})
    assert e.message == "Validation failed in TransactStatements[0]: Reads on indices are not supported within transactions."
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "UPDATE Music SET x = 1 WHERE Artist = 'a' AND Song = 's01'"},
        {"Statement": "DELETE FROM Music WHERE Artist = 'a' AND Song = 's01'"}]})
    assert e.type == "ValidationException" and "multiple operations on one item" in e.message
    e = t.error("ExecuteTransaction", {"TransactStatements": []})
    assert "Member must have length greater than or equal to 1" in e.message
    e = ex_err(t, "EXISTS(SELECT * FROM Music WHERE Artist = 'a' AND Song = 'b')")
    assert e.message == "EXISTS can only be used in ExecuteTransaction write requests."


def test_consumed_capacity(t):
    seed(t, "a", 3)
    r = ex(t, "SELECT * FROM Music WHERE Artist IN ['a', 'b']", ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["TableName"] == T and r["ConsumedCapacity"]["CapacityUnits"] > 0
    r = ex(t, "UPDATE Music SET v = 1 WHERE Artist = 'a' AND Song = 's00'", ReturnConsumedCapacity="TOTAL")
    assert r["ConsumedCapacity"]["CapacityUnits"] >= 1
