"""CQL answers inside the server's exchange budget (budget.h, 16 MB, shared with HTTP's):
many connections reading 5 MB pages at once stay within it and are all answered whole, a
request that would start past it waits (its connection read no further) until writes
complete, an answer larger than the whole budget still goes out, a connection that goes
away gives back what it held and drops what waited, a client that reads nothing is cut
after --timeout while a slow one that keeps reading is not, and SIGTERM drains with
requests waiting. Checked from outside, over raw sockets (cql_raw) and the Python driver,
with GET /metrics' gauges and the server's RSS."""
import os
import signal
import socket
import struct
import threading
import time

from cassandra.cluster import Cluster
from cassandra.protocol import QueryMessage
from cassandra.query import ConsistencyLevel

from cql_raw import Raw, cql_port
from test_exchange_budget import BUDGET, gauges, wait_for

ROW = 100 * 1024
# 50 rows of 100 KB: a page of some 5 MB, more than the kernel's send buffer takes off the
# server for a client that reads nothing.
ROWS = 50
PAGE_QUERY = "SELECT * FROM k.t WHERE pk = 0"
RESULT = 0x08


def load(srv, rows=ROWS, pk=0):
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=4)
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS k WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE IF NOT EXISTS k.t (pk int, ck int, v blob, "
                  "PRIMARY KEY (pk, ck))")
        ins = s.prepare("INSERT INTO k.t (pk, ck, v) VALUES (?, ?, ?)")
        for i in range(rows):
            s.execute(ins, (pk, i, bytes([i % 251]) * ROW))
    finally:
        cluster.shutdown()


def connect(srv, rcvbuf=None):
    """A raw v4 connection past STARTUP (READY read); rcvbuf, its receive buffer, set
    before it connects (as the window is agreed), so that the kernel takes little of an
    answer for a client that reads nothing."""
    if rcvbuf is None:
        r = Raw(cql_port(srv), version=4, timeout=60)
    else:
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
        sock.settimeout(60)
        sock.connect(("127.0.0.1", cql_port(srv)))
        r = Raw.__new__(Raw)
        r.sock, r.version, r.lz4, r.framed, r.codec, r.wire, r.payload = (
            sock, 4, False, False, None, b"", b"")
    env, _ = r.startup()
    assert env.opcode == 0x02, env.opcode  # READY
    assert r.wire == b""
    return r


def ask(r, query=PAGE_QUERY, stream=1):
    r.send(QueryMessage(query, ConsistencyLevel.ONE), stream=stream)


def read_envelope(sock, chunk=1 << 20, pause=0.0):
    """(stream, opcode, body) of the next envelope, read into one buffer (chunk bytes a
    recv, pausing pause seconds between them)."""
    def exactly(n):
        out = bytearray(n)
        view, got = memoryview(out), 0
        while got < n:
            k = sock.recv_into(view[got:], min(chunk, n - got))
            if k == 0:
                raise EOFError("the server closed the connection")
            got += k
            if pause:
                time.sleep(pause)
        return out
    _, _, stream, opcode, length = struct.unpack(">BBhBi", exactly(9))
    return stream, opcode, exactly(length)


def drain(r):
    """What the server still sends on r until it closes it (None if it does not within
    10 s)."""
    r.sock.settimeout(10)
    got = bytearray(r.wire)
    try:
        while True:
            chunk = r.sock.recv(1 << 20)
            if not chunk:
                break
            got += chunk
    except socket.timeout:
        return None
    except ConnectionResetError:
        pass
    r.close()
    return got


def page(srv):
    r = connect(srv)
    try:
        ask(r)
        stream, opcode, body = read_envelope(r.sock)
        assert (stream, opcode) == (1, RESULT), bytes(body[:200])
        return bytes(body)
    finally:
        r.close()


