"""Every model's `quarry model export --format cql` created on `quarry serve --cql` through
the Python driver: the example models (examples/), the servers' and the benchmark's models,
the exporter's awkward names (tests/model/export/awkward.yaml), and every CQL schema of
tests/model imported with `model import --cql` and exported back. Each statement must
succeed, and each table must then be in system_schema with exactly the columns, partition
key, clustering columns (in order, with their order) and indexes the export declared, each
user type with its fields."""
import glob
import os
import re
import subprocess

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from conftest import quarry_bin  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MODELS = sorted(glob.glob(os.path.join(ROOT, "examples", "*.yaml"))
                + glob.glob(os.path.join(ROOT, "tests", "server", "models", "*.yaml"))
                + glob.glob(os.path.join(ROOT, "tests", "model", "export", "*.yaml"))
                + glob.glob(os.path.join(ROOT, "tests", "model", "golden", "*.model.yaml"))
                + [os.path.join(ROOT, "bench", "http", "model.yaml")])
SCHEMAS = sorted(p for p in glob.glob(os.path.join(ROOT, "tests", "model", "cql", "*.cql"))
                 + glob.glob(os.path.join(ROOT, "tests", "model", "export", "*.cql"))
                 if "queries" not in os.path.basename(p))


def rel(p):
    return os.path.relpath(p, ROOT)


def queries_of(schema):
    base = schema[:-len(".cql")]
    for q in (base + ".queries.cql", base + "_queries.cql"):
        if os.path.exists(q):
            return q
    return None


def quarry(*args):
    r = subprocess.run([quarry_bin(), *args], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


NAME = r'"(?:[^"]|"")*"|\w+'


def unquote(name):
    return name[1:-1].replace('""', '"') if name.startswith('"') else name.lower()


def statements(cql):
    text = "\n".join(ln for ln in cql.splitlines() if not ln.lstrip().startswith("--"))
    return [s.strip() for s in re.split(r";\s*\n", text + "\n") if s.strip()]


def top_level(text):
    """The comma-separated parts of text outside <...> and quotes."""
    parts, depth, quoted, cur = [], 0, False, ""
    for ch in text:
        quoted ^= ch == '"'
        depth += (ch == "<") - (ch == ">") if not quoted else 0
        if ch == "," and depth == 0 and not quoted:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()] if cur.strip() else parts


def declared_types(stmts):
    """{(keyspace, type): [field names]} of the export's CREATE TYPE statements."""
    types = {}
    for s in stmts:
        m = re.match(r"CREATE TYPE IF NOT EXISTS (%s)\.(%s) \((.*)\)$" % (NAME, NAME), s, re.S)
        if m:
            types[(unquote(m.group(1)), unquote(m.group(2)))] = [
                unquote(re.match(NAME, f).group(0)) for f in top_level(m.group(3))]
    return types


def declared_tables(stmts):
    """{(keyspace, table): {"columns", "pk", "ck": [(name, order)], "indexes"}} of the
    export's CREATE TABLE and CREATE INDEX statements."""
    tables = {}
    for s in stmts:
        m = re.match(r"CREATE TABLE IF NOT EXISTS (%s)\.(%s) \((.*)\n\)(?: WITH (.*))?$"
                     % (NAME, NAME), s, re.S)
        if m:
            body, opts = m.group(3), m.group(4) or ""
            cols = [unquote(re.match(NAME, ln.strip()).group(0))
                    for ln in body.splitlines() if ln.strip() and
                    not ln.strip().startswith("PRIMARY KEY")]
            key = re.search(r"PRIMARY KEY \(\((.*?)\)(.*)\)\s*$", body, re.S)
            pk = [unquote(n) for n in re.findall(NAME, key.group(1))]
            ck = [unquote(n) for n in re.findall(NAME, key.group(2))]
            order = dict.fromkeys(ck, "asc")
            om = re.search(r"CLUSTERING ORDER BY \((.*?)\)", opts)
            for col, direction in re.findall(r"(%s) (ASC|DESC)" % NAME, om.group(1) if om else ""):
                order[unquote(col)] = direction.lower()
            tables[(unquote(m.group(1)), unquote(m.group(2)))] = {
                "columns": set(cols), "pk": pk, "ck": [(c, order[c]) for c in ck],
                "indexes": set()}
            continue
        m = re.match(r"CREATE INDEX IF NOT EXISTS ON (%s)\.(%s) \((%s)\)$" % (NAME, NAME, NAME), s)
        if m:
            tables[(unquote(m.group(1)), unquote(m.group(2)))]["indexes"].add(unquote(m.group(3)))
    return tables


