"""DELETE's clustering restrictions through the Python driver (Debian python3-cassandra)
against `quarry serve --cql`, each checked against the rows Cassandra 4 leaves: IN on
clustering columns combined with a later slice, several ranges from one multi-column slice
over clustering columns of mixed orders, and the restrictions Cassandra refuses for a
DELETE (a DELETE never filters) or for a conditional one, with its messages. Not DELETE of
cells and collection elements (test_cql_cells.py)."""
import itertools

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402

GRID = list(itertools.product(range(4), range(4)))


@pytest.fixture
def session(shared_keyspace):
    s = shared_keyspace("dl")
    for name, order in (("up", "a ASC, b ASC"), ("mixed", "a ASC, b DESC")):
        s.execute("CREATE TABLE %s (p int, a int, b int, v int, PRIMARY KEY (p, a, b)) "
                  "WITH CLUSTERING ORDER BY (%s)" % (name, order))
    return s


def fill(s, table):
    ins = s.prepare("INSERT INTO %s (p, a, b, v) VALUES (?, ?, ?, ?)" % table)
    for p in (1, 2):
        for a, b in GRID:
            s.execute(ins, (p, a, b, 10 * a + b))


def left(s, table, p=1):
    return sorted((r.a, r.b) for r in s.execute("SELECT a, b FROM %s WHERE p = %d" % (table, p)))


@pytest.mark.parametrize("table", ["up", "mixed"])
@pytest.mark.parametrize("where, gone", [
    ("a IN (1, 3) AND b > 1", lambda a, b: a in (1, 3) and b > 1),
    ("a IN (0, 2) AND b >= 1 AND b < 3", lambda a, b: a in (0, 2) and 1 <= b < 3),
    ("a IN (1, 2)", lambda a, b: a in (1, 2)),
    ("a = 2 AND b IN (0, 3, 9)", lambda a, b: a == 2 and b in (0, 3)),
    ("a IN (0, 3) AND b IN (1, 2)", lambda a, b: a in (0, 3) and b in (1, 2)),
    ("(a, b) > (1, 2)", lambda a, b: (a, b) > (1, 2)),
    ("(a, b) >= (1, 2) AND (a, b) < (3, 1)", lambda a, b: (1, 2) <= (a, b) < (3, 1)),
    ("a = 1 AND (b) <= (2)", lambda a, b: a == 1 and b <= 2),
])
def test_multi_range_deletes(session, table, where, gone):
    s = session
    fill(s, table)
    s.execute("DELETE FROM %s WHERE p = 1 AND %s" % (table, where))
    assert left(s, table) == sorted(x for x in GRID if not gone(*x))
    assert left(s, table, p=2) == sorted(GRID)  # the other partition is untouched


def test_multi_range_delete_with_in_on_the_partition_key(session):
    s = session
    fill(s, "mixed")
    s.execute("DELETE FROM mixed WHERE p IN (1, 2) AND a IN (0, 1) AND (b) > (1)")
    want = sorted(x for x in GRID if not (x[0] in (0, 1) and x[1] > 1))
    assert left(s, "mixed") == want and left(s, "mixed", p=2) == want


@pytest.mark.parametrize("stmt, message", [
    ("DELETE FROM up WHERE p = 1 AND a > 1 AND b > 1",
     'Clustering column "b" cannot be restricted (preceding column "a" is restricted by a '
     'non-EQ relation)'),
    ("DELETE FROM up WHERE p = 1 AND b > 1",
     'PRIMARY KEY column "b" cannot be restricted as preceding column "a" is not restricted'),
    ("DELETE FROM up WHERE p = 1 AND b = 1",
     'PRIMARY KEY column "b" cannot be restricted as preceding column "a" is not restricted'),
    ("DELETE FROM up WHERE p = 1 AND v = 1", "Non PRIMARY KEY columns found in where clause: v"),
    ("DELETE v FROM up WHERE p = 1 AND a IN (1, 2)",
     "Range deletions are not supported for specific columns"),
    ("DELETE FROM up WHERE p = 1 AND a IN (1, 2) AND b = 1 IF EXISTS",
     "IN on the clustering key columns is not supported with conditional deletions"),
    ("DELETE FROM up WHERE p IN (1, 2) AND a = 1 AND b = 1 IF EXISTS",
     "IN on the partition key is not supported with conditional deletions"),
    ("UPDATE up SET v = 1 WHERE p = 1 AND a IN (1, 2) AND b = 1 IF EXISTS",
     "IN on the clustering key columns is not supported with conditional updates"),
    ("UPDATE up SET v = 1 WHERE p IN (1) AND a = 1 AND b = 1 IF v = 2",
     "IN on the partition key is not supported with conditional updates"),
])
def test_refused_deletes_leave_every_row(session, stmt, message):
    s = session
    fill(s, "up")
    with pytest.raises(InvalidRequest) as e:
        s.execute(stmt)
    assert message in str(e.value)
    assert left(s, "up") == sorted(GRID)


