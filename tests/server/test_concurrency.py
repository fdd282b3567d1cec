"""Many clients at once, across every event loop and (with durable writes) the write
threads: puts, updates, deletes, LSI and GSI queries, transactions and batches from eight
boto3 threads, while a ninth creates and deletes a GSI on the same table. No request may
fail for a reason other than the index change in progress, DescribeTable's counts must
match a scan, the server must stop cleanly on SIGTERM, and `quarry verify` must find every
index equal to its table."""
import datetime
import json
import random
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client, quarry_bin, sign

SECONDS = 6
TABLE = "Busy"


def create(c):
    c.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g", "l")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "ByL", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "l", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
        GlobalSecondaryIndexes=[{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}])


def one_operation(c, r, n):
    pk, sk = "p%d" % r.randrange(40), "s%d" % r.randrange(15)
    key = {"pk": {"S": pk}, "sk": {"S": sk}}
    op = r.randrange(10)
    if op < 3:
        item = dict(key, g={"S": "g%d" % r.randrange(5)}, l={"S": "l%d" % r.randrange(9)}, v={"N": str(n)})
        if r.random() < 0.3:
            del item["g"]  # out of the sparse global index
        c.put_item(TableName=TABLE, Item=item)
    elif op == 3:
        c.update_item(TableName=TABLE, Key=key, UpdateExpression="ADD c :one",
                      ExpressionAttributeValues={":one": {"N": "1"}})
    elif op == 4:
        c.delete_item(TableName=TABLE, Key=key)
    elif op == 5:
        c.query(TableName=TABLE, IndexName="ByL", KeyConditionExpression="pk = :p",
                ExpressionAttributeValues={":p": {"S": pk}})
    elif op == 6:
        c.query(TableName=TABLE, IndexName="ByG", KeyConditionExpression="g = :g",
                ExpressionAttributeValues={":g": {"S": "g1"}}, Limit=20)
    elif op == 7:
        c.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"pk": {"S": pk}, "sk": {"S": "t%d" % r.randrange(3)},
                                                   "l": {"S": "x"}}}},
            {"Update": {"TableName": TABLE, "Key": {"pk": {"S": "p%d" % r.randrange(40)}, "sk": {"S": "z"}},
                        "UpdateExpression": "SET w = :w", "ExpressionAttributeValues": {":w": {"S": "w"}}}}])
    elif op == 8:
        c.batch_write_item(RequestItems={TABLE: [
            {"PutRequest": {"Item": {"pk": {"S": pk}, "sk": {"S": "b%d" % k}, "g": {"S": "g2"}}}}
            for k in range(5)]})
    else:
        c.get_item(TableName=TABLE, Key=key)


