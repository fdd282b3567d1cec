"""Deletions as timestamped tombstones in `quarry serve --cql`, as Apache Cassandra 4 keeps
them: a write no newer than a deletion covering its row (on a tie the tombstone wins) is
shadowed, for row, partition, range, column, collection and static deletions, through
plain statements, BATCH and LWT, and every kind of read then agrees that the row is gone.
The expected answers are Cassandra's documented semantics (ScyllaDB's cqlpy suite checks
the same against Cassandra). One server serves the run (shared_cql); each test works in its
own table of keyspace tombstones."""
import itertools

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra.query import SimpleStatement  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="tombstones")
    yield session
    session.cluster.shutdown()


def rows(cql, stmt):
    return [tuple(r) for r in cql.execute(stmt)]


# ---- row deletions


@pytest.mark.parametrize("later, shown", [(15, []), (20, []), (25, [(0, 0, 1)])])
def test_row_delete_shadows_older_and_equal_writes(cql, table, later, shown):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 0) USING TIMESTAMP 10" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c = 0" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 1) USING TIMESTAMP %d" % (t, later))
    assert rows(cql, "SELECT * FROM %s WHERE k = 0" % t) == shown
    assert rows(cql, "SELECT * FROM %s WHERE k = 0 AND c = 0" % t) == shown
    assert rows(cql, "SELECT * FROM %s" % t) == shown
    assert rows(cql, "SELECT k, c FROM %s" % t) == [r[:2] for r in shown]
    assert rows(cql, "SELECT COUNT(*) FROM %s" % t) == [(len(shown),)]
    assert rows(cql, "SELECT DISTINCT k FROM %s" % t) == [(0,)] * len(shown)


def test_row_delete_of_a_row_never_written(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 1) USING TIMESTAMP 19" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 20 SET v = 2 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("UPDATE %s USING TIMESTAMP 21 SET v = 3 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, 3)]


def test_row_delete_without_clustering(cql, table):
    t = table("(k int PRIMARY KEY, v int, w int)")
    cql.execute("INSERT INTO %s (k, v, w) VALUES (1, 1, 1) USING TIMESTAMP 10" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 1" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 15 SET v = 2 WHERE k = 1" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("UPDATE %s USING TIMESTAMP 30 SET w = 3 WHERE k = 1" % t)
    # an UPDATE leaves no row marker: the row lives by its cell, v stays deleted
    assert rows(cql, "SELECT * FROM %s" % t) == [(1, None, 3)]
    assert rows(cql, "SELECT writetime(w) FROM %s WHERE k = 1" % t) == [(30,)]


def test_row_delete_keeps_newer_cells(cql, table):
    t = table("(k int, c int, v int, w int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 1) USING TIMESTAMP 10" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 30 SET w = 2 WHERE k = 0 AND c = 0" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, None, 2)]
    cql.execute("UPDATE %s USING TIMESTAMP 19 SET v = 5 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, None, 2)]


def test_delete_without_timestamp_then_insert_with_older(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 0)" % t)
    cql.execute("DELETE FROM %s WHERE k = 0 AND c = 0" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 1) USING TIMESTAMP 1000" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 2)" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, 2)]


# ---- column, collection and static deletions


def test_column_delete_shadows_older_writes_of_that_column(cql, table):
    t = table("(k int, c int, v int, w int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v, w) VALUES (0, 0, 1, 1) USING TIMESTAMP 10" % t)
    cql.execute("DELETE v FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c = 0" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 15 SET v = 2, w = 2 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, None, 2)]
    cql.execute("UPDATE %s USING TIMESTAMP 20 SET v = 3 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT v FROM %s" % t) == [(None,)]
    cql.execute("UPDATE %s USING TIMESTAMP 21 SET v = 4 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT v FROM %s" % t) == [(4,)]


