"""Cassandra 4 compatibility of `quarry serve --cql` where a Cassandra-targeted test suite
looks: the answers and the error types and messages Cassandra gives for statements at the
edges (empty batches, conditions, validation of keys and values, filtering, limits), each
checked through the Python driver (Debian python3-cassandra). The run's shared server serves
the module, in keyspace compat; each test works in its own table. Not the protocol framing
(test_cql_wire.py) nor metadata discovery (test_cql_driver.py)."""

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.auth import PlainTextAuthProvider  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    # Credentials offered to a server that asks for none are simply not used.
    session = shared_cql.session(
        keyspace="compat", replication="{'class': 'NetworkTopologyStrategy', 'datacenter1': 1}",
        auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    yield session
    session.cluster.shutdown()


def refused(cql, fragment, stmt, *args, kind=InvalidRequest):
    """Runs stmt (prepared when given bind values) and asserts Cassandra's error for it."""
    with pytest.raises(kind) as e:
        cql.execute(cql.prepare(stmt) if args else stmt, args or None)
    assert fragment in str(e.value), str(e.value)


def test_an_empty_batch_is_a_no_op(cql):
    # Suites run "BEGIN BATCH APPLY BATCH" as a liveness probe between tests.
    for kind in ("", "UNLOGGED ", "COUNTER "):
        assert list(cql.execute("BEGIN %sBATCH APPLY BATCH" % kind)) == []
    assert cql.execute("SELECT key FROM system.local").one().key == "local"


def test_condition_in_lists(cql, table):
    t = table("(k int PRIMARY KEY, v int, w text)")
    cql.execute("INSERT INTO %s (k, v, w) VALUES (0, 2, 'a')" % t)
    upd = "UPDATE %s SET w = 'b' WHERE k = 0 IF v IN " % t
    # an empty list holds no value: not applied, with the current value
    assert list(cql.execute(upd + "()").one()) == [False, 2]
    # a bound list (the driver sends a None element as an empty value)
    assert cql.execute(cql.prepare(upd + "?"), [[7, 8]]).one()[0] is False
    assert cql.execute(cql.prepare(upd + "?"), [[1, None, 2]]).one()[0] is True
    cql.execute("UPDATE %s SET v = null WHERE k = 0" % t)
    # null equals null only
    assert cql.execute(upd + "(5, null)").one()[0] is True
    assert cql.execute(cql.prepare(upd + "(?, ?)"), [5, None]).one()[0] is True
    assert list(cql.execute(upd + "(5, 6)")) == [(False, None)]


def test_an_unset_value_in_a_condition_is_refused(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, v int)")
    for op in ("=", "<", "!="):
        refused(cql, "Invalid 'unset' value in condition",
                "UPDATE %s SET v = 3 WHERE k = 0 IF v %s ?" % (t, op), UNSET_VALUE)
    assert list(cql.execute("SELECT * FROM %s" % t)) == []


def test_an_empty_in_selects_and_writes_nothing(cql, table):
    t = table("(k int, c int, v int, PRIMARY KEY (k, c))")
    cql.execute("INSERT INTO %s (k, c, v) VALUES (0, 1, 1)" % t)
    assert list(cql.execute("SELECT * FROM %s WHERE k IN ()" % t)) == []
    assert list(cql.execute("SELECT * FROM %s WHERE k = 0 AND c IN ()" % t)) == []
    cql.execute("UPDATE %s SET v = 5 WHERE k = 0 AND c IN ()" % t)
    cql.execute("DELETE FROM %s WHERE k IN () AND c = 1" % t)
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [(0, 1, 1)]
    refused(cql, "IN on the clustering key columns is not supported with conditional updates",
            "UPDATE %s SET v = 1 WHERE k = 0 AND c IN () IF EXISTS" % t)


def test_unset_and_null_ttl_and_timestamp(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, v int) WITH default_time_to_live = 600")
    ins = cql.prepare("INSERT INTO %s (k, v) VALUES (?, ?) USING TTL ?" % t)
    cql.execute(ins, [1, 1, UNSET_VALUE])  # the table's default
    cql.execute(ins, [2, 2, None])         # no TTL at all
    cql.execute(ins, [3, 3, 0])            # no TTL at all
    ttls = {r.k: r.ttl_v for r in cql.execute("SELECT k, ttl(v) FROM %s" % t)}
    assert 590 <= ttls[1] <= 600 and ttls[2] is None and ttls[3] is None
    stamp = cql.prepare("INSERT INTO %s (k, v) VALUES (?, ?) USING TIMESTAMP ?" % t)
    cql.execute(stamp, [4, 4, UNSET_VALUE])  # now
    assert cql.execute("SELECT v FROM %s WHERE k = 4" % t).one().v == 4
    refused(cql, "Invalid null value of timestamp",
            "INSERT INTO %s (k, v) VALUES (?, ?) USING TIMESTAMP ?" % t, 5, 5, None)


def test_an_insert_of_static_columns_alone_needs_no_clustering_key(cql, table):
    t = table("(p int, c int, v int, s text static, PRIMARY KEY (p, c))")
    cql.execute("INSERT INTO %s (p, s) VALUES (1, 'one')" % t)
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [(1, None, 'one', None)]
    cql.execute("INSERT INTO %s (p, c, v) VALUES (1, 0, 0)" % t)
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [(1, 0, 'one', 0)]
    # a regular column still needs the whole primary key
    refused(cql, "Some clustering keys are missing: c",
            "INSERT INTO %s (p, s, v) VALUES (2, 'two', 2)" % t)


def test_a_key_part_longer_than_64k_is_refused(cql, table):
    t = table("(a text, b text, PRIMARY KEY (a, b))")
    big = "x" * (65 * 1024)
    for stmt in ("INSERT INTO %s (a, b) VALUES (?, 'b')", "INSERT INTO %s (a, b) VALUES ('a', ?)",
                 "SELECT * FROM %s WHERE a = ?"):
        refused(cql, "Key length of 66560 is longer than maximum of 65535", stmt % t, big)


def test_per_partition_limit_with_distinct_or_aggregates(cql, table):
    t = table("(a int, b int, c int, PRIMARY KEY (a, b))")
    for i in range(3):
        for j in range(3):
            cql.execute("INSERT INTO %s (a, b, c) VALUES (%d, %d, %d)" % (t, i, j, j))
    refused(cql, "PER PARTITION LIMIT is not allowed with SELECT DISTINCT queries",
            "SELECT DISTINCT a FROM %s PER PARTITION LIMIT ?" % t, 2)
    refused(cql, "PER PARTITION LIMIT is not allowed with aggregate queries.",
            "SELECT COUNT(*) FROM %s PER PARTITION LIMIT ?" % t, 2)
    # with GROUP BY it limits the groups of each partition
    rows = cql.execute("SELECT a, b, count(*) FROM %s GROUP BY a, b PER PARTITION LIMIT 1" % t)
    assert sorted(tuple(r) for r in rows) == [(0, 0, 1), (1, 0, 1), (2, 0, 1)]
    refused(cql, "LIMIT must be strictly positive", "SELECT * FROM %s LIMIT ?" % t, 0)
    refused(cql, "LIMIT must be strictly positive",
            "SELECT * FROM %s PER PARTITION LIMIT ?" % t, -1)
    refused(cql, "Invalid null value of limit", "SELECT * FROM %s LIMIT ?" % t, None)
    refused(cql, "Invalid null value of limit", "SELECT * FROM %s PER PARTITION LIMIT ?" % t, None)


def test_a_clustering_value_named_twice_in_in_selects_once(cql, table):
    t = table("(a text, b int, c int, d int, PRIMARY KEY (a, b, c))")
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES ('x', 2, 6, 2)" % t)
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES ('x', 3, 7, 3)" % t)
    got = cql.execute(cql.prepare("SELECT c, d FROM %s WHERE a = 'x' AND c IN (?, ?) "
                                  "AND b IN (?, ?, ?)" % t), [7, 6, 3, 2, 3])
    assert [tuple(r) for r in got] == [(6, 2), (7, 3)]


def test_relations_a_select_refuses_before_filtering(cql, table):
    t = table("(a int PRIMARY KEY, s set<int>, l list<int>, m map<int, int>, f frozen<set<int>>, "
              "c int)")
    for col, typ, val in (("s", "set<int>", {0}), ("l", "list<int>", [0]),
                          ("m", "map<int, int>", {0: 0})):
        for op in ("=", ">", ">=", "<", "<="):
            refused(cql, "Collection column '%s' (%s) cannot be restricted by a '%s' relation"
                    % (col, typ, op), "SELECT * FROM %s WHERE c = 0 AND %s %s ? ALLOW FILTERING"
                    % (t, col, op), val)
    refused(cql, "Collection column 's' (set<int>) cannot be restricted by a 'IN' relation",
            "SELECT * FROM %s WHERE s IN (?) ALLOW FILTERING" % t, {0})
    refused(cql, 'Unsupported "!=" relation: s != {1, 2}',
            "SELECT * FROM %s WHERE s != {1, 2} ALLOW FILTERING" % t)
    refused(cql, "Unsupported restriction: c IS NOT NULL",
            "SELECT * FROM %s WHERE c IS NOT NULL ALLOW FILTERING" % t)
    # a frozen collection compares as a whole
    cql.execute("INSERT INTO %s (a, f, c) VALUES (1, {1, 2}, 0)" % t)
    assert [r.a for r in cql.execute("SELECT a FROM %s WHERE f = {1, 2} ALLOW FILTERING" % t)] == [1]


def test_aggregates_of_computed_selectors(cql, table):
    t = table("(a int, b int, c int, PRIMARY KEY (a, b))")
    for b in (1, 2, 3, 5):
        cql.execute("INSERT INTO %s (a, b, c) VALUES (1, %d, %d) USING TIMESTAMP %d"
                    % (t, b, b * 10, 1000 + b))
    cql.execute("INSERT INTO %s (a, b) VALUES (1, 9)" % t)
    rs = cql.execute("SELECT avg(cast(b AS double)), max(blobAsInt(intAsBlob(b))), "
                     "count(cast(c AS text)), min(writetime(c)), count(ttl(c)) FROM %s" % t)
    assert rs.column_names == ["system.avg(cast(b as double))",
                               "system.max(system.blobasint(system.intasblob(b)))",
                               "system.count(cast(c as text))", "system.min(writetime(c))",
                               "system.count(ttl(c))"]
    assert list(rs.one()) == [4.0, 9, 4, 1001, 0]
    refused(cql, "aggregate functions cannot be used as arguments of aggregate functions",
            "SELECT max(sum(c)) FROM %s" % t)
    # each alone: the aggregate's argument is the only reader of its column
    assert cql.execute("SELECT sum(cast(c AS bigint)) FROM %s" % t).one()[0] == 110
    assert cql.execute("SELECT min(writetime(c)) FROM %s" % t).one()[0] == 1001


def test_prepare_refuses_unknown_columns_and_token_in_writes(cql, table):
    t = table("(p int, c int, v int, PRIMARY KEY (p, c))")
    for stmt, name in (("SELECT * FROM %s WHERE p = ? AND nope = ?", "nope"),
                       ("INSERT INTO %s (p, c, nope) VALUES (?, ?, ?)", "nope"),
                       ("UPDATE %s SET nope = ? WHERE p = ? AND c = ?", "nope"),
                       ("UPDATE %s SET v = ? WHERE p = ? AND c = ? IF nope = ?", "nope"),
                       ("DELETE nope FROM %s WHERE p = ? AND c = ?", "nope"),
                       ("DELETE FROM %s WHERE p1 = ? AND c = ?", "p1")):
        with pytest.raises(InvalidRequest) as e:
            cql.prepare(stmt % t)
        assert "Undefined column name %s in table compat.%s" % (name, t) in str(e.value)
    for kind, stmt in (("DELETE", "DELETE FROM %s WHERE token(p) = token(?)"),
                       ("UPDATE", "UPDATE %s SET v = 1 WHERE token(p) = ? AND c = 1")):
        with pytest.raises(InvalidRequest) as e:
            cql.prepare(stmt % t)
        assert "The token function cannot be used in WHERE clauses for %s statements" % kind \
            in str(e.value)


def test_contains_in_writes_and_on_scalars(cql, table):
    t = table("(a int, b frozen<map<int, int>>, c int, PRIMARY KEY (a, b))")
    cql.execute("INSERT INTO %s (a, b, c) VALUES (1, {1: 1}, 3)" % t)
    refused(cql, "Cannot use CONTAINS relations in DELETE statements",
            "DELETE FROM %s WHERE a = 1 AND b CONTAINS 1" % t)
    refused(cql, "Cannot use CONTAINS KEY relations in DELETE statements",
            "DELETE FROM %s WHERE a = 1 AND b CONTAINS KEY 1" % t)
    refused(cql, "Cannot use CONTAINS on non-collection column a",
            "DELETE FROM %s WHERE a CONTAINS 1" % t)
    refused(cql, "Cannot use CONTAINS KEY on non-map column c",
            "SELECT * FROM %s WHERE c CONTAINS KEY 1 ALLOW FILTERING" % t)
    assert [r.c for r in cql.execute("SELECT c FROM %s" % t)] == [3]


def test_from_json_of_a_bad_text_is_a_function_failure(cql, table):
    from cassandra.protocol import FunctionFailure
    t = table("(k int PRIMARY KEY, a ascii, b bigint)")
    ins = "INSERT INTO %s (k, %s) VALUES (?, fromJson(?))"
    for col, text in (("a", "\u038e\u0394"), ("a", "123"), ("b", "9223372036854775808"),
                      ("b", "123.456"), ("b", '"abc"'), ("b", '["abc"]')):
        with pytest.raises(FunctionFailure) as e:
            cql.execute(cql.prepare(ins % (t, col)), [0, text])
        assert e.value.keyspace == "system" and e.value.function == "fromjson"
        assert e.value.arg_types == ["text"]
    cql.execute(cql.prepare(ins % (t, "b")), [0, '"123123123123"'])
    assert cql.execute("SELECT b FROM %s WHERE k = 0" % t).one().b == 123123123123


def test_insert_json_numbers_keep_their_digits(cql, table):
    from decimal import Decimal
    t = table("(k int PRIMARY KEY, v varint, d decimal, i int)")
    cql.execute(cql.prepare("INSERT INTO %s JSON ?" % t),
                ['{"k": 1, "v": 123456789012345678901234567890, "d": 3.250}'])
    row = cql.execute("SELECT v, d FROM %s WHERE k = 1" % t).one()
    assert row.v == 123456789012345678901234567890 and row.d == Decimal("3.250")
    refused(cql, "Error decoding JSON value for i: Unable to make int from 'abc'",
            "INSERT INTO %s JSON ?" % t, '{"k": 2, "i": "abc"}')


def test_a_condition_comparing_with_null(cql, table):
    t = table("(k int PRIMARY KEY, v int)")
    cql.execute("INSERT INTO %s (k, v) VALUES (0, 1)" % t)
    for op in ("<", "<=", ">", ">="):
        refused(cql, 'Invalid comparison with null for operator "%s"' % op,
                "UPDATE %s SET v = 2 WHERE k = 0 IF v %s null" % (t, op))
    assert list(cql.execute("UPDATE %s SET v = 2 WHERE k = 0 IF v != null" % t)) == [(True,)]


def test_collection_operation_errors_name_the_operation(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, l list<int>, m map<text, int>, fl frozen<list<int>>, v int)")
    cql.execute("INSERT INTO %s (k, l, fl) VALUES (0, [1, 2], [1])" % t)
    for stmt, msg in (
            ("UPDATE %s SET l[5] = 3 WHERE k = 0", "List index 5 out of bound, list has size 2"),
            ("UPDATE %s SET l[0] = 3 WHERE k = 1",
             "Attempted to set an element on a list which is null"),
            ("DELETE l[0] FROM %s WHERE k = 1",
             "Attempted to delete an element from a list which is null"),
            ("UPDATE %s SET fl[0] = 3 WHERE k = 0",
             "Invalid operation (fl[0] = 3) for frozen collection column fl"),
            ("UPDATE %s SET fl = fl + [3] WHERE k = 0",
             "Invalid operation (fl = fl + [3]) for frozen collection column fl"),
            ("UPDATE %s SET fl = [3] + fl WHERE k = 0",
             "Invalid operation (fl = [3] + fl) for frozen collection column fl"),
            ("UPDATE %s SET v = v + 1 WHERE k = 0",
             "Invalid operation (v = v + 1) for non counter column v"),
            ("UPDATE %s SET v[0] = 1 WHERE k = 0",
             "Invalid operation (v[0] = 1) for non collection column v")):
        refused(cql, msg, stmt % t)
    refused(cql, "Invalid unset map key", "UPDATE %s SET m[?] = 3 WHERE k = 0" % t, UNSET_VALUE)
    refused(cql, "Invalid null map key", "UPDATE %s SET m[?] = 3 WHERE k = 0" % t, None)
    refused(cql, "Invalid null value for list index", "UPDATE %s SET l[?] = 3 WHERE k = 0" % t,
            None)
    assert list(cql.execute("SELECT l, fl, v FROM %s WHERE k = 0" % t)) == [([1, 2], [1], None)]


def test_conditions_on_static_columns_read_the_static_row(cql, table):
    t = table("(k text, s text static, i int, v text, PRIMARY KEY (k, i))")
    cql.execute("INSERT INTO %s (k, s, i, v) VALUES ('k', 's', 0, 'v')" % t)
    cql.execute("DELETE FROM %s WHERE k = 'k' AND i = 0" % t)
    # the row is gone, the static row is not: a condition on s sees it
    delete = "DELETE v FROM %s WHERE k = 'k' AND i = 0 IF " % t
    assert list(cql.execute(delete + "s = 'z'")) == [(False, "s")]
    assert list(cql.execute(delete + "v = 'z'")) == [(False,)]
    assert [tuple(r) for r in cql.execute(delete + "v = 'z' AND s = 'z'")] == [(False, None, "s")]
    cql.execute("INSERT INTO %s (k, i, v) VALUES ('k', 1, 'one')" % t)
    upd = "UPDATE %s SET v = ? WHERE k = 'k' AND i = 1 IF " % t
    assert list(cql.execute(cql.prepare(upd + "s = 's'"), ["uno"])) == [(True,)]
    assert [tuple(r) for r in cql.execute(cql.prepare(upd + "s = 'q' AND v = 'uno'"), ["x"])] \
        == [(False, "uno", "s")]
    assert [tuple(r) for r in cql.execute(
        "INSERT INTO %s (k, i, v) VALUES ('k', 1, 'z') IF NOT EXISTS" % t)] \
        == [(False, "k", 1, "s", "uno")]
    # a batch conditioned on the static row, writing it too
    assert list(cql.execute("BEGIN BATCH UPDATE %s SET v = 'b' WHERE k = 'k' AND i = 1 IF s = 's'; "
                            "UPDATE %s SET s = 'u' WHERE k = 'k'; APPLY BATCH" % (t, t))) \
        == [(True,)]
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [("k", 1, "u", "b")]
    # reading a missing partition's static row for a condition writes nothing
    assert list(cql.execute("UPDATE %s SET v = 'c' WHERE k = 'new' AND i = 1 IF s = 'x'" % t)) \
        == [(False,)]
    assert list(cql.execute("SELECT * FROM %s WHERE k = 'new'" % t)) == []


def test_a_batch_text_can_be_prepared(cql, table):
    from cassandra.query import UNSET_VALUE
    a = table("(k int PRIMARY KEY, s text, i int)")
    b = table("(k int PRIMARY KEY, v int)")
    ps = cql.prepare("BEGIN BATCH USING TIMESTAMP ? INSERT INTO %s (k, s, i) VALUES (?, 'x', 7); "
                     "UPDATE %s SET s = ?, i = ? WHERE k = 1; UPDATE %s SET v = ? WHERE k = ?; "
                     "APPLY BATCH" % (a, a, b))
    assert [c.name for c in ps.column_metadata] == ["[timestamp]", "k", "s", "i", "v", "k"]
    assert [c.table_name for c in ps.column_metadata][1:] == [a, a, a, b, b]
    cql.execute(ps, [1000, 1, None, UNSET_VALUE, 5, 2])
    assert [tuple(r) for r in cql.execute("SELECT k, s, i, writetime(i) FROM %s" % a)] \
        == [(1, None, 7, 1000)]
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % b)] == [(2, 5)]
    with pytest.raises(InvalidRequest) as e:
        cql.prepare("BEGIN BATCH UPDATE %s SET nope = ? WHERE k = 1; APPLY BATCH" % b)
    assert "Undefined column name nope" in str(e.value)


