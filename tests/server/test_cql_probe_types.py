"""Cassandra 4 behaviours of `quarry serve --cql` for types, literals, functions, JSON, DDL
and the schema tables, ported from ScyllaDB's cqlpy suite (which runs against Cassandra
too) and the Cassandra tests it translates. One server serves the run (shared_cql); each
test works in its own table of keyspace probetypes. Not the protocol framing
(test_cql_wire.py) nor the cases test_cql_probe.py already covers."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.protocol import FunctionFailure  # noqa: E402
from cassandra.util import Duration  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    session = shared_cql.session(keyspace="probetypes")
    yield session
    session.cluster.shutdown()


def rows(cql, stmt, *args):
    return [tuple(r) for r in cql.execute(cql.prepare(stmt) if args else stmt, args or None)]


def refused(cql, kind, fragment, stmt, *args):
    """Runs stmt (prepared when given bind values) and asserts Cassandra's error for it."""
    with pytest.raises(kind) as e:
        cql.execute(cql.prepare(stmt) if args else stmt, args or None)
    assert fragment in str(e.value), str(e.value)


H = 3600 * 10**9
M = 60 * 10**9


# ---- duration literals

def test_iso_8601_durations_with_designators_skipped(cql, table):
    # cqlpy test_type_duration.py::test_type_duration_iso_8601
    t = table("(p int PRIMARY KEY, d duration)")
    for text, want in [("P1Y2D", Duration(12, 2, 0)), ("P1Y2M", Duration(14, 0, 0)),
                       ("P1YT2H", Duration(12, 0, 2 * H)), ("P2D", Duration(0, 2, 0)),
                       ("PT30H20M", Duration(0, 0, 30 * H + 20 * M)),
                       ("P1Y3MT2H10M", Duration(15, 0, 130 * M)),
                       ("-P1YT2H", Duration(-12, 0, -2 * H))]:
        cql.execute("INSERT INTO %s (p, d) VALUES (1, %s)" % (t, text))
        assert rows(cql, "SELECT d FROM %s WHERE p = 1" % t) == [(want,)], text


def test_duration_units_repeated_or_out_of_order(cql, table):
    # cqlpy test_type_duration.py::test_type_duration_twice_same_unit and
    # test_type_duration_wrong_unit_order (Duration.Builder's messages)
    t = table("(p int PRIMARY KEY, d duration)")
    refused(cql, InvalidRequest, "Invalid duration. The minutes are specified multiple times",
            "INSERT INTO %s (p, d) VALUES (1, 2m3m)" % t)
    refused(cql, InvalidRequest, "Invalid duration. The seconds should be after minutes",
            "INSERT INTO %s (p, d) VALUES (1, 12s3m)" % t)
    refused(cql, InvalidRequest, "Invalid duration. The minutes should be after days",
            "INSERT INTO %s (p, d) VALUES (1, 1y3m4d)" % t)
    cql.execute("INSERT INTO %s (p, d) VALUES (1, 2y3w)" % t)
    assert rows(cql, "SELECT d FROM %s WHERE p = 1" % t) == [(Duration(24, 21, 0),)]
    refused(cql, FunctionFailure, "The seconds should be after minutes",
            "INSERT INTO %s (p, d) VALUES (?, fromJson(?))" % t, 1, '"12s3m"')


# ---- fromJson / toJson

def test_from_json_of_varints_and_decimals_reads_them_as_bigintegers(cql, table):
    # Cassandra's JsonTest.testFromJsonFct: "" and 123123.123 are no varint
    t = table("(k int PRIMARY KEY, vi varint, dec decimal)")
    ins = "INSERT INTO %s (k, %s) VALUES (?, fromJson(?))"
    refused(cql, FunctionFailure, "Value '' is not a valid representation of a varint value",
            ins % (t, "vi"), 0, '""')
    refused(cql, FunctionFailure, "Value '123123.123' is not a valid representation of a "
            "varint value", ins % (t, "vi"), 0, "123123.123")
    refused(cql, FunctionFailure, "Value 'xyzz' is not a valid representation of a decimal "
            "value", ins % (t, "dec"), 0, '"xyzz"')
    cql.execute(cql.prepare(ins % (t, "vi")), [0, '"1234567890123456789012345678901234567890"'])
    assert rows(cql, "SELECT vi FROM %s WHERE k = 0" % t) == [
        (1234567890123456789012345678901234567890,)]