def test_column_delete_of_the_only_cell_is_kept(cql, table):
    # the row has no marker and no other cell: nothing lives, yet the deletion must stay
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("UPDATE %s USING TIMESTAMP 10 SET v = 1 WHERE k = 0 AND c = 0" % t)
    cql.execute("DELETE v FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("UPDATE %s USING TIMESTAMP 15 SET v = 2 WHERE k = 0 AND c = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []


def test_collection_delete(cql, table):
    t = table("(k int PRIMARY KEY, s set<int>, m map<int, int>, l list<int>)")
    cql.execute("INSERT INTO %s (k, s, m, l) VALUES (0, {1}, {1: 1}, [1]) USING TIMESTAMP 10" % t)
    cql.execute("DELETE s, m[1] FROM %s USING TIMESTAMP 20 WHERE k = 0" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 15 SET s = s + {2}, m[1] = 5, m[2] = 2 WHERE k = 0" % t)
    assert rows(cql, "SELECT s, m, l FROM %s" % t) == [(None, {2: 2}, [1])]
    cql.execute("UPDATE %s USING TIMESTAMP 25 SET s = s + {3} WHERE k = 0" % t)
    assert rows(cql, "SELECT s FROM %s" % t) == [({3},)]
    cql.execute("DELETE FROM %s USING TIMESTAMP 30 WHERE k = 0" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 29 SET s = s + {4}, l = l + [4] WHERE k = 0" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []


def test_static_column_delete(cql, table):
    t = table("(k int, c int, s int static, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, s, v) VALUES (0, 0, 1, 1) USING TIMESTAMP 10" % t)
    cql.execute("DELETE s FROM %s USING TIMESTAMP 20 WHERE k = 0" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 15 SET s = 2 WHERE k = 0" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s" % t) == [(0, 0, None, 1)]
    cql.execute("UPDATE %s USING TIMESTAMP 25 SET s = 3 WHERE k = 0" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s" % t) == [(0, 0, 3, 1)]


# ---- partition deletions


def test_partition_delete_shadows_rows_and_statics(cql, table):
    t = table("(k int, c int, s int static, v int, PRIMARY KEY (k, c))")
    for c in range(3):
        cql.execute("INSERT INTO %s (k, c, s, v) VALUES (0, %d, 7, %d) USING TIMESTAMP 10" % (t, c, c))
    cql.execute("INSERT INTO %s (k, c, v) VALUES (1, 0, 0) USING TIMESTAMP 10" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s WHERE k = 0" % t) == []
    # older and equal writes, into rows that were there and rows that were not
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 1, 5) USING TIMESTAMP 15" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 9, 5) USING TIMESTAMP 20" % t)
    cql.execute("UPDATE %s USING TIMESTAMP 19 SET s = 5 WHERE k = 0" % t)
    cql.execute("INSERT INTO %s (k, s) VALUES (0, 6) USING TIMESTAMP 18" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s WHERE k = 0" % t) == []
    assert rows(cql, "SELECT * FROM %s WHERE k = 0 AND c = 9" % t) == []
    assert rows(cql, "SELECT DISTINCT k FROM %s" % t) == [(1,)]
    assert rows(cql, "SELECT DISTINCT k, s FROM %s WHERE k = 0" % t) == []
    assert rows(cql, "SELECT COUNT(*) FROM %s" % t) == [(1,)]
    assert rows(cql, "SELECT k, c FROM %s" % t) == [(1, 0)]
    # newer writes live, without the deleted static value
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 4, 4) USING TIMESTAMP 21" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s WHERE k = 0" % t) == [(0, 4, None, 4)]
    cql.execute("UPDATE %s USING TIMESTAMP 22 SET s = 8 WHERE k = 0" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s WHERE k = 0" % t) == [(0, 4, 8, 4)]


def test_partition_delete_static_only_partition(cql, table):
    t = table("(k int, c int, s int static, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, s) VALUES (0, 1) USING TIMESTAMP 10" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s" % t) == [(0, None, 1, None)]
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0" % t)
    assert rows(cql, "SELECT k, c, s, v FROM %s" % t) == []
    assert rows(cql, "SELECT DISTINCT k FROM %s" % t) == []
    cql.execute("INSERT INTO %s (k, s) VALUES (0, 2) USING TIMESTAMP 15" % t)
    assert rows(cql, "SELECT k, s FROM %s" % t) == []
    assert rows(cql, "SELECT COUNT(*) FROM %s" % t) == [(0,)]


def test_partition_delete_of_a_table_without_statics(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 1, 1) USING TIMESTAMP 19" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    assert rows(cql, "SELECT DISTINCT k FROM %s" % t) == []
    assert rows(cql, "SELECT COUNT(*) FROM %s WHERE k = 0" % t) == [(0,)]
    assert rows(cql, "SELECT token(k) FROM %s WHERE token(k) > -9223372036854775808" % t) == []


# ---- range deletions


def test_range_delete_slices(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    for c in range(8):
        cql.execute("INSERT INTO %s (k, c, v) VALUES (0, %d, %d) USING TIMESTAMP 10" % (t, c, c))
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c > 5" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c >= 1 AND c < 3" % t)
    assert [r[1] for r in rows(cql, "SELECT * FROM %s WHERE k = 0" % t)] == [0, 3, 4, 5]
    # older writes into the ranges, to rows that were there and rows that were not
    for c in (1, 2, 6, 7, 100):
        cql.execute("INSERT INTO %s (k, c, v) VALUES (0, %d, -1) USING TIMESTAMP 20" % (t, c))
        cql.execute("UPDATE %s USING TIMESTAMP 11 SET v = -1 WHERE k = 0 AND c = %d" % (t, c))
    # outside the ranges they live, however old
    for c in (-1, 3, 5):
        cql.execute("INSERT INTO %s (k, c, v) VALUES (0, %d, -2) USING TIMESTAMP 1" % (t, c))
    got = rows(cql, "SELECT c, v FROM %s WHERE k = 0" % t)
    assert got == [(-1, -2), (0, 0), (3, 3), (4, 4), (5, 5)]
    # newer ones live
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 6, 66) USING TIMESTAMP 21" % t)
    assert rows(cql, "SELECT c, v FROM %s WHERE k = 0 AND c > 4" % t) == [(5, 5), (6, 66)]


def test_range_delete_descending_and_prefix(cql, table):
    t = table("(k int, a int, b int, v int, PRIMARY KEY (k, a, b)) "
              "WITH CLUSTERING ORDER BY (a DESC, b ASC)")
    for a in range(3):
        for b in range(3):
            cql.execute("INSERT INTO %s (k, a, b, v) VALUES (0, %d, %d, 0) USING TIMESTAMP 10"
                        % (t, a, b))
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND a = 1" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND a = 2 AND b >= 1" % t)
    keys = lambda: [(r[1], r[2]) for r in rows(cql, "SELECT * FROM %s WHERE k = 0" % t)]  # noqa: E731
    assert keys() == [(2, 0), (0, 0), (0, 1), (0, 2)]
    for a, b in ((1, 0), (1, 7), (2, 1), (2, 5)):
        cql.execute("INSERT INTO %s (k, a, b, v) VALUES (0, %d, %d, 1) USING TIMESTAMP 15" % (t, a, b))
    assert keys() == [(2, 0), (0, 0), (0, 1), (0, 2)]
    cql.execute("INSERT INTO %s (k, a, b, v) VALUES (0, 3, 0, 1) USING TIMESTAMP 15" % t)
    assert keys() == [(3, 0), (2, 0), (0, 0), (0, 1), (0, 2)]
    cql.execute("INSERT INTO %s (k, a, b, v) VALUES (0, 1, 1, 1) USING TIMESTAMP 25" % t)
    assert keys() == [(3, 0), (2, 0), (1, 1), (0, 0), (0, 1), (0, 2)]


def test_range_delete_leaves_statics(cql, table):
    t = table("(k int, c int, s int static, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, s, v) VALUES (0, 1, 1, 1) USING TIMESTAMP 10" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c >= 0" % t)
    # the partition keeps its static row (and so answers one row of it)
    assert rows(cql, "SELECT k, c, s, v FROM %s" % t) == [(0, None, 1, None)]
    cql.execute("UPDATE %s USING TIMESTAMP 15 SET s = 2 WHERE k = 0" % t)
    assert rows(cql, "SELECT s FROM %s WHERE k = 0" % t) == [(2,)]


# ---- BATCH and LWT


def test_batch_delete_then_write_same_timestamp(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("BEGIN BATCH USING TIMESTAMP 10 "
                "DELETE FROM %s WHERE k = 0; "
                "INSERT INTO %s (k, c, v) VALUES (0, 1, 1); "
                "APPLY BATCH" % (t, t))
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("BEGIN BATCH "
                "INSERT INTO %s (k, c, v) VALUES (0, 2, 2) USING TIMESTAMP 5; "
                "INSERT INTO %s (k, c, v) VALUES (0, 3, 3) USING TIMESTAMP 11; "
                "DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND c = 4; "
                "APPLY BATCH" % (t, t, t))
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 3, 3)]
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 4, 4) USING TIMESTAMP 19" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 3, 3)]


def test_lwt_after_delete(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 0)" % t)
    cql.execute("DELETE FROM %s WHERE k = 0 AND c = 0" % t)
    assert list(cql.execute("UPDATE %s SET v = 1 WHERE k = 0 AND c = 0 IF EXISTS" % t))[0][0] is False
    assert list(cql.execute("DELETE FROM %s WHERE k = 0 AND c = 0 IF EXISTS" % t))[0][0] is False
    assert list(cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 2) IF NOT EXISTS" % t))[0][0] is True
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, 2)]
    cql.execute("DELETE FROM %s WHERE k = 0" % t)
    assert list(cql.execute("UPDATE %s SET v = 3 WHERE k = 0 AND c = 0 IF v = 2" % t))[0][0] is False
    assert list(cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 4) IF NOT EXISTS" % t))[0][0] is True
    assert rows(cql, "SELECT * FROM %s" % t) == [(0, 0, 4)]


