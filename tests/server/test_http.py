"""The HTTP layer of `quarry serve`: health check, DynamoDB's response headers, keep-alive,
the errors the layer answers itself (bad JSON, unknown operation, wrong method or content
type, oversized bodies), full 1 MB pages read slowly (plain and gzip), HEAD, start-up
refusals and a clean drain on SIGTERM."""
import datetime
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import zlib

from conftest import launch, raw, sign

LIST = "DynamoDB_20120810.ListTables"


def test_health_check(server):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.request("GET", "/")
    r = c.getresponse()
    assert r.status == 200
    assert r.read() == b"healthy: 127.0.0.1:%d\n" % server.port
    c.close()


def test_response_headers_and_crc(server):
    r = raw(server.url, LIST, {})
    assert r.status == 200
    assert r.json() == {"TableNames": []}
    assert r.headers["content-type"] == "application/x-amz-json-1.0"
    rid = r.headers["x-amzn-requestid"]
    assert len(rid) == 52 and rid.isalnum() and rid.upper() == rid
    assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body)
    assert raw(server.url, LIST, {}).headers["x-amzn-requestid"] != rid


def test_application_json_is_accepted(server):
    r = raw(server.url, LIST, {}, content_type="application/json")
    assert r.status == 200
    assert r.headers["content-type"] == "application/json"
    assert r.json() == {"TableNames": []}


def test_keep_alive_serves_many_requests_on_one_connection(server):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    c.connect()
    sock = c.sock
    for _ in range(5):
        r = raw(server.url, LIST, {}, conn=c)
        assert r.status == 200
        assert c.sock is sock  # the same TCP connection
    c.close()


def test_bad_json_is_a_serialization_exception(server):
    r = raw(server.url, LIST, "{not json")
    assert r.status == 400
    assert r.error_type == "SerializationException"
    assert r.json()["__type"].endswith("#SerializationException")
    assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body)


def test_bad_json_wins_over_unknown_operation_and_missing_auth(server):
    # DynamoDB judges the body before the target and the signature.
    assert raw(server.url, "DynamoDB_20120810.Nope", "{").error_type == "SerializationException"
    assert raw(server.url, LIST, "{", auth=False).error_type == "SerializationException"


def test_unknown_operation(server):
    for target in ["DynamoDB_20120810.Nope", "DynamoDB_20111205.ListTables", "ListTables",
                   "DynamoDB_20120810.listtables", ""]:
        r = raw(server.url, target, {})
        assert r.status == 400, target
        assert r.error_type == "UnknownOperationException", target
    r = raw(server.url, None, {})
    assert r.error_type == "UnknownOperationException"


def test_unknown_operation_wins_over_missing_auth(server):
    r = raw(server.url, "DynamoDB_20120810.Nope", {}, auth=False)
    assert r.error_type == "UnknownOperationException"


def test_wrong_method_or_content_type_is_404(server):
    r = raw(server.url, LIST, {}, method="PUT")
    assert r.status == 404
    assert r.body == b"<UnknownOperationException/>\n"
    r = raw(server.url, LIST, {}, content_type="text/plain")
    assert r.status == 404


def test_missing_authorization(server):
    r = raw(server.url, LIST, {}, auth=False)
    assert r.status == 400
    assert r.error_type == "MissingAuthenticationTokenException"
    assert r.message == "Request is missing Authentication Token"