def test_a_conditional_batch_may_delete_a_range_with_no_rows(cql, table):
    t = table("(id int, c1 int, c2 int, v int, PRIMARY KEY (id, c1, c2))")
    cql.execute("INSERT INTO %s (id, c1, c2, v) VALUES (1, 1, 1, 22)" % t)
    got = cql.execute("BEGIN BATCH DELETE FROM %s WHERE id = 1 AND c1 = 2; "
                      "UPDATE %s SET v = 23 WHERE id = 1 AND c1 = 1 AND c2 = 1 IF v = 22; "
                      "APPLY BATCH" % (t, t))
    assert list(got) == [(True,)]
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [(1, 1, 1, 23)]
    refused(cql, "Batch with conditions cannot span multiple tables or partitions",
            "BEGIN BATCH DELETE FROM %s WHERE id = 2 AND c1 = 2; "
            "UPDATE %s SET v = 1 WHERE id = 1 AND c1 = 1 AND c2 = 1 IF v = 23; APPLY BATCH"
            % (t, t))


def test_writes_of_static_columns_alone_name_no_clustering_column(cql, table):
    t = table("(k int, p int, s int static, v int, PRIMARY KEY (k, p))")
    for stmt, kind in (("UPDATE %s SET s = 1 WHERE k = 0 AND p = 1", "UPDATE"),
                       ("UPDATE %s SET s = 1 WHERE k = 0 AND p > 1", "UPDATE"),
                       ("DELETE s FROM %s WHERE k = 0 AND p = 1", "DELETE")):
        refused(cql, "Invalid restrictions on clustering columns since the %s statement modifies "
                "only static columns" % kind, stmt % t)
    refused(cql, "DELETE statements must restrict all PRIMARY KEY columns with equality relations "
            "in order to delete non static columns", "DELETE FROM %s WHERE k = 0 IF EXISTS" % t)
    cql.execute("UPDATE %s SET s = 1 WHERE k = 0" % t)
    cql.execute("UPDATE %s SET s = 2, v = 3 WHERE k = 0 AND p = 1" % t)
    cql.execute("DELETE s FROM %s WHERE k = 0" % t)
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s" % t)] == [(0, 1, None, 3)]


