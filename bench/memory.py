#!/usr/bin/env python3
"""memory.py — a `quarry serve --cache-size` process's RSS under a heavy mixed load, read
from outside the process, against the budget (the issue's bound: RSS within --cache-size
plus a stated constant under any load).

Starts `quarry serve --no-sync --capacity off --cache-size BYTES` on a free loopback port,
loads N items of ~200 bytes (partitions of 100, as bench/scale's) unless --data names a
folder that holds them (bench/scale --keep leaves one: its table "big"), then runs wrk with
CONNS connections replaying a mix of pre-signed requests (by default 55% GetItem, 20%
PutItem over existing items, 5% DeleteItem, 18% Query(50), 2% Scan pages of 1000) and
samples VmRSS every 0.5 s (--mix page=N adds Scan pages of DynamoDB's full 1 MB; --mix
pages is page=100, many connections of nothing but full pages, the load that the server's
exchange budget bounds). With --cql, the load is instead CONNS raw CQL connections (native
protocol v4, `--cql` listener) each asking in a loop for a whole partition of 50 rows of
100 KB, a result page of some 5 MB: the same budget bounds what their answers hold. Not a
throughput benchmark: bench/http is that.

--bodies C instead sends large request bodies and loads nothing: C connections at once, each
a PutItem padded with JSON whitespace to --body-mb MB, --rounds times over, while VmRSS is
sampled every 20 ms (the load that the server's bound on request bytes being read bounds).

    bench/memory.py [--quarry build/quarry] [--items N] [--cache-size BYTES]
                    [--seconds S] [--conns C] [--mix get=55,put=20,...|pages] [--data DIR]
    bench/memory.py --bodies C [--body-mb MB] [--rounds R] [--quarry ...] [--cache-size ...]
    bench/memory.py --cql [--quarry build/quarry] [--cache-size BYTES] [--seconds S]
                    [--conns C]
"""
import argparse
import datetime
import http.client
import json
import os
import random
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "http"))
import gen  # noqa: E402  (SigV4 signing, the request file's Lua format)

