"""GET /metrics: the server's metrics in Prometheus's text format, read by Prometheus's own
parser (prometheus_client, Debian's python3-prometheus-client) after real SDK traffic:
per-operation counts, errors and latency histograms (cumulative, ending in +Inf, _count
equal to it), table and index gauges, global-index propagation. It is authenticated as the
API is (SigV4, checked against --credentials when given), and other paths answer as
before. What each family means is qr_metrics' (include/quarry.h); the text's details are
tests/unit/api/test_metrics.c's."""
import gzip
import http.client
import math

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError
from prometheus_client.parser import text_string_to_metric_families

from conftest import KEYS, REGION, boto3_client

PUTS = 12
GETS = 5


def fetch(srv, path="/metrics", key="local", secret="local", sign=True, method="GET",
          headers=None, service="dynamodb"):
    """GET (or HEAD) path, SigV4-signed by botocore unless sign is False: (status, headers, body)."""
    h = dict(headers or {})
    if sign:
        req = AWSRequest(method=method, url=srv.url + path, headers=h)
        SigV4Auth(Credentials(key, secret), service, REGION).add_auth(req)
        h = dict(req.headers.items())
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=30)
    try:
        c.request(method, path, headers=h)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def families(body):
    return {f.name: f for f in text_string_to_metric_families(body.decode())}


def value(fams, family, sample, **labels):
    """The value of family's sample called sample with exactly these labels, or None."""
    for s in fams[family].samples:
        if s.name == sample and s.labels == labels:
            return s.value
    return None


def check_histograms(fam):
    """Every series of a histogram family: bounds ascending to +Inf, cumulative counts,
    _count equal to the +Inf bucket, a positive _sum. Returns {operation: count}."""
    series = {}
    for s in fam.samples:
        op = s.labels["operation"]
        entry = series.setdefault(op, {"buckets": [], "sum": None, "count": None})
        if s.name.endswith("_bucket"):
            entry["buckets"].append((float(s.labels["le"]), s.value))
        elif s.name.endswith("_sum"):
            entry["sum"] = s.value
        elif s.name.endswith("_count"):
            entry["count"] = s.value
    counts = {}
    for op, e in series.items():
        bounds = [b for b, _ in e["buckets"]]
        assert bounds == sorted(bounds) and bounds[-1] == math.inf, (op, bounds)
        assert len(set(bounds)) == len(bounds), (op, bounds)
        values = [v for _, v in e["buckets"]]
        assert all(a <= b for a, b in zip(values, values[1:])), (op, values)
        assert e["count"] == values[-1], (op, e["count"], values[-1])
        assert e["sum"] is not None and e["sum"] > 0, (op, e["sum"])
        counts[op] = e["count"]
    return counts


