"""Cassandra 4 behaviours of `quarry serve --cql` in the areas ScyllaDB's cqlpy suite covers
and runs against Cassandra too: JSON, TTL and writetime, static columns, paging, counters,
user-defined types and tuples, collections. One server serves the run (shared_cql); each test
works in its own table of keyspace probe. Not the protocol framing (test_cql_wire.py)."""
import itertools
import json
import time

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import FunctionFailure  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

_names = itertools.count()


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="probe")
    yield session
    session.cluster.shutdown()


def rows(cql, stmt, *args):
    return list(cql.execute(cql.prepare(stmt) if args else stmt, args or None))


# ---- JSON
def test_fromjson_failures(cql, table):
    t = table("(p int PRIMARY KEY, v int, a ascii, bigv bigint)")
    for bad in ["fromJson('dog')", "fromJson('\"dog\"')", "fromJson('1.2')", "fromJson('2147483648')"]:
        with pytest.raises(FunctionFailure):
            cql.execute("INSERT INTO %s (p, v) VALUES (1, %s)" % (t, bad))
    with pytest.raises(FunctionFailure):
        cql.execute("INSERT INTO %s (p, a) VALUES (1, fromJson('3'))" % t)
    with pytest.raises(FunctionFailure):
        cql.execute("INSERT INTO %s (p, bigv) VALUES (1, fromJson('9223372036854775808'))" % t)
    stmt = cql.prepare("INSERT INTO %s (p, v) VALUES (?, fromJson(?))" % t)
    with pytest.raises(FunctionFailure):
        cql.execute(stmt, [1, 'dog'])


def test_fromjson_values(cql, table):
    t = table("(p int PRIMARY KEY, v int, b boolean, bigv bigint, mai map<ascii, int>)")
    cql.execute("INSERT INTO %s (p, b) VALUES (1, fromJson('\"true\"'))" % t)
    assert rows(cql, "SELECT p, b FROM %s WHERE p = 1" % t) == [(1, True)]
    stmt = cql.prepare("INSERT INTO %s (p, b) VALUES (?, fromJson(?))" % t)
    cql.execute(stmt, [1, '"fALSe"'])
    assert rows(cql, "SELECT p, b FROM %s WHERE p = 1" % t) == [(1, False)]
    cql.execute("INSERT INTO %s (p, v) VALUES (2, fromJson(null))" % t)
    assert rows(cql, "SELECT p, v FROM %s WHERE p = 2" % t) == [(2, None)]
    stmt = cql.prepare("INSERT INTO %s (p, v) VALUES (?, fromJson(?))" % t)
    cql.execute(stmt, [3, None])
    assert rows(cql, "SELECT p, v FROM %s WHERE p = 3" % t) == [(3, None)]
    cql.execute(stmt, [4, '"17"'])
    assert rows(cql, "SELECT v FROM %s WHERE p = 4" % t) == [(17,)]
    cql.execute("INSERT INTO %s (p, mai) VALUES (5, fromJson('{\"a\": 1, \"b\": 2}'))" % t)
    assert rows(cql, "SELECT mai FROM %s WHERE p = 5" % t) == [({'a': 1, 'b': 2},)]
    stmt = cql.prepare("INSERT INTO %s (p, bigv) VALUES (?, fromJson(?))" % t)
    cql.execute(stmt, [6, '9223372036854775807'])
    assert rows(cql, "SELECT bigv FROM %s WHERE p = 6" % t) == [(9223372036854775807,)]


def test_select_json(cql, table):
    t = table("(p int PRIMARY KEY, v int, a ascii, b boolean, l list<text>, d double, "
              "tup frozen<tuple<text, int>>, \"CaseSensitive\" int, ts timestamp, dec decimal)")
    cql.execute("INSERT INTO %s (p, v, a, b, l, d, tup, \"CaseSensitive\", ts, dec) VALUES "
                "(1, 2, 'x', true, ['a', 'b'], 1.5, ('t', 3), 7, '2020-01-01 00:00:00+0000', 1.25)" % t)
    [r] = rows(cql, "SELECT JSON * FROM %s WHERE p = 1" % t)
    got = json.loads(r[0])
    assert got == {"p": 1, "v": 2, "a": "x", "b": True, "l": ["a", "b"], "d": 1.5,
                   "tup": ["t", 3], "\"CaseSensitive\"": 7,
                   "ts": "2020-01-01 00:00:00.000Z", "dec": 1.25}
    [r] = rows(cql, "SELECT JSON p, v AS vee, toJson(a) FROM %s WHERE p = 1" % t)
    assert json.loads(r[0]) == {"p": 1, "vee": 2, "system.tojson(a)": "\"x\""}
    assert rows(cql, "SELECT toJson(l), toJson(tup) FROM %s WHERE p = 1" % t) == [('["a", "b"]', '["t", 3]')]
    [r] = rows(cql, "SELECT JSON \"CaseSensitive\" FROM %s WHERE p = 1" % t)
    assert json.loads(r[0]) == {"\"CaseSensitive\"": 7}


def test_insert_json(cql, table):
    t = table("(p int PRIMARY KEY, v int, l list<int>, m map<text, int>, s set<int>, \"Cs\" int)")
    cql.execute("INSERT INTO %s JSON '{\"p\": 1, \"v\": 2, \"l\": [1, 2], \"m\": {\"a\": 1}, \"s\": [3, 1], \"\\\"Cs\\\"\": 5}'" % t)
    assert rows(cql, "SELECT p, v, l, m, s, \"Cs\" FROM %s" % t) == [(1, 2, [1, 2], {'a': 1}, {1, 3}, 5)]
    cql.execute("INSERT INTO %s JSON '{\"p\": 1}'" % t)
    assert rows(cql, "SELECT p, v, l FROM %s" % t) == [(1, None, None)]
    cql.execute("INSERT INTO %s (p, v) VALUES (2, 3)" % t)
    cql.execute("INSERT INTO %s JSON '{\"p\": 2}' DEFAULT UNSET" % t)
    assert rows(cql, "SELECT v FROM %s WHERE p = 2" % t) == [(3,)]
    stmt = cql.prepare("INSERT INTO %s JSON ?" % t)
    cql.execute(stmt, ['{"p": 3, "v": "4"}'])
    assert rows(cql, "SELECT v FROM %s WHERE p = 3" % t) == [(4,)]
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s JSON '{\"p\": 4, \"nosuch\": 1}'" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s JSON '{\"v\": 1}'" % t)


# ---- TTL / writetime
def test_ttl_writetime(cql, table):
    t = table("(p int PRIMARY KEY, v int, w int)")
    cql.execute("INSERT INTO %s (p, v) VALUES (1, 2) USING TTL 1000 AND TIMESTAMP 12345" % t)
    [(ttl, wt)] = rows(cql, "SELECT ttl(v), writetime(v) FROM %s WHERE p = 1" % t)
    assert 990 < ttl <= 1000 and wt == 12345
    assert rows(cql, "SELECT ttl(w), writetime(w) FROM %s WHERE p = 1" % t) == [(None, None)]
    cql.execute("UPDATE %s USING TTL 0 SET v = 3 WHERE p = 1" % t)
    assert rows(cql, "SELECT ttl(v) FROM %s WHERE p = 1" % t) == [(None,)]
    with pytest.raises(InvalidRequest):
        cql.execute("SELECT ttl(p) FROM %s" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, v) VALUES (1, 2) USING TTL -1" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, v) VALUES (1, 2) USING TTL 630720001" % t)
    stmt = cql.prepare("INSERT INTO %s (p, v) VALUES (?, ?) USING TTL ?" % t)
    cql.execute(stmt, [5, 5, 100])
    [(ttl,)] = rows(cql, "SELECT ttl(v) FROM %s WHERE p = 5" % t)
    assert 90 < ttl <= 100


def test_ttl_expiry_and_default(cql, table):
    t = table("(p int PRIMARY KEY, v int, w int) WITH default_time_to_live = 1000")
    cql.execute("INSERT INTO %s (p, v) VALUES (1, 2)" % t)
    [(ttl,)] = rows(cql, "SELECT ttl(v) FROM %s WHERE p = 1" % t)
    assert 990 < ttl <= 1000
    cql.execute("INSERT INTO %s (p, v) VALUES (2, 2) USING TTL 0" % t)
    assert rows(cql, "SELECT ttl(v) FROM %s WHERE p = 2" % t) == [(None,)]
    cql.execute("INSERT INTO %s (p, w) VALUES (3, 1) USING TTL 1" % t)
    time.sleep(2.1)
    assert rows(cql, "SELECT * FROM %s WHERE p = 3" % t) == []
    cql.execute("ALTER TABLE %s WITH default_time_to_live = 0" % t)
    cql.execute("INSERT INTO %s (p, v) VALUES (4, 2)" % t)
    assert rows(cql, "SELECT ttl(v) FROM %s WHERE p = 4" % t) == [(None,)]


