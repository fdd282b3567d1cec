"""Cassandra 4 behaviours of `quarry serve --cql` in SELECT's restrictions, as ScyllaDB's
cqlpy ports of Cassandra's own tests check them (each test names the case it comes from):
multi-column relations with bound tuples, merged and misplaced slices, IN where Cassandra
refuses it, filtering on partition, clustering, static and collection columns, indexes
beside filtering, and unset or null values. One server serves the run (shared_cql); each
test works in its own table of keyspace probe_select. Not paging (test_cql_probe.py)."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import UNSET_VALUE  # noqa: E402

FILTERING = ("Cannot execute this query as it might involve data filtering and thus may have "
             "unpredictable performance. If you want to execute this query despite the "
             "performance unpredictability, use ALLOW FILTERING")


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="probe_select")
    yield session
    session.cluster.shutdown()


def rows(cql, stmt, *args):
    """stmt's rows as lists (prepared when given bind values)."""
    return [list(r) for r in cql.execute(cql.prepare(stmt) if args else stmt, args or None)]


def refused(cql, fragment, stmt, *args):
    """Runs stmt (prepared when given bind values) and asserts Cassandra's error for it."""
    with pytest.raises(InvalidRequest) as e:
        cql.execute(cql.prepare(stmt) if args else stmt, args or None)
    assert fragment in str(e.value), str(e.value)


def fill_abcd(cql, t):
    for r in ((0, 0, 0, 0), (0, 0, 1, 0), (0, 0, 1, 1), (0, 1, 0, 0), (0, 1, 1, 0), (0, 1, 1, 1)):
        cql.execute("INSERT INTO %s (a, b, c, d) VALUES (%d, %d, %d, %d)" % ((t,) + r))


# select_multi_column_relation_test.py: testMultipleClustering (whole tuples prepared)
def test_multi_column_relations_bind_whole_tuples(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY (a, b, c, d))")
    fill_abcd(cql, t)
    sel = "SELECT * FROM %s WHERE a = ? AND " % t
    assert rows(cql, sel + "(b) = ?", 0, (1,)) == [[0, 1, 0, 0], [0, 1, 1, 0], [0, 1, 1, 1]]
    assert rows(cql, sel + "(b, c) = ?", 0, (1, 1)) == [[0, 1, 1, 0], [0, 1, 1, 1]]
    assert rows(cql, sel + "(b, c, d) = ?", 0, (1, 1, 1)) == [[0, 1, 1, 1]]
    assert rows(cql, sel + "(b, c, d) > ? AND (b, c, d) < ?", 0, (0, 1, 1), (1, 1, 0)) == \
        [[0, 1, 0, 0]]
    assert rows(cql, sel + "(b, c, d) IN (?, ?)", 0, (0, 1, 1), (0, 1, 0)) == \
        [[0, 0, 1, 0], [0, 0, 1, 1]]
    assert rows(cql, sel + "(b, c, d) IN ?", 0, [(0, 1, 0), (0, 1, 1)]) == \
        [[0, 0, 1, 0], [0, 0, 1, 1]]
    assert rows(cql, "SELECT * FROM %s WHERE a = 0 AND (b, c, d) IN ()" % t) == []
    # the markers are typed and named as Cassandra types and names them
    stmt = cql.prepare(sel + "(b, c) = ? AND (d) IN ?")
    names = [c.name for c in stmt.column_metadata]
    assert names == ["a", "(b,c)", "in(d)"]


# select_multi_column_relation_test.py: testSeveralMultiColumnRelation
def test_several_one_column_tuple_ins(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY (a, b, c, d))")
    fill_abcd(cql, t)
    sel = "SELECT * FROM %s WHERE a = 0 AND " % t
    assert rows(cql, sel + "(b) IN ((0),(1)) AND (c) IN ((0))") == [[0, 0, 0, 0], [0, 1, 0, 0]]
    assert rows(cql, sel + "(b) IN ((0), (1)) AND (c, d) IN ((0, 0), (1, 1))") == \
        [[0, 0, 0, 0], [0, 0, 1, 1], [0, 1, 0, 0], [0, 1, 1, 1]]