def make_traffic(srv):
    ddb = boto3_client(srv.url)
    ddb.create_table(
        TableName="orders", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "status", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_status",
                                 "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    ddb.create_table(
        TableName="plain", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    for i in range(PUTS):
        ddb.put_item(TableName="orders", Item={"pk": {"S": "c%d" % (i % 3)}, "sk": {"S": str(i)},
                                               "status": {"S": "open" if i % 2 else "done"},
                                               "note": {"S": "x" * 100}})
    for i in range(GETS):
        ddb.get_item(TableName="orders", Key={"pk": {"S": "c0"}, "sk": {"S": "0"}})
    ddb.query(TableName="orders", KeyConditionExpression="pk = :p",
              ExpressionAttributeValues={":p": {"S": "c1"}})
    for _ in range(2):
        with pytest.raises(ClientError):
            ddb.get_item(TableName="missing", Key={"pk": {"S": "x"}})
    with pytest.raises(ClientError):
        ddb.put_item(TableName="orders", Item={"pk": {"S": "only the hash key"}})
    # Propagation to the global index is asynchronous: wait until it shows every item.
    for _ in range(200):
        status, _, body = fetch(srv)
        fams = families(body)
        if value(fams, "quarry_index_items", "quarry_index_items",
                 table="orders", index="by_status") == PUTS:
            return
    raise AssertionError("the global index never reached %d items" % PUTS)


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_metrics_after_sdk_traffic(start, mode):
    srv = start(*mode)
    make_traffic(srv)
    status, headers, body = fetch(srv)
    assert status == 200, body
    assert headers["content-type"] == "text/plain; version=0.0.4"
    fams = families(body)

    reqs = fams["quarry_requests"]  # the parser names a counter's family without _total
    assert reqs.type == "counter"
    assert value(fams, "quarry_requests", "quarry_requests_total", operation="CreateTable") == 2
    assert value(fams, "quarry_requests", "quarry_requests_total", operation="PutItem") == PUTS + 1
    assert value(fams, "quarry_requests", "quarry_requests_total", operation="GetItem") == GETS + 2
    assert value(fams, "quarry_requests", "quarry_requests_total", operation="Query") == 1
    assert value(fams, "quarry_requests", "quarry_requests_total", operation="Scan") is None

    assert fams["quarry_request_errors"].type == "counter"
    assert value(fams, "quarry_request_errors", "quarry_request_errors_total",
                 operation="GetItem", error="ResourceNotFoundException") == 2
    assert value(fams, "quarry_request_errors", "quarry_request_errors_total",
                 operation="PutItem", error="ValidationException") == 1

    hist = fams["quarry_request_duration_seconds"]
    assert hist.type == "histogram"
    counts = check_histograms(hist)
    totals = {s.labels["operation"]: s.value for s in reqs.samples}
    assert counts == totals

    assert value(fams, "quarry_tables", "quarry_tables") == 2
    assert value(fams, "quarry_table_items", "quarry_table_items", table="orders") == PUTS
    assert value(fams, "quarry_table_items", "quarry_table_items", table="plain") == 0
    size = value(fams, "quarry_table_size_bytes", "quarry_table_size_bytes", table="orders")
    assert size > PUTS * 100
    assert value(fams, "quarry_index_size_bytes", "quarry_index_size_bytes",
                 table="orders", index="by_status") == size
    assert value(fams, "quarry_index_propagation_pending_updates",
                 "quarry_index_propagation_pending_updates") == 0
    assert value(fams, "quarry_index_propagation_applied_updates",
                 "quarry_index_propagation_applied_updates_total") == PUTS
    assert value(fams, "quarry_index_propagation_oldest_pending_seconds",
                 "quarry_index_propagation_oldest_pending_seconds") == 0
    assert value(fams, "quarry_index_propagation_lag_p99_seconds",
                 "quarry_index_propagation_lag_p99_seconds") >= 0

    # Scraping is no operation: a second scrape counts no more calls.
    again = families(fetch(srv)[2])
    assert [s for s in again["quarry_requests"].samples] == [s for s in reqs.samples]


def test_metrics_are_signed_with_the_servers_keys(signed_server):
    key, secret = KEYS["ci"]
    status, _, body = fetch(signed_server, key=key, secret=secret)
    assert status == 200 and b"# TYPE quarry_requests_total counter" in body
    status, _, body = fetch(signed_server, "/metrics?format=text", key=key, secret=secret)
    assert status == 200, body

    status, headers, body = fetch(signed_server, sign=False)
    assert status == 400 and b"MissingAuthenticationTokenException" in body
    assert headers["content-type"] == "application/x-amz-json-1.0"
    status, _, body = fetch(signed_server, key=key, secret="not-the-secret")
    assert status == 400 and b"InvalidSignatureException" in body
    status, _, body = fetch(signed_server, key="AKIDNOTINTHEFILE", secret=secret)
    assert status == 400 and b"UnrecognizedClientException" in body
    status, _, body = fetch(signed_server, key=key, secret=secret, service="s3")
    assert status == 400 and b"InvalidSignatureException" in body
    assert "metrics table=- status=400 error=MissingAuthenticationTokenException" in signed_server.log()


def test_without_credentials_any_key_signs_but_a_signature_is_needed(server):
    # As on the API: without --credentials any key passes, but a request must be signed.
    status, _, body = fetch(server, key="anything", secret="at-all")
    assert status == 200
    status, _, body = fetch(server, sign=False)
    assert status == 400 and b"MissingAuthenticationTokenException" in body


def test_head_and_compression(server):
    ddb = boto3_client(server.url)
    ddb.list_tables()
    ddb.describe_endpoints()
    ddb.describe_limits()
    status, headers, body = fetch(server, method="HEAD")
    assert status == 200 and body == b""
    assert int(headers["content-length"]) > 0
    # Past 4 KB the text goes compressed to a client that accepts it, as API answers do.
    status, headers, body = fetch(server, headers={"Accept-Encoding": "gzip"})
    assert status == 200 and headers.get("content-encoding") == "gzip"
    assert len(gzip.decompress(body)) >= 4096
    fams = families(gzip.decompress(body))
    assert value(fams, "quarry_requests", "quarry_requests_total", operation="ListTables") == 1


def test_other_paths_answer_as_before(server):
    for path in ["/metric", "/metrics/", "/metricsx", "/Metrics"]:
        status, _, _ = fetch(server, path)
        assert status == 404, path
    # A POST is the API's whatever its path, /metrics too.
    ddb = boto3_client(server.url + "/metrics")
    assert ddb.list_tables()["TableNames"] == []
