"""`quarry model check --run`: each access pattern's plan run on generated sample items in an
in-memory database. tests/model/run/pass.yaml must pass every pattern; each
tests/model/run/fail-KIND.yaml must fail at --run with that problem (order, condition,
entity, projection, missing). The report (stdout, then stderr) and exit status are golden files
(golden/run-NAME.check.txt); regenerate them with QUARRY_UPDATE_GOLDEN=1 and read the diff."""
import json
import os
import shutil

import pytest

from modeltest import EXAMPLES, GOLDEN, run

RUNS = os.path.join(os.path.dirname(__file__), "run")
CASES = sorted(f[:-5] for f in os.listdir(RUNS) if f.endswith(".yaml"))
# Seed models whose run finds a flaw the static checklist misses, and what it is.
KNOWN_FLAWS = {"orders": {"customer-orders": "entity"}}


def report(path, *extra):
    p = run("model", "check", path, "--run", *extra, env={"NO_COLOR": "1"})
    text = p.stdout + (f"--- stderr\n{p.stderr}" if p.stderr else "") + f"--- exit {p.returncode}\n"
    return p, text


def run_json(path):
    p = run("model", "check", path, "--run", "--json")
    return p, json.loads(p.stdout)


@pytest.mark.parametrize("name", CASES)
def test_run_golden(name):
    path = f"tests/model/run/{name}.yaml"
    p, text = report(path)
    pj, doc = run_json(path)
    assert pj.returncode == p.returncode
    results = doc["run"]["patterns"]
    assert len(results) == len(doc["access_patterns"])
    if name == "pass":
        assert p.returncode == 0, text
        assert [r["result"] for r in results] == ["pass"] * len(results), text
    else:
        kind = name.split("fail-")[1]
        assert p.returncode == 1, text
        failed = [r for r in results if r["result"] == "fail"]
        assert failed and {r["problem"] for r in failed} == {kind}, text
        for r in failed:
            assert r["message"] and r["ran"] and r["request"], r
    golden = os.path.join(GOLDEN, f"run-{name}.check.txt")
    if os.environ.get("QUARRY_UPDATE_GOLDEN"):
        with open(golden, "w") as f:
            f.write(text)
    with open(golden) as f:
        assert text == f.read()


def test_every_failure_kind_has_a_model():
    kinds = {n.split("fail-")[1] for n in CASES if n.startswith("fail-")}
    assert kinds == {"order", "condition", "entity", "projection", "missing"}
    assert "pass" in CASES


@pytest.mark.parametrize("example", sorted(f[:-5] for f in os.listdir(EXAMPLES)
                                           if f.endswith(".yaml") and "-broken" not in f))
def test_examples_pass_the_run(example):
    p, doc = run_json(f"examples/{example}.yaml")
    flaws = KNOWN_FLAWS.get(example, {})
    for r in doc["run"]["patterns"]:
        if r["name"] in flaws:
            assert (r["result"], r["problem"]) == ("fail", flaws[r["name"]]), r
        else:
            assert r["result"] == "pass", r
    assert p.returncode == (1 if flaws else 0)
    assert doc["run"]["items"] > 0 and doc["run"]["seed"] == 53


def test_the_run_is_deterministic():
    a = run("model", "check", "examples/chat.yaml", "--run", "--json").stdout
    b = run("model", "check", "examples/chat.yaml", "--run", "--json").stdout
    assert a == b


def test_requests_are_the_plans():
    """What ran is the plan with values: the same table, index and operation, and a Query's
    ScanIndexForward and Limit as the pattern declares."""
    _, doc = run_json("tests/model/run/pass.yaml")
    plans = {a["name"]: a for a in doc["access_patterns"]}
    for r in doc["run"]["patterns"]:
        plan, req = plans[r["name"]], r["request"]
        ops = {"GetItem": "Key", "Query": "KeyConditionExpression", "PutItem": "Item",
               "UpdateItem": "Key", "DeleteItem": "Key", "TransactWriteItems": "TransactItems"}
        assert ops[plan["operation"]] in req, (plan, req)
        assert r["ran"].startswith(plan["operation"]), (plan, r["ran"])
        if plan["operation"] == "Query":
            assert req["TableName"] == plan["table"]
            assert req.get("IndexName") == plan["index"]
            assert req.get("ScanIndexForward", True) == plan["scan_index_forward"]
            assert req.get("Limit") == plan.get("limit")


