"""SELECT's reads through the Python driver (Debian python3-cassandra) against `quarry serve
--cql`, each compared with the rows Apache Cassandra returns for it, worked out here from
Cassandra's rules: multi-column slices over clustering columns of mixed ASC/DESC orders
(tuples compared column by column in each type's order, rows answered in clustering
order), and unrestricted scans and token() ranges in the Murmur3 token order of the
partition keys. Not the statements' other behaviour (test_cql_server.py, test_cql_driver.py)."""
import itertools
import struct
import time

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra.concurrent import execute_concurrent_with_args  # noqa: E402
from cassandra.metadata import Murmur3Token  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402


@pytest.fixture
def session(shared_keyspace):
    return shared_keyspace("r")


# ---- multi-column slices over mixed clustering orders ----

A, B, C = range(4), range(4), range(3)
GRID = list(itertools.product(A, B, C))


def clustering_order(row):
    """(a ASC, b DESC, c ASC)"""
    a, b, c = row
    return (a, -b, c)


def compare(row, bound):
    """Cassandra's comparison of the row's leading columns with a tuple: -1, 0 or 1."""
    head = tuple(row[:len(bound)])
    return (head > bound) - (head < bound)


@pytest.fixture
def mixed(session):
    session.execute("CREATE TABLE m (pk int, a int, b int, c int, v text, "
                    "PRIMARY KEY (pk, a, b, c)) "
                    "WITH CLUSTERING ORDER BY (a ASC, b DESC, c ASC)")
    insert = session.prepare("INSERT INTO m (pk, a, b, c, v) VALUES (?, ?, ?, ?, ?)")
    for pk in (1, 2):
        for a, b, c in GRID:
            session.execute(insert, (pk, a, b, c, "%d.%d.%d.%d" % (pk, a, b, c)))
    return session


OPS = {">": lambda x: x > 0, ">=": lambda x: x >= 0, "<": lambda x: x < 0, "<=": lambda x: x <= 0}

# (relations after "pk = 1", as (columns, op, values)), ORDER BY DESC or not
SLICES = [
    ([("a, b", ">", (1, 2))], False),
    ([("a, b", ">=", (1, 2))], False),
    ([("a, b", "<", (2, 1))], False),
    ([("a, b", "<=", (2, 1))], True),
    ([("a, b", ">", (1, 2)), ("a, b", "<", (3, 1))], False),
    ([("a, b", ">=", (0, 3)), ("a, b", "<=", (2, 0))], True),
    ([("a, b, c", ">", (1, 2, 0))], False),
    ([("a, b, c", "<=", (2, 1, 1))], True),
    ([("a, b, c", ">", (1, 1, 1)), ("a, b, c", "<", (2, 2, 2))], False),
    ([("a, b, c", ">=", (3, 3, 2))], False),  # the last row alone
    ([("a, b", ">", (2, 0)), ("a, b", "<", (2, 3))], False),  # within a = 2
    ([("a, b", ">", (3, 0)), ("a, b", "<", (1, 0))], False),  # no row
]


def expected(rels, desc, prefix=()):
    rows = [r for r in GRID if tuple(r[:len(prefix)]) == prefix]
    for cols, op, vals in rels:
        first = cols.count(",") + 1
        assert first == len(vals)
        rows = [r for r in rows if OPS[op](compare(r[len(prefix):], vals))]
    rows.sort(key=clustering_order, reverse=desc)
    return rows


def where(rels):
    return " AND ".join("(%s) %s (%s)" % (cols, op, ", ".join(str(v) for v in vals))
                        for cols, op, vals in rels)


@pytest.mark.parametrize("rels,desc", SLICES, ids=[where(r) + (" DESC" if d else "")
                                                   for r, d in SLICES])
