"""`quarry model` on the command line: the seed examples, output formats, exit status,
and errors with file, line and column for bad model files."""
import json
import os

import pytest

from modeltest import EXAMPLES, run

GOOD = ["chat", "orders", "tickets", "overloaded", "iot", "leaderboard"]
BROKEN = {
    "chat": "sort-key-order",
    "orders": "access-pattern-coverage",
    "tickets": "access-pattern-coverage",
    "overloaded": "index-overload",
    "iot": "item-collection-size",
    "leaderboard": "aggregate-by-query",
}


@pytest.mark.parametrize("name", GOOD)
def test_seed_examples_pass(name):
    p = run("model", "check", f"examples/{name}.yaml", "--json")
    assert p.returncode == 0, p.stdout
    rep = json.loads(p.stdout)
    assert rep["summary"]["errors"] == 0 and rep["summary"]["warnings"] == 0
    assert all(a["served"] for a in rep["access_patterns"])


@pytest.mark.parametrize("name,rule", sorted(BROKEN.items()))
def test_broken_examples_fail_with_their_lesson(name, rule):
    p = run("model", "check", f"examples/{name}-broken.yaml", "--json")
    assert p.returncode == 1
    rep = json.loads(p.stdout)
    errors = {f["rule"] for f in rep["findings"] if f["severity"] == "error"}
    assert errors == {rule}


def test_every_example_is_listed():
    names = {f[:-5] for f in os.listdir(EXAMPLES) if f.endswith(".yaml")}
    assert names == set(GOOD) | {n + "-broken" for n in BROKEN}


def test_text_report_has_plans_and_no_colour_when_piped():
    p = run("model", "check", "examples/chat.yaml")
    assert p.returncode == 0
    assert "\033[" not in p.stdout
    assert 'Query table Chat: PK = "USER#{userId}" AND begins_with(SK, "CONV#"), ScanIndexForward=false, Limit=20' in p.stdout
    assert "0 errors, 0 warnings, 0 notes" in p.stdout


def test_text_report_shows_findings_with_positions():
    p = run("model", "check", "examples/orders-broken.yaml")
    assert p.returncode == 1
    assert "error   access-pattern-coverage  pattern pending-orders  (examples/orders-broken.yaml:" in p.stdout
    assert "why: " in p.stdout and "fix: " in p.stdout


def test_json_report_positions():
    rep = json.loads(run("model", "check", "examples/iot-broken.yaml", "--json").stdout)
    (f,) = [f for f in rep["findings"] if f["severity"] == "error"]
    assert f["line"] > 0 and f["column"] > 0
    assert set(f) == {"severity", "rule", "subject", "line", "column", "message", "explanation", "fix"}


BAD = [
    ("tables:\n  T:\n    partition_key: PK\n   bad: [\n", "bad.yaml", ":4:4: syntax error"),
    ("tables:\n  T:\n    partition_key: PK\n    colour: red\nentities: {}\naccess_patterns: []\n", "bad.yaml",
     ":4:5: unknown field 'colour' in a table"),
    ('tables:\n  T: {partition_key: PK}\nentities:\n  U:\n    pk: "USER#{userId}"\n    attributes: {name: text}\n'
     "access_patterns: []\n", "bad.yaml", ":5:16: template variable 'userId' in pk of entity U is not defined"),
    ('tables:\n  T: {partition_key: PK}\nentities:\n  U:\n    pk: "USER#{userId}"\n    attributes: {userId: id}\n'
     "access_patterns:\n  - name: x\n    kind: get\n    entity: Nope\n", "bad.yaml",
     ":10:13: access pattern x refers to entity 'Nope', which the model does not define"),
    ('{"tables": {"T": {"partition_key": "PK"}},\n "entities": {},\n "access_patterns": [ , ]}', "bad.json",
     ":3:23: syntax error"),
    ('{"tables": {"T": {"partition_key": "PK", "gsi": []}},\n\t"entities": {},\n "access_patterns": []}', "bad.json",
     ":1:42: unknown field 'gsi' in a table"),
    ("tables: {T: {partition_key: PK}}\nentities: {}\naccess_patterns: []\ntables: {}\n", "bad.yaml",
     ":4:1: duplicate key 'tables'"),
    ("- a\n- b\n", "bad.yaml", ":1:1: a model file must be a map"),
    ("tables: &t {T: {partition_key: PK}}\nentities: *t\naccess_patterns: []\n", "bad.yaml", "aliases are not supported"),
]