def test_a_slice_of_a_duration_is_refused(cql, table):
    t = table("(k int PRIMARY KEY, d duration)")
    refused(cql, "Slice restrictions are not supported on duration columns",
            "SELECT * FROM %s WHERE d > 1h ALLOW FILTERING" % t)


def test_group_by_leaves_out_key_columns_fixed_by_the_where_clause(cql, table):
    t = table("(a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))")
    for r in ((1, 2, 1, 3, 6), (1, 2, 2, 6, 12), (1, 4, 2, 12, 24), (1, 4, 2, 6, 12),
              (2, 2, 3, 3, 6)):
        cql.execute("INSERT INTO %s (a, b, c, d, e) VALUES (%d, %d, %d, %d, %d)" % ((t,) + r))
    sel = "SELECT a, b, e, count(b), max(e) FROM %s WHERE " % t
    assert [tuple(r) for r in cql.execute(sel + "a = 1 GROUP BY b, c")] == \
        [(1, 2, 6, 1, 6), (1, 2, 12, 1, 12), (1, 4, 12, 2, 24)]
    assert [tuple(r) for r in cql.execute(sel + "a = 1 AND b = 2 GROUP BY c")] == \
        [(1, 2, 6, 1, 6), (1, 2, 12, 1, 12)]
    assert [tuple(r) for r in cql.execute(sel + "a = 1 AND b = 2 GROUP BY a, c")] == \
        [(1, 2, 6, 1, 6), (1, 2, 12, 1, 12)]
    refused(cql, "Group by currently only support groups of columns following their declared "
            "order in the PRIMARY KEY", "SELECT a, b FROM %s GROUP BY b" % t)
    refused(cql, "Group by currently only support groups of columns following their declared "
            "order in the PRIMARY KEY", sel + "a IN (1, 2) GROUP BY b")
    refused(cql, "Group by is currently only supported on the columns of the PRIMARY KEY, got e",
            "SELECT a, e FROM %s GROUP BY a, e" % t)
    assert [tuple(r) for r in cql.execute("SELECT DISTINCT a, count(a) FROM %s GROUP BY a" % t)] \
        == [(1, 1), (2, 1)]
    refused(cql, "Grouping on clustering columns is not allowed for SELECT DISTINCT queries",
            "SELECT DISTINCT a, count(a) FROM %s GROUP BY a, b" % t)
    # an empty IN filters everything out
    assert list(cql.execute(sel + "b IN () GROUP BY a, b ALLOW FILTERING")) == []


