"""Secondary indexes on a table's key and static columns, and on columns of any type,
through the Python driver (Debian python3-cassandra) against `quarry serve --cql`: CREATE
INDEX on a clustering column, on one column of a composite partition key and on a static
column, each serving `col = ?` without ALLOW FILTERING as Cassandra 4 does, answering the
rows Cassandra answers, in its token order, as they are updated, deleted (a row, a range of
rows, a partition) and expire, page by page, and right after each write; floats, tuples,
'' and long texts as indexed values; the indexes as system_schema and system."IndexInfo"
show them, DROP INDEX, `quarry verify` on such tables; the names CREATE INDEX gives and the
refusals it and SELECT make in Cassandra's words; and an index's build spending none of its
table's capacity. Not indexes on collections (test_cql_collection_index.py)."""
import os
import subprocess
import time

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest, ReadFailure  # noqa: E402
from cassandra.protocol import ConfigurationException  # noqa: E402
from cassandra.query import SimpleStatement  # noqa: E402

from conftest import boto3_client, quarry_bin  # noqa: E402

FILTERING = "ALLOW FILTERING"


@pytest.fixture
def cql(cql_server):
    srv = cql_server()
    s = srv.session(keyspace="ki")
    # readings of a sensor, bucketed by day, newest first
    s.execute("CREATE TABLE readings (sensor text, day int, at int, seq int, site text static, "
              "value int, PRIMARY KEY ((sensor, day), at, seq)) "
              "WITH CLUSTERING ORDER BY (at DESC, seq ASC)")
    return srv, s


def rows(s, query, *args):
    """The rows a query answers, as sorted tuples, once the index is readable."""
    deadline = time.time() + 10
    while True:
        try:
            return sorted(tuple(r) for r in s.execute(query, args))
        except ReadFailure as e:  # still being built
            if "being built" not in str(e) or time.time() > deadline:
                raise
            time.sleep(0.05)


def settle(s, query, want, *args):
    """Waits until the query answers want (an index being built over rows already stored,
    a row expiring), then returns what it answers."""
    deadline = time.time() + 10
    got = rows(s, query, *args)
    while got != want and time.time() < deadline:
        time.sleep(0.05)
        got = rows(s, query, *args)
    return got


