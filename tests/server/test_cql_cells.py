"""Non-frozen collections through the Python driver against `quarry serve --cql`, as
Cassandra keeps them: a cell per list element, set element and map entry, each with its own
write time and TTL. The last write wins per element; USING TTL expires the elements it
wrote and no others; adds from two writers merge; replacing or deleting the collection
removes only the elements older than it; lists keep their order through appends and
prepends and take SET l[i] and DELETE l[i]; writetime() and ttl() of such a column are
refused with Cassandra 4's message. The row's item still carries its expiry for the TTL
sweeper ($expires, read back through the DynamoDB API)."""
import time

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402

from conftest import boto3_client  # noqa: E402


@pytest.fixture
def cql(shared_cql, shared_keyspace):
    session = shared_keyspace("ks")
    session.execute("CREATE TABLE t (k int PRIMARY KEY, m map<text, int>, s set<text>, "
                    "l list<text>, fm frozen<map<text, int>>, v int)")
    session.srv = shared_cql
    return session


def one(session, col, k=1):
    row = session.execute("SELECT %s FROM t WHERE k = %d" % (col, k)).one()
    return None if row is None else getattr(row, col)


def test_map_entries_win_by_their_own_timestamp(cql):
    cql.execute("UPDATE t USING TIMESTAMP 10 SET m['a'] = 1 WHERE k = 1")
    cql.execute("UPDATE t USING TIMESTAMP 5 SET m['a'] = 2 WHERE k = 1")
    assert one(cql, "m") == {"a": 1}
    # an older write of another entry still lands, and a newer one of the first wins
    cql.execute("UPDATE t USING TIMESTAMP 3 SET m['b'] = 3 WHERE k = 1")
    cql.execute("UPDATE t USING TIMESTAMP 11 SET m = m + {'a': 4} WHERE k = 1")
    assert one(cql, "m") == {"a": 4, "b": 3}
    # deleting an entry at a time older than its write leaves it; newer removes it
    cql.execute("DELETE m['a'] FROM t USING TIMESTAMP 9 WHERE k = 1")
    assert one(cql, "m") == {"a": 4, "b": 3}
    cql.execute("DELETE m['b'] FROM t USING TIMESTAMP 9 WHERE k = 1")
    assert one(cql, "m") == {"a": 4}
    # and the tombstone keeps an older write of that entry out
    cql.execute("UPDATE t USING TIMESTAMP 8 SET m['b'] = 5, v = 1 WHERE k = 1")
    assert one(cql, "m") == {"a": 4}
    cql.execute("UPDATE t USING TIMESTAMP 12 SET m = m - {'a'} WHERE k = 1")
    assert one(cql, "m") is None


def test_set_adds_from_two_writers_merge(cql):
    cql.execute("UPDATE t USING TIMESTAMP 10 SET s = s + {'x'} WHERE k = 1")
    cql.execute("UPDATE t USING TIMESTAMP 5 SET s = s + {'y', 'z'} WHERE k = 1")
    assert one(cql, "s") == {"x", "y", "z"}
    cql.execute("UPDATE t USING TIMESTAMP 7 SET s = s - {'x', 'y'} WHERE k = 1")
    assert one(cql, "s") == {"x", "z"}
    cql.execute("DELETE s['z'] FROM t USING TIMESTAMP 8 WHERE k = 1")
    assert one(cql, "s") == {"x"}


def test_replacing_a_collection_removes_only_older_elements(cql):
    cql.execute("UPDATE t USING TIMESTAMP 10 SET m['a'] = 1 WHERE k = 1")
    cql.execute("UPDATE t USING TIMESTAMP 30 SET m['b'] = 2 WHERE k = 1")
    cql.execute("UPDATE t USING TIMESTAMP 20 SET m = {'c': 3} WHERE k = 1")
    assert one(cql, "m") == {"b": 2, "c": 3}
    # an element written before the replacement stays out, one after it goes in
    cql.execute("UPDATE t USING TIMESTAMP 15 SET m['d'] = 4 WHERE k = 1")
    cql.execute("UPDATE t USING TIMESTAMP 25 SET m['e'] = 5 WHERE k = 1")
    assert one(cql, "m") == {"b": 2, "c": 3, "e": 5}
    cql.execute("INSERT INTO t (k, s) VALUES (2, {'p'}) USING TIMESTAMP 40")
    cql.execute("INSERT INTO t (k, s) VALUES (2, {'q'}) USING TIMESTAMP 50")
    assert one(cql, "s", 2) == {"q"}
    # DELETE of the column, and of the row, at a time: the newer elements stay
    cql.execute("DELETE m FROM t USING TIMESTAMP 26 WHERE k = 1")
    assert one(cql, "m") == {"b": 2}
    cql.execute("UPDATE t USING TIMESTAMP 60 SET m['f'] = 6 WHERE k = 1")
    cql.execute("DELETE FROM t USING TIMESTAMP 55 WHERE k = 1")
    assert one(cql, "m") == {"f": 6}