def test_ttl_collections(cql, table):
    t = table("(p int PRIMARY KEY, l list<int>, f frozen<list<int>>)")
    cql.execute("INSERT INTO %s (p, f) VALUES (1, [1]) USING TTL 100" % t)
    [(ttl,)] = rows(cql, "SELECT ttl(f) FROM %s WHERE p = 1" % t)
    assert 90 < ttl <= 100
    with pytest.raises(InvalidRequest):
        cql.execute("SELECT ttl(l) FROM %s" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("SELECT writetime(l) FROM %s" % t)


# ---- static
def test_static(cql, table):
    t = table("(p int, c int, s int static, v int, PRIMARY KEY (p, c))")
    cql.execute("INSERT INTO %s (p, s) VALUES (1, 10)" % t)
    assert rows(cql, "SELECT * FROM %s WHERE p = 1" % t) == [(1, None, 10, None)]
    cql.execute("INSERT INTO %s (p, c, v) VALUES (1, 1, 1)" % t)
    cql.execute("INSERT INTO %s (p, c, v) VALUES (1, 2, 2)" % t)
    assert rows(cql, "SELECT * FROM %s WHERE p = 1" % t) == [(1, 1, 10, 1), (1, 2, 10, 2)]
    assert rows(cql, "SELECT DISTINCT p, s FROM %s" % t) == [(1, 10)]
    assert rows(cql, "SELECT s FROM %s WHERE p = 1 AND c = 2" % t) == [(10,)]
    cql.execute("UPDATE %s SET s = 11 WHERE p = 1" % t)
    assert rows(cql, "SELECT s FROM %s WHERE p = 1 AND c = 1" % t) == [(11,)]
    cql.execute("DELETE s FROM %s WHERE p = 1" % t)
    assert rows(cql, "SELECT s FROM %s WHERE p = 1 LIMIT 1" % t) == [(None,)]
    cql.execute("DELETE FROM %s WHERE p = 1 AND c = 1" % t)
    cql.execute("DELETE FROM %s WHERE p = 1 AND c = 2" % t)
    assert rows(cql, "SELECT * FROM %s WHERE p = 1" % t) == []
    cql.execute("UPDATE %s SET s = 5 WHERE p = 2" % t)
    assert rows(cql, "SELECT * FROM %s WHERE p = 2" % t) == [(2, None, 5, None)]
    assert rows(cql, "SELECT * FROM %s WHERE p = 2 AND c = 1" % t) == []
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, c, s) VALUES (3, null, 1)" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET v = 1 WHERE p = 3" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("CREATE TABLE probe.nostatic (p int PRIMARY KEY, s int static)")


def test_static_lwt(cql, table):
    t = table("(p int, c int, s int static, v int, PRIMARY KEY (p, c))")
    r = rows(cql, "UPDATE %s SET s = 1 WHERE p = 1 IF s = null" % t)
    assert r[0][0] is True
    r = rows(cql, "UPDATE %s SET s = 2 WHERE p = 1 IF s = 5" % t)
    assert list(r[0]) == [False, 1]


# ---- paging
def test_paging(cql, table):
    t = table("(p int, c int, v int, PRIMARY KEY (p, c))")
    ins = cql.prepare("INSERT INTO %s (p, c, v) VALUES (?, ?, ?)" % t)
    for p in range(3):
        for c in range(10):
            cql.execute(ins, [p, c, c % 3])
    s = SimpleStatement("SELECT c FROM %s WHERE p = 1" % t, fetch_size=3)
    assert [r[0] for r in cql.execute(s)] == list(range(10))
    s = SimpleStatement("SELECT c FROM %s WHERE p = 1 LIMIT 7" % t, fetch_size=3)
    assert [r[0] for r in cql.execute(s)] == list(range(7))
    s = SimpleStatement("SELECT c FROM %s WHERE p = 1 AND v = 0 ALLOW FILTERING" % t, fetch_size=2)
    assert [r[0] for r in cql.execute(s)] == [0, 3, 6, 9]
    s = SimpleStatement("SELECT p, c FROM %s WHERE v = 1 LIMIT 5 ALLOW FILTERING" % t, fetch_size=2)
    assert len(list(cql.execute(s))) == 5
    s = SimpleStatement("SELECT p, c FROM %s PER PARTITION LIMIT 2" % t, fetch_size=3)
    assert len(list(cql.execute(s))) == 6
    s = SimpleStatement("SELECT count(*) FROM %s" % t, fetch_size=4)
    assert list(cql.execute(s)) == [(30,)]
    s = SimpleStatement("SELECT c FROM %s WHERE p = 1 ORDER BY c DESC" % t, fetch_size=4)
    assert [r[0] for r in cql.execute(s)] == list(range(9, -1, -1))
    s = SimpleStatement("SELECT DISTINCT p FROM %s" % t, fetch_size=1)
    assert sorted(r[0] for r in cql.execute(s)) == [0, 1, 2]
    s = SimpleStatement("SELECT c FROM %s WHERE p IN (0, 2) AND c < 2" % t, fetch_size=1)
    assert [r[0] for r in cql.execute(s)] == [0, 1, 0, 1]
    r = cql.execute(SimpleStatement("SELECT c FROM %s WHERE p = 1" % t, fetch_size=3))
    assert len(r.current_rows) == 3 and r.has_more_pages


# ---- counters
def test_counters(cql, table):
    t = table("(p int PRIMARY KEY, c counter, d counter)")
    cql.execute("UPDATE %s SET c = c + 5 WHERE p = 1" % t)
    cql.execute("UPDATE %s SET c = c - 2, d = d + 1 WHERE p = 1" % t)
    assert rows(cql, "SELECT c, d FROM %s WHERE p = 1" % t) == [(3, 1)]
    stmt = cql.prepare("UPDATE %s SET c = c + ? WHERE p = ?" % t)
    cql.execute(stmt, [-10, 1])
    assert rows(cql, "SELECT c FROM %s WHERE p = 1" % t) == [(-7,)]
    cql.execute("UPDATE %s SET c = c + 0 WHERE p = 2" % t)
    assert rows(cql, "SELECT c, d FROM %s WHERE p = 2" % t) == [(0, None)]
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, c) VALUES (3, 1)" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET c = 1 WHERE p = 1" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s USING TTL 10 SET c = c + 1 WHERE p = 1" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("CREATE TABLE probe.badcounter (p int PRIMARY KEY, c counter, v int)")
    with pytest.raises(InvalidRequest, match="Conditional updates are not supported on counter tables"):
        cql.execute("UPDATE %s SET c = c + 1 WHERE p = 1 IF EXISTS" % t)
    with pytest.raises(InvalidRequest, match="Conditional updates are not supported on counter tables"):
        cql.execute("DELETE FROM %s WHERE p = 1 IF c = 3" % t)
    cql.execute("DELETE c FROM %s WHERE p = 1" % t)
    assert rows(cql, "SELECT c, d FROM %s WHERE p = 1" % t) == [(None, 1)]
    assert rows(cql, "SELECT sum(c) FROM %s" % t) == [(0,)]


def test_counter_overflow_and_types(cql, table):
    t = table("(p int PRIMARY KEY, c counter)")
    cql.execute("UPDATE %s SET c = c + 9223372036854775807 WHERE p = 1" % t)
    cql.execute("UPDATE %s SET c = c + 1 WHERE p = 1" % t)
    assert rows(cql, "SELECT c FROM %s WHERE p = 1" % t) == [(-9223372036854775808,)]
    assert rows(cql, "SELECT toJson(c) FROM %s WHERE p = 1" % t) == [("-9223372036854775808",)]


# ---- UDT / tuple
def test_udt(cql, table):
    cql.execute("CREATE TYPE IF NOT EXISTS probe.u1 (a int, b text)")
    t = table("(p int PRIMARY KEY, f frozen<u1>, n u1, tl tuple<int, text>)")
    cql.execute("INSERT INTO %s (p, f, n) VALUES (1, {a: 1, b: 'x'}, {a: 2})" % t)
    [(f, n)] = rows(cql, "SELECT f, n FROM %s WHERE p = 1" % t)
    assert (f.a, f.b, n.a, n.b) == (1, 'x', 2, None)
    cql.execute("UPDATE %s SET n.b = 'y' WHERE p = 1" % t)
    [(nb, fa)] = rows(cql, "SELECT n.b, f.a FROM %s WHERE p = 1" % t)
    assert (nb, fa) == ('y', 1)
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET f.a = 3 WHERE p = 1" % t)
    cql.execute("DELETE n.a FROM %s WHERE p = 1" % t)
    [(n,)] = rows(cql, "SELECT n FROM %s WHERE p = 1" % t)
    assert (n.a, n.b) == (None, 'y')
    cql.execute("INSERT INTO %s (p, tl) VALUES (2, (1, 'a'))" % t)
    assert rows(cql, "SELECT tl FROM %s WHERE p = 2" % t) == [((1, 'a'),)]
    cql.execute("INSERT INTO %s (p, tl) VALUES (3, (1, null))" % t)
    assert rows(cql, "SELECT tl FROM %s WHERE p = 3" % t) == [((1, None),)]
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, tl) VALUES (4, (1, 'a', 3))" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, f) VALUES (4, {a: 1, c: 2})" % t)
    [r] = rows(cql, "SELECT JSON f, tl FROM %s WHERE p = 1" % t)
    assert json.loads(r[0]) == {"f": {"a": 1, "b": "x"}, "tl": None}
    cql.execute("INSERT INTO %s JSON '{\"p\": 5, \"f\": {\"a\": 5, \"b\": \"q\"}, \"tl\": [6, \"r\"]}'" % t)
    [(f, tl)] = rows(cql, "SELECT f, tl FROM %s WHERE p = 5" % t)
    assert (f.a, f.b, tl) == (5, 'q', (6, 'r'))
    with pytest.raises(InvalidRequest):
        cql.execute("DROP TYPE probe.u1")


def test_udt_alter(cql, table):
    cql.execute("CREATE TYPE IF NOT EXISTS probe.u2 (a int)")
    t = table("(p int PRIMARY KEY, f frozen<u2>)")
    cql.execute("INSERT INTO %s (p, f) VALUES (1, {a: 1})" % t)
    cql.execute("ALTER TYPE probe.u2 ADD b text")
    [(f,)] = rows(cql, "SELECT f FROM %s WHERE p = 1" % t)
    assert (f.a, f.b) == (1, None)
    cql.execute("ALTER TYPE probe.u2 RENAME a TO aa")
    [(aa,)] = rows(cql, "SELECT f.aa FROM %s WHERE p = 1" % t)
    assert aa == 1


