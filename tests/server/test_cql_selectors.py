"""SELECT's computed selectors through the Python driver (Debian python3-cassandra) against
`quarry serve --cql`, with the names, types and values Cassandra 4 answers: the field of a
user-defined-type column (frozen and not), function calls nested in each other, typed
terms, and selectors computed from constants alone on system.local. Not plain columns,
writetime()/ttl() or aggregates (test_cql_server.py, test_cql_cells.py)."""
import datetime
import time
import uuid

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402


@pytest.fixture
def session(shared_keyspace):
    s = shared_keyspace("sel")
    s.execute("CREATE TYPE addr (street text, zip int, tags frozen<set<text>>)")
    s.execute("CREATE TABLE t (k int PRIMARY KEY, a addr, f frozen<addr>)")
    return s


def types_of(rs):
    return [t.typename for t in rs.column_types]


def test_udt_field_of_frozen_and_non_frozen_columns(session):
    s = session
    s.execute("INSERT INTO t (k, a, f) VALUES (1, {street: 'Elm', zip: 5}, "
              "{street: 'Oak', zip: 6, tags: {'x', 'y'}})")
    s.execute("INSERT INTO t (k) VALUES (2)")
    # a field updated on its own in the non-frozen column
    s.execute("UPDATE t SET a.zip = 7 WHERE k = 1")
    rs = s.execute("SELECT k, a.zip, a.street, f.zip, f.tags, a.tags FROM t WHERE k = 1")
    assert rs.column_names == ["k", "a.zip", "a.street", "f.zip", "f.tags", "a.tags"]
    assert types_of(rs) == ["int", "int", "varchar", "int", "set", "set"]
    row = rs.one()
    assert (row[1], row[2], row[3], sorted(row[4]), row[5]) == (7, "Elm", 6, ["x", "y"], None)
    # a row without the column answers null for its fields
    assert list(s.execute("SELECT a.zip, f.street FROM t WHERE k = 2").one()) == [None, None]
    # an alias names the column
    assert s.execute("SELECT f.street AS s FROM t WHERE k = 1").column_names == ["s"]


def test_udt_field_after_the_type_gained_a_field(session):
    s = session
    s.execute("INSERT INTO t (k, f) VALUES (1, {street: 'Oak', zip: 6})")
    s.execute("ALTER TYPE addr ADD country text")
    s.execute("INSERT INTO t (k, f) VALUES (2, {street: 'Elm', country: 'NO'})")
    rows = {r.k: (r[1], r[2]) for r in s.execute("SELECT k, f.country, f.zip FROM t")}
    assert rows == {1: (None, 6), 2: ("NO", None)}


def test_udt_field_in_functions_and_prepared(session):
    s = session
    s.execute("INSERT INTO t (k, f) VALUES (1, {street: 'Oak', zip: 6})")
    rs = s.execute("SELECT CAST(f.zip AS bigint), blobAsInt(intAsBlob(f.zip)) FROM t")
    assert rs.column_names == ["cast(f.zip as bigint)",
                               "system.blobasint(system.intasblob(f.zip))"]
    assert types_of(rs) == ["bigint", "int"]
    assert list(rs.one()) == [6, 6]
    p = s.prepare("SELECT f.street FROM t WHERE k = ?")
    assert s.execute(p, (1,)).one()[0] == "Oak"


def test_udt_field_selection_refusals(session):
    s = session
    with pytest.raises(InvalidRequest, match="f of type frozen<addr> has no field nope"):
        s.execute("SELECT f.nope FROM t")
    with pytest.raises(InvalidRequest,
                       match="Invalid field selection: k of type int is not a user type"):
        s.execute("SELECT k.zip FROM t")
    with pytest.raises(InvalidRequest, match="Undefined column name x"):
        s.execute("SELECT x.zip FROM t")


