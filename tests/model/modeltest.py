"""Helpers for the `quarry model` tests: run the binary, build small models. (A module of
its own, not conftest.py, so its name cannot clash with other test folders' conftest.)"""
import copy
import json
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
GOLDEN = os.path.join(os.path.dirname(__file__), "golden")


def quarry_bin():
    return os.environ.get("QUARRY_BIN") or os.path.join(ROOT, "build", "quarry")


def run(*args, env=None, cwd=ROOT, timeout=60):
    """Runs `quarry ARGS` and returns the CompletedProcess (text mode)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([quarry_bin(), *args], capture_output=True, text=True, env=e, cwd=cwd, timeout=timeout)


BASE = {
    "name": "base",
    "tables": {"App": {"partition_key": "PK", "sort_key": "SK"}},
    "entities": {
        "User": {
            "pk": "USER#{userId}",
            "sk": "PROFILE",
            "attributes": {"userId": "id", "name": "text"},
            "count": "1M",
            "item_size": "500B",
        },
        "Post": {
            "pk": "USER#{userId}",
            "sk": "POST#{postedAt}",
            "attributes": {"userId": "id", "postedAt": "timestamp", "body": "text"},
            "item_size": "1KB",
        },
    },
    "access_patterns": [
        {"name": "get-user", "kind": "get", "entity": "User", "given": ["userId"], "rps": 10},
        {"name": "user-posts", "sentence": "a user's posts, newest first", "kind": "query", "entity": "Post",
         "given": ["userId"], "order_by": "postedAt", "direction": "desc", "limit": 20, "rps": 10},
        {"name": "write-post", "kind": "put", "entity": "Post", "rps": 5},
    ],
}


def base_model():
    """A fresh copy of a small model that checks clean."""
    return copy.deepcopy(BASE)


def check_model(tmp_path, model):
    """Writes model (a dict) as JSON and returns (exit status, report) of `model check --json`."""
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model, indent=1))
    p = run("model", "check", str(path), "--json")
    assert p.returncode in (0, 1), p.stderr
    return p.returncode, json.loads(p.stdout)


def rules(report, severity=None):
    """The set of rule names in a report (optionally only of one severity)."""
    return {f["rule"] for f in report["findings"] if severity is None or f["severity"] == severity}


def findings(report, rule):
    return [f for f in report["findings"] if f["rule"] == rule]