@pytest.mark.parametrize("text,name,expect", BAD)
def test_bad_input_names_file_line_column(tmp_path, text, name, expect):
    path = tmp_path / name
    path.write_text(text)
    p = run("model", "check", str(path))
    assert p.returncode == 2
    assert p.stderr.startswith(str(path) + ":"), p.stderr
    assert expect in p.stderr, p.stderr


def test_missing_file_and_usage():
    p = run("model", "check", "/nonexistent/model.yaml")
    assert p.returncode == 2 and "cannot open" in p.stderr
    assert run("model").returncode == 2
    assert run("model", "frobnicate", "examples/chat.yaml").returncode == 2
    assert run("model", "export", "examples/chat.yaml").returncode == 2
    assert run("model", "export", "examples/chat.yaml", "--format", "xml").returncode == 2
    assert run("model", "check", "examples/chat.yaml", "--bogus").returncode == 2


def test_fuzzed_inputs_never_crash(tmp_path):
    """Truncations and byte flips of a valid model load or fail cleanly (status 0, 1 or 2)."""
    src = open(os.path.join(EXAMPLES, "orders.yaml"), "rb").read()
    cases = [src[:n] for n in range(0, len(src), 97)]
    cases += [src[:n] + b"\x00" + src[n + 1:] for n in range(5, len(src), 211)]
    cases += [src[:n] + b"{" + src[n + 1:] for n in range(7, len(src), 173)]
    for i, data in enumerate(cases):
        path = tmp_path / f"f{i}.yaml"
        path.write_bytes(data)
        p = run("model", "check", str(path))
        assert p.returncode in (0, 1, 2), (i, p.returncode, p.stderr)
        if p.returncode == 2:
            assert p.stderr.strip(), i


def test_yaml_flow_style_is_not_mistaken_for_json(tmp_path):
    text = "{tables: {T: {partition_key: PK}}, entities: {}, access_patterns: []}\n"
    (tmp_path / "m.yaml").write_text(text)
    assert run("model", "check", str(tmp_path / "m.yaml")).returncode == 0
    (tmp_path / "m.json").write_text(text)
    p = run("model", "check", str(tmp_path / "m.json"))
    assert p.returncode == 2 and ":1:7: syntax error" in p.stderr


def test_json_and_yaml_models_check_alike(tmp_path):
    yaml = pytest.importorskip("yaml")
    with open(os.path.join(EXAMPLES, "orders.yaml")) as f:
        (tmp_path / "orders.json").write_text(json.dumps(yaml.safe_load(f)))
    y = json.loads(run("model", "check", "examples/orders.yaml", "--json").stdout)
    j = json.loads(run("model", "check", str(tmp_path / "orders.json"), "--json").stdout)
    assert [p["plan"] for p in y["access_patterns"]] == [p["plan"] for p in j["access_patterns"]]
    assert y["summary"] == j["summary"]


def _run_in_terminal(args, env=None):
    """Runs quarry with stdout on a pseudo-terminal and returns what it printed."""
    import pty
    import subprocess
    from modeltest import quarry_bin, ROOT
    master, slave = pty.openpty()
    e = dict(os.environ)
    e.update(env or {})
    p = subprocess.Popen([quarry_bin(), *args], stdout=slave, stderr=subprocess.DEVNULL, cwd=ROOT, env=e)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        out += chunk
    p.wait(timeout=30)
    os.close(master)
    return out.decode()


def test_colour_only_on_a_terminal_and_not_with_no_color():
    out = _run_in_terminal(["model", "check", "examples/orders-broken.yaml"])
    assert "\033[1;31m" in out and "access-pattern-coverage" in out
    out = _run_in_terminal(["model", "check", "examples/orders-broken.yaml"], {"NO_COLOR": "1"})
    assert "\033[" not in out and "access-pattern-coverage" in out
