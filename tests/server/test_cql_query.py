"""How `quarry serve --cql` answers SELECTs whose result Cassandra 4 computes after reading:
rows of several partitions named by an IN merged in ORDER BY's order (and refused when
paged), arithmetic in terms and selectors, and selectors over aggregate results, each
checked through the Python driver (Debian python3-cassandra) against what Cassandra
answers. The run's shared server serves the module, in keyspace q; each test works in its
own table. Not the reads' key ranges (test_cql_reads.py) nor the functions' own values
(test_cql_selectors.py)."""
import itertools

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="q")
    yield session
    session.cluster.shutdown()


def unpaged(cql, stmt, *args):
    """The rows of stmt run without paging (prepared when given bind values), as tuples."""
    if args:
        prepared = cql.prepare(stmt)
        prepared.fetch_size = None
        return [tuple(r) for r in cql.execute(prepared, args)]
    return [tuple(r) for r in cql.execute(SimpleStatement(stmt, fetch_size=None))]


def refused(cql, fragment, stmt, *args, fetch_size=None):
    with pytest.raises(InvalidRequest) as e:
        if args:
            prepared = cql.prepare(stmt)
            prepared.fetch_size = fetch_size
            cql.execute(prepared, args)
        else:
            cql.execute(SimpleStatement(stmt, fetch_size=fetch_size))
    assert fragment in str(e.value), str(e.value)


# ---- IN on the partition key with ORDER BY ----

PAGED_IN = "Cannot page queries with both ORDER BY and a IN restriction on the partition key"


@pytest.fixture
def scattered(cql, table):
    """Three partitions whose clustering values interleave: p holds c in {p, p+3, p+6}
    (so c = 0..8 over all), d = -c, v = 10 * p + c."""
    t = table("(p int, c int, d int, v int, PRIMARY KEY (p, c, d))")
    for p in range(3):
        for c in (p, p + 3, p + 6):
            cql.execute("INSERT INTO %s (p, c, d, v) VALUES (%d, %d, %d, %d)"
                        % (t, p, c, -c, 10 * p + c))
    return t


def test_rows_of_an_in_are_merged_in_clustering_order(cql, scattered):
    t = scattered
    up = unpaged(cql, "SELECT p, c FROM %s WHERE p IN (2, 0, 1) ORDER BY c" % t)
    assert [c for _, c in up] == list(range(9))
    assert [p for p, _ in up] == [c % 3 for c in range(9)]
    down = unpaged(cql, "SELECT p, c FROM %s WHERE p IN (0, 1, 2) ORDER BY c DESC" % t)
    assert down == up[::-1]
    # both ordering columns, in the same direction
    assert unpaged(cql, "SELECT c FROM %s WHERE p IN (0, 1, 2) ORDER BY c DESC, d DESC"
                   % t) == [(c,) for c in range(8, -1, -1)]
    # the ordering column need not be selected; a prepared IN ? sorts too
    assert unpaged(cql, "SELECT v FROM %s WHERE p IN ? ORDER BY c" % t, [1, 2]) == \
        [(11,), (22,), (14,), (25,), (17,), (28,)]


def test_limit_cuts_the_merged_rows(cql, scattered):
    t = scattered
    assert unpaged(cql, "SELECT c FROM %s WHERE p IN (0, 1, 2) ORDER BY c LIMIT 4" % t) == \
        [(0,), (1,), (2,), (3,)]
    assert unpaged(cql, "SELECT c FROM %s WHERE p IN (0, 1, 2) ORDER BY c DESC LIMIT 2"
                   % t) == [(8,), (7,)]
    # PER PARTITION LIMIT still picks each partition's first rows, before the merge
    assert unpaged(cql, "SELECT c FROM %s WHERE p IN (0, 1, 2) ORDER BY c DESC "
                   "PER PARTITION LIMIT 1" % t) == [(8,), (7,), (6,)]
    assert unpaged(cql, "SELECT JSON c FROM %s WHERE p IN (0, 1) ORDER BY c LIMIT 3" % t) == \
        [('{"c": 0}',), ('{"c": 1}',), ('{"c": 3}',)]