def test_from_json_of_a_tuple_missing_items(cql, table):
    # Cassandra's JsonTest.testFromJsonFct: [1, "foobar"] for a tuple of three
    t = table("(k int PRIMARY KEY, tup frozen<tuple<int, ascii, uuid>>)")
    refused(cql, FunctionFailure, "Tuple is missing items (expected 3)",
            "INSERT INTO %s (k, tup) VALUES (?, fromJson(?))" % t, 0, '[1, "foobar"]')
    refused(cql, FunctionFailure, "Tuple contains extra items (expected 3)",
            "INSERT INTO %s (k, tup) VALUES (?, fromJson(?))" % t, 0, '[1, "a", null, 4]')


def test_to_json_only_in_the_selection(cql, table):
    # Cassandra's JsonTest.testToJsonFct: refused when prepared, in INSERT, UPDATE, DELETE
    t = table("(k int PRIMARY KEY, a ascii)")
    msg = "toJson() may only be used within the selection clause of SELECT statements"
    for stmt in ["INSERT INTO %s (k, a) VALUES (?, toJson(?))",
                 "UPDATE %s SET a = toJson(?) WHERE k = ?",
                 "DELETE FROM %s WHERE k = fromJson(toJson(?))"]:
        with pytest.raises(InvalidRequest) as e:
            cql.prepare(stmt % t)
        assert msg in str(e.value)
    refused(cql, InvalidRequest, msg, "INSERT INTO %s (k, a) VALUES (0, toJson(1))" % t)
    cql.execute("INSERT INTO %s (k, a) VALUES (0, 'x')" % t)
    assert rows(cql, "SELECT toJson(a) FROM %s WHERE k = 0" % t) == [('"x"',)]


# ---- ALTER TABLE, ALTER KEYSPACE, ALTER TYPE

def test_a_drop_using_timestamp_hides_only_older_cells(cql, table):
    # Cassandra's AlterTest.testDropWithTimestamp, testDropStaticWithTimestamp and
    # testDropMultipleWithTimestamp
    t = table("(id int, c1 int, v1 int, a int, b int, s int static, PRIMARY KEY (id, c1))")
    ins = cql.prepare("INSERT INTO %s (id, c1, v1, a, b, s) VALUES (?, ?, ?, ?, ?, ?) "
                      "USING TIMESTAMP ?" % t)
    for i in range(5):
        cql.execute(ins, [1, i, i, i, i, i, 10000 * i])
    cql.execute("ALTER TABLE %s DROP (a, b) USING TIMESTAMP 20000" % t)
    cql.execute("ALTER TABLE %s DROP s USING TIMESTAMP 20000" % t)
    cql.execute("ALTER TABLE %s ADD a int" % t)
    cql.execute("ALTER TABLE %s ADD b int" % t)
    cql.execute("ALTER TABLE %s ADD s int static" % t)
    cql.execute(ins, [1, 100, 100, 100, 100, 100, 30000])
    assert rows(cql, "SELECT c1, a, b, s FROM %s" % t) == [
        (0, None, None, 4), (1, None, None, 4), (2, None, None, 4), (3, 3, 3, 4), (4, 4, 4, 4),
        (100, 100, 100, 4)]


def compression(cql, t):
    [(m,)] = rows(cql, "SELECT compression FROM system_schema.tables WHERE "
                  "keyspace_name = 'probetypes' AND table_name = '%s'" % t)
    return list(m.items())