PARTITION = 100
TABLE = "big"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def status_kb(pid, field):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def item(i, rnd):
    data = "".join(rnd.choice("abcdefghijklmnopqrstuvwxyz012345") for _ in range(96))
    data += ("the quick brown fox jumps over the lazy dog; pack my box with five dozen liquor "
             "jugs")[:80]
    return {"pk": {"S": "p%08d" % (i // PARTITION)}, "sk": {"S": "s%06d" % (i % PARTITION)},
            "data": {"S": data}}


def key(i):
    return {"pk": {"S": "p%08d" % (i // PARTITION)}, "sk": {"S": "s%06d" % (i % PARTITION)}}


class Client:
    def __init__(self, port):
        self.host = "127.0.0.1:%d" % port
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)

    def call(self, op, body):
        text = json.dumps(body, separators=(",", ":"))
        target = "DynamoDB_20120810." + op
        amz_date, auth = gen.sign(self.host, target, text,
                                  datetime.datetime.now(datetime.timezone.utc))
        self.conn.request("POST", "/", text, {
            "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target,
            "X-Amz-Date": amz_date, "Authorization": auth})
        r = self.conn.getresponse()
        doc = json.loads(r.read())
        if r.status != 200:
            raise SystemExit("%s failed: %s" % (op, doc))
        return doc


def load(port, n, threads=4):
    Client(port).call("CreateTable", {
        "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "sk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                      {"AttributeName": "sk", "KeyType": "RANGE"}]})

    def part(t):
        c, rnd = Client(port), random.Random(t)
        for start in range(t * 25, n, threads * 25):
            req = {TABLE: [{"PutRequest": {"Item": item(i, rnd)}}
                           for i in range(start, min(start + 25, n))]}
            while req:
                req = c.call("BatchWriteItem", {"RequestItems": req}).get("UnprocessedItems")

    ts = [threading.Thread(target=part, args=(t,)) for t in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()


MIX = "get=55,put=20,delete=5,query=18,scan=2"
# Named mixes: --mix NAME.
MIXES = {"pages": "page=100"}
# scan: a Scan page of 1000 items (~250 KB); page: a Scan page without a Limit (1 MB).
KINDS = ("get", "put", "delete", "query", "scan", "page")


def parse_mix(text):
    """"get=55,put=20,..." (or a name of MIXES) as a list of (kind, weight)."""
    text = MIXES.get(text, text)
    mix = []
    for part in text.split(","):
        kind, _, weight = part.partition("=")
        if kind not in KINDS or not weight.isdigit():
            raise SystemExit("--mix: %r is not KIND=WEIGHT (KIND: %s)" % (part, ", ".join(KINDS)))
        mix.append((kind, int(weight)))
    return mix


def mixed_requests(port, n, mix, count, out):
    """count signed requests of the mix over items 0..n-1, in gen.py's Lua format."""
    host = "127.0.0.1:%d" % port
    when = datetime.datetime.now(datetime.timezone.utc)
    rnd = random.Random(42)
    kinds = [k for k, _ in mix]
    weights = [w for _, w in mix]
    with open(out, "w") as f:
        f.write("return {\n")
        for _ in range(count):
            i, kind = rnd.randrange(n), rnd.choices(kinds, weights)[0]
            if kind == "get":
                op, body = "GetItem", {"TableName": TABLE, "Key": key(i)}
            elif kind == "put":
                op, body = "PutItem", {"TableName": TABLE, "Item": item(i, rnd)}
            elif kind == "delete":
                op, body = "DeleteItem", {"TableName": TABLE, "Key": key(i)}
            elif kind == "query":
                op, body = "Query", {"TableName": TABLE, "KeyConditionExpression": "pk = :p",
                                     "Limit": 50, "ScanIndexForward": rnd.random() < 0.5,
                                     "ExpressionAttributeValues": {
                                         ":p": {"S": "p%08d" % (i // PARTITION)}}}
            elif kind == "scan":
                op, body = "Scan", {"TableName": TABLE, "Limit": 1000,
                                    "ExclusiveStartKey": key(i)}
            else:
                op, body = "Scan", {"TableName": TABLE, "ExclusiveStartKey": key(i)}
            text = json.dumps(body, separators=(",", ":"))
            target = "DynamoDB_20120810." + op
            amz_date, auth = gen.sign(host, target, text, when)
            f.write("{target=%s,body=%s,date=%s,auth=%s},\n" % tuple(
                gen.lua_string(s) for s in (target, text, amz_date, auth)))
        f.write("}\n")


def body_request(port, i, size):
    """A signed PutItem of a small item, padded with JSON whitespace to size bytes."""
    head = '{"TableName":"%s",' % TABLE
    tail = '"Item":{"pk":{"S":"b%04d"},"sk":{"S":"s"}}}' % i
    text = head + " " * (size - len(head) - len(tail)) + tail
    target = "DynamoDB_20120810.PutItem"
    host = "127.0.0.1:%d" % port
    amz_date, auth = gen.sign(host, target, text, datetime.datetime.now(datetime.timezone.utc))
    return ("POST / HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-amz-json-1.0\r\n"
            "X-Amz-Target: %s\r\nX-Amz-Date: %s\r\nAuthorization: %s\r\n"
            "Content-Length: %d\r\n\r\n" % (host, target, amz_date, auth, len(text))
            ).encode() + text.encode()


def send_body(port, data, statuses, i):
    """Sends one request on a fresh connection and records its answer's status."""
    s = socket.create_connection(("127.0.0.1", port), timeout=300)
    try:
        s.sendall(data)
        reply = b""
        while b"\r\n" not in reply:
            chunk = s.recv(4096)
            if not chunk:
                break
            reply += chunk
        statuses[i] = int(reply.split()[1]) if reply else 0
    except OSError:
        statuses[i] = 0
    finally:
        s.close()


def big_bodies(args):
    """The --bodies mode: peak VmRSS while C connections send large bodies at once."""
    tmp = tempfile.mkdtemp(prefix="quarry-memory-")
    port = free_port()
    proc = subprocess.Popen([args.quarry, "serve", "--listen", "127.0.0.1:%d" % port, "--data",
                             os.path.join(tmp, "data"), "--no-sync", "--capacity", "off",
                             "--cache-size", str(args.cache_size), "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
    size = int(args.body_mb * 1048576)
    try:
        for _ in range(200):
            try:
                Client(port).call("ListTables", {})
                break
            except (OSError, http.client.HTTPException):
                time.sleep(0.05)
        Client(port).call("CreateTable", {
            "TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "sk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}]})
        rss_start = status_kb(proc.pid, "VmRSS")
        data = [body_request(port, i, size) for i in range(args.bodies)]
        peak, ok, took = 0, 0, 0.0
        for _ in range(args.rounds):
            statuses = [0] * args.bodies
            ts = [threading.Thread(target=send_body, args=(port, data[i], statuses, i))
                  for i in range(args.bodies)]
            t0 = time.time()
            for t in ts:
                t.start()
            while any(t.is_alive() for t in ts):
                peak = max(peak, status_kb(proc.pid, "VmRSS"))
                time.sleep(0.02)
            took += time.time() - t0
            ok += statuses.count(200)
        rss_end = status_kb(proc.pid, "VmRSS")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    mb = lambda kb: kb / 1024.0
    print("## bench/memory.py --bodies %d: quarry serve --cache-size %.0f MB, %d connections at "
          "once each sending a %.0f MB PutItem body, %d rounds" % (
              args.bodies, args.cache_size / 1048576.0, args.bodies, args.body_mb, args.rounds))
    print()
    print("| measure | MB |\n|---|---:|")
    print("| VmRSS after the start | %.1f |" % mb(rss_start))
    print("| VmRSS while the bodies arrive: peak | %.1f |" % mb(peak))
    print("| peak − start | %.1f |" % (mb(peak) - mb(rss_start)))
    print("| VmRSS at the end | %.1f |" % mb(rss_end))
    print()
    print("%d of %d requests answered 200, %.1f s in all" % (ok, args.bodies * args.rounds, took))


CQL_PARTITIONS = 4
CQL_ROWS = 50
CQL_ROW_BYTES = 100 * 1024


def cql_load(port):
    """CQL_PARTITIONS partitions of CQL_ROWS rows of CQL_ROW_BYTES, through the Python
    driver."""
    from cassandra.cluster import Cluster
    from cassandra.policies import RoundRobinPolicy
    cluster = Cluster(["127.0.0.1"], port=port, protocol_version=4,
                      load_balancing_policy=RoundRobinPolicy())
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS bench WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE IF NOT EXISTS bench.pages (pk int, ck int, v blob, "
                  "PRIMARY KEY (pk, ck))")
        ins = s.prepare("INSERT INTO bench.pages (pk, ck, v) VALUES (?, ?, ?)")
        for pk in range(CQL_PARTITIONS):
            for ck in range(CQL_ROWS):
                s.execute(ins, (pk, ck, bytes([ck]) * CQL_ROW_BYTES))
    finally:
        cluster.shutdown()


def cql_envelope(stream, opcode, body):
    return struct.pack(">BBhBi", 4, 0, stream, opcode, len(body)) + body


def cql_string(s, width=">H"):
    b = s.encode()
    return struct.pack(width, len(b)) + b


def cql_read(sock, n):
    out = bytearray(n)
    view, got = memoryview(out), 0
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            raise EOFError("the server closed the connection")
        got += k
    return out


def cql_pages(port, conns, seconds):
    """conns raw v4 connections asking for whole partitions until seconds pass: (answers,
    bytes, errors)."""
    stop = time.time() + seconds
    totals = {"answers": 0, "bytes": 0, "errors": 0}
    lock = threading.Lock()

    def client(n):
        try:
            s = socket.create_connection(("127.0.0.1", port), timeout=120)
            s.sendall(cql_envelope(0, 0x01, struct.pack(">H", 1) + cql_string("CQL_VERSION") +
                                   cql_string("3.0.0")))
            ready = cql_read(s, 9)  # READY, with no body
            cql_read(s, struct.unpack(">i", ready[5:9])[0])
            i = 0
            while time.time() < stop:
                q = "SELECT * FROM bench.pages WHERE pk = %d" % ((n + i) % CQL_PARTITIONS)
                s.sendall(cql_envelope(1, 0x07, cql_string(q, ">i") + struct.pack(">HB", 1, 0)))
                head = cql_read(s, 9)
                body = cql_read(s, struct.unpack(">i", head[5:9])[0])
                if head[4] != 0x08:
                    raise SystemExit("CQL error: %r" % bytes(body[:200]))
                with lock:
                    totals["answers"] += 1
                    totals["bytes"] += len(body)
                i += 1
            s.close()
        except (OSError, EOFError):
            with lock:
                totals["errors"] += 1

    ts = [threading.Thread(target=client, args=(n,)) for n in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return totals


def cql_main(args):
    tmp = tempfile.mkdtemp(prefix="quarry-memory-")
    port, cport = free_port(), free_port()
    proc = subprocess.Popen([args.quarry, "serve", "--listen", "127.0.0.1:%d" % port, "--data",
                             os.path.join(tmp, "data"), "--no-sync", "--capacity", "off",
                             "--cache-size", str(args.cache_size), "--log-level", "warn",
                             "--cql", "127.0.0.1:%d" % cport],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
    try:
        for _ in range(200):
            try:
                socket.create_connection(("127.0.0.1", cport), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        rss_start = status_kb(proc.pid, "VmRSS")
        cql_load(cport)
        rss_loaded = status_kb(proc.pid, "VmRSS")
        result = {}
        load = threading.Thread(target=lambda: result.update(
            cql_pages(cport, args.conns, args.seconds)))
        load.start()
        peak, samples = 0, []
        while load.is_alive():
            rss = status_kb(proc.pid, "VmRSS")
            samples.append(rss)
            peak = max(peak, rss)
            time.sleep(0.25)
        load.join()
        rss_end, hwm = status_kb(proc.pid, "VmRSS"), status_kb(proc.pid, "VmHWM")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    mb = lambda kb: kb / 1024.0  # noqa: E731
    budget = args.cache_size / 1048576.0
    print("## bench/memory.py --cql: quarry serve --cache-size %.0f MB, %d CQL connections of "
          "%d-row pages of %d KB rows, %.0f s" % (budget, args.conns, CQL_ROWS,
                                                  CQL_ROW_BYTES // 1024, args.seconds))
    print()
    print("| measure | MB |\n|---|---:|")
    print("| VmRSS after the start | %.1f |" % mb(rss_start))
    print("| VmRSS after the load | %.1f |" % mb(rss_loaded))
    print("| VmRSS during the pages: median of %d samples | %.1f |" % (
        len(samples), mb(sorted(samples)[len(samples) // 2]) if samples else 0))
    print("| VmRSS during the pages: peak (VmHWM %.1f) | %.1f |" % (mb(hwm), mb(peak)))
    print("| VmRSS at the end | %.1f |" % mb(rss_end))
    print("| peak − budget | %.1f |" % (mb(peak) - budget))
    print()
    print("pages: %d answers, %.0f MB, %.1f answers/s; %d connections failed" % (
        result["answers"], result["bytes"] / 1048576.0, result["answers"] / args.seconds,
        result["errors"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quarry", default=os.path.join(HERE, "..", "build", "quarry"))
    ap.add_argument("--items", type=int, default=1000000)
    ap.add_argument("--cache-size", type=int, default=64 << 20)
    ap.add_argument("--seconds", type=float, default=300)
    ap.add_argument("--conns", type=int, default=64)
    ap.add_argument("--mix", default=MIX, help="weights of the requests (default %s), or one "
                    "of %s" % (MIX, ", ".join(MIXES)))
    ap.add_argument("--data", help="a folder holding table big (used as it is, and changed)")
    ap.add_argument("--bodies", type=int, help="send large bodies on this many connections "
                    "at once instead of the mixed load")
    ap.add_argument("--body-mb", type=float, default=12)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cql", action="store_true", help="CONNS CQL connections of 5 MB pages "
                    "instead of the HTTP mix")
    args = ap.parse_args()
    if args.bodies:
        big_bodies(args)
        return
    if args.cql:
        cql_main(args)
        return
    mix = parse_mix(args.mix)
    tmp = tempfile.mkdtemp(prefix="quarry-memory-")
    data = args.data or os.path.join(tmp, "data")
    port = free_port()
    proc = subprocess.Popen([args.quarry, "serve", "--listen", "127.0.0.1:%d" % port, "--data",
                             data, "--no-sync", "--capacity", "off", "--cache-size",
                             str(args.cache_size), "--log-level", "warn"],
                            stdout=subprocess.DEVNULL, stderr=open(os.path.join(tmp, "log"), "w"))
    try:
        for _ in range(200):
            try:
                Client(port).call("ListTables", {})
                break
            except (OSError, http.client.HTTPException):
                time.sleep(0.05)
        rss_start = status_kb(proc.pid, "VmRSS")
        t0 = time.time()
        if TABLE not in Client(port).call("ListTables", {}).get("TableNames", []):
            load(port, args.items)
        loaded = time.time() - t0
        rss_loaded, hwm_loaded = status_kb(proc.pid, "VmRSS"), status_kb(proc.pid, "VmHWM")
        reqs = os.path.join(tmp, "mixed.lua")
        mixed_requests(port, args.items, mix, 20000, reqs)
        env = dict(os.environ, QUARRY_BENCH_REQUESTS=reqs,
                   QUARRY_BENCH_DIR=os.path.join(HERE, "http"))
        wrk = subprocess.Popen(["wrk", "-t2", "-c%d" % args.conns, "-d%ds" % args.seconds,
                                "-s", os.path.join(HERE, "http", "mixed.lua"),
                                "http://127.0.0.1:%d/" % port],
                               stdout=subprocess.PIPE, text=True, env=env)
        peak, threads, samples = 0, 0, []
        while wrk.poll() is None:
            rss = status_kb(proc.pid, "VmRSS")
            samples.append(rss)
            peak = max(peak, rss)
            threads = max(threads, status_kb(proc.pid, "Threads"))
            time.sleep(0.5)
        result = [l for l in wrk.stdout.read().splitlines() if l.startswith("RESULT")]
        rss_end, hwm = status_kb(proc.pid, "VmRSS"), status_kb(proc.pid, "VmHWM")
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    mb = lambda kb: kb / 1024.0
    budget = args.cache_size / 1048576.0
    rps, p99, non2xx, errors = (result[0].split()[1:] if result else ["?"] * 4)
    print("## bench/memory.py: quarry serve --cache-size %.0f MB, %d items, wrk -t2 -c%d, %.0f s"
          ", mix %s" % (budget, args.items, args.conns, args.seconds, args.mix))
    print()
    print("| measure | MB |\n|---|---:|")
    print("| VmRSS after the start | %.1f |" % mb(rss_start))
    print("| VmRSS after the load (%s, %.0f s; peak %.1f) | %.1f |" % (
        "loaded" if not args.data else "reused %s" % args.data, loaded, mb(hwm_loaded),
        mb(rss_loaded)))
    print("| VmRSS during the mixed load: median of %d samples | %.1f |" % (
        len(samples), mb(sorted(samples)[len(samples) // 2]) if samples else 0))
    print("| VmRSS during the mixed load: peak (VmHWM %.1f) | %.1f |" % (mb(hwm), mb(peak)))
    print("| VmRSS at the end | %.1f |" % mb(rss_end))
    print("| peak − budget | %.1f |" % (mb(peak) - budget))
    print()
    print("mixed load: %s requests/s, p99 %s ms, %s non-2xx, %s socket errors; at most %d threads"
          % (rps, p99, non2xx, errors, threads))


if __name__ == "__main__":
    main()
