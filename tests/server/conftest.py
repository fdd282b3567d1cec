"""Shared fixtures for the `quarry serve` tests.

Every test gets its own server: `quarry serve` on a free loopback port (port 0, read
back from the banner), with a fresh temporary data directory, stopped with SIGTERM at
the end of the test (which must then exit 0: drained and closed cleanly). Also a small
SigV4 signer written from AWS's description, independent of the server's C code, for
requests that the SDKs would never send (skewed clocks, wrong keys, broken bodies).
"""
import datetime
import hashlib
import hmac
import http.client
import itertools
import json
import os
import re
import select
import signal
import subprocess
import time
import urllib.parse

import pytest

QUARRY_BIN = os.environ.get("QUARRY_BIN")

# The keys of the credentials file the signed servers use: two profiles, both accepted.
KEYS = {
    "default": ("AKIDQUARRYTEST1", "quarry/secret/one+1"),
    "ci": ("AKIDQUARRYTEST2", "quarry/secret/two+2"),
}
REGION = "us-east-1"


class Server:
    def __init__(self, proc, url, data_dir, log_path, banner):
        self.proc = proc
        self.url = url
        self.port = int(url.rsplit(":", 1)[1])
        self.data_dir = data_dir
        self.log_path = log_path
        self.banner = banner

    def log(self):
        with open(self.log_path, encoding="utf-8", errors="replace") as f:
            return f.read()

    def stop(self, timeout=30):
        """SIGTERM, then wait; returns the exit status (killing it if it hangs)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                raise AssertionError("quarry serve did not stop within %ss of SIGTERM" % timeout)
        self.proc.stdout.close()
        return self.proc.returncode


def quarry_bin():
    if not QUARRY_BIN or not os.path.exists(QUARRY_BIN):
        pytest.fail("QUARRY_BIN must name the quarry binary (make e2e sets it)")
    return QUARRY_BIN


def launch(data_dir, log_path, *args, credentials=None, log_level="warn", wait=True):
    """Starts quarry serve; returns the Server, or the finished Popen if it exited."""
    # Four write threads rather than 16 per CPU keep durable test servers small. Not with
    # --no-sync, where the default is none: the event loops then run every write
    # themselves and stage them once a turn, which is what such a server does.
    threads = [] if "--no-sync" in args or "--threads" in args else ["--threads", "4"]
    cmd = [quarry_bin(), "serve", "--listen", "127.0.0.1:0", "--data", str(data_dir),
           "--log-level", log_level, *threads, *args]
    if credentials:
        cmd += ["--credentials", str(credentials)]
    log = open(log_path, "ab")
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL)
    log.close()
    deadline = time.monotonic() + 30
    first = b""
    while b"\n" not in first:
        left = deadline - time.monotonic()
        if left <= 0:
            proc.kill()
            proc.wait()
            raise AssertionError("quarry serve printed no banner within 30 s")
        ready, _, _ = select.select([proc.stdout], [], [], left)
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                proc.wait()
                return proc
            first += chunk
    banner = first.decode()
    m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", banner)
    assert m, "unexpected banner: %r" % banner
    # The rest of the banner follows at once; gather it for tests that read it.
    while True:
        ready, _, _ = select.select([proc.stdout], [], [], 0.2)
        if not ready:
            break
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        banner += chunk.decode()
    return Server(proc, m.group(1), data_dir, log_path, banner)


@pytest.fixture
def credentials_file(tmp_path):
    path = tmp_path / "credentials"
    path.write_text(
        "# keys for the quarry server tests\n"
        "[default]\n"
        "aws_access_key_id = %s\n"
        "aws_secret_access_key = %s\n"
        "\n"
        "[ci]\n"
        "aws_access_key_id=%s\n"
        "aws_secret_access_key=%s\n"
        "region = %s\n" % (KEYS["default"] + KEYS["ci"] + (REGION,)))
    return path


@pytest.fixture
def start(tmp_path):
    """A factory: start(*args, credentials=None, data=None) -> Server, stopped after the test."""
    started = []

    def _start(*args, credentials=None, data=None, log_level="warn"):
        n = len(started)
        data_dir = data or tmp_path / ("data%d" % n)
        srv = launch(data_dir, tmp_path / ("server%d.log" % n), *args,
                     credentials=credentials, log_level=log_level)
        assert isinstance(srv, Server), "quarry serve exited at once: %s" % (
            (tmp_path / ("server%d.log" % n)).read_text())
        started.append(srv)
        return srv

    yield _start
    for srv in started:
        code = srv.stop()
        assert code == 0, "quarry serve exited %s; log:\n%s" % (code, srv.log())


@pytest.fixture
def server(start):
    """A server that accepts any access key (loopback, no credentials file)."""
    return start()


@pytest.fixture
def signed_server(start, credentials_file):
    """A server that verifies SigV4 against credentials_file."""
    return start(credentials=credentials_file)


@pytest.fixture
def cql_server(start, tmp_path):
    """A factory: cql_server(*args, roles=None, listen="127.0.0.1:0", **start_kw) -> CqlServer
    (cqlserver.py): `quarry serve --cql LISTEN` and args, started by `start` (data=...
    and its other keywords too), with --cql-credentials naming a file of roles (their text)
    when given. After the test its driver clusters are shut, then `start` stops it."""
    from cqlserver import CqlServer
    made = []

    def _cql_server(*args, roles=None, listen="127.0.0.1:0", **kw):
        if roles is not None:
            path = tmp_path / ("roles%d" % len(made))
            path.write_text(roles)
            args += ("--cql-credentials", str(path))
        srv = CqlServer(start("--cql", listen, *args, **kw))
        made.append(srv)
        return srv

    yield _cql_server
    for srv in made:
        srv.close()


@pytest.fixture(scope="session")
def shared_cql(tmp_path_factory):
    """One `quarry serve --cql` for the whole run (a CqlServer), for modules that work only in
    keyspaces of names no other module uses and read nothing server-wide (metrics, the log,
    every keyspace); each opens its own session on it and shuts that session's cluster
    (shared_keyspace does both for a test)."""
    from cqlserver import CqlServer
    tmp = tmp_path_factory.mktemp("shared_cql")
    srv = launch(tmp / "data", tmp / "server.log", "--cql", "127.0.0.1:0")
    assert isinstance(srv, Server), (tmp / "server.log").read_text()
    cql = CqlServer(srv)
    yield cql
    code = cql.stop()
    assert code == 0, "quarry serve exited %s; log:\n%s" % (code, srv.log())


@pytest.fixture
def shared_keyspace(shared_cql):
    """A factory: shared_keyspace(name, **session_kw) -> a Session of the test's own on the
    run's shared server, in keyspace name, created for it. After the test every keyspace
    created while it ran is dropped and the session's cluster shut, so the next test finds
    none of them. For tests that read nothing server-wide and start no server of their own."""
    from cqlserver import keyspaces, use_new_keyspace
    made = []

    def _shared_keyspace(name, **kw):
        s = shared_cql.session(**kw)
        made.append((s, keyspaces(s)))
        use_new_keyspace(s, name)
        return s

    yield _shared_keyspace
    for s, before in made:
        for name in sorted(keyspaces(s) - before):
            s.execute('DROP KEYSPACE "%s"' % name.replace('"', '""'))
        s.cluster.shutdown()


@pytest.fixture
def table(cql):
    """table(schema) -> the name of a new table, made by schema, in the keyspace of the
    test module's CQL session (its fixture `cql`)."""
    def _table(schema):
        name = "t%d" % next(_table_names)
        cql.execute("CREATE TABLE %s %s" % (name, schema))
        return name
    return _table


