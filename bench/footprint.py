#!/usr/bin/env python3
"""footprint.py — an idle `quarry serve`'s cost, measured from outside the process.

Starts `quarry serve` with its defaults on a fresh data directory and a free loopback port,
sends a signed ListTables every millisecond until one is answered (the time from the exec to
that answer is the start time), lets the server idle, then reads VmRSS, VmHWM and Threads
from /proc/PID/status and the threads' names; then sends one more ListTables and reads VmRSS
again after half a second (the first answer may come before the server has handed back its
start-up pages, the second comes after). With --used, it then makes a table and calls it
(100 PutItem, 20 GetItem and 20 Query, a Scan, through boto3), idles again and reads RSS,
anonymous memory and threads once more: what the server keeps at rest after use. With
--used-cql the server also listens for CQL, and the use goes on over both protocols at once:
the calls above, 20 BatchWriteItem of 25 items of 10 KB, and on a CQL session (the Python
driver) a keyspace and table, 200 prepared INSERTs, 20 SELECTs of a partition, a BATCH and
four QUERYs of 4 MB. Not a load benchmark: bench/http is that.

    bench/footprint.py [--quarry build/quarry] [--idle SECONDS] [--runs N] [--used | --used-cql]
                       [-- SERVE-OPTIONS...]
"""
import argparse
import collections
import datetime
import hashlib
import hmac
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def signed_list_tables(host):
    """The bytes of one ListTables request, SigV4-signed with an arbitrary key (a server
    without --credentials on loopback accepts any)."""
    body = b"{}"
    amz_date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    headers = {"content-type": "application/x-amz-json-1.0", "host": host,
               "x-amz-date": amz_date, "x-amz-target": "DynamoDB_20120810.ListTables"}
    names = sorted(headers)
    canonical = "\n".join(["POST", "/", "", "".join("%s:%s\n" % (n, headers[n]) for n in names),
                           ";".join(names), hashlib.sha256(body).hexdigest()])
    scope = "%s/us-east-1/dynamodb/aws4_request" % day
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + "footprint").encode()
    for part in (day, "us-east-1", "dynamodb", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = ("AWS4-HMAC-SHA256 Credential=footprint/%s, SignedHeaders=%s, "
                                "Signature=%s" % (scope, ";".join(names), sig))
    headers["content-length"] = str(len(body))
    head = "POST / HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in headers.items()) + "\r\n"
    return head.encode() + body


def answered(port, request):
    """True once the server answers request with a 200 whose body names TableNames."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
            s.sendall(request)
            data = b""
            while b"TableNames" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.startswith(b"HTTP/1.1 200") and b"TableNames" in data
    except OSError:
        return False


def status(pid):
    fields = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return fields


def rollup(pid):
    """PSS and the private (unshared) memory of pid in kB: VmRSS counts the pages of shared
    libraries that other processes map too, these do not."""
    fields = {}
    with open("/proc/%d/smaps_rollup" % pid) as f:
        for line in f:
            key, _, value = line.partition(":")
            if value.strip().endswith("kB"):
                fields[key] = int(value.split()[0])
    return fields["Pss"], fields["Private_Clean"] + fields["Private_Dirty"], fields["Anonymous"]


def thread_names(pid):
    names = collections.Counter()
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, tid)) as f:
                names[f.read().strip()] += 1
        except OSError:
            pass
    return names


def use(port):
    """A table, 100 PutItem, 20 GetItem and 20 Query(10), a Scan."""
    import boto3
    d = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1",
                     aws_access_key_id="footprint", aws_secret_access_key="footprint")
    d.create_table(TableName="used", BillingMode="PAY_PER_REQUEST",
                   KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                              {"AttributeName": "sk", "KeyType": "RANGE"}],
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "sk", "AttributeType": "N"}])
    for i in range(100):
        d.put_item(TableName="used", Item={"pk": {"S": "p%d" % (i % 5)}, "sk": {"N": str(i)},
                                           "v": {"S": "x" * 100}})
    for i in range(20):
        d.get_item(TableName="used", Key={"pk": {"S": "p1"}, "sk": {"N": str(i)}})
        d.query(TableName="used", KeyConditionExpression="pk = :p", Limit=10,
                ExpressionAttributeValues={":p": {"S": "p2"}})
    d.scan(TableName="used")


def use_batches(port):
    """20 BatchWriteItem of 25 items of 10 KB (bodies of ~250 KB)."""
    import boto3
    d = boto3.client("dynamodb", endpoint_url="http://127.0.0.1:%d" % port, region_name="us-east-1",
                     aws_access_key_id="footprint", aws_secret_access_key="footprint")
    for b in range(20):
        d.batch_write_item(RequestItems={"used": [
            {"PutRequest": {"Item": {"pk": {"S": "b%d" % b}, "sk": {"N": str(i)},
                                     "v": {"S": "y" * 10000}}}} for i in range(25)]})


def use_cql(port):
    """A CQL session's keyspace and table, 200 prepared INSERTs, 20 SELECTs of a partition, a
    BATCH and four QUERYs of 4 MB (an INSERT padded with whitespace)."""
    from cassandra.cluster import Cluster
    from cassandra.query import BatchStatement
    cluster = Cluster(["127.0.0.1"], port=port, protocol_version=4)
    try:
        s = cluster.connect()
        s.execute("CREATE KEYSPACE IF NOT EXISTS fp WITH replication = "
                  "{'class': 'SimpleStrategy', 'replication_factor': 1}")
        s.execute("CREATE TABLE IF NOT EXISTS fp.t (pk int, ck int, v text, PRIMARY KEY (pk, ck))")
        ins = s.prepare("INSERT INTO fp.t (pk, ck, v) VALUES (?, ?, ?)")
        for i in range(200):
            s.execute(ins, (i % 10, i, "z" * 1000))
        for i in range(20):
            list(s.execute("SELECT * FROM fp.t WHERE pk = %d" % (i % 10)))
        batch = BatchStatement()
        for i in range(20):
            batch.add(ins, (99, i, "w" * 100))
        s.execute(batch)
        for i in range(4):
            head, tail = "INSERT INTO fp.t (pk, ck, v) VALUES (100, %d," % i, " 'big')"
            s.execute(head + " " * ((4 << 20) - len(head) - len(tail)) + tail, timeout=60)
    finally:
        cluster.shutdown()


def use_both(port, cql_port):
    """use and use_batches over HTTP while use_cql runs over CQL."""
    import threading
    failed = []

    def run(f, *a):
        try:
            f(*a)
        except Exception as e:  # noqa: BLE001 (reported below)
            failed.append(repr(e))
    use(port)
    threads = [threading.Thread(target=run, args=(use_batches, port)),
               threading.Thread(target=run, args=(use_cql, cql_port))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        sys.exit("footprint: the use failed: %s" % "; ".join(failed))


def one_run(quarry, idle, extra, used, cql=False):
    data = tempfile.mkdtemp(prefix="quarry-footprint-")
    port = free_port()
    cql_port = free_port() if cql else None
    request = signed_list_tables("127.0.0.1:%d" % port)
    t0 = time.monotonic()
    listen = ["--cql", "127.0.0.1:%d" % cql_port] if cql else []
    proc = subprocess.Popen([quarry, "serve", "--listen", "127.0.0.1:%d" % port,
                             "--data", os.path.join(data, "db")] + listen + extra,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not answered(port, request):
            if proc.poll() is not None:
                sys.exit("footprint: quarry serve exited with %d before answering" % proc.returncode)
            if time.monotonic() - t0 > 10:
                sys.exit("footprint: no answer within 10 s")
            time.sleep(0.001)
        start_ms = (time.monotonic() - t0) * 1000
        at_start = status(proc.pid)
        time.sleep(idle)
        idle_status = status(proc.pid)
        names = thread_names(proc.pid)
        idle_rollup = rollup(proc.pid)
        if not answered(port, request):
            sys.exit("footprint: the second ListTables was not answered")
        time.sleep(0.5)
        second = int(status(proc.pid)["VmRSS"].split()[0])
        after_use = None
        if used:
            if cql:
                use_both(port, cql_port)
            else:
                use(port)
            time.sleep(idle)
            after_use = (int(status(proc.pid)["VmRSS"].split()[0]), rollup(proc.pid)[2],
                         int(status(proc.pid)["Threads"]), int(status(proc.pid)["VmHWM"].split()[0]),
                         thread_names(proc.pid))
        return start_ms, at_start, idle_status, idle_rollup, names, second, after_use
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(data, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quarry", default=os.path.join(os.path.dirname(__file__), "..", "build", "quarry"))
    ap.add_argument("--idle", type=float, default=5.0, help="seconds to idle before reading RSS")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--used", action="store_true", help="also measure the server idle after a round of calls")
    ap.add_argument("--used-cql", action="store_true",
                    help="listen for CQL too, and use both protocols at once before the last idle")
    ap.add_argument("serve_options", nargs="*", help="after --: extra options for quarry serve")
    args = ap.parse_args()
    starts, rss, pss, private, threads, seconds, used = [], [], [], [], [], [], []
    for i in range(args.runs):
        start_ms, at_start, idle_status, (p, u, anon), names, second, after_use = one_run(
            args.quarry, args.idle, args.serve_options, args.used or args.used_cql, args.used_cql)
        starts.append(start_ms)
        seconds.append(second)
        rss.append(int(idle_status["VmRSS"].split()[0]))
        pss.append(p)
        private.append(u)
        threads.append(int(idle_status["Threads"]))
        print("run %d: first ListTables answered %.1f ms after the exec; RSS then %s, after %.0f s "
              "idle %s (peak %s; PSS %d kB, private %d kB, anonymous %d kB), %s threads: %s; "
              "after one more ListTables %d kB" % (
                  i + 1, start_ms, at_start["VmRSS"], args.idle, idle_status["VmRSS"],
                  idle_status["VmHWM"], p, u, anon, idle_status["Threads"],
                  ", ".join("%s×%d" % kv if kv[1] > 1 else kv[0] for kv in sorted(names.items())),
                  second))
        if after_use:
            used.append(after_use[0])
            what = ("the HTTP and CQL use" if args.used_cql
                    else "100 PutItem, 20 GetItem and Query, a Scan")
            print("       idle %.0f s after %s: RSS %d kB (anonymous %d kB, peak %d kB), %d "
                  "threads: %s" % (args.idle, what, after_use[0], after_use[1], after_use[3],
                                   after_use[2], ", ".join(
                                       "%s×%d" % kv if kv[1] > 1 else kv[0]
                                       for kv in sorted(after_use[4].items()))))
    print("median of %d: start %.1f ms (max %.1f), idle RSS %.1f MB (max %.1f), PSS %.1f MB, "
          "private %.1f MB, %d threads; after one more ListTables %.1f MB (max %.1f)" % (
              args.runs, statistics.median(starts), max(starts), statistics.median(rss) / 1024,
              max(rss) / 1024, statistics.median(pss) / 1024, statistics.median(private) / 1024,
              statistics.median(threads), statistics.median(seconds) / 1024, max(seconds) / 1024))
    if used:
        print("after use: idle RSS %.1f MB (max %.1f)" % (statistics.median(used) / 1024, max(used) / 1024))


if __name__ == "__main__":
    main()
