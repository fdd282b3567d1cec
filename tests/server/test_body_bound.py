"""The bound on request bytes being read (server.h's SERVER_BODY_BOUND, bodybound.h): the
connections' input buffers hold about 16 MB of requests together whatever the number of
connections sending large bodies; past it, connections whose bodies are still arriving are
read no further until bytes are freed. Checked from outside: many connections sending
12 MB bodies at once, fast or slowly, are all answered correctly while the server's RSS
and its /metrics gauges stay near the bound; small requests on other connections are
served while the big ones wait; and bodies larger than the bound still complete."""
import datetime
import http.client
import json
import socket
import threading
import time
import urllib.parse

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import REGION, boto3_client, raw, sign

BOUND = 16 << 20
MAX_BODY = 16 << 20
BIG = 12 << 20
TABLE = "bodies"


def gauges(url):
    """GET /metrics' server gauges, signed by botocore: {name: value}."""
    req = AWSRequest(method="GET", url=url + "/metrics")
    SigV4Auth(Credentials("local", "local"), "dynamodb", REGION).add_auth(req)
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    try:
        conn.request("GET", "/metrics", headers=dict(req.headers.items()))
        resp = conn.getresponse()
        text = resp.read().decode()
        assert resp.status == 200, text
    finally:
        conn.close()
    out = {}
    for line in text.splitlines():
        if line.startswith("quarry_server_"):
            name, value = line.split()
            out[name] = int(value)
    return out


def put_body(i, size):
    """A PutItem of item i, padded with JSON whitespace to size bytes."""
    head = '{"TableName": "%s",' % TABLE
    tail = '"Item": {"pk": {"S": "k%03d"}, "n": {"N": "%d"}}}' % (i, i)
    return (head + " " * (size - len(head) - len(tail)) + tail).encode()