def test_per_partition_limit_with_group_by_counts_groups(cql, table):
    t = table("(a int, b int, c int, e int, PRIMARY KEY (a, b, c))")
    for r in ((1, 2, 1, 6), (1, 2, 2, 12), (1, 4, 2, 24), (1, 4, 3, 12), (2, 2, 3, 6),
              (2, 4, 3, 12)):
        cql.execute("INSERT INTO %s (a, b, c, e) VALUES (%d, %d, %d, %d)" % ((t,) + r))
    def q(stmt):
        return sorted(tuple(r) for r in cql.execute(stmt % t))
    assert q("SELECT a, b, count(*), max(e) FROM %s GROUP BY a, b PER PARTITION LIMIT 1") == \
        [(1, 2, 2, 12), (2, 2, 1, 6)]
    assert q("SELECT a, count(*), max(e) FROM %s GROUP BY a PER PARTITION LIMIT 1") == \
        [(1, 4, 24), (2, 2, 12)]
    assert q("SELECT a, b, c FROM %s WHERE a = 1 GROUP BY a, b PER PARTITION LIMIT 1") == \
        [(1, 2, 1)]
    assert [tuple(r) for r in cql.execute(
        "SELECT a, b, count(*) FROM %s WHERE a = 1 GROUP BY a, b ORDER BY b DESC "
        "PER PARTITION LIMIT 1" % t)] == [(1, 4, 2)]


