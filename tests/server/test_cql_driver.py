"""The Python driver (Debian python3-cassandra) against `quarry serve --cql`, as an application
uses it: Cluster(...).connect() on v4 and v5, with and without LZ4, with and without
PlainTextAuthProvider, discovering the one node and the schema (system.local, system.peers,
system_schema.*), following its own DDL through schema agreement and the SCHEMA_CHANGE
events, and running plain and prepared statements."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")
pytest.importorskip("lz4", reason="python3-lz4 is not installed")

from cassandra import AuthenticationFailed  # noqa: E402
from cassandra.auth import PlainTextAuthProvider  # noqa: E402
from cassandra.cluster import NoHostAvailable  # noqa: E402

ROLES = "app:app pass\n"


CASES = [(4, False, False), (4, True, True), (5, False, True), (5, True, False)]
IDS = ["v4", "v4-lz4-auth", "v5-auth", "v5-lz4"]


@pytest.mark.parametrize("version,lz4,auth", CASES, ids=IDS)
def test_connect_discover_and_follow_ddl(cql_server, version, lz4, auth):
    srv = cql_server(roles=ROLES if auth else None)
    kw = {"auth_provider": PlainTextAuthProvider("app", "app pass")} if auth else {}
    cluster = srv.cluster(protocol_version=version, compression=lz4, **kw)
    session = cluster.connect()
    assert cluster.protocol_version == version
    local = session.execute("SELECT release_version, cql_version FROM system.local").one()
    assert local.release_version.startswith("4.") and local.cql_version.startswith("3.")
    assert len(cluster.metadata.all_hosts()) == 1
    assert {"system", "system_schema"} <= set(cluster.metadata.keyspaces)

    session.execute("CREATE KEYSPACE shop WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE shop.orders (customer text, placed timestamp, total int, "
                    "PRIMARY KEY (customer, placed)) WITH CLUSTERING ORDER BY (placed DESC)")
    # The driver waited for schema agreement and refreshed its metadata on the change.
    table = cluster.metadata.keyspaces["shop"].tables["orders"]
    assert [c.name for c in table.partition_key] == ["customer"]
    assert [c.name for c in table.clustering_key] == ["placed"]
    assert set(table.columns) == {"customer", "placed", "total"}
    assert table.columns["total"].cql_type == "int"

    session.set_keyspace("shop")
    assert session.keyspace == "shop"
    prepared = session.prepare("SELECT release_version FROM system.local WHERE key = ?")
    assert session.execute(prepared, ["local"]).one().release_version == local.release_version


def test_a_wrong_password_is_refused(cql_server):
    cluster = cql_server(roles=ROLES).cluster(auth_provider=PlainTextAuthProvider("app", "wrong"))
    with pytest.raises(NoHostAvailable) as e:
        cluster.connect()
    (err,) = e.value.errors.values()
    assert isinstance(err, AuthenticationFailed)
    assert "Provided username app and/or password are incorrect" in str(err)


def test_no_credentials_against_an_authenticating_server(cql_server):
    cluster = cql_server(roles=ROLES).cluster(protocol_version=5)
    with pytest.raises(NoHostAvailable) as e:
        cluster.connect()
    (err,) = e.value.errors.values()
    assert isinstance(err, AuthenticationFailed)
    assert "requires authentication" in str(err)


@pytest.mark.parametrize("version", [4, 5])
def test_statements_through_the_driver(cql_server, version):
    """Prepared writes sent concurrently on many streams, a paged read of all of them in the
    table's clustering order, a batch, and a keyspace set on the session."""
    from cassandra.concurrent import execute_concurrent_with_args
    from cassandra.query import BatchStatement, SimpleStatement
    session = cql_server().session(protocol_version=version, compression=True)
    session.execute("CREATE KEYSPACE chat WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE chat.messages (room text, seq int, body text, "
                    "PRIMARY KEY (room, seq)) WITH CLUSTERING ORDER BY (seq DESC)")
    insert = session.prepare("INSERT INTO chat.messages (room, seq, body) VALUES (?, ?, ?)")
    results = execute_concurrent_with_args(
        session, insert, [("lobby", i, "message %d" % i) for i in range(250)], concurrency=100)
    assert all(ok for ok, _ in results)
    rows = list(session.execute(SimpleStatement(
        "SELECT seq, body FROM chat.messages WHERE room = 'lobby'", fetch_size=100)))
    assert [r.seq for r in rows] == list(range(249, -1, -1))
    assert rows[0].body == "message 249"

    batch = BatchStatement()
    batch.add(insert, ("hall", 1, "one"))
    batch.add(insert, ("hall", 2, "two"))
    session.execute(batch)
    session.set_keyspace("chat")
    select = session.prepare("SELECT body FROM messages WHERE room = ? AND seq = ?")
    assert session.execute(select, ("hall", 2)).one().body == "two"