def test_compression_options_as_compression_params_reads_them(cql, table):
    # Cassandra's AlterTest.testAlterTableWithCompression (the map as asMap() writes it,
    # its keys in a map's order)
    t = table("(a text, b int, c int, PRIMARY KEY (a, b))")
    alter = "ALTER TABLE %s WITH compression = %%s" % t
    cql.execute(alter % "{'class': 'SnappyCompressor', 'chunk_length_in_kb': 32}")
    assert compression(cql, t) == [("chunk_length_in_kb", "32"),
                                   ("class", "org.apache.cassandra.io.compress.SnappyCompressor")]
    cql.execute(alter % "{'class': 'LZ4Compressor', 'min_compress_ratio': 2}")
    assert compression(cql, t) == [("chunk_length_in_kb", "16"),
                                   ("class", "org.apache.cassandra.io.compress.LZ4Compressor"),
                                   ("min_compress_ratio", "2.0")]
    cql.execute(alter % "{'class': 'LZ4Compressor', 'min_compress_ratio': 0}")
    assert compression(cql, t) == [("chunk_length_in_kb", "16"),
                                   ("class", "org.apache.cassandra.io.compress.LZ4Compressor")]
    cql.execute(alter % "{'enabled': 'false'}")
    assert compression(cql, t) == [("enabled", "false")]
    from cassandra.protocol import ConfigurationException
    for opts, msg in [
            ("{'chunk_length_in_kb': 32}", "Missing sub-option 'class' for the 'compression' "
             "option."),
            ("{'class': ''}", "The 'class' option must not be empty. To disable compression use "
             "'enabled' : false"),
            ("{'enabled': 'false', 'class': 'SnappyCompressor'}", "If the 'enabled' option is "
             "set to false no other options must be specified"),
            ("{'sstable_compression': 'SnappyCompressor', 'class': 'SnappyCompressor'}",
             "The 'sstable_compression' option must not be used if the compression algorithm "
             "is already specified by the 'class' option"),
            ("{'class': 'SnappyCompressor', 'chunk_length_kb': 32, 'chunk_length_in_kb': 32}",
             "The 'chunk_length_kb' option must not be used if the chunk length is already "
             "specified by the 'chunk_length_in_kb' option"),
            ("{'class': 'SnappyCompressor', 'min_compress_ratio': -1}",
             "Invalid negative min_compress_ratio"),
            ("{'class': 'SnappyCompressor', 'min_compress_ratio': 0.5}",
             "min_compress_ratio can either be 0 or greater than or equal to 1")]:
        refused(cql, ConfigurationException, msg, alter % opts)
    assert compression(cql, t) == [("enabled", "false")]


def test_compaction_options_come_back_in_a_maps_order(cql, table):
    # Cassandra's AlterTest.testCreateAlterKeyspaces (compaction of a table)
    t = table("(a int PRIMARY KEY, b int) WITH compaction = "
              "{'class': 'SizeTieredCompactionStrategy', 'min_threshold': 7}")
    [(m,)] = rows(cql, "SELECT compaction FROM system_schema.tables WHERE "
                  "keyspace_name = 'probetypes' AND table_name = '%s'" % t)
    assert list(m.items()) == [
        ("class", "org.apache.cassandra.db.compaction.SizeTieredCompactionStrategy"),
        ("max_threshold", "32"), ("min_threshold", "7")]


def test_network_topology_needs_a_data_centre(cql):
    # Cassandra's AlterTest.testAlterKeyspaceWithNoOptionThrowsConfigurationException
    from cassandra.protocol import ConfigurationException
    cql.execute("CREATE KEYSPACE IF NOT EXISTS probetypes_nts WITH replication = "
                "{'class': 'NetworkTopologyStrategy', 'datacenter1': 3}")
    try:
        refused(cql, ConfigurationException,
                "Configuration for at least one datacenter must be present",
                "ALTER KEYSPACE probetypes_nts WITH replication = "
                "{'class': 'NetworkTopologyStrategy'}")
        refused(cql, ConfigurationException,
                "SimpleStrategy requires a replication_factor strategy option.",
                "ALTER KEYSPACE probetypes_nts WITH replication = {'class': 'SimpleStrategy'}")
        cql.execute("ALTER KEYSPACE probetypes_nts WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'datacenter1': 2}")
    finally:
        cql.execute("DROP KEYSPACE probetypes_nts")