# select_multi_column_relation_test.py: testSingleClusteringInvalidQueries,
# testMultiClusteringInvalidQueries
def test_multi_column_refusals_in_cassandras_words(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY (a, b, c, d))")
    two = 'Column "c" cannot be restricted by two inequalities not starting with the same column'
    after = ('Clustering column "c" cannot be restricted (preceding column "b" is restricted '
             'by a non-EQ relation)')
    refused(cql, "b cannot be restricted by more than one relation if it includes an Equal",
            "SELECT * FROM %s WHERE a = 0 AND (b) = (?) AND (b) > (?)" % t, 0, 0)
    refused(cql, "More than one restriction was found for the start bound on b",
            "SELECT * FROM %s WHERE a = 0 AND (b) > (?) AND b > ?" % t, 0, 1)
    refused(cql, "Expected 3 elements in value tuple, but got 2: (?, ?)",
            "SELECT * FROM %s WHERE a = 0 AND (b, c, d) IN ((?, ?))" % t, 0, 1)
    refused(cql, "Expected 2 elements in value tuple, but got 3: (1, 2, 3)",
            "SELECT * FROM %s WHERE a = 0 AND (b, c) > (1, 2, 3)" % t)
    refused(cql, "Invalid null value in condition for columns: [b, c, d]",
            "SELECT * FROM %s WHERE a = 0 AND (b, c, d) IN ((?, ?, ?), (?, ?, ?))" % t,
            1, 2, None, 2, 1, 4)
    refused(cql, "Invalid null value for column d",
            "SELECT * FROM %s WHERE a = 0 AND (b, c, d) = (?, ?, ?)" % t, 1, 2, None)
    refused(cql, two, "SELECT * FROM %s WHERE a = 0 AND (b, c, d) > (?, ?, ?) AND c < ?" % t,
            0, 1, 0, 1)
    refused(cql, two, "SELECT * FROM %s WHERE a = 0 AND c > ? AND (b, c, d) < (?, ?, ?)" % t,
            1, 1, 1, 0)
    refused(cql, two, "SELECT * FROM %s WHERE a = 0 AND (b, c) > (0, 0) AND (c) < (0)" % t)
    refused(cql, after, "SELECT * FROM %s WHERE a = 0 AND b > 0 AND (c, d) IN ((0, 0))" % t)
    refused(cql, after, "SELECT * FROM %s WHERE a = 0 AND b > 0 AND (c, d) > (0, 0)" % t)
    refused(cql, after, "SELECT * FROM %s WHERE a = 0 AND (b) < (0) AND (c) < (0) "
            "AND (b, c) > (0, 0)" % t)
    refused(cql, 'PRIMARY KEY column "c" cannot be restricted (preceding column "b" is '
            'restricted by a non-EQ relation)',
            "SELECT * FROM %s WHERE a = 0 AND (c, d) > (0, 0) AND b > 0" % t)


# select_single_column_relation_test.py: testMultiplePartitionKeyWithIndex;
# select_test.py: testFilteringWithMultiColumnSlices
def test_multi_column_slices_filter_range_reads(cql, table):
    t = table("(a int, b int, c int, d int, e int, f int, PRIMARY KEY ((a, b), c, d, e))")
    for r in ((0, 0, 0, 0, 0, 0), (0, 0, 0, 1, 0, 1), (0, 0, 1, 0, 0, 3), (0, 0, 1, 1, 0, 4),
              (0, 0, 1, 1, 1, 5), (0, 0, 2, 0, 0, 5)):
        cql.execute("INSERT INTO %s (a, b, c, d, e, f) VALUES (%d, %d, %d, %d, %d, %d)"
                    % ((t,) + r))
    assert rows(cql, "SELECT * FROM %s WHERE a = 0 AND (c, d) >= (1, 1) ALLOW FILTERING" % t) \
        == [[0, 0, 1, 1, 0, 4], [0, 0, 1, 1, 1, 5], [0, 0, 2, 0, 0, 5]]
    assert rows(cql, "SELECT * FROM %s WHERE a = 0 AND (c, d) = (1, 1) ALLOW FILTERING" % t) \
        == [[0, 0, 1, 1, 0, 4], [0, 0, 1, 1, 1, 5]]
    assert rows(cql, "SELECT * FROM %s WHERE a = 0 AND c IN (1) AND d IN (1) ALLOW FILTERING"
                % t) == [[0, 0, 1, 1, 0, 4], [0, 0, 1, 1, 1, 5]]
    u = table("(a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))")
    for r in ((11, 12, 13, 14, 15), (21, 22, 23, 24, 25), (31, 32, 33, 34, 35)):
        cql.execute("INSERT INTO %s (a, b, c, d, e) VALUES (%d, %d, %d, %d, %d)" % ((u,) + r))
    assert rows(cql, "SELECT * FROM %s WHERE (b, c) > (20, 30) AND d = 34 ALLOW FILTERING" % u) \
        == [[31, 32, 33, 34, 35]]
    refused(cql, 'Clustering column "d" cannot be restricted (preceding column "b" is '
            'restricted by a non-EQ relation)',
            "SELECT * FROM %s WHERE (b, c) > (20, 30) AND d = 34" % u)
    refused(cql, "Multi-column slice restrictions cannot be used for filtering.",
            "SELECT * FROM %s WHERE a = 21 AND (c, d) > (0, 0) ALLOW FILTERING" % u)
    assert rows(cql, "SELECT * FROM %s WHERE b = 22 AND (c, d) > (0, 0) ALLOW FILTERING" % u) \
        == [[21, 22, 23, 24, 25]]


