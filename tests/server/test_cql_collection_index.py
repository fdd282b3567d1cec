"""Secondary indexes on collections through the Python driver (Debian python3-cassandra)
against `quarry serve --cql`: CREATE INDEX on values(), keys(), entries() and full(),
each serving its restriction (CONTAINS, CONTAINS KEY, m[k] = v, = on a frozen collection)
without ALLOW FILTERING and answering the rows Cassandra 4 answers as the rows change,
Cassandra's refusals of the targets it refuses, the targets as system_schema and DESCRIBE
show them, and `quarry verify` finding the index entries the rows call for. Not indexes on
plain columns (test_cql_server.py)."""
import base64
import os
import subprocess
import time

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest, ReadFailure  # noqa: E402

from conftest import boto3_client, quarry_bin, raw  # noqa: E402

FILTERING = "ALLOW FILTERING"


@pytest.fixture
def cql(cql_server):
    srv = cql_server()
    s = srv.session(keyspace="ci")
    s.execute("CREATE TABLE c (k int PRIMARY KEY, tags set<text>, l list<int>, "
              "m map<text, int>, f frozen<list<int>>, big set<text>)")
    return srv, s


def keys(s, query, *args, timeout=10):
    """The k of each row the query answers, once the index has been built."""
    deadline = time.time() + timeout
    while True:
        try:
            return sorted(r.k for r in s.execute(query, args))
        except ReadFailure as e:  # still being built
            if "being built" not in str(e) or time.time() > deadline:
                raise
            time.sleep(0.05)


def settle(s, query, want, *args):
    """Index entries are applied asynchronously, as Cassandra's index writes are local but
    quarry's global indexes propagate: waits until the query answers want."""
    deadline = time.time() + 10
    got = keys(s, query, *args)
    while got != want and time.time() < deadline:
        time.sleep(0.05)
        got = keys(s, query, *args)
    return got


ROWS = [
    (1, {"a", "b"}, [1, 2, 2], {"x": 1, "y": 2}, [1, 2]),
    (2, {"b", "c"}, [3], {"y": 1}, [3]),
    (3, None, None, None, None),
]


def fill(s):
    ins = s.prepare("INSERT INTO c (k, tags, l, m, f) VALUES (?, ?, ?, ?, ?)")
    for row in ROWS:
        s.execute(ins, row)


def test_each_kind_serves_its_restriction_without_filtering(cql):
    _, s = cql
    fill(s)
    # without an index each needs ALLOW FILTERING, as in Cassandra
    for q in ("SELECT k FROM c WHERE tags CONTAINS 'b'", "SELECT k FROM c WHERE m['y'] = 1",
              "SELECT k FROM c WHERE m CONTAINS KEY 'x'", "SELECT k FROM c WHERE f = [3]"):
        with pytest.raises(InvalidRequest, match=FILTERING):
            s.execute(q)
    # indexes made over rows already stored
    s.execute("CREATE INDEX ON c (tags)")
    s.execute("CREATE INDEX ON c (values(l))")
    s.execute("CREATE INDEX mk ON c (keys(m))")
    s.execute("CREATE INDEX mv ON c (values(m))")
    s.execute("CREATE INDEX me ON c (entries(m))")
    s.execute("CREATE INDEX ff ON c (full(f))")
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'b'") == [1, 2]
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'a'") == [1]
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'zz'") == []
    assert keys(s, "SELECT k FROM c WHERE l CONTAINS 2") == [1]
    assert keys(s, "SELECT k FROM c WHERE m CONTAINS KEY 'y'") == [1, 2]
    assert keys(s, "SELECT k FROM c WHERE m CONTAINS 1") == [1, 2]
    assert keys(s, "SELECT k FROM c WHERE m CONTAINS 2") == [1]
    assert keys(s, "SELECT k FROM c WHERE m['y'] = 1") == [2]
    assert keys(s, "SELECT k FROM c WHERE m['y'] = 2") == [1]
    assert keys(s, "SELECT k FROM c WHERE m['x'] = 2") == []
    assert keys(s, "SELECT k FROM c WHERE f = [1, 2]") == [1]
    assert keys(s, "SELECT k FROM c WHERE f = [2, 1]") == []
    # bound values, prepared
    p = s.prepare("SELECT k FROM c WHERE m[?] = ?")
    assert sorted(r.k for r in s.execute(p, ("y", 2))) == [1]
    p = s.prepare("SELECT k FROM c WHERE tags CONTAINS ?")
    assert sorted(r.k for r in s.execute(p, ("c",))) == [2]
    # another restriction besides the index's filters, so it needs ALLOW FILTERING
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute("SELECT k FROM c WHERE tags CONTAINS 'b' AND l CONTAINS 3")
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'b' AND l CONTAINS 3 "
                   "ALLOW FILTERING") == [2]