def test_ties_keep_partition_order_and_nulls_sort_first(cql, table):
    t = table("(a int, b int, c int, s int static, PRIMARY KEY (a, b, c))")
    for a, b, c in ((1, 1, 1), (1, 1, 2), (2, 1, 0), (2, 2, 1)):
        cql.execute("INSERT INTO %s (a, b, c) VALUES (%d, %d, %d)" % (t, a, b, c))
    cql.execute("UPDATE %s SET s = 3 WHERE a = 3" % t)  # a partition of only a static row
    # ORDER BY b alone: rows of equal b stay in their partitions' key order
    assert unpaged(cql, "SELECT a, b, c, s FROM %s WHERE a IN (3, 2, 1) ORDER BY b" % t) == \
        [(3, None, None, 3), (1, 1, 1, None), (1, 1, 2, None), (2, 1, 0, None),
         (2, 2, 1, None)]
    assert unpaged(cql, "SELECT a, b, c, s FROM %s WHERE a IN (1, 2, 3) "
                   "ORDER BY b DESC, c DESC" % t) == \
        [(2, 2, 1, None), (1, 1, 2, None), (1, 1, 1, None), (2, 1, 0, None), (3, None, None, 3)]


def test_descending_clustering_and_composite_partition_keys(cql, table):
    t = table("(k1 int, k2 int, c int, PRIMARY KEY ((k1, k2), c)) "
              "WITH CLUSTERING ORDER BY (c DESC)")
    for k2, c in ((1, 1), (1, 2), (1, 13), (2, 10), (2, 11)):
        cql.execute("INSERT INTO %s (k1, k2, c) VALUES (1, %d, %d)" % (t, k2, c))
    asc = unpaged(cql, "SELECT k2, c FROM %s WHERE k1 = 1 AND k2 IN (1, 2) ORDER BY c" % t)
    assert asc == [(1, 1), (1, 2), (2, 10), (2, 11), (1, 13)]
    assert unpaged(cql, "SELECT k2, c FROM %s WHERE k2 IN (2, 1) AND k1 = 1 ORDER BY c DESC"
                   % t) == asc[::-1]


def test_group_by_rows_are_merged_too(cql, scattered):
    t = scattered
    assert unpaged(cql, "SELECT p, c, count(*) FROM %s WHERE p IN (0, 1) GROUP BY p, c "
                   "ORDER BY c DESC LIMIT 3" % t) == [(1, 7, 1), (0, 6, 1), (1, 4, 1)]
    assert unpaged(cql, "SELECT count(*) FROM %s WHERE p IN (0, 1, 2) ORDER BY c" % t) == [(9,)]


def test_paging_an_in_with_order_by_is_refused(cql, scattered):
    t = scattered
    refused(cql, PAGED_IN, "SELECT * FROM %s WHERE p IN (0, 1) ORDER BY c" % t, fetch_size=100)
    refused(cql, PAGED_IN, "SELECT * FROM %s WHERE p IN ? ORDER BY c" % t, [0], fetch_size=5)
    # an IN of one value is an =: it pages
    rows = cql.execute(SimpleStatement("SELECT c FROM %s WHERE p IN (1) ORDER BY c DESC" % t,
                                       fetch_size=2))
    assert [r.c for r in rows] == [7, 4, 1]
    # without ORDER BY the partitions come one after another, each in clustering order
    rows = cql.execute(SimpleStatement("SELECT p, c FROM %s WHERE p IN (2, 0)" % t,
                                       fetch_size=2))
    assert [tuple(r) for r in rows] == [(0, 0), (0, 3), (0, 6), (2, 2), (2, 5), (2, 8)]


