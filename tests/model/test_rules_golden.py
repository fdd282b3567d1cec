"""Each checklist rule and each load refusal of `quarry model check` with a model that must
fail and one that must pass (tests/model/rules/RULE-fail*.yaml, RULE-pass*.yaml). The
check's report (stdout, then stderr) and exit status are golden files
(golden/rule-NAME.check.txt); regenerate them with QUARRY_UPDATE_GOLDEN=1 and read the
diff. A -fail model makes its rule report a warning or an error (load-errors: the file does
not load, exit status 2); a -pass model checks with no warning or error of that rule."""
import json
import os

import pytest

from modeltest import GOLDEN, ROOT, run

RULES = os.path.join(os.path.dirname(__file__), "rules")
CASES = sorted(f[:-5] for f in os.listdir(RULES) if f.endswith(".yaml"))


def report(name, *extra):
    p = run("model", "check", f"tests/model/rules/{name}.yaml", *extra, env={"NO_COLOR": "1"})
    text = p.stdout + (f"--- stderr\n{p.stderr}" if p.stderr else "") + f"--- exit {p.returncode}\n"
    return p, text


def rule_of(name):
    return name.split("-fail")[0].split("-pass")[0]


@pytest.mark.parametrize("name", CASES)
def test_rule_golden(name):
    p, text = report(name)
    rule = rule_of(name)
    if rule == "load-errors":
        assert p.returncode == (2 if "-fail" in name else 0), text
    else:
        assert p.returncode in (0, 1), text
        rep = json.loads(run("model", "check", f"tests/model/rules/{name}.yaml", "--json").stdout)
        fired = [f for f in rep["findings"] if f["rule"] == rule and f["severity"] != "note"]
        if "-fail" in name:
            assert fired, text
        else:
            assert not fired and p.returncode == 0, text
    path = os.path.join(GOLDEN, f"rule-{name}.check.txt")
    if os.environ.get("QUARRY_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read()


def test_every_case_has_both_sides():
    stems = {rule_of(n) for n in CASES}
    for s in stems:
        assert any(n.startswith(s + "-fail") for n in CASES), s
        assert any(n.startswith(s + "-pass") for n in CASES), s


def test_load_errors_as_json():
    """--json reports a file that does not load as JSON, every error with its position."""
    p = run("model", "check", "tests/model/rules/load-errors-fail.yaml", "--json")
    assert p.returncode == 2
    doc = json.loads(p.stdout)
    assert doc["file"] == "tests/model/rules/load-errors-fail.yaml"
    assert doc["summary"] == {"errors": len(doc["errors"]), "loaded": False}
    assert len(doc["errors"]) > 5
    for e in doc["errors"]:
        assert e["line"] > 0 and e["column"] > 0 and e["message"]
    lines = [(e["line"], e["column"]) for e in doc["errors"]]
    assert lines == sorted(lines)


def test_no_message_prints_an_absent_value():
    for name in CASES:
        for extra in ((), ("--json",)):
            p, text = report(name, *extra)
            for bad in ("(null)", "nan", " inf", "{?}"):
                assert bad not in text, (name, bad)