def id_table(name, stream=False):
    """CreateTable's parameters for a table keyed by a string id alone."""
    spec = dict(TableName=name, BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    if stream:
        spec["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    return spec


def count(c, table=TABLE, **kw):
    n, start = 0, None
    while True:
        page = c.scan(TableName=table, Select="COUNT", **(dict(kw, ExclusiveStartKey=start) if start else kw))
        n += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return n


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_many_clients_at_once(start, mode):
    srv = start(*mode or ["--threads", "16"])  # with --no-sync, the loops write (and stage) themselves
    create(boto3_client(srv.url))
    deadline = time.monotonic() + SECONDS
    failures, done = [], []

    def client_thread(seed):
        c, r, n = boto3_client(srv.url, retries=3), random.Random(seed), 0
        while time.monotonic() < deadline:
            try:
                one_operation(c, r, n)
                n += 1
            except ClientError as e:
                code = e.response["Error"]["Code"]
                # Transactions may meet each other on the same item.
                if code not in ("TransactionCanceledException", "TransactionConflictException"):
                    failures.append(code + ": " + e.response["Error"]["Message"])
        done.append(n)

    def index_thread():
        c, rounds = boto3_client(srv.url), 0
        while time.monotonic() < deadline:
            try:
                c.update_table(TableName=TABLE, AttributeDefinitions=[{"AttributeName": "h", "AttributeType": "S"}],
                               GlobalSecondaryIndexUpdates=[{"Create": {
                                   "IndexName": "ByH", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                                   "Projection": {"ProjectionType": "ALL"}}}])
                time.sleep(0.2)
                c.update_table(TableName=TABLE, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "ByH"}}])
                rounds += 1
            except ClientError as e:
                # DynamoDB refuses an index change while the previous one is still running.
                if e.response["Error"]["Code"] not in ("LimitExceededException", "ResourceInUseException"):
                    failures.append("UpdateTable: " + e.response["Error"]["Message"])
                time.sleep(0.1)
        done.append(("rounds", rounds))

    threads = [threading.Thread(target=client_thread, args=(i,)) for i in range(8)]
    threads.append(threading.Thread(target=index_thread))
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sum(n for n in done if isinstance(n, int)) > 100

    c = boto3_client(srv.url)
    for _ in range(200):  # let the global index catch up
        desc = c.describe_table(TableName=TABLE)["Table"]
        if desc.get("QuarryIndexPropagation", {}).get("PendingUpdates", 0) == 0:
            break
        time.sleep(0.05)
    assert desc["ItemCount"] == count(c)
    by_g = [g for g in desc["GlobalSecondaryIndexes"] if g["IndexName"] == "ByG"][0]
    assert by_g["ItemCount"] == count(c, IndexName="ByG")

    assert srv.stop() == 0, srv.log()
    v = subprocess.run([quarry_bin(), "verify", "--data", str(srv.data_dir)], capture_output=True, text=True,
                       timeout=120)
    assert v.returncode == 0, v.stdout + v.stderr
    assert " 0 differences" in v.stdout


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_no_lost_updates(start, mode):
    """Eight clients, each on its own connections (so across the event loops, whose writes
    are staged and committed once a turn under --no-sync), increment five counters with ADD
    and with an optimistic read-then-conditional-update, and delete and recreate a sixth
    item under a condition. Every acknowledged write must be in the final state: each ADD
    counted once, each conditional update that succeeded exactly one step of the version,
    and no condition judged against a stale item."""
    srv = start(*mode)
    c = boto3_client(srv.url)
    c.create_table(**id_table("Counters"))
    for i in range(5):
        c.put_item(TableName="Counters", Item={"id": {"S": "k%d" % i}, "adds": {"N": "0"}, "v": {"N": "0"}})
    deadline = time.monotonic() + 4
    lock = threading.Lock()
    adds, steps, failures = [0] * 5, [0] * 5, []
    toggles = {"created": 0, "deleted": 0}

    def client_thread(seed):
        cl, r = boto3_client(srv.url, retries=0), random.Random(seed)
        while time.monotonic() < deadline:
            i = r.randrange(5)
            key = {"id": {"S": "k%d" % i}}
            try:
                op = r.randrange(3)
                if op == 0:
                    cl.update_item(TableName="Counters", Key=key, UpdateExpression="ADD adds :one",
                                   ExpressionAttributeValues={":one": {"N": "1"}})
                    with lock:
                        adds[i] += 1
                elif op == 1:
                    v = int(cl.get_item(TableName="Counters", Key=key, ConsistentRead=True)["Item"]["v"]["N"])
                    try:
                        cl.update_item(TableName="Counters", Key=key, UpdateExpression="SET v = :next",
                                       ConditionExpression="v = :seen",
                                       ExpressionAttributeValues={":seen": {"N": str(v)}, ":next": {"N": str(v + 1)}})
                        with lock:
                            steps[i] += 1
                    except ClientError as e:
                        if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                            raise
                else:
                    key = {"id": {"S": "flip"}}
                    try:
                        cl.put_item(TableName="Counters", Item=dict(key, n={"N": "1"}),
                                    ConditionExpression="attribute_not_exists(id)")
                        with lock:
                            toggles["created"] += 1
                    except ClientError as e:
                        if e.response["Error"]["Code"] != "ConditionalCheckFailedException":
                            raise
                        try:
                            cl.delete_item(TableName="Counters", Key=key, ConditionExpression="attribute_exists(id)")
                            with lock:
                                toggles["deleted"] += 1
                        except ClientError as e2:
                            if e2.response["Error"]["Code"] != "ConditionalCheckFailedException":
                                raise
            except ClientError as e:
                failures.append(e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"])

    threads = [threading.Thread(target=client_thread, args=(s,)) for s in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert sum(adds) > 50 and sum(steps) > 50
    for i in range(5):
        item = c.get_item(TableName="Counters", Key={"id": {"S": "k%d" % i}}, ConsistentRead=True)["Item"]
        assert int(item["adds"]["N"]) == adds[i], (i, item, adds)
        assert int(item["v"]["N"]) == steps[i], (i, item, steps)
    flip = c.get_item(TableName="Counters", Key={"id": {"S": "flip"}}, ConsistentRead=True).get("Item")
    # Creations and deletions alternate, so they differ by one exactly when the item is there.
    assert toggles["created"] - toggles["deleted"] == (1 if flip else 0), (toggles, flip)
    assert c.describe_table(TableName="Counters")["Table"]["ItemCount"] == 5 + (1 if flip else 0)
    assert srv.stop() == 0, srv.log()


def _request_bytes(url, operation, body):
    body = json.dumps(body).encode()
    host = urllib.parse.urlsplit(url).netloc
    h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810." + operation},
             body, host, "local", "local", datetime.datetime.now(datetime.timezone.utc))
    head = "POST / HTTP/1.1\r\n" + "".join("%s: %s\r\n" % kv for kv in h.items())
    return (head + "Content-Length: %d\r\n\r\n" % len(body)).encode() + body


def _status(sock):
    """Reads one response from sock (within its timeout) and returns its status code."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = int([line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")][0])
    while len(rest) < length:
        rest += sock.recv(65536)
    return int(head.split()[1])


def test_table_changes_in_the_turn_of_a_staged_write(start):
    """With --no-sync and one event loop, a PutItem and a CreateTable (or DeleteTable) sent
    at the same moment on two connections are answered in one turn of the loop, the
    PutItem staged first. The table change's catalog write commits the staged write, and
    nothing it does then may wait for what the table change holds: every request of every
    round must be answered (a loop stuck on itself answers nothing again)."""
    srv = start("--no-sync", "--loops", "1")
    c = boto3_client(srv.url)
    c.create_table(**id_table("Steady"))
    # A slow Scan keeps the loop busy while the two requests arrive, so that its next
    # turn finds both.
    c.batch_write_item(RequestItems={"Steady": [
        {"PutRequest": {"Item": {"id": {"S": "pad%d" % n}, "pad": {"S": "x" * 2000}}}} for n in range(25)]})
    for k in range(1, 40):
        c.batch_write_item(RequestItems={"Steady": [
            {"PutRequest": {"Item": {"id": {"S": "pad%d-%d" % (k, n)}, "pad": {"S": "x" * 2000}}}}
            for n in range(25)]})
    u = urllib.parse.urlsplit(srv.url)
    a = socket.create_connection((u.hostname, u.port), timeout=10)
    b = socket.create_connection((u.hostname, u.port), timeout=10)
    slow = socket.create_connection((u.hostname, u.port), timeout=10)
    scan = _request_bytes(srv.url, "Scan", {"TableName": "Steady", "Select": "COUNT"})
    try:
        for i in range(40):
            name = "Passing%d" % (i // 2)
            change = ("CreateTable", id_table(name)) if i % 2 == 0 else ("DeleteTable", {"TableName": name})
            put = _request_bytes(srv.url, "PutItem", {"TableName": "Steady", "Item": {"id": {"S": "k%d" % i}}})
            other = _request_bytes(srv.url, *change)
            slow.sendall(scan)
            time.sleep(0.001)
            # Which of two requests that arrive together a loop reads first is the
            # kernel's choice (epoll gave the later one first here): both orders are sent.
            if (i // 2) % 2:
                a.sendall(put)
                b.sendall(other)
            else:
                b.sendall(other)
                a.sendall(put)
            assert _status(slow) == 200
            assert _status(a) == 200
            assert _status(b) == 200
    finally:
        a.close()
        b.close()
        slow.close()
    assert count(c, "Steady") == 40 + 1000
    assert srv.stop() == 0, srv.log()


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_table_churn_beside_writes(start, mode):
    """Six clients write and read three tables while others create and delete tables
    (with and without streams), switch a table's stream on and off, add and drop a global
    index, and delete and recreate one of the tables being written. Requests may meet a
    table that is gone or busy, nothing else: no other error, no request left unanswered
    (boto3 gives up after 60 s), a clean stop on SIGTERM, and every index equal to its
    table."""
    srv = start(*mode)
    codes_expected = {"ResourceNotFoundException", "ResourceInUseException", "LimitExceededException",
                      "ValidationException", "TransactionCanceledException", "TransactionConflictException"}

    c = boto3_client(srv.url)
    for name in ("Churn1", "Churn2", "Churn3"):
        c.create_table(**id_table(name, stream=name == "Churn2"))
    deadline = time.monotonic() + SECONDS
    failures = []

    def writer(cl, r):
        t, key = r.choice(["Churn1", "Churn2", "Churn3"]), {"id": {"S": "k%d" % r.randrange(40)}}
        op = r.randrange(5)
        if op == 0:
            cl.put_item(TableName=t, Item=dict(key, g={"S": "g%d" % r.randrange(3)}))
        elif op == 1:
            cl.update_item(TableName=t, Key=key, UpdateExpression="ADD n :one",
                           ExpressionAttributeValues={":one": {"N": "1"}})
        elif op == 2:
            cl.delete_item(TableName=t, Key=key)
        elif op == 3:
            cl.batch_write_item(RequestItems={t: [{"PutRequest": {"Item": {"id": {"S": "b%d" % i}}}} for i in range(3)]})
        else:
            cl.get_item(TableName=t, Key=key)

    def tables(cl, r):
        name = "Passing%d" % r.randrange(3)
        try:
            cl.create_table(**id_table(name, stream=r.random() < 0.5))
        except ClientError as e:
            if e.response["Error"]["Code"] != "ResourceInUseException":
                raise
            cl.delete_table(TableName=name)

    def streams(cl, r):
        on = r.random() < 0.5
        cl.update_table(TableName="Churn1", StreamSpecification=dict(
            {"StreamEnabled": on}, **({"StreamViewType": "KEYS_ONLY"} if on else {})))
        time.sleep(0.05)

    def index(cl, r):
        try:
            cl.update_table(TableName="Churn2", AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                            GlobalSecondaryIndexUpdates=[{"Create": {
                                "IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                "Projection": {"ProjectionType": "ALL"}}}])
        except ClientError as e:
            if e.response["Error"]["Code"] not in codes_expected:
                raise
            cl.update_table(TableName="Churn2", GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "ByG"}}])
        time.sleep(0.1)

    def recreate(cl, r):
        cl.delete_table(TableName="Churn3")
        cl.create_table(**id_table("Churn3"))
        time.sleep(0.2)

    def run(seed, fn):
        cl, r = boto3_client(srv.url, retries=0), random.Random(seed)
        while time.monotonic() < deadline:
            try:
                fn(cl, r)
            except ClientError as e:
                if e.response["Error"]["Code"] not in codes_expected:
                    failures.append(e.response["Error"]["Code"] + ": " + e.response["Error"]["Message"])
            except Exception as e:  # a timeout: the server stopped answering
                failures.append("%s: %s" % (type(e).__name__, e))
                return

    jobs = [writer] * 6 + [tables, streams, index, recreate]
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []
    assert srv.stop() == 0, srv.log()
    v = subprocess.run([quarry_bin(), "verify", "--data", str(srv.data_dir)], capture_output=True, text=True,
                       timeout=120)
    assert v.returncode == 0, v.stdout + v.stderr
    assert " 0 differences" in v.stdout