def test_order_by_skips_columns_restricted_to_one_value(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY (a, b, c))")
    for b, c in itertools.product(range(2), range(3)):
        cql.execute("INSERT INTO %s (a, b, c, d) VALUES (0, %d, %d, %d)" % (t, b, c, 3 * b + c))
    assert unpaged(cql, "SELECT d FROM %s WHERE a = 0 AND b = 1 ORDER BY c DESC" % t) == \
        [(5,), (4,), (3,)]
    assert unpaged(cql, "SELECT d FROM %s WHERE a = 0 AND b IN (0) ORDER BY c DESC" % t) == \
        [(2,), (1,), (0,)]
    assert unpaged(cql, "SELECT d FROM %s WHERE a = 0 AND (b, c) = (1, 1) ORDER BY c" % t) == \
        [(4,)]
    assert unpaged(cql, "SELECT d FROM %s WHERE a = 0 AND b IN (0, 1) AND c = 2 ORDER BY b DESC"
                   % t) == [(5,), (2,)]
    following = "Order by currently only supports the ordering of columns following"
    refused(cql, following, "SELECT d FROM %s WHERE a = 0 AND b IN (0, 1) ORDER BY c" % t)
    refused(cql, following, "SELECT d FROM %s WHERE a = 0 AND b IN ? ORDER BY c" % t, [0])
    refused(cql, following, "SELECT d FROM %s WHERE a = 0 AND b < 1 ORDER BY c" % t)
    refused(cql, "clustered columns of the PRIMARY KEY, got d",
            "SELECT d FROM %s WHERE a = 0 ORDER BY b ASC, c ASC, d ASC" % t)
    refused(cql, "Unsupported order by relation",
            "SELECT d FROM %s WHERE a = 0 ORDER BY b ASC, c DESC" % t)


# ---- arithmetic (Cassandra 4's operators) ----

from decimal import Decimal  # noqa: E402

from cassandra.protocol import FunctionFailure  # noqa: E402
from cassandra.util import Date  # noqa: E402


@pytest.fixture
def numbers(cql, table):
    """One row holding each numeric type: a tinyint 1, b smallint 2, c int 3, d bigint 4,
    e float 5.5, f double 6.5, g varint 7, h decimal 8.5."""
    t = table("(a tinyint, b smallint, c int, d bigint, e float, f double, g varint, "
              "h decimal, PRIMARY KEY (a, b))")
    cql.execute("INSERT INTO %s (a, b, c, d, e, f, g, h) VALUES (1, 2, 3, 4, 5.5, 6.5, 7, 8.5)"
                % t)
    return t


def one(cql, stmt, *args):
    rows = unpaged(cql, stmt, *args)
    assert len(rows) == 1, rows
    return rows[0]


def test_operations_take_the_wider_type(cql, numbers):
    t = numbers
    # integers stay integers of the wider width; a float with a 64-bit integer is a double;
    # varint or decimal with a floating type is a decimal
    row = one(cql, "SELECT a + b, b * c, c - d, d + e, e + a, f + g, g + e, h + a FROM %s" % t)
    assert row == (3, 6, -1, 9.5, 6.5, 13.5, Decimal("12.5"), Decimal("9.5"))
    kinds = cql.execute("SELECT a + a, c + d, e + e, d + e, g + g, g + f FROM %s" % t)
    assert [type(v) for v in kinds.one()] == [int, int, float, float, int, Decimal]
    assert kinds.column_names == ["a + a", "c + d", "e + e", "d + e", "g + g", "g + f"]
    # integer division truncates, % keeps the dividend's sign
    assert one(cql, "SELECT d / b, c / b, -c %% b, c %% -b, g / b, -g %% b FROM %s" % t) == \
        (2, 1, -1, 1, 3, -1)
    assert one(cql, "SELECT e / b, f %% b, e %% c FROM %s" % t) == (2.75, 0.5, 2.5)