def test_functions_of_constants_on_system_local(session):
    s = session
    before = datetime.datetime.utcnow().replace(microsecond=0) - datetime.timedelta(seconds=1)
    rs = s.execute("SELECT now(), toTimestamp(now()), uuid(), (int)1, (text)'foo', "
                   "toUnixTimestamp(now()) AS ms, key FROM system.local")
    assert rs.column_names == ["system.now()", "system.totimestamp(system.now())",
                               "system.uuid()", "(int)1", "(text)'foo'", "ms", "key"]
    assert types_of(rs) == ["timeuuid", "timestamp", "uuid", "int", "varchar", "bigint",
                            "varchar"]
    row = rs.one()
    assert isinstance(row[0], uuid.UUID) and row[0].version == 1
    assert before <= row[1] <= datetime.datetime.utcnow() + datetime.timedelta(seconds=1)
    assert isinstance(row[2], uuid.UUID) and row[2].version == 4
    assert row[3:5] == (1, "foo")
    assert abs(row[5] - time.time() * 1000) < 5000
    assert row[6] == "local"
    # each call answers a new timeuuid
    a = s.execute("SELECT now() FROM system.local").one()[0]
    b = s.execute("SELECT now() FROM system.local").one()[0]
    assert a != b and b.time > a.time


def test_nested_calls_and_typed_terms_on_a_table(session):
    s = session
    s.execute("INSERT INTO t (k) VALUES (1)")
    s.execute("INSERT INTO t (k) VALUES (2)")
    rs = s.execute("SELECT k, toDate(now()), (bigint)7, blobAsText(textAsBlob('hi')) FROM t")
    assert rs.column_names == ["k", "system.todate(system.now())", "(bigint)7",
                               "system.blobastext(system.textasblob('hi'))"]
    assert types_of(rs) == ["int", "date", "bigint", "varchar"]
    rows = sorted(rs, key=lambda r: r.k)
    assert [r[2] for r in rows] == [7, 7] and [r[3] for r in rows] == ["hi", "hi"]
    assert abs((rows[0][1].date() - datetime.datetime.utcnow().date()).days) <= 1


def test_untyped_terms_are_refused_as_cassandra_does(session):
    with pytest.raises(InvalidRequest, match="Cannot infer type for term 1 in selection clause"):
        session.execute("SELECT 1 FROM system.local")
    with pytest.raises(InvalidRequest, match="Unknown function"):
        session.execute("SELECT nosuch() FROM system.local")
    with pytest.raises(InvalidRequest, match="Invalid number of arguments"):
        session.execute("SELECT now(1) FROM system.local")


def test_elements_and_slices_of_sets_and_maps(session):
    s = session
    s.execute("CREATE TABLE e (k int PRIMARY KEY, m map<text, int>, st set<int>, l list<int>, "
              "fm frozen<map<int, text>>)")
    s.execute("INSERT INTO e (k, m, st, l, fm) VALUES (1, {'a': 1, 'b': 2, 'c': 3, 'd': 4}, "
              "{1, 5, 9}, [1], {1: 'x', 2: 'y'})")
    s.execute("INSERT INTO e (k) VALUES (2)")
    rs = s.execute("SELECT k, m['b'], m['z'], st[5], st[6], fm[2] FROM e WHERE k = 1")
    assert rs.column_names == ["k", "m['b']", "m['z']", "st[5]", "st[6]", "fm[2]"]
    assert types_of(rs) == ["int", "int", "int", "int", "int", "varchar"]
    assert list(rs.one()) == [1, 2, None, 5, None, "y"]
    assert list(s.execute("SELECT m['b'], fm[1] FROM e WHERE k = 2").one()) == [None, None]
    rs = s.execute("SELECT m['b'..'c'], m[..'b'], m['c'..], st[2..9], m['x'..'y'] FROM e "
                   "WHERE k = 1")
    assert rs.column_names == ["m['b'..'c']", "m[..'b']", "m['c'..]", "st[2..9]",
                               "m['x'..'y']"]
    row = rs.one()
    assert dict(row[0]) == {"b": 2, "c": 3} and dict(row[1]) == {"a": 1, "b": 2}
    assert dict(row[2]) == {"c": 3, "d": 4} and sorted(row[3]) == [5, 9] and row[4] is None
    p = s.prepare("SELECT m[?] FROM e WHERE k = ?")
    assert s.execute(p, ("d", 1)).one()[0] == 4
    with pytest.raises(InvalidRequest, match="Element selection is only allowed on sets and "
                                             "maps, but l is a list"):
        s.execute("SELECT l[0] FROM e")
    with pytest.raises(InvalidRequest, match="Invalid element selection: k is of type int is "
                                             "not a collection"):
        s.execute("SELECT k[0] FROM e")
