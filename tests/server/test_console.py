"""The console at GET /console: its files as served (without authentication, with a
content security policy, while the API stays signed), and the page itself in Debian's
headless chromium driven by puppeteer-core (console/drive.mjs, installed with npm into
console/node_modules on first use). The browser tests seed examples/orders.yaml's table
with `quarry model apply` and boto3, then load the console, list the tables, browse the
single-table view of the table and its index, run a Query, show the heat of the hottest
keys and the capacity charts, show a value holding <script> and <img onerror> as text,
and sign with the keys a --credentials server wants. Screenshots are written under the
test's tmp_path (its `shots` folder). The model views run on a contract-shaped
QuarryDescribeModel answer handed to the page, and against the server's own when it has
the operation (skipped, saying so, when it has not)."""
import http.client
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from conftest import KEYS, boto3_client, npm_install, quarry_bin, raw

ROOT = Path(__file__).resolve().parents[2]
DRIVER_DIR = Path(__file__).parent / "console"
ORDERS = ROOT / "examples" / "orders.yaml"
XSS_NAME = "<script>window.__pwned='script'</script>"
XSS_EMAIL = "<img src=x onerror=\"window.__pwned='img'\">"


def get(url, path, headers=None):
    host = url.split("//", 1)[1]
    conn = http.client.HTTPConnection(host, timeout=10)
    conn.request("GET", path, headers=headers or {})
    r = conn.getresponse()
    body = r.read()
    conn.close()
    return r.status, {k.lower(): v for k, v in r.getheaders()}, body


# ---- the files as served ----

def test_console_files_are_served_without_auth_and_the_api_stays_signed(signed_server):
    status, headers, body = get(signed_server.url, "/console")
    assert status == 200
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert b'<script type="module" src="/console/app.js">' in body
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "connect-src 'self'" in csp
    assert headers["x-content-type-options"] == "nosniff"
    for path, ctype in [("/console/", "text/html"), ("/console/app.js", "text/javascript"),
                        ("/console/sigv4.js", "text/javascript"),
                        ("/console/console.css", "text/css"), ("/console/app.js?v=1", "text/javascript")]:
        status, headers, body = get(signed_server.url, path)
        assert status == 200, path
        assert headers["content-type"].startswith(ctype), path
        assert len(body) > 200, path
    # Only the console's own files: anything else under /console is no file.
    for path in ["/console/missing.js", "/console/../metrics", "/consoles", "/console/app.js/"]:
        status, _, _ = get(signed_server.url, path)
        assert status == 404, path
    # The files hold no data; the data still needs a signature by one of the file's keys.
    r = raw(signed_server.url, "DynamoDB_20120810.ListTables", {}, key="AKIDNOTINFILE", secret="x")
    assert r.status == 400 and r.error_type == "UnrecognizedClientException"
    status, _, body = get(signed_server.url, "/metrics")
    assert status == 400 and b"MissingAuthenticationToken" in body


def test_every_embedded_file_is_the_one_in_share_console(server):
    for f in sorted((ROOT / "share" / "console").iterdir()):
        status, headers, body = get(server.url, "/console/" + f.name,
                                    headers={"Accept-Encoding": "identity"})
        assert status == 200, f.name
        assert body == f.read_bytes(), "%s differs from the binary's copy (rebuild)" % f.name


# ---- the browser ----

@pytest.fixture(scope="session")
def driver():
    chromium = shutil.which("chromium")
    if chromium is None:
        pytest.skip("Debian's chromium is not installed (make deps installs it)")
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm is not installed")
    npm_install(DRIVER_DIR)
    return chromium


