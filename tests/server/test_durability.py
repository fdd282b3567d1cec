"""An acknowledged write survives the server being killed outright.

Six boto3 threads put items, add to counters and run two-item transactions against a
table with a global index, until the server is killed with SIGKILL (no drain, no close)
in the middle of their traffic. A second server then opens the same data directory, and:
every put that was answered is there; every counter holds at least the additions that
were answered and at most those that were sent; every transaction sent is there whole or
not at all; and, once that server stops, `quarry verify` finds the global index equal to
its table (index work logged before the kill is applied after the restart). The table
has a stream, and its records follow the items exactly: a record for every write that is
there, none for one that is not, numbered in order, and numbering goes on above them after
the restart. With `--no-sync` the same holds, since only the process dies: its writes
reached the OS."""
import os
import signal
import subprocess
import threading
import time

import pytest
from botocore.exceptions import BotoCoreError, ClientError

from conftest import Server, boto3_client, launch, quarry_bin

TABLE = "Durable"
WRITERS = 6


def create(c):
    c.create_table(
        TableName=TABLE, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})


def stream_records(url):
    """Every record of the table's stream, from TRIM_HORIZON to the end."""
    s = boto3_client(url, service="dynamodbstreams")
    arn = s.list_streams(TableName=TABLE)["Streams"][0]["StreamArn"]
    shard = s.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = s.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = []
    while True:
        r = s.get_records(ShardIterator=it)
        records += r["Records"]
        if not r["Records"]:
            return records
        it = r["NextShardIterator"]


class Writer(threading.Thread):
    """Writes until the server stops answering; records what was sent and what answered."""

    def __init__(self, url, w):
        super().__init__(daemon=True)
        self.c = boto3_client(url)
        self.w = w
        self.acked_puts, self.sent_puts = [], []
        self.added_acked = self.added_sent = 0
        self.tx_sent = []

    def run(self):
        c, w, n = self.c, self.w, 0
        try:
            while True:
                n += 1
                kind = n % 3
                if kind == 0:
                    sk = "put%06d" % n
                    self.sent_puts.append(sk)
                    c.put_item(TableName=TABLE, Item={"pk": {"S": "w%d" % w}, "sk": {"S": sk},
                                                      "g": {"S": "g%d" % (n % 7)}, "n": {"N": str(n)}})
                    self.acked_puts.append(sk)
                elif kind == 1:
                    self.added_sent += 1
                    c.update_item(TableName=TABLE, Key={"pk": {"S": "w%d" % w}, "sk": {"S": "counter"}},
                                  UpdateExpression="ADD c :one", ExpressionAttributeValues={":one": {"N": "1"}})
                    self.added_acked += 1
                else:
                    sk = "tx%06d" % n
                    self.tx_sent.append(sk)
                    c.transact_write_items(TransactItems=[
                        {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "w%d" % w}, "sk": {"S": sk + "a"},
                                                               "g": {"S": "tx"}}}},
                        {"Put": {"TableName": TABLE, "Item": {"pk": {"S": "x%d" % w}, "sk": {"S": sk + "b"}}}}])
        except (BotoCoreError, ClientError):
            return  # the server is gone: whatever was in flight is unacknowledged


def present(c, pk):
    keys, kwargs = set(), {}
    while True:
        r = c.query(TableName=TABLE, KeyConditionExpression="pk = :p", ConsistentRead=True,
                    ExpressionAttributeValues={":p": {"S": pk}}, **kwargs)
        keys.update(i["sk"]["S"] for i in r["Items"])
        if "LastEvaluatedKey" not in r:
            return keys
        kwargs = {"ExclusiveStartKey": r["LastEvaluatedKey"]}


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_acknowledged_writes_survive_sigkill(tmp_path, start, mode):
    data = tmp_path / "data"
    first = launch(data, tmp_path / "killed.log", *mode)
    assert isinstance(first, Server), (tmp_path / "killed.log").read_text()
    try:
        create(boto3_client(first.url))
        writers = [Writer(first.url, w) for w in range(WRITERS)]
        for t in writers:
            t.start()
        time.sleep(2.0)
    finally:
        os.kill(first.proc.pid, signal.SIGKILL)
        first.proc.wait()
        first.proc.stdout.close()
    for t in writers:
        t.join(30)
        assert not t.is_alive(), "a writer hung after the server died"
    assert sum(len(t.acked_puts) for t in writers) > 50, "too little traffic before the kill to test anything"

    second = start(*mode, data=data)
    c = boto3_client(second.url)
    for t in writers:
        mine, other = present(c, "w%d" % t.w), present(c, "x%d" % t.w)
        lost = [sk for sk in t.acked_puts if sk not in mine]
        assert not lost, "writer %d: acknowledged puts lost: %s" % (t.w, lost[:5])
        assert not (set(s for s in mine if s.startswith("put")) - set(t.sent_puts))
        counter = c.get_item(TableName=TABLE, Key={"pk": {"S": "w%d" % t.w}, "sk": {"S": "counter"}},
                             ConsistentRead=True).get("Item")
        value = int(counter["c"]["N"]) if counter else 0
        assert t.added_acked <= value <= t.added_sent, (t.w, t.added_acked, value, t.added_sent)
        for sk in t.tx_sent:
            halves = (sk + "a" in mine, sk + "b" in other)
            assert halves[0] == halves[1], "writer %d: transaction %s applied in part: %s" % (t.w, sk, halves)
    # Index work the first server logged but had not applied reaches the index now.
    deadline = time.monotonic() + 30
    expected = sum(1 for t in writers for sk in present(c, "w%d" % t.w) if sk != "counter")
    while True:
        got, kwargs = 0, {}
        for g in ["g%d" % i for i in range(7)] + ["tx"]:
            kwargs = {}
            while True:
                r = c.query(TableName=TABLE, IndexName="ByG", KeyConditionExpression="g = :g",
                            ExpressionAttributeValues={":g": {"S": g}}, Select="COUNT", **kwargs)
                got += r["Count"]
                if "LastEvaluatedKey" not in r:
                    break
                kwargs = {"ExclusiveStartKey": r["LastEvaluatedKey"]}
        if got == expected or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert got == expected, "the global index holds %d entries, the table %d" % (got, expected)
    # The stream holds one record per write that survived, and none for any other.
    records = stream_records(second.url)
    seqs = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert seqs == sorted(set(seqs)), "stream records out of order or repeated"
    keys = [(r["dynamodb"]["Keys"]["pk"]["S"], r["dynamodb"]["Keys"]["sk"]["S"]) for r in records]
    items = {(pk, sk) for t in writers for pk in ("w%d" % t.w, "x%d" % t.w) for sk in present(c, pk)}
    assert set(keys) == items, "records without items: %s; items without records: %s" % (
        sorted(set(keys) - items)[:5], sorted(items - set(keys))[:5])
    for t in writers:
        counter = c.get_item(TableName=TABLE, Key={"pk": {"S": "w%d" % t.w}, "sk": {"S": "counter"}},
                             ConsistentRead=True).get("Item")
        assert keys.count(("w%d" % t.w, "counter")) == (int(counter["c"]["N"]) if counter else 0)
    c.put_item(TableName=TABLE, Item={"pk": {"S": "after"}, "sk": {"S": "restart"}})
    assert int(stream_records(second.url)[-1]["dynamodb"]["SequenceNumber"]) > seqs[-1]
    assert second.stop() == 0, second.log()
    v = subprocess.run([quarry_bin(), "verify", "--data", str(data)], capture_output=True, text=True,
                       timeout=120)
    assert v.returncode == 0, v.stdout + v.stderr