def test_a_multi_column_slice_over_mixed_orders(mixed, rels, desc):
    cql = "SELECT a, b, c, v FROM m WHERE pk = 1 AND " + where(rels)
    if desc:
        cql += " ORDER BY a DESC"
    want = expected(rels, desc)
    got = [(r.a, r.b, r.c) for r in mixed.execute(cql)]
    assert got == want
    # paged two rows at a time, across the ranges the slice reads
    paged = [(r.a, r.b, r.c) for r in mixed.execute(SimpleStatement(cql, fetch_size=2))]
    assert paged == want
    assert all(r.v.startswith("1.") for r in mixed.execute(cql))


def test_a_bound_slice_prepared_and_after_an_equal_column(mixed):
    prepared = mixed.prepare("SELECT a, b, c FROM m WHERE pk = ? AND (a, b) > (?, ?) "
                             "AND (a, b) <= (?, ?)")
    got = [(r.a, r.b, r.c) for r in mixed.execute(prepared, (2, 0, 2, 2, 1))]
    assert got == expected([("a, b", ">", (0, 2)), ("a, b", "<=", (2, 1))], False)
    # a = 1 AND (b, c) > (1, 0): b DESC, c ASC after the equal column
    got = [(r.a, r.b, r.c) for r in mixed.execute(
        "SELECT a, b, c FROM m WHERE pk = 2 AND a = 1 AND (b, c) > (1, 0)")]
    assert got == expected([("b, c", ">", (1, 0))], False, prefix=(1,))
    # with an IN on the equal column, each prefix's ranges in turn
    got = [(r.a, r.b, r.c) for r in mixed.execute(
        "SELECT a, b, c FROM m WHERE pk = 2 AND a IN (2, 0) AND (b, c) <= (2, 1)")]
    assert got == (expected([("b, c", "<=", (2, 1))], False, prefix=(0,)) +
                   expected([("b, c", "<=", (2, 1))], False, prefix=(2,)))


def test_a_mixed_order_slice_counts_and_limits(mixed):
    rels = [("a, b", ">", (0, 1)), ("a, b", "<", (3, 2))]
    want = expected(rels, False)
    assert mixed.execute("SELECT COUNT(*) FROM m WHERE pk = 1 AND " + where(rels)).one()[0] \
        == len(want)
    got = [(r.a, r.b, r.c) for r in mixed.execute(
        "SELECT a, b, c FROM m WHERE pk = 1 AND " + where(rels) + " LIMIT 5")]
    assert got == want[:5]


# ---- partitions in token order ----

def token_of(*parts):
    """Murmur3Partitioner's token of a partition key, serialized as Cassandra serializes it:
    one column's bytes, or for several, each as [2-byte length][bytes][0x00]."""
    if len(parts) == 1:
        key = parts[0]
    else:
        key = b"".join(struct.pack(">H", len(p)) + p + b"\0" for p in parts)
    return Murmur3Token.from_key(key).value


def int_key(i):
    return struct.pack(">i", i)