# select_single_column_relation_test.py: testPartitionKeyColumnRelations
def test_a_second_relation_names_the_first_one(cql, table):
    t = table("(a text, b int, c int, d int, PRIMARY KEY ((a, b), c))")
    refused(cql, "b cannot be restricted by more than one relation if it includes a IN",
            "SELECT * FROM %s WHERE a = 'x' AND b IN (2, 3) AND b = 2" % t)
    refused(cql, "b cannot be restricted by more than one relation if it includes an Equal",
            "SELECT * FROM %s WHERE a = 'x' AND b = 2 AND b IN (2, 3)" % t)
    refused(cql, "a cannot be restricted by more than one relation if it includes a IN",
            "SELECT * FROM %s WHERE a IN ('x', 'y') AND a = 'x' AND b = 3" % t)


# select_test.py: testFilteringWithoutIndices, testFilteringOnDurationColumn;
# secondary_index_test.py: testInvalidIndexSelect
def test_in_on_a_non_key_column_is_refused(cql, table):
    t = table("(a int, b int, c int, d duration, s int static, PRIMARY KEY (a, b))")
    cql.execute("CREATE INDEX ON %s (c)" % t)
    for where in ("c IN (6, 7)", "a IN (1, 2) AND c IN (6, 7)", "c IN ? ALLOW FILTERING"):
        refused(cql, "IN predicates on non-primary-key columns (c) is not yet supported",
                "SELECT * FROM %s WHERE %s" % (t, where), *([[6, 7]] if "?" in where else []))
    refused(cql, "IN predicates on non-primary-key columns (d) is not yet supported",
            "SELECT * FROM %s WHERE d IN (1s, 2s) ALLOW FILTERING" % t)
    refused(cql, "IN predicates on non-primary-key columns (s) is not yet supported",
            "SELECT * FROM %s WHERE s IN (1, 2) ALLOW FILTERING" % t)
    cql.execute("INSERT INTO %s (a, b, c) VALUES (1, 2, 6)" % t)
    # an IN of one value is an =
    assert rows(cql, "SELECT a, b FROM %s WHERE c IN (6)" % t) == [[1, 2]]


# select_test.py: testAllowFilteringOnPartitionKey; test_filtering.py
# test_filtering_with_in_relation (which fails on Cassandra for this reason)
def test_partition_key_in_with_filtering_is_refused(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY ((a, b), c))")
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES (11, 12, 13, 14)" % t)
    refused(cql, "IN restrictions are not supported when the query involves filtering",
            "SELECT * FROM %s WHERE b IN (11, 12) ALLOW FILTERING" % t)
    refused(cql, FILTERING, "SELECT * FROM %s WHERE b IN (12, 15, 22)" % t)
    assert rows(cql, "SELECT * FROM %s WHERE a IN (11) AND b IN (12, 15) ALLOW FILTERING" % t) \
        == [[11, 12, 13, 14]]
    assert rows(cql, "SELECT * FROM %s WHERE a IN (11) ALLOW FILTERING" % t) == [[11, 12, 13, 14]]


