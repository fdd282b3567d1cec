"""DDL answers compared with Apache Cassandra 4's, through the Python driver (Debian
python3-cassandra) against `quarry serve --cql`: the checks Cassandra makes on keyspace
replication options and on table options (error class and message), how it stores the
compaction and compression maps, re-adding a dropped column, renaming fields of a user
type that rows already hold, and the limits of duration literals. Not the DDL grammar's
syntax errors (test_cql_server.py) nor schema metadata in general (test_cql_driver.py)."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import ConfigurationException  # noqa: E402


@pytest.fixture
def session(shared_keyspace):
    return shared_keyspace("dd")


def refused(s, statement, error, fragment):
    with pytest.raises(error) as got:
        s.execute(statement)
    assert fragment in str(got.value), str(got.value)


@pytest.mark.parametrize("replication,fragment", [
    ("{'class': 'NetworkTopologyStrategy', 'datacenter1': 1, 'elsewhere': 1}",
     "Unrecognized strategy option {elsewhere} passed to NetworkTopologyStrategy"),
    ("{'class': 'SimpleStrategy', 'replication_factor': 1, 'colour': 'red'}",
     "Unrecognized strategy option {colour} passed to SimpleStrategy"),
    ("{'class': 'SimpleStrategy', 'replication_factor': 'three'}",
     "Replication factor must be non-negative integer; found: three"),
    ("{'class': 'NetworkTopologyStrategy', 'datacenter1': -2}",
     "Replication factor must be non-negative integer; found: -2"),
])
def test_replication_options_are_checked_per_strategy(session, replication, fragment):
    refused(session, "CREATE KEYSPACE other WITH replication = " + replication,
            ConfigurationException, fragment)
    refused(session, "ALTER KEYSPACE dd WITH replication = " + replication,
            ConfigurationException, fragment)
    ks = session.execute("SELECT replication FROM system_schema.keyspaces "
                         "WHERE keyspace_name = 'dd'").one()
    assert dict(ks.replication)["replication_factor"] == "1"
    session.execute("ALTER KEYSPACE dd WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")


@pytest.mark.parametrize("options,fragment", [
    ("gc_grace_seconds = -1", "gc_grace_seconds must be greater than or equal to 0 (got -1)"),
    ("default_time_to_live = -5",
     "default_time_to_live must be greater than or equal to 0 (got -5)"),
    ("bloom_filter_fp_chance = 0.0000001", "bloom_filter_fp_chance must be larger than "),
    ("bloom_filter_fp_chance = 1.1", "bloom_filter_fp_chance must be larger than "),
    ("crc_check_chance = 2.0", "crc_check_chance should be between 0.0 and 1.0"),
    ("compaction = {'min_threshold': 4}",
     "Missing sub-option 'class' for the 'compaction' option."),
    ("compaction = {'class': 'NoSuchCompaction'}",
     "Unable to find compaction strategy class "
     "'org.apache.cassandra.db.compaction.NoSuchCompaction'"),
    ("compression = {'class': 'NoSuchCompressor'}",
     "Could not create Compression for type org.apache.cassandra.io.compress.NoSuchCompressor"),
    ("compression = {'class': 'LZ4Compressor', 'chunk_length_in_kb': 3}",
     "chunk_length_in_kb must be a power of 2"),
])
def test_table_option_values_are_checked(session, options, fragment):
    refused(session, "CREATE TABLE t (k int PRIMARY KEY, v int) WITH " + options,
            ConfigurationException, fragment)
    session.execute("CREATE TABLE t (k int PRIMARY KEY, v int)")
    refused(session, "ALTER TABLE t WITH " + options, ConfigurationException, fragment)


def test_compaction_and_compression_are_stored_in_full(session):
    session.execute("CREATE TABLE t (k int PRIMARY KEY, v int) WITH compaction = "
                    "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': 7} "
                    "AND compression = {'class': 'ZstdCompressor'} "
                    "AND bloom_filter_fp_chance = 0.1 AND extensions = {}")
    row = session.execute("SELECT compaction, compression, bloom_filter_fp_chance "
                          "FROM system_schema.tables "
                          "WHERE keyspace_name = 'dd' AND table_name = 't'").one()
    assert dict(row.compaction) == {
        "class": "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy",
        "min_threshold": "7", "max_threshold": "32"}
    assert dict(row.compression) == {
        "class": "org.apache.cassandra.io.compress.ZstdCompressor", "chunk_length_in_kb": "16"}
    assert row.bloom_filter_fp_chance == pytest.approx(0.1)
    session.execute("ALTER TABLE t WITH compaction = {'class': 'LeveledCompactionStrategy'} "
                    "AND compression = {'enabled': false}")
    row = session.execute("SELECT compaction FROM system_schema.tables "
                          "WHERE keyspace_name = 'dd' AND table_name = 't'").one()
    assert row.compaction["class"] == \
        "org.apache.cassandra.db.compaction.LeveledCompactionStrategy"


def test_a_dropped_column_comes_back_only_as_it_was(session):
    session.execute("CREATE TABLE t (k int, c int, l list<text>, s int static, v int, "
                    "PRIMARY KEY (k, c))")
    session.execute("INSERT INTO t (k, c, l, s, v) VALUES (1, 1, ['a'], 5, 7)")
    session.execute("ALTER TABLE t DROP (l, s)")
    refused(session, "ALTER TABLE t ADD l map<int, int>", InvalidRequest,
            "Cannot re-add previously dropped column 'l' of type map<int, int>, "
            "incompatible with previous type list<text>")
    refused(session, "ALTER TABLE t ADD s int", InvalidRequest,
            "Cannot re-add previously dropped column 's' of kind REGULAR, "
            "incompatible with previous kind STATIC")
    session.execute("ALTER TABLE t ADD l list<text>")
    session.execute("ALTER TABLE t ADD s int static")
    row = session.execute("SELECT l, s, v FROM t WHERE k = 1").one()
    assert (row.l, row.s, row.v) == (None, None, 7)
    session.execute("CREATE TABLE plain (k int PRIMARY KEY, v int)")
    refused(session, "ALTER TABLE plain ADD s int static", InvalidRequest,
            "Static columns are only useful (and thus allowed) if the table has at least "
            "one clustering column")


def test_renamed_type_fields_keep_their_values(session):
    session.execute("CREATE TYPE addr (street text, zip int)")
    session.execute("CREATE TABLE t (k int PRIMARY KEY, live addr, fixed frozen<addr>, "
                    "many list<frozen<addr>>)")
    session.execute("INSERT INTO t (k, live, fixed, many) VALUES "
                    "(1, {street: 'High St', zip: 10}, {street: 'Low St', zip: 20}, "
                    "[{street: 'Mid St', zip: 30}])")
    session.execute("ALTER TYPE addr RENAME zip TO postcode")
    session.execute("ALTER TYPE addr ADD zip text")
    row = session.execute("SELECT live, fixed, many FROM t WHERE k = 1").one()
    assert (row.live.street, row.live.postcode, row.live.zip) == ("High St", 10, None)
    assert (row.fixed.street, row.fixed.postcode) == ("Low St", 20)
    assert row.many[0].postcode == 30
    session.execute("UPDATE t SET live.zip = 'Z1' WHERE k = 1")
    session.execute("INSERT INTO t (k, fixed) VALUES (2, {postcode: 40, zip: 'Z2'})")
    row = session.execute("SELECT live FROM t WHERE k = 1").one()
    assert (row.live.postcode, row.live.zip) == (10, "Z1")
    row = session.execute("SELECT fixed FROM t WHERE k = 2").one()
    assert (row.fixed.street, row.fixed.postcode, row.fixed.zip) == (None, 40, "Z2")
    got = session.execute("SELECT JSON fixed FROM t WHERE k = 2").one()[0]
    assert '"postcode": 40' in got and '"zip": "Z2"' in got


def test_duration_literals_past_32_bits_name_the_part(session):
    session.execute("CREATE TABLE t (k int PRIMARY KEY, d duration)")
    refused(session, "INSERT INTO t (k, d) VALUES (1, %dd)" % (2**63 - 1), InvalidRequest,
            "Invalid duration. The total number of days must be less or equal to 2147483647")
    refused(session, "INSERT INTO t (k, d) VALUES (1, 2147483648mo)", InvalidRequest,
            "Invalid duration. The total number of months must be less or equal to 2147483647")
    refused(session, "INSERT INTO t (k, d) VALUES (1, 99999999999999999999d)", InvalidRequest,
            "Unable to convert '99999999999999999999d' to a duration")
    session.execute("INSERT INTO t (k, d) VALUES (1, 2147483647d)")
    assert session.execute("SELECT d FROM t WHERE k = 1").one().d.days == 2147483647


def test_a_type_may_not_come_to_hold_itself(session):
    session.execute("CREATE TYPE inner_t (a int)")
    session.execute("CREATE TYPE outer_t (i frozen<inner_t>)")
    refused(session, "ALTER TYPE inner_t ADD back frozen<outer_t>", InvalidRequest,
            "Cannot add new field back of type frozen<outer_t> to user type dd.inner_t as it "
            "would create a circular reference")
    refused(session, "ALTER TYPE inner_t ADD many list<frozen<outer_t>>", InvalidRequest,
            "as it would create a circular reference")
    session.execute("ALTER TYPE inner_t ADD b text")
    row = session.execute("SELECT field_names FROM system_schema.types "
                          "WHERE keyspace_name = 'dd' AND type_name = 'inner_t'").one()
    assert list(row.field_names) == ["a", "b"]


def test_table_statements_on_a_view_point_to_the_view_statements(session):
    session.execute("CREATE TABLE base (k int PRIMARY KEY, v int)")
    session.execute("CREATE MATERIALIZED VIEW by_v AS SELECT * FROM base "
                    "WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)")
    refused(session, "ALTER TABLE by_v ADD x int", InvalidRequest,
            "Cannot use ALTER TABLE on a materialized view; use ALTER MATERIALIZED VIEW")
    refused(session, "DROP TABLE by_v", InvalidRequest,
            "Cannot use DROP TABLE on a materialized view. Please use DROP MATERIALIZED VIEW")
    refused(session, "TRUNCATE by_v", InvalidRequest,
            "Cannot TRUNCATE materialized view directly; must truncate base table instead")
    refused(session, "CREATE INDEX ON by_v (k)", InvalidRequest,
            "Secondary indexes on materialized views aren't supported")
    session.execute("DROP MATERIALIZED VIEW by_v")
    session.execute("DROP TABLE base")


@pytest.mark.parametrize("name", ['"d-3"', '"    "'])
def test_table_names_outside_the_alphabet_are_refused(session, name):
    refused(session, "CREATE TABLE %s (k int PRIMARY KEY)" % name, InvalidRequest,
            'dd.%s: Table name must not be empty or not contain non-alphanumeric-underscore '
            'characters (got "%s")' % (name.strip('"'), name.strip('"')))
    refused(session, "CREATE TABLE %s (k int PRIMARY KEY)" % ("t" * 49), InvalidRequest,
            "Table name is too long, it needs to fit 48 characters")


def test_network_topology_spreads_the_replication_factor(session):
    session.execute("CREATE KEYSPACE spread WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'replication_factor': 3}")
    ks = session.execute("SELECT replication FROM system_schema.keyspaces "
                         "WHERE keyspace_name = 'spread'").one()
    assert dict(ks.replication) == {
        "class": "org.apache.cassandra.locator.NetworkTopologyStrategy", "datacenter1": "3"}
    refused(session, "CREATE KEYSPACE upper WITH replication = "
            "{'class': 'NetworkTopologyStrategy', 'Replication_factor': 1}",
            ConfigurationException, "Unrecognized strategy option {Replication_factor}")


@pytest.mark.parametrize("order,fragment", [
    ("v ASC", "Only clustering key columns can be defined in CLUSTERING ORDER directive: [v]"),
    ("c1 ASC, c2 DESC, p DESC",
     "Only clustering key columns can be defined in CLUSTERING ORDER directive: [p]"),
    ("c1 ASC, c1 DESC", "Duplicate column 'c1' in CLUSTERING ORDER BY clause"),
    ("c2 ASC", "Missing CLUSTERING ORDER for column c1"),
    ("c2 ASC, c1 DESC", "The order of columns in the CLUSTERING ORDER directive must match that "
                        "of the clustering columns"),
])
def test_clustering_order_names_only_clustering_columns(session, order, fragment):
    refused(session, "CREATE TABLE t (p int, c1 int, c2 int, v int, PRIMARY KEY (p, c1, c2)) "
            "WITH CLUSTERING ORDER BY (%s)" % order, InvalidRequest, fragment)
    session.execute("CREATE TABLE t (p int, c1 int, c2 int, v int, PRIMARY KEY (p, c1, c2)) "
                    "WITH CLUSTERING ORDER BY (c1 DESC)")


def test_a_type_holds_other_types_only_frozen(session):
    session.execute("CREATE TYPE part (a int)")
    refused(session, "CREATE TYPE whole (p part)", InvalidRequest,
            "A user type cannot contain non-frozen UDTs")
    session.execute("CREATE TYPE whole (p frozen<part>, tags list<text>)")
    refused(session, "ALTER TYPE whole ADD q part", InvalidRequest,
            "A user type cannot contain non-frozen UDTs")
    session.execute("ALTER TYPE whole ADD q frozen<part>")


def test_a_non_frozen_type_column_holds_no_non_frozen_collection(session):
    session.execute("CREATE TYPE tagged (name text, tags list<text>)")
    refused(session, "CREATE TABLE t (k int PRIMARY KEY, v tagged)", InvalidRequest,
            "Non-frozen UDTs with nested non-frozen collections are not supported")
    session.execute("CREATE TABLE t (k int PRIMARY KEY, v frozen<tagged>)")
    refused(session, "ALTER TABLE t ADD w tagged", InvalidRequest,
            "Non-frozen UDTs with nested non-frozen collections are not supported")


@pytest.mark.parametrize("caching,fragment", [
    ("{'keys': 'SOME'}", "Invalid value 'SOME' for caching sub-option 'keys'"),
    ("{'rows_per_partition': 'many'}",
     "Invalid value 'many' for caching sub-option 'rows_per_partition'"),
    ("{'rows_per_partition': '0'}",
     "Invalid value '0' for caching sub-option 'rows_per_partition'"),
    ("{'colour': 'red'}", "Invalid caching sub-options [colour]"),
])
def test_caching_sub_options_are_checked(session, caching, fragment):
    refused(session, "CREATE TABLE t (k int PRIMARY KEY) WITH caching = " + caching,
            ConfigurationException, fragment)
    session.execute("CREATE TABLE t (k int PRIMARY KEY) WITH caching = "
                    "{'keys': 'none', 'rows_per_partition': '10'}")