def request_bytes(url, operation, body):
    host = urllib.parse.urlsplit(url).netloc
    h = sign({"Content-Type": "application/x-amz-json-1.0",
              "X-Amz-Target": "DynamoDB_20120810." + operation},
             body, host, "local", "local", datetime.datetime.now(datetime.timezone.utc))
    head = "POST / HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in h.items())
    return (head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body


def read_reply(s):
    """One HTTP/1.1 reply with a Content-Length: (status, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        assert chunk, "connection closed before an answer: %r" % data[:200]
        data += chunk
    head, rest = data.split(b"\r\n\r\n", 1)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    length = next(int(v.split(":", 1)[1]) for v in lines[1:]
                  if v.lower().startswith("content-length:"))
    while len(rest) < length:
        chunk = s.recv(65536)
        assert chunk, "connection closed inside an answer"
        rest += chunk
    return status, rest[:length]


def send_and_answer(url, data, slow, out, key):
    """Sends data on a fresh connection (in 256 KB pieces with pauses when slow) and
    records the answer in out[key]."""
    u = urllib.parse.urlsplit(url)
    s = socket.create_connection((u.hostname, u.port), timeout=120)
    try:
        if slow:
            for at in range(0, len(data), 256 << 10):
                s.sendall(data[at:at + (256 << 10)])
                time.sleep(0.01)
        else:
            s.sendall(data)
        out[key] = read_reply(s)
    except Exception as e:  # recorded for the test to report
        out[key] = e
    finally:
        s.close()


class Sampler:
    """Reads the server's VmRSS (kB) every 20 ms until stopped; keeps the most seen."""

    def __init__(self, pid):
        self.pid = pid
        self.peak = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run)
        self.thread.start()

    def rss(self):
        with open("/proc/%d/status" % self.pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def run(self):
        while not self.done.is_set():
            self.peak = max(self.peak, self.rss())
            time.sleep(0.02)

    def stop(self):
        self.done.set()
        self.thread.join()
        return self.peak


def make_table(url):
    c = boto3_client(url)
    c.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                   KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    return c


def test_many_big_bodies_stay_within_the_bound(start):
    srv = start("--no-sync", "--capacity", "off")
    c = make_table(srv.url)
    n = 16
    data = [request_bytes(srv.url, "PutItem", put_body(i, BIG)) for i in range(n)]
    # The server's own warm-up (a first big body grows its allocator's arenas) is not the
    # bound's: one body is sent alone before the baseline is read.
    out = {}
    send_and_answer(srv.url, request_bytes(srv.url, "PutItem", put_body(99, BIG)), False,
                    out, 0)
    assert out[0][0] == 200, out[0]
    sampler = Sampler(srv.proc.pid)
    base = sampler.rss()
    out = {}
    threads = [threading.Thread(target=send_and_answer, args=(srv.url, data[i], i % 2, out, i))
               for i in range(n)]
    for t in threads:
        t.start()
    paused_seen = 0
    small_ms = []
    deadline = time.monotonic() + 120
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        g = gauges(srv.url)
        paused_seen = max(paused_seen, g["quarry_server_reads_paused"])
        if g["quarry_server_reads_paused"]:
            # A small request on another connection does not wait behind the paused ones.
            t0 = time.monotonic()
            r = raw(srv.url, "DynamoDB_20120810.GetItem",
                    {"TableName": TABLE, "Key": {"pk": {"S": "k099"}}})
            small_ms.append((time.monotonic() - t0) * 1000)
            assert r.status == 200, r.body
            assert r.json()["Item"]["n"] == {"N": "99"}
            # Nor does one whose head and body arrive apart (it holds less than 64 KB).
            split = request_bytes(srv.url, "GetItem", json.dumps(
                {"TableName": TABLE, "Key": {"pk": {"S": "k099"}}}).encode())
            t0 = time.monotonic()
            s = socket.create_connection((srv.url.split("//")[1].split(":")[0], srv.port),
                                         timeout=30)
            s.sendall(split[:-20])
            time.sleep(0.02)
            s.sendall(split[-20:])
            status, body = read_reply(s)
            s.close()
            small_ms.append((time.monotonic() - t0) * 1000)
            assert status == 200 and json.loads(body)["Item"]["n"] == {"N": "99"}, body
        time.sleep(0.05)
    for t in threads:
        t.join(timeout=max(1, deadline - time.monotonic()))
    peak_rss = sampler.stop()
    for i in range(n):
        assert isinstance(out.get(i), tuple), "connection %d: %r" % (i, out.get(i))
        assert out[i][0] == 200, (i, out[i])
    for i in range(n):
        item = c.get_item(TableName=TABLE, Key={"pk": {"S": "k%03d" % i}})["Item"]
        assert item["n"] == {"N": str(i)}
    g = gauges(srv.url)
    assert paused_seen > 0, "no connection was ever paused"
    assert small_ms, "no small request was sent while connections were paused"
    assert max(small_ms) < 3000, small_ms
    # What the input buffers held: the bound, one body let through past it, and for each
    # connection a first read (about 1 MB at most), with room to spare.
    assert g["quarry_server_request_peak_bytes"] <= BOUND + MAX_BODY + n * (1 << 20) + (
        8 << 20), g
    assert g["quarry_server_request_bytes"] < BIG, g
    assert g["quarry_server_reads_paused"] == 0, g
    assert g["quarry_server_request_bound_bytes"] == BOUND, g
    # Without the bound, 16 bodies of 12 MB held 192 MB at once. (AddressSanitizer keeps
    # freed memory in quarantine: its RSS says nothing of what the server holds.)
    grown_mb = (peak_rss - base) / 1024
    with open("/proc/%d/maps" % srv.proc.pid) as f:
        sanitized = "libasan" in f.read()
    print("RSS %d kB -> peak %d kB (+%.0f MB); bodies held at most %d bytes; %d paused at "
          "most; small requests %.0f ms at most" % (
              base, peak_rss, grown_mb, g["quarry_server_request_peak_bytes"], paused_seen,
              max(small_ms)))
    assert sanitized or grown_mb < 96, "RSS grew by %.0f MB (from %d kB to %d kB)" % (grown_mb, base, peak_rss)


def test_bodies_larger_than_the_bound_complete(start):
    srv = start("--no-sync", "--capacity", "off")
    c = make_table(srv.url)
    # Alone: its head and body pass the bound, and nothing else holds any.
    near = MAX_BODY - 4096
    out = {}
    send_and_answer(srv.url, request_bytes(srv.url, "PutItem", put_body(1, near)), False, out, 1)
    assert out[1][0] == 200, out[1]
    # Two at once, each nearly the bound: one is paused while the other completes.
    threads = [threading.Thread(target=send_and_answer,
                                args=(srv.url, request_bytes(srv.url, "PutItem",
                                                             put_body(i, near)), False, out, i))
               for i in (2, 3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    for i in (2, 3):
        assert isinstance(out.get(i), tuple), "connection %d: %r" % (i, out.get(i))
        assert out[i][0] == 200, (i, out[i])
        item = c.get_item(TableName=TABLE, Key={"pk": {"S": "k%03d" % i}})["Item"]
        assert item["n"] == {"N": str(i)}
    g = gauges(srv.url)
    assert g["quarry_server_request_bytes"] < (64 << 10), g
    assert g["quarry_server_reads_paused"] == 0, g


def test_a_paused_client_that_goes_away_frees_its_share(start):
    srv = start("--no-sync", "--capacity", "off")
    make_table(srv.url)
    u = urllib.parse.urlsplit(srv.url)
    socks, senders = [], []

    def send_part(s, data):
        try:
            s.sendall(data)
        except OSError:  # shut down below while the server is not reading it
            pass

    # Clients that send most of a body and stop: together past the bound. Those paused
    # block in sendall, on TCP's flow control.
    for i in range(4):
        s = socket.create_connection((u.hostname, u.port), timeout=30)
        data = request_bytes(srv.url, "PutItem", put_body(i, BIG))[:8 << 20]
        t = threading.Thread(target=send_part, args=(s, data))
        t.start()
        socks.append(s)
        senders.append(t)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        g = gauges(srv.url)
        if g["quarry_server_reads_paused"]:
            break
        time.sleep(0.05)
    assert g["quarry_server_reads_paused"] > 0, g
    for s in socks:
        s.shutdown(socket.SHUT_RDWR)
    for t in senders:
        t.join(timeout=30)
    for s in socks:
        s.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        g = gauges(srv.url)
        if g["quarry_server_request_bytes"] == 0 and g["quarry_server_reads_paused"] == 0:
            break
        time.sleep(0.05)
    assert g["quarry_server_request_bytes"] == 0, g
    assert g["quarry_server_reads_paused"] == 0, g
    r = raw(srv.url, "DynamoDB_20120810.PutItem",
            {"TableName": TABLE, "Item": {"pk": {"S": "after"}}})
    assert r.status == 200, r.body


def test_a_paused_request_is_cut_at_the_timeout_unanswered(start):
    """h2o's request timeout runs while a connection is paused: a client whose request has
    not arrived whole by --timeout sees its connection closed with no answer, and nothing
    of that request has run."""
    srv = start("--no-sync", "--capacity", "off", "--timeout", "2")
    c = make_table(srv.url)
    u = urllib.parse.urlsplit(srv.url)
    socks, senders, seen = [], [], {}

    def send_part(i, s, data):
        try:
            s.sendall(data)
        except OSError:
            pass
        try:
            seen[i] = s.recv(65536)
        except OSError as e:  # a reset: the server closed with bytes unread
            seen[i] = e

    # Two clients that send 10 of their 12 MB and stop: one is paused, the other reads on.
    for i in range(2):
        s = socket.create_connection((u.hostname, u.port), timeout=30)
        data = request_bytes(srv.url, "PutItem", put_body(i, BIG))[:10 << 20]
        t = threading.Thread(target=send_part, args=(i, s, data))
        t.start()
        socks.append(s)
        senders.append(t)
    paused = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 1.5 and not paused:
        paused = gauges(srv.url)["quarry_server_reads_paused"]
        time.sleep(0.05)
    assert paused == 1, paused
    for t in senders:
        t.join(timeout=30)
    took = time.monotonic() - t0
    for s in socks:
        s.close()
    for i in range(2):
        assert seen[i] == b"" or isinstance(seen[i], OSError), (i, seen[i][:200])
    assert took < 15, took
    assert "Item" not in c.get_item(TableName=TABLE, Key={"pk": {"S": "k000"}})
    assert "Item" not in c.get_item(TableName=TABLE, Key={"pk": {"S": "k001"}})
    g = gauges(srv.url)
    assert g["quarry_server_request_bytes"] == 0, g
    assert g["quarry_server_reads_paused"] == 0, g
