"""Conditional UPDATEs of static columns through the Python driver against `quarry serve
--cql`, checked against Cassandra 4's answers (cqlpy's port of Cassandra's
InsertUpdateIfConditionStaticsTest.testStaticColumnsCasUpdate): conditions on static columns
read the partition, a condition on a regular column reads the row the clustering key names,
and the restrictions Cassandra refuses. Not conditional DELETEs (test_cql_probe.py)."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    s = shared_cql.session(keyspace="statics_cas")
    yield s
    s.cluster.shutdown()


def ex(cql, stmt, *args):
    return [tuple(r) for r in cql.execute(cql.prepare(stmt), args)]


def partition(cql, t):
    return ex(cql, "SELECT pk, ck, static_col, value FROM %s WHERE pk = ?" % t, 1)


@pytest.fixture
def statics(cql, table):
    t = table("(pk int, ck int, static_col int static, value int, PRIMARY KEY (pk, ck))")
    for pk, ck, v in [(1, 1, 2), (1, 3, 4), (1, 5, 6), (1, 7, 8), (2, 1, 2)]:
        ex(cql, "INSERT INTO %s (pk, ck, value) VALUES (?, ?, ?)" % t, pk, ck, v)
    ex(cql, "INSERT INTO %s (pk, static_col) VALUES (?, ?)" % t, 1, 1)
    return t


def test_condition_on_static_column(cql, statics):
    t = statics
    assert ex(cql, "UPDATE %s SET static_col = ? WHERE pk = ? IF static_col = ?" % t, 3, 1, 2) == [(False, 1)]
    assert ex(cql, "UPDATE %s SET static_col = ? WHERE pk = ? IF static_col = ?" % t, 2, 1, 1) == [(True,)]
    assert partition(cql, t) == [(1, 1, 2, 2), (1, 3, 2, 4), (1, 5, 2, 6), (1, 7, 2, 8)]


def test_refused_restrictions(cql, statics):
    t = statics
    with pytest.raises(InvalidRequest):
        ex(cql, "UPDATE %s SET static_col = ? WHERE ck = ? IF static_col = ?" % t, 3, 1, 1)
    with pytest.raises(InvalidRequest, match="Invalid restrictions on clustering columns since the UPDATE "
                       "statement modifies only static columns"):
        ex(cql, "UPDATE %s SET static_col = ? WHERE pk = ? AND ck = ? IF static_col = ?" % t, 3, 1, 1, 1)
    with pytest.raises(InvalidRequest):
        ex(cql, "UPDATE %s SET static_col = ?, value = ? WHERE pk = ? IF static_col = ?" % t, 3, 1, 1, 2)
    with pytest.raises(InvalidRequest, match="Some clustering keys are missing: ck"):
        ex(cql, "UPDATE %s SET static_col = ?, value = ? WHERE pk = ? IF static_col = ?" % t, 3, 1, 1, 1)
    # a condition on a regular column names a row: its clustering key is needed
    with pytest.raises(InvalidRequest, match="Some clustering keys are missing: ck"):
        ex(cql, "UPDATE %s SET static_col = ? WHERE pk = ? IF value = ? AND static_col = ?" % t, 3, 1, 4, 2)
    assert partition(cql, t) == [(1, 1, 1, 2), (1, 3, 1, 4), (1, 5, 1, 6), (1, 7, 1, 8)]


def test_regular_column_under_both_conditions(cql, statics):
    t = statics
    ex(cql, "UPDATE %s SET static_col = ? WHERE pk = ?" % t, 2, 1)
    stmt = "UPDATE %s SET value = ? WHERE pk = ? AND ck = ? IF value = ? AND static_col = ?" % t
    assert ex(cql, stmt, 3, 1, 1, 3, 2) == [(False, 2, 2)]
    assert ex(cql, stmt, 1, 1, 1, 2, 2) == [(True,)]
    assert partition(cql, t) == [(1, 1, 2, 1), (1, 3, 2, 4), (1, 5, 2, 6), (1, 7, 2, 8)]


def test_static_column_under_condition_on_the_row(cql, statics):
    t = statics
    stmt = "UPDATE %s SET static_col = ? WHERE pk = ? AND ck = ? IF value = ?" % t
    # not applied: the row's value answers, and nothing changes
    assert ex(cql, stmt, 3, 1, 3, 5) == [(False, 4)]
    assert ex(cql, stmt, 3, 1, 1, 1) == [(False, 2)]
    assert partition(cql, t) == [(1, 1, 1, 2), (1, 3, 1, 4), (1, 5, 1, 6), (1, 7, 1, 8)]
    # applied: the partition's static column changes, the row stays as it was
    written = "SELECT writetime(value) FROM %s WHERE pk = ? AND ck = ?" % t
    before = ex(cql, written, 1, 3)
    assert ex(cql, stmt, 9, 1, 3, 4) == [(True,)]
    assert partition(cql, t) == [(1, 1, 9, 2), (1, 3, 9, 4), (1, 5, 9, 6), (1, 7, 9, 8)]
    assert ex(cql, written, 1, 3) == before
    # the other partition keeps no static value
    assert ex(cql, "SELECT static_col FROM %s WHERE pk = ?" % t, 2) == [(None,)]


def test_condition_on_a_missing_row(cql, statics):
    t = statics
    stmt = "UPDATE %s SET static_col = ? WHERE pk = ? AND ck = ? IF value = ?" % t
    assert ex(cql, stmt, 5, 1, 4, 4) == [(False,)]
    assert ex(cql, stmt, 5, 1, 4, None) == [(True,)]
    # the condition read the row; it did not make one
    assert partition(cql, t) == [(1, 1, 5, 2), (1, 3, 5, 4), (1, 5, 5, 6), (1, 7, 5, 8)]
