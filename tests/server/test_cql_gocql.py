"""Runs the gocql tests (tests/server/go/gocql) against `quarry serve --cql`, with and without
--cql-credentials: gocql as Debian packages it (golang-github-gocql-gocql-dev), built with `go
test -c` in GOPATH mode against /usr/share/gocode as test_go.py builds the AWS SDK tests
(nothing fetched). Skipped only when go or gocql is missing."""
import os
import re
import subprocess

import pytest

from test_go import GO_DIR, GOCODE, go_env, go_work  # noqa: F401 (go_work is a fixture)

GOCQL = GOCODE / "src/github.com/gocql/gocql"
ROLES = "carol:s3cret pass\n"


@pytest.fixture(scope="module")
def gocql_binary(go_work):  # noqa: F811
    if not GOCQL.is_dir():
        pytest.skip("gocql is not installed under %s (golang-github-gocql-gocql-dev)" % GOCODE)
    out = go_work / "gocql.test"
    p = subprocess.run(["go", "test", "-c", "-o", str(out), "./gocql"], cwd=GO_DIR,
                       env=go_env(go_work), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "go test -c gocql failed:\n%s%s" % (p.stdout, p.stderr)
    return out


def names():
    src = (GO_DIR / "gocql" / "cql_test.go").read_text()
    return re.findall(r"^func (Test\w+)\(t \*testing\.T\)", src, re.M)


def run(binary, srv, extra_env, expect_skip=()):
    env = dict(os.environ, QUARRY_CQL_HOST=srv.host, QUARRY_CQL_PORT=str(srv.port), **extra_env)
    p = subprocess.run([str(binary), "-test.v", "-test.count=1", "-test.timeout=120s"],
                       cwd=GO_DIR / "gocql", env=env, capture_output=True, text=True, timeout=180)
    report = "%s\n%s\nserver log:\n%s" % (p.stdout[-8000:], p.stderr[-3000:], srv.log()[-3000:])
    assert p.returncode == 0, report
    passed = sorted(re.findall(r"^--- PASS: (\w+)", p.stdout, re.M))
    skipped = sorted(re.findall(r"^--- SKIP: (\w+)", p.stdout, re.M))
    assert skipped == sorted(expect_skip), report
    assert passed == sorted(set(names()) - set(expect_skip)), report


def test_gocql_without_authentication(gocql_binary, cql_server):
    run(gocql_binary, cql_server(), {}, expect_skip=["TestWrongPasswordIsRefused"])


def test_gocql_with_password_authentication(gocql_binary, cql_server):
    run(gocql_binary, cql_server(roles=ROLES),
        {"QUARRY_CQL_USER": "carol", "QUARRY_CQL_PASSWORD": "s3cret pass"})
