"""quarry reconcile against an application's drifted copies, as the application's tests
would meet them: an order store (examples/orders.yaml) whose orders copy their
customer's name, seeded through boto3, some customers renamed without their orders, one
copy miswritten, one customer deleted. reconcile must count exactly those, list their
keys, repair them through the API (--endpoint) or in-process (--data), and find nothing
on the next run. A run of --data beside the running server reads the data read-only."""
import json
import os
import subprocess

import pytest

from conftest import boto3_client, quarry_bin

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ORDERS = os.path.join(ROOT, "examples", "orders.yaml")
ENV = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
           AWS_REGION="us-east-1")
CUSTOMERS, ORDERS_EACH = 20, 5
RENAMED = ["c03", "c07", "c11"]
TYPO = ("c15", "o15-2")
DELETED = "c19"


def quarry(*args, timeout=120):
    return subprocess.run([quarry_bin(), *args], capture_output=True, text=True, env=ENV,
                          timeout=timeout)


def seed(srv):
    p = quarry("model", "apply", ORDERS, "--endpoint", srv.url)
    assert p.returncode == 0, p.stdout + p.stderr
    ddb = boto3_client(srv.url)
    items = []
    for c in range(CUSTOMERS):
        cid = "c%02d" % c
        items.append({"PK": {"S": "CUSTOMER#" + cid}, "SK": {"S": "PROFILE"},
                      "customerId": {"S": cid}, "name": {"S": "Name of " + cid}})
        for o in range(ORDERS_EACH):
            oid = "o%02d-%d" % (c, o)
            items.append({"PK": {"S": "CUSTOMER#" + cid}, "SK": {"S": "ORDER#" + oid},
                          "customerId": {"S": cid}, "orderId": {"S": oid},
                          "status": {"S": "PENDING"}, "GSI1PK": {"S": "STATUS#PENDING"},
                          "GSI1SK": {"S": "2026-03-14T09:00:00Z#" + oid},
                          "customerName": {"S": "Name of " + cid}, "total": {"N": "10"}})
            # order items are no copies and must not be counted as any
            items.append({"PK": {"S": "CUSTOMER#" + cid}, "SK": {"S": "ORDER#%s#ITEM#001" % oid},
                          "customerId": {"S": cid}, "orderId": {"S": oid},
                          "line": {"S": "001"}, "sku": {"S": "X"}})
    for i in range(0, len(items), 25):
        ddb.batch_write_item(RequestItems={"Shop": [{"PutRequest": {"Item": it}}
                                                    for it in items[i:i + 25]]})
    # the drift: renamed customers whose orders were not updated, a miswritten copy, and
    # a deleted customer whose orders are left
    for cid in RENAMED:
        ddb.update_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#" + cid}, "SK": {"S": "PROFILE"}},
                        UpdateExpression="SET #n = :n", ExpressionAttributeNames={"#n": "name"},
                        ExpressionAttributeValues={":n": {"S": "Renamed " + cid}})
    ddb.update_item(TableName="Shop",
                    Key={"PK": {"S": "CUSTOMER#" + TYPO[0]}, "SK": {"S": "ORDER#" + TYPO[1]}},
                    UpdateExpression="SET customerName = :n",
                    ExpressionAttributeValues={":n": {"S": "Nmae of " + TYPO[0]}})
    ddb.delete_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#" + DELETED}, "SK": {"S": "PROFILE"}})
    return ddb


def expected_stale():
    keys = {("CUSTOMER#" + cid, "ORDER#o%s-%d" % (cid[1:], o)) for cid in RENAMED
            for o in range(ORDERS_EACH)}
    keys.add(("CUSTOMER#" + TYPO[0], "ORDER#" + TYPO[1]))
    return keys


def run_json(*args):
    p = quarry("reconcile", "--model", ORDERS, "--json", "--samples", "100", *args)
    assert p.returncode in (0, 1), p.stdout + p.stderr
    return p.returncode, json.loads(p.stdout)


