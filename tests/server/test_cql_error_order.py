"""Which error `quarry serve --cql` reports for malformed DML, and in Cassandra 4's words and
codes: a syntax error before anything about the schema; in INSERT and UPDATE, the columns set
and their constant values (column by column) before the key's values and the missing key
parts, as Cassandra prepares them; columns named or set twice; bind values too few or too
many for the markers, over QUERY and EXECUTE (sent raw, as a driver checks the count itself).
Each case names the Cassandra source or test it follows. The run's shared server serves the
module, in keyspace error_order; each test works in its own table. Bound values of the wrong
form are sampled only (every type's check: tests/unit/cql/test_cqlval_value.c)."""
import re

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import ConsistencyLevel, InvalidRequest  # noqa: E402
from cassandra.protocol import (ExecuteMessage, InvalidRequestException,  # noqa: E402
                                PrepareMessage, QueryMessage, SyntaxException)

from cql_raw import Raw  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="error_order")
    yield session
    session.cluster.shutdown()


def error(cql, kind, stmt, prepare=False):
    """The message of the error of type kind that stmt (prepared first when asked) gets."""
    with pytest.raises(kind) as e:
        if prepare:
            cql.prepare(stmt)
        else:
            cql.execute(stmt)
    m = re.search(r'message="(.*)"', str(e.value), re.S)
    assert m, str(e.value)
    return m.group(1)


# ---- values before keys (UpdateStatement.ParsedInsert/ParsedUpdate.prepareInternal prepare
# each column's value before StatementRestrictions checks the key)
def test_a_tuple_string_with_too_many_components_before_the_missing_clustering_key(cql, table):
    # Cassandra's TupleTypeTest.testTupleFromString inserts without the clustering key too
    t = table("(k int, c int, t frozen<tuple<int, text>>, PRIMARY KEY (k, c))")
    too_many = "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3"
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, t) VALUES (1, '1:2:3')" % t) == too_many
    assert error(cql, InvalidRequest, "INSERT INTO %s (c, t) VALUES (1, '1:2:3')" % t) == too_many
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, c, t) VALUES ('x', 1, '1:2:3')" % t) == too_many
    assert error(cql, InvalidRequest, "UPDATE %s SET t = '1:2:3' WHERE k = 1" % t) == too_many
    # a tuple the column takes: the missing clustering key is what is left
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, t) VALUES (1, '1:a')" % t) == \
        "Some clustering keys are missing: c"
    assert list(cql.execute("SELECT * FROM %s" % t)) == []


def test_columns_in_the_order_they_are_named(cql, table):
    t = table("(k int, c int, t frozen<tuple<int, text>>, v int, PRIMARY KEY (k, c))")
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, t, zz) VALUES (0, '1:2:3', 1)" % t) == \
        "Invalid tuple literal: too many elements. Type frozen<tuple<int, text>> expects 2 but got 3"
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, zz, t) VALUES (0, 1, '1:2:3')" % t) == \
        "Undefined column name zz in table error_order.%s" % t
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, v) VALUES (0, 'x')" % t) == \
        'Invalid STRING constant (x) for "v" of type int'
    assert error(cql, InvalidRequest, "UPDATE %s SET zz = 1 WHERE k = 0" % t) == \
        "Undefined column name zz in table error_order.%s" % t
    assert error(cql, InvalidRequest, "UPDATE %s SET k = 1 WHERE k = 0" % t) == \
        "PRIMARY KEY part k found in SET part"
    assert error(cql, InvalidRequest, "UPDATE %s SET v = 'x' WHERE c = 0" % t) == \
        'Invalid STRING constant (x) for "v" of type int'


