"""Golden files for `quarry model render` and each export format, and the Workbench
round trip. Regenerate the golden files after an intended change with
QUARRY_UPDATE_GOLDEN=1 (then read the diff before committing it)."""
import json
import os
import re

import pytest

from modeltest import GOLDEN, run

EXAMPLES = ["chat", "orders", "tickets", "overloaded", "iot", "leaderboard"]
OUTPUTS = {
    "render.txt": ["model", "render"],
    "render.html": ["model", "render", "--html"],
    "cloudformation.json": ["model", "export", "--format", "cloudformation"],
    "terraform.tf": ["model", "export", "--format", "terraform"],
    "cql": ["model", "export", "--format", "cql"],
    "workbench.json": ["model", "export", "--format", "workbench"],
    "electrodb.mjs": ["model", "export", "--format", "electrodb"],
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


def strip_data(model):
    """A Workbench model without its example data and dates, which import cannot keep
    exactly (example values are regenerated from the recovered formats)."""
    model = json.loads(json.dumps(model))
    model.pop("ModelMetadata", None)
    for t in model["DataModel"]:
        t.pop("TableData", None)
        for f in t["TableFacets"]:
            f.pop("TableData", None)
        t["NonKeyAttributes"] = sorted(t["NonKeyAttributes"], key=lambda a: a["AttributeName"])
    return model


@pytest.mark.parametrize("example", EXAMPLES)
def test_workbench_round_trip(tmp_path, example):
    first = run("model", "export", f"examples/{example}.yaml", "--format", "workbench", env=FIXED_DATE)
    assert first.returncode == 0
    wb = tmp_path / "model.json"
    wb.write_text(first.stdout)
    imported = run("model", "import", str(wb))
    assert imported.returncode == 0, imported.stderr
    back = tmp_path / "back.yaml"
    back.write_text(imported.stdout)
    checked = run("model", "check", str(back), "--json")
    assert checked.returncode in (0, 1), checked.stderr  # loads; no access patterns survive the trip
    second = run("model", "export", str(back), "--format", "workbench", env=FIXED_DATE)
    assert second.returncode == 0, second.stderr
    a, b = strip_data(json.loads(first.stdout)), strip_data(json.loads(second.stdout))
    assert a == b


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
