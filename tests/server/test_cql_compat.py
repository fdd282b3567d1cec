"""Cassandra 4 compatibility of `quarry serve --cql` where a Cassandra-targeted test suite
looks: the answers and the error types and messages Cassandra gives for statements at the
edges (empty batches, conditions, validation of keys and values, filtering, limits), each
checked through the Python driver (Debian python3-cassandra). One server serves the module;
each test works in its own table. Not the protocol framing (test_cql_wire.py) nor metadata
discovery (test_cql_driver.py)."""
import itertools

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.auth import PlainTextAuthProvider  # noqa: E402
from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile  # noqa: E402
from cassandra.policies import RoundRobinPolicy  # noqa: E402

from conftest import Server, launch  # noqa: E402
from cql_raw import cql_port  # noqa: E402

_names = itertools.count()


@pytest.fixture(scope="module")
def cql(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("compat")
    srv = launch(tmp / "data", tmp / "server.log", "--cql", "127.0.0.1:0")
    assert isinstance(srv, Server), (tmp / "server.log").read_text()
    # Credentials offered to a server that asks for none are simply not used.
    profile = ExecutionProfile(load_balancing_policy=RoundRobinPolicy())
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=4,
                      execution_profiles={EXEC_PROFILE_DEFAULT: profile}, connect_timeout=10,
                      control_connection_timeout=10,
                      auth_provider=PlainTextAuthProvider("cassandra", "cassandra"))
    session = cluster.connect()
    session.execute("CREATE KEYSPACE compat WITH replication = "
                    "{'class': 'NetworkTopologyStrategy', 'datacenter1': 1}")
    session.set_keyspace("compat")
    yield session
    cluster.shutdown()
    assert srv.stop() == 0, srv.log()


@pytest.fixture
def table(cql):
    """table(schema) -> a new table's name in keyspace compat."""
    def _table(schema):
        name = "t%d" % next(_names)
        cql.execute("CREATE TABLE %s %s" % (name, schema))
        return name
    return _table


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
