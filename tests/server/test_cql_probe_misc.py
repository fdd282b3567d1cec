"""Cassandra 4 behaviours of `quarry serve --cql` for null, empty and unset values, bind
markers and prepared metadata, lightweight transactions with static columns, and request
options (consistency levels), through the Python driver (Debian python3-cassandra). Each
case names the cqlpy test (ScyllaDB's suite, run against Cassandra too) or the Cassandra
source it follows. The run's shared server serves the module, in keyspace probe_misc; each
test works in its own table. Not the frame codec (test_cql_wire.py, test_cql_server.py)."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import UNSET_VALUE  # noqa: E402


@pytest.fixture(scope="module")
def cql(shared_cql):
    s = shared_cql.session(keyspace="probe_misc")
    yield s
    s.cluster.shutdown()


def ex(cql, stmt, *args):
    """The rows of stmt, prepared when it has bind values."""
    return [tuple(r) for r in cql.execute(cql.prepare(stmt) if args else stmt, args or None)]


def refused(cql, message, stmt, *args):
    """Asserts stmt (prepared when given bind values) is refused with Cassandra's message."""
    with pytest.raises(InvalidRequest) as e:
        cql.execute(cql.prepare(stmt) if args else stmt, args or None)
    assert message in str(e.value), str(e.value)


# ---- null key values ----

def test_a_null_key_value_is_refused_as_a_condition(cql, table):
    # cqlpy test_null.py::test_insert_null_key, test_insert_null_key_lwt,
    # test_insert_null_key_in_batch, test_delete_null_key: Cassandra turns an INSERT's key
    # values into the WHERE clause's equalities (SingleColumnRestriction.EQRestriction)
    t = table("(p text, c text, v text, PRIMARY KEY (p, c))")
    for lwt in ("", " IF NOT EXISTS"):
        refused(cql, "Invalid null value in condition for column c",
                "INSERT INTO %s (p, c) VALUES ('s', null)%s" % (t, lwt))
        refused(cql, "Invalid null value in condition for column p",
                "INSERT INTO %s (p, c) VALUES (null, 's')%s" % (t, lwt))
        refused(cql, "Invalid null value in condition for column c",
                "INSERT INTO %s (p, c) VALUES (?, ?)%s" % (t, lwt), "s", None)
        refused(cql, "Invalid null value in condition for column p",
                "BEGIN BATCH INSERT INTO %s (p, c) VALUES (?, ?)%s; APPLY BATCH" % (t, lwt),
                None, "s")
    refused(cql, "Invalid null value in condition for column p",
            "DELETE FROM %s WHERE p = null" % t)
    refused(cql, "Invalid null value in condition for column c",
            "DELETE FROM %s WHERE p = 'p' AND c = ?" % t, None)
    refused(cql, "Invalid null value in condition for column c",
            "UPDATE %s SET v = 'x' WHERE p = 'p' AND c IN ('a', null)" % t)
    refused(cql, "Invalid null value in condition for column p",
            "SELECT * FROM %s WHERE p = ?" % t, None)
    # IN ? bound to null: SingleColumnRestriction.InRestrictionWithMarker
    refused(cql, "Invalid null value for column p", "DELETE FROM %s WHERE p IN ?" % t, None)
    assert ex(cql, "SELECT * FROM %s" % t) == []


def test_a_missing_clustering_column_before_a_given_one(cql, table):
    # cqlpy test_null.py::test_delete_with_list_column_and_missing_clustering_key_part
    t = table("(id text, a int, b int, c list<int>, PRIMARY KEY ((id), a, b))")
    ex(cql, "INSERT INTO %s (id, a, b, c) VALUES ('k', 1, 1, [1])" % t)
    refused(cql, 'PRIMARY KEY column "b" cannot be restricted as preceding column "a" is not '
            "restricted", "DELETE c FROM %s WHERE id = 'k' AND b = 1" % t)
    ex(cql, "DELETE c FROM %s WHERE id = 'k' AND a = 1 AND b = 1" % t)
    assert ex(cql, "SELECT c FROM %s WHERE id = 'k' AND a = 1 AND b = 1" % t) == [(None,)]