def test_decimal_division_keeps_32_digits(cql, numbers):
    t = numbers
    a3, b = one(cql, "SELECT h / c, h / b FROM %s" % t)
    assert a3 == Decimal("2.83333333333333333333333333333333") and b == Decimal("4.25")
    assert one(cql, "SELECT h * b, h %% c, h - h FROM %s" % t) == \
        (Decimal("17.0"), Decimal("2.5"), Decimal("0.0"))
    assert one(cql, "SELECT (decimal) 10000 / g FROM %s" % t) == \
        (Decimal("1428.57142857142857142857142857142857"),)


def test_fixed_width_integers_wrap(cql, numbers):
    t = numbers
    assert one(cql, "SELECT a + (tinyint) 127, b + (smallint) 32767, c + 2147483647 FROM %s"
               % t) == (-128, -32767, -2147483646)


def test_precedence_parentheses_and_negation(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY (a, b))")
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES (2, 5, 25, 4)" % t)
    rs = cql.execute("SELECT a - c / b + d, (c - b) / a + d, -(c - a) %% d / a + d, "
                     "(int)((c - a) %% d / (a + d)) AS r FROM %s" % t)
    assert rs.column_names == ["a - c / b + d", "(c - b) / a + d", "-(c - a) % d / a + d", "r"]
    assert tuple(rs.one()) == (1, 14, 3, 0)


def test_operations_in_where_insert_and_update(cql, table):
    t = table("(pk int, c1 tinyint, c2 smallint, v double, w decimal, PRIMARY KEY (pk, c1, c2))")
    cql.execute("INSERT INTO %s (pk, c1, c2, v, w) VALUES (1 + 1, 2, 1 * (1 + 1), 10 %% 4, "
                "8.5 / 2)" % t)
    assert unpaged(cql, "SELECT v, w FROM %s WHERE pk = 2 AND c1 = 1 + 1 AND c2 = 4 - 2" % t) == \
        [(2.0, Decimal("4.25"))]
    # the receiver types the marker: a tinyint here
    assert unpaged(cql, "SELECT v FROM %s WHERE pk = 2 AND c1 = 1 + ?" % t, 1) == [(2.0,)]
    assert unpaged(cql, "SELECT v FROM %s WHERE pk = (int) ? / 2 - 8" % t, 20) == [(2.0,)]
    cql.execute("UPDATE %s SET v = -(5 - 2.5), w = (decimal) 1 / 3 WHERE pk = 2 AND c1 = 2 "
                "AND c2 = 2" % t)
    assert unpaged(cql, "SELECT v, w FROM %s WHERE pk = 2" % t) == \
        [(-2.5, Decimal("0.33333333333333333333333333333333"))]
    cql.execute("UPDATE %s SET v = 1.5 / 0 WHERE pk = 2 AND c1 = 2 AND c2 = 2" % t)
    assert unpaged(cql, "SELECT v FROM %s WHERE pk = 2" % t) == [(float("inf"),)]


def test_operations_on_timestamps_and_dates(cql, table):
    t = table("(pk int, ts timestamp, d date, PRIMARY KEY (pk, ts))")
    for m in (10, 12, 14, 21):
        cql.execute("INSERT INTO %s (pk, ts, d) VALUES (1, '2016-09-27 16:%02d:00+0000', "
                    "'2016-10-04' - 1mo5d)" % (t, m))
    import datetime
    since = datetime.datetime(2016, 9, 27, 16, 20)
    assert [r[0].minute for r in unpaged(
        cql, "SELECT ts FROM %s WHERE pk = 1 AND ts > ? - 9m" % t, since)] == [12, 14, 21]
    assert unpaged(cql, "SELECT ts - 10m, d + 2d FROM %s WHERE pk = 1 LIMIT 1" % t) == \
        [(datetime.datetime(2016, 9, 27, 16, 0), Date("2016-09-01"))]
    with pytest.raises(FunctionFailure) as e:
        unpaged(cql, "SELECT ts FROM %s WHERE pk = 1 AND ts > ? - 10us" % t, since)
    assert "the operation 'timestamp - duration' failed: The duration must have a " \
        "millisecond precision. Was: 10us" in str(e.value)
    with pytest.raises(FunctionFailure) as e:
        unpaged(cql, "SELECT d - 3h FROM %s WHERE pk = 1" % t)
    assert "The duration must have a day precision. Was: 3h" in str(e.value)