def test_the_index_follows_the_rows(cql):
    _, s = cql
    s.execute("CREATE INDEX ON c (tags)")
    s.execute("CREATE INDEX me ON c (entries(m))")
    keys(s, "SELECT k FROM c WHERE tags CONTAINS 'a'")  # built
    keys(s, "SELECT k FROM c WHERE m['a'] = 1")
    fill(s)
    contains_b = "SELECT k FROM c WHERE tags CONTAINS 'b'"
    assert settle(s, contains_b, [1, 2]) == [1, 2]
    s.execute("UPDATE c SET tags = tags - {'b'} WHERE k = 1")
    assert settle(s, contains_b, [2]) == [2]
    s.execute("UPDATE c SET tags = tags + {'b'} WHERE k = 3")
    assert settle(s, contains_b, [2, 3]) == [2, 3]
    s.execute("DELETE tags FROM c WHERE k = 2")
    assert settle(s, contains_b, [3]) == [3]
    s.execute("UPDATE c SET m['z'] = 9 WHERE k = 3")
    assert settle(s, "SELECT k FROM c WHERE m['z'] = 9", [3]) == [3]
    s.execute("UPDATE c SET m['z'] = 8 WHERE k = 3")
    assert settle(s, "SELECT k FROM c WHERE m['z'] = 9", []) == []
    assert settle(s, "SELECT k FROM c WHERE m['z'] = 8", [3]) == [3]
    s.execute("DELETE m['z'] FROM c WHERE k = 3")
    assert settle(s, "SELECT k FROM c WHERE m['z'] = 8", []) == []
    s.execute("DELETE FROM c WHERE k = 3")
    assert settle(s, contains_b, []) == []
    # an element past the length an index key holds directly is found by its hash
    long = "x" * 5000
    s.execute("INSERT INTO c (k, tags) VALUES (4, {%r, 'short'})" % long)
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS %r" % long, [4]) == [4]
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS %r" % ("x" * 4999), []) == []
    # an element that expires leaves the answers though its entry stays until a write
    s.execute("UPDATE c USING TTL 1 SET tags = tags + {'brief'} WHERE k = 4")
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS 'brief'", [4]) == [4]
    time.sleep(2.1)
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'brief'") == []
    # the empty string is an element like any other
    s.execute("INSERT INTO c (k, tags) VALUES (5, {''})")
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS ''", [5]) == [5]


@pytest.mark.parametrize("stmt, message", [
    ("CREATE INDEX ON c (keys(tags))", "Cannot create index on keys of column tags with "
                                       "non-map type"),
    ("CREATE INDEX ON c (entries(l))", "Cannot create index on entries of column l with "
                                       "non-map type"),
    ("CREATE INDEX ON c (full(tags))", "full() indexes can only be created on frozen "
                                       "collections"),
    ("CREATE INDEX ON c (f)", "Cannot create values() index on frozen column f. Frozen "
                              "collections are immutable and must be fully indexed by using "
                              "the 'full(f)' modifier"),
    ("CREATE INDEX ON c (keys(f))", "Cannot create keys() index on frozen column f."),
    ("CREATE INDEX ON c (k)", "Cannot create secondary index on the only partition key "
                              "column k"),
])
def test_targets_cassandra_refuses(cql, stmt, message):
    _, s = cql
    with pytest.raises(InvalidRequest) as e:
        s.execute(stmt)
    assert message in str(e.value)


def test_the_only_partition_key_column_is_refused_first(cql):
    """Cassandra checks that the column is not the table's only partition key column before
    it looks at the target's kind."""
    _, s = cql
    s.execute("CREATE TABLE fk (a frozen<map<int, text>> PRIMARY KEY, b frozen<map<int, text>>)")
    for target in ("full(a)", "keys(a)", "a"):
        with pytest.raises(InvalidRequest, match="Cannot create secondary index on the only "
                                                 "partition key column a"):
            s.execute("CREATE INDEX ON fk (%s)" % target)
    with pytest.raises(InvalidRequest, match="Cannot create keys\\(\\) index on frozen column b"):
        s.execute("CREATE INDEX ON fk (keys(b))")