def test_token_of_values_on_the_right_of_a_token_restriction(cql, table):
    t = table("(a int, b text, c int, PRIMARY KEY ((a, b), c))")
    for i in range(5):
        cql.execute("INSERT INTO %s (a, b, c) VALUES (%d, 'x', 0)" % (t, i))
    tokens = {r.a: r[1] for r in cql.execute("SELECT a, token(a, b) FROM %s" % t)}
    assert [r.a for r in cql.execute("SELECT a FROM %s WHERE token(a, b) = token(3, 'x')" % t)] \
        == [3]
    ps = cql.prepare("SELECT a FROM %s WHERE token(a, b) > token(?, ?)" % t)
    assert sorted(r.a for r in cql.execute(ps, [2, "x"])) == \
        sorted(a for a, tok in tokens.items() if tok > tokens[2])
    # beside the whole partition key, a token restriction filters the partitions named
    assert [r.a for r in cql.execute(
        "SELECT a FROM %s WHERE a = 1 AND b = 'x' AND token(a, b) = token(1, 'x')" % t)] == [1]
    assert list(cql.execute(
        "SELECT a FROM %s WHERE a = 1 AND b = 'x' AND token(a, b) > token(1, 'x')" % t)) == []
    refused(cql, "Columns of the partition key cannot be restricted by both a normal relation and "
            "a token relation", "SELECT a FROM %s WHERE a = 1 AND token(a, b) > 0" % t)


