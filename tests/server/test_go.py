"""Runs the Go SDK tests (tests/server/go/sdkv2 and sdkv1) against quarry: the AWS SDK for Go
v2 and v1 as Debian packages them (golang-github-aws-aws-sdk-go-v2-dev, golang-github-aws-aws-
sdk-go-dev), each against its own SigV4-verifying server. The test binaries are built with
`go test -c` in GOPATH mode against /usr/share/gocode (nothing is fetched), with the build cache
under the build folder so that later runs only link. Skipped only when go or an SDK is missing."""
import functools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from conftest import KEYS

GO_DIR = Path(__file__).parent / "go"
GOCODE = Path("/usr/share/gocode")
SDKS = {
    "sdkv2": GOCODE / "src/github.com/aws/aws-sdk-go-v2/service/dynamodb",
    "sdkv1": GOCODE / "src/github.com/aws/aws-sdk-go/service/dynamodb",
}


def go_env(work):
    # GOPATH mode: the SDKs resolve from Debian's tree; no module proxy, no network, and a newer go
    # never fetches a toolchain (GOTOOLCHAIN). GOFLAGS and GOENV are cleared so that a user's
    # module settings (-mod=mod, a go.env) cannot switch modes.
    env = dict(os.environ, GO111MODULE="off", GOPATH=str(GOCODE), GOFLAGS="", GOENV="off",
               GOPROXY="off", GOTOOLCHAIN="local", GOCACHE=str(work / "cache"), CGO_ENABLED="0")
    env.setdefault("HOME", str(work))
    return env


@pytest.fixture(scope="session")
def go_work():
    if shutil.which("go") is None:
        pytest.skip("go is not installed (Debian package golang-go)")
    build = os.environ.get("QUARRY_BUILD")
    work = (Path(build) / "go" if build else Path(tempfile.gettempdir()) / "quarry-go").resolve()
    work.mkdir(parents=True, exist_ok=True)
    return work


@functools.lru_cache(maxsize=None)
def build_test_binary(pkg, work):
    if not SDKS[pkg].is_dir():
        pytest.skip("%s is not installed under %s" % (pkg, GOCODE))
    out = work / ("%s.test" % pkg)
    p = subprocess.run(["go", "test", "-c", "-o", str(out), "./" + pkg], cwd=GO_DIR,
                       env=go_env(work), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, "go test -c %s failed:\n%s%s" % (pkg, p.stdout, p.stderr)
    return out



def go_test_names(pkg):
    names = []
    for src in sorted((GO_DIR / pkg).glob("*_test.go")):
        names += re.findall(r"^func (Test\w+)\(t \*testing\.T\)", src.read_text(), re.M)
    assert names, "no tests in %s" % pkg
    return names


def run_tests(pkg, names, work, start, credentials_file):
    """Runs the named tests of pkg against a fresh signed server; returns (passed, report)."""
    binary = build_test_binary(pkg, work)
    srv = start(credentials=credentials_file)
    key, secret = KEYS["ci"]
    env = dict(os.environ, QUARRY_ENDPOINT=srv.url, QUARRY_KEY_ID=key, QUARRY_SECRET=secret,
               AWS_EC2_METADATA_DISABLED="true")
    for var in ("AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        env.pop(var, None)
    p = subprocess.run([str(binary), "-test.v", "-test.count=1", "-test.timeout=120s",
                        "-test.run", "^(%s)$" % "|".join(names)],
                       cwd=GO_DIR / pkg, env=env, capture_output=True, text=True, timeout=180)
    report = "%s\n%s\nserver log:\n%s" % (p.stdout[-8000:], p.stderr[-3000:], srv.log()[-3000:])
    # Every named test ran and passed: none skipped, none missing from the verbose report.
    passed = sorted(re.findall(r"^--- PASS: (\w+)", p.stdout, re.M))
    return p.returncode == 0 and passed == sorted(names) and "--- SKIP" not in p.stdout, report


@pytest.mark.parametrize("pkg", sorted(SDKS))
def test_go_sdk(pkg, go_work, start, credentials_file):
    ok, report = run_tests(pkg, go_test_names(pkg), go_work, start, credentials_file)
    assert ok, "%s failed:\n%s" % (pkg, report)