# ---- multi-column IN on clustering columns ----

@pytest.fixture
def deep(session):
    s = session
    s.execute("CREATE TABLE deep (p int, a int, b int, c int, v int, PRIMARY KEY (p, a, b, c)) "
              "WITH CLUSTERING ORDER BY (a ASC, b DESC, c ASC)")
    ins = s.prepare("INSERT INTO deep (p, a, b, c, v) VALUES (?, ?, ?, ?, 0)")
    for p in (1, 2):
        for a, b, c in itertools.product(range(3), range(3), range(2)):
            s.execute(ins, (p, a, b, c))
    return s


def deep_rows(s, p=1, where=""):
    return sorted((r.a, r.b, r.c) for r in s.execute(
        "SELECT a, b, c FROM deep WHERE p = %d %s" % (p, where)))


ALL3 = sorted(itertools.product(range(3), range(3), range(2)))


def test_multi_column_in_selects_updates_and_deletes(deep):
    s = deep
    # SELECT: the tuples' rows, in clustering order, with a later slice too
    rows = [(r.a, r.b, r.c) for r in s.execute(
        "SELECT a, b, c FROM deep WHERE p = 1 AND (a, b) IN ((2, 1), (0, 2), (0, 0), (9, 9))")]
    assert rows == [(0, 2, 0), (0, 2, 1), (0, 0, 0), (0, 0, 1), (2, 1, 0), (2, 1, 1)]
    assert deep_rows(s, where="AND a = 1 AND (b, c) IN ((2, 1), (0, 0))") == [(1, 0, 0),
                                                                              (1, 2, 1)]
    assert deep_rows(s, where="AND (a, b) IN ((1, 1), (2, 2)) AND c > 0") == [(1, 1, 1),
                                                                              (2, 2, 1)]
    p = s.prepare("SELECT a, b, c FROM deep WHERE p = ? AND (a, b, c) IN ((?, ?, ?), (?, ?, ?))")
    assert sorted(tuple(r) for r in s.execute(p, (1, 0, 0, 0, 2, 2, 1))) == [(0, 0, 0),
                                                                              (2, 2, 1)]
    # UPDATE: every row a tuple names
    s.execute("UPDATE deep SET v = 7 WHERE p = 1 AND (a, b, c) IN ((1, 1, 1), (2, 0, 0))")
    assert sorted((r.a, r.b, r.c) for r in s.execute("SELECT a, b, c, v FROM deep WHERE p = 1")
                  if r.v == 7) == [(1, 1, 1), (2, 0, 0)]
    # DELETE: the rows of each tuple's prefix, in both partitions of an IN
    s.execute("DELETE FROM deep WHERE p IN (1, 2) AND (a, b) IN ((0, 1), (2, 2))")
    want = [x for x in ALL3 if x[:2] not in ((0, 1), (2, 2))]
    assert deep_rows(s) == want and deep_rows(s, p=2) == want
    s.execute("DELETE FROM deep WHERE p = 1 AND a = 1 AND (b, c) IN ((1, 0), (0, 1))")
    want = [x for x in want if x not in ((1, 1, 0), (1, 0, 1))]
    assert deep_rows(s) == want


@pytest.mark.parametrize("stmt, message", [
    ("DELETE FROM deep WHERE p = 1 AND (b, c) IN ((1, 1))",
     'PRIMARY KEY column "b" cannot be restricted as preceding column "a" is not restricted'),
    ("DELETE FROM deep WHERE p = 1 AND (a, c) IN ((1, 1))",
     "Clustering columns must appear in the PRIMARY KEY order in multi-column relations: "
     "(a, c) IN"),
    ("DELETE FROM deep WHERE p = 1 AND (a, b) IN ((1, 1)) AND a = 1",
     "a cannot be restricted by more than one relation if it includes"),
    ("DELETE FROM deep WHERE p = 1 AND (a, b) IN ((1, 1), (1))",
     "Expected 2 elements in value tuple, but got 1"),
    ("UPDATE deep SET v = 1 WHERE p = 1 AND (a, b) IN ((1, 1))",
     "Some clustering keys are missing: c"),
    ("UPDATE deep SET v = 1 WHERE p = 1 AND (a, b, c) IN ((1, 1, 1)) IF v = 0",
     "IN on the clustering key columns is not supported with conditional updates"),
])
def test_multi_column_in_refusals(deep, stmt, message):
    with pytest.raises(InvalidRequest) as e:
        deep.execute(stmt)
    assert message in str(e.value)
    assert deep_rows(deep) == ALL3
