"""`quarry model import --cql` and the CQL checklist of `quarry model check`.

The seeds' CQL tables (tests/model/cql/seeds*.cql) must import and check clean; each other
case in tests/model/cql/ breaks one rule, and its check report is a golden file
(golden/cql-CASE.check.txt; regenerate with QUARRY_UPDATE_GOLDEN=1 and read the diff). The
round trip exports every example model as CQL, imports it with a query per table, compares
tables, keys and clustering order, checks it, and exports it again to the same CREATE TABLE
statements."""
import json
import os
import re

import pytest
import yaml

from modeltest import GOLDEN, ROOT, run

CQL = os.path.join("tests", "model", "cql")
EXAMPLES = ["chat", "orders", "tickets", "overloaded", "iot", "leaderboard"]
NO_COLOR = {"NO_COLOR": "1"}


def import_cql(tmp_path, case, queries=True):
    """Imports tests/model/cql/CASE.cql (and CASE.queries.cql) into tmp_path/CASE.yaml."""
    args = ["model", "import", "--cql", os.path.join(CQL, case + ".cql")]
    q = os.path.join(CQL, case + ".queries.cql")
    if queries and os.path.exists(os.path.join(ROOT, q)):
        args += ["--queries", q]
    out = tmp_path / (case + ".yaml")
    p = run(*args, "-o", str(out))
    assert p.returncode == 0, p.stderr
    return out


def check(path, *extra):
    """`model check` run beside the model file, so reports name it without a folder."""
    return run("model", "check", path.name, *extra, cwd=str(path.parent), env=NO_COLOR)


def findings(report, rule):
    return [f for f in report["findings"] if f["rule"] == rule]


# ---- the seeds pass ----

def test_seeds_import_faithfully(tmp_path):
    out = tmp_path / "seeds.yaml"
    p = run("model", "import", "--cql", f"{CQL}/seeds.cql", "--queries", f"{CQL}/seeds_queries.cql", "-o", str(out))
    assert p.returncode == 0, p.stderr
    m = yaml.safe_load(out.read_text())
    assert m["name"] == "app"
    msgs = m["tables"]["app.messages_by_user"]["cql"]
    assert msgs["clustering_order"] == {"sent_at": "desc", "message_id": "asc"}
    ev = m["entities"]["events_by_user"]
    assert ev["pk"] == "{user_id}#{month}" and ev["sk"] == "{event_time}#{event_id}"
    assert m["tables"]["app.events_by_user"]["cql"]["default_time_to_live"] == "365d"
    assert ev["attributes"]["month"]["format"] == "month"
    assert ev["attributes"]["event_id"] == {"format": "ulid", "cql_type": "timeuuid"}
    counts = m["entities"]["order_counts_by_user"]
    assert counts["counter"] is True and "sk" not in counts
    assert counts["attributes"]["total"]["cql_type"] == "counter"
    pats = {p["name"]: p for p in m["access_patterns"]}
    assert pats["recent-messages"]["sk_condition"] == {"op": ">", "attribute": "sent_at"}
    assert pats["recent-messages"]["statement"].startswith("SELECT * FROM messages_by_user WHERE user_id = ?")
    assert pats["recent-messages"]["source"] == f"{CQL}/seeds_queries.cql:6:1"
    assert pats["recent-messages"]["sentence"] == "a user's messages since a time, newest first"
    assert pats["order-count"]["kind"] == "get"
    assert pats["month-events"]["direction"] == "desc"


