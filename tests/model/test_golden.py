"""Golden files for `quarry model render` and each export format, and the Workbench
round trip. Regenerate the golden files after an intended change with
QUARRY_UPDATE_GOLDEN=1 (then read the diff before committing it)."""
import json
import os
import re

import pytest
import yaml

from modeltest import GOLDEN, ROOT, run

EXAMPLES = ["chat", "orders", "tickets", "overloaded", "iot", "leaderboard"]
OUTPUTS = {
    "render.txt": ["model", "render"],
    "render.html": ["model", "render", "--html"],
    "cloudformation.json": ["model", "export", "--format", "cloudformation"],
    "terraform.tf": ["model", "export", "--format", "terraform"],
    "cql": ["model", "export", "--format", "cql"],
    "workbench.json": ["model", "export", "--format", "workbench"],
    "electrodb.mjs": ["model", "export", "--format", "electrodb"],
    "dynamodb-toolbox.mjs": ["model", "export", "--format", "dynamodb-toolbox"],
}
FIXED_DATE = {"SOURCE_DATE_EPOCH": "1767225600"}


@pytest.mark.parametrize("example", EXAMPLES)
@pytest.mark.parametrize("output", sorted(OUTPUTS))
def test_golden(example, output):
    args = OUTPUTS[output]
    p = run(*args[:2], f"examples/{example}.yaml", *args[2:], env=FIXED_DATE)
    assert p.returncode == 0, p.stderr
    path = os.path.join(GOLDEN, f"{example}.{output}")
    if os.environ.get("QUARRY_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(p.stdout)
    with open(path) as f:
        assert p.stdout == f.read()


@pytest.mark.parametrize("example", EXAMPLES)
def test_json_outputs_parse(example):
    for fmt in ("cloudformation", "workbench"):
        doc = json.loads(run("model", "export", f"examples/{example}.yaml", "--format", fmt).stdout)
        assert doc


def test_html_is_self_contained():
    html = run("model", "render", "examples/overloaded-broken.yaml", "--html").stdout
    assert html.startswith("<!DOCTYPE html>") and html.rstrip().endswith("</html>")
    for needle in ("<script", "src=", "http://", "https://", "@import", "url("):
        assert needle not in html
    links = re.findall(r'href="([^"]*)"', html)
    assert links and all(link.startswith("#") for link in links)  # links only within the page
    ids = set(re.findall(r' id="([^"]*)"', html))
    assert {link[1:] for link in links} <= ids


def test_cloudformation_shape():
    doc = json.loads(run("model", "export", "examples/orders.yaml", "--format", "cloudformation").stdout)
    props = doc["Resources"]["ShopTable"]["Properties"]
    assert doc["Resources"]["ShopTable"]["Type"] == "AWS::DynamoDB::Table"
    assert props["KeySchema"] == [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}]
    (gsi,) = props["GlobalSecondaryIndexes"]
    assert gsi["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["total", "customerName"]}
    assert props["BillingMode"] == "PAY_PER_REQUEST"


def test_cql_clustering_order_follows_direction():
    cql = run("model", "export", "examples/chat.yaml", "--format", "cql").stdout
    assert "PRIMARY KEY ((thread_id), sent_at, message_id)\n) WITH CLUSTERING ORDER BY (sent_at DESC, message_id ASC);" in cql
    assert "title text STATIC" in cql


ALL_EXAMPLES = sorted(f[:-5] for f in os.listdir(os.path.join(ROOT, "examples")) if f.endswith(".yaml"))


def findings(path):
    """`model check --json` of a model file without the file's name and positions, which
    an imported model cannot keep."""
    p = run("model", "check", str(path), "--json")
    assert p.returncode in (0, 1), p.stderr

    def strip(o):
        if isinstance(o, dict):
            return {k: strip(v) for k, v in o.items() if k not in ("file", "line", "column")}
        if isinstance(o, list):
            return [strip(v) for v in o]
        return re.sub(r"[^\s:]+\.yaml:\d+:\d+", "FILE", o) if isinstance(o, str) else o
    return p.returncode, strip(json.loads(p.stdout))


@pytest.mark.parametrize("example", ALL_EXAMPLES)
def test_workbench_round_trip(tmp_path, example):
    """Every example, good or broken: export, import and export again gives the same file,
    and the imported model checks as the original does."""
    first = run("model", "export", f"examples/{example}.yaml", "--format", "workbench", env=FIXED_DATE)
    assert first.returncode == 0, first.stderr
    wb = tmp_path / "model.json"
    wb.write_text(first.stdout)
    imported = run("model", "import", str(wb))
    assert imported.returncode == 0, imported.stderr
    back = tmp_path / "back.yaml"
    back.write_text(imported.stdout)
    second = run("model", "export", str(back), "--format", "workbench", env=FIXED_DATE)
    assert second.returncode == 0, second.stderr
    assert second.stdout == first.stdout
    assert findings(back) == findings(os.path.join(ROOT, "examples", f"{example}.yaml"))


def test_workbench_access_patterns_are_workbench_s(tmp_path):
    """The Data Modeler's fields: each pattern's name, description, type and index; formats
    Workbench has a name for in SampleDataFormats."""
    doc = json.loads(run("model", "export", "examples/orders.yaml", "--format", "workbench").stdout)
    aps = {a["Name"]: a for a in doc["AccessPatterns"]}
    assert [a["Name"] for a in doc["AccessPatterns"]] == [
        "get-customer", "customer-orders", "order-with-items", "pending-orders", "place-order",
        "update-order-status"]
    assert {k: aps["pending-orders"][k] for k in ("Description", "Type", "TableName", "IndexName")} == {
        "Description": "list pending orders across all customers, oldest first", "Type": "Query",
        "TableName": "Shop", "IndexName": "GSI1"}
    assert [aps[n]["Type"] for n in ("get-customer", "place-order", "update-order-status")] == [
        "GetItem", "PutItem", "UpdateItem"]
    (shop,) = doc["DataModel"]
    assert shop["SampleDataFormats"]["createdAt"] == ["date", "ISO 8601 date and time"]
    facet = next(f for f in shop["TableFacets"] if f["FacetName"] == "OrderItem")
    assert facet["Quarry"]["attributes"]["line"] == {"format": "zero-padded", "width": 3}


def test_workbench_edits_are_imported(tmp_path):
    """A pattern renamed and described in Workbench keeps quarry's fields under its new name;
    one added there comes in with its type as the kind, on the facet that writes its GSI."""
    doc = json.loads(run("model", "export", "examples/orders.yaml", "--format", "workbench").stdout)
    doc["AccessPatterns"][0].update(Name="customer-profile", Description="a customer's profile")
    doc["AccessPatterns"].append({"Name": "orders-by-status", "Description": "orders in a status",
                                  "Type": "Query", "TableName": "Shop", "IndexName": "GSI1"})
    doc["AccessPatterns"].append({"Name": "everything", "Type": "Scan", "TableName": "Shop"})
    wb = tmp_path / "wb.json"
    wb.write_text(json.dumps(doc))
    p = run("model", "import", str(wb))
    assert p.returncode == 0, p.stderr
    m = yaml.safe_load(p.stdout)
    first = m["access_patterns"][0]
    assert (first["name"], first["sentence"], first["given"]) == (
        "customer-profile", "a customer's profile", ["customerId"])
    assert m["access_patterns"][-1] == {"name": "orders-by-status", "sentence": "orders in a status",
                                        "kind": "query", "entity": "Order", "given": [],
                                        "index": "GSI1"}
    assert "everything" not in [a["name"] for a in m["access_patterns"]]
    assert "# Workbench access pattern \"everything\" is left out: its type has no kind" in p.stdout
    back = tmp_path / "back.yaml"
    back.write_text(p.stdout)
    assert run("model", "check", str(back)).returncode in (0, 1)


def test_import_plain_aliases(tmp_path):
    """A Workbench model written by hand (plain aliases, no data) imports as {alias} keys."""
    wb = {
        "ModelName": "Music",
        "DataModel": [{
            "TableName": "Songs",
            "KeyAttributes": {"PartitionKey": {"AttributeName": "Id", "AttributeType": "S"},
                              "SortKey": {"AttributeName": "Metadata", "AttributeType": "S"}},
            "NonKeyAttributes": [{"AttributeName": "Title", "AttributeType": "S"},
                                 {"AttributeName": "TotalDownloads", "AttributeType": "N"}],
            "TableFacets": [{"FacetName": "SongDetails",
                             "KeyAttributeAlias": {"PartitionKeyAlias": "SongId", "SortKeyAlias": "Metadata"},
                             "NonKeyAttributes": ["Title", "TotalDownloads"]}],
        }],
    }
    path = tmp_path / "wb.json"
    path.write_text(json.dumps(wb))
    p = run("model", "import", str(path))
    assert p.returncode == 0, p.stderr
    assert 'pk: "{SongId}"' in p.stdout and '"TotalDownloads": number' in p.stdout
    back = tmp_path / "m.yaml"
    back.write_text(p.stdout)
    assert run("model", "check", str(back)).returncode in (0, 1)


def test_import_rejects_non_workbench(tmp_path):
    path = tmp_path / "x.json"
    path.write_text('{"hello": 1}')
    p = run("model", "import", str(path))
    assert p.returncode == 2 and "not a NoSQL Workbench model" in p.stderr
    path.write_text('{"DataModel": [')
    p = run("model", "import", str(path))
    assert p.returncode == 2 and str(path) + ":" in p.stderr
