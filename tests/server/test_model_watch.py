"""`quarry serve --model`: an application's requests matched to its model's access
patterns, through boto3. Each test plays one application mistake against
tests/server/models/shop.yaml (a Scan with a filter, an undeclared query, an over-read, an
unpadded sort key, a strong read on a GSI, ...) and reads the finding back from
QuarryDescribeModel and from the server log; --strict refuses; a model that does not load
stops the server with the checker's FILE:LINE:COL; a model that differs from the live
tables is reported while the server serves; `quarry model observe` reports what was sent."""
import json
import os
import subprocess

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client, launch, quarry_bin, raw

MODEL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models", "shop.yaml")
TARGET = "DynamoDB_20120810."


def describe(server, **body):
    r = raw(server.url, TARGET + "QuarryDescribeModel", body)
    assert r.status == 200, r.body
    return r.json()


def findings(server, kind):
    return [f for f in describe(server)["Findings"] if f["Kind"] == kind]


def pattern(server, name):
    return next(p for p in describe(server)["Patterns"] if p["Name"] == name)


def create_shop(c):
    s = lambda n: {"AttributeName": n, "AttributeType": "S"}
    key = lambda h, r=None: [{"AttributeName": h, "KeyType": "HASH"}] + (
        [{"AttributeName": r, "KeyType": "RANGE"}] if r else [])
    c.create_table(
        TableName="Shop", KeySchema=key("PK", "SK"), BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[s("PK"), s("SK"), s("GSI1PK"), s("GSI1SK"), s("email")],
        GlobalSecondaryIndexes=[
            {"IndexName": "GSI1", "KeySchema": key("GSI1PK", "GSI1SK"),
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "ByEmail", "KeySchema": key("email"),
             "Projection": {"ProjectionType": "ALL"}}])


def put_order(c, customer, order, status="PENDING", when="2026-03-14T09:14:00Z"):
    c.put_item(TableName="Shop", Item={
        "PK": {"S": "CUSTOMER#" + customer}, "SK": {"S": "ORDER#" + order},
        "customerId": {"S": customer}, "orderId": {"S": order}, "status": {"S": status},
        "createdAt": {"S": when}, "total": {"N": "10"},
        "GSI1PK": {"S": "STATUS#" + status}, "GSI1SK": {"S": when + "#" + order}})


@pytest.fixture
def shop(start):
    srv = start("--model", MODEL)
    c = boto3_client(srv.url)
    create_shop(c)
    c.put_item(TableName="Shop", Item={"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"},
                                       "name": {"S": "Ann"}, "email": {"S": "ann@example.com"}})
    return srv, c


def test_no_model_lists_nothing(server):
    assert describe(server) == {"Models": [], "Patterns": [], "Findings": [],
                                "UnusedIndexes": [], "UnexercisedPatterns": []}


def test_entities_come_with_their_key_templates(shop):
    (model,) = describe(shop[0])["Models"]
    order = next(e for e in model["Entities"] if e["Name"] == "Order")
    assert order["PartitionKey"] == "CUSTOMER#{customerId}"
    assert order["SortKey"] == "ORDER#{orderId}"
    assert order["Indexes"]["GSI1"] == {"PartitionKey": "STATUS#{status}",
                                        "SortKey": "{createdAt}#{orderId}"}
    assert {e["Name"] for e in model["Entities"]} >= {"Customer", "Order", "OrderItem"}


def test_declared_reads_are_counted_not_flagged(shop):
    srv, c = shop
    for i in range(5):
        put_order(c, "c1", "o%02d" % i)
    for _ in range(3):
        assert "Item" in c.get_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c1"},
                                                           "SK": {"S": "PROFILE"}})
    for _ in range(2):
        r = c.query(TableName="Shop", KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
                    ExpressionAttributeValues={":p": {"S": "CUSTOMER#c1"}, ":s": {"S": "ORDER#"}},
                    ScanIndexForward=False, Limit=20)
        assert r["Count"] == 5
    get = pattern(srv, "get-customer")
    assert get["Operation"] == "GetItem" and get["Observed"]["Requests"] == 3
    assert get["Observed"]["ItemsReturned"] == 3 and get["Observed"]["ReadUnits"] == 1.5
    orders = pattern(srv, "customer-orders")
    assert orders["Observed"]["Requests"] == 2
    assert orders["Observed"]["ItemsRead"] == 10 and orders["Observed"]["ItemsReturned"] == 10
    assert orders["Declared"] == {"Rps": 100, "LatencyMs": 0, "Limit": 20, "ResultSize": 0,
                                  "Consistency": "eventual", "Direction": "desc"}
    assert pattern(srv, "place-order")["Observed"]["Requests"] == 5
    assert pattern(srv, "place-order")["Observed"]["WriteUnits"] == 5
    d = describe(srv)
    assert not [f for f in d["Findings"] if f["Kind"] in ("UndeclaredPattern", "Scan")], d
    assert {"Table": "Shop", "Index": "ByEmail"} in d["UnusedIndexes"]
    assert "customer-by-email" in d["UnexercisedPatterns"]
    assert "get-customer" not in d["UnexercisedPatterns"]
    assert describe(srv, TableName="Other")["Patterns"] == []