def test_an_unset_function_argument_is_refused(cql, table):
    from cassandra.query import UNSET_VALUE
    t = table("(k int PRIMARY KEY, v int)")
    for stmt in ("SELECT * FROM %s WHERE k = blobAsInt(?)",
                 "INSERT INTO %s (k, v) VALUES (1, blobAsInt(?))"):
        refused(cql, "Invalid unset value for argument in call to function blobasint", stmt % t,
                UNSET_VALUE)
    cql.execute(cql.prepare("INSERT INTO %s (k, v) VALUES (1, blobAsInt(?))" % t), [None])
    assert list(cql.execute("SELECT v FROM %s WHERE k = 1" % t)) == [(None,)]


def test_an_empty_partition_key_is_refused_by_name(cql, table):
    t = table("(k text PRIMARY KEY, v int)")
    c = table("(k text, c int, v int, PRIMARY KEY (k, c))")
    refused(cql, "Key may not be empty", "INSERT INTO %s (k, v) VALUES ('', 1)" % t)
    refused(cql, "Key may not be empty", "INSERT INTO %s (k, v) VALUES (?, ?)" % t, "", 1)
    refused(cql, "Key may not be empty", "UPDATE %s SET v = 1 WHERE k = ''" % t)
    refused(cql, "Key may not be empty", "DELETE FROM %s WHERE k = ''" % c)
    refused(cql, "Key may not be empty", "SELECT * FROM %s WHERE k = ''" % t)
    # a composite key may have an empty part
    p = table("(a text, b int, v int, PRIMARY KEY ((a, b)))")
    cql.execute("INSERT INTO %s (a, b, v) VALUES ('', 1, 2)" % p)
    assert [tuple(r) for r in cql.execute("SELECT * FROM %s WHERE a = '' AND b = 1" % p)] \
        == [("", 1, 2)]