def test_a_type_in_a_partition_key_gains_no_field(cql, table):
    # Cassandra's AlterTest.testAlterTypeUsedInPartitionKey (CASSANDRA-15933)
    cql.execute("CREATE TYPE IF NOT EXISTS keyed_t1 (v1 int)")
    cql.execute("CREATE TYPE IF NOT EXISTS keyed_t2 (v1 frozen<keyed_t1>, v2 frozen<keyed_t1>)")
    t = table("(pk frozen<list<frozen<keyed_t2>>>, val int, PRIMARY KEY (pk))")
    refused(cql, InvalidRequest, "Cannot add new field v3 of type int to user type "
            "probetypes.keyed_t1 as the type is being used in partition key by the following "
            "tables: probetypes.%s" % t, "ALTER TYPE keyed_t1 ADD v3 int")
    cql.execute("DROP TABLE %s" % t)
    cql.execute("ALTER TYPE keyed_t1 ADD v3 int")


# ---- functions

def test_a_single_overload_names_the_argument_of_the_wrong_type(cql, table):
    # cqlpy test_native_functions.py::test_selector_mintimeuuid (FunctionResolver's
    # validateTypes)
    t = table("(p int PRIMARY KEY, i int, s text, ts timestamp)")
    cql.execute("INSERT INTO %s (p, s, ts, i) VALUES (1, '2013-02-02 10:00+0000', 123, 456)" % t)
    assert len(rows(cql, "SELECT mintimeuuid(ts) FROM %s WHERE p = 1" % t)) == 1
    for col in ["s", "i"]:
        refused(cql, InvalidRequest, "Type error: %s cannot be passed as argument 0 of function "
                "system.mintimeuuid of type timestamp" % col,
                "SELECT mintimeuuid(%s) FROM %s WHERE p = 1" % (col, t))
    refused(cql, InvalidRequest, "In call to function system.blobasbigint, value 0x000001c8 is "
            "not a valid binary representation for type bigint",
            "SELECT blobasbigint(intasblob(i)) FROM %s WHERE p = 1" % t)


def test_a_duration_bound_past_32_bits_names_the_part(cql, table):
    # Cassandra's CreateTest.testCreateTableWithDurationColumns (DurationSerializer)
    t = table("(a int, b int, c duration, PRIMARY KEY (a, b))")
    ins = "INSERT INTO %s (a, b, c) VALUES (?, ?, ?)" % t
    refused(cql, InvalidRequest, "The duration months must be a 32 bits integer but was: "
            "9223372036854775807", ins, 2, 1, Duration(9223372036854775807, 1, 0))
    refused(cql, InvalidRequest, "The duration days must be a 32 bits integer but was: "
            "9223372036854775807", ins, 2, 1, Duration(0, 9223372036854775807, 0))
    refused(cql, InvalidRequest, "The duration months, days and nanoseconds must be all of the "
            "same sign (2, -2, 0)", ins, 2, 1, Duration(2, -2, 0))


def test_to_json_of_a_tuple_names_every_item(cql, table):
    # Cassandra's TupleType.toJSONString writes one item per component type
    t = table("(k int PRIMARY KEY, tup frozen<tuple<int, text, int>>)")
    cql.execute("INSERT INTO %s (k, tup) VALUES (0, (7))" % t)
    assert rows(cql, "SELECT toJson(tup) FROM %s WHERE k = 0" % t) == [("[7, null, null]",)]


# ---- CAST and inet literals

def test_casts_of_integers_to_decimal_lose_no_digits(cql, table):
    # Cassandra's CastFctsTest.testNoLossOfPrecisionForCastToDecimal; cqlpy
    # test_cast_data.py::test_cast_from_large_varint and test_cast_from_counter
    from decimal import Decimal
    t = table("(k int PRIMARY KEY, b bigint, v varint, i int)")
    big = 32767456456456456456545678943512357658768763546575675
    cql.execute("INSERT INTO %s (k, b, v, i) VALUES (1, 9223372036854775807, %d, -7)" % (t, big))
    [r] = rows(cql, "SELECT CAST(b AS decimal), CAST(v AS decimal), CAST(i AS decimal) "
               "FROM %s" % t)
    assert r == (Decimal("9223372036854775807"), Decimal(big), Decimal("-7"))
    assert [x.as_tuple().exponent for x in r] == [0, 0, 0]
    c = table("(k int PRIMARY KEY, n counter)")
    cql.execute("UPDATE %s SET n = n + 1000 WHERE k = 1" % c)
    [(d,)] = rows(cql, "SELECT CAST(n AS decimal) FROM %s" % c)
    assert d == Decimal(1000) and d.as_tuple().exponent == 0