def drive(chromium, srv, scenario, shots, meanwhile=None, **params):
    """Runs one scenario of drive.mjs and returns what the page showed; meanwhile(), if
    given, is called over and over while the browser runs (traffic for the charts)."""
    shots.mkdir(exist_ok=True)
    env = dict(os.environ, CONSOLE_URL=srv.url, OUT_DIR=str(shots), SCENARIO=scenario,
               CONSOLE_PARAMS=json.dumps(params), CHROMIUM=chromium)
    p = subprocess.Popen(["node", "drive.mjs"], cwd=DRIVER_DIR, env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while meanwhile and p.poll() is None and time.monotonic() < deadline:
        meanwhile()
        time.sleep(0.05)
    try:
        stdout, stderr = p.communicate(timeout=max(1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        p.kill()
        stdout, stderr = p.communicate()
    assert p.returncode == 0, "drive.mjs %s failed:\n%s\n%s" % (scenario, stdout[-4000:],
                                                                stderr[-4000:])
    result = json.loads(stdout.strip().splitlines()[-1])
    assert "error" not in result, "%s: %s\nstatus line: %s\nserver log:\n%s" % (
        scenario, result["error"], result.get("status"), srv.log()[-3000:])
    assert (shots / ("%s.json" % scenario)).exists()
    return result


def assert_no_errors(result, allowed=()):
    """No uncaught error, no console error, no failed request; an answer of 400 or more
    only for what the test expects (allowed: (operation, error type) pairs). Chromium
    logs each such answer as a "Failed to load resource" console error, so those are
    the answers' own and are judged through them."""
    p = result["problems"]
    assert p["pageErrors"] == [], p
    assert p["failedRequests"] == [], p
    for r in p["errorResponses"]:
        assert any(r["target"].endswith("." + op) and err in r["body"] for op, err in allowed), r
    other = [m for m in p["consoleErrors"] if not m.startswith("Failed to load resource")]
    assert other == [], other
    assert len(p["consoleErrors"]) == len(other) + len(p["errorResponses"]), p


# The server's answer to a console without the model operation (before the runtime-model
# branch) or with it: both are fine, and only the former is a 400.
NO_MODEL = ("QuarryDescribeModel", "UnknownOperationException")


def apply_orders(srv, key="console-test", secret="console-test"):
    env = dict(os.environ, AWS_ACCESS_KEY_ID=key, AWS_SECRET_ACCESS_KEY=secret,
               AWS_REGION="us-east-1")
    p = subprocess.run([quarry_bin(), "model", "apply", str(ORDERS), "--endpoint", srv.url],
                       env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stdout + p.stderr


def s(v):
    return {"S": v}


def seed_orders(ddb):
    """Customers, their orders (in GSI1 by status) and order lines, in Shop's single-table
    layout; customer c9's name and email are markup."""
    items = []
    for c in ("c1", "c2", "c9"):
        items.append({"PK": s("CUSTOMER#" + c), "SK": s("PROFILE"), "customerId": s(c),
                      "name": s(XSS_NAME if c == "c9" else "Customer " + c),
                      "email": s(XSS_EMAIL if c == "c9" else c + "@example.com")})
    statuses = ["PENDING", "PAID", "PENDING", "SHIPPED"]
    for i, (c, o) in enumerate([("c1", "o1"), ("c1", "o2"), ("c2", "o3"), ("c1", "o4")]):
        items.append({"PK": s("CUSTOMER#" + c), "SK": s("ORDER#" + o), "customerId": s(c),
                      "orderId": s(o), "status": s(statuses[i]),
                      "createdAt": s("2025-01-0%dT10:00:00Z" % (i + 1)),
                      "total": {"N": str(10 * (i + 1))}, "customerName": s("Customer " + c),
                      "GSI1PK": s("STATUS#" + statuses[i]),
                      "GSI1SK": s("2025-01-0%dT10:00:00Z#%s" % (i + 1, o))})
        for line in range(1, 3):
            items.append({"PK": s("CUSTOMER#" + c), "SK": s("ORDER#%s#ITEM#%03d" % (o, line)),
                          "customerId": s(c), "orderId": s(o), "line": s("%03d" % line),
                          "sku": s("SKU-%d" % line), "quantity": {"N": "1"},
                          "price": {"N": "9.5"}})
    for it in items:
        ddb.put_item(TableName="Shop", Item=it)
    return items


def test_console_browses_the_single_table_model(start, driver, tmp_path):
    srv = start()
    apply_orders(srv)
    ddb = boto3_client(srv.url)
    ddb.create_table(TableName="Other", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "N"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    items = seed_orders(ddb)
    r = drive(driver, srv, "browse", tmp_path / "shots", table="Shop")
    assert_no_errors(r, allowed=[NO_MODEL])
    assert r["tables"] == ["Other", "Shop"]
    assert "GSI1" in r["tableText"] and "PK (partition)" in r["tableText"]
    assert r["views"] == ["", "GSI1"]
    # The table's view: one group per customer, in key order, each ordered by SK.
    groups = r["byView"][""]
    assert [g["pk"] for g in groups] == ["CUSTOMER#c1", "CUSTOMER#c2", "CUSTOMER#c9"]
    for g in groups:
        want = sorted(it["SK"]["S"] for it in items if it["PK"]["S"] == g["pk"])
        assert [row["sk"] for row in g["rows"]] == want
    # The index's view: the orders by status, ordered by GSI1SK, with its projection.
    gsi = r["byView"]["GSI1"]
    assert [g["pk"] for g in gsi] == ["STATUS#PAID", "STATUS#PENDING", "STATUS#SHIPPED"]
    pending = next(g for g in gsi if g["pk"] == "STATUS#PENDING")
    assert [row["sk"] for row in pending["rows"]] == ["2025-01-01T10:00:00Z#o1",
                                                      "2025-01-03T10:00:00Z#o3"]
    assert set(pending["rows"][0]["attrs"]) == {"PK", "SK", "total", "customerName"}
    # Markup in a value is shown as its characters and never runs.
    c9 = next(g for g in groups if g["pk"] == "CUSTOMER#c9")["rows"][0]["attrs"]
    assert c9["name"] == XSS_NAME and c9["email"] == XSS_EMAIL
    assert r["injected"] == {"pwned": None, "images": 0, "scripts": 0}
    # No model on this server: no colours, and the sidebar says so.
    assert r["noModel"] == "no model loaded"
    assert all("entity-" not in row["cls"] for g in groups for row in g["rows"])
    # The signer's own SHA-256 and HMAC agree with SubtleCrypto's.
    assert r["crypto"]["mismatches"] == 0 and r["crypto"]["checked"] == 18
    assert r["crypto"]["abc"] == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    for name in ("table", "items-table", "items-GSI1"):
        assert (tmp_path / "shots" / (name + ".png")).stat().st_size > 5000


def test_console_runs_a_query(start, driver, tmp_path):
    srv = start()
    apply_orders(srv)
    seed_orders(boto3_client(srv.url))
    r = drive(driver, srv, "query", tmp_path / "shots", table="Shop", pk="CUSTOMER#c1",
              skop="begins_with", sk="ORDER#o1", order="desc")
    assert_no_errors(r, allowed=[NO_MODEL])
    assert r["request"]["KeyConditionExpression"] == "#pk = :pk AND begins_with(#sk, :sk)"
    assert r["request"]["ExpressionAttributeValues"] == {":pk": {"S": "CUSTOMER#c1"},
                                                         ":sk": {"S": "ORDER#o1"}}
    assert r["request"]["ScanIndexForward"] is False
    assert r["summary"].startswith("3 items returned, 3 read")
    assert [row["sk"] for row in r["items"][0]["rows"]] == ["ORDER#o1#ITEM#002",
                                                           "ORDER#o1#ITEM#001", "ORDER#o1"]
    assert "no model loaded" in r["pattern"] or "no QuarryDescribeModel" in r["pattern"]
    # On the index, by status: the two pending orders, oldest first.
    r = drive(driver, srv, "query", tmp_path / "shots2", table="Shop", index="GSI1",
              pk="STATUS#PENDING")
    assert_no_errors(r, allowed=[NO_MODEL])
    assert r["request"]["IndexName"] == "GSI1"
    assert [row["sk"] for row in r["items"][0]["rows"]] == ["2025-01-01T10:00:00Z#o1",
                                                           "2025-01-03T10:00:00Z#o3"]


def test_console_shows_the_heat_of_keys_and_capacity(start, driver, tmp_path):
    srv = start()
    apply_orders(srv)
    ddb = boto3_client(srv.url)
    seed_orders(ddb)
    ddb.update_contributor_insights(TableName="Shop", ContributorInsightsAction="ENABLE")
    # One customer's partition read far more than the others.
    for _ in range(120):
        ddb.get_item(TableName="Shop", Key={"PK": s("CUSTOMER#c1"), "SK": s("PROFILE")})
    for _ in range(10):
        ddb.get_item(TableName="Shop", Key={"PK": s("CUSTOMER#c2"), "SK": s("PROFILE")})
    def reads():
        for _ in range(5):
            ddb.get_item(TableName="Shop", Key={"PK": s("CUSTOMER#c1"), "SK": s("PROFILE")})

    r = drive(driver, srv, "heat", tmp_path / "shots", meanwhile=reads, table="Shop")
    assert_no_errors(r, allowed=[NO_MODEL])
    table = next(h for h in r["heat"] if h["target"] == "")
    assert "ENABLED" in table["title"]
    assert table["heatmaps"] >= 2 and table["cells"] >= 2
    # The hottest partition first, with its count and share.
    assert table["topKeys"][0][0] == "CUSTOMER#c1"
    assert int(table["topKeys"][0][1]) >= 120
    assert float(table["topKeys"][0][2].rstrip("%")) > 50
    index = next(h for h in r["heat"] if h["target"] == "GSI1")
    assert "DISABLED" in index["title"]
    titles = [c["title"] for c in r["capacity"]]
    assert titles == ["Read capacity units consumed per second",
                      "Write capacity units consumed per second", "Throttle events per second"]
    assert all(c["lines"] >= 1 for c in r["capacity"])
    assert r["capacity"][0]["max"] > 0  # the reads sent while the page watched
    assert "table Shop" in r["capacity"][0]["legend"] and "index GSI1" in r["capacity"][0]["legend"]
    # The totals read from /metrics: 130 reads of one small item are 65 units at least.
    shop = next(t for t in r["totals"] if t[0] == "table Shop")
    assert float(shop[1]) >= 65 and float(shop[2]) > 0


def test_console_signs_with_the_keys_a_credentials_server_wants(start, driver, tmp_path,
                                                                credentials_file):
    srv = start(credentials=credentials_file)
    key, secret = KEYS["ci"]
    apply_orders(srv, key, secret)
    seed_orders(boto3_client(srv.url, key, secret))
    r = drive(driver, srv, "signed", tmp_path / "shots", table="Shop", key=key, secret=secret)
    # The placeholder key is refused first; then everything is signed by the key given.
    assert_no_errors(r, allowed=[NO_MODEL, ("ListTables", "UnrecognizedClientException")])
    assert "UnrecognizedClientException" in r["refused"]
    assert r["tables"] == ["Shop"]
    assert "signed with key " + key in r["status"]
    assert len(r["items"]) == 3


def contract_answer():
    """A QuarryDescribeModel answer in the shape CONTRACT21 fixes, with the entities'
    key templates (orders.yaml's) each model entry carries."""
    return {
        "Models": [{"File": "examples/orders.yaml", "Tables": ["Shop"],
                    "Mismatches": ["table Shop: index GSI2 is not in the live table"],
                    "Entities": [
                        {"Name": "Customer", "Table": "Shop", "PartitionKey": "CUSTOMER#{customerId}",
                         "SortKey": "PROFILE"},
                        {"Name": "Order", "Table": "Shop", "PartitionKey": "CUSTOMER#{customerId}",
                         "SortKey": "ORDER#{orderId}",
                         "Indexes": {"GSI1": {"PartitionKey": "STATUS#{status}",
                                              "SortKey": "{createdAt}#{orderId}"}}},
                        {"Name": "OrderItem", "Table": "Shop", "PartitionKey": "CUSTOMER#{customerId}",
                         "SortKey": "ORDER#{orderId}#ITEM#{line}"}]}],
        "Patterns": [
            {"Name": "customer-orders", "Table": "Shop", "Entity": "Order", "Operation": "Query",
             "Declared": {"Rps": 100, "Limit": 20, "Consistency": "eventual"},
             "Observed": {"Requests": 12, "Rps": 0.5, "P50Ms": 0.4, "P99Ms": 2.1, "ItemsRead": 40,
                          "ItemsReturned": 40, "ReadUnits": 12.5, "WriteUnits": 0}},
            {"Name": "pending-orders", "Table": "Shop", "Index": "GSI1", "Entity": "Order",
             "Operation": "Query", "Declared": {"Rps": 5, "Consistency": "eventual"},
             "Observed": {"Requests": 0}},
            {"Name": "get-customer", "Table": "Shop", "Entity": "Customer", "Operation": "GetItem",
             "Declared": {"Rps": 200}, "Observed": {"Requests": 3}}],
        "Findings": [
            {"Kind": "Scan", "Table": "Shop", "Message": "a Scan of Shop with a filter",
             "Count": 4, "FirstSeen": 1764650000.5, "LastSeen": 1764650100.2,
             "Sample": {"TableName": "Shop", "FilterExpression": "#n = :n",
                        "ExpressionAttributeNames": {"#n": "name"},
                        "ExpressionAttributeValues": {":n": {"S": XSS_NAME}}}},
            {"Kind": "UndeclaredPattern", "Table": "Shop", "Index": "GSI1",
             "Pattern": "pending-orders", "Message": "<img src=x onerror=\"window.__pwned='f'\">",
             "Count": 1, "FirstSeen": 1764650000.5, "LastSeen": 1764650000.5,
             "Sample": {"TableName": "Shop", "IndexName": "GSI1"}}],
        "UnusedIndexes": [{"Table": "Shop", "Index": "GSI1"}],
        "UnexercisedPatterns": ["pending-orders"],
    }


def test_console_model_views_read_the_contract(start, driver, tmp_path):
    srv = start()
    apply_orders(srv)
    seed_orders(boto3_client(srv.url))
    answer = contract_answer()
    r = drive(driver, srv, "model", tmp_path / "shots", table="Shop", modelAnswer=answer,
              colours=True, query={"pk": "CUSTOMER#c1", "skop": "begins_with", "sk": "ORDER#",
                                   "limit": 20})
    assert_no_errors(r)
    rows = {row[0]: row for row in r["panel"]["patterns"]}
    assert set(rows) == {"customer-orders", "pending-orders", "get-customer"}
    assert rows["customer-orders"][1] == "Shop" and rows["pending-orders"][1] == "Shop / GSI1"
    assert rows["customer-orders"][4:10] == ["100", "0.5", "12", "–", "0.40", "2.10"]
    kinds = [f["kind"] for f in r["panel"]["findings"]]
    assert kinds == ["Scan", "UndeclaredPattern"]
    assert r["panel"]["findings"][0]["sample"] == answer["Findings"][0]["Sample"]
    assert r["panel"]["findings"][1]["message"] == answer["Findings"][1]["Message"]
    assert r["panel"]["unused"] == ["Shop / GSI1"]
    assert r["panel"]["unexercised"] == ["pending-orders"]
    # Every item coloured by the entity its keys' templates name, the most specific first.
    for g in r["items"]:
        for row in g["rows"]:
            want = ("Customer" if row["sk"] == "PROFILE" else
                    "OrderItem" if "#ITEM#" in row["sk"] else "Order")
            assert row["entity"] == want, row
            assert "entity-" in row["cls"]
    assert "declared pattern customer-orders" in r["query"]["pattern"]
    assert r["injected"] == {"pwned": None, "images": 0}


def test_console_shows_a_finding_of_the_running_model(start, driver, tmp_path):
    usage = subprocess.run([quarry_bin(), "serve", "--help"], capture_output=True, text=True)
    if "--model" not in usage.stdout + usage.stderr:
        pytest.skip("this quarry serve has no --model and no QuarryDescribeModel (the "
                    "runtime-model branch brings them)")
    srv = start("--model", str(ORDERS))
    apply_orders(srv)
    ddb = boto3_client(srv.url)
    probe = raw(srv.url, "DynamoDB_20120810.QuarryDescribeModel", {})
    if probe.status != 200:
        pytest.skip("this server has no QuarryDescribeModel (the runtime-model branch "
                    "brings it): %s" % probe.body[:120].decode(errors="replace"))
    seed_orders(ddb)
    ddb.scan(TableName="Shop", FilterExpression="#s = :s",
             ExpressionAttributeNames={"#s": "status"},
             ExpressionAttributeValues={":s": s("PENDING")})
    r = drive(driver, srv, "model", tmp_path / "shots", table="Shop",
              query={"op": "Scan", "filter": "customerId = :c", "fvalues": '{":c": {"S": "c1"}}'})
    assert_no_errors(r, allowed=[("Scan", "ValidationException")])
    scans = [f for f in r["panel"]["findings"] if f["kind"] == "Scan"]
    assert scans and scans[0]["sample"]["TableName"] == "Shop"
    assert "Scan" in r["query"]["pattern"]
