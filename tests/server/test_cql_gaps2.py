"""Cassandra 4 behaviours of `quarry serve --cql` that a Cassandra-targeted suite (such as
ScyllaDB's cqlpy, which runs against Cassandra too) checks, through the Python driver
(Debian python3-cassandra): SELECT DISTINCT with aggregates, the limits' refusals, views
keyed by empty text, columns added or renamed onto names stored rows still use, markers
inside function calls at PREPARE, and many indexes on one table. One server serves the
run (shared_cql); each test works in its own table. Not the protocol framing (test_cql_wire.py)."""
import time

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest, ReadFailure  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="gaps")
    yield session
    session.cluster.shutdown()


def refused(cql, fragment, stmt, *args):
    """Runs stmt (prepared when given bind values) and asserts Cassandra's error for it."""
    with pytest.raises(InvalidRequest) as e:
        cql.execute(cql.prepare(stmt) if args else stmt, args or None)
    assert fragment in str(e.value), str(e.value)


def rows(cql, stmt, *args):
    return [tuple(r) for r in cql.execute(stmt, args or None)]


def eventually(fn, want, seconds=10):
    """fn()'s answer once it is want (an index or view is built asynchronously), or its
    last answer after seconds."""
    deadline = time.time() + seconds
    while True:
        try:
            got = fn()
        except ReadFailure:  # an index still being built
            got = None
        if got == want or time.time() > deadline:
            return got
        time.sleep(0.05)


# ---- SELECT DISTINCT with aggregates ----

def test_distinct_aggregates_over_a_range_need_every_partition_key_column(cql, table):
    t = table("(k int, c int, v int, s int static, PRIMARY KEY (k, c))")
    for k in (1, 2, 3):
        cql.execute("INSERT INTO %s (k, c, v, s) VALUES (%d, 1, 1, %d)" % (t, k, 10 * k))
        cql.execute("INSERT INTO %s (k, c, v) VALUES (%d, 2, 2)" % (t, k))
    # Cassandra counts the columns the selectors read: count(*) reads none
    refused(cql, "SELECT DISTINCT queries must request all the partition key columns "
            "(missing k)", "SELECT DISTINCT count(*) FROM %s" % t)
    refused(cql, "SELECT DISTINCT queries must request all the partition key columns "
            "(missing k)", "SELECT DISTINCT max(s) FROM %s" % t)
    # an aggregate of the partition key reads it: one row per partition counted
    assert rows(cql, "SELECT DISTINCT count(k) FROM %s" % t) == [(3,)]
    assert rows(cql, "SELECT DISTINCT k, max(s) FROM %s" % t)[0][1] == 30
    # within named partitions no key column need be selected
    assert rows(cql, "SELECT DISTINCT count(*) FROM %s WHERE k IN (1, 2)" % t) == [(2,)]
    assert rows(cql, "SELECT DISTINCT max(s) FROM %s WHERE k = 2" % t) == [(20,)]
    refused(cql, "SELECT DISTINCT queries must only request partition key columns and/or "
            "static columns (not v)", "SELECT DISTINCT k, max(v) FROM %s" % t)


def test_distinct_with_a_composite_partition_key(cql, table):
    t = table("(a int, b int, c int, PRIMARY KEY ((a, b), c))")
    cql.execute("INSERT INTO %s (a, b, c) VALUES (1, 1, 1)" % t)
    cql.execute("INSERT INTO %s (a, b, c) VALUES (1, 1, 2)" % t)
    cql.execute("INSERT INTO %s (a, b, c) VALUES (1, 2, 1)" % t)
    refused(cql, "SELECT DISTINCT queries must request all the partition key columns "
            "(missing b)", "SELECT DISTINCT a FROM %s" % t)
    assert sorted(rows(cql, "SELECT DISTINCT a, b FROM %s" % t)) == [(1, 1), (1, 2)]
    refused(cql, "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
            "SELECT DISTINCT a, b FROM %s PER PARTITION LIMIT 1" % t)
    refused(cql, "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
            "SELECT DISTINCT a, b FROM %s WHERE a = 1 AND b = 1 GROUP BY a, b, c" % t)


# ---- the limits ----

def test_limits_must_be_strictly_positive_in_cassandras_words(cql, table):
    t = table("(k int, c int, PRIMARY KEY (k, c))")
    for stmt in ("SELECT * FROM %s LIMIT ?", "SELECT * FROM %s PER PARTITION LIMIT ?"):
        for n in (0, -1):
            with pytest.raises(InvalidRequest) as e:
                cql.execute(cql.prepare(stmt % t), [n])
            # Cassandra's getLimit words LIMIT and PER PARTITION LIMIT alike
            assert e.value.args[0].endswith('message="LIMIT must be strictly positive"'), \
                str(e.value)
    refused(cql, "LIMIT must be strictly positive", "SELECT * FROM %s PER PARTITION LIMIT 0" % t)