def test_oversized_body_with_content_length_is_refused_before_reading(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    head = ("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-amz-json-1.0\r\n"
            "X-Amz-Target: %s\r\nContent-Length: %d\r\n\r\n" % (LIST, 16 * 1024 * 1024 + 1))
    s.sendall(head.encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    assert data.startswith(b"HTTP/1.1 413"), data[:200]
    s.close()
    assert raw(server.url, LIST, {}).status == 200  # the server is fine


def test_oversized_chunked_body_is_refused(server):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    piece = b"x" * (1024 * 1024)

    def body():
        for _ in range(17):
            yield piece

    try:
        c.request("POST", "/", body=body(), encode_chunked=True,
                  headers={"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": LIST})
        r = c.getresponse()
        assert r.status == 413
        # h2o answers once the body passes the limit, before quarry sees the request.
        assert b"too large" in r.read().lower()
    except (ConnectionResetError, BrokenPipeError):
        pass  # the server may close the connection while the client is still sending
    c.close()
    assert raw(server.url, LIST, {}).status == 200


def test_body_just_under_the_limit_is_read(server):
    # 16 MB of JSON whitespace around {}: gathered whole and handed to the engine.
    body = b"{" + b" " * (16 * 1024 * 1024 - 2) + b"}"
    r = raw(server.url, LIST, body)
    assert r.status == 200, r.body[:300]


def test_log_line_per_request(start):
    srv = start(log_level="info")
    raw(srv.url, LIST, {})
    raw(srv.url, "DynamoDB_20120810.DescribeTable", {"TableName": "Nope"})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "DescribeTable" not in srv.log():
        time.sleep(0.05)
    lines = srv.log().splitlines()
    ok = [l for l in lines if " ListTables " in l]
    assert ok and "status=200" in ok[0] and "error=-" in ok[0] and " us=" in ok[0]
    bad = [l for l in lines if " DescribeTable " in l]
    assert bad and "table=Nope" in bad[0] and "status=400" in bad[0]
    assert "error=ResourceNotFoundException" in bad[0]


def test_log_level_warn_logs_only_errors(start):
    srv = start(log_level="warn")
    raw(srv.url, LIST, {})
    raw(srv.url, "DynamoDB_20120810.Nope", {})
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "UnknownOperationException" not in srv.log():
        time.sleep(0.05)
    log = srv.log()
    assert "UnknownOperationException" in log
    assert " ListTables " not in log


def test_banner_tells_how_to_use_the_aws_cli(server):
    assert "--endpoint-url " + server.url in server.banner
    assert "aws dynamodb" in server.banner


def test_second_server_on_the_same_data_directory_fails(start, tmp_path):
    first = start()
    proc = launch(first.data_dir, tmp_path / "second.log")
    assert not hasattr(proc, "url"), "a second server started on a locked directory"
    assert proc.returncode != 0
    msg = (tmp_path / "second.log").read_text()
    assert "cannot open the database" in msg and "lock" in msg.lower(), msg


def test_non_loopback_without_credentials_is_refused(tmp_path):
    bin_ = os.environ["QUARRY_BIN"]
    p = subprocess.run([bin_, "serve", "--listen", "0.0.0.0:0", "--data", str(tmp_path / "d")],
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 2
    assert "refusing to listen on 0.0.0.0:0 without --credentials" in p.stderr
    assert not (tmp_path / "d").exists()  # refused before opening anything


def test_bad_options_are_reported(tmp_path):
    bin_ = os.environ["QUARRY_BIN"]
    for args, text in [(["--log-level", "loud"], "--log-level"),
                       (["--listen", "nowhere"], "bad listen address"),
                       (["--threads", "0"], "--threads"),
                       (["--loops", "0"], "--loops"),
                       (["--credentials", str(tmp_path / "missing")], "No such file"),
                       (["--frobnicate", "1"], "unknown option")]:
        p = subprocess.run([bin_, "serve", "--data", str(tmp_path / "d"), *args],
                           capture_output=True, text=True, timeout=30)
        assert p.returncode == 2, args
        assert text in p.stderr, (args, p.stderr)


def test_sigterm_drains_an_in_flight_request(tmp_path):
    srv = launch(tmp_path / "data", tmp_path / "server.log")
    body = json.dumps({"Limit": 5}).encode()
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=30)
    from conftest import sign
    import datetime
    h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": LIST}, body,
             "127.0.0.1:%d" % srv.port, "local", "local",
             datetime.datetime.now(datetime.timezone.utc))
    head = "POST / HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in h.items())
    head += "Content-Length: %d\r\n\r\n" % len(body)
    s.sendall(head.encode() + body[:3])  # the request is in flight, its body unfinished
    time.sleep(0.3)
    srv.proc.send_signal(signal.SIGTERM)
    time.sleep(0.5)
    assert srv.proc.poll() is None, "the server quit with a request in flight"
    # New connections are no longer accepted.
    try:
        socket.create_connection(("127.0.0.1", srv.port), timeout=2).close()
        refused = False
    except OSError:
        refused = True
    assert refused
    s.sendall(body[3:])
    data = b""
    while b"TableNames" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    assert data.startswith(b"HTTP/1.1 200"), data
    assert b"Connection: close" in data or b"connection: close" in data.lower()
    s.close()
    assert srv.proc.wait(timeout=30) == 0
    srv.proc.stdout.close()
    assert "finishing 1 request in flight" in srv.log()


def test_oversized_headers_are_refused_and_the_server_lives_on(server):
    # h2o takes request heads up to about 400 KB (8 KB + 4 KB for each of 100 headers).
    try:
        r = raw(server.url, LIST, {}, headers={"X-Padding": "p" * 500000})
        assert r.status in (400, 413, 431), r.status
    except (ConnectionResetError, BrokenPipeError):
        pass  # refused while the client was still sending the headers
    assert raw(server.url, LIST, {}).status == 200


def test_many_unsigned_headers_do_not_disturb_the_signature(signed_server):
    # More headers than the server gathers on the stack (unsigned ones, added after signing).
    from conftest import KEYS
    key, secret = KEYS["default"]
    extra = {"X-Extra-%02d" % i: "v%d" % i for i in range(40)}
    r = raw(signed_server.url, LIST, {}, key=key, secret=secret, headers=extra)
    assert r.status == 200, r.body


def test_sigint_stops_cleanly(tmp_path):
    srv = launch(tmp_path / "data", tmp_path / "server.log")
    assert raw(srv.url, LIST, {}).status == 200
    srv.proc.send_signal(signal.SIGINT)
    assert srv.proc.wait(timeout=30) == 0
    srv.proc.stdout.close()


def test_idle_connections_time_out(start):
    srv = start("--timeout", "1")
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    time.sleep(2.5)
    s.settimeout(5)
    try:
        assert s.recv(1) == b""  # closed by the server
    except ConnectionResetError:
        pass
    s.close()


def test_connection_limit(start):
    srv = start("--max-connections", "2", "--threads", "1")
    held = [socket.create_connection(("127.0.0.1", srv.port), timeout=10) for _ in range(2)]
    time.sleep(0.3)
    extra = socket.create_connection(("127.0.0.1", srv.port), timeout=2)
    extra.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        got = extra.recv(100)
    except (ConnectionResetError, socket.timeout):
        got = b""
    assert got == b"", "a connection past the limit was served"
    extra.close()
    for s in held:
        s.close()
    time.sleep(0.3)
    assert raw(srv.url, LIST, {}).status == 200  # room again once the others left


def test_garbage_on_the_wire_leaves_the_server_healthy(signed_server):
    garbage = [
        b"\x00\xff\x10garbage\r\n\r\n",
        b"POST / HTTP/9.9\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZZ\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999999\r\n\r\n",
        b"POST / HTTP/1.1\r\nHost: x\r\nAuthorization: AWS4-\xff\xfe\r\nX-Amz-Target: "
        b"DynamoDB_20120810.ListTables\r\nContent-Length: 2\r\n\r\n{}",
        b"POST /?a=%zz&&=&b HTTP/1.1\r\nHost: x\r\nAuthorization: AWS4-HMAC-SHA256 Credential=k/"
        b"20200101/r/dynamodb/aws4_request, SignedHeaders=host, Signature=0\r\nX-Amz-Date: "
        b"20200101T000000Z\r\nX-Amz-Target: DynamoDB_20120810.ListTables\r\nContent-Type: "
        b"application/x-amz-json-1.0\r\nContent-Length: 2\r\n\r\n{}",
    ]
    for g in garbage:
        s = socket.create_connection(("127.0.0.1", signed_server.port), timeout=2)
        try:
            s.sendall(g)
            s.shutdown(socket.SHUT_WR)
            while s.recv(65536):
                pass
        except (ConnectionResetError, socket.timeout):
            pass
        s.close()
    from conftest import KEYS
    assert raw(signed_server.url, LIST, {}, key=KEYS["ci"][0], secret=KEYS["ci"][1]).status == 200


def _single_cpu_threads(pid):
    """The CPUs of the process's threads that may run on one CPU only."""
    cpus = []
    for tid in os.listdir("/proc/%d/task" % pid):
        with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
            allowed = [line.split(":", 1)[1].strip() for line in f if line.startswith("Cpus_allowed_list:")][0]
        if allowed.isdigit():
            cpus.append(int(allowed))
    return sorted(cpus)


def test_pinned_loops_run_one_per_cpu_and_serve(start):
    srv = start("--pin-loops", "--loops", "3")
    assert "3 event loops pinned to CPUs" in srv.banner
    allowed = sorted(os.sched_getaffinity(srv.proc.pid))
    # Connections opened from every CPU are served, whichever loop they land on; the loops
    # start as connections arrive on their CPUs.
    for cpu in allowed[:4]:
        code = ("import os, sys; sys.path.insert(0, %r); os.sched_setaffinity(0, {%d}); from conftest import raw; "
                "print(sum(raw(%r, %r, {}).status == 200 for _ in range(20)))"
                % (os.path.dirname(__file__), cpu, srv.url, LIST))
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             timeout=60)
        assert out.stdout.strip() == "20", out.stderr
    if len(allowed) > 1:  # on one CPU every thread is pinned anyway
        assert _single_cpu_threads(srv.proc.pid) == sorted(allowed[i % len(allowed)] for i in range(3))