def test_an_ipv4_mapped_inet_literal_is_an_ipv4_address(cql, table):
    # InetAddressType.fromString reads text with InetAddress.getByName, which makes
    # ::ffff:a.b.c.d an Inet4Address
    t = table("(k int PRIMARY KEY, a inet)")
    cql.execute("INSERT INTO %s (k, a) VALUES (1, '::ffff:1.2.3.4')" % t)
    assert rows(cql, "SELECT a, CAST(a AS text) FROM %s" % t) == [("1.2.3.4", "1.2.3.4")]
    cql.execute("INSERT INTO %s (k, a) VALUES (1, '::1')" % t)
    assert rows(cql, "SELECT CAST(a AS text) FROM %s" % t) == [("0:0:0:0:0:0:0:1",)]


# ---- writetime() and ttl() inside other selectors, USING TIMESTAMP bounds

def test_writetime_and_ttl_as_function_arguments(cql, table):
    # Cassandra's TimestampTest.testTimestampTTL (CASSANDRA-8451)
    t = table("(k int PRIMARY KEY, c text, d text, l list<int>)")
    cql.execute("INSERT INTO %s (k, c) VALUES (1, 'test') USING TIMESTAMP 1234" % t)
    cql.execute("INSERT INTO %s (k, c) VALUES (2, 'test') USING TTL 400 AND TIMESTAMP 99" % t)
    got = sorted(rows(cql, "SELECT k, blobAsBigint(bigintAsBlob(writetime(c))), "
                      "blobAsInt(intAsBlob(ttl(c))), CAST(writetime(d) AS text) FROM %s" % t))
    assert [r[:2] for r in got] == [(1, 1234), (2, 99)]
    assert got[0][2] is None and 0 < got[1][2] <= 400
    assert [r[3] for r in got] == [None, None]
    assert rows(cql, "SELECT sum(blobAsBigint(bigintAsBlob(writetime(c)))) FROM %s" % t) == [
        (1333,)]
    [(js,)] = rows(cql, "SELECT JSON blobAsBigint(bigintAsBlob(writetime(c))) FROM %s "
                   "WHERE k = 1" % t)
    assert js == '{"system.blobasbigint(system.bigintasblob(writetime(c)))": 1234}'
    refused(cql, InvalidRequest, "Cannot use selection function writetime on PRIMARY KEY part k",
            "SELECT blobAsBigint(bigintAsBlob(writetime(k))) FROM %s" % t)
    refused(cql, InvalidRequest, "Cannot use selection function writeTime on non-frozen "
            "collection l", "SELECT bigintAsBlob(writetime(l)) FROM %s" % t)


def test_a_timestamp_of_long_min_value_is_refused(cql, table):
    # Cassandra's TimestampTest.testNegativeTimestamps (UpdateParameters' bounds)
    t = table("(k int PRIMARY KEY, v int)")
    cql.execute(cql.prepare("INSERT INTO %s (k, v) VALUES (?, ?) USING TIMESTAMP ?" % t),
                [1, 1, -42])
    assert rows(cql, "SELECT writetime(v) FROM %s WHERE k = 1" % t) == [(-42,)]
    refused(cql, InvalidRequest, "Out of bound timestamp, must be in [-9223372036854775807, "
            "9223372036854775807]", "INSERT INTO %s (k, v) VALUES (?, ?) USING TIMESTAMP ?" % t,
            2, 2, -2**63)


# ---- the schema tables