# ---- collections
def test_list_ops(cql, table):
    t = table("(p int PRIMARY KEY, l list<int>)")
    cql.execute("INSERT INTO %s (p, l) VALUES (1, [1, 2, 3])" % t)
    cql.execute("UPDATE %s SET l = l + [4] WHERE p = 1" % t)
    cql.execute("UPDATE %s SET l = [0] + l WHERE p = 1" % t)
    assert rows(cql, "SELECT l FROM %s WHERE p = 1" % t) == [([0, 1, 2, 3, 4],)]
    cql.execute("UPDATE %s SET l[1] = 10 WHERE p = 1" % t)
    cql.execute("DELETE l[0] FROM %s WHERE p = 1" % t)
    assert rows(cql, "SELECT l FROM %s WHERE p = 1" % t) == [([10, 2, 3, 4],)]
    cql.execute("UPDATE %s SET l = l - [2, 4] WHERE p = 1" % t)
    assert rows(cql, "SELECT l FROM %s WHERE p = 1" % t) == [([10, 3],)]
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET l[5] = 1 WHERE p = 1" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET l[0] = 1 WHERE p = 2" % t)
    cql.execute("UPDATE %s SET l = l - [10, 3] WHERE p = 1" % t)
    assert rows(cql, "SELECT l FROM %s WHERE p = 1" % t) == [(None,)]
    cql.execute("UPDATE %s SET l = [] WHERE p = 1" % t)
    assert rows(cql, "SELECT l FROM %s WHERE p = 1" % t) == [(None,)]
    cql.execute("UPDATE %s SET l = l + [7] WHERE p = 3" % t)
    assert rows(cql, "SELECT l FROM %s WHERE p = 3" % t) == [([7],)]
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, l) VALUES (4, [1, null])" % t)
    with pytest.raises(InvalidRequest, match="Element selection is only allowed on sets and maps"):
        cql.execute("SELECT l[0] FROM %s WHERE p = 3" % t)


def test_set_map_ops(cql, table):
    t = table("(p int PRIMARY KEY, s set<text>, m map<int, text>)")
    cql.execute("INSERT INTO %s (p, s, m) VALUES (1, {'b', 'a'}, {1: 'one'})" % t)
    cql.execute("UPDATE %s SET s = s + {'c'}, m[2] = 'two' WHERE p = 1" % t)
    cql.execute("UPDATE %s SET m = m + {3: 'three'} WHERE p = 1" % t)
    assert rows(cql, "SELECT s, m FROM %s WHERE p = 1" % t) == [({'a', 'b', 'c'}, {1: 'one', 2: 'two', 3: 'three'})]
    cql.execute("UPDATE %s SET s = s - {'a'}, m = m - {1} WHERE p = 1" % t)
    cql.execute("DELETE m[2], s['c'] FROM %s WHERE p = 1" % t)
    assert rows(cql, "SELECT s, m FROM %s WHERE p = 1" % t) == [({'b'}, {3: 'three'})]
    assert rows(cql, "SELECT m[3], s['b'] FROM %s WHERE p = 1" % t) == [('three', 'b')]
    assert rows(cql, "SELECT m[9] FROM %s WHERE p = 1" % t) == [(None,)]
    cql.execute("UPDATE %s SET m[3] = null WHERE p = 1" % t)
    assert rows(cql, "SELECT m FROM %s WHERE p = 1" % t) == [(None,)]
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET s = s + {null} WHERE p = 1" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (p, m) VALUES (2, {null: 'x'})" % t)
    cql.execute("UPDATE %s SET s = {} WHERE p = 1" % t)
    assert rows(cql, "SELECT s FROM %s WHERE p = 1" % t) == [(None,)]
    assert rows(cql, "SELECT m[1..3] FROM %s WHERE p = 1" % t) == [(None,)]


def test_collection_slice_and_contains(cql, table):
    t = table("(p int, c int, m map<int, text>, s set<int>, PRIMARY KEY (p, c))")
    cql.execute("INSERT INTO %s (p, c, m, s) VALUES (1, 1, {1: 'a', 2: 'b', 3: 'c'}, {1, 5})" % t)
    assert rows(cql, "SELECT m[2..3] FROM %s WHERE p = 1" % t) == [({2: 'b', 3: 'c'},)]
    assert rows(cql, "SELECT m[..1] FROM %s WHERE p = 1" % t) == [({1: 'a'},)]
    assert rows(cql, "SELECT c FROM %s WHERE s CONTAINS 5 ALLOW FILTERING" % t) == [(1,)]
    assert rows(cql, "SELECT c FROM %s WHERE m CONTAINS KEY 3 ALLOW FILTERING" % t) == [(1,)]
    assert rows(cql, "SELECT c FROM %s WHERE m CONTAINS 'b' ALLOW FILTERING" % t) == [(1,)]
    assert rows(cql, "SELECT c FROM %s WHERE m[1] = 'a' ALLOW FILTERING" % t) == [(1,)]


def test_frozen_collections(cql, table):
    t = table("(p frozen<list<int>>, c frozen<set<int>>, m frozen<map<int, int>>, PRIMARY KEY (p, c))")
    cql.execute("INSERT INTO %s (p, c, m) VALUES ([1, 2], {3, 1}, {1: 2})" % t)
    assert rows(cql, "SELECT * FROM %s WHERE p = [1, 2]" % t) == [([1, 2], {1, 3}, {1: 2})]
    assert rows(cql, "SELECT * FROM %s WHERE p = [1, 2] AND c = {1, 3}" % t) == [([1, 2], {1, 3}, {1: 2})]
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET m = m + {3: 4} WHERE p = [1, 2] AND c = {1, 3}" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("UPDATE %s SET m[3] = 4 WHERE p = [1, 2] AND c = {1, 3}" % t)
    with pytest.raises(InvalidRequest):
        cql.execute("CREATE TABLE probe.badkey (p list<int> PRIMARY KEY)")
    t2 = table("(p int PRIMARY KEY, f frozen<list<int>>, m frozen<map<text, int>>)")
    cql.execute("INSERT INTO %s (p, f, m) VALUES (1, [], {})" % t2)
    assert rows(cql, "SELECT f, m FROM %s WHERE p = 1" % t2) == [([], {})]
    assert rows(cql, "SELECT p FROM %s WHERE f CONTAINS 1 ALLOW FILTERING" % t2) == []
    assert rows(cql, "SELECT p FROM %s WHERE f = [] ALLOW FILTERING" % t2) == [(1,)]


def test_nested_collections(cql, table):
    t = table("(p int PRIMARY KEY, m map<text, frozen<list<int>>>, s set<frozen<map<int, int>>>)")
    cql.execute("INSERT INTO %s (p, m, s) VALUES (1, {'a': [1, 2]}, {{1: 2}, {0: 0}})" % t)
    [(m, s)] = rows(cql, "SELECT m, s FROM %s WHERE p = 1" % t)
    assert m == {'a': [1, 2]} and sorted(tuple(x.items()) for x in s) == [((0, 0),), ((1, 2),)]
    with pytest.raises(InvalidRequest):
        cql.execute("CREATE TABLE probe.badnest (p int PRIMARY KEY, m map<int, list<int>>)")


def test_counter_validation(cql, table):
    for schema in ["(id bigint PRIMARY KEY, count counter, things set<text>)"]:
        with pytest.raises(InvalidRequest, match="non counter"):
            cql.execute("CREATE TABLE probe.cv%d %s" % (next(_names), schema))
    for schema in ["(k int PRIMARY KEY, l list<counter>)", "(k int PRIMARY KEY, s set<counter>)",
                   "(k int PRIMARY KEY, m map<text, counter>)"]:
        with pytest.raises(InvalidRequest):
            cql.execute("CREATE TABLE probe.cv%d %s" % (next(_names), schema))
    with pytest.raises(InvalidRequest, match="counter type is not supported for PRIMARY KEY"):
        cql.execute("CREATE TABLE probe.cv%d (a counter, b int, PRIMARY KEY (b, a)) "
                    "WITH CLUSTERING ORDER BY (a desc)" % next(_names))


def test_counter_unset_and_filtering(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, c counter)")
    cql.execute("UPDATE %s SET c = c + 1 WHERE k = 10" % t)
    cql.execute(cql.prepare("UPDATE %s SET c = c + ? WHERE k = 10" % t), [UNSET_VALUE])
    cql.execute(cql.prepare("UPDATE %s SET c = c - ? WHERE k = 10" % t), [UNSET_VALUE])
    assert rows(cql, "SELECT c FROM %s WHERE k = 10" % t) == [(1,)]
    t = table("(k int PRIMARY KEY, a counter, b counter)")
    for i in range(10):
        cql.execute(cql.prepare("UPDATE %s SET a = a + ? WHERE k = ?" % t), [i, i])
    assert sorted(rows(cql, "SELECT k, a FROM %s WHERE a > ? ALLOW FILTERING" % t, 6)) == [(7, 7), (8, 8), (9, 9)]
    assert sorted(rows(cql, "SELECT k FROM %s WHERE a <= ? ALLOW FILTERING" % t, 1)) == [(0,), (1,)]
    assert rows(cql, "SELECT k FROM %s WHERE b = ? ALLOW FILTERING" % t, 1) == []
    with pytest.raises(InvalidRequest, match="Invalid null value for counter increment/decrement"):
        cql.execute("SELECT * FROM %s WHERE b = null ALLOW FILTERING" % t)


def test_counter_batch(cql, table):
    t = table("(userid int, url text, total counter, PRIMARY KEY (userid, url))")
    u = "UPDATE %s SET total = total + 1 WHERE userid = 1 AND url = 'http://foo.com'; " % t
    cql.execute("BEGIN UNLOGGED BATCH " + u * 3 + "APPLY BATCH")
    assert rows(cql, "SELECT total FROM %s WHERE userid = 1" % t) == [(3,)]


def test_static_columns_ported(cql, table):
    t = table("(k int, p int, s int static, v int, PRIMARY KEY (k, p))")
    cql.execute("INSERT INTO %s(k, s) VALUES (0, 42)" % t)
    [(s, wt)] = rows(cql, "SELECT s, writetime(s) FROM %s WHERE k=0" % t)
    assert s == 42 and wt > 0
    cql.execute("INSERT INTO %s (k, p, s, v) VALUES (0, 0, 12, 0)" % t)
    cql.execute("INSERT INTO %s (k, p, s, v) VALUES (0, 1, 24, 1)" % t)
    assert rows(cql, "SELECT * FROM %s WHERE k=0 AND p IN (0, 1)" % t) == [(0, 0, 24, 0), (0, 1, 24, 1)]
    assert rows(cql, "SELECT DISTINCT s FROM %s WHERE k=0" % t) == [(24,)]
    assert rows(cql, "SELECT s FROM %s WHERE k=0" % t) == [(24,), (24,)]
    assert rows(cql, "SELECT p, s FROM %s WHERE k=0 AND p=1" % t) == [(1, 24)]
    cql.execute("DELETE FROM %s WHERE k=0 AND p=0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 1, 24, 1)]
    cql.execute("DELETE s FROM %s WHERE k=0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 1, None, 1)]
    cql.execute("ALTER TABLE %s ADD s2 int static" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 1, None, None, 1)]
    cql.execute("INSERT INTO %s (k, p, s2, v) VALUES(0, 2, 42, 2)" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 1, None, 42, 1), (0, 2, None, 42, 2)]
    cql.execute("ALTER TABLE %s DROP s2" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 1, None, 1), (0, 2, None, 2)]