def test_check_without_run_runs_nothing():
    p = run("model", "check", "tests/model/run/fail-entity.yaml", "--json")
    assert p.returncode == 0
    assert "run" not in json.loads(p.stdout)


def test_nothing_is_written(tmp_path):
    shutil.copy(os.path.join(RUNS, "pass.yaml"), tmp_path / "m.yaml")
    p = run("model", "check", "m.yaml", "--run", cwd=str(tmp_path))
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(os.listdir(tmp_path)) == ["m.yaml"]


def test_help_names_the_flag():
    p = run("model", "--help")
    assert "--run" in p.stdout


def test_returns_names_attributes_of_the_entity(tmp_path):
    with open(os.path.join(RUNS, "fail-projection.yaml")) as f:
        text = f.read().replace("returns: [ticketId, openedAt, subject]", "returns: [ticketId, subjct]")
    (tmp_path / "m.yaml").write_text(text)
    p = run("model", "check", str(tmp_path / "m.yaml"))
    assert p.returncode == 2
    assert "returns 'subjct', which entity Ticket does not define (did you mean 'subject'?)" in p.stderr


def test_an_overloaded_index_without_prefixes_mixes_entities():
    """overloaded-broken.yaml's GSI1 keys orders by "{status}" and employees by
    "{department}": the run gives a department an order status's name, as production would,
    and both patterns read the other entity's items."""
    p, doc = run_json("examples/overloaded-broken.yaml")
    assert p.returncode == 1
    got = {r["name"]: (r["result"], r["problem"]) for r in doc["run"]["patterns"]}
    assert got["orders-by-status"] == ("fail", "entity")
    assert got["employees-by-department"] == ("fail", "entity")
    _, good = run_json("examples/overloaded.yaml")
    assert all(r["result"] == "pass" for r in good["run"]["patterns"])


SPARSE = """
tables:
  Desk:
    partition_key: PK
    sort_key: SK
    gsis: [{name: Open, partition_key: openPk, sort_key: openSk, projection: keys_only}]
entities:
  Ticket:
    pk: "TICKET#{ticketId}"
    sk: "META"
    indexes:
      Open: {pk: "OPEN", sk: "{openedAt}#{ticketId}", when: {status: %s}}
    attributes:
      ticketId: id
      status: {format: enum, values: [CLOSED, OPEN]}
      openedAt: timestamp
access_patterns:
  - {name: set-status, kind: update, entity: Ticket, given: [ticketId], sets: [status]}
"""


@pytest.mark.parametrize("when,verb", [("OPEN", "REMOVE"), ("CLOSED", "SET")])
def test_an_update_keeps_a_sparse_index_as_its_when_says(tmp_path, when, verb):
    """An update of the attribute a sparse index's 'when' names writes that index's keys as
    the application must: set while the condition holds, removed when it stops holding."""
    path = tmp_path / "m.yaml"
    path.write_text(SPARSE % when)
    p, doc = run_json(str(path))
    (r,) = doc["run"]["patterns"]
    assert r["result"] == "pass", r
    names = r["request"]["ExpressionAttributeNames"]
    assert {"openPk", "openSk"} <= set(names.values())
    expr = r["request"]["UpdateExpression"]
    if verb == "REMOVE":
        assert " REMOVE " in expr and r["ran"].endswith("SET status REMOVE openPk, openSk")
    else:
        assert " REMOVE " not in expr and r["ran"].endswith("SET status, openPk, openSk")
