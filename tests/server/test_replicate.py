"""`quarry replicate` from one quarry server to another: the schema and items copied while
the source takes writes, its stream followed, the replicator and each server killed with
SIGKILL mid-stream and restarted, and at the end the two sides compared item by item
(`quarry replicate --compare`, and an independent boto3 scan of both) with the target's
indexes checked by `quarry verify --endpoint`. Also the errors: a source table without a
stream, a target table that exists already.
"""
import os
import random
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import boto3_client, launch, quarry_bin, Server

ENV = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
           AWS_DEFAULT_REGION="us-east-1")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Node:
    """A server on a fixed port and folder, so it can be killed and started again there."""

    def __init__(self, tmp_path, name, *args):
        self.args = args
        self.data = tmp_path / name
        self.log = tmp_path / (name + ".log")
        self.port = free_port()
        self.url = "http://127.0.0.1:%d" % self.port
        self.srv = None
        self.start()

    def start(self):
        srv = launch(self.data, self.log, "--listen", "127.0.0.1:%d" % self.port, *self.args)
        assert isinstance(srv, Server), self.log.read_text()
        self.srv = srv

    def kill(self):
        self.srv.proc.kill()
        self.srv.proc.wait()
        self.srv.proc.stdout.close()

    def stop(self):
        if self.srv.proc.poll() is None:
            assert self.srv.stop() == 0, self.log.read_text()

    def client(self):
        return boto3_client(self.url, retries=8)