def test_scan_with_filter_is_flagged_once_per_window(shop):
    srv, c = shop
    for i in range(12):
        put_order(c, "c%d" % i, "o1")
    for _ in range(2):
        c.scan(TableName="Shop", FilterExpression="#s = :v",
               ExpressionAttributeNames={"#s": "status"},
               ExpressionAttributeValues={":v": {"S": "SHIPPED"}})
    (scan,) = findings(srv, "Scan")
    assert scan["Count"] == 2 and scan["Table"] == "Shop"
    assert scan["Sample"]["FilterExpression"] == "#s = :v"
    assert "13 items" in scan["Message"] and "81000000 items" in scan["Message"]
    (heavy,) = findings(srv, "FilterHeavy")
    assert heavy["Count"] == 2 and "read 13 items and its filter kept 0" in heavy["Message"]
    assert srv.log().count("finding=Scan ") == 1


def test_partiql_select_that_scans_is_flagged(shop):
    srv, c = shop
    c.execute_statement(Statement="SELECT * FROM \"Shop\" WHERE sku = 'x'")
    (scan,) = findings(srv, "Scan")
    assert scan["Operation"] == "ExecuteStatement"
    assert scan["Sample"] == {"Statement": "SELECT * FROM \"Shop\" WHERE sku = 'x'"}


def test_undeclared_query_names_the_nearest_pattern(shop):
    srv, c = shop
    c.query(TableName="Shop", KeyConditionExpression="PK = :p",
            ExpressionAttributeValues={":p": {"S": "CUSTOMER#c1"}})
    (f,) = findings(srv, "UndeclaredPattern")
    assert f["Pattern"] in ("customer-orders", "order-lines"), f
    assert 'PK = "CUSTOMER#{customerId}" and no sort-key condition' in f["Message"]
    assert "nearest declared pattern is " + f["Pattern"] in f["Message"]
    assert "another sort-key condition" in f["Message"]
    assert f["Sample"]["KeyConditionExpression"] == "PK = :p"
    # the declared direction is part of the pattern: ascending is another one
    c.query(TableName="Shop", KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
            ExpressionAttributeValues={":p": {"S": "CUSTOMER#c1"}, ":s": {"S": "ORDER#"}})
    (asc,) = [x for x in findings(srv, "UndeclaredPattern") if x["Pattern"] == "customer-orders"]
    assert "the other direction" in asc["Message"]


def test_over_read_of_a_limited_pattern(shop):
    srv, c = shop
    for i in range(45):
        put_order(c, "c1", "o%03d" % i)
    r = c.query(TableName="Shop", KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
                ExpressionAttributeValues={":p": {"S": "CUSTOMER#c1"}, ":s": {"S": "ORDER#"}},
                ScanIndexForward=False)
    assert r["Count"] == 45
    (f,) = findings(srv, "OverRead")
    assert f["Pattern"] == "customer-orders" and "read 45 items" in f["Message"]
    assert "limit of 20" in f["Message"]


def test_unpadded_key_and_bad_date_at_write_time(shop):
    srv, c = shop
    c.put_item(TableName="Shop", Item={"PK": {"S": "CUSTOMER#c1"},
                                       "SK": {"S": "ORDER#o1#ITEM#7"}, "sku": {"S": "x"}})
    c.put_item(TableName="Shop", Item={"PK": {"S": "CUSTOMER#c1"},
                                       "SK": {"S": "ORDER#o1#ITEM#008"},
                                       "shippedOn": {"S": "14/3/2026"}})
    bad = findings(srv, "BadFormat")
    msgs = " | ".join(f["Message"] for f in bad)
    assert 'line in it is "7", not zero-padded to 3 digits' in msgs, msgs
    assert 'shippedOn that is "14/3/2026", not a date of the form YYYY-MM-DD' in msgs, msgs
    assert len(bad) == 2
    # the same through UpdateItem's result and a transaction
    c.update_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c2"}, "SK": {"S": "ORDER#o2"}},
                  UpdateExpression="SET #s = :s", ExpressionAttributeNames={"#s": "status"},
                  ExpressionAttributeValues={":s": {"S": "LOST"}})
    c.transact_write_items(TransactItems=[{"Put": {"TableName": "Shop", "Item": {
        "PK": {"S": "CUSTOMER#c3"}, "SK": {"S": "ORDER#o3#ITEM#12"}}}}])
    bad = findings(srv, "BadFormat")
    msgs = " | ".join(f["Message"] for f in bad)
    assert 'status that is "LOST", not one of its 3 declared values' in msgs
    # the transaction's unpadded line is the same finding again, counted
    (line,) = [f for f in bad if "zero-padded" in f["Message"]]
    assert line["Count"] == 2
    assert pattern(srv, "update-status")["Observed"]["Requests"] == 1