def test_schema_shows_the_targets_and_drop_index(cql):
    _, s = cql
    s.execute("CREATE INDEX ON c (tags)")
    s.execute("CREATE INDEX mk ON c (KEYS(m))")
    s.execute("CREATE INDEX me ON c (entries(m))")
    s.execute("CREATE INDEX ff ON c (full(f))")
    with pytest.raises(InvalidRequest, match="Index c_tags_idx2? is a duplicate of existing "
                                             "index c_tags_idx"):
        s.execute("CREATE INDEX c_tags_idx2 ON c (values(tags))")
    rows = {r.index_name: r.options["target"] for r in s.execute(
        "SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = 'ci'")}
    assert rows == {"c_tags_idx": "values(tags)", "mk": "keys(m)", "me": "entries(m)",
                    "ff": "full(f)"}
    described = "\n".join(r[3] for r in s.execute("DESCRIBE TABLE ci.c"))
    assert "CREATE INDEX c_tags_idx ON ci.c (values(tags));" in described
    assert "CREATE INDEX mk ON ci.c (keys(m));" in described
    assert "CREATE INDEX ff ON ci.c (full(f));" in described
    # the driver's metadata reads the same
    s.cluster.refresh_schema_metadata()
    idx = s.cluster.metadata.keyspaces["ci"].tables["c"].indexes
    assert idx["me"].index_options["target"] == "entries(m)"
    s.execute("DROP INDEX mk")
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute("SELECT k FROM c WHERE m CONTAINS KEY 'y'")


