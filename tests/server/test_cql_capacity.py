"""Capacity on CQL tables, through the Python driver (Debian python3-cassandra) against
`quarry serve --cql` on a manual capacity clock under the default `--capacity enforce`: a
CQL table's writes and reads are metered per partition as a DynamoDB table's are, and what
would exceed a partition's ceiling is counted in /metrics, but no statement is refused
(Cassandra has no capacity to exceed, so its clients never see OVERLOADED for it), while a
DynamoDB table on the same server is still throttled at its partition's 1,000 WCU."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import boto3_client  # noqa: E402


def metric(srv, family, sample, **labels):
    from test_metrics import families, fetch, value
    status, _, body = fetch(srv.server)
    assert status == 200
    return value(families(body), family, sample, **labels) or 0


def test_a_hot_cql_partition_is_metered_not_refused(cql_server):
    srv = cql_server("--capacity-clock", "manual")
    s = srv.session(keyspace="cap")
    s.execute("CREATE TABLE feed (k int, c int, v text, PRIMARY KEY (k, c))")
    ins = s.prepare("INSERT INTO feed (k, c, v) VALUES (0, ?, ?)")
    # 1,500 one-unit writes into one partition on a clock that stands still: past the
    # partition's 1,000 WCU, and all applied
    for c in range(1500):
        s.execute(ins, (c, "x" * 100))
    assert s.execute("SELECT COUNT(*) FROM feed WHERE k = 0").one()[0] == 1500
    written = metric(srv, "quarry_consumed_write_capacity_units",
                     "quarry_consumed_write_capacity_units_total", table="cap.feed")
    assert written >= 1500
    events = metric(srv, "quarry_write_throttle_events", "quarry_write_throttle_events_total",
                    table="cap.feed", reason="KeyRangeThroughputExceeded")
    assert events >= 400  # what DynamoDB would have refused, counted for the heat report
    # reads past the partition's 3,000 RCU are answered too
    one = s.prepare("SELECT v FROM feed WHERE k = 0 AND c = ?")
    for c in range(3200):
        assert s.execute(one, (c % 1500,)).one().v == "x" * 100

    # the same server still throttles a DynamoDB table's hot partition
    ddb = boto3_client(srv.url, retries=0)
    ddb.create_table(TableName="hot", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    with pytest.raises(ClientError) as info:
        for _ in range(1200):
            ddb.put_item(TableName="hot", Item={"pk": {"S": "one"}})
    assert info.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