def test_null_searched_in_a_collection_is_refused(cql, table):
    # cqlpy test_null.py::test_filtering_contains_null, test_filtering_contains_key_null
    # (Cassandra refuses, RowFilter.SimpleExpression.validate, rather than match nothing)
    t = table("(p text, c text, s set<int>, m map<int, int>, l list<int>, PRIMARY KEY (p, c))")
    ex(cql, "INSERT INTO %s (p, c, s, m, l) VALUES ('p', '1', {1}, {1: 2}, [3])" % t)
    for where, col in (("s CONTAINS NULL", "s"), ("m CONTAINS KEY NULL", "m"),
                       ("m CONTAINS NULL", "m"), ("l CONTAINS NULL", "l")):
        refused(cql, "Unsupported null value for column %s" % col,
                "SELECT c FROM %s WHERE p = 'p' AND %s ALLOW FILTERING" % (t, where))
    refused(cql, "Unsupported null value for column s",
            "SELECT c FROM %s WHERE p = 'p' AND s CONTAINS ? ALLOW FILTERING" % t, None)
    refused(cql, "Unsupported unset value for column m",
            "SELECT c FROM %s WHERE p = 'p' AND m CONTAINS KEY ? ALLOW FILTERING" % t, UNSET_VALUE)
    assert ex(cql, "SELECT c FROM %s WHERE p = 'p' AND s CONTAINS 1 ALLOW FILTERING" % t) == \
        [("1",)]


# ---- multi-column relations bound by one marker ----

@pytest.fixture
def rows3(cql, table):
    t = table("(p int, c int, d int, v int, PRIMARY KEY (p, c, d))")
    for c in range(3):
        ex(cql, "INSERT INTO %s (p, c, d, v) VALUES (1, ?, ?, ?)" % t, c, c, c)
    return t


def test_a_tuple_marker_is_named_and_typed_as_cassandra_prepares_it(cql, rows3):
    # Cassandra's Tuples.makeReceiver and Tuples.INRaw.makeInReceiver: "(c,d)" of
    # tuple<int, int>, "in(c,d)" of list<tuple<int, int>>
    t = rows3
    for where, names in (("(c, d) > ?", ["p", "(c,d)"]), ("(c, d) IN ?", ["p", "in(c,d)"]),
                         ("(c, d) IN (?, ?)", ["p", "(c,d)", "(c,d)"]), ("(c) = ?", ["p", "(c)"])):
        prepared = cql.prepare("SELECT c FROM %s WHERE p = ? AND %s" % (t, where))
        assert [col.name for col in prepared.column_metadata] == names
    prepared = cql.prepare("SELECT c FROM %s WHERE p = ? AND (c, d) IN ?" % t)
    assert prepared.column_metadata[1].type.cql_parameterized_type() == \
        "list<frozen<tuple<int, int>>>"


def test_tuple_markers_select_and_delete_rows(cql, rows3):
    # cassandra_tests/validation/operations/select_multi_column_relation_test.py's
    # prepared cases: a whole tuple bound to one marker
    t = rows3

    def q(where, *args):
        return ex(cql, "SELECT c FROM %s WHERE p = ? AND %s" % (t, where), 1, *args)
    assert q("(c, d) > ?", (0, 0)) == [(1,), (2,)]
    assert q("(c, d) >= ? AND (c, d) < ?", (1, 1), (2, 2)) == [(1,)]
    assert q("(c, d) = ?", (1, 1)) == [(1,)]
    assert q("(c, d) IN ?", [(0, 0), (2, 2)]) == [(0,), (2,)]
    assert q("(c, d) IN (?, ?)", (0, 0), (2, 2)) == [(0,), (2,)]
    assert q("(c) IN ?", [(1,)]) == [(1,)]
    ex(cql, "DELETE FROM %s WHERE p = ? AND (c, d) = ?" % t, 1, (0, 0))
    ex(cql, "DELETE FROM %s WHERE p = ? AND (c, d) > ?" % t, 1, (1, 1))
    assert q("(c, d) >= ?", (0, 0)) == [(1,)]