@pytest.fixture(scope="module")
def session(shared_cql):
    s = shared_cql.session()
    yield s
    s.cluster.shutdown()


def created(session, cql):
    """Runs every statement of the export, checks system_schema, then drops its keyspaces."""
    stmts = statements(cql)
    assert any(s.startswith("CREATE TABLE") for s in stmts), cql
    keyspaces = []
    try:
        for s in stmts:
            m = re.match(r"CREATE KEYSPACE IF NOT EXISTS (%s)" % NAME, s)
            if m:
                name = unquote(m.group(1))
                assert re.fullmatch(r"\w{1,48}", name), name
                keyspaces.append(name)
            session.execute(s)  # raises on any refusal, naming the statement's error
        for (ks, name), fields in declared_types(stmts).items():
            row = session.execute("SELECT field_names FROM system_schema.types WHERE "
                                  "keyspace_name = %s AND type_name = %s", (ks, name)).one()
            assert row and list(row.field_names) == fields, (ks, name)
        tables = declared_tables(stmts)
        for (ks, table), want in tables.items():
            assert re.fullmatch(r"\w{1,48}", table) or '"' in cql, table
            rows = list(session.execute(
                "SELECT column_name, kind, position, clustering_order FROM system_schema.columns "
                "WHERE keyspace_name = %s AND table_name = %s", (ks, table)))
            assert {r.column_name for r in rows} == want["columns"], (ks, table)
            pk = sorted((r.position, r.column_name) for r in rows if r.kind == "partition_key")
            ck = sorted((r.position, r.column_name, r.clustering_order) for r in rows
                        if r.kind == "clustering")
            assert [n for _, n in pk] == want["pk"], (ks, table)
            assert [(n, o) for _, n, o in ck] == want["ck"], (ks, table)
            types = {r.column_name: r for r in session.execute(
                "SELECT column_name, type FROM system_schema.columns WHERE keyspace_name = %s "
                "AND table_name = %s", (ks, table))}
            counters = {n for n, r in types.items() if r.type == "counter"}
            if counters:  # a counter table holds only keys and counters
                assert want["columns"] - counters == set(want["pk"]) | {c for c, _ in want["ck"]}
            indexed = {r.options["target"] for r in session.execute(
                "SELECT options FROM system_schema.indexes WHERE keyspace_name = %s AND "
                "table_name = %s", (ks, table))}
            assert {unquote(t) for t in indexed} == want["indexes"], (ks, table)
        return tables
    finally:
        for ks in keyspaces:
            session.execute('DROP KEYSPACE IF EXISTS "%s"' % ks.replace('"', '""'))


@pytest.mark.parametrize("model", MODELS, ids=rel)
def test_exported_model_is_created(session, model):
    created(session, quarry("model", "export", model, "--format", "cql"))


@pytest.mark.parametrize("schema", SCHEMAS, ids=rel)
def test_imported_schema_exports_and_is_created_again(session, schema, tmp_path):
    out = tmp_path / "model.yaml"
    q = queries_of(schema)
    quarry("model", "import", "--cql", schema, *(["--queries", q] if q else []), "-o", str(out))
    tables = created(session, quarry("model", "export", str(out), "--format", "cql"))
    # the schema's own tables come back under their own names
    names = set(re.findall(r"CREATE TABLE (?:IF NOT EXISTS )?(?:(%s)\.)?(%s)" % (NAME, NAME),
                           open(schema).read()))
    assert {unquote(t) for _, t in names} <= {t for _, t in tables}


def test_awkward_names_are_quoted_split_and_cut(session):
    cql = quarry("model", "export", os.path.join(ROOT, "tests", "model", "export", "awkward.yaml"),
                 "--format", "cql")
    tables = created(session, cql)
    ((ks, _),) = {k for k in tables if k[1] == "sales_by_store_id"}
    assert ks == "order_history_returns_of_the_2026_spring_sale_by"
    sales = tables[(ks, "sales_by_store_id")]
    assert sales["columns"] == {"store_id", "order", "user_id", "user_id_2", "limit", "token"}
    assert sales["ck"] == [("order", "desc"), ("user_id", "asc")]
    stats = tables[(ks, "sale_statss_by_store_id")]
    assert stats["columns"] == {"store_id", "sales"}
    assert tables[(ks, "sale_statss_by_store_id_values")]["columns"] == {"store_id", "label"}
