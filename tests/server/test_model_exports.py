"""What `quarry model export` writes, loaded by the tools it is for: every example model's
CloudFormation through cfn-lint (npm, its own copy of the resource specification) and its
Terraform through HCL's own formatter (Debian's golang-github-hashicorp-hcl-v2-dev, the
hclwrite.Format that `terraform fmt` runs: the file must parse and come back unchanged), plus a
provisioned model with every kind of index, TTL and a stream."""
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import npm_install, quarry_bin
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