def _threads(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def test_loops_start_when_connections_need_them(start):
    """One event loop runs at start; another starts when a connection comes while every
    running loop serves one, up to --loops; connections one after another keep to the
    first loop."""
    srv = start("--loops", "3")
    assert "3 event loops" in srv.banner
    idle = _threads(srv.proc.pid)
    fds = len(os.listdir("/proc/%d/fd" % srv.proc.pid))
    for _ in range(5):  # one at a time: the first loop serves each
        assert raw(srv.url, LIST, {}).status == 200
        deadline = time.monotonic() + 10  # until the server has closed its end
        while len(os.listdir("/proc/%d/fd" % srv.proc.pid)) > fds and time.monotonic() < deadline:
            time.sleep(0.005)
    assert _threads(srv.proc.pid) == idle
    conns = []
    for n in range(5):
        c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
        assert raw(srv.url, LIST, {}, conn=c).status == 200
        conns.append(c)
        assert _threads(srv.proc.pid) == idle + min(n, 2), "after %d open connections" % (n + 1)
    # Every connection, on whichever loop, goes on serving.
    for c in conns:
        assert raw(srv.url, LIST, {}, conn=c).status == 200
        c.close()
    assert raw(srv.url, LIST, {}).status == 200
    assert srv.stop() == 0


def test_loops_started_late_drain_cleanly(start):
    """Loops started by connections drain with the first on SIGTERM: their idle
    connections are closed and the server exits 0."""
    srv = start("--loops", "4")
    conns = [http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30) for _ in range(6)]
    for c in conns:
        assert raw(srv.url, LIST, {}, conn=c).status == 200
    srv.proc.send_signal(signal.SIGTERM)
    assert srv.proc.wait(timeout=30) == 0
    for c in conns:
        c.close()


