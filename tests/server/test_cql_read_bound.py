"""CQL request envelopes inside the server-wide bound on requests' bytes being read
(server.h's SERVER_BODY_BOUND, bodybound.h, shared with HTTP's bodies): 16 connections
each sending a 12 MB QUERY slowly enough to overlap are all answered and their rows
written, while the bytes held for envelopes not yet handled (GET /metrics'
quarry_server_request_peak_bytes) stay near the bound, the server's RSS grows by far
less than the 192 MB they add up to (within the 64 MB over --cache-size that `quarry serve
--help` states), and a small query on another connection is answered
while they wait. Checked from outside, over raw sockets (cql_raw)."""
import io
import threading
import time

import pytest
from cassandra.cluster import Cluster
from cassandra.protocol import QueryMessage
from cassandra.query import ConsistencyLevel

from cql_raw import Raw, cql_port
from test_body_bound import BOUND, Sampler, gauges
from test_cql_budget import sanitized

BIG = 12 << 20
MAX_FRAME = 16 << 20  # --cql-max-frame's default
N = 16
CHUNK = 256 << 10
RESULT = 0x08


def make_table(srv):
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=4)
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS rb WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE IF NOT EXISTS rb.t (pk int PRIMARY KEY, v int)")
    finally:
        cluster.shutdown()


def big_insert(i, size=BIG):
    """An INSERT of row i padded with whitespace inside its VALUES to about size bytes: a
    large envelope whose row is small (an item's 400 KB limit does not apply to it)."""
    head, tail = "INSERT INTO rb.t (pk, v) VALUES (%d," % i, " %d)" % (i * 7)
    return head + " " * (size - len(head) - len(tail)) + tail


def connect(srv, version=4):
    r = Raw(cql_port(srv), version=version, timeout=120)
    env, _ = r.startup()
    assert env.opcode == 0x02, env.opcode  # READY
    return r


def send_slowly(srv, i, out, version=4):
    """Sends row i's big INSERT in CHUNK pieces, 20 ms apart, then reads its answer; from
    v5 the envelope goes as a run of segments, which the server gathers outside its input
    buffer."""
    try:
        r = connect(srv, version)
        data = r.encode(QueryMessage(big_insert(i), ConsistencyLevel.ONE), stream=1)
        assert len(data) < MAX_FRAME
        if r.framed:
            segments = io.BytesIO()
            r.codec.encode(segments, data)
            data = segments.getvalue()
        for pos in range(0, len(data), CHUNK):
            r.sock.sendall(data[pos:pos + CHUNK])
            time.sleep(0.02)
        env, msg = r.recv()
        out[i] = (env.stream, env.opcode, repr(msg)[:200])
        r.close()
    except Exception as e:  # noqa: BLE001 (reported by the test)
        out[i] = repr(e)


def small_query(srv):
    """Milliseconds a small SELECT on a fresh connection takes to be answered."""
    t0 = time.monotonic()
    r = connect(srv)
    try:
        r.send(QueryMessage("SELECT v FROM rb.t WHERE pk = 999", ConsistencyLevel.ONE),
               stream=3)
        env, msg = r.recv()
        assert (env.stream, env.opcode) == (3, RESULT), msg
    finally:
        r.close()
    return (time.monotonic() - t0) * 1000


@pytest.mark.parametrize("version", [4, 5])
def test_many_big_envelopes_stay_within_the_bound(start, version):
    srv = start("--no-sync", "--capacity", "off", "--loops", "2", "--cql", "127.0.0.1:0")
    make_table(srv)
    # The server's own warm-up (a first big envelope grows its allocator's arenas) is not
    # the bound's: one is sent alone before the baseline is read.
    out = {}
    send_slowly(srv, 999, out, version)
    assert out[999][:2] == (1, RESULT), out[999]
    sampler = Sampler(srv.proc.pid)
    base = sampler.rss()
    out = {}
    threads = [threading.Thread(target=send_slowly, args=(srv, i, out, version)) for i in range(N)]
    for t in threads:
        t.start()
    paused_seen, small_ms = 0, []
    deadline = time.monotonic() + 180
    while any(t.is_alive() for t in threads) and time.monotonic() < deadline:
        g = gauges(srv.url)
        paused_seen = max(paused_seen, g["quarry_server_reads_paused"])
        if g["quarry_server_reads_paused"]:
            small_ms.append(small_query(srv))
        time.sleep(0.05)
    for t in threads:
        t.join(timeout=max(1, deadline - time.monotonic()))
    peak_rss = sampler.stop()
    for i in range(N):
        assert isinstance(out.get(i), tuple), "connection %d: %r" % (i, out.get(i))
        assert out[i][:2] == (1, RESULT), (i, out[i])
    cluster = Cluster(["127.0.0.1"], port=cql_port(srv), protocol_version=4)
    try:
        rows = {r.pk: r.v for r in cluster.connect().execute("SELECT pk, v FROM rb.t")}
    finally:
        cluster.shutdown()
    assert {i: rows.get(i) for i in range(N)} == {i: i * 7 for i in range(N)}
    g = gauges(srv.url)
    assert paused_seen > 0, "no connection was ever paused"
    assert small_ms and max(small_ms) < 3000, small_ms
    # What the input buffers held: the bound, one envelope let through past it (at most a
    # frame), and for each connection a first read (about 1 MB at most), with room to spare.
    peak = g["quarry_server_request_peak_bytes"]
    assert peak <= BOUND + MAX_FRAME + N * (1 << 20) + (8 << 20), g
    assert g["quarry_server_request_bytes"] < BIG, g
    assert g["quarry_server_reads_paused"] == 0, g
    # Without the bound, 16 envelopes of 12 MB were held at once: the RSS grew by 263 MB.
    # With it, by 30 MB (v4) and 50-54 MB (v5): the envelopes held (29-31 MB), and for v5
    # each segment copied into its envelope's buffer and the pages jemalloc keeps of
    # those freed (bench/README.md, "CQL request envelopes without needless copies").
    grown_mb = (peak_rss - base) / 1024
    print("RSS %d kB -> peak %d kB (+%.0f MB); envelopes held at most %d bytes; %d paused "
          "at most; small queries %.0f ms at most" % (base, peak_rss, grown_mb, peak,
                                                       paused_seen, max(small_ms)))
    assert sanitized(srv) or grown_mb < 64, "RSS grew by %.0f MB (from %d kB to %d kB)" % (
        grown_mb, base, peak_rss)
