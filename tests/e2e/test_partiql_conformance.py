"""PartiQL as a public conformance suite recorded DynamoDB answering it: a global index
whose key has several HASH or RANGE attributes refused to every SELECT (and where that
refusal sits among the other checks), keywords after a '.' in a path, the key-only rule
for reads in a batch or a transaction, repeated members of a set literal, a call in the
projection, and the words PartiQL's parser gives a statement that stops, or goes on,
where it cannot."""
import pytest

MALFORMED = "Statement wasn't well formed, can't be processed: "
MULTI = ("PartiQL statements cannot be executed on tables with multi-attribute HASH keys or "
         "multi-attribute RANGE keys.")
BATCH_KEY = "Select statements within BatchExecuteStatement must specify the primary key in the where clause."
TXN_KEY = ("Validation failed in TransactStatements[0]: Select statements within ExecuteTransaction must "
           "specify the primary key in the where clause.")


def s(v):
    return {"S": v}


def n(v):
    return {"N": str(v)}


def ex(q, statement, params=None):
    req = {"Statement": statement}
    if params is not None:
        req["Parameters"] = params
    return q.call("ExecuteStatement", req)


def refusal(q, statement, params=None):
    req = {"Statement": statement}
    if params is not None:
        req["Parameters"] = params
    e = q.error("ExecuteStatement", req)
    assert e.type == "ValidationException", (statement, e.message)
    return e.message