# select_single_column_relation_test.py: testIndexOnClusteringColumns
def test_clustering_in_past_a_gap_is_refused_when_filtering(cql, table):
    t = table("(id1 int, id2 int, author text, time bigint, v1 text, PRIMARY KEY ((id1, id2), "
              "author, time))")
    cql.execute("CREATE INDEX ON %s (time)" % t)
    cql.execute("CREATE INDEX ON %s (id2)" % t)
    cql.execute("INSERT INTO %s (id1, id2, author, time, v1) VALUES (0, 0, 'bob', 1, 'B')" % t)
    refused(cql, "IN restrictions are not supported on indexed columns",
            "SELECT v1 FROM %s WHERE id2 = 0 AND time IN (1, 2) ALLOW FILTERING" % t)
    refused(cql, "IN restrictions are not supported on indexed columns",
            "SELECT v1 FROM %s WHERE id1 = 0 AND id2 = 0 AND time IN (1, 2) ALLOW FILTERING" % t)
    assert rows(cql, "SELECT v1 FROM %s WHERE id2 = 0 AND time IN (1) ALLOW FILTERING" % t) == \
        [["B"]]


# select_single_column_relation_test.py: testCompositeIndexWithPrimaryKey;
# select_test.py: testCustomIndexWithFiltering
def test_an_index_beside_a_clustering_gap_asks_for_filtering(cql, table):
    t = table("(blog_id int, time1 int, time2 int, author text, content text, "
              "PRIMARY KEY (blog_id, time1, time2))")
    cql.execute("CREATE INDEX ON %s (author)" % t)
    for r in ((1, 0, 0, "foo", "bar1"), (1, 0, 1, "foo", "bar2"), (2, 1, 0, "foo", "baz")):
        cql.execute("INSERT INTO %s (blog_id, time1, time2, author, content) "
                    "VALUES (%d, %d, %d, '%s', '%s')" % ((t,) + r))
    refused(cql, FILTERING, "SELECT content FROM %s WHERE time2 >= 0 AND author = 'foo'" % t)
    assert sorted(rows(cql, "SELECT content FROM %s WHERE time2 >= 1 AND author = 'foo' "
                       "ALLOW FILTERING" % t)) == [["bar2"]]
    u = table("(a text, b int, c text, d int, PRIMARY KEY (a, b, c))")
    cql.execute("CREATE INDEX ON %s (c)" % u)
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES ('a', 1, 'b', 2)" % u)
    refused(cql, 'Clustering column "c" cannot be restricted (preceding column "b" is '
            'restricted by a non-EQ relation)',
            "SELECT * FROM %s WHERE a = 'a' AND b > 0 AND c = 'b'" % u)
    assert rows(cql, "SELECT * FROM %s WHERE a = 'a' AND b > 0 AND c = 'b' ALLOW FILTERING"
                % u) == [["a", 1, "b", 2]]


# select_test.py: testContainsFilteringForClusteringKeys
def test_contains_on_a_clustering_column_past_a_slice(cql, table):
    t = table("(a int, b int, c frozen<list<int>>, d int, PRIMARY KEY (a, b, c))")
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES (21, 22, [2, 3], 24)" % t)
    refused(cql, 'Clustering column "c" cannot be restricted (preceding column "b" is '
            'restricted by a non-EQ relation)',
            "SELECT * FROM %s WHERE b > 20 AND c CONTAINS 2" % t)
    assert rows(cql, "SELECT * FROM %s WHERE b > 20 AND c CONTAINS 2 ALLOW FILTERING" % t) == \
        [[21, 22, [2, 3], 24]]