@pytest.fixture
def spread(session):
    """2 000 partitions of one row, and 200 partitions of three rows under a composite key."""
    session.execute("CREATE TABLE p (k int PRIMARY KEY, v int)")
    session.execute("CREATE TABLE q (a text, b int, c int, v int, PRIMARY KEY ((a, b), c))")
    put_p = session.prepare("INSERT INTO p (k, v) VALUES (?, ?)")
    put_q = session.prepare("INSERT INTO q (a, b, c, v) VALUES (?, ?, ?, ?)")
    ok = execute_concurrent_with_args(session, put_p, [(i, i * 7) for i in range(2000)],
                                      concurrency=64)
    assert all(done for done, _ in ok)
    ok = execute_concurrent_with_args(
        session, put_q, [("u%d" % (i % 50), i // 50, c, i) for i in range(200) for c in range(3)],
        concurrency=64)
    assert all(done for done, _ in ok)
    return session


def test_an_unrestricted_select_answers_partitions_in_token_order(spread):
    rows = list(spread.execute(SimpleStatement("SELECT k, token(k) FROM p", fetch_size=300)))
    assert sorted(r.k for r in rows) == list(range(2000))
    tokens = [token_of(int_key(r.k)) for r in rows]
    assert [r.system_token_k for r in rows] == tokens
    assert tokens == sorted(tokens)

    rows = list(spread.execute(SimpleStatement("SELECT a, b, c FROM q", fetch_size=100)))
    assert len(rows) == 600
    keys = [(token_of(r.a.encode(), int_key(r.b)), r.a, r.b, r.c) for r in rows]
    # token order of the partitions, each partition's rows in clustering order
    assert [k[0] for k in keys] == sorted(k[0] for k in keys)
    by_partition = {}
    for t, a, b, c in keys:
        by_partition.setdefault((t, a, b), []).append(c)
    assert all(cs == [0, 1, 2] for cs in by_partition.values())
    assert len(by_partition) == 200
    distinct = [(r.a, r.b) for r in spread.execute("SELECT DISTINCT a, b FROM q")]
    assert distinct == [(a, b) for _, a, b in sorted(by_partition)]


def test_paging_by_token_returns_each_row_once(spread):
    """The way drivers and Spark split a table: token(k) > last token, LIMIT n, again."""
    page = spread.prepare("SELECT k, token(k) FROM p WHERE token(k) > ? LIMIT 170")
    seen, last = [], -(1 << 63)
    while True:
        rows = list(spread.execute(page, (last,)))
        if not rows:
            break
        seen.extend(r.k for r in rows)
        assert all(r.system_token_k > last for r in rows)
        last = rows[-1].system_token_k
    assert sorted(seen) == list(range(2000)) and len(seen) == 2000

    # ranges that split the ring: each partition in exactly one, in token order within it
    bounds = [-(1 << 63)] + [(-(1 << 63)) + i * ((1 << 64) // 7) for i in range(1, 7)] \
        + [(1 << 63) - 1]
    ranged = spread.prepare("SELECT k FROM p WHERE token(k) > ? AND token(k) <= ?")
    ranged.fetch_size = 97
    everything = []
    for lo, hi in zip(bounds, bounds[1:]):
        ks = [r.k for r in spread.execute(ranged, (lo, hi))]
        want = sorted((k for k in range(2000) if lo < token_of(int_key(k)) <= hi),
                      key=lambda k: token_of(int_key(k)))
        assert ks == want
        everything.extend(ks)
    assert sorted(everything) == list(range(2000))


def test_token_ranges_of_a_composite_key(spread):
    tokens = sorted(token_of(("u%d" % (i % 50)).encode(), int_key(i // 50)) for i in range(200))
    lo, hi = tokens[40], tokens[120]
    rows = list(spread.execute(
        "SELECT a, b, c FROM q WHERE token(a, b) >= %d AND token(a, b) < %d" % (lo, hi)))
    got = [token_of(r.a.encode(), int_key(r.b)) for r in rows]
    assert sorted(set(got)) == tokens[40:120] and len(rows) == 80 * 3
    assert got == sorted(got)
    assert list(spread.execute("SELECT a FROM q WHERE token(a, b) > %d AND token(a, b) < %d"
                               % (hi, lo))) == []
    assert spread.execute("SELECT COUNT(*) FROM q WHERE token(a, b) = %d" % tokens[7]).one()[0] \
        == 3


# ---- a selection reads only the cells it names ----
# Rows are read against the table's columns, and the cells no selector, filter or key
# asks for are passed over; what Cassandra answers must not change with the selection.

@pytest.fixture
def narrow(session):
    session.execute("CREATE TABLE n (pk int, ck int, a text, b int, l list<int>, "
                    "m map<text, int>, s int STATIC, PRIMARY KEY (pk, ck))")
    return session


def test_row_alive_through_an_unselected_cell(narrow):
    s = narrow
    # UPDATE leaves no row marker: the row lives by its cell b alone
    s.execute("UPDATE n SET b = 7 WHERE pk = 1 AND ck = 1")
    s.execute("UPDATE n SET l = l + [1, 2] WHERE pk = 1 AND ck = 2")
    s.execute("UPDATE n USING TTL 1 SET a = 'gone' WHERE pk = 1 AND ck = 3")
    # (the row of ck 3 may have expired already on a loaded machine)
    assert [tuple(r) for r in s.execute("SELECT ck FROM n WHERE pk = 1")][:2] == [(1,), (2,)]
    time.sleep(2.1)
    assert [tuple(r) for r in s.execute("SELECT ck FROM n WHERE pk = 1")] == [(1,), (2,)]
    assert [tuple(r) for r in s.execute("SELECT pk, ck, a FROM n WHERE pk = 1")] == \
        [(1, 1, None), (1, 2, None)]
    s.execute("DELETE b FROM n WHERE pk = 1 AND ck = 1")
    s.execute("DELETE l FROM n WHERE pk = 1 AND ck = 2")
    assert list(s.execute("SELECT ck FROM n WHERE pk = 1")) == []


def test_writetime_ttl_and_filters_of_other_columns(narrow):
    s = narrow
    s.execute("INSERT INTO n (pk, ck, a, b) VALUES (2, 1, 'x', 10) USING TIMESTAMP 1000")
    s.execute("INSERT INTO n (pk, ck, a, b) VALUES (2, 2, 'y', 20) USING TIMESTAMP 2000 "
              "AND TTL 600")
    rows = list(s.execute("SELECT ck, writetime(a), ttl(b) FROM n WHERE pk = 2"))
    assert [(r[0], r[1]) for r in rows] == [(1, 1000), (2, 2000)]
    assert rows[0][2] is None and 590 <= rows[1][2] <= 600
    # the filtered column b is not selected
    assert [tuple(r) for r in s.execute(
        "SELECT a FROM n WHERE pk = 2 AND b > 15 ALLOW FILTERING")] == [("y",)]
    # a function of an unselected column, and count of one
    assert [tuple(r) for r in s.execute("SELECT ck, blobasint(intasblob(b)) FROM n "
                                        "WHERE pk = 2")] == [(1, 10), (2, 20)]
    assert s.execute("SELECT count(a) FROM n WHERE pk = 2").one()[0] == 2


def test_static_and_collections_selected_apart(narrow):
    s = narrow
    s.execute("INSERT INTO n (pk, ck, a, s) VALUES (3, 1, 'r', 5)")
    s.execute("UPDATE n SET m = m + {'k': 1}, l = [4] WHERE pk = 3 AND ck = 2")
    assert [tuple(r) for r in s.execute("SELECT ck, s FROM n WHERE pk = 3")] == \
        [(1, 5), (2, 5)]
    assert [tuple(r) for r in s.execute("SELECT m FROM n WHERE pk = 3")] == \
        [(None,), ({"k": 1},)]
    assert [tuple(r) for r in s.execute("SELECT ck, l FROM n WHERE pk = 3 AND ck = 2")] == \
        [(2, [4])]
    assert s.execute("SELECT DISTINCT pk, s FROM n WHERE pk = 3").one() == (3, 5)


def test_dropped_and_readded_column_stays_dropped(narrow):
    s = narrow
    s.execute("INSERT INTO n (pk, ck, a, b) VALUES (4, 1, 'old', 1)")
    s.execute("ALTER TABLE n DROP b")
    s.execute("ALTER TABLE n ADD b int")
    assert [tuple(r) for r in s.execute("SELECT ck, b FROM n WHERE pk = 4")] == [(1, None)]
    assert [tuple(r) for r in s.execute("SELECT ck, a FROM n WHERE pk = 4")] == [(1, "old")]
    s.execute("INSERT INTO n (pk, ck, b) VALUES (4, 1, 2)")
    assert [tuple(r) for r in s.execute("SELECT b FROM n WHERE pk = 4")] == [(2,)]