def test_static_distinct_limit_index(cql, table):
    t = table("(k int, p int, s int static, PRIMARY KEY (k, p))")
    cql.execute("INSERT INTO %s (k, p) VALUES (1, 1)" % t)
    cql.execute("INSERT INTO %s (k, p) VALUES (1, 2)" % t)
    assert rows(cql, "SELECT DISTINCT k, s FROM %s" % t) == [(1, None)]
    assert rows(cql, "SELECT DISTINCT s FROM %s WHERE k=1" % t) == [(None,)]
    assert rows(cql, "SELECT DISTINCT s FROM %s WHERE k=2" % t) == []
    with pytest.raises(InvalidRequest):
        cql.execute("SELECT DISTINCT s FROM %s" % t)
    t = table("(k int, s int static, v int, PRIMARY KEY (k, v))")
    cql.execute("INSERT INTO %s (k, s) VALUES(0, 42)" % t)
    for i in range(4):
        cql.execute("INSERT INTO %s(k, v) VALUES(0, %d)" % (t, i))
    assert rows(cql, "SELECT * FROM %s WHERE k = 0 LIMIT 2" % t) == [(0, 0, 42), (0, 1, 42)]
    t = table("(pkey text, ckey text, value text, static_value text static, PRIMARY KEY (pkey, ckey))")
    cql.execute("INSERT INTO %s (pkey, static_value) VALUES ('partition1', 'static value')" % t)
    cql.execute("INSERT INTO %s (pkey, ckey, value) VALUES('partition1', '', 'value')" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [("partition1", "", "static value", "value")]
    t = table("(bar int, PRIMARY KEY (bar))")
    with pytest.raises(InvalidRequest):
        cql.execute("ALTER TABLE %s ADD bar2 text static" % t)
    t = table("(k int, p int, s int static, v int, PRIMARY KEY (k, p))")
    cql.execute("CREATE INDEX ON %s (v)" % t)
    cql.execute("INSERT INTO %s (k, p, s, v) VALUES (0, 0, 42, 1)" % t)
    cql.execute("INSERT INTO %s (k, p, v) VALUES (0, 1, 1)" % t)
    cql.execute("INSERT INTO %s (k, p, v) VALUES (0, 2, 2)" % t)
    deadline = time.time() + 10
    while len(rows(cql, "SELECT p FROM %s WHERE v = 1" % t)) < 2 and time.time() < deadline:
        time.sleep(0.1)
    assert rows(cql, "SELECT * FROM %s WHERE v = 1" % t) == [(0, 0, 42, 1), (0, 1, 42, 1)]
    assert rows(cql, "SELECT s FROM %s WHERE v = 1" % t) == [(42,), (42,)]


def test_tuples_ported(cql, table):
    import datetime
    for vt in ["frozen<tuple<int, text, double>>", "tuple<int, text, double>"]:
        t = table("(k int PRIMARY KEY, t %s)" % vt)
        ins = cql.prepare("INSERT INTO %s (k, t) VALUES (?, ?)" % t)
        cql.execute(ins, [2, (5, None, 3.4)])
        assert rows(cql, "SELECT * FROM %s WHERE k=2" % t) == [(2, (5, None, 3.4))]
        cql.execute(ins, [3, (5, "bar")])
        assert rows(cql, "SELECT * FROM %s WHERE k=3" % t) == [(3, (5, "bar", None))]
    t = table("(k int PRIMARY KEY, t frozen<tuple<int, tuple<text, double>>>)")
    cql.execute(cql.prepare("INSERT INTO %s (k, t) VALUES (?, ?)" % t), [0, (3, ("foo", 3.4))])
    assert rows(cql, "SELECT t FROM %s" % t) == [((3, ("foo", 3.4)),)]
    t = table("(t frozen<tuple<int, text>> PRIMARY KEY)")
    cql.execute(cql.prepare("INSERT INTO %s (t) VALUES (?)" % t), [(3, "foo")])
    assert rows(cql, "SELECT * FROM %s" % t) == [((3, "foo"),)]
    t = table("(k int, t frozen<tuple<int, text>>, PRIMARY KEY (k, t))")
    ins = cql.prepare("INSERT INTO %s (k, t) VALUES (?, ?)" % t)
    for v in [(5, "bar"), (3, "foo"), (6, "bar"), (5, "foo")]:
        cql.execute(ins, [0, v])
    assert [r[1] for r in rows(cql, "SELECT * FROM %s" % t)] == [(3, "foo"), (5, "bar"), (5, "foo"), (6, "bar")]
    t = table("(k int PRIMARY KEY, t frozen<tuple<int, text, double>>)")
    with pytest.raises(InvalidRequest, match="Invalid tuple literal for t: too many elements. "
                       "Type frozen<tuple<int, text, double>> expects 3 but got 4"):
        cql.execute("INSERT INTO %s (k, t) VALUES (0, (2, 'foo', 3.1, 'bar'))" % t)
    t = table("(k int PRIMARY KEY, t frozen<tuple<int, tuple<int, text, double>>>)")
    with pytest.raises(InvalidRequest, match="Invalid tuple literal for t: component 1 is not of type "
                       "frozen<tuple<int, text, double>>"):
        cql.execute("INSERT INTO %s (k, t) VALUES (0, (1, (1, '1', 1.0, 1)))" % t)
    t = table("(id int, tdemo frozen<tuple<timestamp, varchar>>, primary key (id, tdemo)) "
              "with clustering order by (tdemo desc)")
    cql.execute("INSERT INTO %s (id, tdemo) VALUES (1, ('2017-02-03 03:05+0000','Europe'))" % t)
    assert rows(cql, "SELECT tdemo FROM %s" % t) == [((datetime.datetime(2017, 2, 3, 3, 5, 0), "Europe"),)]
    t = table("(k int, c1 int, c2 text, PRIMARY KEY (k, c1, c2))")
    for c in "abc":
        cql.execute("INSERT INTO %s (k, c1, c2) VALUES (0, 0, '%s')" % (t, c))
    assert rows(cql, "SELECT * FROM %s WHERE k=0 AND (c1, c2) IN ((0, 'b'), (0, 'c'))" % t) == [(0, 0, "b"), (0, 0, "c")]


def test_tuple_from_string(cql, table):
    t = table("(k int, c int, t frozen<tuple<int, text>>, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, t) VALUES (0, 0, '0:0')" % t)
    cql.execute("INSERT INTO %s (k, c, t) VALUES (0, 2, '1')" % t)
    cql.execute("INSERT INTO %s (k, c, t) VALUES (0, 3, '1:1\\:1')" % t)
    cql.execute("INSERT INTO %s (k, c, t) VALUES (0, 4, '@:1')" % t)
    assert [r[2] for r in rows(cql, "SELECT * FROM %s" % t)] == [(0, "0"), (1, None), (1, "1:1"), (None, "1")]
    with pytest.raises(InvalidRequest, match="Invalid tuple literal: too many elements. "
                       "Type frozen<tuple<int, text>> expects 2 but got 3"):
        cql.execute("INSERT INTO %s(k, c, t) VALUES (1, 0, '1:2:3')" % t)


def test_tuple_from_string_components(cql, table):
    t = table("(k int PRIMARY KEY, t frozen<tuple<int, text, frozen<tuple<int, int>>>>)")
    cql.execute("INSERT INTO %s (k, t) VALUES (0, '1:a\\@b:2\\:3')" % t)
    assert rows(cql, "SELECT t FROM %s" % t) == [((1, "a@b", (2, 3)),)]
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (k, t) VALUES (1, 'x:a')" % t)
    stmt = cql.prepare("INSERT INTO %s (k, t) VALUES (?, '5:q')" % t)
    cql.execute(stmt, [2])
    assert rows(cql, "SELECT t FROM %s WHERE k = 2" % t) == [((5, "q", None),)]


def _udt(cql, fields):
    name = "ut%d" % next(_names)
    cql.execute("CREATE TYPE probe.%s %s" % (name, fields))
    return name


def test_udt_invalid_statements(cql, table):
    ut = _udt(cql, "(a int)")
    bad = [("Invalid non-frozen user-defined type.*for PRIMARY KEY.*k",
            "(k %s PRIMARY KEY , v int)" % ut),
           ("Invalid non-frozen user-defined type.*for PRIMARY KEY.*k2",
            "(k1 int, k2 %s, v int, PRIMARY KEY (k1, k2))" % ut),
           ("Non-frozen.*inside collections: list<probe.%s>|Non-frozen.*inside collections: list<%s>" % (ut, ut),
            "(k int PRIMARY KEY, v list<%s>)" % ut),
           ("Non-frozen.*inside collections: map<(probe.)?%s, int>" % ut,
            "(k int PRIMARY KEY, v map<%s, int>)" % ut)]
    for msg, schema in bad:
        with pytest.raises(InvalidRequest, match=msg):
            cql.execute("CREATE TABLE probe.wrong %s" % schema)
    with pytest.raises(InvalidRequest, match="A user type cannot contain non-frozen"):
        cql.execute("CREATE TYPE probe.wrong (a int, b %s)" % ut)
    with pytest.raises(InvalidRequest, match="Statement on keyspace probe cannot refer to a user type in "
                       "keyspace otherkeyspace; user types can only be used in the keyspace they are defined in"):
        cql.execute("CREATE TABLE probe.wrong (k int PRIMARY KEY, v frozen<otherKeyspace.myType>)")
    with pytest.raises(InvalidRequest, match="Unknown type probe.unknowntype"):
        cql.execute("CREATE TABLE probe.wrong (k int PRIMARY KEY, v frozen<probe.unknownType>)")
    t = table("(a int PRIMARY KEY, b frozen<%s>, c int)" % ut)
    for msg, stmt in [("Frozen UDT column b does not support field deletion", "DELETE b.a FROM %s WHERE a = 0"),
                      ("Invalid.*deletion operation for non-UDT column c", "DELETE c.a FROM %s WHERE a = 0"),
                      (r"Invalid operation \(b.a = 0\) for frozen UDT column b", "UPDATE %s SET b.a = 0 WHERE a = 0"),
                      (r"Invalid operation \(c.a = 0\) for non-UDT column c", "UPDATE %s SET c.a = 0 WHERE a = 0")]:
        with pytest.raises(InvalidRequest, match=msg):
            cql.execute(stmt % t)
    t = table("(a int PRIMARY KEY, b %s, c int)" % ut)
    for msg, stmt in [("UDT column b does not have a field named foo", "DELETE b.foo FROM %s WHERE a = 0"),
                      ("UDT column b does not have a field named foo", "UPDATE %s SET b.foo = 0 WHERE a = 0"),
                      ("Unknown field 'foo' in value of user defined type",
                       "INSERT INTO %s (a, b, c) VALUES (0, {a: 0, foo: 0}, 0)")]:
        with pytest.raises(InvalidRequest, match=msg):
            cql.execute(stmt % t)
    ut2 = _udt(cql, "(bar int, foo list<int>)")
    with pytest.raises(InvalidRequest, match="Non-frozen UDTs with nested non-frozen collections are not supported"):
        cql.execute("CREATE TABLE probe.wrong (k int PRIMARY KEY, v %s)" % ut2)


def test_udt_nested_and_alter(cql, table):
    ut1 = _udt(cql, "(a int, b int)")
    ut2 = _udt(cql, "(j frozen<%s>, k int)" % ut1)
    t = table("(x int PRIMARY KEY, y set<frozen<%s>>)" % ut2)
    cql.execute("INSERT INTO %s (x, y) VALUES (1, { { k: 1 } })" % t)
    t = table("(x int PRIMARY KEY, y list<frozen<%s>>)" % ut2)
    cql.execute("INSERT INTO %s (x, y) VALUES (1, [ { k: 1 } ])" % t)
    ut3 = _udt(cql, "(x double)")
    t = table("(k int, v frozen<%s>, b boolean static, PRIMARY KEY (k,v))" % ut3)
    cql.execute(cql.prepare("INSERT INTO %s(k, v) VALUES (?, {x:?})" % t), [1, -104.99251])
    cql.execute(cql.prepare("UPDATE %s SET b = ? WHERE k = ?" % t), [True, 1])
    assert rows(cql, "SELECT v.x FROM %s WHERE k = ? AND v = {x:?}" % t, 1, -104.99251) == [(-104.99251,)]
    ut4 = _udt(cql, "(a int, b text)")
    t = table("(k int PRIMARY KEY, v %s)" % ut4)
    cql.execute("INSERT INTO %s (k, v) VALUES (0, {a: 1, b: 'abc'})" % t)
    cql.execute("ALTER TYPE probe.%s RENAME b TO foo" % ut4)
    assert rows(cql, "SELECT v.foo FROM %s" % t) == [("abc",)]
    cql.execute("UPDATE %s SET v.foo = 'def' WHERE k = 0" % t)
    cql.execute("ALTER TYPE probe.%s ADD c int" % ut4)
    [(v,)] = rows(cql, "SELECT v FROM %s" % t)
    assert (v.a, v.foo, v.c) == (1, "def", None)
    assert rows(cql, "SELECT v.c FROM %s" % t) == [(None,)]
    ut5 = _udt(cql, "(a int)")
    t = table("(x int PRIMARY KEY, y map<text, frozen<%s>>)" % ut5)
    cql.execute("INSERT INTO %s (x, y) VALUES(1, {'firstValue': {a: 1}})" % t)
    cql.execute("ALTER TYPE probe.%s ADD b int" % ut5)
    cql.execute("UPDATE %s SET y['secondValue'] = {a: 2, b: 2} WHERE x = 1" % t)
    [(y,)] = rows(cql, "SELECT y FROM %s" % t)
    assert {k: (u.a, u.b) for k, u in y.items()} == {"firstValue": (1, None), "secondValue": (2, 2)}


def test_udt_unset(cql, table):
    from cassandra.query import UNSET_VALUE
    ut = _udt(cql, "(x int, y int)")
    ut2 = _udt(cql, "(a frozen<%s>)" % ut)
    t = table("(k int PRIMARY KEY, v frozen<%s>, z frozen<%s>)" % (ut, ut2))
    with pytest.raises(InvalidRequest, match="unset"):
        cql.execute(cql.prepare("INSERT INTO %s (k, v) VALUES (10, {x:?, y:?})" % t), [1, UNSET_VALUE])
    with pytest.raises(InvalidRequest, match="unset"):
        cql.execute(cql.prepare("INSERT INTO %s (k, v, z) VALUES (10, {x:?, y:?}, {a:{x: ?, y: ?}})" % t),
                    [1, 1, 1, UNSET_VALUE])


def test_udt_literal_markers_typed(cql, table):
    from cassandra import cqltypes
    ut = _udt(cql, "(x double, y int)")
    t = table("(k int PRIMARY KEY, v frozen<%s>)" % ut)
    p = cql.prepare("INSERT INTO %s (k, v) VALUES (?, {x: ?, y: ?})" % t)
    assert [(m.name, m.type) for m in p.column_metadata] == [
        ("k", cqltypes.Int32Type), ("v.x", cqltypes.DoubleType), ("v.y", cqltypes.Int32Type)]
    cql.execute(p, [1, 2.5, 3])
    [(v,)] = rows(cql, "SELECT v FROM %s WHERE k = 1" % t)
    assert (v.x, v.y) == (2.5, 3)


def _ex(cql, stmt, *args):
    return cql.execute(cql.prepare(stmt), args) if args else cql.execute(stmt)


def test_collections_ported(cql, table):
    t = table("(k int PRIMARY KEY, m map<text, text>)")
    _ex(cql, "INSERT INTO %s(k, m) VALUES (?, ?)" % t, 0, {"k1": "v1", "k2": "v2", "k3": "v3"})
    _ex(cql, "UPDATE %s SET m = m - ? WHERE k = ?" % t, {"k2"}, 0)
    _ex(cql, "UPDATE %s SET m = m + ?, m = m - ? WHERE k = ?" % t, {"k4": "v4"}, {"k3"}, 0)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, {"k1": "v1", "k4": "v4"})]
    t = table("(k int PRIMARY KEY, l list<text>, s set<text>, m map<text, text>)")
    for stmt in ["UPDATE %s SET l = l + { 'a', 'b' } WHERE k = 0", "UPDATE %s SET l = l - { 'a', 'b' } WHERE k = 0",
                 "UPDATE %s SET l = l + { 'a': 'b', 'c': 'd' } WHERE k = 0",
                 "UPDATE %s SET s = s + [ 'a', 'b' ] WHERE k = 0", "UPDATE %s SET s = s - [ 'a', 'b' ] WHERE k = 0",
                 "UPDATE %s SET s = s + { 'a': 'b', 'c': 'd'} WHERE k = 0",
                 "UPDATE %s SET m = m + [ 'a', 'b' ] WHERE k = 0", "UPDATE %s SET m = m - [ 'a', 'b' ] WHERE k = 0",
                 "UPDATE %s SET m = m + { 'a', 'b' } WHERE k = 0",
                 "UPDATE %s SET m = m - { 'a': 'b', 'c': 'd' } WHERE k = 0"]:
        with pytest.raises(InvalidRequest):
            cql.execute(stmt % t)