def test_aggregates_over_the_schema_tables_answer_one_row(cql, table):
    # what tools ask of system_schema: SELECT count(*) ... WHERE keyspace_name = ?, which
    # Cassandra answers with one row (0 when nothing matches)
    t = table("(k int PRIMARY KEY, v int, w text)")
    q = ("SELECT count(*), min(column_name), max(position), sum(position), keyspace_name "
         "FROM system_schema.columns WHERE keyspace_name = 'probetypes' AND table_name = '%s'")
    assert rows(cql, q % t) == [(3, "k", 0, -2, "probetypes")]
    assert rows(cql, "SELECT count(*), max(position) FROM system_schema.columns WHERE "
                "keyspace_name = 'no_such_keyspace'") == [(0, None)]
    assert rows(cql, "SELECT count(*) AS n FROM system.local") == [(1,)]
    assert rows(cql, "SELECT count(*) FROM system_schema.tables WHERE keyspace_name = ? AND "
                "table_name = ?", "probetypes", t) == [(1,)]
    assert rows(cql, "SELECT toJson(keyspace_name) FROM system_schema.tables WHERE "
                "keyspace_name = 'probetypes' AND table_name = '%s'" % t) == [('"probetypes"',)]


def test_local_strategy_is_reserved(cql):
    # CreateKeyspaceStatement / AlterKeyspaceStatement: LocalStrategy is internal
    refused(cql, InvalidRequest, "Unable to use given strategy class: LocalStrategy is reserved "
            "for internal use.", "CREATE KEYSPACE probetypes_local WITH replication = "
            "{'class': 'LocalStrategy'}")
    refused(cql, InvalidRequest, "LocalStrategy is reserved for internal use.",
            "ALTER KEYSPACE probetypes WITH replication = "
            "{'class': 'org.apache.cassandra.locator.LocalStrategy'}")


def test_deleting_an_element_of_a_frozen_collection(cql, table):
    # Cassandra's FrozenCollectionsTest.testInvalidOperations (Operation.ElementDeletion)
    t = table("(k int PRIMARY KEY, l frozen<list<int>>, m frozen<map<int, int>>, i int)")
    refused(cql, InvalidRequest, "Invalid deletion operation for frozen collection column l",
            "DELETE l[?] FROM %s WHERE k = ?" % t, 0, 0)
    refused(cql, InvalidRequest, "Invalid deletion operation for frozen collection column m",
            "DELETE m[0] FROM %s WHERE k = 0" % t)
    refused(cql, InvalidRequest, "Invalid deletion operation for non collection column i",
            "DELETE i[0] FROM %s WHERE k = 0" % t)
    refused(cql, InvalidRequest, "Invalid operation (l[0] = 1) for frozen collection column l",
            "UPDATE %s SET l[0] = 1 WHERE k = 0" % t)


# ---- the names PREPARE gives bind markers

def marker_names(cql, stmt):
    return [(c.name, c.type.cql_parameterized_type()) for c in cql.prepare(stmt).column_metadata]


def test_markers_inside_collections_and_tuples_take_cassandras_names(cql, table):
    # Lists/Sets/Maps.valueSpecOf, keySpecOf, indexSpecOf and Tuples' componentSpecOf name
    # the receivers of markers inside literals, element operations and relations
    t = table("(k int, c int, tp frozen<tuple<int, text>>, l list<int>, m map<int, text>, "
              "s set<int>, PRIMARY KEY (k, c))")
    assert marker_names(cql, "INSERT INTO %s (k, c, tp, l, m, s) VALUES "
                        "(?, ?, (?, ?), [?], {?: ?}, {?})" % t) == [
        ("k", "int"), ("c", "int"), ("tp[0]", "int"), ("tp[1]", "varchar"),
        ("value(l)", "int"), ("key(m)", "int"), ("value(m)", "varchar"), ("value(s)", "int")]
    assert marker_names(cql, "UPDATE %s SET l[?] = ?, m[?] = ?, s = s + ? "
                        "WHERE k = ? AND c = ?" % t) == [
        ("idx(l)", "int"), ("value(l)", "int"), ("key(m)", "int"), ("value(m)", "varchar"),
        ("s", "set<int>"), ("k", "int"), ("c", "int")]
    assert marker_names(cql, "DELETE m[?], l[?], s[?] FROM %s WHERE k = ? AND c = ?" % t) == [
        ("key(m)", "int"), ("idx(l)", "int"), ("value(s)", "int"), ("k", "int"), ("c", "int")]
    assert marker_names(cql, "SELECT * FROM %s WHERE k = ? AND l CONTAINS ? AND m CONTAINS "
                        "KEY ? AND m[?] = ? ALLOW FILTERING" % t) == [
        ("k", "int"), ("value(l)", "int"), ("key(m)", "int"), ("key(m)", "int"),
        ("value(m)", "varchar")]


