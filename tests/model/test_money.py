"""Monthly costs of `quarry model check` and `render`: each pattern, table and index at the
price table's on-demand and provisioned prices, storage included (share/quarry/prices.yaml,
or --prices FILE)."""
import json

import pytest

from modeltest import base_model, run

HOURS = 730


def check(tmp_path, model, *extra):
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    p = run("model", "check", str(path), "--json", *extra)
    return p, (json.loads(p.stdout) if p.stdout else None)


def test_costs_follow_the_declared_load(tmp_path):
    m = base_model()
    m["access_patterns"] = [
        {"name": "get-user", "kind": "get", "entity": "User", "given": ["userId"], "rps": 100, "consistent": True},
        {"name": "write-post", "kind": "put", "entity": "Post", "rps": 10},
    ]
    p, rep = check(tmp_path, m)
    costs = rep["costs"]
    prices = costs["prices"]
    assert prices["file"].endswith("share/quarry/prices.yaml") and prices["source"].startswith("https://aws.amazon.com/")
    assert prices["date"] and prices["storage_gb_month"] > 0
    pats = {c["name"]: c for c in costs["patterns"]}
    # a consistent read of a 500-byte item is one read unit; a 1 KB put one write unit
    get = pats["get-user"]
    assert get["read_units_per_second"] == 100 and get["write_units_per_second"] == 0
    assert get["on_demand"] == pytest.approx(100 * 3600 * HOURS * prices["read_per_million"] / 1e6)
    assert get["provisioned"] == pytest.approx(100 * HOURS * prices["rcu_hour"])
    put = pats["write-post"]
    assert put["on_demand"] == pytest.approx(10 * 3600 * HOURS * prices["write_per_million"] / 1e6)
    (table,) = costs["tables"]
    # storage: 1M users of 500 B, plus 100 bytes of overhead each
    gb = 1e6 * 600 / 2**30
    assert table["storage_gb"] == pytest.approx(gb)
    assert table["on_demand"] == pytest.approx(get["on_demand"] + put["on_demand"] + gb * prices["storage_gb_month"])
    assert costs["total"]["provisioned"] == pytest.approx(table["provisioned"])


def test_index_writes_are_priced_with_the_index(tmp_path):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "ByTopic", "partition_key": "GPK", "projection": "keys_only"}]
    m["entities"]["Post"]["attributes"]["topic"] = {"format": "id"}
    m["entities"]["Post"]["indexes"] = {"ByTopic": {"pk": "TOPIC#{topic}"}}
    m["access_patterns"].append({"name": "by-topic", "kind": "query", "entity": "Post", "given": ["topic"], "rps": 1})
    _, rep = check(tmp_path, m)
    (table,) = rep["costs"]["tables"]
    (ix,) = table["indexes"]
    assert ix["name"] == "ByTopic" and ix["write_units_per_second"] == 5  # write-post's 5 puts
    assert table["write_units_per_second"] == table["base"]["write_units_per_second"] + 5
    pats = {c["name"]: c for c in rep["costs"]["patterns"]}
    assert pats["write-post"]["write_units_per_second"] == 10  # the table's and the index's


def test_edited_price_file(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("region: eu-west-1\nsource: a contract\ndate: 2026-01-01\n"
                      "on_demand: {read_per_million: 1, write_per_million: 2}\n"
                      "provisioned: {rcu_hour: 0.001, wcu_hour: 0.002}\nstorage: {gb_month: 1}\n"
                      "hours_per_month: 100\n")
    _, rep = check(tmp_path, base_model(), "--prices", str(prices))
    pr = rep["costs"]["prices"]
    assert pr["region"] == "eu-west-1" and pr["source"] == "a contract" and pr["hours_per_month"] == 100
    pats = {c["name"]: c for c in rep["costs"]["patterns"]}
    assert pats["write-post"]["on_demand"] == pytest.approx(5 * 3600 * 100 * 2 / 1e6)
    text = run("model", "render", str(tmp_path / "model.json"), "--prices", str(prices)).stdout
    assert "Monthly cost (prices of eu-west-1 as of 2026-01-01" in text


def test_bad_price_file_is_refused(tmp_path):
    prices = tmp_path / "prices.yaml"
    prices.write_text("region: x\n")
    p, _ = check(tmp_path, base_model(), "--prices", str(prices))
    assert p.returncode == 2 and "price table needs" in p.stderr


def test_nothing_to_price_says_so(tmp_path):
    m = base_model()
    for p in m["access_patterns"]:
        p.pop("rps", None)
    for e in m["entities"].values():
        e.pop("count", None)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(m))
    out = run("model", "check", str(path)).stdout
    assert "nothing to price" in out and "$0.00" not in out
