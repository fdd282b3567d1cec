"""`quarry model apply` against a running `quarry serve` (started on a free port and
stopped by pid), plus the checks apply makes before it sends anything. The server tests
skip when this build has no `serve` command."""
import os
import socket
import subprocess
import time

import pytest

from modeltest import quarry_bin, run

CREDS = {"AWS_ACCESS_KEY_ID": "AKIDQUARRYTEST", "AWS_SECRET_ACCESS_KEY": "quarry-test-secret", "AWS_REGION": "us-east-1"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def has_serve():
    return " serve " in run("--help").stdout


@pytest.fixture
def endpoint(tmp_path):
    if not has_serve():
        pytest.skip("this quarry build has no `serve` command")
    port = free_port()
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen([quarry_bin(), "serve", "--listen", f"127.0.0.1:{port}", "--data", str(tmp_path / "data")],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.time() > deadline:
                    raise RuntimeError("quarry serve did not start: " + open(tmp_path / "serve.log").read())
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def apply(path, endpoint, *extra, env=None):
    e = dict(CREDS)
    if env:
        e.update(env)
    return run("model", "apply", path, "--endpoint", endpoint, *extra, env=e)


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text)
    return str(path)


SIMPLE = """
name: simple
tables:
  %s:
    partition_key: PK
%s
entities:
  Thing:
    table: %s
    pk: "THING#{id}"
%s
    attributes: {id: id, at: timestamp}
access_patterns:
  - {name: get-thing, kind: get, entity: Thing, given: %s}
"""


def simple(table, sort_key=True):
    return SIMPLE % (table, "    sort_key: SK" if sort_key else "", table, '    sk: "AT#{at}"' if sort_key else "",
                     "[id, at]" if sort_key else "[id]")


def test_apply_creates_then_is_idempotent(endpoint):
    p = apply("examples/chat.yaml", endpoint)
    assert p.returncode == 0, p.stderr
    assert "table Chat: created" in p.stdout
    p = apply("examples/chat.yaml", endpoint)
    assert p.returncode == 0, p.stderr
    assert "table Chat: exists, up to date" in p.stdout


def test_apply_reads_the_default_profile(endpoint, tmp_path):
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text("[other]\naws_access_key_id = X\n\n[default]\naws_access_key_id = AKIDPROFILE\n"
                                               "aws_secret_access_key = profile-secret\n")
    env = {"HOME": str(home), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}
    p = apply("examples/leaderboard.yaml", endpoint, env=env)
    assert p.returncode == 0, p.stderr
    assert "table Games: created" in p.stdout


def test_apply_refuses_to_change_a_key_schema(endpoint, tmp_path):
    assert apply(write(tmp_path, "a.yaml", simple("Things")), endpoint).returncode == 0
    p = apply(write(tmp_path, "b.yaml", simple("Things", sort_key=False)), endpoint)
    assert p.returncode == 1
    assert "different key schema" in p.stderr


def test_apply_adds_a_gsi(endpoint, tmp_path):
    base = simple("Indexed")
    assert apply(write(tmp_path, "a.yaml", base), endpoint).returncode == 0
    with_gsi = base.replace("    sort_key: SK", "    sort_key: SK\n    gsis: [{name: ByAt, partition_key: GSI1PK, sort_key: GSI1SK}]")
    with_gsi = with_gsi.replace('    sk: "AT#{at}"', '    sk: "AT#{at}"\n    indexes: {ByAt: {pk: "THINGS", sk: "{at}#{id}"}}')
    with_gsi += "  - {name: recent, kind: query, entity: Thing, index: ByAt, order_by: at, direction: desc, limit: 10}\n"
    p = apply(write(tmp_path, "b.yaml", with_gsi), endpoint)
    if p.returncode != 0 and "not supported by this quarry version" in p.stderr:
        pytest.skip("the engine does not serve global secondary indexes yet")
    assert p.returncode == 0, p.stderr
    assert "table Indexed: GSI ByAt created" in p.stdout


def test_apply_changes_billing(endpoint, tmp_path):
    base = simple("Billed")
    assert apply(write(tmp_path, "a.yaml", base), endpoint).returncode == 0
    prov = base.replace("    sort_key: SK", "    sort_key: SK\n    billing: provisioned\n    read_capacity: 7\n    write_capacity: 3")
    p = apply(write(tmp_path, "b.yaml", prov), endpoint)
    assert p.returncode == 0, p.stderr
    assert "table Billed: billing set to PROVISIONED (7 RCU, 3 WCU)" in p.stdout
    p = apply(write(tmp_path, "b.yaml", prov), endpoint)
    assert "table Billed: exists, up to date" in p.stdout
    p = apply(write(tmp_path, "a.yaml", base), endpoint)
    assert "table Billed: billing set to PAY_PER_REQUEST" in p.stdout


@pytest.mark.parametrize("name", ["orders", "tickets", "overloaded", "iot", "leaderboard"])
def test_apply_every_seed_model(endpoint, name):
    p = apply(f"examples/{name}.yaml", endpoint)
    assert p.returncode == 0, p.stderr
    assert ": created (" in p.stdout
    p = apply(f"examples/{name}.yaml", endpoint)
    assert p.returncode == 0, p.stderr
    assert "exists, up to date" in p.stdout


def test_apply_cannot_add_an_lsi_later(endpoint, tmp_path):
    base = simple("Local")
    assert apply(write(tmp_path, "a.yaml", base), endpoint).returncode == 0
    with_lsi = base.replace("    sort_key: SK", "    sort_key: SK\n    lsis: [{name: ByAt, sort_key: atSk}]")
    with_lsi = with_lsi.replace('    sk: "AT#{at}"', '    sk: "AT#{at}"\n    indexes: {ByAt: {sk: "{at}"}}')
    with_lsi += "  - {name: by-at, kind: query, entity: Thing, given: [id], index: ByAt, order_by: at}\n"
    p = apply(write(tmp_path, "b.yaml", with_lsi), endpoint)
    assert p.returncode == 1
    assert "LSIs can only be created with the table" in p.stderr


def test_apply_force_applies_a_failing_model(endpoint):
    p = apply("examples/chat-broken.yaml", endpoint)
    assert p.returncode == 1 and "nothing applied" in p.stderr
    p = apply("examples/chat-broken.yaml", endpoint, "--force")
    assert p.returncode == 0, p.stderr


# ---- without a server ----

def test_apply_refuses_a_model_that_fails_the_check():
    p = apply("examples/orders-broken.yaml", "http://127.0.0.1:9")
    assert p.returncode == 1
    assert "access-pattern-coverage" in p.stderr and "nothing applied (use --force" in p.stderr


def test_apply_reports_an_unreachable_endpoint():
    p = apply("examples/chat.yaml", f"http://127.0.0.1:{free_port()}")
    assert p.returncode == 1
    assert "DescribeTable http://127.0.0.1:" in p.stderr


def test_apply_needs_credentials(tmp_path):
    env = {"HOME": str(tmp_path), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}
    p = apply("examples/chat.yaml", "http://127.0.0.1:9", env=env)
    assert p.returncode == 1 and "no AWS credentials" in p.stderr


def test_apply_needs_an_http_endpoint():
    p = apply("examples/chat.yaml", "ftp://example.com")
    assert p.returncode == 1 and "http:// or https://" in p.stderr
    assert run("model", "apply", "examples/chat.yaml").returncode == 2