def test_sets_maps_lists_ported(cql, table):
    t = table("(k int PRIMARY KEY, s set<text>)")
    _ex(cql, "INSERT INTO %s(k, s) VALUES (0, ?)" % t, {"v1", "v2", "v3", "v4"})
    _ex(cql, "DELETE s[?] FROM %s WHERE k = 0" % t, "v1")
    _ex(cql, "UPDATE %s SET s = ? WHERE k = 0" % t, {"v6", "v5"})
    _ex(cql, "UPDATE %s SET s = s + ? WHERE k = 0" % t, {"v7"})
    _ex(cql, "UPDATE %s SET s = s - ? WHERE k = 0" % t, {"v6", "v5"})
    _ex(cql, "UPDATE %s SET s += ? WHERE k = 0" % t, {"v5"})
    _ex(cql, "UPDATE %s SET s += {'v6'} WHERE k = 0" % t)
    assert rows(cql, "SELECT s FROM %s WHERE k = 0" % t) == [({"v5", "v6", "v7"},)]
    _ex(cql, "UPDATE %s SET s -= ? WHERE k = 0" % t, {"v5"})
    _ex(cql, "UPDATE %s SET s -= {'v6'} WHERE k = 0" % t)
    assert rows(cql, "SELECT s FROM %s WHERE k = 0" % t) == [({"v7"},)]
    _ex(cql, "DELETE s[?] FROM %s WHERE k = 0" % t, "v7")
    _ex(cql, "DELETE s[?] FROM %s WHERE k = 0" % t, "v7")
    assert rows(cql, "SELECT s FROM %s WHERE k = 0" % t) == [(None,)]
    t = table("(k int PRIMARY KEY, m map<text, int>)")
    with pytest.raises(InvalidRequest, match="map"):
        cql.execute("UPDATE %s SET m = m + {1} WHERE k = 0;" % t)
    with pytest.raises(InvalidRequest, match="map"):
        cql.execute("UPDATE %s SET m = m - {'v1': 1} WHERE k = 0" % t)
    _ex(cql, "INSERT INTO %s(k, m) VALUES (0, ?)" % t, {"v1": 1, "v2": 2})
    _ex(cql, "UPDATE %s SET m[?] = ?, m[?] = ? WHERE k = 0" % t, "v3", 3, "v4", 4)
    _ex(cql, "DELETE m[?] FROM %s WHERE k = 0" % t, "v1")
    assert rows(cql, "SELECT m FROM %s WHERE k = 0" % t) == [({"v2": 2, "v3": 3, "v4": 4},)]
    _ex(cql, "UPDATE %s SET m = ? WHERE k = 0" % t, {"v6": 6, "v5": 5})
    _ex(cql, "UPDATE %s SET m += ? WHERE k = 0" % t, {"v7": 7})
    _ex(cql, "UPDATE %s SET m -= ? WHERE k = 0" % t, {"v7"})
    _ex(cql, "UPDATE %s SET m += {'v7': 7} WHERE k = 0" % t)
    _ex(cql, "UPDATE %s SET m -= {'v7'} WHERE k = 0" % t)
    assert rows(cql, "SELECT m FROM %s WHERE k = 0" % t) == [({"v5": 5, "v6": 6},)]
    _ex(cql, "UPDATE %s SET m = {} WHERE k = 0" % t)
    assert rows(cql, "SELECT m FROM %s WHERE k = 0" % t) == [(None,)]
    t = table("(k int PRIMARY KEY, l list<text>)")
    _ex(cql, "INSERT INTO %s(k, l) VALUES (0, ?)" % t, ["v1", "v2", "v3"])
    _ex(cql, "DELETE l[?] FROM %s WHERE k = 0" % t, 1)
    _ex(cql, "UPDATE %s SET l[?] = ? WHERE k = 0" % t, 1, "v4")
    assert rows(cql, "SELECT l FROM %s WHERE k = 0" % t) == [(["v1", "v4"],)]
    _ex(cql, "UPDATE %s SET l = ? WHERE k = 0" % t, ["v6", "v5"])
    _ex(cql, "UPDATE %s SET l = l + ? WHERE k = 0" % t, ["v7", "v8"])
    _ex(cql, "UPDATE %s SET l = ? + l WHERE k = 0" % t, ["v9"])
    _ex(cql, "UPDATE %s SET l = l - ? WHERE k = 0" % t, ["v5", "v8"])
    _ex(cql, "UPDATE %s SET l += ? WHERE k = 0" % t, ["v8"])
    _ex(cql, "UPDATE %s SET l -= ? WHERE k = 0" % t, ["v6", "v8"])
    assert rows(cql, "SELECT l FROM %s WHERE k = 0" % t) == [(["v9", "v7"],)]
    _ex(cql, "DELETE l FROM %s WHERE k = 0" % t)
    with pytest.raises(InvalidRequest, match="Attempted to delete an element from a list which is null"):
        cql.execute("DELETE l[0] FROM %s WHERE k=0 " % t)
    with pytest.raises(InvalidRequest, match="Attempted to set an element on a list which is null"):
        _ex(cql, "UPDATE %s SET l[0] = ? WHERE k=0" % t, "v10")
    _ex(cql, "UPDATE %s SET l = l + ? WHERE k = 0" % t, ["v1", "v2", "v1", "v2", "v1", "v2"])
    _ex(cql, "UPDATE %s SET l = l - ? WHERE k=0" % t, ["v1", "v2"])
    assert rows(cql, "SELECT l FROM %s WHERE k = 0" % t) == [(None,)]


