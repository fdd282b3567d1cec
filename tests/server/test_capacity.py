"""Capacity over the wire, as an application sees it through boto3: a provisioned table
throttled once its burst is spent (with retries off, and completed by the SDK's standard
retries), a hot partition key throttled while write-sharded keys are not, a hot global
index key throttling base writes, BatchWriteItem's UnprocessedItems finished by
batch_writer, and the error documents field by field. The server runs on a manual
capacity clock (QuarryAdvanceClock), so each run sees the same throttling."""
import threading

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client, boto3_resource, raw

TARGET = "DynamoDB_20120810."
ARN = "arn:aws:dynamodb:ddblocal:000000000000:table/"  # as quarry's TableArn reads


def advance(url, seconds):
    r = raw(url, TARGET + "QuarryAdvanceClock", {"Seconds": seconds})
    assert r.status == 200, r.body


def create(ddb, name, gsi=None, **capacity):
    defs = [{"AttributeName": "pk", "AttributeType": "S"}]
    kw = dict(capacity) if capacity else {"BillingMode": "PAY_PER_REQUEST"}
    if gsi:
        defs.append({"AttributeName": "g", "AttributeType": "S"})
        index = {"IndexName": gsi, "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                 "Projection": {"ProjectionType": "KEYS_ONLY"}}
        if capacity:
            index["ProvisionedThroughput"] = capacity["ProvisionedThroughput"]
        kw["GlobalSecondaryIndexes"] = [index]
    ddb.create_table(TableName=name, AttributeDefinitions=defs,
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], **kw)


def put_until_throttled(ddb, table, keys, g=None):
    """Puts items keys(i) until one is throttled; returns (count, the ClientError)."""
    for i in range(100000):
        item = {"pk": {"S": keys(i)}}
        if g:
            item["g"] = {"S": g}
        try:
            ddb.put_item(TableName=table, Item=item)
        except ClientError as e:
            return i, e
    raise AssertionError("never throttled")


def reasons(e, url, request):
    """The ThrottlingReasons of a throttled request, read from the wire: Debian's botocore
    predates the member and drops it, so the same request is sent again raw (the manual
    clock has not moved, so it is refused again) and its error document read."""
    op, body = request
    r = raw(url, TARGET + op, body)
    doc = r.json()
    assert r.status == 400 and doc["__type"].endswith("#" + e.response["Error"]["Code"]), r.body
    assert doc["message"] == e.response["Error"]["Message"]
    return [(x["reason"], x["resource"]) for x in doc.get("ThrottlingReasons", [])]


def put(table, pk, g=None):
    item = {"pk": {"S": pk}}
    if g:
        item["g"] = {"S": g}
    return ("PutItem", {"TableName": table, "Item": item})


@pytest.fixture
def manual(start):
    return start("--capacity-clock", "manual")