def check_report(doc, repaired=None):
    (copy,) = doc["copies"]
    assert copy["copy"] == "Order.customerName" and copy["source"] == "Customer.name"
    assert copy["checked"] == CUSTOMERS * ORDERS_EACH  # the deleted customer's orders too
    assert copy["orphans"] == ORDERS_EACH
    assert {o["PK"]["S"] for o in copy["orphan_samples"]} == {"CUSTOMER#" + DELETED}
    assert copy["stale"] == len(expected_stale()) == doc["stale"]
    got = {(s["key"]["PK"]["S"], s["key"]["SK"]["S"]) for s in copy["samples"]}
    assert got == expected_stale()
    for s in copy["samples"]:
        cid = s["key"]["PK"]["S"].split("#")[1]
        assert s["source_key"] == {"PK": {"S": "CUSTOMER#" + cid}, "SK": {"S": "PROFILE"}}
        want = "Renamed " + cid if cid in RENAMED else "Name of " + cid
        assert s["source_value"] == {"S": want}
        assert s["value"]["S"] in ("Name of " + cid, "Nmae of " + cid)
    if repaired is not None:
        assert copy["repaired"] == repaired and copy["skipped"] == 0 and copy["failed"] == 0


def check_repaired(ddb):
    for pk, sk in expected_stale():
        item = ddb.get_item(TableName="Shop", Key={"PK": {"S": pk}, "SK": {"S": sk}},
                            ConsistentRead=True)["Item"]
        cid = pk.split("#")[1]
        assert item["customerName"]["S"] == ("Renamed " + cid if cid in RENAMED else "Name of " + cid)
        assert item["total"] == {"N": "10"}  # the rest of the item is untouched


def test_reconcile_over_the_endpoint(start):
    srv = start()
    ddb = seed(srv)
    status, doc = run_json("--endpoint", srv.url)
    assert status == 1
    check_report(doc)
    # the text report says the same
    p = quarry("reconcile", "--model", ORDERS, "--endpoint", srv.url)
    assert p.returncode == 1
    assert "Order.customerName, a copy of Customer.name (table Shop): 100 checked, 16 stale, " \
           "5 without a source item" in p.stdout, p.stdout
    assert "16 stale copies" in p.stdout
    assert "reconcile of Shop: done, 219 items" in p.stderr, p.stderr
    status, doc = run_json("--endpoint", srv.url, "--repair")
    assert status == 0
    check_report(doc, repaired=16)
    assert doc["repaired"] == 16
    check_repaired(ddb)
    status, doc = run_json("--endpoint", srv.url)
    assert status == 0 and doc["stale"] == 0 and doc["copies"][0]["orphans"] == ORDERS_EACH


def test_reconcile_over_the_data_folder(start):
    srv = start()
    seed(srv)
    # beside the running server: read-only, so a report but no repair
    status, doc = run_json("--data", str(srv.data_dir))
    assert status == 1
    check_report(doc)
    p = quarry("reconcile", "--model", ORDERS, "--data", str(srv.data_dir), "--repair")
    assert p.returncode == 2 and "use --endpoint" in p.stderr, p.stderr
    assert srv.stop() == 0
    status, doc = run_json("--data", str(srv.data_dir), "--repair")
    assert status == 0
    check_report(doc, repaired=16)
    status, doc = run_json("--data", str(srv.data_dir))
    assert status == 0 and doc["stale"] == 0
    srv2 = start(data=srv.data_dir)
    check_repaired(boto3_client(srv2.url))


BEHIND = """
tables: {Chat: {partition_key: PK, sort_key: SK}}
entities:
  Thread:
    pk: "THREAD#{threadId}"
    sk: META
    attributes: {threadId: id, title: text, updatedAt: timestamp}
  Conversation:
    pk: "USER#{member}"
    sk: "CONV#{threadId}"
    attributes:
      member: id
      threadId: id
      updatedAt: timestamp
      title: {type: string, copy_of: Thread.title}
access_patterns: []
denormalised: [{source: Thread.title, copies: [Conversation.title], strategy: stream}]
"""