def test_item_matching_no_entity(shop):
    srv, c = shop
    c.batch_write_item(RequestItems={"Shop": [{"PutRequest": {"Item": {
        "PK": {"S": "USER#u1"}, "SK": {"S": "PROFILE"}}}}]})
    (f,) = findings(srv, "UnmatchedItem")
    assert 'PK = "USER#u1", SK = "PROFILE" follows no entity' in f["Message"]
    assert "Customer CUSTOMER#{customerId} / PROFILE" in f["Message"]


def test_strong_read_on_a_gsi(shop):
    srv, c = shop
    with pytest.raises(ClientError) as e:
        c.query(TableName="Shop", IndexName="GSI1", ConsistentRead=True,
                KeyConditionExpression="GSI1PK = :p",
                ExpressionAttributeValues={":p": {"S": "STATUS#PENDING"}})
    assert e.value.response["Error"]["Code"] == "ValidationException"
    (f,) = findings(srv, "StrongReadOnIndex")
    assert f["Index"] == "GSI1" and f["Pattern"] == "orders-by-status"


def test_rate_above_declared_and_latency_over_budget(shop):
    srv, c = shop
    for _ in range(12):
        c.query(TableName="Shop", KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
                ExpressionAttributeValues={":p": {"S": "CUSTOMER#c1"},
                                           ":s": {"S": "ORDER#o1#ITEM#"}})
    (rate,) = findings(srv, "RateAboveDeclared")
    assert rate["Pattern"] == "order-lines" and "declared 2 per second" in rate["Message"]
    put_order(c, "c1", "o1")
    c.query(TableName="Shop", IndexName="GSI1", KeyConditionExpression="GSI1PK = :p",
            ExpressionAttributeValues={":p": {"S": "STATUS#PENDING"}})
    (slow,) = findings(srv, "LatencyOverBudget")
    assert slow["Pattern"] == "orders-by-status" and "0.001 ms" in slow["Message"]
    obs = pattern(srv, "orders-by-status")["Observed"]
    assert obs["Requests"] == 1 and obs["P99Ms"] >= obs["P50Ms"] > 0


def test_strict_refuses_scans_and_undeclared_reads(start):
    srv = start("--model", MODEL, "--strict")
    c = boto3_client(srv.url)
    create_shop(c)
    with pytest.raises(ClientError) as e:
        c.scan(TableName="Shop")
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationException"
    assert "quarry --strict: Scan of table Shop is not an access pattern" in err["Message"]
    assert "shop.yaml" in err["Message"]
    with pytest.raises(ClientError) as e:
        c.execute_statement(Statement="SELECT * FROM \"Shop\"")
    assert "model declares no Scan" in e.value.response["Error"]["Message"]
    with pytest.raises(ClientError) as e:
        c.get_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "ADDRESS"}})
    msg = e.value.response["Error"]["Message"]
    assert "is not an access pattern" in msg and "nearest declared pattern is get-customer" in msg
    # declared patterns run
    c.get_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}})
    assert pattern(srv, "get-customer")["Observed"]["Requests"] == 1
    assert describe(srv)["Strict"] is True