def rss_kb(srv, field="VmRSS"):
    with open("/proc/%d/status" % srv.proc.pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise AssertionError("no " + field)


def sanitized(srv):
    """Whether the server runs with a sanitizer's runtime, whose quarantine of freed memory
    and shadow pages make its RSS no measure of what it holds."""
    with open("/proc/%d/maps" % srv.proc.pid) as f:
        maps = f.read()
    return "libasan" in maps or "libtsan" in maps


def run_clients(srv, n, rounds, want, sample=None):
    """n raw connections, each asking for the page rounds times in a row; returns the
    errors. sample, if given, is called every 20 ms until they are done."""
    errors, done = [], threading.Event()

    def client():
        try:
            r = connect(srv)
            for i in range(rounds):
                ask(r, stream=i + 1)
                stream, opcode, body = read_envelope(r.sock)
                if (stream, opcode) != (i + 1, RESULT) or body != want:
                    errors.append("stream %d: opcode %#x, %d bytes" % (stream, opcode, len(body)))
            r.close()
        except Exception as e:  # noqa: BLE001 (reported by the caller)
            errors.append(repr(e))

    def sampler():
        while not done.is_set():
            sample()
            time.sleep(0.02)

    threads = [threading.Thread(target=client) for _ in range(n)]
    watcher = threading.Thread(target=sampler) if sample else None
    if watcher:
        watcher.start()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    done.set()
    if watcher:
        watcher.join()
    assert not any(t.is_alive() for t in threads), "clients still waiting after 120 s"
    return errors


def settled(srv):
    """Waits until nothing is held and nothing waits; returns the gauges."""
    return wait_for(lambda: (lambda g: g if g["quarry_server_exchange_bytes"] == 0
                             and g["quarry_server_calls_waiting"] == 0 else None)(gauges(srv.url)),
                    10, "the budget back to nothing held or waiting")


def test_many_connections_of_full_pages_stay_within_the_budget(start):
    """32 connections, each reading the 5 MB page twice: ten budgets' worth at once. Every
    answer is the page, whole; calls waited; what was held never passed the budget by more
    than a page per loop (a request starts while less than the budget is held, and its
    answer is charged before its loop judges the next; the two loops judge at once); the
    RSS grew by far less than 32 pages."""
    srv = start("--no-sync", "--capacity", "off", "--loops", "2", "--cql", "127.0.0.1:0")
    load(srv)
    want = page(srv)
    assert len(want) > 5000000
    rss_before = rss_kb(srv)
    peak = {"held": 0, "waiting": 0, "rss": 0}

    def sample():
        g = gauges(srv.url)
        peak["held"] = max(peak["held"], g["quarry_server_exchange_bytes"])
        peak["waiting"] = max(peak["waiting"], g["quarry_server_calls_waiting"])
        peak["rss"] = max(peak["rss"], rss_kb(srv))

    errors = run_clients(srv, 32, 2, want, sample)
    assert not errors, errors[:3]
    assert peak["waiting"] >= 1, peak
    assert peak["held"] <= BUDGET + 2 * (len(want) + (64 << 10)), peak
    # Loosely: the budget, a page being built beside it on each of the two loops (the
    # engine's answer and its envelope), and allocator slack; 32 pages would be 160 MB.
    if not sanitized(srv):
        assert (peak["rss"] - rss_before) * 1024 < BUDGET + 6 * len(want) + (32 << 20), (
            peak, rss_before)
    g = settled(srv)
    assert g["quarry_server_exchange_budget_bytes"] == BUDGET


def test_the_hang_of_many_waiters_on_one_loop_does_not_come_back(start):
    """The run that once hung (each loop admitting and requeueing its waiters for ever):
    20 rounds of 32 fresh connections reading the page, then SIGTERM, which must drain."""
    srv = start("--no-sync", "--capacity", "off", "--loops", "2", "--cql", "127.0.0.1:0")
    load(srv)
    want = page(srv)
    waited = 0

    def sample():
        nonlocal waited
        waited = max(waited, gauges(srv.url)["quarry_server_calls_waiting"])

    for i in range(int(os.environ.get("QUARRY_CQL_BUDGET_ROUNDS", "20"))):
        errors = run_clients(srv, 32, 1, want, sample)
        assert not errors, (i, errors[:3])
    assert waited >= 2, waited
    settled(srv)
    t0 = time.monotonic()
    assert srv.stop() == 0
    assert time.monotonic() - t0 < 10


def test_an_answer_larger_than_the_budget_goes_out(start):
    """A page of 200 rows of 100 KB (some 20 MB) beside two clients of the 5 MB page."""
    srv = start("--no-sync", "--capacity", "off", "--cql", "127.0.0.1:0")
    load(srv)
    load(srv, rows=200, pk=1)
    want = page(srv)
    big = {}

    def big_page():
        r = connect(srv)
        ask(r, "SELECT * FROM k.t WHERE pk = 1")
        big["answer"] = read_envelope(r.sock)
        r.close()

    t = threading.Thread(target=big_page)
    t.start()
    errors = run_clients(srv, 2, 3, want)
    t.join(60)
    assert not errors, errors
    stream, opcode, body = big["answer"]
    assert (stream, opcode) == (1, RESULT) and len(body) > BUDGET, len(body)
    for i in range(200):  # each row's cells, in order
        assert bytes([i % 251]) * 64 in body
    settled(srv)


def test_stalled_clients_hold_their_share_and_give_it_back_when_they_go(start):
    """Clients that read nothing hold the budget; a further request waits (its connection
    is not read) and is answered once they go; one that goes while its request waits
    drops it; HTTP calls wait for the same budget."""
    srv = start("--no-sync", "--capacity", "off", "--timeout", "60", "--cql", "127.0.0.1:0")
    load(srv)
    want = page(srv)
    held = lambda: gauges(srv.url)["quarry_server_exchange_bytes"]  # noqa: E731
    waiting = lambda: gauges(srv.url)["quarry_server_calls_waiting"]  # noqa: E731
    stalled = []
    for _ in range(BUDGET // len(want) + 1):
        r = connect(srv, rcvbuf=4096)
        ask(r)
        stalled.append(r)
    wait_for(lambda: held() >= BUDGET, 10, "the budget held by stalled readers")

    # A request that waits, from a client that goes away: nothing waits afterwards.
    gone = connect(srv)
    ask(gone)
    wait_for(lambda: waiting() >= 1, 10, "a request waiting")
    gone.close()
    wait_for(lambda: waiting() == 0, 10, "the gone client's request dropped")

    # One that waits until the stalled clients go.
    result = {}

    def late():
        result["page"] = page(srv)
        result["at"] = time.monotonic()

    waiter = threading.Thread(target=late)
    waiter.start()
    wait_for(lambda: waiting() >= 1, 10, "a request waiting")
    time.sleep(0.5)
    assert "page" not in result
    t0 = time.monotonic()
    for r in stalled:
        r.close()
    waiter.join(20)
    assert result.get("page") == want and result["at"] - t0 < 10
    settled(srv)


def test_a_client_that_reads_nothing_is_cut_at_the_timeout(start):
    """--timeout 2: a client that reads nothing of its page is cut once 2 s pass without
    progress, and gives back what it held; a driver session is served meanwhile; a client
    that reads its page slowly (in 8 s) but steadily is not cut."""
    srv = start("--no-sync", "--capacity", "off", "--timeout", "2", "--cql", "127.0.0.1:0")
    load(srv)
    want = page(srv)
    stalled = connect(srv, rcvbuf=4096)
    ask(stalled)
    wait_for(lambda: gauges(srv.url)["quarry_server_exchange_bytes"] > 0, 10, "the page held")

    slow = {}

    def slow_reader():
        r = connect(srv, rcvbuf=64 << 10)
        ask(r)
        t0 = time.monotonic()
        try:
            slow["answer"] = read_envelope(r.sock, chunk=64 << 10, pause=0.1)
        except Exception as e:  # noqa: BLE001 (checked below)
            slow["error"] = repr(e)
        slow["seconds"] = time.monotonic() - t0
        r.close()

    reader = threading.Thread(target=slow_reader)
    reader.start()
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=4)
    try:
        s = cluster.connect()
        t0 = time.monotonic()
        rows = list(s.execute("SELECT ck FROM k.t WHERE pk = 0"))
        assert len(rows) == ROWS and time.monotonic() - t0 < 2
    finally:
        cluster.shutdown()
    wait_for(lambda: "error=WriteTimeout" in srv.log(), 10, "the stalled client cut")
    with_eof = drain(stalled)
    assert with_eof is not None and len(with_eof) < len(want) + 9, "not cut"
    reader.join(60)
    assert "error" not in slow, slow
    assert slow["answer"][2] == want and slow["seconds"] > 4, slow["seconds"]
    settled(srv)
    log = srv.log()
    assert log.count("error=WriteTimeout") == 1, log[-2000:]


def test_sigterm_drains_with_requests_waiting(start):
    """The budget held by clients that read slowly and requests waiting behind them:
    SIGTERM drops the waiting requests (their connections close), lets the answers being
    written finish, and the server exits 0."""
    srv = start("--no-sync", "--capacity", "off", "--timeout", "60", "--cql", "127.0.0.1:0")
    load(srv)
    want = page(srv)
    holders = []
    for _ in range(BUDGET // len(want) + 1):
        r = connect(srv, rcvbuf=4096)
        ask(r)
        holders.append(r)
    wait_for(lambda: gauges(srv.url)["quarry_server_exchange_bytes"] >= BUDGET, 10,
             "the budget held")
    waiters = []
    for _ in range(4):
        r = connect(srv)
        ask(r)
        waiters.append(r)
    wait_for(lambda: gauges(srv.url)["quarry_server_calls_waiting"] >= 4, 10, "requests waiting")
    srv.proc.send_signal(signal.SIGTERM)
    for r in waiters:
        assert r.closed(timeout=10), "a waiting request's connection was not closed"
        r.close()
    answers = []
    for r in holders:
        answers.append(read_envelope(r.sock)[2])
        r.close()
    assert all(a == want for a in answers)
    srv.proc.wait(15)
    assert srv.proc.returncode == 0
    assert "finishing" in srv.log()
