"""Many clients at once, across every event loop and (with durable writes) the write
threads: puts, updates, deletes, LSI and GSI queries, transactions and batches from eight
boto3 threads, while a ninth creates and deletes a GSI on the same table. No request may
fail for a reason other than the index change in progress, DescribeTable's counts must
match a scan, the server must stop cleanly on SIGTERM, and `quarry verify` must find every
index equal to its table."""
import random
import subprocess
import threading
import time

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client, quarry_bin

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


def count(c, **kw):
    n, start = 0, None
    while True:
        page = c.scan(TableName=TABLE, Select="COUNT", **(dict(kw, ExclusiveStartKey=start) if start else kw))
        n += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            return n


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_many_clients_at_once(start, mode):
    srv = start("--threads", "16", *mode)
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
    c.create_table(TableName="Counters", BillingMode="PAY_PER_REQUEST",
                   AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                   KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
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
