"""What `quarry model export` writes, loaded by the tools it is for: every example model's
CloudFormation through cfn-lint (npm, its own copy of the resource specification), its
Terraform through HCL's own formatter (Debian's golang-github-hashicorp-hcl-v2-dev, the
hclwrite.Format that `terraform fmt` runs: the file must parse and come back unchanged), and
its ElectroDB and dynamodb-toolbox entities run against `quarry serve` on the tables `model
apply` made, the items they write compared with what the model's key templates say
(node/electrodb_export.mjs, node/toolbox_export.mjs), and, through dynamodb-toolbox, every
get, query, update and transaction pattern run as the check plans it; plus a provisioned model with every
kind of index, TTL and a stream, and one with a multi-attribute GSI key."""
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import KEYS, npm_install, quarry_bin
from test_go import GO_DIR, GOCODE, go_env, go_work  # noqa: F401 (go_work is a fixture)

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = Path(__file__).parent / "node"
EXAMPLES = sorted(p for p in (ROOT / "examples").glob("*.yaml") if "broken" not in p.name)

PROVISIONED = """
name: provisioned
tables:
  Orders:
    partition_key: PK
    sort_key: SK
    billing: provisioned
    read_capacity: 50
    write_capacity: 20
    ttl: expiresAt
    gsis:
      - name: ByStatus
        partition_key: GSI1PK
        sort_key: GSI1SK
        projection: [total, "name with ${braces}"]
        read_capacity: 5
        write_capacity: 20
    lsis:
      - name: ByTotal
        sort_key: totalSk
        projection: keys_only
entities:
  Order:
    table: Orders
    pk: "CUSTOMER#{customerId}"
    sk: "ORDER#{orderId}"
    indexes:
      ByStatus: {pk: "STATUS#{status}", sk: "{placedAt}"}
      ByTotal: {sk: "{total}"}
    attributes: {customerId: id, orderId: id, status: text, placedAt: timestamp,
                 total: {format: zero-padded, width: 10}, expiresAt: number}
    item_size: 400B
access_patterns:
  - {name: orders-of-customer, kind: query, entity: Order, given: [customerId], rps: 10}
  - {name: orders-by-status, kind: query, entity: Order, index: ByStatus, given: [status], rps: 1}
  - {name: orders-by-total, kind: query, entity: Order, index: ByTotal, given: [customerId],
     order_by: total, rps: 1}
"""


def models(tmp_path):
    extra = tmp_path / "provisioned.yaml"
    extra.write_text(PROVISIONED)
    return EXAMPLES + [extra]