# select_single_column_relation_test.py: testWithUnsetValues, testInvalidNonFrozenUDTRelation;
# select_test.py: testSetContainsWithIndex, testFilteringWithoutIndicesWithCollections
def test_unset_and_null_values_in_cassandras_words(cql, table):
    t = table("(k int, i int, j int, s text, l set<text>, PRIMARY KEY (k, i, j))")
    cql.execute("CREATE INDEX ON %s (l)" % t)
    refused(cql, "Invalid unset value for column i",
            "SELECT * FROM %s WHERE k = 1 AND i > ?" % t, UNSET_VALUE)
    refused(cql, "Invalid null value in condition for column i",
            "SELECT * FROM %s WHERE k = 1 AND i > ?" % t, None)
    refused(cql, "Invalid unset value for column i",
            "SELECT * FROM %s WHERE k = 1 AND (i, j) > (?, 0)" % t, UNSET_VALUE)
    for where in ("k = 1 AND i = 1 AND l CONTAINS ?", "l CONTAINS ?",
                  "s = 'x' AND l CONTAINS ? ALLOW FILTERING"):
        refused(cql, "Unsupported unset value for column l",
                "SELECT * FROM %s WHERE %s" % (t, where), UNSET_VALUE)
        refused(cql, "Unsupported null value for column l",
                "SELECT * FROM %s WHERE %s" % (t, where), None)
    cql.execute("CREATE TYPE IF NOT EXISTS probe_select.point (x int)")
    u = table("(a int PRIMARY KEY, b point)")
    for where in ("b = {x: 1}", "b > {x: 1}", "b IN ({x: 1})"):
        refused(cql, "Non-frozen UDT column 'b' (point) cannot be restricted by any relation",
                "SELECT * FROM %s WHERE %s ALLOW FILTERING" % (u, where))


# select_test.py: testFilteringOn{List,Map,Tuple,Udt}ContainingDurations
def test_slices_of_values_holding_durations_are_refused(cql, table):
    cql.execute("CREATE TYPE IF NOT EXISTS probe_select.span (i int, d duration)")
    t = table("(k int PRIMARY KEY, l list<duration>, fl frozen<list<duration>>, "
              "m map<int, duration>, tu tuple<int, duration>, u span, fu frozen<span>)")
    for col, value, what in (("l", "[2s]", "collections"), ("fl", "[2s]", "collections"),
                             ("m", "{1: 1s}", "collections"), ("tu", "(1, 2s)", "tuples"),
                             ("u", "{i: 1, d: 3s}", "UDTs"), ("fu", "{i: 1, d: 3s}", "UDTs")):
        refused(cql, "Slice restrictions are not supported on %s containing durations" % what,
                "SELECT * FROM %s WHERE %s > %s ALLOW FILTERING" % (t, col, value))
    cql.execute("INSERT INTO %s (k, fl, tu) VALUES (0, [1s, 2s], (1, 2s))" % t)
    assert [r[0] for r in rows(cql, "SELECT k FROM %s WHERE fl = [1s, 2s] AND tu = (1, 2s) "
                               "ALLOW FILTERING" % t)] == [0]


# select_test.py: testTokenFctRejectsInvalidColumnName, ...InvalidColumnType
def test_token_selector_arguments_in_cassandras_words(cql, table):
    t = table("(k1 uuid, k2 text, PRIMARY KEY ((k1, k2)))")
    refused(cql, "Undefined column name s1", "SELECT token(s1, k1) FROM %s" % t)
    refused(cql, "Type error: k2 cannot be passed as argument 0 of function system.token of "
            "type uuid", "SELECT token(k2, k1) FROM %s" % t)
    refused(cql, "Invalid number of arguments in call to function system.token: 2 required but "
            "1 provided", "SELECT token(k1) FROM %s" % t)


def pages(cql, stmt, size):
    from cassandra.query import SimpleStatement
    return [list(r) for r in cql.execute(SimpleStatement(stmt, fetch_size=size))]


# index_query_paging_test.py: testPagingOnPartitionsWithoutRows
def test_a_static_index_pages_over_partitions_with_only_a_static_row(cql, table):
    t = table("(pk int, ck int, s int static, v int, PRIMARY KEY (pk, ck))")
    cql.execute("CREATE INDEX ON %s (s)" % t)
    for pk, s in ((201, 200), (202, 200), (203, 200), (100, 100)):
        cql.execute("INSERT INTO %s (pk, s) VALUES (%d, %d)" % (t, pk, s))
    for size in range(1, 5):
        assert pages(cql, "SELECT * FROM %s WHERE s = 200 AND pk = 201" % t, size) == \
            [[201, None, 200, None]]
        # in token order, each partition once
        assert pages(cql, "SELECT * FROM %s WHERE s = 200" % t, size) == \
            [[201, None, 200, None], [203, None, 200, None], [202, None, 200, None]]