_table_names = itertools.count()


def npm_install(folder):
    """Installs folder's npm packages from its lock file, unless node_modules is as new."""
    stamp = folder / "node_modules" / ".package-lock.json"
    lock = folder / "package-lock.json"
    if not stamp.exists() or stamp.stat().st_mtime < lock.stat().st_mtime:
        p = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=folder,
                           capture_output=True, text=True, timeout=600)
        assert p.returncode == 0, "npm ci failed:\n" + p.stdout + p.stderr


def boto3_client(url, key="local", secret="local", retries=1, service="dynamodb", **kw):
    import boto3
    from botocore.config import Config
    return boto3.client(
        service, endpoint_url=url, region_name=REGION, aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": retries, "mode": "standard"}), **kw)


def boto3_resource(url, key="local", secret="local"):
    import boto3
    return boto3.resource("dynamodb", endpoint_url=url, region_name=REGION,
                          aws_access_key_id=key, aws_secret_access_key=secret)


# ---- raw requests, signed by hand ----

def _hmac(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def sign(headers, body, host, key, secret, when, region=REGION, service="dynamodb"):
    """Adds X-Amz-Date and a SigV4 Authorization header (POST /) to headers."""
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    headers = dict(headers)
    headers["Host"] = host
    headers["X-Amz-Date"] = amz_date
    names = sorted(h.lower() for h in headers)
    lower = {k.lower(): " ".join(str(v).split()) for k, v in headers.items()}
    canonical = "\n".join([
        "POST", "/", "",
        "".join("%s:%s\n" % (n, lower[n]) for n in names),
        ";".join(names),
        hashlib.sha256(body).hexdigest()])
    scope = "%s/%s/%s/aws4_request" % (day, region, service)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canonical.encode()).hexdigest()])
    k = _hmac(("AWS4" + secret).encode(), day)
    for part in (region, service, "aws4_request"):
        k = _hmac(k, part)
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    headers["Authorization"] = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        key, scope, ";".join(names), sig)
    return headers


class Reply:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)

    @property
    def error_type(self):
        return self.json().get("__type", "").rsplit("#", 1)[-1]

    @property
    def message(self):
        d = self.json()
        return d.get("message", d.get("Message"))


def raw(url, target, body, key="local", secret="local", when=None, headers=None,
        auth=True, content_type="application/x-amz-json-1.0", method="POST", conn=None):
    """Sends one request (signed unless auth is False) and returns a Reply."""
    if isinstance(body, (dict, list)):
        body = json.dumps(body)
    if isinstance(body, str):
        body = body.encode()
    u = urllib.parse.urlsplit(url)
    h = {}
    if content_type:
        h["Content-Type"] = content_type
    if target is not None:
        h["X-Amz-Target"] = target
    if auth:
        h = sign(h, body, u.netloc, key, secret,
                 when or datetime.datetime.now(datetime.timezone.utc))
    h.update(headers or {})
    own = conn is None
    c = conn or http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        c.request(method, "/", body=body, headers=h)
        r = c.getresponse()
        data = r.read()
        return Reply(r.status, {k.lower(): v for k, v in r.getheaders()}, data)
    finally:
        if own:
            c.close()