def test_nulls_in_multi_column_relations_in_cassandras_words(cql, rows3):
    # Cassandra's MultiColumnRestriction: EQRestriction, INRestriction, SliceRestriction
    t = rows3
    sel = "SELECT c FROM %s WHERE p = ? AND " % t
    refused(cql, "Invalid null value for column d", sel + "(c, d) = ?", 1, (1, None))
    refused(cql, "Invalid null value for column d", sel + "(c, d) = (1, null)", 1)
    refused(cql, "Invalid null value in condition for column d", sel + "(c, d) > ?", 1, (1, None))
    refused(cql, "Invalid null value in condition for column d", sel + "(c, d) > (1, null)", 1)
    refused(cql, "Invalid null value in condition for columns: [c, d]", sel + "(c, d) IN ?", 1,
            [(1, None)])
    refused(cql, "Invalid null value in condition for columns: [c, d]",
            sel + "(c, d) IN ((1, null))", 1)
    refused(cql, "Invalid null value for IN restriction", sel + "(c, d) IN ?", 1, None)


# ---- consistency levels ----

def at(cql, stmt, **levels):
    from cassandra.query import SimpleStatement
    return [tuple(r) for r in cql.execute(SimpleStatement(stmt, **levels))]


def refused_at(cql, message, stmt, **levels):
    from cassandra.query import SimpleStatement
    with pytest.raises(InvalidRequest) as e:
        cql.execute(SimpleStatement(stmt, **levels))
    assert message in str(e.value), str(e.value)


def test_consistency_levels_each_statement_refuses(cql, table):
    # Cassandra's ConsistencyLevel.validateForRead, validateForWrite,
    # validateCounterForWrite and validateForCasCommit, as ModificationStatement and
    # SelectStatement call them
    from cassandra import ConsistencyLevel as CL
    t = table("(p int, c int, v int, PRIMARY KEY (p, c))")
    counters = table("(p int PRIMARY KEY, n counter)")
    for level in (CL.SERIAL, CL.LOCAL_SERIAL):
        refused_at(cql, "You must use conditional updates for serializable writes",
                   "INSERT INTO %s (p, c, v) VALUES (1, 1, 1)" % t, consistency_level=level)
    refused_at(cql, "ANY ConsistencyLevel is only supported for writes",
               "SELECT * FROM %s WHERE p = 1" % t, consistency_level=CL.ANY)
    refused_at(cql, "Consistency level ANY is not yet supported for counter table %s" % counters,
               "UPDATE %s SET n = n + 1 WHERE p = 1" % counters, consistency_level=CL.ANY)
    refused_at(cql, "Counter operations are inherently non-serializable",
               "UPDATE %s SET n = n + 1 WHERE p = 1" % counters, consistency_level=CL.SERIAL)
    refused_at(cql, "SERIAL is not supported as conditional update commit consistency. Use ANY "
               "if you mean \"make sure it is accepted but I don't care how many replicas "
               "commit it for non-SERIAL reads\"",
               "INSERT INTO %s (p, c, v) VALUES (2, 1, 1) IF NOT EXISTS" % t,
               consistency_level=CL.SERIAL)
    refused_at(cql, "LOCAL_SERIAL is not supported as conditional update commit consistency",
               "UPDATE %s SET v = 2 WHERE p = 2 AND c = 1 IF v = 1" % t,
               consistency_level=CL.LOCAL_SERIAL)
    assert ex(cql, "SELECT * FROM %s" % t) == []
    # what each level serves
    at(cql, "INSERT INTO %s (p, c, v) VALUES (1, 1, 1)" % t, consistency_level=CL.ANY)
    assert at(cql, "SELECT v FROM %s WHERE p = 1" % t, consistency_level=CL.SERIAL) == [(1,)]
    assert at(cql, "INSERT INTO %s (p, c, v) VALUES (3, 1, 1) IF NOT EXISTS" % t,
              consistency_level=CL.ANY, serial_consistency_level=CL.LOCAL_SERIAL) == [(True,)]
    at(cql, "UPDATE %s SET n = n + 1 WHERE p = 1" % counters, consistency_level=CL.ALL)
    assert ex(cql, "SELECT n FROM %s" % counters) == [(1,)]


@pytest.fixture
def raw(shared_cql):
    import cql_raw
    conns = []

    def _raw(version):
        r = cql_raw.Raw(shared_cql.port, version=version)
        env, _ = r.startup()
        assert env.opcode == 0x02
        conns.append(r)
        return r
    yield _raw
    for r in conns:
        r.close()