# secondary_index_test.py: testIndexOnPartitionKeyWithStaticColumnAndNoRows, paged
def test_index_pages_keep_the_static_values_of_a_resumed_partition(cql, table):
    t = table("(pk1 int, pk2 int, c int, s int static, v int, PRIMARY KEY ((pk1, pk2), c))")
    cql.execute("CREATE INDEX ON %s (pk2)" % t)
    cql.execute("CREATE INDEX ON %s (v)" % t)
    for values in ("(1, 1, 1, 9, 1)", "(1, 1, 2, 9, 1)", "(3, 1, 1, 9, 1)"):
        cql.execute("INSERT INTO %s (pk1, pk2, c, s, v) VALUES %s" % (t, values))
    for pk1 in (2, 4):
        cql.execute("INSERT INTO %s (pk1, pk2, s) VALUES (%d, 1, 9)" % (t, pk1))
    for where in ("pk2 = 1", "v = 1"):
        whole = pages(cql, "SELECT * FROM %s WHERE %s" % (t, where), 100)
        assert all(r[3] == 9 for r in whole) and len(whole) == (5 if where == "pk2 = 1" else 3)
        for size in range(1, 5):
            assert pages(cql, "SELECT * FROM %s WHERE %s" % (t, where), size) == whole


# test_filtering.py: test_filter_token (Cassandra's words for each case)
def test_token_restriction_columns_in_cassandras_words(cql, table):
    t = table("(pk int, ck int, x int, PRIMARY KEY (pk, ck))")
    refused(cql, "The token() function contains duplicate partition key components",
            "SELECT pk FROM %s WHERE token(pk, pk) = 0" % t)
    u = table("(pk1 int, pk2 int, x int, PRIMARY KEY ((pk1, pk2)))")
    refused(cql, "The token() function contains duplicate partition key components",
            "SELECT pk1 FROM %s WHERE token(pk1, pk1) = 0" % u)
    refused(cql, "The token() function must be applied to all partition key components or "
            "none of them", "SELECT pk1 FROM %s WHERE token(x) = 0" % u)
    refused(cql, "The token() function must contains only partition key components",
            "SELECT pk1 FROM %s WHERE token(pk1, x) = 0" % u)
    refused(cql, "The token function arguments must be in the partition key order: pk1, pk2",
            "SELECT pk1 FROM %s WHERE token(pk2, pk1) = 0" % u)
    refused(cql, "Undefined column name y", "SELECT pk1 FROM %s WHERE token(pk1, y) = 0" % u)
    stmt = cql.prepare("SELECT * FROM %s WHERE token(pk1, pk2) = ?" % u)
    assert stmt.column_metadata[0].name == "partition key token"


# Cassandra's SelectStatement refuses ORDER BY whenever an index serves the query
# (verifyOrderingIsAllowed), as select_test.py's filtering-with-ORDER BY cases rely on
def test_order_by_with_an_index_is_refused(cql, table):
    t = table("(p int, c int, v int, w int, l list<int>, PRIMARY KEY (p, c))")
    cql.execute("CREATE INDEX ON %s (v)" % t)
    cql.execute("CREATE INDEX ON %s (l)" % t)
    cql.execute("INSERT INTO %s (p, c, v, w, l) VALUES (1, 1, 5, 5, [1])" % t)
    cql.execute("INSERT INTO %s (p, c, v, w, l) VALUES (1, 2, 5, 5, [1])" % t)
    for where, extra in (("p = 1 AND v = 5", ""), ("v = 5", ""), ("p = 1 AND l CONTAINS 1", ""),
                         ("p = 1 AND v = 5 AND w = 5", " ALLOW FILTERING")):
        refused(cql, "ORDER BY with 2ndary indexes is not supported.",
                "SELECT c FROM %s WHERE %s ORDER BY c DESC%s" % (t, where, extra))
    # filtering without an index orders as asked
    assert rows(cql, "SELECT c FROM %s WHERE p = 1 AND w = 5 ORDER BY c DESC ALLOW FILTERING"
                % t) == [[2], [1]]