def export(model, fmt, out):
    p = subprocess.run([quarry_bin(), "model", "export", str(model), "--format", fmt],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, "%s: %s" % (model.name, p.stderr)
    out.write_text(p.stdout)
    return out


@pytest.fixture(scope="session")
def cfn_lint():
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm is not installed")
    npm_install(NODE_DIR)
    return NODE_DIR / "node_modules" / ".bin" / "cfn-lint"


@pytest.fixture(scope="session")
def hclfmt(go_work):
    if not (GOCODE / "src/github.com/hashicorp/hcl/v2/hclwrite").is_dir():
        pytest.skip("hcl/v2 is not installed under %s (golang-github-hashicorp-hcl-v2-dev)" % GOCODE)
    out = go_work / "hclfmt"
    p = subprocess.run(["go", "build", "-o", str(out), "./hclfmt"], cwd=GO_DIR,
                       env=go_env(go_work), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "go build hclfmt failed:\n%s%s" % (p.stdout, p.stderr)
    return out


def test_the_provisioned_model_checks(tmp_path):
    path = tmp_path / "provisioned.yaml"
    path.write_text(PROVISIONED)
    p = subprocess.run([quarry_bin(), "model", "check", str(path)], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def test_cloudformation_passes_cfn_lint(cfn_lint, tmp_path):
    for model in models(tmp_path):
        template = export(model, "cloudformation", tmp_path / (model.stem + ".json"))
        p = subprocess.run([str(cfn_lint), "validate", str(template)], capture_output=True,
                           text=True, timeout=120)
        assert p.returncode == 0, "%s:\n%s%s" % (model.name, p.stdout, p.stderr)


def test_terraform_is_in_terraform_fmt_layout(hclfmt, tmp_path):
    files = [export(m, "terraform", tmp_path / (m.stem + ".tf")) for m in models(tmp_path)]
    p = subprocess.run([str(hclfmt)] + [str(f) for f in files], capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    text = (tmp_path / "provisioned.tf").read_text()
    assert '"name with $${braces}"' in text
    assert "    read_capacity      = 5\n    write_capacity     = 20\n" in text


# ---- ElectroDB: the cases are built from the model file here, not from the export ----

def sample(name, spec):
    """An attribute's value for the test item, from its declaration in the model file."""
    if isinstance(spec, dict):
        if "values" in spec:
            return spec["values"][0]
        if "width" in spec:
            return "7"
        return 5 if spec.get("type") == "number" else "%s-v" % name
    return {"number": 42, "epoch": 1767225600, "timestamp": "2026-03-14T09:14:00Z",
            "month": "2026-03", "map": {"k": "v"}}.get(spec, "%s-1" % name)


def key_name(k):
    return (k["name"], k.get("type", "S")) if isinstance(k, dict) else (k, "S")


def expand(template, item, attrs, ktype):
    """The template filled with the item's values ({x:from} and {x:to}, a range's ends in
    a plan, with x's own)."""
    names = [n.split(":")[0] for n in re.findall(r"{([^}]*)}", template)]
    if ktype == "N" and re.fullmatch(r"{[^}]*}", template):
        return item[names[0]]

    def value(m):
        name = m.group(1).split(":")[0]
        spec = attrs.get(name)
        v = str(item[name])
        return v.zfill(spec["width"]) if isinstance(spec, dict) and "width" in spec else v
    return re.sub(r"{([^}]*)}", value, template)


MULTI_ATTRIBUTE = """
name: esports
tables:
  Esports:
    partition_key: PK
    sort_key: SK
    gsis:
      - name: ByRegion
        partition_key: [tournamentId, region]
        sort_key: [{name: round, type: N}, bracket]
entities:
  Match:
    pk: "MATCH#{matchId}"
    sk: "INFO"
    attributes:
      matchId: ulid
      tournamentId: id
      region: {format: enum, values: [NA-EAST, EU-WEST]}
      round: number
      bracket: {format: enum, values: [UPPER, LOWER]}
access_patterns:
  - {name: get-match, kind: get, entity: Match, given: [matchId]}
  - {name: region-matches, kind: query, entity: Match, given: [tournamentId, region], order_by: round}
  - {name: round-matches, kind: query, entity: Match, given: [tournamentId, region, round, bracket]}
  - {name: later-rounds, kind: query, entity: Match, given: [tournamentId, region],
     sk_condition: {op: ">=", attribute: round}}
"""


def electrodb_cases(path, fixed=None):
    """Each entity's test item, its keys and the key attributes the model's templates give
    it; fixed: values that replace the samples (a pattern's fixed given values)."""
    m = yaml.safe_load(path.read_text())
    tables = m["tables"]
    cases = []
    for ename, e in m["entities"].items():
        tname = e.get("table") or next(iter(tables))
        t = tables[tname]
        if "cql" in t:
            continue
        attrs = e.get("attributes") or {}
        item = {a: sample(a, spec) for a, spec in attrs.items()}
        item.update({a: v for a, v in (fixed or {}).items() if a in attrs})
        pk, pk_type = key_name(t["partition_key"])
        templates = [(pk, pk_type, e["pk"])]
        if "sort_key" in t:
            sk, sk_type = key_name(t["sort_key"])
            templates.append((sk, sk_type, e["sk"]))
        primary = {v: item[v] for _, _, tpl in templates for v in re.findall(r"{([^}]*)}", tpl)}
        key = {f: expand(tpl, item, attrs, ty) for f, ty, tpl in templates}
        fields, absent, queries = dict(key), [], []
        defs = {g["name"]: g for g in t.get("gsis", [])}
        defs.update({x["name"]: dict(x, partition_key=t["partition_key"]) for x in t.get("lsis", [])})
        for iname, ik in (e.get("indexes") or {}).items():
            d = defs[iname]
            ipk, ipk_type = key_name(d["partition_key"])
            pk_tpl = ik.get("pk", e["pk"])
            index_fields = {ipk: expand(pk_tpl, item, attrs, ipk_type)}
            if "sort_key" in d and "sk" in ik:
                isk, isk_type = key_name(d["sort_key"])
                index_fields[isk] = expand(ik["sk"], item, attrs, isk_type)
            when = ik.get("when") or {}
            if all(str(item.get(a)) == str(v) for a, v in when.items()):
                fields.update(index_fields)
                queries.append({"index": iname, "partial": d.get("projection", "all") != "all",
                                "composite": {v: item[v] for v in re.findall(r"{([^}]*)}", pk_tpl)}})
            else:
                absent += [f for f in index_fields if f not in key]
        cases.append({"model": path.stem, "entity": ename, "table": tname, "item": item,
                      "primary": primary, "key": key, "fields": fields, "absent": absent,
                      "queries": queries})
    return cases


def test_electrodb_entities_write_what_the_model_says(cfn_lint, start, tmp_path):
    # cfn_lint: the node folder's packages are installed (ElectroDB among them)
    work = tmp_path / "electrodb"
    work.mkdir()
    (work / "node_modules").symlink_to(NODE_DIR / "node_modules")
    ran = 0
    for model in models(tmp_path):
        cases = electrodb_cases(model)
        if not cases:
            continue
        srv = start()
        p = subprocess.run([quarry_bin(), "model", "apply", str(model), "--endpoint", srv.url],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local"))
        assert p.returncode == 0, "%s: %s%s" % (model.name, p.stdout, p.stderr)
        module = export(model, "electrodb", work / (model.stem + ".mjs"))
        case_file = work / (model.stem + ".json")
        case_file.write_text(json.dumps(cases))
        key, secret = KEYS["ci"]
        p = subprocess.run(["node", str(NODE_DIR / "electrodb_export.mjs"), str(module), str(case_file)],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, QUARRY_ENDPOINT=srv.url, QUARRY_KEY_ID=key,
                                    QUARRY_SECRET=secret))
        assert p.returncode == 0, "%s:\n%s%s" % (model.name, p.stdout, p.stderr)
        ran += len(cases)
    assert ran >= 10


# ---- dynamodb-toolbox: the entity cases above, and the patterns as the check plans them ----

# one condition of a plan's key condition: NAME OP VALUE, NAME BETWEEN A AND B, or
# begins_with(NAME, PREFIX); a value is a quoted template or a {variable} (a key part)
VALUE = r'"(?:[^"\\]|\\.)*"|{[^}]*}'
CONDITION = re.compile(r'begins_with\((?P<bname>[^,]+), (?P<prefix>%s)\)'
                       r'|(?P<name>\S+) BETWEEN (?P<lo>%s) AND (?P<hi>%s)'
                       r'|(?P<cname>\S+) (?P<op><=|>=|=|<|>) (?P<v>%s)' % ((VALUE,) * 4))
OPS = {"=": "eq", "<": "lt", "<=": "lte", ">": "gt", ">=": "gte"}


def plan_value(text, item, attrs, ktype):
    if text.startswith("{"):
        return item[text[1:-1].split(":")[0]]
    return expand(json.loads(text), item, attrs, ktype)


def toolbox_patterns(path, cases):
    """The model's get, query, update and transaction patterns whose entities have cases, each with the
    partition and range of its planned key condition filled from its first entity's item
    (a < or <= bound just above it, so the item qualifies)."""
    m = yaml.safe_load(path.read_text())
    p = subprocess.run([quarry_bin(), "model", "check", str(path), "--json"], capture_output=True,
                       text=True, timeout=60)
    assert p.returncode in (0, 1), p.stderr
    plans = {x["name"]: x for x in json.loads(p.stdout)["access_patterns"]}
    by_entity = {c["entity"]: c for c in cases}
    out = []
    for ap in m.get("access_patterns", []):
        plan, names = plans[ap["name"]], ap.get("entities") or [ap.get("entity")]
        if not plan.get("served") or not all(n in by_entity for n in names):
            continue
        kind = {"GetItem": "get", "Query": "query", "UpdateItem": "update",
                "TransactWriteItems": "transaction"}.get(plan["operation"])
        if kind is None:
            continue
        given = ap.get("given")
        fixed = {a: v for a, v in given.items() if v is not None} if isinstance(given, dict) else {}
        own = {x["entity"]: x for x in electrodb_cases(path, fixed)} if fixed else by_entity
        c = own[names[0]]
        entry = {"model": path.stem, "name": ap["name"], "kind": kind, "entities": names,
                 "table": c["table"], "index": plan.get("index"),
                 # items with the pattern's fixed values, put for it (the usual ones after)
                 "items": [own[n] for n in names] if fixed else []}
        if kind == "update":
            # the attributes it sets (else its enums outside the primary key) moved to another
            # value: an update input of the key and those, and the item it must leave
            e = m["entities"][names[0]]
            attrs = e.get("attributes") or {}
            sets = ap.get("sets") or [a for a, spec in attrs.items()
                                      if isinstance(spec, dict) and "values" in spec and a not in c["primary"]]
            moved = {}
            for a in sets:
                spec = attrs[a]
                if isinstance(spec, dict) and "values" in spec and len(spec["values"]) > 1:
                    vals = spec["values"]
                    moved[a] = vals[(vals.index(c["item"][a]) + 1) % len(vals)]
            after = next(x for x in electrodb_cases(path, dict(fixed, **moved)) if x["entity"] == names[0])
            entry["input"] = dict(c["primary"], **{a: after["item"][a] for a in sets})
            entry["after"] = after
        if kind == "query":
            t = m["tables"][c["table"]]
            d = next((x for x in t.get("gsis", []) + t.get("lsis", []) if x["name"] == entry["index"]), None)
            pk = d["partition_key"] if d and "partition_key" in d else t["partition_key"]
            sk = (d or t).get("sort_key")
            pk_parts = [key_name(k) for k in (pk if isinstance(pk, list) else [pk])]
            sk_parts = [key_name(k) for k in (sk if isinstance(sk, list) else [sk] if sk else [])]
            types = dict(pk_parts + sk_parts)
            attrs = m["entities"][names[0]].get("attributes") or {}
            partition, ranges = {}, []
            for cond in CONDITION.finditer(plan["key_condition"]):
                g = cond.groupdict()
                if g["bname"]:
                    ranges.append({"beginsWith": plan_value(g["prefix"], c["item"], attrs, "S")})
                elif g["name"]:
                    ty = types[g["name"]]
                    ranges.append({"between": [plan_value(g["lo"], c["item"], attrs, ty),
                                               plan_value(g["hi"], c["item"], attrs, ty)]})
                elif g["cname"] in dict(pk_parts) and g["op"] == "=":
                    partition[g["cname"]] = plan_value(g["v"], c["item"], attrs, types[g["cname"]])
                else:
                    v = plan_value(g["v"], c["item"], attrs, types[g["cname"]])
                    if g["op"] in ("<", "<="):
                        v = v + 1 if isinstance(v, (int, float)) else v + "\uffff"
                    ranges.append({OPS[g["op"]]: v})
            multi_pk, multi_sk = isinstance(pk, list), isinstance(sk, list)
            entry["partition"] = [partition[n] for n, _ in pk_parts] if multi_pk else partition[pk_parts[0][0]]
            if multi_sk:  # parts given equal are plain values, a range object comes last
                ranges = [next(iter(r.values())) if "eq" in r else r for r in ranges]
            entry["range"] = (ranges or None) if multi_sk else (ranges[0] if ranges else None)
            entry["partial"] = bool(d) and d.get("projection", "all") != "all"
        out.append(entry)
    return out


def test_dynamodb_toolbox_entities_serve_the_patterns(cfn_lint, start, tmp_path):
    # cfn_lint: the node folder's packages are installed (dynamodb-toolbox among them)
    work = tmp_path / "toolbox"
    work.mkdir()
    (work / "node_modules").symlink_to(NODE_DIR / "node_modules")
    extra = tmp_path / "esports.yaml"
    extra.write_text(MULTI_ATTRIBUTE)
    ran = patterns = 0
    for model in models(tmp_path) + [extra]:
        cases = electrodb_cases(model)
        if not cases:
            continue
        reads = toolbox_patterns(model, cases)
        srv = start()
        p = subprocess.run([quarry_bin(), "model", "apply", str(model), "--endpoint", srv.url],
                           capture_output=True, text=True, timeout=120,
                           env=dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local"))
        assert p.returncode == 0, "%s: %s%s" % (model.name, p.stdout, p.stderr)
        module = export(model, "dynamodb-toolbox", work / (model.stem + ".mjs"))
        case_file = work / (model.stem + ".json")
        case_file.write_text(json.dumps({"cases": cases, "patterns": reads}))
        key, secret = KEYS["ci"]
        p = subprocess.run(["node", str(NODE_DIR / "toolbox_export.mjs"), str(module), str(case_file)],
                           capture_output=True, text=True, timeout=300,
                           env=dict(os.environ, QUARRY_ENDPOINT=srv.url, QUARRY_KEY_ID=key,
                                    QUARRY_SECRET=secret))
        assert p.returncode == 0, "%s:\n%s%s" % (model.name, p.stdout, p.stderr)
        ran += len(cases)
        patterns += len(reads)
    assert ran >= 12 and patterns >= 25


def test_dynamodb_toolbox_modules_of_the_rule_models_load(cfn_lint, tmp_path):
    """The checker's rule models (LSIs of existing tables, provisioned GSIs, shards,
    multi-attribute keys, counters) export modules whose Tables and Entities
    dynamodb-toolbox makes."""
    work = tmp_path / "toolbox"
    work.mkdir()
    (work / "node_modules").symlink_to(NODE_DIR / "node_modules")
    modules = []
    for model in sorted((ROOT / "tests" / "model" / "rules").glob("*.yaml")):
        p = subprocess.run([quarry_bin(), "model", "export", str(model), "--format", "dynamodb-toolbox"],
                           capture_output=True, text=True, timeout=60)
        if p.returncode == 2:  # a model that does not load (load-errors-fail)
            continue
        assert p.returncode == 0, "%s: %s" % (model.name, p.stderr)
        modules.append(work / (model.stem + ".mjs"))
        modules[-1].write_text(p.stdout)
    assert len(modules) >= 20
    p = subprocess.run(["node", str(NODE_DIR / "toolbox_construct.mjs")] + [str(m) for m in modules],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stdout + p.stderr


def test_dynamodb_toolbox_refuses_what_it_cannot_say(tmp_path):
    """A key attribute that is also an attribute of another value cannot be written, and the
    export says which, writing nothing."""
    model = tmp_path / "clash.yaml"
    model.write_text("""
tables:
  T: {partition_key: userId, sort_key: SK}
entities:
  User:
    pk: "USER#{userId}"
    sk: "PROFILE"
    attributes: {userId: id, name: text}
access_patterns:
  - {name: get-user, kind: get, entity: User, given: [userId]}
""")
    p = subprocess.run([quarry_bin(), "model", "export", str(model), "--format", "dynamodb-toolbox"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stdout == ""
    assert "attribute userId of entity User is also the key attribute that holds \"USER#{userId}\"" in p.stderr
    model.write_text("""
tables:
  T: {partition_key: seq}
entities:
  Counter:
    pk: "{seq}"
    attributes: {seq: number}
access_patterns:
  - {name: get-counter, kind: get, entity: Counter, given: [seq]}
""")
    p = subprocess.run([quarry_bin(), "model", "export", str(model), "--format", "dynamodb-toolbox"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and p.stdout == "", p.stdout + p.stderr
    assert "attribute seq of entity Counter is a number, but the key attribute of that name is a string" in p.stderr