def test_collections_unset(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, m map<text, text>)")
    _ex(cql, "INSERT INTO %s (k, m) VALUES (10, ?)" % t, {"k": "v"})
    _ex(cql, "INSERT INTO %s (k, m) VALUES (10, ?)" % t, UNSET_VALUE)
    _ex(cql, "UPDATE %s SET m['k'] = ? WHERE k = 10" % t, UNSET_VALUE)
    assert rows(cql, "SELECT m FROM %s WHERE k = 10" % t) == [({"k": "v"},)]
    with pytest.raises(InvalidRequest, match="unset"):
        _ex(cql, "UPDATE %s SET m[?] = 'foo' WHERE k = 10" % t, UNSET_VALUE)
    with pytest.raises(InvalidRequest, match="unset"):
        _ex(cql, "DELETE m[?] FROM %s WHERE k = 10" % t, UNSET_VALUE)
    t = table("(k int PRIMARY KEY, l list<text>)")
    _ex(cql, "INSERT INTO %s (k, l) VALUES (10, ?)" % t, ["foo", "foo"])
    _ex(cql, "INSERT INTO %s (k, l) VALUES (10, ?)" % t, UNSET_VALUE)
    _ex(cql, "UPDATE %s SET l[1] = ? WHERE k = 10" % t, UNSET_VALUE)
    with pytest.raises(InvalidRequest, match="unset value"):
        _ex(cql, "UPDATE %s SET l[?] = 'foo' WHERE k = 10" % t, UNSET_VALUE)
    _ex(cql, "DELETE l[?] FROM %s WHERE k = 10" % t, UNSET_VALUE)
    _ex(cql, "UPDATE %s SET l = l - ? WHERE k = 10" % t, UNSET_VALUE)
    assert rows(cql, "SELECT l FROM %s WHERE k = 10" % t) == [(["foo", "foo"],)]
    with pytest.raises(InvalidRequest, match="unset value"):
        _ex(cql, "SELECT * FROM %s WHERE k IN ?" % t, UNSET_VALUE)
    t = table("(k int PRIMARY KEY, s set<text>)")
    _ex(cql, "INSERT INTO %s (k, s) VALUES (10, ?)" % t, {"bar", "baz", "foo"})
    _ex(cql, "UPDATE %s SET s = s + ? WHERE k = 10" % t, UNSET_VALUE)
    _ex(cql, "UPDATE %s SET s = s - ? WHERE k = 10" % t, UNSET_VALUE)
    assert rows(cql, "SELECT s FROM %s WHERE k = 10" % t) == [({"bar", "baz", "foo"},)]


def test_select_json_names(cql, table):
    t = table("(p int PRIMARY KEY, v int, bigv bigint, a ascii, \"CaseSensitive\" int)")
    cql.execute("INSERT INTO %s (p, v, bigv, a, \"CaseSensitive\") VALUES (1, 17, 34, 'dog', 99) "
                "USING TIMESTAMP 1234" % t)
    cases = {
        'v': '{"v": 17}',
        'count(*)': '{"count": 1}',
        'ttl(v)': '{"ttl(v)": null}',
        'writetime(v)': '{"writetime(v)": 1234}',
        'intAsBlob(v)': '{"system.intasblob(v)": "0x00000011"}',
        'blobasInt(intAsBlob(v))': '{"system.blobasint(system.intasblob(v))": 17}',
        'tojson(v)': '{"system.tojson(v)": "17"}',
        'CAST(v AS FLOAT)': '{"cast(v as float)": 17.0}',
        'v as hello': '{"hello": 17}',
        'v as Hello': '{"hello": 17}',
        'v as "Hello"': '{"\\"Hello\\"": 17}',
        'v as "Hello World!"': '{"\\"Hello World!\\"": 17}',
        'ttl(v) as hi': '{"hi": null}',
        '"CaseSensitive"': '{"\\"CaseSensitive\\"": 99}',
        '"CaseSensitive" as cs': '{"cs": 99}',
        'v, p as xyz': '{"v": 17, "xyz": 1}',
        'v, bigv as xyz, a': '{"v": 17, "xyz": 34, "a": "dog"}',
    }
    for sel, want in cases.items():
        [(got,)] = rows(cql, "SELECT JSON %s FROM %s WHERE p = 1" % (sel, t))
        assert json.loads(got) == json.loads(want), sel


def test_tojson_formats(cql, table):
    import datetime
    t = table("(p int PRIMARY KEY, d double, t time, ts timestamp, tup frozen<tuple<text, int>>)")
    stmt = cql.prepare("INSERT INTO %s (p, d, t, ts, tup) VALUES (?, ?, ?, ?, ?)" % t)
    cql.execute(stmt, [1, 123123.123123, 123, datetime.datetime(2014, 1, 1, 12, 15, 45), ('hello', None)])
    assert rows(cql, "SELECT toJson(d), toJson(t), toJson(ts) FROM %s WHERE p = 1" % t) == [
        ("123123.123123", '"00:00:00.000000123"', '"2014-01-01 12:15:45.000Z"')]
    assert rows(cql, "SELECT JSON tup FROM %s WHERE p = 1" % t) == [('{"tup": ["hello", null]}',)]
    stmt = cql.prepare("INSERT INTO %s (p, ts) VALUES (?, fromJson(?))" % t)
    for j in ['"2014-01-01 12:15:45.000Z"', '"2014-01-01T12:15:45.000Z"',
              '"2014-01-01 12:15:45.000+0000"', '"2014-01-01 12:15:45+0000"']:
        cql.execute(stmt, [2, j])
        assert rows(cql, "SELECT ts FROM %s WHERE p = 2" % t) == [(datetime.datetime(2014, 1, 1, 12, 15, 45),)]


def test_fromjson_map_keys(cql, table):
    t = table("(p int PRIMARY KEY, im map<int, int>, bm map<blob, int>, boolm map<boolean, int>, "
              "dm map<date, int>, inm map<inet, int>)")
    with pytest.raises(FunctionFailure):
        cql.execute("INSERT INTO %s (p, im) VALUES (1, fromJson('{17: 3}'))" % t)
    cql.execute("INSERT INTO %s (p, im) VALUES (1, fromJson('{\"17\": 3}'))" % t)
    cql.execute("INSERT INTO %s (p, bm) VALUES (1, fromJson('{\"0x12ab3e\": 3}'))" % t)
    cql.execute("INSERT INTO %s (p, boolm) VALUES (1, fromJson('{\"true\": 3}'))" % t)
    cql.execute("INSERT INTO %s (p, inm) VALUES (1, fromJson('{\"1.2.3.4\": 3}'))" % t)
    assert rows(cql, "SELECT im, bm, boolm, inm FROM %s WHERE p = 1" % t) == [
        ({17: 3}, {b'\x12\xab\x3e': 3}, {True: 3}, {'1.2.3.4': 3})]