def test_operation_errors_in_cassandras_words(cql, numbers, table):
    t = numbers
    refused(cql, "Ambiguous '+' operation with args ? and 1: use type hint to disambiguate, "
            "example '(int) ?'", "SELECT a FROM %s WHERE a = 1 AND b = ? + 1" % t, 1)
    refused(cql, "Ambiguous '+' operation with args 1 and ?", "SELECT 1 + ? FROM %s" % t, 1)
    assert one(cql, "SELECT 100 + 50, (int) ? * 2 FROM %s" % t, 21) == (150, 42)
    u = table("(k int PRIMARY KEY, b boolean, s text)")
    cql.execute("INSERT INTO %s (k, b, s) VALUES (1, true, 'x')" % u)
    refused(cql, "the '+' operation is not supported between k and b",
            "SELECT k + b FROM %s" % u)
    refused(cql, "the '/' operation is not supported between NaN and b",
            "SELECT NaN / b FROM %s" % u)
    for stmt, msg in (("SELECT a / (tinyint) 0 FROM %s", "'tinyint / tinyint' failed: / by zero"),
                      ("SELECT c %% (int) 0 FROM %s", "'int % int' failed: / by zero"),
                      ("SELECT g / (tinyint) 0 FROM %s",
                       "'varint / tinyint' failed: BigInteger divide by zero"),
                      ("SELECT h + NaN FROM %s",
                       "'decimal + double' failed: A NaN cannot be converted into a decimal")):
        with pytest.raises(FunctionFailure) as e:
            unpaged(cql, stmt % t)
        assert "the operation " + msg in str(e.value), str(e.value)
    # a null operand makes a null result
    cql.execute("UPDATE %s SET d = null WHERE a = 1 AND b = 2" % t)
    assert one(cql, "SELECT a + d, d * h, -d FROM %s" % t) == (None, None, None)


# ---- selectors over aggregates ----

def test_functions_and_operations_over_aggregates(cql, table):
    t = table("(a int, b int, c double, PRIMARY KEY (a, b))")
    for b in range(4):
        cql.execute("INSERT INTO %s (a, b, c) VALUES (1, %d, %d.5)" % (t, b, b))
    rs = cql.execute("SELECT cast(count(*) AS int), max(b) * 2, max(b) - min(b), "
                     "toJson(sum(b)), cast(avg(c) AS text) FROM %s WHERE a = 1" % t)
    assert tuple(rs.one()) == (4, 6, 3, "6", "2.0")
    assert rs.column_names[:2] == ["cast(count as int)", "system.max(b) * 2"]
    # over no row: the aggregates' own answers for none
    assert one(cql, "SELECT cast(count(*) AS int), max(b) + 1 FROM %s WHERE a = 2" % t) == \
        (0, None)
    # one answer per group
    cql.execute("INSERT INTO %s (a, b, c) VALUES (2, 0, 1)" % t)
    assert unpaged(cql, "SELECT a, count(*) * 10 FROM %s WHERE a IN (1, 2) GROUP BY a" % t) == \
        [(1, 40), (2, 10)]
    refused(cql, "aggregate functions cannot be used as arguments of aggregate functions",
            "SELECT max(count(*)) + 1 FROM %s" % t)
    # a column beside an aggregate takes the group's first row's value, as alone it does
    assert unpaged(cql, "SELECT b + max(b), b FROM %s WHERE a = 1" % t) == [(3, 0)]
    assert unpaged(cql, "SELECT a * 100 + count(*) FROM %s WHERE a IN (1, 2) GROUP BY a"
                   % t) == [(104,), (201,)]


