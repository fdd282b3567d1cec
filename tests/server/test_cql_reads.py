"""SELECT's reads through the Python driver (Debian python3-cassandra) against `quarry serve
--cql`, each compared with the rows Apache Cassandra returns for it, worked out here from
Cassandra's rules: multi-column slices over clustering columns of mixed ASC/DESC orders
(tuples compared column by column in each type's order, rows answered in clustering
order), and unrestricted scans and token() ranges in the Murmur3 token order of the
partition keys. Not the statements' other behaviour (test_cql_server.py, test_cql_driver.py)."""
import itertools

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra.cluster import Cluster  # noqa: E402
from cassandra.policies import RoundRobinPolicy  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

from cql_raw import cql_port  # noqa: E402


@pytest.fixture
def session(start):
    port = cql_port(start("--cql", "127.0.0.1:0"))
    cluster = Cluster(["127.0.0.1"], port=port, protocol_version=4,
                      load_balancing_policy=RoundRobinPolicy(), connect_timeout=10,
                      control_connection_timeout=10)
    s = cluster.connect()
    s.execute("CREATE KEYSPACE r WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.set_keyspace("r")
    yield s
    cluster.shutdown()


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