def test_writetime_ttl_simple(cql, table):
    t = table("(pk int, ck int, v int, PRIMARY KEY(pk, ck))")
    for col in ["pk", "ck"]:
        for fn, shown in [("WRITETIME", "writetime"), ("TTL", "ttl")]:
            with pytest.raises(InvalidRequest, match=r"Cannot use selection function %s on PRIMARY KEY part %s"
                               % (shown, col)):
                cql.execute("SELECT %s(%s) FROM %s" % (fn, col, t))
    assert rows(cql, "SELECT WRITETIME(v) FROM %s" % t) == []
    _ex(cql, "INSERT INTO %s (pk, ck, v) VALUES (1, 2, 3) USING TIMESTAMP ?" % t, 1)
    assert rows(cql, "SELECT WRITETIME(v), TTL(v) FROM %s" % t) == [(1, None)]
    _ex(cql, "UPDATE %s USING TIMESTAMP ? AND TTL ? SET v=8 WHERE pk=1 AND ck=2" % t, 2, 10000)
    [(wt, ttl)] = rows(cql, "SELECT WRITETIME(v), TTL(v) FROM %s" % t)
    assert wt == 2 and 9940 < ttl <= 10000
    assert rows(cql, "SELECT pk, WRITETIME(v), v, ck FROM %s" % t) == [(1, 2, 8, 2)]
    t = table("(k int PRIMARY KEY, v frozen<list<int>>)")
    _ex(cql, "INSERT INTO %s (k) VALUES (1) USING TIMESTAMP ? AND TTL ?" % t, 1, 10000)
    assert rows(cql, "SELECT WRITETIME(v), TTL(v) FROM %s" % t) == [(None, None)]
    _ex(cql, "INSERT INTO %s (k, v) VALUES (1, []) USING TIMESTAMP ? AND TTL ?" % t, 1, 10000)
    [(wt, ttl)] = rows(cql, "SELECT WRITETIME(v), TTL(v) FROM %s" % t)
    assert wt == 1 and 9940 < ttl <= 10000
    with pytest.raises(InvalidRequest, match="Element selection is only allowed on sets and maps, but v is a list"):
        cql.execute("SELECT WRITETIME(v[1]) FROM %s" % t)
    cql.execute("TRUNCATE TABLE %s" % t)
    for k, v, ts in [(1, "[1, 2, 3]", 1), (2, "[1, 2]", 2), (4, "[]", 2), (5, "null", 2)]:
        _ex(cql, "INSERT INTO %s (k, v) VALUES (%d, %s) USING TIMESTAMP ?" % (t, k, v), ts)
    assert sorted(rows(cql, "SELECT k, WRITETIME(v) FROM %s" % t)) == [(1, 1), (2, 2), (4, 2), (5, None)]


def test_distinct_token_paging_skips_expired(cql, table):
    t = table("(id int, id2 int, id3 int, val text, PRIMARY KEY ((id, id2), id3))")
    for i in range(110):
        cql.execute("INSERT INTO %s (id, id2, id3, val) VALUES (%d, %d, %d, '%d') %s"
                    % (t, i, i, i, i, "USING TTL 1" if i == 10 else ""))
    time.sleep(2.1)
    q = "SELECT DISTINCT token(id, id2), id, id2 FROM %s" % t
    a = [r.id for r in cql.execute(SimpleStatement(q, fetch_size=100))]
    b = [r.id for r in cql.execute(SimpleStatement(q, fetch_size=200))]
    assert a == b and len(a) == 109 and 10 not in a
    toks = [r[0] for r in cql.execute(SimpleStatement(q, fetch_size=7))]
    assert toks == sorted(toks)
    with pytest.raises(InvalidRequest, match=r"SELECT DISTINCT queries must only request partition key "
                       r"columns and/or static columns \(not val\)"):
        cql.execute("SELECT DISTINCT id, id2, textAsBlob(val) FROM %s" % t)
    with pytest.raises(InvalidRequest, match=r"must request all the partition key columns \(missing id2\)"):
        cql.execute("SELECT DISTINCT intAsBlob(id) FROM %s" % t)


@pytest.mark.parametrize("typ,vals", [
    ("set<int>", [set(), {1, 2, 3}, {4, 5, 6}, {7, 8, 9}]),
    ("list<int>", [[], [1, 2, 3], [4, 5, 6], [7, 8, 9]]),
    ("map<int, int>", [{}, {1: 10, 2: 20, 3: 30}, {4: 40, 5: 50, 6: 60}, {7: 70, 8: 80, 9: 90}])])
@pytest.mark.parametrize("order", ["ASC", "DESC"])
def test_frozen_collection_keys(cql, table, typ, vals, order):
    def norm(v):
        if typ.startswith("set"):
            return set(v or ())
        return list(v or ()) if typ.startswith("list") else dict(v or {})

    def canon(v):
        return repr(sorted(v.items()) if isinstance(v, dict) else sorted(v))
    v1, v2, v3, v4 = vals
    t = table("(k frozen<%s> PRIMARY KEY, v int)" % typ)
    for v in vals:
        _ex(cql, "INSERT INTO %s (k, v) VALUES (?, ?)" % t, v, 0)
    assert sorted(canon(norm(r[0])) for r in rows(cql, "SELECT k FROM %s" % t)) == sorted(canon(v) for v in vals)
    assert [r[1] for r in rows(cql, "SELECT * FROM %s WHERE k=?" % t, v1)] == [0]
    assert len(rows(cql, "SELECT * FROM %s WHERE k IN ?" % t, [v3, v1])) == 2
    with pytest.raises(InvalidRequest):
        cql.execute("INSERT INTO %s (k, v) VALUES (null, 0)" % t)
    t = table("(a int, b frozen<%s>, c int, PRIMARY KEY (a,b)) WITH CLUSTERING ORDER BY (b %s)" % (typ, order))
    for v in vals:
        _ex(cql, "INSERT INTO %s (a, b, c) VALUES (?, ?, ?)" % t, 0, v, 0)
    want = vals if order == "ASC" else vals[::-1]
    assert [norm(r[0]) for r in rows(cql, "SELECT b FROM %s" % t)] == want
    assert [norm(r[1]) for r in rows(cql, "SELECT * FROM %s LIMIT 2" % t)] == want[:2]
    got = [norm(r[1]) for r in rows(cql, "SELECT * FROM %s WHERE a=? AND b IN ?" % t, 0, [v3, v1])]
    assert got == ([v1, v3] if order == "ASC" else [v3, v1])
    assert [norm(r[1]) for r in rows(cql, "SELECT * FROM %s WHERE a=? AND b > ?" % t, 0, v3)] == [v4]
    got = [norm(r[1]) for r in rows(cql, "SELECT * FROM %s WHERE a=? AND b <= ?" % t, 0, v3)]
    assert got == ([v1, v2, v3] if order == "ASC" else [v3, v2, v1])
    assert [norm(r[1]) for r in rows(cql, "SELECT * FROM %s WHERE a=? AND b > ? AND b <= ?" % t, 0, v2, v3)] == [v3]
    _ex(cql, "DELETE FROM %s WHERE a=? AND b=?" % t, 0, v1)
    _ex(cql, "DELETE FROM %s WHERE a=? AND b=?" % t, 0, v3)
    assert [norm(r[1]) for r in rows(cql, "SELECT * FROM %s" % t)] == ([v2, v4] if order == "ASC" else [v4, v2])


def test_insert_json_ported(cql, table):
    t = table("(k int primary key, v int)")
    ins = cql.prepare("INSERT INTO %s JSON ?" % t)
    cql.execute(ins, ['{"v": 1, "k": 0}'])
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 1)]
    for msg, arg in [("JSON values map contains unrecognized column", '{"k": 0, "v": 0, "zzz": 0}'),
                     ("Got null for INSERT JSON values", None), ("Got null for INSERT JSON values", "null"),
                     ("Could not decode JSON string as a map", '"notamap"'),
                     ("Could not decode JSON string as a map", "12.34"),
                     ("Unable to make int from", '{"k": 0, "v": "notanint"}')]:
        with pytest.raises(InvalidRequest, match=msg):
            cql.execute(ins, [arg])
    t = table("(k int primary key, v1 int, v2 int)")
    cql.execute("INSERT INTO %s JSON '{\"k\": 1, \"v1\": 1, \"v2\": 1}'" % t)
    _ex(cql, "INSERT INTO %s JSON ? DEFAULT UNSET" % t, '{"k": 1, "v1": null}')
    assert rows(cql, "SELECT * FROM %s WHERE k=1" % t) == [(1, None, 1)]
    _ex(cql, "INSERT INTO %s JSON ? DEFAULT NULL" % t, '{"k": 1}')
    assert rows(cql, "SELECT * FROM %s WHERE k=1" % t) == [(1, None, None)]


def test_json_case_sensitivity(cql, table):
    t = table("(k int primary key, \"Foo\" int)")
    for j in ['{"k": 0, "\\"Foo\\"": 0}', '{"K": 0, "\\"Foo\\"": 0}', '{"\\"k\\"": 0, "\\"Foo\\"": 0}']:
        _ex(cql, "INSERT INTO %s JSON ?" % t, j)
    assert rows(cql, "SELECT JSON * FROM %s" % t) == [('{"k": 0, "\\"Foo\\"": 0}',)]
    assert rows(cql, "SELECT JSON k, \"Foo\" as foo FROM %s" % t) == [('{"k": 0, "foo": 0}',)]
    assert rows(cql, "SELECT JSON k, \"Foo\" as \"Bar\" FROM %s" % t) == [('{"k": 0, "\\"Bar\\"": 0}',)]
    for j in ['{"k": 0, "foo": 0}', '{"k": 0, "\\"foo\\"": 0}']:
        with pytest.raises(InvalidRequest):
            _ex(cql, "INSERT INTO %s JSON ?" % t, j)
    ut = _udt(cql, "(a int, \"Foo\" int)")
    t = table("(k int primary key, v frozen<%s>)" % ut)
    for j in ['{"k": 0, "v": {"a": 0, "\\"Foo\\"": 0}}', '{"k": 0, "v": {"A": 0, "\\"Foo\\"": 0}}']:
        _ex(cql, "INSERT INTO %s JSON ?" % t, j)
        assert rows(cql, "SELECT JSON k, v FROM %s" % t) == [('{"k": 0, "v": {"a": 0, "\\"Foo\\"": 0}}',)]