def test_reconcile_says_how_far_behind(start, tmp_path):
    srv = start()
    model = tmp_path / "chat.yaml"
    model.write_text(BEHIND)
    ddb = boto3_client(srv.url)
    ddb.create_table(TableName="Chat", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"},
                                           {"AttributeName": "SK", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"},
                                {"AttributeName": "SK", "KeyType": "RANGE"}])
    put = lambda **kw: ddb.put_item(TableName="Chat", Item={k: {"S": v} for k, v in kw.items()})
    put(PK="THREAD#t1", SK="META", threadId="t1", title="Launch (moved)",
        updatedAt="2026-03-14T12:30:00Z")
    put(PK="USER#u1", SK="CONV#t1", member="u1", threadId="t1", title="Launch",
        updatedAt="2026-03-14T11:00:00Z")
    put(PK="USER#u2", SK="CONV#t1", member="u2", threadId="t1", title="Launch (moved)",
        updatedAt="2026-03-14T12:30:00Z")
    p = quarry("reconcile", "--model", str(model), "--endpoint", srv.url, "--json")
    assert p.returncode == 1, p.stderr
    (copy,) = json.loads(p.stdout)["copies"]
    assert copy["checked"] == 2 and copy["stale"] == 1
    assert copy["stamp"] == "updatedAt" and copy["max_behind_seconds"] == 5400
    assert copy["samples"][0]["key"] == {"PK": {"S": "USER#u1"}, "SK": {"S": "CONV#t1"}}
    assert copy["samples"][0]["behind_seconds"] == 5400
    p = quarry("reconcile", "--model", str(model), "--endpoint", srv.url)
    assert "the stalest updatedAt behind by 90 min" in p.stdout, p.stdout


def test_reconcile_bad_input(start, tmp_path):
    srv = start()
    nocopies = tmp_path / "plain.yaml"
    nocopies.write_text("tables: {T: {partition_key: PK}}\nentities:\n  A: {pk: \"A#{id}\", "
                        "attributes: {id: id}}\naccess_patterns: []\n")
    p = quarry("reconcile", "--model", str(nocopies), "--endpoint", srv.url)
    assert p.returncode == 2 and "declares no denormalised copies" in p.stderr, p.stderr
    # the live table's key is not the model's
    ddb = boto3_client(srv.url)
    ddb.create_table(TableName="Shop", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    p = quarry("reconcile", "--model", ORDERS, "--endpoint", srv.url)
    assert p.returncode == 2 and "table Shop's key is (id) where the model says (PK, SK)" in p.stderr, p.stderr
    # a table the model names that does not exist, a model that does not load, no target
    ddb.delete_table(TableName="Shop")
    p = quarry("reconcile", "--model", ORDERS, "--endpoint", srv.url)
    assert p.returncode == 2 and "ResourceNotFoundException" in p.stderr, p.stderr
    broken = tmp_path / "broken.yaml"
    broken.write_text("tables: {T: {partition_key: PK}}\nentities:\n  A:\n    pk: \"A#{id}\"\n"
                      "    attributes: {id: id, n: {type: string, copy_of: Nobody.name}}\n"
                      "access_patterns: []\n")
    p = quarry("reconcile", "--model", str(broken), "--endpoint", srv.url)
    assert p.returncode == 2 and "broken.yaml:5:" in p.stderr and "Nobody" in p.stderr, p.stderr
    assert quarry("reconcile", "--model", ORDERS).returncode == 2
    p = quarry("reconcile", "--model", ORDERS, "--data", str(tmp_path / "nothing"))
    assert p.returncode == 2 and "no database there" in p.stderr, p.stderr