# ---- materialized views

def test_alter_materialized_view_options(cql, table):
    # Cassandra's AlterViewStatement and CreateViewStatement checks; AlterTableStatement's
    # refusal to drop a column of a base table with views
    t = table("(k int PRIMARY KEY, v int, w int)")
    v = t + "_by_v"
    sel = "AS SELECT * FROM %s WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)" % t
    refused(cql, InvalidRequest, "Cannot set default_time_to_live for a materialized view. Data "
            "in a materialized view always expire at the same time than the corresponding data "
            "in the parent table.",
            "CREATE MATERIALIZED VIEW %s %s WITH default_time_to_live = 5" % (v, sel))
    cql.execute("CREATE MATERIALIZED VIEW %s %s" % (v, sel))
    try:
        cql.execute("ALTER MATERIALIZED VIEW %s WITH comment = 'by v' AND gc_grace_seconds = 100"
                    % v)
        assert rows(cql, "SELECT comment, gc_grace_seconds FROM system_schema.views WHERE "
                    "keyspace_name = 'probetypes' AND view_name = '%s'" % v) == [("by v", 100)]
        refused(cql, InvalidRequest, "Cannot set or alter default_time_to_live for a "
                "materialized view.", "ALTER MATERIALIZED VIEW %s WITH default_time_to_live = 10"
                % v)
        refused(cql, InvalidRequest, "Cannot alter gc_grace_seconds of a materialized view to 0",
                "ALTER MATERIALIZED VIEW %s WITH gc_grace_seconds = 0" % v)
        refused(cql, InvalidRequest, "Materialized view 'probetypes.no_view' doesn't exist",
                "ALTER MATERIALIZED VIEW no_view WITH comment = 'x'")
        cql.execute("ALTER MATERIALIZED VIEW IF EXISTS no_view WITH comment = 'x'")
        refused(cql, InvalidRequest, "Cannot drop column w on base table %s with materialized "
                "views" % t, "ALTER TABLE %s DROP w" % t)
        refused(cql, InvalidRequest, "Cannot alter gc_grace_seconds of the base table of a "
                "materialized view to 0", "ALTER TABLE %s WITH gc_grace_seconds = 0" % t)
    finally:
        cql.execute("DROP MATERIALIZED VIEW %s" % v)
    cql.execute("ALTER TABLE %s DROP w" % t)


def test_a_prepared_update_of_a_user_type_field_binds_the_field(cql, table):
    # Cassandra's UserTypesTest.testUpdateNonFrozenUDT, prepared: SET v.a = ? binds an int
    # named v.a (UserTypes.fieldSpecOf), not the whole type
    cql.execute("CREATE TYPE IF NOT EXISTS field_t (a int, b text)")
    t = table("(k int PRIMARY KEY, v field_t)")
    stmt = "UPDATE %s SET v.a = ?, v.b = ? WHERE k = ?" % t
    assert marker_names(cql, stmt) == [("v.a", "int"), ("v.b", "varchar"), ("k", "int")]
    cql.execute(cql.prepare(stmt), [5, "x", 1])
    [(v,)] = rows(cql, "SELECT v FROM %s WHERE k = 1" % t)
    assert (v.a, v.b) == (5, "x")
    cql.execute(cql.prepare("UPDATE %s SET v.b = ? WHERE k = ?" % t), [None, 1])
    [(v,)] = rows(cql, "SELECT v FROM %s WHERE k = 1" % t)
    assert (v.a, v.b) == (5, None)