@pytest.fixture
def multi(q):
    """Table Multi: key id; index wide (HASH h1, h2; RANGE r1, r2), index narrow (HASH h1, h2;
    RANGE r1), index one (HASH g) and a local index loc (id, l). One item."""
    names = ["id", "sk", "h1", "h2", "r1", "r2", "g", "l"]
    q.call("CreateTable", {
        "TableName": "Multi", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in names],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [
            {"IndexName": "wide", "Projection": {"ProjectionType": "ALL"},
             "KeySchema": [{"AttributeName": "h1", "KeyType": "HASH"}, {"AttributeName": "h2", "KeyType": "HASH"},
                           {"AttributeName": "r1", "KeyType": "RANGE"}, {"AttributeName": "r2", "KeyType": "RANGE"}]},
            {"IndexName": "narrow", "Projection": {"ProjectionType": "ALL"},
             "KeySchema": [{"AttributeName": "h1", "KeyType": "HASH"}, {"AttributeName": "h2", "KeyType": "HASH"},
                           {"AttributeName": "r1", "KeyType": "RANGE"}]},
            {"IndexName": "one", "Projection": {"ProjectionType": "ALL"},
             "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}]}],
        "LocalSecondaryIndexes": [
            {"IndexName": "loc", "Projection": {"ProjectionType": "ALL"},
             "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}]}]})
    q.call("PutItem", {"TableName": "Multi", "Item": {a: s(a + "1") for a in names}})
    return q


def test_a_select_on_an_index_with_several_hash_or_range_attributes_is_refused(multi):
    for index in ("wide", "narrow"):
        for tail in ("WHERE h1 = 'h11'", "WHERE h1 = 'h11' AND h2 = 'h21' AND r1 = 'r11'",
                     "WHERE h1 = 'h11' AND h2 = 'h21' ORDER BY r1 DESC", ""):
            assert refusal(multi, 'SELECT * FROM "Multi"."%s" %s' % (index, tail)) == MULTI
    # ahead of a key of the wrong type, a WHERE on no key and a call in the projection
    assert refusal(multi, 'SELECT * FROM "Multi"."narrow" WHERE h1 = 5') == MULTI
    assert refusal(multi, 'SELECT * FROM "Multi"."narrow" WHERE id = \'id1\'') == MULTI
    assert refusal(multi, 'SELECT COUNT(*) FROM "Multi"."narrow"') == MULTI


def test_the_rest_of_a_table_with_such_an_index_reads_and_writes(multi):
    assert len(ex(multi, "SELECT * FROM Multi WHERE id = 'id1'")["Items"]) == 1
    assert len(ex(multi, 'SELECT * FROM "Multi"."one" WHERE g = \'g1\'')["Items"]) == 1
    assert len(ex(multi, 'SELECT * FROM "Multi"."loc" WHERE id = \'id1\'')["Items"]) == 1
    ex(multi, "INSERT INTO Multi VALUE {'id': 'id2', 'sk': 'x'}")
    ex(multi, "UPDATE Multi SET a = 1 WHERE id = 'id1' AND sk = 'sk1'")
    ex(multi, "DELETE FROM Multi WHERE id = 'none' AND sk = 'x'")
    item = multi.call("GetItem", {"TableName": "Multi", "Key": {"id": s("id1"), "sk": s("sk1")}})["Item"]
    assert item["a"] == n(1)


def test_what_is_reported_ahead_of_the_refusal(multi):
    assert refusal(multi, 'SELECT * FROM "Multi"."narrow" WHERE') == MALFORMED + "Unexpected term"
    assert refusal(multi, 'SELECT * FROM "Multi"."narrow" WHERE h1 = 1e99999999999') == MALFORMED
    assert refusal(multi, 'SELECT * FROM "Multi"."narrow" WHERE h1 = ?', [n("1e99999999999")]) == (
        "The parameter cannot be converted to a numeric value: 1e99999999999")
    # an index that does not exist is that, not the refusal
    assert refusal(multi, 'SELECT * FROM "Multi"."nope"') == "The table does not have the specified index"


def test_in_a_batch_only_the_member_reading_such_an_index_fails(multi):
    r = multi.call("BatchExecuteStatement", {"Statements": [
        {"Statement": 'SELECT * FROM "Multi"."one" WHERE g = \'g1\''},
        {"Statement": 'SELECT * FROM "Multi"."wide" WHERE h1 = \'h11\' AND h2 = \'h21\''},
        {"Statement": "SELECT * FROM Multi WHERE id = 'id1' AND sk = 'sk1'"},
        {"Statement": 'SELECT * FROM "Multi"."gone" WHERE g = \'g1\''},
    ]})["Responses"]
    assert r[0] == {"Error": {"Code": "ValidationError", "Message": BATCH_KEY}}
    assert r[1] == {"Error": {"Code": "ValidationError", "Message": MULTI}}
    assert r[2]["Item"]["id"] == s("id1") and "Error" not in r[2]
    assert r[3] == {"Error": {"Code": "ValidationError", "Message": BATCH_KEY}}


@pytest.fixture
def tab(q):
    q.create("Tab", pk=("pk", "S"), sk=None)
    q.call("PutItem", {"TableName": "Tab", "Item": {
        "pk": s("a"), "ss": {"SS": ["x"]}, "n": n(5), "m": {"M": {"inner": {"SS": ["x"]}, "value": n(1)}}}})
    return q


def test_a_keyword_after_a_dot_is_no_name(tab):
    where = "SELECT * FROM Tab WHERE pk = 'a' AND "
    for cond in ("attribute_exists(m.inner)", "m.value = 1", "m.list = 1", "m.Size > 0"):
        assert refusal(tab, where + cond) == MALFORMED + "Invalid path dot component"
    assert refusal(tab, "UPDATE Tab SET m.inner = set_add(m.inner, <<'y'>>) WHERE pk = 'a'") == (
        MALFORMED + "Invalid path dot component")
    assert refusal(tab, "SELECT m.value FROM Tab WHERE pk = 'a'") == MALFORMED + "Invalid path dot component"
    # quoted, the same words are names; a word PartiQL does not reserve needs no quotes
    assert len(ex(tab, where + 'attribute_exists(m."inner") AND m."value" = 1')["Items"]) == 1
    ex(tab, "UPDATE Tab SET m.\"inner\" = set_add(m.\"inner\", <<'y'>>) WHERE pk = 'a'")
    assert ex(tab, "SELECT m.\"inner\" FROM Tab WHERE pk = 'a'")["Items"] == [{"inner": {"SS": ["x", "y"]}}]
    assert ex(tab, "SELECT * FROM Tab WHERE pk = 'a' AND m.other IS MISSING")["Items"][0]["pk"] == s("a")


def test_a_read_in_a_batch_or_a_transaction_names_the_key_and_nothing_else(tab):
    for extra in ("attribute_exists(ss)", "n = 5", "NOT n = 1", "n IN (5, 6)"):
        st = "SELECT * FROM Tab WHERE pk = 'a' AND " + extra
        r = tab.call("BatchExecuteStatement", {"Statements": [{"Statement": st}]})["Responses"]
        assert r == [{"Error": {"Code": "ValidationError", "Message": BATCH_KEY}}], st
        e = tab.error("ExecuteTransaction", {"TransactStatements": [{"Statement": st}]})
        assert (e.type, e.message) == ("ValidationException", TXN_KEY)
    st = "SELECT n FROM Tab WHERE pk = 'a'"
    assert tab.call("BatchExecuteStatement", {"Statements": [{"Statement": st}]})["Responses"] == [
        {"TableName": "Tab", "Item": {"n": n(5)}}]
    assert tab.call("ExecuteTransaction", {"TransactStatements": [{"Statement": st}]})["Responses"] == [
        {"Item": {"n": n(5)}}]


def test_a_set_literal_that_repeats_a_member(tab):
    assert refusal(tab, "UPDATE Tab SET ss = set_add(ss, <<'x', 'x'>>) WHERE pk = 'a'") == (
        "One or more parameter values were invalid: Input collection [x, x] contains duplicates.")
    assert refusal(tab, "INSERT INTO Tab VALUE {'pk': 'b', 's': <<'q', 'r', 'q'>>}") == (
        "One or more parameter values were invalid: Input collection [q, r, q] contains duplicates.")
    # numbers repeat by value, and their message names no members
    assert refusal(tab, "INSERT INTO Tab VALUE {'pk': 'b', 's': <<1, 2, 1.0>>}") == (
        "Input collection contains duplicates")
    assert refusal(tab, "SELECT * FROM Tab WHERE pk = 'a' AND ss = <<'k', 'k'>>") == (
        "One or more parameter values were invalid: Input collection [k, k] contains duplicates.")
    ex(tab, "INSERT INTO Tab VALUE {'pk': 'b', 's': <<'q', 'Q'>>, 't': <<1, 10>>}")


def test_a_call_in_the_projection_is_refused_with_its_place(tab):
    st = "SELECT COUNT(*) FROM Tab WHERE pk = 'a'"
    assert refusal(tab, st) == "Unexpected path component at 1:8:5"
    st = "SELECT pk, attribute_exists(ss), size(ss) FROM Tab WHERE pk = 'a'"
    assert refusal(tab, st) == "Unexpected path component at 1:%d:16" % (st.index("attribute_exists") + 1)
    r = tab.call("BatchExecuteStatement", {"Statements": [{"Statement": "SELECT count(pk) FROM Tab WHERE pk = 'a'"}]})
    assert r["Responses"] == [{"Error": {"Code": "ValidationError", "Message": "Unexpected path component at 1:8:5"}}]
    assert refusal(tab, "SELECT COUNT(* FROM Tab") == MALFORMED + "unexpected end of statement, expected ')'"


def test_a_statement_that_stops_where_a_term_should_start(tab):
    for st in ("SELECT * FROM Tab WHERE", "SELECT * FROM Tab WHERE;", "SELECT * FROM Tab WHERE NOT",
               "SELECT * FROM Tab WHERE (", "DELETE FROM Tab WHERE", "SELECT * FROM Tab WHERE pk = ,",
               "SELECT * FROM Tab WHERE pk = 'a' AND;", "SELECT * FROM", "SELECT * FROM;"):
        assert refusal(tab, st) == MALFORMED + "Unexpected term", st
    # after an infix operator PartiQL says which side is missing
    for st in ("SELECT * FROM Tab WHERE pk = 'a' AND", "SELECT * FROM Tab WHERE pk = 'a' OR",
               "SELECT * FROM Tab WHERE pk =", "SELECT * FROM Tab WHERE pk = 'a' AND n <",
               "SELECT * FROM Tab WHERE pk = 'a' AND n BETWEEN", "SELECT * FROM Tab WHERE pk IN",
               "UPDATE Tab SET n = n +"):
        assert refusal(tab, st) == MALFORMED + "Missing right-hand side expression of infix operator", st
    assert refusal(tab, "SELECT * FROM Tab WHERE pk = 'a' AND n BETWEEN 1 AND") == (
        MALFORMED + "Expected expression after AND")
    # in a transaction the statement is named; in a batch the member carries it
    e = tab.error("ExecuteTransaction", {"TransactStatements": [{"Statement": "SELECT * FROM Tab WHERE"}]})
    assert e.message == "Validation failed in TransactStatements[0]: " + MALFORMED + "Unexpected term"
    r = tab.call("BatchExecuteStatement", {"Statements": [{"Statement": "SELECT * FROM Tab WHERE"}]})
    assert r["Responses"] == [{"Error": {"Code": "ValidationError", "Message": MALFORMED + "Unexpected term"}}]


def test_operators_and_clauses_where_a_term_should_start(tab):
    for st in ("SELECT * FROM Tab WHERE IS NULL", "SELECT * FROM Tab WHERE pk = LIKE",
               "SELECT * FROM Tab WHERE pk = = 'a'", "SELECT * FROM Tab WHERE pk = 'a' AND OR n = 1"):
        assert refusal(tab, st) == MALFORMED + "Unexpected operator", st
    for st in ("SELECT * FROM Tab WHERE ORDER BY pk", "SELECT * FROM WHERE pk = 'a'",
               "UPDATE Tab SET n = WHERE pk = 'a'"):
        assert refusal(tab, st) == MALFORMED + "Unexpected keyword", st
    for st in ("DELETE FROM", "DELETE FROM   ", "DELETE FROM;", "DELETE FROM WHERE pk = 'a'"):
        assert refusal(tab, st) == MALFORMED + "Expected identifier for simple path", st
    assert refusal(tab, "SELECT * FROM Tab WHERE pk = 'a' AND n IS FOO") == MALFORMED + "Expected type name"
    assert refusal(tab, "SELECT * FROM Tab WHERE pk = 'a' AND n IS INT").startswith(
        "Unsupported data type for IS operator: INT.")


def test_the_from_first_update_takes_its_where_before_the_actions(tab):
    key = "Where clause does not contain a mandatory equality on all key attributes"
    assert refusal(tab, "FROM Tab SET c = 1") == key
    assert refusal(tab, "FROM Tab REMOVE c;") == key
    for st in ("FROM Tab SET c = 1 WHERE pk = 'a'", "FROM Tab SET c = 1 WHERE pk = 'a' SET d = 2"):
        assert refusal(tab, st) == MALFORMED + "Unexpected token after expression", st
    ex(tab, "FROM Tab WHERE pk = 'a' SET c = 1")
    assert ex(tab, "SELECT c FROM Tab WHERE pk = 'a'")["Items"] == [{"c": n(1)}]
