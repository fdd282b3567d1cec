"""quarry verify against a running server, both ways: through the API (--endpoint: each
table and index read with Scan, the projections compared) and by opening the data folder
the server holds read-only (--data), instead of failing on RocksDB's lock. Both must
check the same indexes and report the same figures; both must see the entries a lagging
global index has not applied yet, and agree again once it has."""
import os
import re
import subprocess
import time

from conftest import boto3_client, quarry_bin

ENV = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
           AWS_REGION="us-east-1")


def quarry(*args):
    return subprocess.run([quarry_bin(), *args], capture_output=True, text=True, env=ENV,
                          timeout=120)


def make_table(ddb, n):
    ddb.create_table(
        TableName="Events", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": t}
                              for a, t in (("pk", "S"), ("sk", "N"), ("kind", "S"), ("at", "S"))],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[
            {"IndexName": "ByKind", "KeySchema": [{"AttributeName": "kind", "KeyType": "HASH"},
                                                  {"AttributeName": "at", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["note"]}},
            {"IndexName": "All", "KeySchema": [{"AttributeName": "kind", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[
            {"IndexName": "ByAt", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                {"AttributeName": "at", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}])
    put(ddb, 0, n)


def put(ddb, lo, hi):
    for i in range(lo, hi, 25):
        batch = []
        for j in range(i, min(hi, i + 25)):
            item = {"pk": {"S": "dev%d" % (j % 13)}, "sk": {"N": str(j)},
                    "note": {"S": "n%d" % j}, "other": {"N": "1.50"}}
            if j % 4:  # sparse: a quarter of the items are in no index but the table
                item["kind"] = {"S": "k%d" % (j % 3)}
                item["at"] = {"S": "2026-03-14T09:%02d:00Z" % (j % 60)}
            batch.append({"PutRequest": {"Item": item}})
        ddb.batch_write_item(RequestItems={"Events": batch})


def summaries(out):
    return sorted(re.findall(r"^Events index \S+: .*$", out, re.M))


def test_verify_a_live_server_both_ways(start):
    srv = start()
    ddb = boto3_client(srv.url)
    make_table(ddb, 800)
    api = quarry("verify", "--endpoint", srv.url)
    assert api.returncode == 0, api.stdout + api.stderr
    assert "3 indexes checked, 0 differences" in api.stdout
    assert "Events index ByKind: 600 base entries expected, 600 stored, 0 differences" in api.stdout
    assert "verify of Events: done, 800 items" in api.stderr, api.stderr
    # the folder the server holds: read-only, not refused
    data = quarry("verify", "--data", str(srv.data_dir))
    assert data.returncode == 0, data.stdout + data.stderr
    assert "read-only" in data.stderr
    assert summaries(data.stdout) == summaries(api.stdout) and len(summaries(api.stdout)) == 3
    # one table by name, and a table that does not exist
    one = quarry("verify", "--endpoint", srv.url, "Events")
    assert one.returncode == 0 and summaries(one.stdout) == summaries(api.stdout)
    none = quarry("verify", "--endpoint", srv.url, "Nope")
    assert none.returncode == 1 and "no table named Nope" in none.stdout, none.stdout
    # the server is untouched by either
    assert ddb.scan(TableName="Events", Select="COUNT")["Count"] == 800


def test_verify_sees_what_a_lagging_index_has_not_applied(start):
    srv = start("--gsi-lag-ms", "6000")
    ddb = boto3_client(srv.url)
    make_table(ddb, 40)
    time.sleep(6.5)
    assert quarry("verify", "--endpoint", srv.url).returncode == 0
    put(ddb, 40, 60)  # 15 of them indexed, held back 6 s from both global indexes
    api = quarry("verify", "--endpoint", srv.url)
    assert api.returncode == 1, api.stdout
    assert "read again after 1 s" in api.stdout
    assert len(re.findall(r"^  Events\.ByKind: missing entry for item ", api.stdout, re.M)) == 15
    assert "Events index ByKind: 45 base entries expected, 30 stored, 15 differences" in api.stdout
    data = quarry("verify", "--data", str(srv.data_dir))
    assert data.returncode == 1, data.stdout
    assert re.search(r"warning: \d+ global index updates were pending", data.stdout), data.stdout
    assert "Events index ByKind: 45 base entries expected, 30 stored, 15 differences" in data.stdout
    time.sleep(6.5)
    for args in (["--endpoint", srv.url], ["--data", str(srv.data_dir)]):
        p = quarry("verify", *args)
        assert p.returncode == 0, p.stdout + p.stderr


def test_verify_usage():
    assert quarry("verify", "--endpoint", "http://127.0.0.1:1", "--data", "x").returncode == 2
    p = quarry("verify", "--data", "/nonexistent/quarry")
    assert p.returncode == 2 and "no database there" in p.stderr
    p = quarry("verify", "--endpoint", "http://127.0.0.1:1")
    assert p.returncode == 2 and "ListTables" in p.stderr, p.stderr