def golden(name, text):
    path = os.path.join(GOLDEN, name)
    if os.environ.get("QUARRY_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read()


def test_seeds_golden(tmp_path):
    """The model the seeds import to, and its check report (no finding)."""
    p = run("model", "import", "--cql", f"{CQL}/seeds.cql", "--queries", f"{CQL}/seeds_queries.cql")
    assert p.returncode == 0, p.stderr
    golden("cql-seeds.model.yaml", p.stdout)
    out = tmp_path / "seeds.yaml"
    out.write_text(p.stdout)
    c = check(out)
    assert c.returncode == 0
    golden("cql-seeds.check.txt", c.stdout)


def test_seeds_check_clean(tmp_path):
    out = tmp_path / "seeds.yaml"
    assert run("model", "import", "--cql", f"{CQL}/seeds.cql", "--queries", f"{CQL}/seeds_queries.cql",
               "-o", str(out)).returncode == 0
    p = check(out, "--json")
    assert p.returncode == 0, p.stdout
    rep = json.loads(p.stdout)
    assert rep["summary"] == {"errors": 0, "warnings": 0, "notes": 0}
    assert all(pl["served"] and pl["statement"] and pl["source"] for pl in rep["access_patterns"])
    ops = {pl["name"]: pl["operation"] for pl in rep["access_patterns"]}
    assert ops["recent-messages"] == "SELECT" and ops["send-message"] == "INSERT" and ops["count-order"] == "UPDATE"


# ---- each rule, a bad schema that makes it fire (golden reports) ----

CASES = {
    "partition": ("access-pattern-coverage", 1),
    "filtering": ("allow-filtering", 1),
    "aggregate": ("cross-partition-aggregate", 1),
    "size": ("partition-size", 1),
    "order": ("clustering-order", 0),
    "tombstones": ("tombstones", 0),
    "spread": ("multi-partition", 0),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_case_golden(tmp_path, case):
    rule, status = CASES[case]
    out = import_cql(tmp_path, case)
    p = check(out)
    assert p.returncode == status, p.stdout + p.stderr
    golden(f"cql-{case}.check.txt", p.stdout)
    rep = json.loads(check(out, "--json").stdout)
    assert findings(rep, rule), rep["findings"]


def test_allow_filtering_flagged_even_when_served(tmp_path):
    rep = json.loads(check(import_cql(tmp_path, "filtering"), "--json").stdout)
    plans = {p["name"]: p for p in rep["access_patterns"]}
    assert plans["user-orders"]["served"] is True
    (f,) = [f for f in findings(rep, "allow-filtering") if f["subject"] == "pattern user-orders"]
    assert f["severity"] == "error" and "remove ALLOW FILTERING" in f["fix"]
    assert "ALLOW FILTERING" in f["message"] and "filtering.queries.cql:7:1" in f["message"]


def test_cross_partition_count_suggests_counters(tmp_path):
    rep = json.loads(check(import_cql(tmp_path, "aggregate"), "--json").stdout)
    (f,) = findings(rep, "cross-partition-aggregate")
    assert "counter" in f["fix"] and "SELECT COUNT(*) FROM shop.orders_by_user" in f["message"]
    # the same count within one partition is still read row by row: a counter instead
    (g,) = findings(rep, "aggregate-by-query")
    assert g["subject"] == "pattern user-order-count" and "total counter" in g["fix"]
    assert not findings(rep, "access-pattern-coverage")  # the aggregate finding says it


def test_partition_size_figures_and_bucket_advice(tmp_path):
    rep = json.loads(check(import_cql(tmp_path, "size"), "--json").stdout)
    by = {f["subject"]: f for f in findings(rep, "partition-size")}
    unbounded = by["partition of iot.events_by_user"]
    assert unbounded["severity"] == "error" and "without bound" in unbounded["message"]
    assert "PRIMARY KEY ((user_id, day), event_time, event_id)" in unbounded["fix"]
    monthly = by["partition of iot.readings_by_sensor"]
    assert monthly["severity"] == "warning" and "bucket the partition by day" in monthly["fix"]
    assert by["partition of iot.logins_by_user"]["severity"] == "note"


def test_clustering_order_fix(tmp_path):
    rep = json.loads(check(import_cql(tmp_path, "order"), "--json").stdout)
    (f,) = findings(rep, "clustering-order")
    assert "CLUSTERING ORDER BY (sent_at DESC, message_id DESC)" in f["fix"]
    # reading in the stored order is no finding
    ok = tmp_path / "ok.cql"
    ok.write_text(open(os.path.join(ROOT, CQL, "order.cql")).read())
    q = tmp_path / "ok.queries.cql"
    q.write_text("SELECT * FROM chat.messages_by_user WHERE user_id = ? ORDER BY sent_at ASC LIMIT 20;\n")
    out = tmp_path / "ok.yaml"
    assert run("model", "import", "--cql", str(ok), "--queries", str(q), "-o", str(out)).returncode == 0
    assert not findings(json.loads(check(out, "--json").stdout), "clustering-order")


def test_tombstones_need_rate_or_ttl(tmp_path):
    rep = json.loads(check(import_cql(tmp_path, "tombstones"), "--json").stdout)
    (f,) = findings(rep, "tombstones")
    assert f["severity"] == "warning" and "USING TTL" in f["fix"] and "500 per second" in f["message"]
    # the same deletes on a table with default_time_to_live are no finding
    schema = tmp_path / "ttl.cql"
    schema.write_text(open(os.path.join(ROOT, CQL, "tombstones.cql")).read().replace(
        "CLUSTERING ORDER BY (created_at DESC)", "CLUSTERING ORDER BY (created_at DESC) AND default_time_to_live = 604800"))
    out = tmp_path / "ttl.yaml"
    assert run("model", "import", "--cql", str(schema), "--queries", os.path.join(CQL, "tombstones.queries.cql"),
               "-o", str(out)).returncode == 0
    assert not findings(json.loads(check(out, "--json").stdout), "tombstones")


def test_index_view_batch_and_ttl(tmp_path):
    out = import_cql(tmp_path, "spread")
    m = yaml.safe_load(out.read_text())
    base, view = m["tables"]["shop.orders_by_user"], m["tables"]["shop.orders_by_status"]
    assert base["cql"]["indexes"] == ["status"] and base["cql"]["default_time_to_live"] == "90d"
    assert m["entities"]["orders_by_status"]["pk"] == "{status}"
    assert m["entities"]["orders_by_status"]["sk"] == "{created_at}#{user_id}#{order_id}"
    assert view["cql"]["default_time_to_live"] == "90d"  # a view's rows expire with the base's
    pats = {p["name"]: p for p in m["access_patterns"]}
    assert pats["place-order-1"]["kind"] == "put" and pats["place-order-1"]["ttl"] == "1d"
    assert pats["place-order-2"]["kind"] == "delete"
    assert pats["place-order-2"]["sk_condition"] == {"op": "<", "attribute": "created_at"}
    assert pats["some-users-orders"]["in"] == ["user_id"]
    rep = json.loads(check(out, "--json").stdout)
    by = {f["subject"]: f for f in rep["findings"]}
    assert by["pattern pending-by-index"]["rule"] == "access-pattern-coverage"
    assert by["pattern pending-by-index"]["severity"] == "warning"  # the index serves it, cluster-wide
    assert "secondary index on status" in by["pattern pending-by-index"]["message"]
    plans = {p["name"]: p for p in rep["access_patterns"]}
    assert plans["pending-by-view"]["served"] and plans["place-order-2"]["served"]
    assert "tombstones" not in {f["rule"] for f in rep["findings"]}  # the rows expire by TTL


# ---- bad input: FILE:LINE:COL ----

BAD_INPUT = [
    ("CREATE TABLE t (a int PRIMARY KEY, b text;\n", None, "schema.cql:1:42: "),
    ("CREATE TABLE t (a int, b text, PRIMARY KEY (a, c));\n", None, "schema.cql:1:48: unknown definition c"),
    ("CREATE TABLE t (a int, b counter, c text, PRIMARY KEY (a));\n", None, "Cannot mix counter and non counter"),
    ("CREATE TABLE t (a int, b int, PRIMARY KEY (a, b)) WITH CLUSTERING ORDER BY (c DESC);\n", None,
     "CLUSTERING ORDER"),
    ("SELECT * FROM t;\n", None, "schema.cql:1:1: a schema holds CREATE"),
    ("CREATE TABLE t (a int PRIMARY KEY, b text);\n", "SELECT * FROM nope WHERE a = ?;\n",
     "queries.cql:1:15: unknown table nope"),
    ("CREATE TABLE t (a int PRIMARY KEY, b text);\n", "\n\nSELECT * FROM t WHERE zz = ?;\n",
     "queries.cql:3:23: unknown column zz in table t"),
    ("CREATE TABLE t (a int, b int, c text, PRIMARY KEY (a, b));\n", "INSERT INTO t (a, c) VALUES (?, ?);\n",
     "queries.cql:1:1: Some clustering keys are missing: b"),
    ("CREATE TABLE t (a int PRIMARY KEY, n counter);\n", "UPDATE t SET n = 5 WHERE a = ?;\n",
     "Cannot set the value of counter column n"),
    ("CREATE TABLE t (a int PRIMARY KEY, n counter);\n", "INSERT INTO t (a, n) VALUES (?, ?);\n",
     "INSERT statements are not allowed on counter tables"),
    ("CREATE TABLE t (a int, b int, c int, PRIMARY KEY (a, b, c));\n",
     "SELECT * FROM t WHERE a = ? ORDER BY b ASC, c DESC;\n", "queries.cql:1:45: Unsupported order by relation"),
    ("CREATE TABLE t (a int PRIMARY KEY);\n", "-- rps: fast\nSELECT * FROM t WHERE a = ?;\n",
     "queries.cql:1:8: rps: 'fast' is not a non-negative number"),
    ("-- item_size: 400MB\nCREATE TABLE t (a int PRIMARY KEY);\n", None,
     "schema.cql:1:14: item_size 400MB exceeds Cassandra's largest write"),
    ("CREATE TABLE t (a int PRIMARY KEY);\n", "CREATE TABLE u (a int PRIMARY KEY);\n",
     "queries.cql:1:1: the queries file holds SELECT"),
]


@pytest.mark.parametrize("schema,queries,message", BAD_INPUT)
def test_bad_input(tmp_path, schema, queries, message):
    (tmp_path / "schema.cql").write_text(schema)
    args = ["model", "import", "--cql", "schema.cql"]
    if queries is not None:
        (tmp_path / "queries.cql").write_text(queries)
        args += ["--queries", "queries.cql"]
    out = tmp_path / "out.yaml"
    p = run(*args, "-o", str(out), cwd=str(tmp_path))
    assert p.returncode == 2
    assert message in p.stderr, p.stderr
    assert not out.exists() and not list(tmp_path.glob("out.yaml.tmp*"))  # no partial model file


def test_static_only_update_needs_the_partition_key_only(tmp_path):
    (tmp_path / "s.cql").write_text("CREATE TABLE ks.threads (thread_id uuid, title text static, msg_at timestamp, "
                                    "body text, PRIMARY KEY ((thread_id), msg_at));\n")
    (tmp_path / "q.cql").write_text("-- name: rename\nUPDATE ks.threads SET title = ? WHERE thread_id = ?;\n"
                                    "-- name: edit\nUPDATE ks.threads SET body = ? WHERE thread_id = ?;\n")
    out = tmp_path / "m.yaml"
    assert run("model", "import", "--cql", "s.cql", "--queries", "q.cql", "-o", str(out), cwd=str(tmp_path)).returncode == 0
    m = yaml.safe_load(out.read_text())
    assert m["entities"]["threads"]["attributes"]["title"]["static"] is True
    assert m["access_patterns"][0]["static_only"] is True and "static_only" not in m["access_patterns"][1]
    rep = json.loads(check(out, "--json").stdout)
    served = {p["name"]: p["served"] for p in rep["access_patterns"]}
    assert served == {"rename": True, "edit": False}  # a regular column needs the clustering key too


def test_schema_changes_in_order(tmp_path):
    """ALTER and DROP apply in order, as in a migration script."""
    (tmp_path / "s.cql").write_text(
        "CREATE KEYSPACE k WITH replication = {'class': 'SimpleStrategy', 'replication_factor': 1};\nUSE k;\n"
        "CREATE TABLE t (a int PRIMARY KEY, b text);\nCREATE INDEX ON t (b);\nCREATE INDEX ic ON t (b);\n"
        "DROP INDEX t_b_idx;\nALTER TABLE t ADD c list<text>;\nCREATE INDEX ON t (c);\n"
        "ALTER TABLE t WITH default_time_to_live = 3600;\nCREATE TABLE u (a int PRIMARY KEY);\nDROP TABLE u;\n"
        "CREATE TYPE addr (s text);\nALTER TYPE addr ADD z text;\nDROP TYPE addr;\n")
    p = run("model", "import", "--cql", "s.cql", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    m = yaml.safe_load(p.stdout)
    assert set(m["tables"]) == {"k.t"}
    assert m["tables"]["k.t"]["cql"] == {"source": "s.cql:3:1", "default_time_to_live": "1h", "indexes": ["b", "c"]}
    assert list(m["entities"]["t"]["attributes"]) == ["a", "b", "c"]
    (tmp_path / "s.cql").write_text("CREATE TABLE t (a int PRIMARY KEY, b text);\nCREATE INDEX ON t (b);\n"
                                    "ALTER TABLE t DROP b;\n")
    p = run("model", "import", "--cql", "s.cql", cwd=str(tmp_path))
    assert p.returncode == 2 and "s.cql:3:20: Cannot drop column b because it has dependent secondary" in p.stderr
    (tmp_path / "s.cql").write_text("CREATE TABLE t (a int PRIMARY KEY);\nDROP INDEX nope;\n")
    p = run("model", "import", "--cql", "s.cql", cwd=str(tmp_path))
    assert p.returncode == 2 and "s.cql:2:12: unknown index nope" in p.stderr


def test_text_must_be_utf8(tmp_path):
    (tmp_path / "s.cql").write_bytes(b"CREATE TABLE t (a int PRIMARY KEY);\n-- caf\xe9\n")
    p = run("model", "import", "--cql", "s.cql", cwd=str(tmp_path))
    assert p.returncode == 2 and "s.cql:2:7: text that is not UTF-8" in p.stderr
    # valid UTF-8 that YAML must escape (C1 controls, BOM, DEL) still gives a model that loads
    (tmp_path / "s.cql").write_bytes(b"CREATE TABLE t (a int PRIMARY KEY);\n")
    (tmp_path / "q.cql").write_bytes(b"-- caf\xc3\xa9 \xc2\x81 \xef\xbb\xbf \x7f\nSELECT * FROM t WHERE a = 1;\n")
    p = run("model", "import", "--cql", "s.cql", "--queries", "q.cql", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert yaml.safe_load(p.stdout)["access_patterns"][0]["sentence"] == "caf\u00e9 \x81 \ufeff \x7f"


def test_usage_errors(tmp_path):
    assert run("model", "import").returncode == 2
    assert run("model", "import", "--queries", "q.cql").returncode == 2
    p = run("model", "import", "--cql", str(tmp_path / "missing.cql"))
    assert p.returncode == 2 and "cannot open" in p.stderr


# ---- the round trip: export --format cql, import --cql, check ----

CREATE = re.compile(r"CREATE TABLE IF NOT EXISTS (\w+)\.(\w+) \((.*?)\n\)(.*?);", re.S)


def exported_tables(cql):
    """{ks.table: (partition columns, clustering columns, {column: asc|desc})} of an export."""
    tables = {}
    for ks, name, body, opts in CREATE.findall(cql):
        key = re.search(r"PRIMARY KEY \(\(([^)]*)\)([^)]*)\)", body)
        part = [c.strip() for c in key.group(1).split(",")]
        clus = [c.strip() for c in key.group(2).split(",") if c.strip()]
        order = {c: "asc" for c in clus}
        m = re.search(r"CLUSTERING ORDER BY \(([^)]*)\)", opts)
        for item in (m.group(1).split(",") if m else []):
            col, direction = item.split()
            order[col] = direction.lower()
        tables[f"{ks}.{name}"] = (part, clus, order)
    return tables


def template_vars(t):
    return re.findall(r"\{(\w+)\}", t or "")


@pytest.mark.parametrize("example", EXAMPLES)
def test_export_import_round_trip(tmp_path, example):
    exported = run("model", "export", f"examples/{example}.yaml", "--format", "cql")
    assert exported.returncode == 0, exported.stderr
    schema = tmp_path / f"{example}.cql"
    schema.write_text(exported.stdout)
    tables = exported_tables(exported.stdout)
    assert tables
    # one query per table, by its whole partition key: each must be one partition
    queries = tmp_path / f"{example}.queries.cql"
    queries.write_text("".join(
        f"-- name: read-{name}\nSELECT * FROM {name} WHERE {' AND '.join(c + ' = ?' for c in part)};\n"
        for name, (part, _, _) in tables.items()))
    out = tmp_path / f"{example}.yaml"
    p = run("model", "import", "--cql", str(schema), "--queries", str(queries), "-o", str(out))
    assert p.returncode == 0, p.stderr
    model = yaml.safe_load(out.read_text())
    assert set(model["tables"]) == set(tables)
    for ename, ent in model["entities"].items():
        part, clus, order = tables[ent["table"]]
        assert template_vars(ent["pk"]) == part
        assert template_vars(ent.get("sk")) == clus
        assert model["tables"][ent["table"]]["cql"].get("clustering_order", {}) == order
        assert ("sort_key" in model["tables"][ent["table"]]) == bool(clus)
    checked = check(out, "--json")
    assert checked.returncode in (0, 1), checked.stderr
    rep = json.loads(checked.stdout)
    assert all(pl["served"] for pl in rep["access_patterns"]), rep["access_patterns"]
    assert not findings(rep, "access-pattern-coverage") and not findings(rep, "allow-filtering")
    # exported again, the imported tables are written as declared: the same statements
    again = run("model", "export", str(out), "--format", "cql")
    assert again.returncode == 0, again.stderr
    assert statements(again.stdout) == statements(exported.stdout)


def statements(cql):
    """The CREATE TABLE statements of an export, by name."""
    return {f"{ks}.{name}": body + opts for ks, name, body, opts in CREATE.findall(cql)}


# ---- the rules on hand-written models ----

def cql_model():
    """A small CQL-shaped model written by hand (what import --cql writes, in JSON)."""
    return {
        "name": "hand",
        "tables": {"ks.feed": {"partition_key": {"name": "pk", "type": "B"},
                               "sort_key": {"name": "ck", "type": "B"},
                               "cql": {"clustering_order": {"at": "desc", "id": "asc"}}}},
        "entities": {"feed": {"table": "ks.feed", "pk": "{user}", "sk": "{at}#{id}",
                              "attributes": {"user": "uuid", "at": "timestamp", "id": "uuid", "n": "number"}}},
        "access_patterns": [{"name": "latest", "kind": "query", "entity": "feed", "given": ["user"],
                             "order_by": "at", "direction": "desc", "limit": 10}],
    }


def check_dict(tmp_path, model):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(model))
    p = check(path, "--json")
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def test_hand_written_cql_model_is_clean(tmp_path):
    status, rep = check_dict(tmp_path, cql_model())
    assert status == 0 and rep["summary"]["errors"] == rep["summary"]["warnings"] == 0
    (plan,) = rep["access_patterns"]
    assert plan["operation"] == "SELECT" and plan["key_condition"] == "user = ?"


def test_typed_clustering_columns_are_not_text(tmp_path):
    m = cql_model()
    m["entities"]["feed"]["sk"] = "{n}#{id}"
    m["tables"]["ks.feed"]["cql"]["clustering_order"] = {"n": "asc", "id": "asc"}
    m["access_patterns"][0].update(order_by="n", direction="asc")
    status, rep = check_dict(tmp_path, m)
    assert "sort-key-order" not in {f["rule"] for f in rep["findings"]}  # an int sorts as an int


def test_cross_partition_aggregate_on_a_dynamodb_model(tmp_path):
    from modeltest import base_model
    m = base_model()
    m["access_patterns"].append({"name": "all-posts", "kind": "query", "entity": "Post", "aggregate": "count"})
    status, rep = check_dict(tmp_path, m)
    (f,) = findings(rep, "cross-partition-aggregate")
    assert status == 1 and "counter item" in f["fix"]
    assert not findings(rep, "aggregate-by-query")  # one finding says it


def test_cql_section_is_checked_when_loading(tmp_path):
    m = cql_model()
    m["tables"]["ks.feed"]["cql"]["clustering_order"] = {"id": "asc", "at": "desc"}
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m))
    p = check(path)
    assert p.returncode == 2 and "clustering_order of table ks.feed names id where entity feed's sort key has at" in p.stderr
    m = cql_model()
    m["tables"]["ks.feed"]["cql"]["clustering_order"]["at"] = "down"
    path.write_text(json.dumps(m))
    p = check(path)
    assert p.returncode == 2 and "clustering order must be asc or desc" in p.stderr
    m = cql_model()
    m["access_patterns"][0]["in"] = ["at"]
    path.write_text(json.dumps(m))
    p = check(path)
    assert p.returncode == 2 and "'in' names 'at', which the pattern is not given" in p.stderr


def test_quoted_identifiers_and_no_keyspace(tmp_path):
    (tmp_path / "s.cql").write_text('CREATE TABLE "Users" ("User Id" text, "Created" timestamp, yes int, '
                                    'PRIMARY KEY (("User Id"), "Created")) WITH CLUSTERING ORDER BY ("Created" DESC);\n')
    (tmp_path / "q.cql").write_text('SELECT * FROM "Users" WHERE "User Id" = ? AND "Created" > ? ORDER BY "Created" DESC;\n'
                                    'SELECT * FROM "Users" WHERE "User Id" = ? AND nope = 1;\n')
    p = run("model", "import", "--cql", "s.cql", "--queries", "q.cql", cwd=str(tmp_path))
    assert p.returncode == 2 and "q.cql:2:47: unknown column nope in table Users" in p.stderr
    (tmp_path / "q.cql").write_text('SELECT * FROM "Users" WHERE "User Id" = ? AND "Created" > ? ORDER BY "Created" DESC;\n')
    p = run("model", "import", "--cql", "s.cql", "--queries", "q.cql", cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    m = yaml.safe_load(p.stdout)
    assert m["name"] == "s" and set(m["tables"]) == {"Users"}
    assert m["entities"]["Users"]["pk"] == "{User Id}" and m["entities"]["Users"]["attributes"]["yes"]["cql_type"] == "int"
    (tmp_path / "m.yaml").write_text(p.stdout)
    rep = json.loads(check(tmp_path / "m.yaml", "--json").stdout)
    assert rep["access_patterns"][0]["served"] and not findings(rep, "clustering-order")