def test_an_operation_the_column_cannot_take_before_the_missing_clustering_key(cql, table):
    # Operation.RawUpdate.prepare refuses it while the statement is prepared
    t = table("(k int, c int, v int, fl frozen<list<int>>, PRIMARY KEY (k, c))")
    assert error(cql, InvalidRequest, "UPDATE %s SET v = v + 1 WHERE k = 0" % t) == \
        "Invalid operation (v = v + 1) for non counter column v"
    assert error(cql, InvalidRequest, "UPDATE %s SET fl = fl + [1] WHERE k = 0" % t) == \
        "Invalid operation (fl = fl + [1]) for frozen collection column fl"
    n = table("(k int, c int, n counter, PRIMARY KEY (k, c))")
    assert error(cql, InvalidRequest, "UPDATE %s SET n = 1 WHERE k = 0" % n) == \
        "Cannot set the value of counter column n (counters can only be incremented/decremented, not set)"
    assert error(cql, InvalidRequest, "UPDATE %s SET n = n + 1 WHERE k = 0" % n) == \
        "Some clustering keys are missing: c"


def test_a_value_is_refused_even_when_the_row_exists(cql, table):
    # the value is read when the statement is prepared, not when it would be written
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 1)" % t)
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, c, v) VALUES (0, 0, 'x') IF NOT EXISTS" % t) == \
        'Invalid STRING constant (x) for "v" of type int'
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [(0, 0, 1)]


# ---- conditions before the rest (ModificationStatement.Parsed.prepare prepares the
# conditions before prepareInternal reads what is set or deleted and the key)
def test_conditions_before_what_is_set_or_deleted(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    assert error(cql, InvalidRequest, "UPDATE %s SET zz = 1 WHERE k = 0 IF yy = 1" % t) == \
        "Undefined column name yy"
    assert error(cql, InvalidRequest, "UPDATE %s SET v = 'x' WHERE k = 0 AND c = 0 IF v = 'y'" % t) == \
        'Invalid STRING constant (y) for "v" of type int'
    assert error(cql, InvalidRequest, "UPDATE %s SET v = 'x' WHERE k = 0 IF v IN (1, 'y')" % t) == \
        'Invalid STRING constant (y) for "v" of type int'
    assert error(cql, InvalidRequest, "DELETE zz FROM %s WHERE k = 0 IF v = 'y'" % t) == \
        'Invalid STRING constant (y) for "v" of type int'
    assert error(cql, InvalidRequest, "UPDATE %s SET v = 1 WHERE k = 0 IF v.f = 1" % t) == \
        "Invalid field selection: v is not a user type"
    assert error(cql, InvalidRequest, "UPDATE %s SET v = 1 WHERE k = 0 IF k = 1" % t) == \
        "PRIMARY KEY column 'k' cannot have IF conditions"
    assert [tuple(r) for r in cql.execute("UPDATE %s SET v = 1 WHERE k = 0 AND c = 0 IF v = 1" % t)] == \
        [(False,)]


# ---- IF ... CONTAINS: Cassandra 4's columnCondition (Parser.g) has no CONTAINS (5.0 added
# it), so it is a syntax error, found before anything about the table or the statement
def test_contains_in_a_condition_is_a_syntax_error(cql, table):
    t = table("(k int, c int, v int, l list<int>, m map<int, int>, PRIMARY KEY (k, c))")
    stmt = "UPDATE %s SET v = 1 WHERE k = 0 AND c = 0 IF l CONTAINS 1" % t
    assert error(cql, SyntaxException, stmt) == \
        "line 1:%d no viable alternative at input 'CONTAINS' (...c = 0 IF l [CONTAINS]...)" % stmt.index("CONTAINS")
    stmt = "DELETE FROM %s WHERE k = 0 AND c = 0 IF v = 1 AND m contains key 1" % t
    assert error(cql, SyntaxException, stmt, prepare=True) == \
        "line 1:%d no viable alternative at input 'contains' (...v = 1 AND m [contains]...)" % stmt.index("contains")
    assert list(cql.execute("SELECT * FROM %s" % t)) == []


def test_contains_in_a_condition_before_other_errors(cql, table):
    t = table("(k int, c int, v int, l list<int>, PRIMARY KEY (k, c))")
    syntax = "no viable alternative at input 'CONTAINS'"
    # an unknown column set, the clustering key missing, a value of the wrong type
    assert syntax in error(cql, SyntaxException, "UPDATE %s SET zz = 'x' WHERE k = 0 IF l CONTAINS 1" % t)
    # an unknown table, and a later syntax error
    assert syntax in error(cql, SyntaxException, "UPDATE no_such_table SET v = 1 WHERE k = 0 IF l CONTAINS 1 AND")
    # an earlier syntax error wins
    assert "no viable alternative at input 'WHERE'" in \
        error(cql, SyntaxException, "UPDATE %s SET v = WHERE k = 0 IF l CONTAINS 1" % t)


# ---- columns named twice
def test_an_insert_naming_a_column_twice(cql, table):
    # UpdateStatement.ParsedInsert: the count of values, then duplicates, then each column
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, c, v, v) VALUES (0, 0, 1, 2)" % t) == \
        "The column names contains duplicates"
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, zz, zz) VALUES (0, 1, 2)" % t) == \
        "The column names contains duplicates"
    assert error(cql, InvalidRequest, "INSERT INTO %s (k, v, V) VALUES (0, 1)" % t) == \
        "Unmatched column names/values"