@pytest.mark.parametrize("version", [4, 5])
def test_a_conditional_write_needs_a_serial_level(raw, table, version):
    # ConsistencyLevel.validateForCas, for the serial level of QUERY and BATCH (which the
    # driver checks on its own before sending, so sent raw)
    from cassandra import ConsistencyLevel as CL
    from cassandra.protocol import BatchMessage, QueryMessage
    from cassandra.query import BatchType
    t = table("(p int PRIMARY KEY, v int)")
    r = raw(version)
    message = "Invalid consistency for conditional update. Must be one of SERIAL or LOCAL_SERIAL"
    for level in (CL.ONE, CL.QUORUM):
        r.send(QueryMessage("INSERT INTO probe_misc.%s (p, v) VALUES (1, 1) IF NOT EXISTS" % t,
                            CL.ONE, serial_consistency_level=level))
        _, msg = r.recv()
        assert msg.code == 0x2200 and msg.message == message
        r.send(BatchMessage(BatchType.LOGGED, [(False, "UPDATE probe_misc.%s SET v = 2 WHERE p = 1 IF v = 1" % t,
                                 ())], CL.ONE, serial_consistency_level=level))
        _, msg = r.recv()
        assert msg.code == 0x2200 and msg.message == message
    r.send(QueryMessage("SELECT * FROM probe_misc.%s" % t, CL.ONE))
    _, msg = r.recv()
    assert msg.parsed_rows == []


# ---- the metadata of an EXECUTE's rows ----

def execute_raw(r, query_id, metadata_id, values, skip_metadata):
    """EXECUTE sent raw (the driver never sets skip_metadata): the answer's envelope and
    its rows' metadata flags."""
    import struct
    import cql_raw
    body = struct.pack(">H", len(query_id)) + query_id
    if r.version >= 5:
        body += struct.pack(">H", len(metadata_id)) + metadata_id
    flags = 0x01 | (0x02 if skip_metadata else 0)
    body += struct.pack(">H", 1)
    body += struct.pack(">I", flags) if r.version >= 5 else struct.pack(">B", flags)
    body += struct.pack(">H", len(values))
    body += b"".join(struct.pack(">i", len(v)) + v for v in values)
    r.send_bytes(cql_raw.header(r.version, 0, 1, 0x0A, len(body)) + body)
    env = r.recv_envelope()
    assert env.opcode == 0x08, env.decode()
    kind, row_flags = struct.unpack(">ii", env.body[:8])
    assert kind == 2
    return env, row_flags


@pytest.mark.parametrize("version", [4, 5])
def test_skip_metadata_and_metadata_changed(raw, cql, table, version):
    # Cassandra's ExecuteMessage.execute: before v5, NO_METADATA when the client asks and
    # the metadata is the one its PREPARE answered; from v5, METADATA_CHANGED with the new
    # id when the client's id is not the result's, else NO_METADATA when asked
    import struct
    from cassandra.protocol import PrepareMessage
    t = table("(p int, c int, v int, PRIMARY KEY (p, c))")
    ex(cql, "INSERT INTO %s (p, c, v) VALUES (1, 1, 1)" % t)
    r = raw(version)
    text = "SELECT * FROM probe_misc.%s WHERE p = ?" % t
    r.send(PrepareMessage(text))
    _, prepared = r.recv()
    first_id = prepared.result_metadata_id or b""
    one = struct.pack(">i", 1)
    env, flags = execute_raw(r, prepared.query_id, first_id, [one], True)
    assert flags == 0x0004
    assert struct.unpack(">i", env.body[8:12])[0] == 3  # the column count only
    env, flags = execute_raw(r, prepared.query_id, first_id, [one], False)
    assert flags == 0x0001  # global table spec, the columns' metadata
    ex(cql, "ALTER TABLE %s ADD w int" % t)
    env, flags = execute_raw(r, prepared.query_id, first_id, [one], True)
    if version >= 5:
        assert flags == 0x0001 | 0x0008
        # flags, column count, then the new id as [short bytes]
        new_id = env.body[14:14 + struct.unpack(">H", env.body[12:14])[0]]
    else:
        assert flags == 0x0001
    r.send(PrepareMessage(text))
    _, again = r.recv()
    assert again.query_id == prepared.query_id
    if version >= 5:
        assert again.result_metadata_id == new_id != first_id
    env, flags = execute_raw(r, prepared.query_id, again.result_metadata_id or b"", [one], True)
    assert flags == 0x0004
    assert struct.unpack(">i", env.body[8:12])[0] == 4
