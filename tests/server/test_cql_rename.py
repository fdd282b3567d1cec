"""Renaming primary-key columns (ALTER TABLE ... RENAME) through the Python driver (Debian
python3-cassandra) against `quarry serve --cql`: rows written before the rename read back
under the new name, restrictions and ORDER BY on the new name work, and so they do after a
restart, in a materialized view of the table (renamed with it) and with an index made
after the rename. Not the
refusals for non-key columns (test_cql_ddl_compat.py and the compatibility suites)."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402


def rows(s, query, *args):
    return [tuple(r) for r in s.execute(query, args)]


def check_renamed(s):
    assert rows(s, "SELECT p, day, n FROM t WHERE p = 1") == [(1, 1, "a"), (1, 2, "b"),
                                                               (1, 3, "c")]
    assert rows(s, "SELECT day FROM t WHERE p = 1 AND day > 1 ORDER BY day DESC") == [(3,), (2,)]
    assert rows(s, "SELECT n FROM t WHERE p = 1 AND day = 2") == [("b",)]
    assert rows(s, "SELECT n FROM t WHERE p = 2 AND day = 1") == [("z",)]


def test_renamed_key_columns_keep_their_rows_across_a_restart(cql_server, tmp_path):
    data = tmp_path / "kept"
    srv = cql_server(data=data)
    s = srv.session(keyspace="rn")
    s.execute("CREATE TABLE t (k int, d int, v text, PRIMARY KEY (k, d))")
    for k, d, v in [(1, 1, "a"), (1, 2, "b"), (2, 1, "z")]:
        s.execute("INSERT INTO t (k, d, v) VALUES (%s, %s, %s)", (k, d, v))
    s.execute("ALTER TABLE t RENAME d TO day")
    s.execute("ALTER TABLE t RENAME k TO p")
    # v is a regular column: Cassandra renames only key columns
    with pytest.raises(InvalidRequest, match="Cannot rename non PRIMARY KEY column v"):
        s.execute("ALTER TABLE t RENAME v TO n")
    s.execute("ALTER TABLE t ADD n text")
    for k, d in [(1, 1), (1, 2), (2, 1)]:
        old = rows(s, "SELECT v FROM t WHERE p = %s AND day = %s", k, d)[0][0]
        s.execute("UPDATE t SET n = %s WHERE p = %s AND day = %s", (old, k, d))
    s.execute("INSERT INTO t (p, day, n) VALUES (1, 3, 'c')")
    check_renamed(s)
    # the old names are no longer the columns'
    with pytest.raises(InvalidRequest, match="Undefined column name d"):
        s.execute("SELECT d FROM t")
    assert srv.stop() == 0, srv.log()

    srv = cql_server(data=data)
    s = srv.session()
    s.set_keyspace("rn")
    check_renamed(s)
    # renamed back, the column is the same one
    s.execute("ALTER TABLE t RENAME day TO d")
    assert rows(s, "SELECT d FROM t WHERE p = 1 AND d < 3") == [(1,), (2,)]
    assert srv.stop() == 0, srv.log()


def test_views_and_indexes_follow_a_renamed_key_column(cql_server):
    s = cql_server().session(keyspace="rn")
    s.execute("CREATE TABLE t (k int, c int, v int, PRIMARY KEY (k, c))")
    for k, c, v in [(1, 1, 10), (1, 2, 20), (2, 1, 30)]:
        s.execute("INSERT INTO t (k, c, v) VALUES (%s, %s, %s)", (k, c, v))
    s.execute("CREATE MATERIALIZED VIEW by_c AS SELECT * FROM t WHERE c IS NOT NULL AND "
              "k IS NOT NULL PRIMARY KEY (c, k)")
    s.execute("ALTER TABLE t RENAME c TO slot")
    s.execute("CREATE INDEX ON t (slot)")
    s.execute("INSERT INTO t (k, slot, v) VALUES (3, 1, 40)")
    assert sorted(rows(s, "SELECT k, slot, v FROM t WHERE slot = 1")) == [(1, 1, 10), (2, 1, 30),
                                                                          (3, 1, 40)]
    assert rows(s, "SELECT k, slot FROM t WHERE k = 1 AND slot >= 2") == [(1, 2)]
    import time
    deadline = time.time() + 10
    while True:
        got = sorted(rows(s, "SELECT slot, k, v FROM by_c WHERE slot = 1"))
        if got == [(1, 1, 10), (1, 2, 30), (1, 3, 40)] or time.time() > deadline:
            break
        time.sleep(0.1)
    assert got == [(1, 1, 10), (1, 2, 30), (1, 3, 40)]
    # the view's column was renamed with its base's, as Cassandra renames it
    where = rows(s, "SELECT where_clause FROM system_schema.views WHERE keyspace_name = 'rn'")
    assert where == [("slot IS NOT NULL AND k IS NOT NULL",)]
