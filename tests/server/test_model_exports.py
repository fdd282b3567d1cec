"""What `quarry model export` writes, loaded by the tools it is for: every example model's
CloudFormation through cfn-lint (npm, its own copy of the resource specification), its
Terraform through HCL's own formatter (Debian's golang-github-hashicorp-hcl-v2-dev, the
hclwrite.Format that `terraform fmt` runs: the file must parse and come back unchanged), and
its ElectroDB entities run against `quarry serve` on the tables `model apply` made, the items
they write compared with what the model's key templates say (node/electrodb_export.mjs); plus
a provisioned model with every kind of index, TTL and a stream."""
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
    names = re.findall(r"{([^}]*)}", template)
    if ktype == "N" and re.fullmatch(r"{[^}]*}", template):
        return item[names[0]]

    def value(m):
        spec = attrs.get(m.group(1))
        v = str(item[m.group(1)])
        return v.zfill(spec["width"]) if isinstance(spec, dict) and "width" in spec else v
    return re.sub(r"{([^}]*)}", value, template)


def electrodb_cases(path):
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