# ---- table options ----

def test_create_table_with_an_id_keeps_it(cql):
    from cassandra.protocol import ConfigurationException
    tid = "5a1c395e-b41f-11e5-9f22-ba0be0483c18"
    cql.execute("CREATE TABLE with_id (k int PRIMARY KEY, v int) WITH id = %s" % tid)
    row = cql.execute("SELECT id FROM system_schema.tables WHERE keyspace_name = 'q' "
                      "AND table_name = 'with_id'").one()
    assert str(row.id) == tid
    with pytest.raises(ConfigurationException) as e:
        cql.execute("ALTER TABLE with_id WITH id = %s" % tid)
    assert "Cannot alter table id." in str(e.value)
    with pytest.raises(ConfigurationException) as e:
        cql.execute("CREATE TABLE bad_id (k int PRIMARY KEY) WITH id = 'not-a-uuid'")
    assert "Invalid table id" in str(e.value)


def test_index_intervals_checked_as_cassandra_does(cql):
    from cassandra.protocol import ConfigurationException
    for opts, msg in (("min_index_interval = 0",
                       "min_index_interval must be greater than or equal to 1 (got 0)"),
                      ("min_index_interval = 256 AND max_index_interval = 128",
                       "max_index_interval must be greater than or equal to min_index_interval "
                       "(256) (got 128)")):
        with pytest.raises(ConfigurationException) as e:
            cql.execute("CREATE TABLE intervals (k int PRIMARY KEY) WITH " + opts)
        assert msg in str(e.value), str(e.value)


def test_speculative_retry_policies_read_and_shown_as_cassandra_does(cql):
    from cassandra.protocol import ConfigurationException
    shown = {"'99PERCENTILE'": "99p", "'99.5p'": "99.5p", "'50MS'": "50ms",
             "'always'": "ALWAYS", "'none'": "NEVER", "'min(99p, 50ms)'": "MIN(99p,50ms)",
             "'MAX(10ms,90p)'": "MAX(90p,10ms)"}
    for i, (given, kept) in enumerate(shown.items()):
        cql.execute("CREATE TABLE retry%d (k int PRIMARY KEY) WITH speculative_retry = %s"
                    % (i, given))
        row = cql.execute("SELECT speculative_retry FROM system_schema.tables WHERE "
                          "keyspace_name = 'q' AND table_name = 'retry%d'" % i).one()
        assert row.speculative_retry == kept, given
    for given, msg in (("'sometimes'", "Invalid value sometimes for option 'speculative_retry'"),
                       ("'100p'", "Invalid value 100p for PERCENTILE option 'speculative_retry': "
                        "must be between (0.0 and 100.0)"),
                       ("'MIN(10ms,20ms)'", "Invalid value MIN(10ms,20ms) for option "
                        "'speculative_retry': MIN()/MAX() arguments should be of different "
                        "types, but both are of type FIXED")):
        with pytest.raises(ConfigurationException) as e:
            cql.execute("CREATE TABLE retry_bad (k int PRIMARY KEY) WITH speculative_retry = "
                        + given)
        assert msg in str(e.value), str(e.value)


# ---- DISTINCT ----