def test_provisioned_table_throttled_once_burst_is_spent(manual):
    ddb = boto3_client(manual.url, retries=0)  # retries off (max_attempts counts retries)
    create(ddb, "small", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    # 1,500 units are banked (300 s at 5 WCU); the one partition serves 1,000 a second.
    n, e = put_until_throttled(ddb, "small", lambda i: "a%d" % i)
    assert n == 1000
    assert e.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert reasons(e, manual.url, put("small", "a1000")) == [
        ("TableWriteKeyRangeThroughputExceeded", ARN + "small")]
    assert e.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert ddb.describe_table(TableName="small")["Table"]["TableArn"] == ARN + "small"
    advance(manual.url, 1)
    n, e = put_until_throttled(ddb, "small", lambda i: "b%d" % i)
    assert n == 505
    assert reasons(e, manual.url, put("small", "b505")) == [
        ("TableWriteProvisionedThroughputExceeded", ARN + "small")]
    assert e.response["Error"]["Message"] == (
        "The level of configured provisioned throughput for the table was exceeded. "
        "Consider increasing your provisioning level with the UpdateTable API.")
    # The throttled write changed nothing.
    assert "Item" not in ddb.get_item(TableName="small", Key={"pk": {"S": "b505"}})
    # Each second brings five more.
    advance(manual.url, 1)
    n, _ = put_until_throttled(ddb, "small", lambda i: "c%d" % i)
    assert n == 5


def test_standard_retries_wait_for_capacity(start):
    srv = start()  # the real clock: the SDK's backoff lets the bucket refill
    ddb = boto3_client(srv.url, retries=0)
    create(ddb, "tiny", ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    # The bank holds 300 units: spend them (and one more) without retries.
    n, e = put_until_throttled(ddb, "tiny", lambda i: "k%d" % i)
    assert 300 <= n <= 310
    assert e.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert "configured provisioned throughput for the table" in e.response["Error"]["Message"]
    # A 3 KB item is admitted on what refilled since, and leaves the bucket 3 units in
    # debt: the next write waits about three seconds, which the SDK's backoff covers.
    retrying = boto3_client(srv.url, retries=10)
    retrying.put_item(TableName="tiny", Item={"pk": {"S": "big"}, "v": {"S": "x" * 3000}})
    answer = retrying.put_item(TableName="tiny", Item={"pk": {"S": "after"}})
    assert answer["ResponseMetadata"]["RetryAttempts"] >= 1
    assert "Item" in ddb.get_item(TableName="tiny", Key={"pk": {"S": "after"}})


def test_hot_partition_key_and_write_sharding(manual):
    ddb = boto3_client(manual.url, retries=0)
    create(ddb, "hot")
    n, e = put_until_throttled(ddb, "hot", lambda i: "STATUS#OPEN")
    assert n == 1000  # one partition key: one partition's 1,000 WCU, whatever the mode
    assert e.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    assert reasons(e, manual.url, put("hot", "STATUS#OPEN")) == [
        ("TableWriteKeyRangeThroughputExceeded", ARN + "hot")]
    # The same 1,500 writes spread over ten shards of the key are not throttled.
    create(ddb, "sharded")
    for i in range(1500):
        ddb.put_item(TableName="sharded", Item={"pk": {"S": "STATUS#OPEN#%d" % (i % 10)}})


def test_hot_index_key_throttles_base_writes(manual):
    ddb = boto3_client(manual.url, retries=0)
    create(ddb, "orders", gsi="by_status")
    n, e = put_until_throttled(ddb, "orders", lambda i: "order#%d" % i, g="STATUS#OPEN")
    assert n == 1000
    assert reasons(e, manual.url, put("orders", "order#%d" % n, "STATUS#OPEN")) == [
        ("IndexWriteKeyRangeThroughputExceeded", ARN + "orders/index/by_status")]
    assert "Item" not in ddb.get_item(TableName="orders", Key={"pk": {"S": "order#%d" % n}})
    # Writes that leave the index alone go on.
    ddb.put_item(TableName="orders", Item={"pk": {"S": "no-status"}})


def test_under_provisioned_index_throttles_the_table(manual):
    ddb = boto3_client(manual.url, retries=0)
    ddb.create_table(
        TableName="thin",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        ProvisionedThroughput={"ReadCapacityUnits": 100, "WriteCapacityUnits": 1000},
        GlobalSecondaryIndexes=[{
            "IndexName": "narrow", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}}])
    count = 0
    with pytest.raises(ClientError) as info:
        for count in range(1000):
            ddb.put_item(TableName="thin", Item={"pk": {"S": "q%d" % count},
                                                 "g": {"S": "g%d" % count}})
    assert count == 300  # the index's 300 banked units, though the table has 300,000
    assert reasons(info.value, manual.url, put("thin", "q300", "g300")) == [
        ("IndexWriteProvisionedThroughputExceeded", ARN + "thin/index/narrow")]
    # Writes that leave the index alone are the table's alone.
    ddb.put_item(TableName="thin", Item={"pk": {"S": "no-index-key"}})


def test_batch_writer_completes_unprocessed_items(manual):
    ddb = boto3_client(manual.url, retries=0)
    create(ddb, "batch")
    n, _ = put_until_throttled(ddb, "batch", lambda i: "hot")
    # A batch with the spent key and fresh ones: the spent one comes back unprocessed.
    answer = ddb.batch_write_item(RequestItems={"batch": [
        {"PutRequest": {"Item": {"pk": {"S": "hot"}, "v": {"N": "1"}}}},
        {"PutRequest": {"Item": {"pk": {"S": "cold-1"}}}},
        {"PutRequest": {"Item": {"pk": {"S": "cold-2"}}}}]})
    assert answer["UnprocessedItems"] == {"batch": [
        {"PutRequest": {"Item": {"pk": {"S": "hot"}, "v": {"N": "1"}}}}]}
    assert "Item" in ddb.get_item(TableName="batch", Key={"pk": {"S": "cold-2"}})
    # Every item refused: the whole request fails, as DynamoDB's does.
    with pytest.raises(ClientError) as info:
        ddb.batch_write_item(RequestItems={"batch": [
            {"PutRequest": {"Item": {"pk": {"S": "hot"}}}}]})
    assert info.value.response["Error"]["Code"] == "ProvisionedThroughputExceededException"
    # batch_writer resends what comes back until it is written, as time passes.
    stop = threading.Event()

    def tick():
        while not stop.wait(0.02):
            advance(manual.url, 0.2)

    clock = threading.Thread(target=tick)
    clock.start()
    try:
        table = boto3_resource(manual.url).Table("batch")
        with table.batch_writer(overwrite_by_pkeys=["pk"]) as w:
            for i in range(60):
                w.put_item(Item={"pk": "hot" if i % 20 == 0 else "w%d" % i, "i": i})
    finally:
        stop.set()
        clock.join()
    got = ddb.get_item(TableName="batch", Key={"pk": {"S": "hot"}}, ConsistentRead=True)
    assert got["Item"]["i"] == {"N": "40"}
    assert all("Item" in ddb.get_item(TableName="batch", Key={"pk": {"S": "w%d" % i}})
               for i in range(1, 60) if i % 20)


def test_capacity_off_and_observe_never_throttle(start):
    for mode in ("off", "observe"):
        srv = start("--capacity", mode, "--capacity-clock", "manual")
        ddb = boto3_client(srv.url, retries=0)
        create(ddb, "hot")
        for _ in range(1200):
            ddb.put_item(TableName="hot", Item={"pk": {"S": "one"}})


def test_advance_clock_refused_on_a_real_clock(server):
    r = raw(server.url, TARGET + "QuarryAdvanceClock", {"Seconds": 1})
    assert r.status == 400 and r.error_type == "ValidationException"
    assert "--capacity-clock manual" in r.message


def test_metrics_count_units_and_throttles(manual):
    from test_metrics import families, fetch, value
    ddb = boto3_client(manual.url, retries=0)
    create(ddb, "orders", gsi="by_status")
    n, _ = put_until_throttled(ddb, "orders", lambda i: "o%d" % i, g="STATUS#OPEN")
    status, _, body = fetch(manual)
    assert status == 200
    fams = families(body)
    # Each write charged the table a unit and the index a unit for its entry.
    assert value(fams, "quarry_consumed_write_capacity_units",
                 "quarry_consumed_write_capacity_units_total", table="orders") == n
    assert value(fams, "quarry_consumed_write_capacity_units",
                 "quarry_consumed_write_capacity_units_total",
                 table="orders", index="by_status") == n
    # One event per refusal: the SDK's attempts at the throttled write.
    events = value(fams, "quarry_write_throttle_events", "quarry_write_throttle_events_total",
                   table="orders", index="by_status", reason="KeyRangeThroughputExceeded")
    assert events >= 1
    assert value(fams, "quarry_write_throttle_events", "quarry_write_throttle_events_total",
                 table="orders", reason="KeyRangeThroughputExceeded") == 0
    assert value(fams, "quarry_throttled_requests", "quarry_throttled_requests_total",
                 table="orders") == events
    assert value(fams, "quarry_partitions", "quarry_partitions", table="orders") == 8
    assert value(fams, "quarry_on_demand_max_write_request_units",
                 "quarry_on_demand_max_write_request_units", table="orders") in (None, -1)


def test_switches_to_on_demand_are_limited_per_day(server):
    ddb = boto3_client(server.url, retries=0)
    create(ddb, "switchy", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    back = {"BillingMode": "PROVISIONED",
            "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}
    for _ in range(4):
        ddb.update_table(TableName="switchy", BillingMode="PAY_PER_REQUEST")
        ddb.update_table(TableName="switchy", **back)  # back to provisioned: not limited
    with pytest.raises(ClientError) as info:
        ddb.update_table(TableName="switchy", BillingMode="PAY_PER_REQUEST")
    assert info.value.response["Error"]["Code"] == "LimitExceededException"
    assert "limited to 4 times" in info.value.response["Error"]["Message"]
    desc = ddb.describe_table(TableName="switchy")["Table"]
    assert desc.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED") == "PROVISIONED"


def test_on_demand_doubles_its_peak_after_half_an_hour(start):
    manual = start("--capacity-clock", "manual", "--no-sync")  # 15,000 writes
    ddb = boto3_client(manual.url, retries=0)
    create(ddb, "ramp")
    serial = iter(range(10 ** 6))

    def second_of_writes(n):
        """n distinct items in batches of 25 at one instant; returns how many were written."""
        done = 0
        for start in range(0, n, 25):
            batch = [{"PutRequest": {"Item": {"pk": {"S": "k%d" % next(serial)}}}}
                     for _ in range(min(25, n - start))]
            try:
                answer = ddb.batch_write_item(RequestItems={"ramp": batch})
            except ClientError:
                continue  # every item of the batch refused
            done += len(batch) - len(answer["UnprocessedItems"].get("ramp", []))
        return done

    def warm_writes():  # read raw: Debian's botocore predates WarmThroughput
        r = raw(manual.url, TARGET + "DescribeTable", {"TableName": "ramp"})
        return r.json()["Table"]["WarmThroughput"]["WriteUnitsPerSecond"]

    assert warm_writes() == 4000
    assert second_of_writes(3000) == 3000
    advance(manual.url, 1)
    # 4,000 a second at once; the peak of 3,000 is not yet the previous peak.
    first = second_of_writes(5000)
    assert 4000 <= first <= 4025
    assert warm_writes() == 4000
    advance(manual.url, 600)
    assert 4000 <= second_of_writes(5000) <= 4025
    # Half an hour after the peak, double it is served at once, and DescribeTable says so.
    advance(manual.url, 1300)
    assert warm_writes() == 2 * first
    assert second_of_writes(7000) == 7000