class Replicator:
    def __init__(self, tmp_path, src, dst, *extra):
        self.args = [quarry_bin(), "replicate", "--from", src.url, "--to", dst.url,
                     "--state", str(tmp_path / "state.json"), "--poll-ms", "50",
                     "--report-seconds", "0", *extra]
        self.log = tmp_path / "replicate.log"
        self.proc = None

    def start(self):
        out = open(self.log, "ab")
        self.proc = subprocess.Popen(self.args, stdout=out, stderr=out, env=ENV,
                                     stdin=subprocess.DEVNULL)
        out.close()

    def text(self):
        return self.log.read_text()

    def wait_for(self, needle, count=1, timeout=60, since=0):
        """Waits until the log, from offset since on, holds needle count times."""
        deadline = time.monotonic() + timeout
        while self.text()[since:].count(needle) < count:
            assert self.proc.poll() is None, "replicator exited:\n" + self.text()
            assert time.monotonic() < deadline, "no %r in:\n%s" % (needle, self.text())
            time.sleep(0.05)

    def kill(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(timeout=60)


def make_tables(ddb):
    ddb.create_table(
        TableName="Orders",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "status", "AttributeType": "S"},
                              {"AttributeName": "placed", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{
            "IndexName": "byStatus",
            "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"},
                          {"AttributeName": "sk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["amount"]}}],
        LocalSecondaryIndexes=[{
            "IndexName": "byPlaced",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                          {"AttributeName": "placed", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    ddb.update_time_to_live(TableName="Orders", TimeToLiveSpecification={
        "Enabled": True, "AttributeName": "expires"})
    ddb.create_table(
        TableName="Users",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 500, "WriteCapacityUnits": 500},
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})


class Writer:
    """Random puts, updates and deletes on the source, remembering nothing: the comparison
    at the end reads both sides. Retries through a source restart."""

    def __init__(self, url, seed):
        self.ddb = boto3_client(url, retries=1)
        self.rng = random.Random(seed)
        self.done = 0

    def one(self):
        r = self.rng
        k = r.randrange(60)
        key = {"pk": {"S": "c%d" % (k % 12)}, "sk": {"N": str(k)}}
        what = r.random()
        if what < 0.5:
            item = dict(key, status={"S": r.choice(["new", "paid", "sent"])},
                        placed={"S": "2026-12-%02d" % r.randrange(1, 29)},
                        amount={"N": "%d.%02d" % (r.randrange(1000), r.randrange(100))},
                        lines={"L": [{"S": "x" * r.randrange(1, 40)}]},
                        tags={"SS": ["a", "b%d" % r.randrange(9)]},
                        blob={"B": os.urandom(r.randrange(1, 16))})
            self.ddb.put_item(TableName="Orders", Item=item)
        elif what < 0.8:
            self.ddb.update_item(TableName="Orders", Key=key,
                                 UpdateExpression="SET amount = :t, n = if_not_exists(n, :z) + :one",
                                 ExpressionAttributeValues={":t": {"N": str(r.randrange(99))},
                                                            ":z": {"N": "0"}, ":one": {"N": "1"}})
        elif what < 0.9:
            self.ddb.delete_item(TableName="Orders", Key=key)
        else:
            self.ddb.put_item(TableName="Users", Item={"id": {"S": "u%d" % r.randrange(20)},
                                                       "name": {"S": "n%d" % r.randrange(99)}})
        self.done += 1

    def run(self, n):
        for _ in range(n):
            self.one()


def scan_all(ddb, table):
    items, kw = {}, {"TableName": table, "ConsistentRead": True}
    while True:
        page = ddb.scan(**kw)
        for it in page["Items"]:
            key = tuple(sorted((a, str(it[a])) for a in ("pk", "sk", "id") if a in it))
            items[key] = it
        if "LastEvaluatedKey" not in page:
            return items
        kw["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def compare(src, dst, *extra):
    return subprocess.run([quarry_bin(), "replicate", "--compare", "--from", src.url, "--to",
                           dst.url, *extra], capture_output=True, text=True, env=ENV, timeout=120)


def wait_equal(src, dst, timeout=90):
    deadline = time.monotonic() + timeout
    while True:
        p = compare(src, dst)
        if p.returncode == 0:
            return p
        assert time.monotonic() < deadline, "the sides never agreed:\n" + p.stdout + p.stderr
        time.sleep(0.3)


def test_replicate_with_kills_of_the_replicator_and_both_servers(tmp_path):
    src, dst = Node(tmp_path, "source"), Node(tmp_path, "target")
    rep = Replicator(tmp_path, src, dst)
    try:
        s = src.client()
        make_tables(s)
        w = Writer(src.url, 26)
        w.run(400)
        # Writes go on while the replicator creates the tables and copies the items.
        rep.start()
        during = threading.Thread(target=w.run, args=(300,))
        during.start()
        rep.wait_for("Orders: created on")
        during.join()
        rep.wait_for("following its stream", count=2)
        w.run(200)
        rep.wait_for("records applied")

        # kill -9 of the replicator mid-stream, writes while it is down, a restart.
        w.run(100)
        rep.kill()
        w.run(150)
        restarted = len(rep.text())
        rep.start()
        rep.wait_for("caught up", count=2, since=restarted)  # both tables

        # kill -9 of the source mid-stream: the replicator waits for it.
        w.run(50)
        src.kill()
        time.sleep(0.5)
        src.start()
        w = Writer(src.url, 27)
        w.run(150)

        # kill -9 of the target: the changes wait on the source's stream.
        dst.kill()
        w.run(150)
        time.sleep(0.3)
        dst.start()
        w.run(100)

        first = wait_equal(src, dst)
        assert "Orders: " in first.stdout and "0 missing, 0 extra, 0 different" in first.stdout
        assert rep.stop() == 0, rep.text()

        # Independently of quarry's comparison: both sides scanned with boto3.
        d = dst.client()
        for table in ("Orders", "Users"):
            a, b = scan_all(s, table), scan_all(d, table)
            assert a == b, table
            assert len(a) > 10
        # The schema came along: indexes, billing, stream, TTL.
        t = d.describe_table(TableName="Orders")["Table"]
        assert [g["IndexName"] for g in t["GlobalSecondaryIndexes"]] == ["byStatus"]
        assert t["GlobalSecondaryIndexes"][0]["Projection"] == {
            "ProjectionType": "INCLUDE", "NonKeyAttributes": ["amount"]}
        assert [i["IndexName"] for i in t["LocalSecondaryIndexes"]] == ["byPlaced"]
        assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
        assert t["StreamSpecification"] == {"StreamEnabled": True,
                                            "StreamViewType": "NEW_AND_OLD_IMAGES"}
        ttl = d.describe_time_to_live(TableName="Orders")["TimeToLiveDescription"]
        assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
        u = d.describe_table(TableName="Users")["Table"]
        assert u["ProvisionedThroughput"]["ReadCapacityUnits"] == 500
        assert u["StreamSpecification"]["StreamViewType"] == "NEW_IMAGE"
        v = subprocess.run([quarry_bin(), "verify", "--endpoint", dst.url, "--quiet"],
                           capture_output=True, text=True, env=ENV, timeout=120)
        assert v.returncode == 0, v.stdout + v.stderr

        log = rep.text()
        assert "trying again until it answers" in log  # it waited out the servers' restarts
        assert "answers again" in log
        assert "records applied, newest" in log
    finally:
        if rep.proc and rep.proc.poll() is None:
            rep.kill()
        src.stop()
        dst.stop()


def batch_write_all(client, requests):
    """BatchWriteItem until nothing is left unprocessed: the provisioned source table
    throttles a fast loader, and what it hands back must be sent again."""
    for attempt in range(200):
        left = client.batch_write_item(RequestItems=requests).get("UnprocessedItems") or {}
        if not left:
            return
        requests = left
        time.sleep(0.05 * min(attempt + 1, 10))
    raise AssertionError("items still unprocessed after 200 tries: %r" % (requests,))


def test_kill_during_the_copy_resumes_the_copy(tmp_path):
    # The target keeps new tables CREATING a while, as DynamoDB does: the copy waits.
    src, dst = Node(tmp_path, "source"), Node(tmp_path, "target", "--delay-transient-states",
                                                 "--transient-ms", "700")
    try:
        s = src.client()
        make_tables(s)
        for i in range(0, 5000, 25):
            batch_write_all(s, {"Users": [
                {"PutRequest": {"Item": {"id": {"S": "u%05d" % j}, "pad": {"S": "p" * 50}}}}
                for j in range(i, i + 25)]})
        rep = Replicator(tmp_path, src, dst, "--tables", "Users")
        rep.start()
        rep.wait_for("Users: 500 items copied")
        rep.kill()
        before = rep.text()
        assert "following its stream" not in before
        s.delete_item(TableName="Users", Key={"id": {"S": "u00007"}})
        s.put_item(TableName="Users", Item={"id": {"S": "late"}})
        rep.args.append("--until-caught-up")
        rep.start()
        assert rep.proc.wait(timeout=120) == 0, rep.text()
        after = rep.text()[len(before):].splitlines()
        # The second run goes on from the last page checkpointed: no new table, no page
        # again from the start.
        assert "created on" not in "".join(after)
        first = int(after[0].split("Users: ")[1].split(" items copied")[0])
        assert first > 500, after[0]
        assert any(line.endswith("items copied; following its stream") for line in after)
        assert after[-1].endswith(", caught up")
        p = compare(src, dst, "--tables", "Users")
        assert p.returncode == 0, p.stdout
        assert "5000 items on the source, 5000 on the target" in p.stdout
    finally:
        src.stop()
        dst.stop()


def test_source_table_without_a_stream_is_refused_before_anything_is_written(tmp_path):
    src, dst = Node(tmp_path, "source"), Node(tmp_path, "target")
    try:
        s = src.client()
        make_tables(s)
        s.create_table(TableName="Plain", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                       AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                       BillingMode="PAY_PER_REQUEST")
        p = subprocess.run([quarry_bin(), "replicate", "--from", src.url, "--to", dst.url,
                            "--state", str(tmp_path / "st.json"), "--until-caught-up"],
                           capture_output=True, text=True, env=ENV, timeout=60)
        assert p.returncode == 2
        assert "table Plain" in p.stderr and "has no stream" in p.stderr
        assert "StreamViewType=NEW_AND_OLD_IMAGES" in p.stderr
        assert dst.client().list_tables()["TableNames"] == []
        # A KEYS_ONLY stream carries no images to apply: refused the same way.
        s.update_table(TableName="Plain", StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
        p = subprocess.run([quarry_bin(), "replicate", "--from", src.url, "--to", dst.url,
                            "--tables", "Plain", "--state", str(tmp_path / "st.json")],
                           capture_output=True, text=True, env=ENV, timeout=60)
        assert p.returncode == 2 and "a KEYS_ONLY stream" in p.stderr
        assert dst.client().list_tables()["TableNames"] == []
    finally:
        src.stop()
        dst.stop()


def test_a_first_run_fails_at_once_on_an_endpoint_it_cannot_reach(tmp_path):
    src = Node(tmp_path, "source")
    try:
        make_tables(src.client())
        nowhere = "http://127.0.0.1:%d" % free_port()
        p = subprocess.run([quarry_bin(), "replicate", "--from", src.url, "--to", nowhere,
                            "--state", str(tmp_path / "st.json")],
                           capture_output=True, text=True, env=ENV, timeout=60)
        assert p.returncode == 2
        assert p.stderr.startswith("quarry replicate: cannot reach %s: " % nowhere), p.stderr
        assert not (tmp_path / "st.json").exists()
    finally:
        src.stop()


def test_existing_target_table_and_foreign_state_are_refused(tmp_path):
    src, dst = Node(tmp_path, "source"), Node(tmp_path, "target")
    try:
        make_tables(src.client())
        dst.client().create_table(
            TableName="Users", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST")
        dst.client().put_item(TableName="Users", Item={"id": {"S": "mine"}})
        state = tmp_path / "st.json"
        p = subprocess.run([quarry_bin(), "replicate", "--from", src.url, "--to", dst.url,
                            "--tables", "Users", "--state", str(state), "--until-caught-up"],
                           capture_output=True, text=True, env=ENV, timeout=60)
        assert p.returncode == 2
        assert "table Users already exists on %s" % dst.url in p.stderr
        assert dst.client().get_item(TableName="Users", Key={"id": {"S": "mine"}})["Item"]
        # The state file names its endpoints; one of another pair is refused.
        other = "http://127.0.0.1:%d" % free_port()
        p = subprocess.run([quarry_bin(), "replicate", "--from", src.url, "--to", other,
                            "--tables", "Users", "--state", str(state)],
                           capture_output=True, text=True, env=ENV, timeout=60)
        assert p.returncode == 2 and "is of a replication from" in p.stderr
        # Comparing finds the difference.
        c = compare(src, dst)
        assert c.returncode == 1 and "on the target only" in c.stdout
    finally:
        src.stop()
        dst.stop()


def test_a_new_stream_is_followed_and_a_deleted_table_ends(tmp_path):
    src, dst = Node(tmp_path, "source"), Node(tmp_path, "target")
    rep = Replicator(tmp_path, src, dst, "--tables", "Users")
    try:
        s, d = src.client(), dst.client()
        make_tables(s)
        s.put_item(TableName="Users", Item={"id": {"S": "before"}})
        rep.start()
        rep.wait_for("caught up")
        # The stream disabled and enabled again: a new stream, followed from its start; what
        # was written while none was enabled is in neither, and --compare says so.
        s.update_table(TableName="Users", StreamSpecification={"StreamEnabled": False})
        s.put_item(TableName="Users", Item={"id": {"S": "unstreamed"}})
        s.update_table(TableName="Users", StreamSpecification={
            "StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        s.put_item(TableName="Users", Item={"id": {"S": "after"}})
        rep.wait_for("a new one enabled; following it from its start")
        deadline = time.monotonic() + 30
        while "Item" not in d.get_item(TableName="Users", Key={"id": {"S": "after"}}):
            assert time.monotonic() < deadline, rep.text()
            time.sleep(0.1)
        assert "Item" not in d.get_item(TableName="Users", Key={"id": {"S": "unstreamed"}})
        c = compare(src, dst, "--tables", "Users")
        assert c.returncode == 1 and '{"id":{"S":"unstreamed"}} is missing on the target' in c.stdout
        # The source table deleted: its last changes applied, then its replication is over
        # and the replicator goes on (for the other tables it may have) until stopped.
        s.put_item(TableName="Users", Item={"id": {"S": "last"}})
        rep.wait_for("Users: ", count=1, since=len(rep.text()))
        s.delete_item(TableName="Users", Key={"id": {"S": "after"}})
        s.delete_table(TableName="Users")
        rep.wait_for("Users: deleted on %s, its stream read to the end" % src.url)
        assert "Item" not in d.get_item(TableName="Users", Key={"id": {"S": "after"}})
        assert "Item" in d.get_item(TableName="Users", Key={"id": {"S": "last"}})
        assert rep.proc.poll() is None
        assert rep.stop() == 0
        # Started again on its state, it has nothing left to do.
        rep.args.append("--until-caught-up")
        rep.start()
        assert rep.proc.wait(timeout=60) == 0, rep.text()
    finally:
        if rep.proc and rep.proc.poll() is None:
            rep.kill()
        src.stop()
        dst.stop()


def test_a_table_deleted_while_the_replicator_is_down_is_drained(tmp_path):
    src, dst = Node(tmp_path, "source"), Node(tmp_path, "target")
    rep = Replicator(tmp_path, src, dst, "--tables", "Users")
    try:
        s, d = src.client(), dst.client()
        make_tables(s)
        s.put_item(TableName="Users", Item={"id": {"S": "one"}})
        rep.start()
        rep.wait_for("caught up")
        rep.kill()
        s.put_item(TableName="Users", Item={"id": {"S": "two"}})
        s.delete_item(TableName="Users", Key={"id": {"S": "one"}})
        s.delete_table(TableName="Users")
        rep.args.append("--until-caught-up")
        rep.start()
        assert rep.proc.wait(timeout=60) == 0, rep.text()
        assert "Users: deleted on %s" % src.url in rep.text()
        assert [i["id"]["S"] for i in d.scan(TableName="Users")["Items"]] == ["two"]
    finally:
        if rep.proc and rep.proc.poll() is None:
            rep.kill()
        src.stop()
        dst.stop()