def test_distinct_restrictions_and_selection(cql, table):
    t = table("(p0 int, p1 int, c int, s int static, v int, PRIMARY KEY ((p0, p1), c))")
    for i in range(3):
        for c in range(2):
            cql.execute("INSERT INTO %s (p0, p1, c, s, v) VALUES (%d, %d, %d, %d, %d)"
                        % (t, i, i, c, 10 * i, c))
    assert sorted(unpaged(cql, "SELECT DISTINCT p0, p1 FROM %s" % t)) == \
        [(0, 0), (1, 1), (2, 2)]
    # a range of partitions names them by every key column
    refused(cql, "SELECT DISTINCT queries must request all the partition key columns "
            "(missing p1)", "SELECT DISTINCT p0 FROM %s" % t)
    # one partition named: its key columns need not all be selected
    assert unpaged(cql, "SELECT DISTINCT s FROM %s WHERE p0 = 1 AND p1 = 1" % t) == [(10,)]
    # static columns may filter; clustering and regular columns may not, even filtered
    assert unpaged(cql, "SELECT DISTINCT p0, p1, s FROM %s WHERE s = 20 ALLOW FILTERING"
                   % t) == [(2, 2, 20)]
    only = "SELECT DISTINCT with WHERE clause only supports restriction by partition key " \
        "and/or static columns."
    refused(cql, only, "SELECT DISTINCT p0, p1 FROM %s WHERE c >= 1 ALLOW FILTERING" % t)
    refused(cql, only, "SELECT DISTINCT p0, p1 FROM %s WHERE v = 1 ALLOW FILTERING" % t)


def test_group_by_needs_the_whole_partition_key(cql, table):
    t = table("(a int, b int, c int, d int, PRIMARY KEY ((a, b), c))")
    for c in range(3):
        cql.execute("INSERT INTO %s (a, b, c, d) VALUES (1, 2, %d, %d)" % (t, c, 10 * c))
    refused(cql, "Group by is not supported on only a part of the partition key",
            "SELECT a, max(d) FROM %s GROUP BY a" % t)
    assert unpaged(cql, "SELECT a, b, max(d) FROM %s GROUP BY a, b" % t) == [(1, 2, 20)]
    # the partition key restricted to one partition may be left out
    assert unpaged(cql, "SELECT c, d FROM %s WHERE a = 1 AND b = 2 GROUP BY c LIMIT 2" % t) == \
        [(0, 0), (1, 10)]


# ---- restrictions that cannot merge ----

def test_a_column_restricted_twice_is_refused_in_cassandras_words(cql, table):
    t = table("(a text, b int, c int, d int, PRIMARY KEY (a, b, c))")
    cql.execute("INSERT INTO %s (a, b, c, d) VALUES ('x', 1, 5, 1)" % t)
    refused(cql, 'Column "c" cannot be restricted by both an equality and an inequality relation',
            "SELECT * FROM %s WHERE a = 'x' AND b = 1 AND c > 1 AND c = 5" % t)
    refused(cql, "c cannot be restricted by more than one relation if it includes an Equal",
            "SELECT * FROM %s WHERE a = 'x' AND b = 1 AND c = 5 AND c > 1" % t)
    refused(cql, "b cannot be restricted by more than one relation if it includes a IN",
            "SELECT * FROM %s WHERE a = 'x' AND b IN (1, 2) AND b > 0" % t)
    refused(cql, "Invalid null value for column b",
            "SELECT * FROM %s WHERE a = ? AND b IN ?" % t, "x", None)
    assert unpaged(cql, "SELECT d FROM %s WHERE a = 'x' AND b = 1 AND c >= 5" % t) == [(1,)]


# ---- prepared markers inside calls ----

def test_markers_in_function_calls_take_the_argument_types(cql, table):
    import datetime
    t = table("(k int PRIMARY KEY, t timestamp, b blob)")
    cql.execute(cql.prepare("INSERT INTO %s (k, t, b) VALUES (blobAsInt(?), "
                            "toTimestamp((date) ?), intAsBlob(?))" % t),
                [b"\x00\x00\x00\x01", datetime.date(2020, 1, 2), 7])
    rows = unpaged(cql, "SELECT k, t, b FROM %s WHERE k = blobAsInt(?)" % t, b"\x00\x00\x00\x01")
    assert rows == [(1, datetime.datetime(2020, 1, 2), b"\x00\x00\x00\x07")]