def test_a_marker_for_a_multi_column_relation_is_a_tuple(cql, table):
    # Tuples.Raw / Tuples.INRaw name and type the receiver of (a, b) = ? and (a, b) IN ?
    t = table("(k int, a int, b text, PRIMARY KEY (k, a, b))")
    tup = "frozen<tuple<int, varchar>>"
    assert marker_names(cql, "SELECT * FROM %s WHERE k = ? AND (a, b) = ?" % t) == [
        ("k", "int"), ("(a,b)", tup)]
    assert marker_names(cql, "SELECT * FROM %s WHERE k = ? AND (a, b) > ?" % t) == [
        ("k", "int"), ("(a,b)", tup)]
    assert marker_names(cql, "SELECT * FROM %s WHERE k = ? AND (a, b) IN ?" % t) == [
        ("k", "int"), ("in(a,b)", "list<%s>" % tup)]
    assert marker_names(cql, "SELECT * FROM %s WHERE k = ? AND (a, b) IN ((?, ?))" % t) == [
        ("k", "int"), ("a", "int"), ("b", "varchar")]
    # and bound values for them are read as tuples
    for a in range(3):
        for b in "xy":
            cql.execute(cql.prepare("INSERT INTO %s (k, a, b) VALUES (0, ?, ?)" % t), [a, b])
    assert rows(cql, "SELECT a, b FROM %s WHERE k = ? AND (a, b) = ?" % t, 0, (1, "y")) == [
        (1, "y")]
    assert rows(cql, "SELECT a, b FROM %s WHERE k = ? AND (a, b) IN ?" % t, 0,
                [(1, "y"), (2, "x"), (2, "z")]) == [(1, "y"), (2, "x")]
    assert rows(cql, "SELECT a, b FROM %s WHERE k = ? AND (a, b) IN (?, ?)" % t, 0, (0, "x"),
                (1, "x")) == [(0, "x"), (1, "x")]
    refused(cql, InvalidRequest, "Invalid null value for column b",
            "SELECT a, b FROM %s WHERE k = ? AND (a, b) = ?" % t, 0, (1, None))
    assert rows(cql, "SELECT a, b FROM %s WHERE k = ? AND (a, b) > ? AND (a, b) <= ?" % t, 0,
                (0, "y"), (2, "x")) == [(1, "x"), (1, "y"), (2, "x")]


def test_field_updates_the_type_does_not_take_are_refused_at_prepare(cql, table):
    # Cassandra's UserTypesTest.testInvalidUDTStatements, prepared (Operation.SetField)
    cql.execute("CREATE TYPE IF NOT EXISTS field_t (a int, b text)")
    t = table("(k int PRIMARY KEY, u field_t, f frozen<field_t>, i int)")
    for stmt, msg in [("UPDATE %s SET f.a = ? WHERE k = 1",
                       "Invalid operation (f.a = ?) for frozen UDT column f"),
                      ("UPDATE %s SET i.a = ? WHERE k = 1",
                       "Invalid operation (i.a = ?) for non-UDT column i"),
                      ("UPDATE %s SET u.zz = ? WHERE k = 1",
                       "UDT column u does not have a field named zz")]:
        with pytest.raises(InvalidRequest) as e:
            cql.prepare(stmt % t)
        assert msg in str(e.value)


def test_compaction_sub_options_the_strategy_does_not_take(cql, table):
    # CompactionParams.validate: the strategy's validateOptions leaves them unknown
    from cassandra.protocol import ConfigurationException
    refused(cql, ConfigurationException, "Properties specified [foo] are not understood by "
            "SizeTieredCompactionStrategy", "CREATE TABLE probetypes.cfoo (k int PRIMARY KEY) "
            "WITH compaction = {'class': 'SizeTieredCompactionStrategy', 'foo': '1'}")
    refused(cql, ConfigurationException, "Properties specified [compaction_window_unit] are not "
            "understood by LeveledCompactionStrategy", "CREATE TABLE probetypes.cfoo (k int "
            "PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', "
            "'compaction_window_unit': 'DAYS'}")
    table("(k int PRIMARY KEY) WITH compaction = {'class': 'LeveledCompactionStrategy', "
          "'sstable_size_in_mb': '160', 'tombstone_threshold': '0.3'}")
    table("(k int PRIMARY KEY) WITH compaction = {'class': 'TimeWindowCompactionStrategy', "
          "'compaction_window_unit': 'DAYS', 'compaction_window_size': '1', 'bucket_low': '0.5'}")