def test_verify_finds_every_entry(cql):
    srv, s = cql
    fill(s)
    s.execute("CREATE INDEX ON c (tags)")
    s.execute("CREATE INDEX me ON c (entries(m))")
    assert keys(s, "SELECT k FROM c WHERE m['y'] = 2") == [1]
    s.execute("UPDATE c SET tags = tags + {'q'} WHERE k = 2")
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS 'q'", [2]) == [2]
    out = subprocess.run([quarry_bin(), "verify", "--data", str(srv.data_dir), "ci.c"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, AWS_ACCESS_KEY_ID="local",
                                  AWS_SECRET_ACCESS_KEY="local", AWS_REGION="us-east-1"))
    assert out.returncode == 0, out.stdout + out.stderr
    # tags: a, b / b, c, q: five entries; m: x=1, y=2 / y=1: three
    assert "cql.c_tags_idx" in out.stdout and "cql.me" in out.stdout, out.stdout
    # through the API too: the entries a row's collection calls for, one per element
    out = subprocess.run([quarry_bin(), "verify", "--endpoint", srv.url, "ci.c"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, AWS_ACCESS_KEY_ID="local",
                                  AWS_SECRET_ACCESS_KEY="local", AWS_REGION="us-east-1"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 differences" in out.stdout, out.stdout


def test_an_indexed_column_is_not_dropped(cql):
    _, s = cql
    s.execute("CREATE INDEX ON c (tags)")
    s.execute("CREATE INDEX me ON c (entries(m))")
    s.execute("CREATE INDEX mk ON c (keys(m))")
    with pytest.raises(InvalidRequest, match=r"Cannot drop column tags because it has dependent "
                                             r"secondary indexes \(c_tags_idx\)"):
        s.execute("ALTER TABLE c DROP tags")
    with pytest.raises(InvalidRequest, match=r"Cannot drop column m because it has dependent "
                                             r"secondary indexes \((me, mk|mk, me)\)"):
        s.execute("ALTER TABLE c DROP m")
    s.execute("DROP INDEX c_tags_idx")
    s.execute("ALTER TABLE c DROP tags")
    assert "tags" not in [r.column_name for r in s.execute(
        "SELECT column_name FROM system_schema.columns WHERE keyspace_name = 'ci' "
        "AND table_name = 'c'")]


def test_truncate_empties_an_indexed_table_and_its_index(cql):
    _, s = cql
    for k in range(250):  # past one transaction of a hundred rows
        s.execute("INSERT INTO c (k, tags) VALUES (%s, {'t'})", (k,))
    s.execute("CREATE INDEX ON c (tags)")
    assert len(keys(s, "SELECT k FROM c WHERE tags CONTAINS 't'")) == 250
    s.execute("TRUNCATE c")
    assert list(s.execute("SELECT k FROM c")) == []
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS 't'", []) == []
    s.execute("INSERT INTO c (k, tags) VALUES (7, {'t'})")
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS 't'", [7]) == [7]


def metered_writes(srv, **labels):
    """The write units the server's /metrics counts for the labels."""
    from test_metrics import families, fetch, value
    status, _, body = fetch(srv.server)
    assert status == 200
    return value(families(body), "quarry_consumed_write_capacity_units",
                 "quarry_consumed_write_capacity_units_total", **labels) or 0


def test_collection_index_entries_are_charged_and_reported(cql):
    """Each element's entry is a write of the index, as a GSI entry is over the HTTP API:
    charged a write unit (of 1 KB) and reported, so the hot-key report of the index sees
    the element written most."""
    srv, s = cql
    s.execute("CREATE INDEX ON c (tags)")
    table = "ci.c"
    ddb = boto3_client(srv.url)
    ddb.update_contributor_insights(TableName=table, IndexName="cql.c_tags_idx",
                                    ContributorInsightsAction="ENABLE")
    base = metered_writes(srv, table=table, index="cql.c_tags_idx")
    s.execute("INSERT INTO c (k, tags) VALUES (1, {'a', 'b', 'c'})")  # three entries put
    assert settle(s, "SELECT k FROM c WHERE tags CONTAINS 'b'", [1]) == [1]
    assert metered_writes(srv, table=table, index="cql.c_tags_idx") == base + 3
    s.execute("UPDATE c SET tags = tags - {'a'} WHERE k = 1")  # one out
    assert metered_writes(srv, table=table, index="cql.c_tags_idx") == base + 4
    s.execute("UPDATE c SET tags = tags + {'hot'} WHERE k = 1")  # one in
    assert metered_writes(srv, table=table, index="cql.c_tags_idx") == base + 5
    s.execute("UPDATE c SET l = [1] WHERE k = 1")  # the index's entries do not change
    assert metered_writes(srv, table=table, index="cql.c_tags_idx") == base + 5
    for k in range(2, 12):
        s.execute("INSERT INTO c (k, tags) VALUES (%s, {'hot'})", (k,))
    assert metered_writes(srv, table=table, index="cql.c_tags_idx") == base + 15
    s.execute("DELETE FROM c WHERE k = 1")  # b, c and hot deleted
    assert metered_writes(srv, table=table, index="cql.c_tags_idx") == base + 18

    rules = ddb.describe_contributor_insights(
        TableName=table, IndexName="cql.c_tags_idx")["ContributorInsightsRuleList"]
    pkc = next(n for n in rules if "-PKC-" in n)
    now = int(time.time())
    r = raw(srv.url, "DynamoDB_20120810.GetInsightRuleReport",
            {"RuleName": pkc, "StartTime": now - 600, "EndTime": now + 60, "Period": 60,
             "MaxContributorCount": 3})
    assert r.status == 200, r.body
    counts = {c["Keys"][0]: c["ApproximateAggregateValue"] for c in r.json()["Contributors"]}
    # the key of 'hot' in the index: 0x01 and the element's bytes, base64
    hot = base64.b64encode(b"\x01hot").decode()
    # twelve writes of its entry (a read of 'b' while the index settles counts for 'b')
    assert counts.get(hot) == 12, counts


def index_attrs(srv, table):
    """The $i: attributes the stored rows of table hold, seen through the HTTP API."""
    ddb = boto3_client(srv.url)
    items = ddb.scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(a for item in items for a in item if a.startswith("$i:"))


def test_drop_index_leaves_nothing_in_the_rows(cql):
    """A dropped index leaves no trace a Cassandra user could meet: its attribute goes from
    every stored row (which a row's size, and so its read units, would otherwise count),
    and a row written later carries none."""
    srv, s = cql
    fill(s)
    s.execute("CREATE INDEX ON c (tags)")
    s.execute("CREATE INDEX mk ON c (keys(m))")
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'b'") == [1, 2]
    assert keys(s, "SELECT k FROM c WHERE m CONTAINS KEY 'y'") == [1, 2]
    assert index_attrs(srv, "ci.c") == ["$i:c_tags_idx"] * 2 + ["$i:mk"] * 2
    s.execute("DROP INDEX c_tags_idx")
    assert index_attrs(srv, "ci.c") == ["$i:mk"] * 2
    s.execute("INSERT INTO c (k, tags, m) VALUES (4, {'d'}, {'z': 1})")
    assert index_attrs(srv, "ci.c") == ["$i:mk"] * 3
    assert keys(s, "SELECT k FROM c WHERE m CONTAINS KEY 'z'") == [4]
    # the same name again indexes the rows anew
    s.execute("CREATE INDEX c_tags_idx ON c (tags)")
    assert keys(s, "SELECT k FROM c WHERE tags CONTAINS 'd'") == [4]
    assert index_attrs(srv, "ci.c").count("$i:c_tags_idx") == 3
