"""DESCRIBE over `quarry serve --cql`, as Cassandra 4 answers it on the server (cqlsh's DESC
sends it): the listings' (keyspace_name, type, name) rows, the elements' create_statement in
Cassandra's layout, checked against the Python driver's own export of the same schema (built
from system_schema), statements that recreate the keyspace they describe, paging over the rows
with a refusal when the schema changes between pages, DESCRIBE CLUSTER, and the errors for
what does not exist."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

SCHEMA = [
    "CREATE KEYSPACE {ks} WITH replication = {{'class': 'SimpleStrategy', 'replication_factor': 1}}",
    "CREATE TYPE {ks}.address (street text, \"Zip Code\" int)",
    "CREATE TABLE {ks}.messages (user_id text, sent_at timestamp, id uuid, body text, "
    "tags set<text>, home frozen<address>, PRIMARY KEY (user_id, sent_at, id)) "
    "WITH CLUSTERING ORDER BY (sent_at DESC, id ASC) AND comment = 'it''s the inbox' "
    "AND default_time_to_live = 86400",
    "CREATE TABLE {ks}.events (user_id text, month int, at timeuuid, kind text, n bigint static, "
    "\"Payload\" blob, PRIMARY KEY ((user_id, month), at))",
    "CREATE TABLE {ks}.likes (post_id uuid PRIMARY KEY, total counter)",
    "CREATE INDEX by_kind ON {ks}.events (kind)",
    "CREATE MATERIALIZED VIEW {ks}.by_body AS SELECT * FROM {ks}.messages WHERE body IS NOT NULL "
    "AND user_id IS NOT NULL AND sent_at IS NOT NULL AND id IS NOT NULL "
    "PRIMARY KEY (body, user_id, sent_at, id)",
]


@pytest.fixture
def session(cql_server):
    s = cql_server().session(protocol_version=None)
    for stmt in SCHEMA:
        s.execute(stmt.format(ks="shop"))
    return s.cluster, s


def rows(s, text, fetch_size=None):
    return list(s.execute(SimpleStatement(text, fetch_size=fetch_size)))


def without_memtable(cql):
    # Cassandra 4.1 writes the memtable option; the driver's export predates it
    return "\n".join(line for line in cql.split("\n") if "AND memtable = " not in line)


def test_describe_keyspace_lists_every_element_in_cassandras_order(session):
    cluster, s = session
    got = rows(s, "DESCRIBE KEYSPACE shop")
    assert [(r.keyspace_name, r.type, r.name) for r in got] == [
        ("shop", "keyspace", "shop"),
        ("shop", "type", "address"),
        ("shop", "table", "events"),
        ("shop", "index", "by_kind"),
        ("shop", "table", "likes"),
        ("shop", "table", "messages"),
        ("shop", "materialized_view", "by_body"),
    ]
    assert got[0].create_statement == (
        "CREATE KEYSPACE shop WITH replication = {'class': "
        "'org.apache.cassandra.locator.SimpleStrategy', 'replication_factor': '1'}  "
        "AND durable_writes = true;")


def test_create_statements_match_the_drivers_export_of_system_schema(session):
    cluster, s = session
    cluster.refresh_schema_metadata()
    meta = cluster.metadata.keyspaces["shop"]
    ours = {r.name: r.create_statement for r in rows(s, "DESCRIBE KEYSPACE shop")}
    assert without_memtable(ours["messages"]) == meta.tables["messages"].as_cql_query(formatted=True) + ";"
    assert without_memtable(ours["events"]) == meta.tables["events"].as_cql_query(formatted=True) + ";"
    assert without_memtable(ours["likes"]) == meta.tables["likes"].as_cql_query(formatted=True) + ";"
    assert ours["address"] == meta.user_types["address"].as_cql_query(formatted=True) + ";"
    assert ours["by_kind"] == meta.indexes["by_kind"].as_cql_query() + ";"
    assert without_memtable(ours["by_body"]) == meta.views["by_body"].as_cql_query(formatted=True) + ";"
    assert "'it''s the inbox'" in ours["messages"]
    assert '"Zip Code" int' in ours["address"] and '"Payload" blob' in ours["events"]
    assert "    n bigint static," in ours["events"]
    assert "PRIMARY KEY ((user_id, month), at)" in ours["events"]
    assert "    post_id uuid PRIMARY KEY," in ours["likes"]


def test_the_statements_recreate_the_keyspace(session):
    cluster, s = session
    first = rows(s, "DESCRIBE KEYSPACE shop")
    for r in first:
        s.execute(r.create_statement.replace("shop", "copy"))
    again = rows(s, "DESCRIBE KEYSPACE copy")
    assert [(r.type, r.name, r.create_statement) for r in again] == \
        [(r.type, r.name.replace("shop", "copy"), r.create_statement.replace("shop", "copy"))
         for r in first]


def test_listings_and_single_elements(session):
    cluster, s = session
    names = [r.keyspace_name for r in rows(s, "DESCRIBE KEYSPACES")]
    assert names == sorted(names, key=str.lower)
    assert {"shop", "system", "system_schema"} <= set(names)
    assert len(rows(s, "DESCRIBE KEYSPACES")[0]) == 3
    s.set_keyspace("shop")
    assert [r.name for r in rows(s, "DESCRIBE TABLES")] == ["events", "likes", "messages"]
    assert [r.name for r in rows(s, "DESCRIBE TYPES")] == ["address"]
    assert rows(s, "DESCRIBE FUNCTIONS") == [] and rows(s, "DESCRIBE AGGREGATES") == []
    table = rows(s, "DESC TABLE events")
    assert [(r.type, r.name) for r in table] == [("table", "events"), ("index", "by_kind")]
    assert [r.type for r in rows(s, "DESCRIBE by_kind")] == ["index"]
    assert [r.type for r in rows(s, "DESCRIBE by_body")] == ["materialized_view"]
    assert [r.type for r in rows(s, "DESCRIBE shop")][:2] == ["keyspace", "type"]
    only = rows(s, "DESCRIBE ONLY KEYSPACE")
    assert [(r.type, r.name) for r in only] == [("keyspace", "shop")]
    assert rows(s, "DESCRIBE TYPE address")[0].create_statement.startswith("CREATE TYPE shop.address (")
    local = rows(s, "DESCRIBE TABLE system.local")[0].create_statement
    assert local.startswith("CREATE TABLE system.local (\n    key text PRIMARY KEY,")
    schema = rows(s, "DESCRIBE SCHEMA")
    assert {r.keyspace_name for r in schema} == {"shop"}
    assert {"shop", "system"} <= {r.keyspace_name for r in rows(s, "DESCRIBE FULL SCHEMA")}


def test_cluster(session):
    cluster, s = session
    row = rows(s, "DESCRIBE CLUSTER")[0]
    assert (row.cluster, row.partitioner, row.snitch) == ("quarry", "Murmur3Partitioner", "SimpleSnitch")
    assert not hasattr(row, "range_ownership")
    s.set_keyspace("shop")
    row = rows(s, "DESCRIBE CLUSTER")[0]
    assert row.range_ownership == {"0": ["/127.0.0.1:7000"]}


def test_pages_and_a_schema_change_between_them(session):
    cluster, s = session
    whole = [tuple(r) for r in rows(s, "DESCRIBE FULL SCHEMA")]
    assert [tuple(r) for r in rows(s, "DESCRIBE FULL SCHEMA", fetch_size=2)] == whole
    result = s.execute(SimpleStatement("DESCRIBE KEYSPACE shop", fetch_size=2))
    assert len(result.current_rows) == 2 and result.has_more_pages
    s.execute("CREATE TABLE shop.later (k int PRIMARY KEY)")
    with pytest.raises(InvalidRequest, match="The schema has changed since the previous page"):
        result.fetch_next_page()


@pytest.mark.parametrize("text,message", [
    ("DESCRIBE TABLE shop.nope", "Table 'nope' not found in keyspace 'shop'"),
    ("DESCRIBE KEYSPACE nope", "'nope' not found in keyspaces"),
    ("DESCRIBE TYPE shop.nope", "User defined type 'nope' not found in 'shop'"),
    ("DESCRIBE INDEX shop.nope", "Index 'nope' not found in 'shop'"),
    ("DESCRIBE MATERIALIZED VIEW shop.nope", "Materialized view 'nope' not found in 'shop'"),
    ("DESCRIBE FUNCTION shop.f", "User defined function 'f' not found in 'shop'"),
    ("DESCRIBE shop.nope", "'nope' not found in keyspace 'shop'"),
    ("DESCRIBE TABLE nope", "No keyspace specified and no current keyspace"),
])
def test_what_does_not_exist(session, text, message):
    cluster, s = session
    with pytest.raises(InvalidRequest, match=message):
        s.execute(text)