def test_pinned_loops_keep_to_the_cpus_allowed(tmp_path):
    """Under taskset, the loops are pinned among the CPUs the process may use."""
    bin_ = os.environ["QUARRY_BIN"]
    cpu = sorted(os.sched_getaffinity(0))[-1]
    p = subprocess.Popen(["taskset", "-c", str(cpu), bin_, "serve", "--listen", "127.0.0.1:0", "--data",
                          str(tmp_path / "d"), "--pin-loops", "--loops", "2", "--log-level", "warn"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = p.stdout.readline()
        assert "2 event loops pinned to CPUs" in banner, p.stderr.read()
        url = banner.split("listening on ")[1].split(" ")[0]
        assert raw(url, LIST, {}).status == 200
        for tid in os.listdir("/proc/%d/task" % p.pid):
            assert os.sched_getaffinity(int(tid)) == {cpu}
    finally:
        p.send_signal(signal.SIGTERM)
        assert p.wait(timeout=30) == 0


def _fill_a_page(server):
    """A table of 300 items of 4 KB: a Scan of it fills DynamoDB's 1 MB page."""
    assert raw(server.url, "DynamoDB_20120810.CreateTable", {
        "TableName": "pages", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}).status == 200
    for b in range(12):
        puts = [{"PutRequest": {"Item": {"pk": {"S": "k%04d" % (b * 25 + i)},
                                         "v": {"S": chr(97 + i) * 4000}}}} for i in range(25)]
        r = raw(server.url, "DynamoDB_20120810.BatchWriteItem", {"RequestItems": {"pages": puts}})
        assert r.status == 200 and r.json()["UnprocessedItems"] == {}


def _request_bytes(port, method, target, body, extra=()):
    h = {"Content-Type": "application/x-amz-json-1.0"}
    if target:
        h["X-Amz-Target"] = target
        h = sign(h, body, "127.0.0.1:%d" % port, "local", "local",
                 datetime.datetime.now(datetime.timezone.utc))
    else:
        h["Host"] = "127.0.0.1:%d" % port
    lines = ["%s / HTTP/1.1" % method] + ["%s: %s" % kv for kv in h.items()] + list(extra)
    lines.append("Content-Length: %d" % len(body))
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def _read_reply(sock, slowly, head=False):
    """One HTTP/1.1 reply off sock: (status, headers, body), read in 16 KB steps with a
    pause between them when slowly."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, "connection closed mid-headers"
        data += chunk
    top, rest = data.split(b"\r\n\r\n", 1)
    lines = top.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (l.split(":", 1) for l in lines[1:])}
    want = 0 if head else int(headers["content-length"])
    body = rest
    while len(body) < want:
        if slowly:
            time.sleep(0.01)
        chunk = sock.recv(min(16384, want - len(body)))
        assert chunk, "connection closed mid-body"
        body += chunk
    assert len(body) == want
    return status, headers, body


def test_full_pages_read_slowly_arrive_whole_on_kept_connections(server):
    """Two clients read 1 MB Scan pages slowly at once, then the same pages gzip'd and a
    HEAD, each on its own kept connection: every byte arrives, checksummed."""
    _fill_a_page(server)
    scan = json.dumps({"TableName": "pages"}).encode()
    socks = []
    for _ in range(2):
        s = socket.socket()
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.settimeout(30)
        s.connect(("127.0.0.1", server.port))
        socks.append(s)
    for s in socks:
        s.sendall(_request_bytes(server.port, "POST", "DynamoDB_20120810.Scan", scan))
    plain = []
    for s in socks:
        status, headers, body = _read_reply(s, slowly=True)
        assert status == 200 and "content-encoding" not in headers
        assert int(headers["x-amz-crc32"]) == zlib.crc32(body)
        page = json.loads(body)
        assert 200 < page["Count"] < 300 and "LastEvaluatedKey" in page
        assert len(body) > 800_000
        plain.append(body)
    assert plain[0] == plain[1]
    for s in socks:
        s.sendall(_request_bytes(server.port, "POST", "DynamoDB_20120810.Scan", scan,
                                 ["Accept-Encoding: gzip"]))
    for s in socks:
        status, headers, body = _read_reply(s, slowly=True)
        assert status == 200 and headers["content-encoding"] == "gzip"
        assert int(headers["x-amz-crc32"]) == zlib.crc32(body)
        assert zlib.decompress(body, 16 + zlib.MAX_WBITS) == plain[0]
    for s in socks:
        s.sendall(_request_bytes(server.port, "HEAD", None, b""))
        status, headers, body = _read_reply(s, slowly=False, head=True)
        assert status == 200 and body == b""
        assert int(headers["content-length"]) == len(b"healthy: 127.0.0.1:%d\n" % server.port)
        s.sendall(_request_bytes(server.port, "POST", LIST, b"{}"))
        status, headers, body = _read_reply(s, slowly=False)
        assert status == 200 and json.loads(body) == {"TableNames": ["pages"]}
        s.close()
