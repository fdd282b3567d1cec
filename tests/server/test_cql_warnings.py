"""Client warnings of `quarry serve --cql` as Cassandra 4 sends them, through the Python
driver (Debian python3-cassandra): a batch over several partitions past
batch_size_warn_threshold (5 KiB) and an unlogged batch over more partitions than
unlogged_batch_across_partitions_warn_threshold (10), in the WARNING flag of protocol v4
and v5 and never v3. Not the refusal past the fail threshold (test_cql_gaps2.py) nor the
frame codec (test_cql_wire.py, tests/unit/cqlwire)."""

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile  # noqa: E402
from cassandra.policies import RoundRobinPolicy  # noqa: E402
from cassandra.query import BatchStatement, BatchType  # noqa: E402

from conftest import Server, launch  # noqa: E402
from cql_raw import cql_port  # noqa: E402

KB = "x" * 1024


def connect(srv, version):
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy())
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=version,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=10,
                      control_connection_timeout=10)
    return cluster, cluster.connect("warn")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("warnings")
    srv = launch(tmp / "data", tmp / "server.log", "--cql", "127.0.0.1:0")
    assert isinstance(srv, Server), (tmp / "server.log").read_text()
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy())
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=4,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=10,
                      control_connection_timeout=10)
    session = cluster.connect()
    session.execute("CREATE KEYSPACE warn WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    cluster.shutdown()
    yield srv
    assert srv.stop() == 0, srv.log()


@pytest.fixture(scope="module")
def cql(server):
    cluster, session = connect(server, 4)
    yield session
    cluster.shutdown()


def warnings_of(session, stmt, args=None):
    return session.execute(stmt, args).response_future.warnings


def batch_of(ins, keys, kind=BatchType.LOGGED, value=KB):
    batch = BatchStatement(batch_type=kind)
    for k, c in keys:
        batch.add(ins, (k, c, value))
    return batch


def size_warning(tables, size):
    return ("Batch for [%s] is of size %d, exceeding specified threshold of 5120 by %d."
            % (tables, size, size - 5120))


def test_a_batch_over_partitions_past_five_kib_is_warned_with_cassandras_text(cql, table):
    t = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    ins = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
    # the estimate counts the written values: two ints and 1024 bytes of text a row
    assert warnings_of(cql, batch_of(ins, [(k, 0) for k in range(6)])) == \
        [size_warning("warn." + t, 6 * 1032)]
    assert [tuple(r) for r in cql.execute("SELECT count(*) FROM %s" % t)] == [(6,)]
    # a batch under the threshold, and one past it in a single partition, are not warned
    assert not warnings_of(cql, batch_of(ins, [(k, 1) for k in range(4)]))
    assert not warnings_of(cql, batch_of(ins, [(100, c) for c in range(20)]))
    assert [tuple(r) for r in cql.execute("SELECT count(*) FROM %s" % t)] == [(30,)]


def test_the_warning_names_every_table_of_the_batch_once(cql, table):
    a = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    b = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    ins_a = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % a)
    ins_b = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % b)
    batch = BatchStatement()
    for k in range(3):
        batch.add(ins_a, (k, 0, KB))
        batch.add(ins_b, (k, 0, KB))
    assert warnings_of(cql, batch) == [size_warning("warn.%s, warn.%s" % (a, b), 6 * 1032)]


def test_a_batch_text_past_the_threshold_is_warned_too(cql, table):
    t = table("(k int PRIMARY KEY, v text)")
    text = "BEGIN BATCH " + " ".join(
        "INSERT INTO %s (k, v) VALUES (%d, '%s');" % (t, k, KB) for k in range(6)) + \
        " APPLY BATCH"
    got = warnings_of(cql, text)
    assert got and len(got) == 1, got
    assert got[0].startswith("Batch for [warn.%s] is of size " % t), got
    assert "exceeding specified threshold of 5120 by " in got[0], got


def test_a_single_statement_past_the_threshold_is_not_warned(cql, table):
    t = table("(k int PRIMARY KEY, v text)")
    assert not warnings_of(cql, "INSERT INTO %s (k, v) VALUES (1, '%s')" % (t, KB * 8))
    ins = cql.prepare("INSERT INTO %s (k, v) VALUES (?, ?)" % t)
    assert not warnings_of(cql, ins, (2, KB * 8))
    assert not warnings_of(cql, "SELECT * FROM %s" % t)


def test_an_unlogged_batch_over_more_than_ten_partitions_is_warned(cql, table):
    t = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    ins = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
    partitions = "Unlogged batch covering %d partitions detected against table [warn.%s]. " \
        "You should use a logged batch for atomicity, or asynchronous writes for performance."
    keys = [(k, c) for k in range(11) for c in range(2)]
    assert warnings_of(cql, batch_of(ins, keys, BatchType.UNLOGGED, "v")) == \
        [partitions % (11, t)]
    # ten partitions, or a logged batch, are not warned
    assert not warnings_of(cql, batch_of(ins, keys[:20], BatchType.UNLOGGED, "v"))
    assert not warnings_of(cql, batch_of(ins, keys, BatchType.LOGGED, "v"))
    # past both thresholds: both warnings, the size first, as Cassandra checks them
    keys = [(k, 5) for k in range(12)]
    assert warnings_of(cql, batch_of(ins, keys, BatchType.UNLOGGED)) == \
        [size_warning("warn." + t, 12 * 1032), partitions % (12, t)]


def test_a_refused_batch_carries_no_warning_and_the_connection_stays_usable(cql, table):
    from cassandra import InvalidRequest
    t = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    ins = cql.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
    with pytest.raises(InvalidRequest, match="Batch too large"):
        cql.execute(batch_of(ins, [(k, 0) for k in range(60)]))
    assert warnings_of(cql, batch_of(ins, [(k, 0) for k in range(6)]))
    assert not warnings_of(cql, batch_of(ins, [(k, 1) for k in range(2)]))
    assert [tuple(r) for r in cql.execute("SELECT count(*) FROM %s" % t)] == [(8,)]


@pytest.mark.parametrize("version", [3, 5])
def test_warnings_go_to_v5_and_never_to_v3(server, cql, table, version):
    t = table("(k int, c int, v text, PRIMARY KEY (k, c))")
    cluster, session = connect(server, version)
    try:
        ins = session.prepare("INSERT INTO %s (k, c, v) VALUES (?, ?, ?)" % t)
        got = warnings_of(session, batch_of(ins, [(k, 0) for k in range(6)]))
        if version == 3:
            assert not got
        else:
            assert got == [size_warning("warn." + t, 6 * 1032)]
        assert [tuple(r) for r in session.execute("SELECT count(*) FROM %s" % t)] == [(6,)]
    finally:
        cluster.shutdown()