def test_lists_keep_order_and_take_indexes(cql):
    cql.execute("UPDATE t SET l = l + ['b'] WHERE k = 1")
    cql.execute("UPDATE t SET l = l + ['c', 'd'] WHERE k = 1")
    cql.execute("UPDATE t SET l = ['a0', 'a1'] + l WHERE k = 1")
    assert one(cql, "l") == ["a0", "a1", "b", "c", "d"]
    cql.execute("UPDATE t SET l[2] = 'B' WHERE k = 1")
    cql.execute("DELETE l[0] FROM t WHERE k = 1")
    assert one(cql, "l") == ["a1", "B", "c", "d"]
    cql.execute("UPDATE t SET l = l - ['c', 'a1'] WHERE k = 1")
    assert one(cql, "l") == ["B", "d"]
    with pytest.raises(InvalidRequest, match="List index 5 out of bound, list has size 2"):
        cql.execute("UPDATE t SET l[5] = 'x' WHERE k = 1")
    with pytest.raises(InvalidRequest, match="List index 2 out of bound, list has size 2"):
        cql.execute("DELETE l[2] FROM t WHERE k = 1")
    # appends from two writers both stay, in the order they came; an index write older
    # than the element it names loses
    cql.execute("UPDATE t USING TIMESTAMP 100 SET l = ['x'] WHERE k = 2")
    cql.execute("UPDATE t USING TIMESTAMP 300 SET l = l + ['y'] WHERE k = 2")
    cql.execute("UPDATE t USING TIMESTAMP 200 SET l = l + ['z'] WHERE k = 2")
    assert one(cql, "l", 2) == ["x", "y", "z"]
    cql.execute("UPDATE t USING TIMESTAMP 250 SET l[1] = 'Y' WHERE k = 2")
    assert one(cql, "l", 2) == ["x", "y", "z"]
    cql.execute("UPDATE t USING TIMESTAMP 250 SET l[2] = 'Z' WHERE k = 2")
    assert one(cql, "l", 2) == ["x", "y", "Z"]
    # prepared, with bound values
    add = cql.prepare("UPDATE t SET l = l + ? WHERE k = ?")
    cql.execute(add, (["w"], 2))
    assert one(cql, "l", 2) == ["x", "y", "Z", "w"]


def test_ttl_expires_the_elements_it_wrote(cql):
    cql.execute("INSERT INTO t (k, v) VALUES (1, 1)")
    cql.execute("UPDATE t SET m['keep'] = 1, s = s + {'keep'}, l = l + ['keep'] WHERE k = 1")
    cql.execute("UPDATE t USING TTL 1 SET m['go'] = 2, s = s + {'go'}, l = ['first'] + l "
                "WHERE k = 1")
    # a row with only expiring elements (no marker, no other cell) goes with them
    cql.execute("UPDATE t USING TTL 1 SET m['a'] = 1, m['b'] = 2 WHERE k = 2")
    row = cql.execute("SELECT m, s, l FROM t WHERE k = 1").one()
    assert (row.m, row.s, row.l) == ({"keep": 1, "go": 2}, {"go", "keep"}, ["first", "keep"])
    assert one(cql, "m", 2) == {"a": 1, "b": 2}
    ddb = boto3_client(cql.srv.url)
    items = {int(i["v"]["N"]) if "v" in i else 2: i for i in ddb.scan(TableName="ks.t")["Items"]}
    # what a DynamoDB reader sees: the elements as a map, the sweeper's expiry only on the
    # item whose every element expires
    assert items[2]["m"] == {"M": {"a": {"N": "1"}, "b": {"N": "2"}}}
    assert "$expires" in items[2] and "$expires" not in items[1]
    assert int(items[2]["$expires"]["N"]) <= time.time() + 2
    time.sleep(2.2)
    row = cql.execute("SELECT m, s, l FROM t WHERE k = 1").one()
    assert (row.m, row.s, row.l) == ({"keep": 1}, {"keep"}, ["keep"])
    assert cql.execute("SELECT * FROM t WHERE k = 2").one() is None
    # the index of a list counts only live elements
    cql.execute("UPDATE t SET l[0] = 'kept' WHERE k = 1")
    assert one(cql, "l") == ["kept"]


def test_writetime_and_ttl_of_a_non_frozen_collection_are_refused(cql):
    cql.execute("INSERT INTO t (k, m, fm, v) VALUES (1, {'a': 1}, {'a': 1}, 1) "
                "USING TIMESTAMP 1234")
    for fn, name in (("writetime", "writeTime"), ("ttl", "ttl")):
        for col in ("m", "s", "l"):
            with pytest.raises(InvalidRequest) as e:
                cql.execute("SELECT %s(%s) FROM t" % (fn, col))
            assert "Cannot use selection function %s on non-frozen collection %s" % (
                name, col) in str(e.value)
            with pytest.raises(InvalidRequest):
                cql.prepare("SELECT %s(%s) FROM t WHERE k = ?" % (fn, col))
    row = cql.execute("SELECT writetime(fm), writetime(v), ttl(fm) FROM t WHERE k = 1").one()
    assert row[0] == 1234 and row[1] == 1234 and row[2] is None