def test_model_that_does_not_load_stops_serve(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("tables:\n  T:\n    partition_key: PK\n    colour: blue\n"
                   "entities: {}\naccess_patterns: []\n")
    check = subprocess.run([quarry_bin(), "model", "check", str(bad)], capture_output=True,
                           text=True)
    assert check.returncode == 2 and check.stderr.startswith(str(bad) + ":4:5: ")
    proc = launch(tmp_path / "data", tmp_path / "serve.log", "--model", str(bad))
    assert not hasattr(proc, "url"), "quarry serve started with a model that does not load"
    assert proc.returncode == 2
    assert check.stderr.strip() in (tmp_path / "serve.log").read_text()
    assert not (tmp_path / "data").exists()


def test_mismatched_model_is_reported_and_serves(start, tmp_path):
    data = tmp_path / "shared"
    first = start(data=data)
    boto3_client(first.url).create_table(
        TableName="Shop", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"}])
    assert first.stop() == 0
    srv = start("--model", MODEL, data=data)
    log = srv.log()
    assert "table Shop: partition key is pk (S), the model says PK (S)" in log
    assert "table Shop: index GSI1 is not in the live table" in log
    c = boto3_client(srv.url)
    assert c.list_tables()["TableNames"] == ["Shop"]
    c.put_item(TableName="Shop", Item={"pk": {"S": "a"}, "sk": {"S": "b"}})
    (m,) = describe(srv)["Models"]
    assert m["File"] == MODEL and m["Tables"] == ["Shop"]
    assert "table Shop: sort key is sk, the model says SK" in m["Mismatches"]
    assert "table Shop: index ByEmail is not in the live table" in m["Mismatches"]


def test_model_observe_reports_what_was_sent(shop, tmp_path):
    srv, c = shop
    for i in range(4):
        put_order(c, "c1", "o%d" % i)
    for _ in range(7):
        c.get_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}})
    for _ in range(3):
        c.query(TableName="Shop", KeyConditionExpression="PK = :p AND begins_with(SK, :s)",
                ExpressionAttributeValues={":p": {"S": "CUSTOMER#c1"}, ":s": {"S": "ORDER#"}},
                ScanIndexForward=False, Limit=20)
    c.scan(TableName="Shop")
    env = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
               AWS_REGION="us-east-1")
    out = subprocess.run([quarry_bin(), "model", "observe", "--endpoint", srv.url, "--json"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    rep = json.loads(out.stdout)
    by = {p["Name"]: p for p in rep["Patterns"]}
    get = by["get-customer"]["Observed"]
    assert get["Requests"] == 7 and get["ItemsReturned"] == 7 and get["ReadUnits"] == 3.5
    q = by["customer-orders"]["Observed"]
    assert q["Requests"] == 3 and q["ItemsRead"] == 12 and q["ItemsReturned"] == 12
    assert by["place-order"]["Observed"]["Requests"] == 4
    assert by["place-order"]["Observed"]["WriteUnits"] == 4
    # cost: rps x units x seconds a month x the price table's price
    cost = get["MonthlyCost"]["OnDemand"]
    assert cost == pytest.approx(get["Rps"] * 0.5 * 730 * 3600 * 0.125 / 1e6)
    assert rep["Prices"]["Region"] == "us-east-1"
    assert "customer-by-email" in rep["UnexercisedPatterns"]
    assert {"Table": "Shop", "Index": "ByEmail"} in rep["UnusedIndexes"]
    assert [f["Kind"] for f in rep["Findings"]] == ["Scan"]
    assert rep["HotKeys"][0]["Insights"] == "DISABLED"
    text = subprocess.run([quarry_bin(), "model", "observe", "--endpoint", srv.url,
                           "--model", MODEL], capture_output=True, text=True, env=env)
    assert text.returncode == 0, text.stderr
    assert "get-customer" in text.stdout and "patterns no traffic exercised: customer-by-email" \
        in text.stdout
    # check --observed: the observed rates replace the declared ones
    observed = tmp_path / "observed.json"
    observed.write_text(out.stdout)
    chk = subprocess.run([quarry_bin(), "model", "check", MODEL, "--observed", str(observed),
                          "--json"], capture_output=True, text=True)
    assert chk.returncode == 0, chk.stderr
    assert "from " + str(observed) in chk.stderr
    declared = subprocess.run([quarry_bin(), "model", "check", MODEL, "--json"],
                              capture_output=True, text=True)
    assert json.loads(chk.stdout) != json.loads(declared.stdout)


def test_model_observe_hot_keys_against_declared(shop):
    srv, c = shop
    c.update_contributor_insights(TableName="Shop", ContributorInsightsAction="ENABLE")
    for _ in range(9):
        c.get_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}})
    c.get_item(TableName="Shop", Key={"PK": {"S": "CUSTOMER#c2"}, "SK": {"S": "PROFILE"}})
    env = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local")
    out = subprocess.run([quarry_bin(), "model", "observe", "--endpoint", srv.url, "--json"],
                         capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr
    (hot,) = json.loads(out.stdout)["HotKeys"]
    assert hot["Insights"] == "ENABLED"
    assert hot["Top"][0]["Keys"] == ["CUSTOMER#c1"]
    assert hot["HottestShare"] == pytest.approx(9 / 10)


# ---- the same mistakes through the JavaScript SDK ----

from test_node import NODE_DIR, node_modules  # noqa: E402,F401  (the npm install fixture)


@pytest.mark.parametrize("strict", [False, True])
def test_js_sdk_application(strict, node_modules, start, credentials_file):  # noqa: F811
    from conftest import KEYS
    srv = start("--model", MODEL, *(["--strict"] if strict else []), credentials=credentials_file)
    key, secret = KEYS["ci"]
    env = dict(os.environ, QUARRY_ENDPOINT=srv.url, QUARRY_KEY_ID=key, QUARRY_SECRET=secret,
               AWS_EC2_METADATA_DISABLED="true", QUARRY_STRICT="1" if strict else "")
    p = subprocess.run(["node", "--test", "--test-reporter=spec", "model_watch.mjs"],
                       cwd=NODE_DIR, env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    r = raw(srv.url, TARGET + "QuarryDescribeModel", {}, key=key, secret=secret)
    d = r.json()
    kinds = sorted({f["Kind"] for f in d["Findings"]})
    # the 12 order lines read for a pattern declared to return 5 are an over-read; under
    # --strict the refused Scan read nothing to filter
    want = ["BadFormat", "OverRead", "Scan", "UndeclaredPattern"]
    assert kinds == (want if strict else sorted(want + ["FilterHeavy"])), d["Findings"]
    by = {p["Name"]: p["Observed"] for p in d["Patterns"]}
    assert by["get-customer"]["Requests"] == 1
    assert by["order-lines"]["Requests"] == 1 and by["order-lines"]["ItemsReturned"] == 12
    assert by["add-line"]["Requests"] == 12
    (bad,) = [f for f in d["Findings"] if f["Kind"] == "BadFormat"]
    assert bad["Count"] == 12 and "not zero-padded to 3 digits" in bad["Message"]


def test_same_transaction_copy_left_stale(start, tmp_path):
    """With the copies kept "same-transaction", a TransactWriteItems that renames a
    customer without rewriting the orders' customerName is a StaleCopy finding."""
    orders = os.path.join(os.path.dirname(MODEL), "..", "..", "..", "examples", "orders.yaml")
    # fan_out: the copies one rename rewrites must fit one TransactWriteItems (model check)
    text = open(orders).read().replace("strategy: accepted-staleness\n    staleness: 1d",
                                       "strategy: same-transaction\n    fan_out: 20")
    assert "strategy: same-transaction" in text
    model = tmp_path / "orders.yaml"
    model.write_text(text)
    srv = start("--model", str(model))
    env = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
               AWS_REGION="us-east-1")
    # --force: the checker rightly says one customer's 7,300 copies cannot be rewritten in one
    # transaction; the watch is what this test is about
    p = subprocess.run([quarry_bin(), "model", "apply", str(model), "--endpoint", srv.url,
                        "--force"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr
    c = boto3_client(srv.url)
    customer = {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "PROFILE"}}
    order = {"PK": {"S": "CUSTOMER#c1"}, "SK": {"S": "ORDER#o1"}}
    c.put_item(TableName="Shop", Item=dict(customer, customerId={"S": "c1"}, name={"S": "Ann"}))
    c.put_item(TableName="Shop", Item=dict(order, customerId={"S": "c1"}, orderId={"S": "o1"},
                                           customerName={"S": "Ann"}))

    def rename(name, with_copy):
        items = [{"Update": {"TableName": "Shop", "Key": customer,
                             "UpdateExpression": "SET #n = :n",
                             "ExpressionAttributeNames": {"#n": "name"},
                             "ExpressionAttributeValues": {":n": {"S": name}}}}]
        if with_copy:
            items.append({"Update": {"TableName": "Shop", "Key": order,
                                     "UpdateExpression": "SET customerName = :n",
                                     "ExpressionAttributeValues": {":n": {"S": name}}}})
        c.transact_write_items(TransactItems=items)

    rename("Anne", True)  # the copy follows: no finding
    assert findings(srv, "StaleCopy") == []
    rename("Annie", False)
    (f,) = findings(srv, "StaleCopy")
    assert f["Count"] == 1 and f["Table"] == "Shop"
    assert "Customer.name" in f["Message"] and "Order.customerName" in f["Message"]
    assert f["Sample"]["TransactItems"][0]["Update"]["Key"] == customer