def test_per_partition_limit_with_a_limit_and_paging(cql, table):
    t = table("(p int, c int, PRIMARY KEY (p, c))")
    ins = cql.prepare("INSERT INTO %s (p, c) VALUES (?, ?)" % t)
    for i in range(3):
        for j in range(3):
            cql.execute(ins, [i, j])
    everything = rows(cql, "SELECT p, c FROM %s" % t)
    two_each = [r for i, r in enumerate(everything) if i % 3 != 2]
    assert rows(cql, "SELECT p, c FROM %s PER PARTITION LIMIT 2" % t) == two_each
    for limit in (1, 2, 3, 5, 20):
        s = cql.prepare("SELECT p, c FROM %s PER PARTITION LIMIT 2 LIMIT %d" % (t, limit))
        for page in (0, 1, 2):
            s.fetch_size = page or None
            assert [tuple(r) for r in cql.execute(s)] == two_each[:limit]
    refused(cql, "PER PARTITION LIMIT is not allowed with aggregate queries.",
            "SELECT count(*) FROM %s PER PARTITION LIMIT 1" % t)


# ---- views keyed by the empty text ----

def test_a_view_keys_rows_by_an_empty_clustering_text(cql, table):
    t = table("(k text, c text, v int, PRIMARY KEY (k, c))")
    cql.execute("CREATE MATERIALIZED VIEW %s_mv AS SELECT * FROM %s WHERE k IS NOT NULL AND "
                "c IS NOT NULL PRIMARY KEY (c, k)" % (t, t))
    cql.execute("INSERT INTO %s (k, c, v) VALUES ('a', '', 1)" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES ('a', 'x', 2)" % t)
    # a partition key of '' is refused in the base table already
    refused(cql, "Key may not be empty", "INSERT INTO %s (k, c, v) VALUES ('', 'x', 3)" % t)
    assert rows(cql, "SELECT * FROM %s WHERE k = 'a'" % t) == [("a", "", 1), ("a", "x", 2)]
    assert eventually(lambda: sorted(rows(cql, "SELECT c, k, v FROM %s_mv" % t)),
                      [("", "a", 1), ("x", "a", 2)]) == [("", "a", 1), ("x", "a", 2)]
    assert rows(cql, "SELECT v FROM %s_mv WHERE c = 'x'" % t) == [(2,)]
    # the view's partition of '' holds the row, but no read names it
    refused(cql, "Key may not be empty", "SELECT * FROM %s_mv WHERE c = ''" % t)


def test_a_view_keys_rows_by_an_empty_regular_text(cql, table):
    t = table("(p int, v text, PRIMARY KEY (p))")
    cql.execute("CREATE MATERIALIZED VIEW %s_mv AS SELECT * FROM %s WHERE v IS NOT NULL AND "
                "p IS NOT NULL PRIMARY KEY (v, p)" % (t, t))
    cql.execute("INSERT INTO %s (p, v) VALUES (123, '')" % t)
    cql.execute("INSERT INTO %s (p, v) VALUES (124, 'z')" % t)
    want = [("", 123), ("z", 124)]
    assert eventually(lambda: sorted(rows(cql, "SELECT v, p FROM %s_mv" % t)), want) == want
    # an update moves the row out of the empty partition, a delete removes it
    cql.execute("UPDATE %s SET v = 'y' WHERE p = 123" % t)
    want = [("y", 123), ("z", 124)]
    assert eventually(lambda: sorted(rows(cql, "SELECT v, p FROM %s_mv" % t)), want) == want
    cql.execute("UPDATE %s SET v = '' WHERE p = 124" % t)
    cql.execute("DELETE FROM %s WHERE p = 123" % t)
    assert eventually(lambda: rows(cql, "SELECT v, p FROM %s_mv" % t), [("", 124)]) == \
        [("", 124)]


# ---- ADD and RENAME onto names stored rows use ----

def test_a_column_added_under_a_renamed_key_columns_old_name(cql, table):
    t = table("(k int, c int, c2 int, v int, PRIMARY KEY (k, c, c2))")
    cql.execute("INSERT INTO %s (k, c, c2, v) VALUES (1, 5, 6, 7)" % t)
    cql.execute("ALTER TABLE %s RENAME c TO at" % t)
    # Cassandra allows it: the old name is free
    cql.execute("ALTER TABLE %s ADD c int" % t)
    assert rows(cql, "SELECT k, at, c2, c, v FROM %s" % t) == [(1, 5, 6, None, 7)]
    cql.execute("UPDATE %s SET c = 9 WHERE k = 1 AND at = 5 AND c2 = 6" % t)
    cql.execute("INSERT INTO %s (k, at, c2, c, v) VALUES (2, 1, 1, 3, 4)" % t)
    assert sorted(rows(cql, "SELECT k, at, c2, c, v FROM %s" % t)) == [(1, 5, 6, 9, 7),
                                                                       (2, 1, 1, 3, 4)]
    assert rows(cql, "SELECT at FROM %s WHERE k = 1 AND at = 5" % t) == [(5,)]
    # the new column is a column like any other: deleted, given a TTL, indexed
    cql.execute("DELETE c FROM %s WHERE k = 2 AND at = 1 AND c2 = 1" % t)
    assert rows(cql, "SELECT c, v FROM %s WHERE k = 2" % t) == [(None, 4)]
    cql.execute("UPDATE %s USING TTL 1000 SET c = 11 WHERE k = 2 AND at = 1 AND c2 = 1" % t)
    ttl = rows(cql, "SELECT ttl(c) FROM %s WHERE k = 2" % t)[0][0]
    assert 990 <= ttl <= 1000
    cql.execute("CREATE INDEX ON %s (c)" % t)
    assert eventually(lambda: rows(cql, "SELECT k FROM %s WHERE c = 9" % t), [(1,)]) == [(1,)]


def test_a_key_column_renamed_onto_another_columns_old_name(cql, table):
    t = table("(k int, c int, c2 int, v int, PRIMARY KEY (k, c, c2))")
    cql.execute("INSERT INTO %s (k, c, c2, v) VALUES (1, 5, 6, 7)" % t)
    cql.execute("ALTER TABLE %s RENAME c TO at" % t)
    cql.execute("ALTER TABLE %s RENAME c2 TO c" % t)
    assert rows(cql, "SELECT k, at, c, v FROM %s" % t) == [(1, 5, 6, 7)]
    assert rows(cql, "SELECT v FROM %s WHERE k = 1 AND at = 5 AND c = 6" % t) == [(7,)]
    cql.execute("INSERT INTO %s (k, at, c, v) VALUES (1, 5, 8, 9)" % t)
    assert rows(cql, "SELECT c FROM %s WHERE k = 1 AND at = 5 AND c > 6" % t) == [(8,)]
    # and a new column under the second one's old name
    cql.execute("ALTER TABLE %s ADD c2 text" % t)
    cql.execute("UPDATE %s SET c2 = 'x' WHERE k = 1 AND at = 5 AND c = 6" % t)
    assert rows(cql, "SELECT at, c, c2, v FROM %s WHERE k = 1" % t) == [(5, 6, "x", 7),
                                                                        (5, 8, None, 9)]
    # dropped and added again, its old cells stay gone
    cql.execute("ALTER TABLE %s DROP c2" % t)
    cql.execute("ALTER TABLE %s ADD c2 text" % t)
    assert rows(cql, "SELECT c2 FROM %s WHERE k = 1" % t) == [(None,), (None,)]
    cql.execute("UPDATE %s SET c2 = 'y' WHERE k = 1 AND at = 5 AND c = 8" % t)
    assert rows(cql, "SELECT c2 FROM %s WHERE k = 1" % t) == [(None,), ("y",)]
    refused(cql, "Cannot rename column at to c in table '%s'; another column with that name "
            "already exists" % t, "ALTER TABLE %s RENAME at TO c" % t)


# ---- markers in function calls ----

def marker_types(stmt):
    return [(c.name, c.type.cql_parameterized_type()) for c in stmt.column_metadata]


def test_markers_in_nested_calls_take_the_argument_types(cql, table):
    t = table("(k int PRIMARY KEY, ts timestamp, b blob, v bigint)")
    s = cql.prepare("SELECT k FROM %s WHERE k = blobAsInt(intAsBlob(?))" % t)
    assert marker_types(s) == [("arg0(system.intasblob)", "int")]
    cql.execute("INSERT INTO %s (k, v) VALUES (4, 40)" % t)
    assert [tuple(r) for r in cql.execute(s, [4])] == [(4,)]
    s = cql.prepare("INSERT INTO %s (k, v) VALUES (?, blobAsBigint(bigintAsBlob(?)))" % t)
    assert marker_types(s) == [("k", "int"), ("arg0(system.bigintasblob)", "bigint")]
    cql.execute(s, [5, 50])
    assert rows(cql, "SELECT v FROM %s WHERE k = 5" % t) == [(50,)]
    s = cql.prepare("INSERT INTO %s (k, ts) VALUES (?, toTimestamp((date)?))" % t)
    assert marker_types(s) == [("k", "int"), ("arg0(system.totimestamp)", "date")]
    # two overloads take one marker: Cassandra refuses the call as it prepares
    with pytest.raises(InvalidRequest, match="Ambiguous call to function system.totimestamp"):
        cql.prepare("INSERT INTO %s (k, ts) VALUES (?, toTimestamp(?))" % t)


def test_markers_in_selector_calls_take_the_argument_types(cql, table):
    t = table("(k int PRIMARY KEY, v int)")
    cql.execute("INSERT INTO %s (k, v) VALUES (1, 2)" % t)
    s = cql.prepare("SELECT intAsBlob(?) FROM %s WHERE k = ?" % t)
    assert marker_types(s) == [("arg0(system.intasblob)", "int"), ("k", "int")]
    assert [tuple(r) for r in cql.execute(s, [5, 1])] == [(b"\x00\x00\x00\x05",)]
    s = cql.prepare("SELECT k, blobAsInt(intAsBlob(?)) FROM %s WHERE k = ?" % t)
    assert marker_types(s) == [("arg0(system.intasblob)", "int"), ("k", "int")]
    assert [tuple(r) for r in cql.execute(s, [7, 1])] == [(1, 7)]


# ---- many indexes on one table ----

def test_a_table_takes_more_indexes_than_dynamodbs_twenty(cql, table):
    n = 30
    t = table("(k int PRIMARY KEY, %s)" % ", ".join("v%d int" % i for i in range(n)))
    for i in range(n):
        cql.execute("CREATE INDEX %s_v%d ON %s (v%d)" % (t, i, t, i))
    cql.execute("CREATE MATERIALIZED VIEW %s_mv AS SELECT * FROM %s WHERE v29 IS NOT NULL AND "
                "k IS NOT NULL PRIMARY KEY (v29, k)" % (t, t))
    cql.execute("INSERT INTO %s (k, %s) VALUES (1, %s)" % (
        t, ", ".join("v%d" % i for i in range(n)), ", ".join(str(10 * i) for i in range(n))))
    for i in (0, 19, 20, 29):
        assert eventually(lambda: rows(cql, "SELECT k FROM %s WHERE v%d = %d" % (t, i, 10 * i)),
                          [(1,)]) == [(1,)]
    assert eventually(lambda: rows(cql, "SELECT k FROM %s_mv WHERE v29 = 290" % t),
                      [(1,)]) == [(1,)]
    names = rows(cql, "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = "
                 "'gaps' AND table_name = '%s'" % t)
    assert len(names) == n
    cql.execute("DROP INDEX %s_v25" % t)
    refused(cql, "Cannot execute this query as it might involve data filtering",
            "SELECT k FROM %s WHERE v25 = 250" % t)


# ---- batches and counters ----

def test_counter_batches_follow_cassandras_batch_rules(cql, table):
    t = table("(userid int, url text, total counter, PRIMARY KEY (userid, url))")
    plain = table("(k int PRIMARY KEY, v int)")
    inc = "UPDATE %s SET total = total + 1 WHERE userid = 1 AND url = 'a'; " % t
    # an unlogged batch takes counter updates, each one applied
    cql.execute("BEGIN UNLOGGED BATCH " + inc * 3 + "APPLY BATCH")
    cql.execute("BEGIN COUNTER BATCH " + inc + "APPLY BATCH")
    assert rows(cql, "SELECT total FROM %s WHERE userid = 1 AND url = 'a'" % t) == [(4,)]
    refused(cql, "Cannot include a counter statement in a logged batch",
            "BEGIN BATCH " + inc + "APPLY BATCH")
    refused(cql, "Cannot include non-counter statement in a counter batch",
            "BEGIN COUNTER BATCH INSERT INTO %s (k, v) VALUES (1, 1); APPLY BATCH" % plain)
    refused(cql, "Counter and non-counter mutations cannot exist in the same batch",
            "BEGIN UNLOGGED BATCH " + inc + "INSERT INTO %s (k, v) VALUES (1, 1); APPLY BATCH"
            % plain)
    refused(cql, "Cannot provide custom timestamp for counter BATCH",
            "BEGIN COUNTER BATCH USING TIMESTAMP 5 " + inc + "APPLY BATCH")
    assert rows(cql, "SELECT total FROM %s WHERE userid = 1 AND url = 'a'" % t) == [(4,)]
    assert rows(cql, "SELECT * FROM %s" % plain) == []


def test_batch_using_clauses_in_cassandras_words(cql, table):
    t = table("(k int PRIMARY KEY, v int)")
    refused(cql, "Global TTL on the BATCH statement is not supported.",
            "BEGIN BATCH USING TTL 5 INSERT INTO %s (k, v) VALUES (1, 1); APPLY BATCH" % t)
    refused(cql, "Timestamp must be set either on BATCH or individual statements",
            "BEGIN BATCH USING TIMESTAMP 5 INSERT INTO %s (k, v) VALUES (1, 1) USING TIMESTAMP "
            "6; APPLY BATCH" % t)
    refused(cql, "Cannot provide custom timestamp for conditional BATCH",
            "BEGIN BATCH USING TIMESTAMP 5 INSERT INTO %s (k, v) VALUES (1, 1) IF NOT EXISTS; "
            "APPLY BATCH" % t)
    refused(cql, "Cannot provide custom timestamp for conditional updates",
            "INSERT INTO %s (k, v) VALUES (1, 1) IF NOT EXISTS USING TIMESTAMP 5" % t)
    refused(cql, "Cannot provide custom timestamp for conditional updates",
            "UPDATE %s USING TIMESTAMP 5 SET v = 2 WHERE k = 1 IF v = 1" % t)
    assert rows(cql, "SELECT * FROM %s" % t) == []
    cql.execute("BEGIN BATCH USING TIMESTAMP 5 INSERT INTO %s (k, v) VALUES (1, 1); APPLY BATCH"
                % t)
    assert rows(cql, "SELECT writetime(v) FROM %s WHERE k = 1" % t) == [(5,)]


# ---- filtering on null ----

def test_filtering_on_null_is_refused_before_any_row_is_read(cql, table):
    t = table("(k int PRIMARY KEY, v int)")
    c = table("(k int PRIMARY KEY, a counter, b counter)")
    # with no rows at all, as with some
    for stmt in ("SELECT * FROM %s WHERE v = null ALLOW FILTERING",
                 "SELECT * FROM %s WHERE v > null ALLOW FILTERING",
                 "SELECT * FROM %s WHERE v <= null ALLOW FILTERING"):
        refused(cql, "Unsupported null value for column v", stmt % t)
    refused(cql, "Unsupported null value for column v",
            "SELECT * FROM %s WHERE v = ? ALLOW FILTERING" % t, None)
    refused(cql, "Cannot execute this query as it might involve data filtering",
            "SELECT * FROM %s WHERE v = null" % t)
    cql.execute("UPDATE %s SET a = a + 1 WHERE k = 1" % c)
    refused(cql, "Invalid null value for counter increment/decrement",
            "SELECT * FROM %s WHERE b = null ALLOW FILTERING" % c)
    assert rows(cql, cql.prepare("SELECT * FROM %s WHERE a > ? ALLOW FILTERING" % c), 0) == \
        [(1, 1, None)]
    assert rows(cql, cql.prepare("SELECT * FROM %s WHERE b = ? ALLOW FILTERING" % c), 1) == []


def test_map_entry_filters_are_checked_before_any_row_is_read(cql, table):
    t = table("(p int PRIMARY KEY, m1 map<int, int>, m2 map<text, text>)")
    refused(cql, 'Invalid STRING constant (black) for "key(m1)" of type int',
            "SELECT p FROM %s WHERE m1['black'] = 2 ALLOW FILTERING" % t)
    refused(cql, 'Invalid INTEGER constant (1) for "key(m2)" of type text',
            "SELECT p FROM %s WHERE m2[1] = 'x' ALLOW FILTERING" % t)
    refused(cql, "Unsupported null map key for column m1",
            "SELECT p FROM %s WHERE m1[null] = 2 ALLOW FILTERING" % t)
    refused(cql, "Unsupported null map value for column m1",
            "SELECT p FROM %s WHERE m1[1] = null ALLOW FILTERING" % t)
    cql.execute("INSERT INTO %s (p, m1, m2) VALUES (1, {1: 2, 3: 4}, {'dog': 'cat'})" % t)
    cql.execute("INSERT INTO %s (p, m1) VALUES (2, {1: 3})" % t)
    assert rows(cql, "SELECT p FROM %s WHERE m1[1] = 2 ALLOW FILTERING" % t) == [(1,)]
    assert rows(cql, "SELECT p FROM %s WHERE m2['dog'] = 'cat' ALLOW FILTERING" % t) == [(1,)]


def test_not_equal_relations_are_refused_in_where_clauses(cql, table):
    t = table("(a int, c int, b int, m map<text, int>, PRIMARY KEY (a, c))")
    cql.execute("INSERT INTO %s (a, c, b) VALUES (1, 1, 1)" % t)
    for where, shown in (("b != 0 ALLOW FILTERING", "b != 0"), ("a != 0", "a != 0"),
                         ("token(a) != 0", "token(a) != 0"),
                         ("a = 1 AND (c) != (1)", "(c) != (1)"),
                         ("m['x'] != 1 ALLOW FILTERING", "m['x'] != 1")):
        refused(cql, 'Unsupported "!=" relation: ' + shown, "SELECT a FROM %s WHERE %s" % (t, where))
    refused(cql, 'Unsupported "!=" relation: c != 2',
            "UPDATE %s SET b = 1 WHERE a = 1 AND c != 2" % t)
    # a condition may say !=
    assert rows(cql, "UPDATE %s SET b = 2 WHERE a = 1 AND c = 1 IF b != 3" % t) == [(True,)]
    assert rows(cql, "SELECT b FROM %s WHERE a = 1" % t) == [(2,)]


# ---- lightweight transactions ----

def test_static_conditions_answer_with_the_partitions_nulls(cql, table):
    t = table("(a int, b int, s int static, d int, PRIMARY KEY (a, b))")
    cql.execute("INSERT INTO %s (a, b) VALUES (3, 1)" % t)
    # the partition has rows, so its (null) static value answers beside [applied]
    assert rows(cql, cql.prepare("UPDATE %s SET s = 30 WHERE a = 3 IF s IN ?" % t),
                [10, 20, 30]) == [(False, None)]
    assert rows(cql, "UPDATE %s SET s = 30 WHERE a = 3 IF s = 10" % t) == [(False, None)]
    assert rows(cql, "UPDATE %s SET d = 1 WHERE a = 3 AND b = 2 IF s = 10" % t) == [(False, None)]
    # no partition: [applied] alone
    assert rows(cql, "UPDATE %s SET s = 30 WHERE a = 4 IF s = 10" % t) == [(False,)]
    # a condition on a regular column reads the row named
    assert rows(cql, "UPDATE %s SET d = 1 WHERE a = 3 AND b = 2 IF d = 10" % t) == [(False,)]
    assert rows(cql, "UPDATE %s SET s = 5 WHERE a = 3 IF s = null" % t) == [(True,)]
    assert rows(cql, "UPDATE %s SET s = 6 WHERE a = 3 IF s = 4" % t) == [(False, 5)]
    assert rows(cql, "SELECT a, b, s FROM %s" % t) == [(3, 1, 5)]


def test_conditional_deletions_name_a_row_in_cassandras_words(cql, table):
    t = table("(k text, s text static, i int, v text, PRIMARY KEY (k, i))")
    cql.execute("INSERT INTO %s (k, s, i, v) VALUES ('k', 's', 0, 'v')" % t)
    for stmt in ("DELETE FROM %s WHERE k = 'k' IF EXISTS",
                 "DELETE FROM %s WHERE k = 'k' AND i > 0 IF EXISTS",
                 "DELETE FROM %s WHERE k = 'k' AND i > 0 IF v = 'foo'",
                 "DELETE v FROM %s WHERE k = 'k' IF v = 'foo'"):
        refused(cql, "DELETE statements must restrict all PRIMARY KEY columns with equality "
                "relations in order to delete non static columns", stmt % t)
    refused(cql, "DELETE statements must restrict all PRIMARY KEY columns with equality "
            "relations in order to use IF condition on non static columns",
            "DELETE s FROM %s WHERE k = 'k' IF v = 'foo'" % t)
    assert rows(cql, "DELETE s FROM %s WHERE k = 'k' IF s = 'z'" % t) == [(False, "s")]
    assert rows(cql, "DELETE s FROM %s WHERE k = 'k' IF s = 's'" % t) == [(True,)]
    assert rows(cql, "SELECT * FROM %s" % t) == [("k", 0, None, "v")]


def test_a_failed_conditional_batch_answers_each_row_it_read(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (5, 1, 1)" % t)
    cql.execute("INSERT INTO %s (k, c, v) VALUES (5, 2, 1)" % t)
    upd = "UPDATE %s SET v = %%d WHERE k = 5 AND c = %%d IF v = %%d; " % t
    # the primary key beside the conditions' columns, a row per existing row, in order
    assert rows(cql, "BEGIN BATCH " + upd % (2, 2, 7) + upd % (3, 1, 5) + "APPLY BATCH") == \
        [(False, 5, 1, 1), (False, 5, 2, 1)]
    assert rows(cql, "BEGIN BATCH " + upd % (2, 1, 1) + upd % (3, 3, 5) + "APPLY BATCH") == \
        [(False, 5, 1, 1)]
    # IF NOT EXISTS: every column
    ins = "INSERT INTO %s (k, c, v) VALUES (5, %%d, 9) IF NOT EXISTS; " % t
    assert rows(cql, "BEGIN BATCH " + ins % 1 + ins % 2 + "APPLY BATCH") == \
        [(False, 5, 1, 1), (False, 5, 2, 1)]
    assert rows(cql, "BEGIN BATCH " + ins % 3 + upd % (3, 2, 5) + "APPLY BATCH") == \
        [(False, 5, 2, 1)]
    assert rows(cql, "SELECT c, v FROM %s WHERE k = 5" % t) == [(1, 1), (2, 1)]
    # static conditions read the partition's first row
    s = table("(a int, b int, s int static, d text, PRIMARY KEY (a, b))")
    cql.execute("INSERT INTO %s (a, b) VALUES (3, 3)" % s)
    batch = ("BEGIN BATCH INSERT INTO %s (a, b, s, d) VALUES (%%d, 3, 40, 'a'); UPDATE %s SET "
             "s = 30 WHERE a = %%d IF s > 5; APPLY BATCH" % (s, s))
    assert rows(cql, batch % (3, 3)) == [(False, 3, 3, None)]
    assert rows(cql, batch % (9, 9)) == [(False,)]
    assert rows(cql, "SELECT * FROM %s" % s) == [(3, 3, None, None)]


# ---- clustering restrictions ----

def test_clustering_restriction_refusals_in_cassandras_words(cql, table):
    t = table("(a int, c int, d int, e int, PRIMARY KEY (a, c, d, e))")
    refused(cql, 'Clustering column "d" cannot be restricted (preceding column "c" is '
            'restricted by a non-EQ relation)', "SELECT * FROM %s WHERE a = 1 AND c > 1 AND d = 1"
            % t)
    refused(cql, 'Clustering column "d" cannot be restricted (preceding column "c" is '
            'restricted by a non-EQ relation)', "SELECT * FROM %s WHERE a = 1 AND d = 1 AND c > 1"
            % t)
    refused(cql, 'PRIMARY KEY column "d" cannot be restricted as preceding column "c" is not '
            'restricted', "SELECT * FROM %s WHERE a = 1 AND d = 1" % t)
    for where in ("(d, c) > (1, 1)", "(c, e) = (1, 1)", "(d, c) IN ((1, 1), (2, 2))"):
        refused(cql, "Clustering columns must appear in the PRIMARY KEY order in multi-column "
                "relations: " + where, "SELECT * FROM %s WHERE a = 1 AND %s" % (t, where))
    refused(cql, 'Column "c" appeared twice in a relation: (c, c) > (1, 1)',
            "SELECT * FROM %s WHERE a = 1 AND (c, c) > (1, 1)" % t)
    cql.execute("INSERT INTO %s (a, c, d, e) VALUES (1, 2, 3, 4)" % t)
    assert rows(cql, "SELECT e FROM %s WHERE a = 1 AND (c, d) > (1, 1) AND (c, d) < (5, 5)"
                % t) == [(4,)]
    assert rows(cql, "SELECT e FROM %s WHERE a = 1 AND c > 1 AND d = 3 ALLOW FILTERING" % t) == \
        [(4,)]


def test_a_batch_over_partitions_past_cassandras_size_threshold_is_refused(cql, table):
    from cassandra.query import BatchStatement
    t = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    kb = "x" * 1024
    # Cassandra's default batch_size_fail_threshold_in_kb is 50
    big = "BEGIN BATCH " + " ".join(
        "INSERT INTO %s (k, c, v) VALUES (%d, 0, '%s');" % (t, i, kb) for i in range(60)) + \
        " APPLY BATCH"
    refused(cql, "Batch too large", big)
    assert rows(cql, "SELECT count(*) FROM %s" % t) == [(0,)]
    ins = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
    batch = BatchStatement()
    for i in range(60):
        batch.add(ins, (i, 0, kb))
    with pytest.raises(InvalidRequest, match="Batch too large"):
        cql.execute(batch)
    # one partition is not measured, nor is a batch under the threshold
    batch = BatchStatement()
    for i in range(60):
        batch.add(ins, (1, i, kb))
    cql.execute(batch)
    batch = BatchStatement()
    for i in range(40):
        batch.add(ins, (100 + i, 0, kb))
    cql.execute(batch)
    assert rows(cql, "SELECT count(*) FROM %s" % t) == [(100,)]


def test_an_unset_value_in_a_condition_in_list_is_left_out(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, v1 int, v2 text)")
    cql.execute("INSERT INTO %s (k, v1, v2) VALUES (0, 2, 'foo')" % t)
    upd = cql.prepare("UPDATE %s SET v2 = 'bar' WHERE k = 0 IF v1 IN (?, ?)" % t)
    assert rows(cql, upd, UNSET_VALUE, 1) == [(False, 2)]
    assert rows(cql, upd, UNSET_VALUE, 2) == [(True,)]
    refused(cql, "Invalid 'unset' value in condition",
            "UPDATE %s SET v2 = 'x' WHERE k = 0 IF v1 = ?" % t, UNSET_VALUE)
    assert rows(cql, "SELECT v2 FROM %s WHERE k = 0" % t) == [("bar",)]


def test_conditions_on_user_type_fields(cql, table):
    cql.execute("CREATE TYPE IF NOT EXISTS addr2 (street text, zip int)")
    t = table("(k int PRIMARY KEY, a addr2, fa frozen<addr2>, m map<text, int>, v int)")
    cql.execute("INSERT INTO %s (k, a, fa, m) VALUES (1, {street: 'x', zip: 1}, {street: 'y'}, "
                "{'a': 1})" % t)
    res = cql.execute("UPDATE %s SET v = 1 WHERE k = 1 IF a.zip = 5" % t).one()
    assert res[0] is False and (res.a.street, res.a.zip) == ("x", 1)
    assert rows(cql, "UPDATE %s SET v = 1 WHERE k = 1 IF a.street = 'x'" % t) == [(True,)]
    assert rows(cql, "UPDATE %s SET v = 2 WHERE k = 1 IF fa.street = 'y' AND fa.zip = null"
                % t) == [(True,)]
    assert rows(cql, "UPDATE %s SET v = 3 WHERE k = 1 IF a.street IN ('q', 'x')" % t) == [(True,)]
    s = cql.prepare("UPDATE %s SET v = ? WHERE k = 1 IF a.zip = ?" % t)
    assert [(c.name, c.type.cql_parameterized_type()) for c in s.column_metadata] == \
        [("v", "int"), ("a.zip", "int")]
    assert cql.execute(s, [4, 1]).one()[0] is True
    refused(cql, "Unknown field nope for column a",
            "UPDATE %s SET v = 3 WHERE k = 1 IF a.nope = 1" % t)
    # a missing row: the element's or field's type still reads the value
    assert rows(cql, "UPDATE %s SET v = 4 WHERE k = 2 IF m['a'] = 1" % t) == [(False,)]
    assert rows(cql, "UPDATE %s SET v = 4 WHERE k = 2 IF a.zip = 1" % t) == [(False,)]
    assert rows(cql, "SELECT v FROM %s WHERE k = 1" % t) == [(4,)]


# ---- timestamps ----

def test_cells_written_at_the_same_timestamp_reconcile_as_cassandras(cql, table):
    t = table("(k int, c int, v int, s int static, w text, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (1, 1, 1) USING TIMESTAMP 1000" % t)
    upd = "UPDATE %s USING TIMESTAMP 1000 SET v = %%s WHERE k = 1 AND c = 1" % t
    for value, want in (("0", 1), ("7", 7), ("-1", 7), ("null", None), ("9", None)):
        # the greater value wins a tie, a tombstone wins over any
        cql.execute(upd % value)
        assert rows(cql, "SELECT v FROM %s WHERE k = 1" % t) == [(want,)], value
    # a batch's statements share a timestamp: the greater value wins, whatever the order
    ins = "INSERT INTO %s (k, c, s, w) VALUES (%%d, %%d, %%d, 'a'); " % t
    cql.execute("BEGIN BATCH " + ins % (4, 4, 4) + "UPDATE %s SET s = 3 WHERE k = 4; APPLY BATCH"
                % t)
    cql.execute("BEGIN BATCH " + ins % (5, 5, 5) + "UPDATE %s SET s = 6 WHERE k = 5; APPLY BATCH"
                % t)
    assert rows(cql, "SELECT k, s FROM %s WHERE k IN (4, 5)" % t) == [(4, 4), (5, 6)]
    # the server's own timestamps are distinct: the later write wins
    for value in (5, 3, 4, 1):
        cql.execute("UPDATE %s SET v = %d WHERE k = 6 AND c = 1" % (t, value))
    assert rows(cql, "SELECT v FROM %s WHERE k = 6" % t) == [(1,)]
    stamps = [r[0] for r in cql.execute("SELECT writetime(v) FROM %s WHERE k = 6" % t)]
    assert len(stamps) == 1 and stamps[0] > 1000


def test_keys_as_long_as_cassandras(cql, table):
    """A partition key value may take Cassandra's 65535 bytes, zero bytes and all, and a
    view keyed by a regular column the same; one byte more is refused in Cassandra's
    words."""
    t = table("(k blob PRIMARY KEY, v text)")
    cql.execute("CREATE MATERIALIZED VIEW %s_by_v AS SELECT * FROM %s WHERE v IS NOT NULL "
                "AND k IS NOT NULL PRIMARY KEY (v, k)" % (t, t))
    longest = b"\x00" * 65535
    cql.execute(cql.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t), (longest, "y" * 65535))
    assert rows(cql, "SELECT v FROM %s WHERE k = %%s" % t, longest) == [("y" * 65535,)]
    refused(cql, "Key length of 65536 is longer than maximum of 65535",
            "INSERT INTO %s (k, v) VALUES (?, 'a')" % t, longest + b"\x00")
    deadline = time.time() + 10
    while rows(cql, "SELECT k FROM %s_by_v" % t) != [(longest,)] and time.time() < deadline:
        time.sleep(0.05)
    assert rows(cql, "SELECT k FROM %s_by_v WHERE v = %%s" % t, "y" * 65535) == [(longest,)]
