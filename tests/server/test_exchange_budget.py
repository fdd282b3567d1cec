"""The exchange budget (server.h's SERVER_EXCHANGE_BUDGET, budget.h): the answers built
and not yet sent, with their calls' request bodies, hold at most about 16 MB together
whatever the number of connections; a call that would start past it waits for sends to
complete. Checked from outside: answers stay whole and correct under many connections of
full 1 MB pages, a client that stops reading holds only its own share (and loses it at
--timeout), one that goes away gives it back at once, and an answer larger than the whole
budget still goes out. GET /metrics reports what is held and how many calls wait."""
import datetime
import http.client
import json
import socket
import threading
import time
import urllib.parse
import zlib

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import REGION, boto3_client, raw, sign

BUDGET = 16 << 20
TABLE = "pages"
ITEMS = 60
# Five items make a Scan page of DynamoDB's 1 MB; of control characters, which JSON spells
# in six bytes each, its answer is 5-6 MB: more than the 4 MB a kernel's send buffer takes
# off the server (tcp_wmem), so that a client that reads nothing leaves most of it held.
ITEM_CHARS = 200 * 1024


def load_pages(url):
    c = boto3_client(url)
    c.create_table(TableName=TABLE, BillingMode="PAY_PER_REQUEST",
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                   KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    for i in range(ITEMS):
        c.put_item(TableName=TABLE, Item={"pk": {"S": "k%03d" % i},
                                          "data": {"S": chr(1 + i % 7) * ITEM_CHARS}})


def gauges(url):
    """GET /metrics' exchange gauges, signed by botocore: {name: value}."""
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


def request_bytes(url, operation, body):
    body = json.dumps(body).encode()
    host = urllib.parse.urlsplit(url).netloc
    h = sign({"Content-Type": "application/x-amz-json-1.0",
              "X-Amz-Target": "DynamoDB_20120810." + operation},
             body, host, "local", "local", datetime.datetime.now(datetime.timezone.utc))
    head = "POST / HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in h.items())
    return (head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body


def stalled_reader(url, operation, body):
    """A connection that sends one request and reads nothing: a small receive buffer, so
    that the kernel takes little of the answer off the server."""
    u = urllib.parse.urlsplit(url)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect((u.hostname, u.port))
    s.sendall(request_bytes(url, operation, body))
    return s


def read_answer(sock):
    """One whole answer from sock: (status, headers, body)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
    length = int(headers["content-length"])
    while len(rest) < length:
        chunk = sock.recv(1 << 20)
        assert chunk, "the server closed the connection mid-answer"
        rest += chunk
    return int(lines[0].split()[1]), headers, rest


def scan_page(url, conn=None):
    r = raw(url, "DynamoDB_20120810.Scan", {"TableName": TABLE}, conn=conn)
    assert r.status == 200, r.body[:300]
    assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body)
    return r


def wait_for(cond, seconds, what):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(0.05)
    raise AssertionError("not within %s s: %s" % (seconds, what))


def test_many_connections_of_full_pages_are_all_answered_whole(start):
    """32 connections, each scanning the same 5 MB page twice, ten budgets' worth at
    once: every answer is the page, whole, with its checksum; what was held never passed
    the budget by more than each loop's call under way; nothing is held or waits
    afterwards."""
    srv = start("--no-sync", "--loops", "2")
    load_pages(srv.url)
    first = scan_page(srv.url)
    want, page = first.body, len(first.body)
    assert page > 5 << 20 and 0 < first.json()["Count"] < ITEMS
    errors, peak = [], {"held": 0, "waiting": 0}
    done = threading.Event()

    def client():
        u = urllib.parse.urlsplit(srv.url)
        conn = http.client.HTTPConnection(u.hostname, u.port, timeout=120)
        try:
            for _ in range(2):
                if scan_page(srv.url, conn).body != want:
                    errors.append("a page differed")
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))
        finally:
            conn.close()

    def sampler():
        while not done.is_set():
            g = gauges(srv.url)
            peak["held"] = max(peak["held"], g["quarry_server_exchange_bytes"])
            peak["waiting"] = max(peak["waiting"], g["quarry_server_calls_waiting"])
            time.sleep(0.02)

    threads = [threading.Thread(target=client) for _ in range(32)]
    watcher = threading.Thread(target=sampler)
    watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    watcher.join()
    assert not errors, errors[:3]
    assert peak["waiting"] >= 1, peak  # the budget bound: calls waited their turn
    # Each loop admits a call while less than the budget is held, and charges its answer
    # before judging the next; the metrics answer itself is a few KB.
    assert peak["held"] <= BUDGET + 2 * (page + 64 * 1024), peak
    g = wait_for(lambda: (lambda g: g if g["quarry_server_exchange_bytes"] == 0 else None)(
        gauges(srv.url)), 10, "the budget back to nothing held")
    assert g["quarry_server_calls_waiting"] == 0
    assert g["quarry_server_exchange_budget_bytes"] == BUDGET


def test_stalled_readers_hold_only_their_share_and_vanished_ones_give_it_back(start):
    srv = start("--no-sync", "--timeout", "60")
    load_pages(srv.url)
    page = len(scan_page(srv.url).body)
    held = lambda: gauges(srv.url)["quarry_server_exchange_bytes"]  # noqa: E731

    # Clients that read nothing hold a page each, under the budget: the others are
    # answered at once.
    under = BUDGET // page
    assert under >= 2
    stalled = [stalled_reader(srv.url, "Scan", {"TableName": TABLE}) for _ in range(under)]
    wait_for(lambda: held() >= under * page, 10, "the stalled pages held")
    t0 = time.monotonic()
    scan_page(srv.url)
    raw(srv.url, "DynamoDB_20120810.GetItem", {"TableName": TABLE, "Key": {"pk": {"S": "k001"}}})
    assert time.monotonic() - t0 < 5

    # One more passes the whole budget (it started while less was held): a further call
    # waits...
    stalled.append(stalled_reader(srv.url, "Scan", {"TableName": TABLE}))
    wait_for(lambda: held() >= BUDGET, 10, "the budget held by stalled readers")
    result = {}

    def late_scan():
        result["page"] = scan_page(srv.url).json()
        result["at"] = time.monotonic()

    waiter = threading.Thread(target=late_scan)
    waiter.start()
    wait_for(lambda: gauges(srv.url)["quarry_server_calls_waiting"] >= 1, 10, "a call waiting")
    time.sleep(0.5)
    assert "page" not in result

    # ...until the stalled clients go away, having read a little of their answers: the
    # resets release their shares, and the waiting call is answered long before the
    # server's 60 s timeout would have cut them.
    gone = time.monotonic()
    for s in stalled:
        s.recv(1000)
        s.close()
    waiter.join(20)
    assert "page" in result and result["at"] - gone < 10
    assert result["page"]["Count"] > 0
    wait_for(lambda: held() == 0, 10, "nothing held once the clients are gone")


def test_a_stalled_reader_is_cut_at_the_timeout(start):
    srv = start("--no-sync", "--timeout", "2")
    load_pages(srv.url)
    page = len(scan_page(srv.url).body)
    stalled = [stalled_reader(srv.url, "Scan", {"TableName": TABLE})
               for _ in range(BUDGET // page + 1)]
    wait_for(lambda: gauges(srv.url)["quarry_server_exchange_bytes"] >= BUDGET, 10,
             "the budget held by stalled readers")
    t0 = time.monotonic()
    # Waits for the budget, then is answered once the server has cut the stalled ones.
    scan_page(srv.url)
    assert time.monotonic() - t0 < 15
    wait_for(lambda: gauges(srv.url)["quarry_server_exchange_bytes"] == 0, 10,
             "nothing held once the stalled readers were cut")
    for s in stalled:
        s.settimeout(10)
        # What the kernel held of the answer, then the end of the stream (or a reset).
        try:
            while s.recv(1 << 20):
                pass
        except ConnectionResetError:
            pass
        s.close()
    assert "error=SendTimeout" in srv.log()


def test_an_answer_larger_than_the_budget_goes_out_alone(start):
    """Items of 390 000 control characters: a BatchGetItem of eight answers some 18 MB of
    JSON, more than the whole budget. Two such calls at once and page
    scans beside them are all answered whole."""
    srv = start("--no-sync")
    load_pages(srv.url)
    c = boto3_client(srv.url)
    big = "\x01" * 390000
    for i in range(8):
        c.put_item(TableName=TABLE, Item={"pk": {"S": "big%d" % i}, "data": {"S": big}})
    keys = [{"pk": {"S": "big%d" % i}} for i in range(8)]
    answers, errors = [], []

    def batch():
        try:
            r = raw(srv.url, "DynamoDB_20120810.BatchGetItem",
                    {"RequestItems": {TABLE: {"Keys": keys}}})
            assert r.status == 200, r.body[:300]
            assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body)
            answers.append(len(r.body))
            got = r.json()
            assert len(got["Responses"][TABLE]) + len(
                got.get("UnprocessedKeys", {}).get(TABLE, {}).get("Keys", [])) == 8
            assert all(it["data"]["S"] == big for it in got["Responses"][TABLE])
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    def scans():
        try:
            for _ in range(3):
                scan_page(srv.url)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(repr(e))

    threads = [threading.Thread(target=f) for f in (batch, batch, scans, scans)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    assert len(answers) == 2 and min(answers) > BUDGET


def test_a_slow_reader_that_reads_on_is_not_cut(start):
    """--timeout 2 cuts a client that takes nothing for 2 s, not one that takes its 5-6 MB
    answer slowly (in some 9 s) but steadily: the timeout is of progress, not of the whole
    answer."""
    srv = start("--no-sync", "--timeout", "2")
    load_pages(srv.url)
    want = scan_page(srv.url).body
    u = urllib.parse.urlsplit(srv.url)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 64 << 10)
    s.settimeout(30)
    s.connect((u.hostname, u.port))
    # Uncompressed: the answer as large as it was built.
    s.sendall(request_bytes(srv.url, "Scan", {"TableName": TABLE}))
    t0 = time.monotonic()
    data = b""
    while True:
        chunk = s.recv(32 << 10)
        assert chunk, "the server closed the connection after %d bytes" % len(data)
        data += chunk
        head, sep, body = data.partition(b"\r\n\r\n")
        if sep and len(body) >= len(want):
            break
        time.sleep(0.05)
    s.close()
    assert body == want
    assert time.monotonic() - t0 > 4
    assert "error=SendTimeout" not in srv.log()