def test_json_non_native_map_keys(cql, table):
    ut = _udt(cql, "(a int)")
    cols = {"intmap": "map<int, boolean>", "booleanmap": "map<boolean, boolean>",
            "doublemap": "map<double, boolean>", "decimalmap": "map<decimal, boolean>",
            "tuplemap": "map<frozen<tuple<int, text>>, boolean>", "udtmap": "map<frozen<%s>, boolean>" % ut,
            "setmap": "map<frozen<set<int>>, boolean>", "listmap": "map<frozen<list<int>>, boolean>",
            "textsetmap": "map<frozen<set<text>>, boolean>", "frozensetmap": "frozen<map<set<int>, boolean>>"}
    t = table("(k int PRIMARY KEY, %s)" % ", ".join("%s %s" % kv for kv in cols.items()))
    cases = {"intmap": '{"0": true, "1": false}',
             "booleanmap": '{"false": false, "true": true}',
             "doublemap": '{"1.23": true, "4.56": false}',
             "decimalmap": '{"1.23": true, "4.56": false}',
             "tuplemap": '{"[0, \\"a\\"]": true, "[1, \\"b\\"]": false}',
             "udtmap": '{"{\\"a\\": 0}": true, "{\\"a\\": 1}": false}',
             "setmap": '{"[0, 1, 2]": true, "[3, 4, 5]": false}',
             "listmap": '{"[0, 1, 2]": true, "[3, 4, 5]": false}',
             "textsetmap": '{"[\\"0\\", \\"1\\"]": true, "[\\"3\\", \\"4\\"]": false}',
             "frozensetmap": '{"[0, 1, 2]": true, "[3, 4, 5]": false}'}
    for col, m in cases.items():
        _ex(cql, "INSERT INTO %s JSON ?" % t, '{"k": 0, "%s": %s}' % (col, m))
        assert rows(cql, "SELECT JSON k, %s FROM %s" % (col, t)) == [('{"k": 0, "%s": %s}' % (col, m),)], col


def test_json_tuples_udts_alter_empty(cql, table):
    ut = _udt(cql, "(a int, b frozen<set<int>>, c tuple<int, int>)")
    t = table("(k int PRIMARY KEY, a frozen<%s>, b tuple<int, boolean>)" % ut)
    _ex(cql, "INSERT INTO %s JSON ?" % t, '{"k": 0, "a": {"a": 0, "b": [1, 2, 3], "c": [0, 1]}, "b": [0, true]}')
    assert rows(cql, "SELECT k, a.a, a.b, a.c, b FROM %s" % t) == [(0, 0, {1, 2, 3}, (0, 1), (0, True))]
    _ex(cql, "INSERT INTO %s JSON ?" % t, '{"k": 0, "a": {"a": 0, "b": [1, 2, 3], "c": null}, "b": null}')
    ut = _udt(cql, "(a int)")
    t = table("(k int PRIMARY KEY, a frozen<%s>)" % ut)
    _ex(cql, "INSERT INTO %s JSON ?" % t, '{"k": 0, "a": {"a": 0}}')
    assert rows(cql, "SELECT JSON * FROM %s" % t) == [('{"k": 0, "a": {"a": 0}}',)]
    cql.execute("ALTER TYPE probe.%s ADD b boolean" % ut)
    assert rows(cql, "SELECT JSON * FROM %s" % t) == [('{"k": 0, "a": {"a": 0, "b": null}}',)]
    t = table("(id INT, name TEXT, PRIMARY KEY(id))")
    cql.execute("insert into %s(id, name) VALUES (2, '');" % t)
    cql.execute("insert into %s(id, name) VALUES (3, null);" % t)
    assert sorted(rows(cql, "SELECT JSON * FROM %s" % t)) == [('{"id": 2, "name": ""}',), ('{"id": 3, "name": null}',)]


def test_counter_blob_functions(cql, table):
    t1 = table("(p int PRIMARY KEY, i bigint, v int)")
    t2 = table("(p int PRIMARY KEY, c counter)")
    cql.execute("UPDATE %s SET i = 1000, v = 1000 WHERE p = 1" % t1)
    cql.execute("UPDATE %s SET c = c + 1000 WHERE p = 1" % t2)
    expected = b'\x00\x00\x00\x00\x00\x00\x03\xe8'
    assert rows(cql, "SELECT bigintasblob(i) FROM %s WHERE p=1" % t1) == [(expected,)]
    assert rows(cql, "SELECT counterasblob(c) FROM %s WHERE p=1" % t2) == [(expected,)]
    with pytest.raises(InvalidRequest, match="counterasblob"):
        cql.execute("SELECT counterasblob(i) FROM %s WHERE p=1" % t1)
    assert rows(cql, "SELECT blobascounter(bigintasblob(i)) FROM %s WHERE p=1" % t1) == [(1000,)]
    with pytest.raises(InvalidRequest, match="blobascounter"):
        cql.execute("SELECT blobascounter(intasblob(v)) FROM %s WHERE p=1" % t1)


def _lwt(cql, stmt, *args):
    return [tuple(r) for r in _ex(cql, stmt, *args)]


def test_static_columns_cas(cql, table):
    t = table("(id int, k text, version int static, v text, PRIMARY KEY (id, k))")
    cql.execute("INSERT INTO %s (id, k, v) VALUES (1, 'foo', 'foo')" % t)
    assert _lwt(cql, "INSERT INTO %s (id, k, version) VALUES (1, 'foo', 1) IF NOT EXISTS" % t) == [
        (False, 1, "foo", None, "foo")]
    assert _lwt(cql, "INSERT INTO %s (id, version) VALUES (1, 1) IF NOT EXISTS" % t) == [(True,)]
    assert rows(cql, "SELECT * FROM %s" % t) == [(1, "foo", 1, "foo")]
    cql.execute("DELETE FROM %s WHERE id = 1" % t)
    cql.execute("INSERT INTO %s(id, version) VALUES (0, 0)" % t)
    assert _lwt(cql, "UPDATE %s SET v='foo', version=1 WHERE id=0 AND k='k1' IF version = ?" % t, 0) == [(True,)]
    assert _lwt(cql, "UPDATE %s SET v='bar', version=1 WHERE id=0 AND k='k2' IF version = ?" % t, 0) == [(False, 1)]
    assert _lwt(cql, "UPDATE %s SET v='bar', version=2 WHERE id=0 AND k='k2' IF version = ?" % t, 1) == [(True,)]
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, "k1", 2, "foo"), (0, "k2", 2, "bar")]
    assert _lwt(cql, "UPDATE %s SET version=3 WHERE id=0 IF version=1; " % t) == [(False, 2)]


def test_static_columns_cas_delete_update(cql, table):
    t = table("(pk int, ck int, static_col int static, value int, PRIMARY KEY (pk, ck))")
    for ck, v in [(1, 2), (3, 4), (5, 6), (7, 8)]:
        _ex(cql, "INSERT INTO %s (pk, ck, value) VALUES (?, ?, ?)" % t, 1, ck, v)
    _ex(cql, "INSERT INTO %s (pk, static_col) VALUES (?, ?)" % t, 1, 1)
    assert _lwt(cql, "DELETE static_col FROM %s WHERE pk = ? IF static_col = ?" % t, 1, 2) == [(False, 1)]
    assert _lwt(cql, "DELETE static_col FROM %s WHERE pk = ? IF static_col = ?" % t, 1, 1) == [(True,)]
    assert [r[2] for r in rows(cql, "SELECT pk, ck, static_col, value FROM %s WHERE pk = 1" % t)] == [None] * 4
    _ex(cql, "INSERT INTO %s (pk, static_col) VALUES (?, ?)" % t, 1, 1)
    with pytest.raises(InvalidRequest):
        _ex(cql, "DELETE static_col FROM %s WHERE ck = ? IF static_col = ?" % t, 1, 1)
    with pytest.raises(InvalidRequest, match="Invalid restrictions on clustering columns since the DELETE "
                       "statement modifies only static columns"):
        _ex(cql, "DELETE static_col FROM %s WHERE pk = ? AND ck = ? IF static_col = ?" % t, 1, 1, 1)
    for args in [(1, 1), (1, 2)]:
        with pytest.raises(InvalidRequest, match="(?i)primary key"):
            _ex(cql, "DELETE static_col, value FROM %s WHERE pk = ? IF static_col = ?" % t, *args)
    with pytest.raises(InvalidRequest, match="(?i)primary key"):
        _ex(cql, "DELETE static_col FROM %s WHERE pk = ? IF value = ? AND static_col = ?" % t, 1, 2, 1)
    assert _lwt(cql, "DELETE value FROM %s WHERE pk = ? AND ck = ? IF value = ? AND static_col = ?" % t,
                1, 1, 2, 2) == [(False, 2, 1)]
    assert _lwt(cql, "DELETE value FROM %s WHERE pk = ? AND ck = ? IF value = ? AND static_col = ?" % t,
                1, 1, 2, 1) == [(True,)]
    assert _lwt(cql, "DELETE static_col FROM %s WHERE pk = ? AND ck = ? IF value = ?" % t, 1, 5, 10) == [(False, 6)]
    assert _lwt(cql, "DELETE static_col FROM %s WHERE pk = ? AND ck = ? IF value = ?" % t, 1, 5, 6) == [(True,)]
    assert rows(cql, "SELECT pk, ck, static_col, value FROM %s WHERE pk = 1" % t) == [
        (1, 1, None, None), (1, 3, None, 4), (1, 5, None, 6), (1, 7, None, 8)]
    assert _lwt(cql, "UPDATE %s SET static_col = ? WHERE pk = ? IF static_col = ?" % t, 3, 1, 2) == [(False, None)]
    with pytest.raises(InvalidRequest, match="Invalid restrictions on clustering columns since the UPDATE "
                       "statement modifies only static columns"):
        _ex(cql, "UPDATE %s SET static_col = ? WHERE pk = ? AND ck = ? IF static_col = ?" % t, 3, 1, 1, 1)
    with pytest.raises(InvalidRequest):
        _ex(cql, "UPDATE %s SET static_col = ?, value = ? WHERE pk = ? IF static_col = ?" % t, 3, 1, 1, 2)