def fill(s):
    ins = s.prepare("INSERT INTO readings (sensor, day, at, seq, value) VALUES (?, ?, ?, ?, ?)")
    for sensor in ("a", "b"):
        for day in (1, 2):
            for at in (10, 20, 30):
                s.execute(ins, (sensor, day, at, at // 10, at + day))


def test_clustering_columns_are_indexed(cql):
    _, s = cql
    fill(s)
    # seq is the second clustering column: without an index it cannot be restricted alone
    with pytest.raises(InvalidRequest, match='PRIMARY KEY column "seq" cannot be restricted'):
        s.execute("SELECT value FROM readings WHERE seq = 2")
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute("SELECT value FROM readings WHERE at = 20")
    s.execute("CREATE INDEX ON readings (seq)")
    s.execute("CREATE INDEX ON readings (at)")
    by_seq = "SELECT sensor, day, at FROM readings WHERE seq = %s"
    assert settle(s, by_seq, [("a", 1, 20), ("a", 2, 20), ("b", 1, 20), ("b", 2, 20)], 2) == \
        [("a", 1, 20), ("a", 2, 20), ("b", 1, 20), ("b", 2, 20)]
    assert rows(s, "SELECT sensor, day FROM readings WHERE at = 30") == \
        [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert rows(s, by_seq, 7) == []
    # prepared, the value bound
    p = s.prepare("SELECT value FROM readings WHERE at = ?")
    assert sorted(r.value for r in s.execute(p, (10,))) == [11, 11, 12, 12]
    # the index serves its restriction within a partition too; a second restriction
    # filters, which takes ALLOW FILTERING
    assert rows(s, "SELECT at FROM readings WHERE sensor = 'a' AND day = 1 AND seq = 3") == \
        [(30,)]
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute("SELECT at FROM readings WHERE seq = 3 AND value = 31")
    assert rows(s, "SELECT sensor, day FROM readings WHERE seq = 3 AND value = 31 "
                   "ALLOW FILTERING") == [("a", 1), ("b", 1)]
    # an index on a column does not let DELETE name rows by it
    with pytest.raises(InvalidRequest):
        s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 1 AND seq = 3")

    # a row deleted, a range of rows deleted, a partition deleted
    at30 = "SELECT sensor, day FROM readings WHERE at = 30"
    s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 1 AND at = 30 AND seq = 3")
    assert settle(s, at30, [("a", 2), ("b", 1), ("b", 2)]) == [("a", 2), ("b", 1), ("b", 2)]
    s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 2 AND at >= 20")
    assert settle(s, at30, [("b", 1), ("b", 2)]) == [("b", 1), ("b", 2)]
    assert settle(s, by_seq, [("a", 1, 20), ("b", 1, 20), ("b", 2, 20)], 2) == \
        [("a", 1, 20), ("b", 1, 20), ("b", 2, 20)]
    s.execute("DELETE FROM readings WHERE sensor = 'b' AND day = 1")
    assert settle(s, at30, [("b", 2)]) == [("b", 2)]
    # a row that expires
    s.execute("INSERT INTO readings (sensor, day, at, seq, value) VALUES ('c', 1, 30, 9, 0) "
              "USING TTL 1")
    assert settle(s, at30, [("b", 2), ("c", 1)]) == [("b", 2), ("c", 1)]
    time.sleep(2.1)
    assert settle(s, at30, [("b", 2)]) == [("b", 2)]
    # a row written again under the same key is found once
    s.execute("UPDATE readings SET value = 5 WHERE sensor = 'b' AND day = 2 AND at = 30 "
              "AND seq = 3")
    assert rows(s, "SELECT value FROM readings WHERE at = 30") == [(5,)]


def test_a_partition_key_column_is_indexed(cql):
    _, s = cql
    fill(s)
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute("SELECT sensor FROM readings WHERE day = 2")
    s.execute("CREATE INDEX ON readings (day)")
    s.execute("CREATE INDEX ON readings (sensor)")
    by_day = "SELECT sensor, at FROM readings WHERE day = %s"
    want = [("a", 10), ("a", 20), ("a", 30), ("b", 10), ("b", 20), ("b", 30)]
    assert settle(s, by_day, want, 2) == want
    assert rows(s, "SELECT day, at FROM readings WHERE sensor = 'b'") == \
        [(1, 10), (1, 20), (1, 30), (2, 10), (2, 20), (2, 30)]
    # the whole partition key names partitions, with no index in the way
    assert rows(s, "SELECT at FROM readings WHERE sensor = 'a' AND day = 2") == \
        [(10,), (20,), (30,)]
    s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 2")
    assert settle(s, by_day, want[3:], 2) == want[3:]
    s.execute("INSERT INTO readings (sensor, day, at, seq) VALUES ('z', 2, 1, 1)")
    assert settle(s, by_day, [("b", 10), ("b", 20), ("b", 30), ("z", 1)], 2) == \
        [("b", 10), ("b", 20), ("b", 30), ("z", 1)]
    # the only column of a partition key is refused, in Cassandra's words
    s.execute("CREATE TABLE single (k int PRIMARY KEY, v int)")
    with pytest.raises(InvalidRequest, match="Cannot create secondary index on the only "
                                             "partition key column k"):
        s.execute("CREATE INDEX ON single (k)")


def test_a_static_column_index_answers_its_partitions_rows(cql):
    _, s = cql
    s.execute("CREATE INDEX ON readings (site)")
    ins = s.prepare("INSERT INTO readings (sensor, day, at, seq, site, value) "
                    "VALUES (?, ?, ?, ?, ?, ?)")
    s.execute(ins, ("a", 1, 10, 1, "north", 1))
    s.execute(ins, ("a", 1, 20, 2, "north", 2))
    s.execute(ins, ("b", 1, 10, 1, "south", 3))
    s.execute("INSERT INTO readings (sensor, day, site) VALUES ('c', 1, 'north')")  # no rows
    north = "SELECT sensor, at, value FROM readings WHERE site = %s"
    want = [("a", 10, 1), ("a", 20, 2), ("c", None, None)]
    assert settle(s, north, want, "north") == want
    # the static value changed: every row of the partition moves
    s.execute("UPDATE readings SET site = 'south' WHERE sensor = 'a' AND day = 1")
    assert settle(s, north, [("c", None, None)], "north") == [("c", None, None)]
    assert settle(s, north, [("a", 10, 1), ("a", 20, 2), ("b", 10, 3)], "south") == \
        [("a", 10, 1), ("a", 20, 2), ("b", 10, 3)]
    # a row deleted leaves the partition's others; its last leaves the static row
    s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 1 AND at = 10 AND seq = 1")
    assert settle(s, north, [("a", 20, 2), ("b", 10, 3)], "south") == \
        [("a", 20, 2), ("b", 10, 3)]
    s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 1 AND at >= 0")
    assert settle(s, north, [("a", None, None), ("b", 10, 3)], "south") == \
        [("a", None, None), ("b", 10, 3)]
    s.execute("DELETE FROM readings WHERE sensor = 'a' AND day = 1")
    assert settle(s, north, [("b", 10, 3)], "south") == [("b", 10, 3)]


def pages(s, query, size):
    """Every page a paged query answers (fetch_size size), one list of rows each."""
    got = []
    result = s.execute(SimpleStatement(query, fetch_size=size))
    while True:
        got.append([tuple(r) for r in result.current_rows])
        if not result.has_more_pages:
            return got
        result = s.execute(SimpleStatement(query, fetch_size=size),
                           paging_state=result.paging_state)


def test_index_reads_page(cql):
    _, s = cql
    s.execute("CREATE INDEX ON readings (seq)")
    s.execute("CREATE INDEX ON readings (site)")
    ins = s.prepare("INSERT INTO readings (sensor, day, at, seq, site, value) "
                    "VALUES (?, ?, ?, ?, 'x', ?)")
    for i in range(60):
        s.execute(ins, ("s%d" % (i % 6), i % 2, i, 1, i))
    everything = sorted((r.sensor, r.day, r.at) for r in s.execute("SELECT * FROM readings"))
    q = "SELECT sensor, day, at FROM readings WHERE seq = 1"
    assert len(settle(s, q, everything)) == 60
    for size in (1, 7, 60, 100):
        got = pages(s, q, size)
        assert all(len(p) == size for p in got[:-1]), [len(p) for p in got]
        assert sorted(r for p in got for r in p) == everything
    # the static column's partitions, each read whole, paged through their rows
    q = "SELECT sensor, day, at FROM readings WHERE site = 'x'"
    assert len(settle(s, q, everything)) == 60
    for size in (1, 4, 11):
        got = pages(s, q, size)
        assert all(len(p) == size for p in got[:-1]), [len(p) for p in got]
        assert sorted(r for p in got for r in p) == everything
    # a row deleted between two pages does not lose the place
    first = s.execute(SimpleStatement("SELECT sensor, day, at, seq FROM readings WHERE seq = 1",
                                      fetch_size=10))
    seen = [tuple(r)[:3] for r in first.current_rows]
    last = first.current_rows[-1]
    s.execute("DELETE FROM readings WHERE sensor = %s AND day = %s AND at = %s AND seq = 1",
              (last.sensor, last.day, last.at))
    time.sleep(0.3)
    rest = s.execute(SimpleStatement("SELECT sensor, day, at, seq FROM readings WHERE seq = 1",
                                     fetch_size=100), paging_state=first.paging_state)
    seen += [tuple(r)[:3] for r in rest.current_rows]
    assert sorted(seen) == everything


def test_schema_describe_drop_and_verify(cql):
    srv, s = cql
    fill(s)
    s.execute("CREATE INDEX ON readings (seq)")
    s.execute("CREATE INDEX by_day ON readings (day)")
    s.execute("CREATE INDEX ON readings (site)")
    got = {r.index_name: (r.kind, dict(r.options)) for r in s.execute(
        "SELECT index_name, kind, options FROM system_schema.indexes "
        "WHERE keyspace_name = 'ki' AND table_name = 'readings'")}
    assert got == {"readings_seq_idx": ("COMPOSITES", {"target": "seq"}),
                   "by_day": ("COMPOSITES", {"target": "day"}),
                   "readings_site_idx": ("COMPOSITES", {"target": "site"})}
    # the indexes built, as Cassandra's IndexInfo lists them (its table_name is the keyspace)
    want = [("ki", "by_day"), ("ki", "readings_seq_idx"), ("ki", "readings_site_idx")]
    deadline = time.time() + 10
    while True:  # an index is listed once its backfill is done
        built = sorted((r.table_name, r.index_name) for r in s.execute(
            'SELECT table_name, index_name FROM system."IndexInfo"'))
        if built == want or time.time() > deadline:
            break
        time.sleep(0.05)
    assert built == want
    assert [r.index_name for r in s.execute(
        "SELECT index_name FROM system.\"IndexInfo\" WHERE table_name = 'ki' "
        "AND index_name = 'by_day'")] == ["by_day"]
    described = "\n".join(r[3] for r in s.execute("DESCRIBE TABLE ki.readings"))
    assert "CREATE INDEX by_day ON ki.readings (day);" in described
    assert "CREATE INDEX readings_seq_idx ON ki.readings (seq);" in described
    assert settle(s, "SELECT at FROM readings WHERE day = 1 AND sensor = 'a' AND seq = 2",
                  [(20,)]) == [(20,)]
    out = subprocess.run([quarry_bin(), "verify", "--data", str(srv.data_dir), "ki.readings"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, AWS_ACCESS_KEY_ID="local",
                                  AWS_SECRET_ACCESS_KEY="local", AWS_REGION="us-east-1"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "cql.readings_seq_idx" in out.stdout and "cql.by_day" in out.stdout, out.stdout
    out = subprocess.run([quarry_bin(), "verify", "--endpoint", srv.url, "ki.readings"],
                         capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, AWS_ACCESS_KEY_ID="local",
                                  AWS_SECRET_ACCESS_KEY="local", AWS_REGION="us-east-1"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 differences" in out.stdout, out.stdout
    s.execute("DROP INDEX ki.by_day")
    s.execute("DROP INDEX readings_seq_idx")
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute("SELECT at FROM readings WHERE day = 1")
    with pytest.raises(InvalidRequest, match="cannot be restricted"):
        s.execute("SELECT at FROM readings WHERE seq = 1")
    assert [r.index_name for r in s.execute(
        "SELECT index_name FROM system_schema.indexes WHERE keyspace_name = 'ki'")] == \
        ["readings_site_idx"]
    assert [r.index_name for r in s.execute('SELECT index_name FROM system."IndexInfo"')] == \
        ["readings_site_idx"]
    with pytest.raises(InvalidRequest, match="Index 'ki.by_day' doesn't exist"):
        s.execute("DROP INDEX ki.by_day")
    s.execute("DROP INDEX IF EXISTS ki.by_day")


def test_names_and_refusals(cql):
    _, s = cql
    s.execute("CREATE TABLE m (k int PRIMARY KEY, v int, w int, tags map<int, int>, "
              '"keys(tags)" int, "Mixed" int)')
    # an unnamed index is table_column_idx; a second on the target is a duplicate, named
    # as Cassandra would have named it
    s.execute("CREATE INDEX ON m (v)")
    with pytest.raises(InvalidRequest, match="Index m_v_idx_1 is a duplicate of existing "
                                             "index m_v_idx"):
        s.execute("CREATE INDEX ON m (v)")
    with pytest.raises(InvalidRequest, match="Index other is a duplicate of existing "
                                             "index m_v_idx"):
        s.execute("CREATE INDEX other ON m (v)")
    s.execute("CREATE INDEX IF NOT EXISTS ON m (v)")
    s.execute("CREATE INDEX IF NOT EXISTS other ON m (v)")  # nothing made
    with pytest.raises(InvalidRequest, match="doesn't exist"):
        s.execute("DROP INDEX other")
    # a name taken is refused, unless IF NOT EXISTS
    s.execute('CREATE INDEX "ByW" ON m (w)')
    with pytest.raises(InvalidRequest, match="Index 'ByW' already exists"):
        s.execute('CREATE INDEX "ByW" ON m (v)')
    s.execute('CREATE INDEX IF NOT EXISTS "ByW" ON m (v)')
    # the indexes of one map get m_tags_idx, then _1 and _2
    s.execute("CREATE INDEX ON m (keys(tags))")
    s.execute("CREATE INDEX ON m (values(tags))")
    s.execute("CREATE INDEX ON m (entries(tags))")
    # a column whose name reads like a target is its own target, quoted
    s.execute('CREATE INDEX ON m ("keys(tags)")')
    s.execute('CREATE INDEX ON m ("Mixed")')
    got = {r.index_name: r.options["target"] for r in s.execute(
        "SELECT index_name, options FROM system_schema.indexes WHERE keyspace_name = 'ki' "
        "AND table_name = 'm'")}
    assert got == {"m_v_idx": "v", "ByW": "w", "m_tags_idx": "keys(tags)",
                   "m_tags_idx_1": "values(tags)", "m_tags_idx_2": "entries(tags)",
                   "m_keystags_idx": '"keys(tags)"', "m_Mixed_idx": '"Mixed"'}
    s.execute('INSERT INTO m (k, tags, "keys(tags)", "Mixed") VALUES (1, {5: 6}, 7, 8)')
    assert settle(s, 'SELECT k FROM m WHERE "keys(tags)" = 7', [(1,)]) == [(1,)]
    assert settle(s, 'SELECT k FROM m WHERE "Mixed" = 8', [(1,)]) == [(1,)]
    assert settle(s, "SELECT k FROM m WHERE tags CONTAINS KEY 5", [(1,)]) == [(1,)]
    s.execute("DROP INDEX m_tags_idx")
    s.execute("DROP INDEX m_tags_idx_1")
    # refusals, in Cassandra 4's words
    with pytest.raises(InvalidRequest, match="Undefined column name nope in table ki.m"):
        s.execute("CREATE INDEX ON m (nope)")
    with pytest.raises(ConfigurationException, match="Illegal index name by w"):
        s.execute('CREATE INDEX "by w" ON m (w)')
    with pytest.raises(InvalidRequest, match="longer than"):
        s.execute("CREATE INDEX %s ON m (w)" % ("x" * 300))
    s.execute("CREATE TABLE counts (k int PRIMARY KEY, n counter)")
    with pytest.raises(InvalidRequest, match="Secondary indexes on counter tables aren't "
                                             "supported"):
        s.execute("CREATE INDEX ON counts (n)")
    with pytest.raises(InvalidRequest, match="Cannot create keys\\(\\) index on v. "
                                             "Non-collection columns only support simple"):
        s.execute("CREATE INDEX ON m (keys(v))")


def metered(srv, what="write", **labels):
    """The write (or read) units /metrics counts for the labels."""
    from test_metrics import families, fetch, value
    status, _, body = fetch(srv.server)
    assert status == 200
    return value(families(body), "quarry_consumed_%s_capacity_units" % what,
                 "quarry_consumed_%s_capacity_units_total" % what, **labels) or 0


def test_building_and_dropping_an_index_spends_none_of_the_tables_capacity(cql):
    """A DynamoDB GSI's backfill spends the index's write capacity, not its table's: so do
    CREATE INDEX (the rows of a collection index are given the attribute its entries key)
    and DROP INDEX (the rows lose it)."""
    srv, s = cql
    s.execute("CREATE TABLE bag (k int PRIMARY KEY, tags set<text>, v int)")
    ins = s.prepare("INSERT INTO bag (k, tags, v) VALUES (?, ?, ?)")
    for k in range(40):
        s.execute(ins, (k, {"t%d" % (k % 3), "all"}, k))
    table = metered(srv, table="ki.bag")
    read = metered(srv, "read", table="ki.bag")
    assert table >= 40
    s.execute("CREATE INDEX ON bag (tags)")
    s.execute("CREATE INDEX ON bag (v)")
    # the walk over the rows reads them as the engine's own work too
    assert metered(srv, "read", table="ki.bag") == read
    assert len(rows(s, "SELECT k FROM bag WHERE tags CONTAINS 'all'")) == 40
    assert len(rows(s, "SELECT k FROM bag WHERE v = 3")) == 1
    read = metered(srv, "read", table="ki.bag")
    s.execute("DROP INDEX bag_tags_idx")
    s.execute("DROP INDEX bag_v_idx")
    assert metered(srv, table="ki.bag") == table
    assert metered(srv, "read", table="ki.bag") == read
    # the writes after it are charged as before
    s.execute(ins, (100, {"x"}, 1))
    assert metered(srv, table="ki.bag") == table + 1


def test_an_index_read_sees_the_writes_before_it(cql):
    """Cassandra's index reads see every write acknowledged before them; quarry's global
    indexes propagate in the background, and an index read lets them catch up first: a
    read right after each write answers it, without waiting or retrying."""
    _, s = cql
    s.execute("CREATE TABLE latest (k int, c int, v int, tags set<int>, PRIMARY KEY (k, c))")
    s.execute("CREATE INDEX ON latest (v)")
    s.execute("CREATE INDEX ON latest (c)")
    s.execute("CREATE INDEX ON latest (tags)")
    rows(s, "SELECT k FROM latest WHERE tags CONTAINS 0")  # built
    upd = s.prepare("UPDATE latest SET v = ?, tags = tags + ? WHERE k = 1 AND c = ?")
    by_v = s.prepare("SELECT k FROM latest WHERE v = ?")
    by_c = s.prepare("SELECT k FROM latest WHERE c = ?")
    by_tag = s.prepare("SELECT k FROM latest WHERE tags CONTAINS ?")
    for i in range(100):
        s.execute(upd, (i, {i}, i % 7))
        assert [r.k for r in s.execute(by_v, (i,))] == [1], i
        assert [r.k for r in s.execute(by_v, (i - 1,))] == ([1] if i and (i - 1) % 7 != i % 7
                                                             else []), i
        assert [r.k for r in s.execute(by_c, (i % 7,))] == [1], i
        assert [r.k for r in s.execute(by_tag, (i,))] == [1], i


def test_index_reads_answer_in_the_tables_token_order(cql):
    """Partitions come in token order from a scan, and the rows an index finds come in the
    same order (then clustering order), as Cassandra's do; token() restrictions beside the
    index take their part of that order without ALLOW FILTERING. The index's description
    keeps how its entries are ordered, which DescribeTable does not show."""
    srv, s = cql
    s.execute("CREATE TABLE spread (p int, c int, v int, PRIMARY KEY (p, c))")
    s.execute("CREATE INDEX ON spread (v)")
    s.execute("CREATE INDEX ON spread (c)")
    ins = s.prepare("INSERT INTO spread (p, c, v) VALUES (?, ?, 1)")
    for p in range(30):
        for c in (2, 1):
            s.execute(ins, (p, c))
    scan = [tuple(r) for r in s.execute("SELECT token(p), p, c FROM spread")]
    assert [t for t, _, _ in scan] == sorted(t for t, _, _ in scan)
    assert [tuple(r) for r in s.execute("SELECT token(p), p, c FROM spread WHERE v = 1")] == \
        scan
    assert [tuple(r) for r in s.execute("SELECT token(p), p, c FROM spread WHERE c = 2")] == \
        [r for r in scan if r[2] == 2]
    gsis = boto3_client(srv.url).describe_table(TableName="ki.spread")["Table"][
        "GlobalSecondaryIndexes"]
    assert sorted(g["IndexName"] for g in gsis) == ["cql.spread_c_idx", "cql.spread_v_idx"]
    assert not [k for g in gsis for k in g if k.startswith("Quarry")], gsis
    middle = scan[20][0]
    assert [tuple(r) for r in s.execute(
        "SELECT token(p), p, c FROM spread WHERE v = 1 AND token(p) > %s", (middle,))] == \
        [r for r in scan if r[0] > middle]


def test_columns_of_any_type_are_indexed(cql):
    """Cassandra indexes a column of any type but counter and duration: floats, booleans,
    decimals, varints, tuples and frozen UDTs too, whether regular, static or clustering,
    each found by its value."""
    _, s = cql
    s.execute("CREATE TYPE point (x int, y int)")
    s.execute("CREATE TABLE odd (k int, c1 int, c2 double, on_ boolean static, f float, "
              "d decimal, n varint, t tuple<int, text>, pt frozen<point>, "
              "PRIMARY KEY (k, c1, c2))")
    for col in ("c2", "on_", "f", "d", "n", "t", "pt"):
        s.execute("CREATE INDEX ON odd (%s)" % col)
    s.execute("INSERT INTO odd (k, c1, c2, on_, f, d, n, t, pt) VALUES "
              "(1, 1, 0.5, true, 1.5, 2.25, 123456789012345678901234567890, (1, 'a'), "
              "{x: 1, y: 2})")
    s.execute("INSERT INTO odd (k, c1, c2, f, t) VALUES (1, 2, 0.75, 1.5, (2, 'b'))")
    s.execute("INSERT INTO odd (k, c1, c2, on_, f) VALUES (2, 1, 0.5, false, 2.5)")
    keys = "SELECT k, c1 FROM odd WHERE "
    assert rows(s, keys + "c2 = 0.5") == [(1, 1), (2, 1)]
    assert rows(s, keys + "on_ = true") == [(1, 1), (1, 2)]
    assert rows(s, keys + "f = 1.5") == [(1, 1), (1, 2)]
    assert rows(s, keys + "d = 2.25") == [(1, 1)]
    assert rows(s, keys + "n = 123456789012345678901234567890") == [(1, 1)]
    assert rows(s, keys + "t = (2, 'b')") == [(1, 2)]
    assert rows(s, keys + "pt = {x: 1, y: 2}") == [(1, 1)]
    assert rows(s, keys + "pt = {x: 2, y: 1}") == []
    s.execute("UPDATE odd SET f = 9.5 WHERE k = 1 AND c1 = 1 AND c2 = 0.5")
    assert rows(s, keys + "f = 1.5") == [(1, 2)]
    assert rows(s, keys + "f = 9.5") == [(1, 1)]
    s.execute("DELETE FROM odd WHERE k = 1 AND c1 = 2")
    assert rows(s, keys + "t = (2, 'b')") == []
    s.execute("DROP INDEX odd_f_idx")
    with pytest.raises(InvalidRequest, match=FILTERING):
        s.execute(keys + "f = 9.5")
    with pytest.raises(InvalidRequest, match="Secondary indexes are not supported on "
                                             "duration columns"):
        s.execute("CREATE TABLE lasting (k int PRIMARY KEY, d duration)")
        s.execute("CREATE INDEX ON lasting (d)")


def test_a_partition_key_index_answers_partitions_with_only_a_static_row(cql):
    """A partition holding its static row alone is one row of a scan, its clustering
    columns null; an index on a partition key column answers it too."""
    _, s = cql
    s.execute("CREATE INDEX ON readings (day)")
    s.execute("INSERT INTO readings (sensor, day, at, seq, site, value) "
              "VALUES ('a', 5, 1, 1, 'n', 1)")
    s.execute("INSERT INTO readings (sensor, day, site) VALUES ('b', 5, 'm')")
    s.execute("INSERT INTO readings (sensor, day, at, seq, value) VALUES ('c', 5, 2, 2, 2)")
    q = "SELECT sensor, at, site, value FROM readings WHERE day = 5"
    want = [("a", 1, "n", 1), ("b", None, "m", None), ("c", 2, None, 2)]
    assert rows(s, q) == want
    assert sorted(r for p in pages(s, q, 1) for r in p) == want
    s.execute("DELETE site FROM readings WHERE sensor = 'b' AND day = 5")
    assert rows(s, q) == [("a", 1, "n", 1), ("c", 2, None, 2)]


def test_empty_and_long_values_are_indexed(cql):
    """'' and a value longer than an engine key are values like any other to Cassandra's
    index on a text or blob column: the write goes through and the value is found."""
    _, s = cql
    s.execute("CREATE TABLE words (k int, c text, w text, b blob, PRIMARY KEY (k, c))")
    for col in ("c", "w", "b"):
        s.execute("CREATE INDEX ON words (%s)" % col)
    long = "y" * 5000
    ins = s.prepare("INSERT INTO words (k, c, w, b) VALUES (?, ?, ?, ?)")
    s.execute(ins, (1, "", "", b""))
    s.execute(ins, (2, "x", long, b"\x00" * 3000))
    s.execute(ins, (3, "", "z", b"z"))
    assert rows(s, "SELECT k FROM words WHERE w = ''") == [(1,)]
    assert rows(s, "SELECT k FROM words WHERE c = ''") == [(1,), (3,)]
    assert rows(s, "SELECT k FROM words WHERE b = 0x") == [(1,)]
    by_w = s.prepare("SELECT k FROM words WHERE w = ?")
    assert [r.k for r in s.execute(by_w, (long,))] == [2]
    assert [r.k for r in s.execute(by_w, (long[:-1],))] == []
    by_b = s.prepare("SELECT k FROM words WHERE b = ?")
    assert [r.k for r in s.execute(by_b, (b"\x00" * 3000,))] == [2]


def test_a_write_the_engine_refuses_is_a_write_failure_drivers_read(cql):
    """A view is keyed by values as long as Cassandra's keys (65535 bytes); a longer one
    fails the write as WRITE_FAILURE, which carries the write's type by name: the driver
    reads the error and the connection stays usable."""
    from cassandra import WriteFailure
    _, s = cql
    s.execute("CREATE TABLE named (k int PRIMARY KEY, v text)")
    s.execute("CREATE MATERIALIZED VIEW named_by_v AS SELECT * FROM named "
              "WHERE v IS NOT NULL AND k IS NOT NULL PRIMARY KEY (v, k)")
    s.execute("INSERT INTO named (k, v) VALUES (1, %s)", ("x" * 65535,))
    with pytest.raises(WriteFailure) as e:
        s.execute("INSERT INTO named (k, v) VALUES (3, %s)", ("x" * 70000,))
    assert "Key length of 70000 is longer than maximum of 65535" in str(e.value)
    s.execute("INSERT INTO named (k, v) VALUES (2, 'two')")
    assert sorted(rows(s, "SELECT k FROM named")) == [(1,), (2,)]


def test_an_indexed_key_column_is_not_renamed(cql):
    _, s = cql
    s.execute("CREATE INDEX seqs ON readings (seq)")
    with pytest.raises(InvalidRequest, match=r"Can't rename column seq because it has "
                                             r"dependent secondary indexes \(seqs\)"):
        s.execute("ALTER TABLE readings RENAME seq TO n")
    s.execute("DROP INDEX seqs")
    s.execute("ALTER TABLE readings RENAME seq TO n")
    s.execute("CREATE INDEX ON readings (n)")
    s.execute("INSERT INTO readings (sensor, day, at, n) VALUES ('a', 1, 1, 4)")
    assert rows(s, "SELECT sensor FROM readings WHERE n = 4") == [("a",)]


@pytest.mark.parametrize("where, message", [
    ("fm['a'] = 'b'", "Map-entry equality predicates on frozen map column fm are not supported"),
    ("l[0] = 1", "Indexes on list entries (l[index] = value) are not supported."),
    ("v[0] = 1", "Column v cannot be used as a map"),
])
def test_entry_restrictions_cassandra_refuses(cql, where, message):
    """c[k] = v restricts the entries of a map that is not frozen; on a frozen map (even
    one with a full() index), a list or a scalar, Cassandra refuses it, ALLOW FILTERING or
    not, in these words."""
    _, s = cql
    s.execute("CREATE TABLE ents (k int PRIMARY KEY, fm frozen<map<text, text>>, "
              "l list<int>, v int)")
    s.execute("CREATE INDEX ON ents (full(fm))")
    for suffix in ("", " ALLOW FILTERING"):
        with pytest.raises(InvalidRequest) as e:
            s.execute("SELECT k FROM ents WHERE " + where + suffix)
        assert message in str(e.value)
