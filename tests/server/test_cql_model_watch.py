"""`quarry serve --model --cql`: CQL statements matched to the access patterns of a model
imported from CQL (`quarry model import --cql`, tests/model/cql/seeds*.cql), through the
Python driver. Declared reads and writes count against their patterns; a SELECT with
ALLOW FILTERING or of every partition is a Scan finding naming its statement; a read no
pattern declares names the nearest; --strict refuses; and the hot-key report (contributor
insights, `quarry top`) shows the CQL partitions read and written."""
import base64
import os
import subprocess
import time
import uuid

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402

from conftest import boto3_client, quarry_bin, raw  # noqa: E402
from cqlserver import SIMPLE  # noqa: E402

CQL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "model", "cql")
TARGET = "DynamoDB_20120810."


def script(path):
    """The statements of a CQL file, comments dropped."""
    text = "\n".join(ln for ln in open(path).read().splitlines()
                     if not ln.lstrip().startswith("--"))
    return [s.strip() for s in text.split(";") if s.strip()]


def model_of(schema, queries, out):
    """out, the model `quarry model import --cql` writes for schema and its queries."""
    r = subprocess.run([quarry_bin(), "model", "import", "--cql", str(schema), "--queries",
                        str(queries), "-o", str(out)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return out


def watching(cql_server, model, schema, *extra, keyspace=None):
    """A server watching model and a session on it, schema's statements run on it (after
    creating keyspace, when named): (CqlServer, Session)."""
    srv = cql_server("--model", str(model), *extra)
    s = srv.session()
    if keyspace:
        s.execute("CREATE KEYSPACE %s WITH replication = %s" % (keyspace, SIMPLE))
    for stmt in script(schema):
        s.execute(stmt)
    return srv, s


@pytest.fixture
def watched(cql_server, tmp_path):
    """watched(*args): a server watching the seeds' model, with their schema created over CQL."""
    seeds = os.path.join(CQL, "seeds.cql")
    model = model_of(seeds, os.path.join(CQL, "seeds_queries.cql"), tmp_path / "seeds.yaml")
    return lambda *extra: watching(cql_server, model, seeds, *extra)


def describe(srv):
    r = raw(srv.url, TARGET + "QuarryDescribeModel", {})
    assert r.status == 200, r.body
    return r.json()


def pattern(srv, name):
    return next(p for p in describe(srv)["Patterns"] if p["Name"] == name)


def findings(srv, kind):
    return [f for f in describe(srv)["Findings"] if f["Kind"] == kind]


def test_declared_statements_count_against_their_patterns(watched):
    srv, s = watched()
    user = uuid.uuid4()
    send = s.prepare("INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
                     "VALUES (?, ?, ?, ?)")
    for i in range(5):
        s.execute(send, [user, 1_700_000_000_000 + i, uuid.uuid4(), "m%d" % i])
    # each statement of a BATCH is a write of its pattern
    s.execute("BEGIN BATCH "
              "INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
              "VALUES (%s, 1, %s, 'b1'); "
              "INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
              "VALUES (%s, 2, %s, 'b2'); APPLY BATCH" % (user, uuid.uuid4(), user, uuid.uuid4()))
    recent = s.prepare("SELECT * FROM messages_by_user WHERE user_id = ? AND sent_at > ? LIMIT 20")
    assert len(list(s.execute(recent, [user, 1_700_000_000_001]))) == 3
    # the same shape written with literals, keyspace-qualified, is the same pattern
    rows = s.execute("SELECT body FROM app.messages_by_user WHERE user_id = %s AND sent_at > 2"
                     % user)
    assert len(list(rows)) == 5
    s.execute("INSERT INTO events_by_user (user_id, month, event_time, event_id, kind, payload) "
              "VALUES (%s, '2026-03', 1700000000000, now(), 'login', {'ip': '10.0.0.1'})" % user)
    s.execute("SELECT event_time, kind FROM events_by_user WHERE user_id = %s AND month = "
              "'2026-03' ORDER BY event_time DESC LIMIT 100" % user)
    for _ in range(3):
        s.execute("UPDATE order_counts_by_user SET total = total + 1 WHERE user_id = %s" % user)
    assert s.execute("SELECT total FROM order_counts_by_user WHERE user_id = %s"
                     % user).one().total == 3

    assert pattern(srv, "send-message")["Observed"]["Requests"] == 7
    rm = pattern(srv, "recent-messages")["Observed"]
    assert rm["Requests"] == 2
    assert rm["ItemsReturned"] == 8 and rm["ItemsRead"] >= 8
    assert pattern(srv, "record-event")["Observed"]["Requests"] == 1
    assert pattern(srv, "month-events")["Observed"]["Requests"] == 1
    assert pattern(srv, "count-order")["Observed"]["Requests"] == 3
    assert pattern(srv, "order-count")["Observed"]["Requests"] == 1
    d = describe(srv)
    assert d["UnexercisedPatterns"] == []
    assert [f for f in d["Findings"] if f["Kind"] in ("Scan", "UndeclaredPattern")] == []


def test_allow_filtering_and_full_scans_are_scan_findings(watched):
    srv, s = watched()
    for i in range(4):
        s.execute("INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
                  "VALUES (%s, %d, %s, 'hello')" % (uuid.uuid4(), 1000 + i, uuid.uuid4()))
    # refused without ALLOW FILTERING (Cassandra's message), run with it
    with pytest.raises(InvalidRequest, match="ALLOW FILTERING"):
        s.execute("SELECT * FROM messages_by_user WHERE body = 'hello'")
    assert findings(srv, "Scan") == []
    rows = s.execute("SELECT * FROM messages_by_user WHERE body = 'hello' ALLOW FILTERING")
    assert len(list(rows)) == 4
    (scan,) = findings(srv, "Scan")
    assert scan["Table"] == "app.messages_by_user" and scan["Operation"] == "SELECT"
    assert "reads every partition" in scan["Message"] and "ALLOW FILTERING" in scan["Message"]
    assert "4 rows" in scan["Message"] and "1000000000 rows" in scan["Message"]
    assert "ALLOW FILTERING" in scan["Sample"]["Statement"]
    assert "body = 'hello'" in scan["Sample"]["Statement"]

    # an unrestricted SELECT and token() ranges read every partition too
    s.execute("SELECT * FROM events_by_user")
    s.execute("SELECT * FROM messages_by_user WHERE token(user_id) > 0")
    scans = {f["Message"].split(" reads ")[0]: f for f in findings(srv, "Scan")}
    assert "SELECT of app.events_by_user restricting nothing" in scans
    assert "SELECT of app.messages_by_user restricting nothing" in scans
    assert scans["SELECT of app.events_by_user restricting nothing"]["Sample"] == {
        "Statement": "SELECT * FROM events_by_user"}
    assert "finding=Scan table=app.messages_by_user" in srv.log()

    # filtering inside one partition is named as such
    user = uuid.uuid4()
    s.execute("SELECT * FROM messages_by_user WHERE user_id = %s AND body = 'x' ALLOW FILTERING"
              % user)
    inside = [f for f in findings(srv, "Scan") if "restricting user_id, body" in f["Message"]]
    assert len(inside) == 1 and "the partitions it names" in inside[0]["Message"]


def test_an_undeclared_read_names_the_nearest_pattern(watched):
    srv, s = watched()
    user = uuid.uuid4()
    s.execute("SELECT * FROM messages_by_user WHERE user_id = %s" % user)
    s.execute("SELECT * FROM messages_by_user WHERE user_id = %s AND sent_at > 0 "
              "ORDER BY sent_at ASC" % user)
    found = {f["Message"].split(" matches ")[0]: f for f in findings(srv, "UndeclaredPattern")}
    plain = found["SELECT of app.messages_by_user restricting user_id"]
    assert plain["Pattern"] == "recent-messages"
    assert "which differs in its range" in plain["Message"]
    assert "SELECT * FROM messages_by_user WHERE user_id = ? AND sent_at > ?" in plain["Message"]
    backward = found["SELECT of app.messages_by_user restricting user_id, sent_at "
                     "(a range on sent_at), backward"]
    assert "which differs in its direction" in backward["Message"]
    assert pattern(srv, "recent-messages")["Observed"]["Requests"] == 0


def test_strict_refuses_scans_and_undeclared_reads(watched):
    srv, s = watched("--strict")
    user = uuid.uuid4()
    s.execute("INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
              "VALUES (%s, 1, %s, 'a')" % (user, uuid.uuid4()))
    with pytest.raises(InvalidRequest, match="quarry --strict: .*reads every partition"):
        s.execute("SELECT * FROM messages_by_user WHERE body = 'a' ALLOW FILTERING")
    with pytest.raises(InvalidRequest, match="quarry --strict: SELECT of app.messages_by_user"):
        s.execute("SELECT * FROM messages_by_user WHERE user_id = %s" % user)
    rows = s.execute("SELECT * FROM messages_by_user WHERE user_id = %s AND sent_at > 0 LIMIT 20"
                     % user)
    assert [r.body for r in rows] == ["a"]


def report(srv, rule):
    now = time.time()
    r = raw(srv.url, TARGET + "GetInsightRuleReport",
            {"RuleName": rule, "StartTime": now - 600, "EndTime": now + 60, "Period": 60,
             "MaxContributorCount": 5})
    assert r.status == 200, r.body
    return r.json()


def test_hot_key_report_shows_cql_partitions(watched):
    srv, s = watched()
    ddb = boto3_client(srv.url)
    table = "app.messages_by_user"
    ddb.update_contributor_insights(TableName=table, ContributorInsightsAction="ENABLE")
    hot, cold = uuid.uuid4(), [uuid.uuid4() for _ in range(5)]
    send = s.prepare("INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
                     "VALUES (?, ?, ?, 'x')")
    for i in range(40):
        s.execute(send, [hot, i, uuid.uuid4()])
    for u in cold:
        s.execute(send, [u, 0, uuid.uuid4()])
    recent = s.prepare("SELECT * FROM messages_by_user WHERE user_id = ? AND sent_at > ? LIMIT 20")
    for _ in range(10):
        s.execute(recent, [hot, 0])
    # a scan reads every partition: each cold one shows up once more
    s.execute("SELECT * FROM messages_by_user WHERE body = 'x' ALLOW FILTERING")

    rules = ddb.describe_contributor_insights(TableName=table)["ContributorInsightsRuleList"]
    pkc = next(n for n in rules if "-PKC-" in n)
    rep = report(srv, pkc)
    assert rep["KeyLabels"] == ["$pk"]
    # the partition key in the form Cassandra serializes it: a uuid's 16 bytes
    keys = {c["Keys"][0]: c["ApproximateAggregateValue"] for c in rep["Contributors"]}
    b64 = lambda u: base64.b64encode(u.bytes).decode()
    assert max(keys, key=keys.get) == b64(hot)
    assert keys[b64(hot)] >= 40 + 10 * 20 + 40
    assert all(keys.get(b64(u)) == 2 for u in cold[:4] if b64(u) in keys)
    assert sum(1 for u in cold if b64(u) in keys) == 4  # MaxContributorCount 5: the hot one and 4

    env = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
               AWS_REGION="us-east-1")
    out = subprocess.run([quarry_bin(), "top", "--endpoint", srv.url, "--once", "--window",
                          "300", table], capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "most accessed partition keys" in out.stdout
    assert any(ln.strip().startswith(b64(hot)) and "%" in ln for ln in out.stdout.splitlines()), \
        out.stdout


def read_units(srv, name):
    return pattern(srv, name)["Observed"]["ReadUnits"]


def test_selects_are_metered_in_read_units_by_consistency(watched):
    """A SELECT's partition costs what a Query of it does: the bytes of its rows in 4 KB
    units, rounded up, half at ONE and LOCAL_ONE (eventually consistent)."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement
    srv, s = watched()
    user = uuid.uuid4()
    body = "x" * 4000
    send = s.prepare("INSERT INTO messages_by_user (user_id, sent_at, message_id, body) "
                     "VALUES (?, ?, ?, ?)")
    for i in range(4):
        s.execute(send, [user, 1000 + i, uuid.uuid4(), body])
    recent = "SELECT * FROM messages_by_user WHERE user_id = %s AND sent_at > 0 LIMIT 20" % user
    assert read_units(srv, "recent-messages") == 0
    s.execute(SimpleStatement(recent, consistency_level=ConsistencyLevel.QUORUM))
    strong = read_units(srv, "recent-messages")
    # four rows of 4000-byte bodies, each with at most 1 KB of keys and cell metadata
    assert strong == int(strong) and 4 <= strong <= 5
    for level in (ConsistencyLevel.ONE, ConsistencyLevel.LOCAL_ONE):
        s.execute(SimpleStatement(recent, consistency_level=level))
    assert read_units(srv, "recent-messages") == 2 * strong
    for level in (ConsistencyLevel.ALL, ConsistencyLevel.LOCAL_QUORUM):
        s.execute(SimpleStatement(recent, consistency_level=level))
    assert read_units(srv, "recent-messages") == 4 * strong
    # a partition holding nothing still costs a unit, as a Query finding nothing does
    empty = uuid.uuid4()
    s.execute(SimpleStatement("SELECT total FROM order_counts_by_user WHERE user_id = %s"
                              % empty, consistency_level=ConsistencyLevel.QUORUM))
    s.execute(SimpleStatement("SELECT total FROM order_counts_by_user WHERE user_id = %s"
                              % empty, consistency_level=ConsistencyLevel.ONE))
    assert read_units(srv, "order-count") == 1.5


@pytest.fixture
def spread(cql_server, tmp_path):
    """A server watching the spread model (a secondary index and a view), its schema
    created over CQL."""
    schema = os.path.join(CQL, "spread.cql")
    model = model_of(schema, os.path.join(CQL, "spread.queries.cql"), tmp_path / "spread.yaml")
    return watching(cql_server, model, schema, keyspace="shop")


def test_view_reads_and_in_partitions_are_watched_and_metered(spread):
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement
    srv, s = spread
    users = [uuid.uuid4() for _ in range(3)]
    put = s.prepare("INSERT INTO shop.orders_by_user (user_id, created_at, order_id, status) "
                    "VALUES (?, ?, ?, 'PENDING')")
    for i, u in enumerate(users[:2]):
        s.execute(put, [u, 1000 + i, uuid.uuid4()])
    # the view's rows are written asynchronously, as Cassandra's are
    view = SimpleStatement("SELECT * FROM shop.orders_by_status WHERE status = 'PENDING' "
                           "LIMIT 50", consistency_level=ConsistencyLevel.QUORUM)
    deadline = time.time() + 10
    while len(list(s.execute(view))) < 2 and time.time() < deadline:
        time.sleep(0.05)
    observed = pattern(srv, "pending-by-view")["Observed"]
    assert observed["Requests"] >= 1 and observed["ItemsReturned"] >= 2
    assert observed["ReadUnits"] == observed["Requests"]  # two small rows: a unit a read
    assert [f for f in findings(srv, "UndeclaredPattern") if "orders_by_status" in f["Message"]] \
        == []
    # IN names three partitions: three reads, each at least a unit (one holds nothing)
    s.execute(SimpleStatement("SELECT * FROM shop.orders_by_user WHERE user_id IN (%s)"
                              % ", ".join(map(str, users)),
                              consistency_level=ConsistencyLevel.ONE))
    some = pattern(srv, "some-users-orders")["Observed"]
    assert some["Requests"] == 1 and some["ReadUnits"] == 1.5


STATIC_SCHEMA = """
CREATE TABLE shop.carts (
    user_id uuid,
    item_id int,
    qty int,
    owner text STATIC,
    PRIMARY KEY ((user_id), item_id)
);
"""
STATIC_QUERIES = """
-- name: cart
SELECT * FROM shop.carts WHERE user_id = ?;

-- name: cart-item
SELECT * FROM shop.carts WHERE user_id = ? AND item_id = ?;
"""


def test_static_row_reads_are_metered(cql_server, tmp_path):
    """A partition's static row is a row the read reads, as any other: its bytes count in
    the partition's read units, whether the rows answered come with it or not."""
    from cassandra import ConsistencyLevel
    from cassandra.query import SimpleStatement
    (tmp_path / "s.cql").write_text(STATIC_SCHEMA)
    (tmp_path / "q.cql").write_text(STATIC_QUERIES)
    model = model_of(tmp_path / "s.cql", tmp_path / "q.cql", tmp_path / "s.yaml")
    srv, s = watching(cql_server, model, tmp_path / "s.cql", keyspace="shop")
    user, alone = uuid.uuid4(), uuid.uuid4()
    # a static cell of 6000 bytes, two rows of a few bytes
    s.execute("INSERT INTO shop.carts (user_id, item_id, qty, owner) VALUES (%s, 1, 1, %s)",
              (user, "o" * 6000))
    s.execute("INSERT INTO shop.carts (user_id, item_id, qty) VALUES (%s, 2, 1)", (user,))
    # a partition of its static row alone
    s.execute("UPDATE shop.carts SET owner = %s WHERE user_id = %s", ("o" * 6000, alone))
    quorum = ConsistencyLevel.QUORUM

    def units_of(pattern_name, stmt):
        before = pattern(srv, pattern_name)["Observed"]["ReadUnits"]
        s.execute(SimpleStatement(stmt, consistency_level=quorum))
        return pattern(srv, pattern_name)["Observed"]["ReadUnits"] - before

    # 6000 bytes of the static row and the two rows: two 4 KB units
    assert units_of("cart", "SELECT * FROM shop.carts WHERE user_id = %s" % user) == 2
    assert units_of("cart", "SELECT * FROM shop.carts WHERE user_id = %s" % alone) == 2
    assert units_of("cart-item", "SELECT * FROM shop.carts WHERE user_id = %s "
                                 "AND item_id = 2" % user) == 2
    # the static row is an item read: three in the first partition, one in the second
    observed = pattern(srv, "cart")["Observed"]
    assert observed["Requests"] == 2 and observed["ItemsRead"] == 4, observed