def test_an_update_setting_a_column_twice(cql, table):
    # Parser.g's addRawUpdate: a grammar error, so before the table is looked up
    t = table("(k int PRIMARY KEY, v int, l list<int>, m map<text, int>)")
    assert error(cql, SyntaxException, "UPDATE %s SET v = 1, v = 2 WHERE k = 0" % t) == \
        "Multiple incompatible setting of column v"
    assert error(cql, SyntaxException, "UPDATE no_such_table SET m['a'] = 1, m = {} WHERE k = 0") == \
        "Multiple incompatible setting of column m"
    cql.execute("UPDATE %s SET l = l + [1], l = l + [2], m['a'] = 1, m['b'] = 2 WHERE k = 0" % t)
    assert [(r.l, r.m) for r in cql.execute("SELECT l, m FROM %s" % t)] == [([1, 2], {"a": 1, "b": 2})]


# ---- bind values against markers (QueryProcessor.process and processPrepared)
@pytest.fixture
def raw(shared_cql, cql):
    r = Raw(shared_cql.port)
    r.startup()
    yield r
    r.close()


def answer(raw, msg):
    raw.send(msg)
    return raw.recv()[1]


def test_bind_values_too_few_or_too_many(raw, table):
    t = table("(k int PRIMARY KEY, v int)")
    one, two = b"\0\0\0\1", b"\0\0\0\2"
    stmt = "INSERT INTO error_order.%s (k, v) VALUES (?, ?)" % t
    for values, markers in (([one], stmt), ([one, two, two], stmt), ([], stmt),
                            ([one], "SELECT * FROM error_order.%s" % t)):
        q = QueryMessage(markers, ConsistencyLevel.ONE)
        q.query_params = values
        got = answer(raw, q)
        assert isinstance(got, InvalidRequestException), got
        assert got.message == "Invalid amount of bind variables"
    prepared = answer(raw, PrepareMessage(stmt))
    for values in ([one], [one, two, two]):
        got = answer(raw, ExecuteMessage(prepared.query_id, values, ConsistencyLevel.ONE))
        assert isinstance(got, InvalidRequestException), got
        assert got.message == "there were 2 markers(?) in CQL but %d bound variables" % len(values)
    assert answer(raw, ExecuteMessage(prepared.query_id, [one, two], ConsistencyLevel.ONE)).kind == 1


def test_bound_values_of_the_wrong_form(raw, table):
    # the type's own validation (Int32Serializer, UTF8Serializer...), as Constants.Marker binds
    t = table("(k int PRIMARY KEY, i int, s text)")
    for column, value, message in (("i", b"\0\0\1", "Expected 4 or 0 byte int (3)"),
                                   ("s", b"\xff\xfe", "String didn't validate.")):
        prepared = answer(raw, PrepareMessage("INSERT INTO error_order.%s (k, %s) VALUES (?, ?)" % (t, column)))
        got = answer(raw, ExecuteMessage(prepared.query_id, [b"\0\0\0\1", value], ConsistencyLevel.ONE))
        assert isinstance(got, InvalidRequestException) and got.code == 0x2200, got
        assert got.message == message