# ---- reads of every kind


def test_paging_across_tombstones_returns_full_pages(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    ins = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
    for c in range(60):
        cql.execute(ins, (0, c, c))
    cql.execute("DELETE FROM %s WHERE k = 0 AND c >= 5 AND c < 45" % t)
    for c in range(50, 55):
        cql.execute("DELETE FROM %s WHERE k = 0 AND c = %d" % (t, c))
    for stmt in ("SELECT c FROM %s WHERE k = 0" % t, "SELECT c FROM %s" % t):
        res = cql.execute(SimpleStatement(stmt, fetch_size=5))
        first = list(res.current_rows)
        assert [r[0] for r in first] == [0, 1, 2, 3, 4]
        res.fetch_next_page()
        assert [r[0] for r in res.current_rows] == [45, 46, 47, 48, 49]
        res.fetch_next_page()
        assert [r[0] for r in res.current_rows] == [55, 56, 57, 58, 59]
        got = [r[0] for r in cql.execute(SimpleStatement(stmt, fetch_size=3))]
        assert got == list(range(5)) + list(range(45, 50)) + list(range(55, 60))


def test_aggregates_json_writetime_and_token_reads(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    for k in range(4):
        for c in range(3):
            cql.execute("INSERT INTO %s (k, c, v) VALUES (%d, %d, %d) USING TIMESTAMP 10"
                        % (t, k, c, c))
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 1" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 2 AND c = 1" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 3 AND c < 2" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (1, 0, 9) USING TIMESTAMP 15" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (2, 1, 9) USING TIMESTAMP 15" % t)
    assert rows(cql, "SELECT COUNT(*), SUM(v), MAX(v) FROM %s" % t) == [(6, 7, 2)]
    assert rows(cql, "SELECT COUNT(*) FROM %s WHERE k = 1" % t) == [(0,)]
    assert sorted(rows(cql, "SELECT DISTINCT k FROM %s" % t)) == [(0,), (2,), (3,)]
    assert rows(cql, "SELECT k, COUNT(*) FROM %s WHERE k IN (1, 2, 3) GROUP BY k" % t) == [
        (2, 2), (3, 1)]
    assert rows(cql, "SELECT JSON c, v FROM %s WHERE k = 2" % t) == [
        ('{"c": 0, "v": 0}',), ('{"c": 2, "v": 2}',)]
    assert rows(cql, "SELECT c, writetime(v), ttl(v) FROM %s WHERE k = 3" % t) == [(2, 10, None)]
    tokens = rows(cql, "SELECT k, c FROM %s WHERE token(k) >= -9223372036854775808" % t)
    assert sorted(tokens) == [(0, 0), (0, 1), (0, 2), (2, 0), (2, 2), (3, 2)]
    assert rows(cql, "SELECT * FROM %s WHERE k IN (1, 2) AND c = 1" % t) == []
    assert rows(cql, "SELECT c FROM %s WHERE v = 9 ALLOW FILTERING" % t) == []


def test_secondary_index_and_view_hide_shadowed_rows(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("CREATE INDEX ON %s (v)" % t)
    cql.execute("CREATE MATERIALIZED VIEW %s_by_c AS SELECT * FROM %s WHERE k IS NOT NULL AND "
                "c IS NOT NULL PRIMARY KEY (c, k)" % (t, t))
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 7) USING TIMESTAMP 10" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (1, 0, 7) USING TIMESTAMP 10" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 0, 7) USING TIMESTAMP 15" % t)
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 1 AND c = 0" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (1, 0, 7) USING TIMESTAMP 20" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (2, 0, 7) USING TIMESTAMP 15" % t)
    import time
    deadline = time.time() + 10
    while True:
        idx = rows(cql, "SELECT k FROM %s WHERE v = 7" % t)
        view = rows(cql, "SELECT c, k FROM %s_by_c" % t)
        if (idx, view) == ([(2,)], [(0, 2)]) or time.time() > deadline:
            break
        time.sleep(0.1)
    assert idx == [(2,)]
    assert view == [(0, 2)]


def test_tombstones_are_kept_gc_grace_seconds(cql_server):
    # the tombstone's item stays for the sweeper to remove gc_grace_seconds after the
    # deletion, as Cassandra purges it at compaction then; seen in the engine's items
    pytest.importorskip("boto3", reason="python3-boto3 is not installed")
    import time
    from conftest import boto3_client
    srv = cql_server()
    s = srv.session()
    s.execute("CREATE KEYSPACE g WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE g.t (k int, c int, v int, PRIMARY KEY (k, c)) "
              "WITH gc_grace_seconds = 3600")
    s.execute("INSERT INTO g.t (k, c, v) VALUES (0, 0, 0)")
    s.execute("DELETE FROM g.t WHERE k = 0 AND c = 0")
    s.execute("DELETE FROM g.t WHERE k = 1")
    items = boto3_client(srv.url).scan(TableName="g.t")["Items"]
    assert len(items) == 2
    now = time.time()
    for item in items:
        assert abs(int(item["$expires"]["N"]) - (now + 3600)) < 60, item
        # no column of the row: no index or view can see it
        assert not {"k", "c", "v"} & set(item), item
    assert [tuple(r) for r in s.execute("SELECT * FROM g.t")] == []


def test_range_deletions_trimming_a_partition_keep_one_tombstone(cql_server):
    # `DELETE ... WHERE c < x` with x ever larger, the queue pattern: each range holds the
    # last, so the partition keeps one range tombstone, and each deletion rewrites only the
    # rows still live in it, not the tombstones before it
    pytest.importorskip("boto3", reason="python3-boto3 is not installed")
    from conftest import boto3_client
    srv = cql_server("--capacity", "off")
    s = srv.session()
    s.execute("CREATE KEYSPACE q WITH replication = "
              "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    s.execute("CREATE TABLE q.t (k int, c int, v text, PRIMARY KEY (k, c))")
    ins = s.prepare("INSERT INTO q.t (k, c, v) VALUES (?, ?, ?)")
    trim = s.prepare("DELETE FROM q.t WHERE k = ? AND c < ?")
    for c in range(2000):
        s.execute(ins, (0, c, "x" * 100))
        if c % 2:
            s.execute(trim, (0, c))
    assert [tuple(r) for r in s.execute("SELECT c FROM q.t WHERE k = 0")] == [(1999,)]
    s.execute("INSERT INTO q.t (k, c, v) VALUES (0, 10, 'old') USING TIMESTAMP 1")
    assert [tuple(r) for r in s.execute("SELECT c FROM q.t WHERE k = 0")] == [(1999,)]
    ddb = boto3_client(srv.url)
    items = ddb.scan(TableName="q.t", ScanFilter={"$rt": {"ComparisonOperator": "NOT_NULL"}})
    assert len(items["Items"]) == 1
    assert len(items["Items"][0]["$rt"]["L"]) == 1


def test_partition_and_range_deletions_outlive_a_restart(cql_server, tmp_path):
    # a table keeps its partitions' deletions across a restart, and writes after it still
    # look them up (the table's setting that it keeps some is stored, not only known)
    data = tmp_path / "kept"
    srv = cql_server(data=data)
    s = srv.session(keyspace="rs")
    s.execute("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))")
    s.execute("DELETE FROM t USING TIMESTAMP 20 WHERE k = 0")
    s.execute("DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c > 5")
    assert srv.stop() == 0, srv.log()
    srv = cql_server(data=data)
    s = srv.session()
    s.set_keyspace("rs")
    s.execute("INSERT INTO t (k, c, v) VALUES (0, 1, 1) USING TIMESTAMP 15")
    s.execute("INSERT INTO t (k, c, v) VALUES (1, 9, 1) USING TIMESTAMP 15")
    s.execute("INSERT INTO t (k, c, v) VALUES (1, 2, 2) USING TIMESTAMP 15")
    assert [tuple(r) for r in s.execute("SELECT * FROM t")] == [(1, 2, 2)]
    # a table made again under the name keeps none of them
    s.execute("DROP TABLE t")
    s.execute("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))")
    s.execute("INSERT INTO t (k, c, v) VALUES (0, 1, 1) USING TIMESTAMP 15")
    assert [tuple(r) for r in s.execute("SELECT * FROM t")] == [(0, 1, 1)]
    assert srv.stop() == 0, srv.log()


def test_verify_after_deletions(cql_server):
    # `quarry verify` finds the index and view entries of the live rows only: the items
    # kept for tombstones call for none
    import os
    import subprocess
    import time
    from conftest import quarry_bin
    srv = cql_server()
    s = srv.session(keyspace="vf")
    s.execute("CREATE TABLE t (k int, c int, v int, tags set<text>, PRIMARY KEY (k, c))")
    s.execute("CREATE INDEX ON t (v)")
    s.execute("CREATE INDEX ON t (tags)")
    s.execute("CREATE MATERIALIZED VIEW t_by_v AS SELECT * FROM t WHERE v IS NOT NULL AND "
              "k IS NOT NULL AND c IS NOT NULL PRIMARY KEY (v, k, c)")
    for k in range(3):
        for c in range(3):
            s.execute("INSERT INTO t (k, c, v, tags) VALUES (%d, %d, %d, {'a'}) "
                      "USING TIMESTAMP 10" % (k, c, c))
    s.execute("DELETE FROM t USING TIMESTAMP 20 WHERE k = 0")
    s.execute("DELETE FROM t USING TIMESTAMP 20 WHERE k = 1 AND c >= 1")
    s.execute("DELETE FROM t USING TIMESTAMP 20 WHERE k = 2 AND c = 2")
    s.execute("INSERT INTO t (k, c, v, tags) VALUES (0, 0, 0, {'a'}) USING TIMESTAMP 15")
    want = [(1, 0), (2, 0), (2, 1)]
    deadline = time.time() + 10
    while True:
        got = (sorted(tuple(r) for r in s.execute("SELECT k, c FROM t WHERE tags CONTAINS 'a'")),
               sorted((r.k, r.c) for r in s.execute("SELECT k, c FROM t_by_v")))
        if got == (want, want) or time.time() > deadline:
            break
        time.sleep(0.1)
    assert got == (want, want)
    out = subprocess.run([quarry_bin(), "verify", "--endpoint", srv.url, "vf.t"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, AWS_ACCESS_KEY_ID="local",
                                  AWS_SECRET_ACCESS_KEY="local", AWS_REGION="us-east-1"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 differences" in out.stdout, out.stdout


def test_range_delete_multi_column_slice_of_mixed_orders(cql, table):
    # (a, b) > (1, 0) over a DESC, b ASC is several ranges of the stored order: each is kept
    t = table("(k int, a int, b int, v int, PRIMARY KEY (k, a, b)) "
              "WITH CLUSTERING ORDER BY (a DESC, b ASC)")
    for a in range(3):
        for b in range(2):
            cql.execute("INSERT INTO %s (k, a, b, v) VALUES (0, %d, %d, 0) USING TIMESTAMP 10"
                        % (t, a, b))
    cql.execute("DELETE FROM %s USING TIMESTAMP 20 WHERE k = 0 AND (a, b) > (1, 0)" % t)
    keys = lambda: [(r[1], r[2]) for r in rows(cql, "SELECT * FROM %s WHERE k = 0" % t)]  # noqa: E731
    assert keys() == [(1, 0), (0, 0), (0, 1)]
    for a, b in ((2, 0), (2, 1), (1, 1), (1, 5), (5, 0), (1, 0), (0, 7)):
        cql.execute("INSERT INTO %s (k, a, b, v) VALUES (0, %d, %d, 1) USING TIMESTAMP 15" % (t, a, b))
    assert keys() == [(1, 0), (0, 0), (0, 1), (0, 7)]