# select_single_column_relation_test.py: testFunctionCallWithUnset (the driver would
# refuse an unset routing key, so the statement is sent without one)
def test_unset_and_null_token_values(cql, table):
    t = table("(k int PRIMARY KEY, s text, i int)")
    for stmt, unset in (("SELECT * FROM %s WHERE token(k) >= token(?)",
                         "Invalid unset value for argument in call to function token"),
                        ("SELECT * FROM %s WHERE token(k) >= ?", "Invalid unset token value"),
                        ("SELECT * FROM %s WHERE k = blobAsInt(?)",
                         "Invalid unset value for argument in call to function blobasint")):
        prepared = cql.prepare(stmt % t)
        prepared.routing_key_indexes = None
        with pytest.raises(InvalidRequest, match=unset):
            cql.execute(prepared, [UNSET_VALUE])
    prepared = cql.prepare("SELECT * FROM %s WHERE token(k) >= ?" % t)
    with pytest.raises(InvalidRequest, match="Invalid null token value"):
        cql.execute(prepared, [None])


# test_filtering.py: test_filter_like_on_desc_column (cassandra_bug: Cassandra 4 takes LIKE
# only on a SASI index, and refuses it when filtering)
def test_like_needs_a_sasi_index(cql, table):
    t = table("(a int, b text, v text, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (b DESC)")
    cql.execute("INSERT INTO %s (a, b, v) VALUES (1, 'one', 'x')" % t)
    refused(cql, "LIKE restriction is only supported on properly indexed columns. "
            "b LIKE '%%' is not valid.", "SELECT b FROM %s WHERE b LIKE '%%%%' ALLOW FILTERING" % t)
    refused(cql, "LIKE restriction is only supported on properly indexed columns. "
            "v LIKE 'x%' is not valid.", "SELECT b FROM %s WHERE a = 1 AND v LIKE 'x%%'" % t)


# select_multi_column_relation_test.py: testMultipleClusteringWithIndex,
# testMultiColumnRestrictionsWithIndex
def test_multi_column_relations_beside_an_index(cql, table):
    t = table("(a int, b int, c int, d int, e int, PRIMARY KEY (a, b, c, d))")
    cql.execute("CREATE INDEX ON %s (b)" % t)
    cql.execute("CREATE INDEX ON %s (e)" % t)
    for r in ((0, 0, 0, 0, 0), (0, 0, 1, 0, 1), (0, 0, 1, 1, 2), (0, 1, 0, 0, 0), (0, 1, 1, 0, 1),
              (0, 1, 1, 1, 2), (0, 2, 0, 0, 0)):
        cql.execute("INSERT INTO %s (a, b, c, d, e) VALUES (%d, %d, %d, %d, %d)" % ((t,) + r))
    # (b) = (1) is b's =, which its index serves
    assert rows(cql, "SELECT * FROM %s WHERE (b) = (?)" % t, 1) == \
        [[0, 1, 0, 0, 0], [0, 1, 1, 0, 1], [0, 1, 1, 1, 2]]
    refused(cql, FILTERING, "SELECT * FROM %s WHERE (b, c) = (1, 1)" % t)
    refused(cql, FILTERING, "SELECT * FROM %s WHERE (b) IN ((1)) AND e = 2" % t)
    assert rows(cql, "SELECT * FROM %s WHERE (b, c) = (1, 1) AND e = 2 ALLOW FILTERING" % t) == \
        [[0, 1, 1, 1, 2]]
    assert rows(cql, "SELECT * FROM %s WHERE (b, c) IN ((0, 1), (1, 1)) AND e = 2 ALLOW FILTERING"
                % t) == [[0, 0, 1, 1, 2], [0, 1, 1, 1, 2]]
    assert rows(cql, "SELECT * FROM %s WHERE (b, c) >= (1, 1) AND e = 2 ALLOW FILTERING" % t) == \
        [[0, 1, 1, 1, 2]]
    refused(cql, "unset value", "SELECT * FROM %s WHERE (b, c) >= (?, ?) AND e = ? ALLOW FILTERING"
            % t, 1, 1, UNSET_VALUE)
    u = table("(a int, b int, c int, d int, e int, v int, PRIMARY KEY (a, b, c, d, e))")
    cql.execute("CREATE INDEX ON %s (v)" % u)
    for where in ("a = 0 AND (c, d) < (2, 2) AND v = 0", "a = 0 AND b = 1 AND (d, e) < (2, 2) AND v = 0",
                  "a = 0 AND (b, c) > (1, 0) AND (d, e) < (2, 2) AND v = 0"):
        refused(cql, "Multi-column slice restrictions cannot be used for filtering.",
                "SELECT * FROM %s WHERE %s ALLOW FILTERING" % (u, where))
