"""DynamoDB Streams through `quarry serve`, with boto3's "dynamodbstreams" client on the same
endpoint as the DynamoDB API: StreamSpecification on CreateTable/UpdateTable/DescribeTable,
ListStreams, DescribeStream, GetShardIterator and GetRecords, the records each kind of write
leaves (per StreamViewType), disabling and re-enabling, DeleteTable, TTL deletes, concurrent
writers and the errors. Written from AWS's API reference and from what other test suites record
of real DynamoDB; where a test leans on such a record, its comment says so."""
import datetime
import threading
import time

import pytest
from botocore.exceptions import ClientError

from conftest import KEYS, REGION, boto3_client, raw

VIEW_TYPES = ["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]
RANGE_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]
HASH_SCHEMA = [{"AttributeName": "pk", "KeyType": "HASH"}]


def streams_client(url, key="local", secret="local"):
    """The DynamoDB Streams client, pointed at the server's one endpoint. Client-side parameter
    validation is off so that requests DynamoDB itself must refuse (Limit 0, a missing
    SequenceNumber) reach the server."""
    import boto3
    from botocore.config import Config
    return boto3.client(
        "dynamodbstreams", endpoint_url=url, region_name=REGION, aws_access_key_id=key,
        aws_secret_access_key=secret,
        config=Config(retries={"max_attempts": 1, "mode": "standard"}, parameter_validation=False))


def test_records_name_the_region_the_client_reached(server):
    """awsRegion is the region GetRecords was received in: the one the client signed for."""
    import boto3
    kw = dict(endpoint_url=server.url, region_name="eu-west-3", aws_access_key_id="local",
              aws_secret_access_key="local")
    ddb, streams = boto3.client("dynamodb", **kw), boto3.client("dynamodbstreams", **kw)
    arn = make_table(ddb, "Regional", view="KEYS_ONLY")["LatestStreamArn"]
    ddb.put_item(TableName="Regional", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    records = flat(read_stream(streams, arn))
    assert [r["awsRegion"] for r in records] == ["eu-west-3"]


@pytest.fixture
def ddb(server):
    return boto3_client(server.url)


@pytest.fixture
def streams(server):
    return streams_client(server.url)


def error_of(call, **kw):
    """Calls call(**kw), which must fail; returns (error code, message)."""
    with pytest.raises(ClientError) as e:
        call(**kw)
    err = e.value.response["Error"]
    return err["Code"], err.get("Message", "")


def make_table(ddb, name, view=None, schema=RANGE_SCHEMA, spec=None):
    """Creates a table (pk S, sk N when ranged), with a stream of type view when given;
    returns CreateTable's TableDescription."""
    types = {"pk": "S", "sk": "N"}
    kw = {}
    if spec is not None:
        kw["StreamSpecification"] = spec
    elif view is not None:
        kw["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view}
    out = ddb.create_table(
        TableName=name, KeySchema=schema, BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": k["AttributeName"], "AttributeType": types[k["AttributeName"]]}
                              for k in schema], **kw)
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
    return out["TableDescription"]


def latest_arn(ddb, name):
    return ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]


def describe(streams, arn):
    """DescribeStream, following LastEvaluatedShardId; returns the description with all shards."""
    desc = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    shards = list(desc["Shards"])
    last = desc.get("LastEvaluatedShardId")
    while last:
        page = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=last)["StreamDescription"]
        shards += page["Shards"]
        last = page.get("LastEvaluatedShardId")
    desc["Shards"] = shards
    return desc


def wait_status(streams, arn, wanted, timeout=10):
    """Polls DescribeStream until StreamStatus is wanted; returns the description."""
    deadline = time.monotonic() + timeout
    while True:
        desc = describe(streams, arn)
        if desc["StreamStatus"] == wanted or time.monotonic() > deadline:
            assert desc["StreamStatus"] == wanted
            return desc
        time.sleep(0.1)


def iterator(streams, arn, shard_id, kind, seq=None):
    kw = {"StreamArn": arn, "ShardId": shard_id, "ShardIteratorType": kind}
    if seq is not None:
        kw["SequenceNumber"] = seq
    return streams.get_shard_iterator(**kw)["ShardIterator"]


def drain(streams, it, limit=None, max_calls=500):
    """Reads from it until a page comes back empty or the shard ends.
    Returns (records, pages, next iterator or None at a closed shard's end)."""
    records, pages = [], []
    for _ in range(max_calls):
        kw = {"ShardIterator": it}
        if limit is not None:
            kw["Limit"] = limit
        r = streams.get_records(**kw)
        assert isinstance(r["Records"], list)
        records += r["Records"]
        pages.append(len(r["Records"]))
        it = r.get("NextShardIterator")
        if not r["Records"] or it is None:
            return records, pages, it
    raise AssertionError("the shard did not run dry after %d GetRecords calls" % max_calls)


def read_stream(streams, arn):
    """Every record of every shard of the stream, read from TRIM_HORIZON, shard by shard
    (a list of per-shard record lists)."""
    out = []
    for shard in describe(streams, arn)["Shards"]:
        out.append(drain(streams, iterator(streams, arn, shard["ShardId"], "TRIM_HORIZON"))[0])
    return out


def flat(per_shard):
    return [r for recs in per_shard for r in recs]


def seq_of(rec):
    return int(rec["dynamodb"]["SequenceNumber"])


def assert_increasing(per_shard):
    for recs in per_shard:
        seqs = [seq_of(r) for r in recs]
        assert all(a < b for a, b in zip(seqs, seqs[1:])), seqs


def is_sequence_number(s):
    # SequenceNumberRange and StreamRecord: numeric characters only, 21 to 40 of them.
    return isinstance(s, str) and s.isdecimal() and 21 <= len(s) <= 40


def norm(v):
    """An AttributeValue map or value with its sets sorted, for comparing images."""
    if isinstance(v, dict):
        out = {}
        for k, x in v.items():
            out[k] = sorted(x) if k in ("SS", "NS", "BS") else norm(x)
        return out
    if isinstance(v, list):
        return [norm(x) for x in v]
    return v


def key_of(rec):
    return tuple(sorted((k, str(v)) for k, v in rec["dynamodb"]["Keys"].items()))


def check_record(rec, view, event, keys, old, new, since):
    """One record against what DynamoDB documents for it: old and new are the item before and
    after the write (None where there is none); only the images the view type asks for appear."""
    assert rec["eventName"] == event
    assert rec["eventSource"] == "aws:dynamodb"
    assert rec["eventVersion"] in ("1.0", "1.1")
    # "The region in which the GetRecords request was received": a server on loopback has no
    # region of its own to give, so only its presence is asserted.
    assert isinstance(rec["awsRegion"], str) and rec["awsRegion"]
    assert isinstance(rec["eventID"], str) and rec["eventID"]
    assert "userIdentity" not in rec  # only TTL deletes carry one
    d = rec["dynamodb"]
    assert d["Keys"] == keys
    assert d["StreamViewType"] == view
    assert is_sequence_number(d["SequenceNumber"]), d["SequenceNumber"]
    assert d["SizeBytes"] > 0
    when = d["ApproximateCreationDateTime"]
    assert isinstance(when, datetime.datetime)
    assert when.microsecond == 0  # "rounded down to the closest second"
    assert since - 1 <= when.timestamp() <= time.time() + 1
    want_new = new if view in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES") else None
    want_old = old if view in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES") else None
    if want_new is None:
        assert "NewImage" not in d
    else:
        assert norm(d["NewImage"]) == norm(want_new)
    if want_old is None:
        assert "OldImage" not in d
    else:
        assert norm(d["OldImage"]) == norm(want_old)


def check_events(per_shard, view, expected, since):
    """expected: (event, keys, old, new) in write order. Records of one item must come in write
    order (DynamoDB promises no order across items); every record must be expected exactly once."""
    records = flat(per_shard)
    assert len(records) == len(expected), [(r["eventName"], r["dynamodb"]["Keys"]) for r in records]
    by_key = {}
    for rec in records:
        by_key.setdefault(key_of(rec), []).append(rec)
    want_by_key = {}
    for ev in expected:
        want_by_key.setdefault(tuple(sorted((k, str(v)) for k, v in ev[1].items())), []).append(ev)
    assert set(by_key) == set(want_by_key)
    for k, recs in by_key.items():
        assert len(recs) == len(want_by_key[k])
        for rec, (event, keys, old, new) in zip(recs, want_by_key[k]):
            check_record(rec, view, event, keys, old, new, since)
    assert_increasing(per_shard)
    assert len({r["eventID"] for r in records}) == len(records)


# ---- table descriptions, ListStreams, DescribeStream ----

@pytest.mark.parametrize("view", VIEW_TYPES)
def test_create_table_with_stream_describes_it(ddb, streams, view):
    created = make_table(ddb, "t_" + view.lower(), view)
    spec = {"StreamEnabled": True, "StreamViewType": view}
    assert created["StreamSpecification"] == spec
    arn, label = created["LatestStreamArn"], created["LatestStreamLabel"]
    assert arn.endswith("/stream/" + label)
    # "A timestamp, in ISO 8601 format"
    datetime.datetime.fromisoformat(label)

    table = ddb.describe_table(TableName="t_" + view.lower())["Table"]
    assert table["StreamSpecification"] == spec
    assert table["LatestStreamArn"] == arn
    assert table["LatestStreamLabel"] == label

    listed = streams.list_streams(TableName="t_" + view.lower())
    assert listed["Streams"] == [{"StreamArn": arn, "TableName": "t_" + view.lower(), "StreamLabel": label}]
    assert "LastEvaluatedStreamArn" not in listed

    desc = wait_status(streams, arn, "ENABLED")
    assert desc["StreamArn"] == arn
    assert desc["StreamLabel"] == label
    assert desc["StreamViewType"] == view
    assert desc["TableName"] == "t_" + view.lower()
    assert desc["KeySchema"] == RANGE_SCHEMA
    assert "LastEvaluatedShardId" not in desc
    assert desc["Shards"]
    for shard in desc["Shards"]:
        assert 28 <= len(shard["ShardId"]) <= 65
        assert is_sequence_number(shard["SequenceNumberRange"]["StartingSequenceNumber"])
        assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]  # open while enabled
    ids = [s["ShardId"] for s in desc["Shards"]]
    assert len(set(ids)) == len(ids)


def test_update_table_response_carries_the_stream(ddb, streams):
    # Alternator's suite records that UpdateTable answers with LatestStreamArn, LatestStreamLabel
    # and StreamSpecification even when the update is about something else.
    created = make_table(ddb, "billing", "NEW_IMAGE", schema=HASH_SCHEMA)
    out = ddb.update_table(TableName="billing", BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert out["LatestStreamArn"] == created["LatestStreamArn"]
    assert out["LatestStreamLabel"] == created["LatestStreamLabel"]
    assert out["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    desc = describe(streams, created["LatestStreamArn"])
    assert desc["KeySchema"] == HASH_SCHEMA


def test_table_without_stream(ddb, streams):
    plain = make_table(ddb, "plain")
    off = make_table(ddb, "off", spec={"StreamEnabled": False})
    for desc in (plain, off, ddb.describe_table(TableName="plain")["Table"],
                 ddb.describe_table(TableName="off")["Table"]):
        assert "LatestStreamArn" not in desc
        assert "LatestStreamLabel" not in desc
        assert desc.get("StreamSpecification", {"StreamEnabled": False})["StreamEnabled"] is False
    assert streams.list_streams(TableName="plain")["Streams"] == []
    assert streams.list_streams()["Streams"] == []
    ddb.put_item(TableName="plain", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    assert streams.list_streams()["Streams"] == []


def test_create_table_stream_specification_validation(ddb, streams):
    # Messages as recorded of DynamoDB by several emulators' suites and an API-quirks lab.
    code, msg = error_of(make_table, ddb=ddb, name="bad1", spec={"StreamEnabled": True})
    assert code == "ValidationException"
    assert msg == ("One or more parameter values were invalid: Table is being created with a stream "
                   "enabled, UpdateViewType is required")
    code, msg = error_of(make_table, ddb=ddb, name="bad2",
                         spec={"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"})
    assert code == "ValidationException"
    assert msg == ("One or more parameter values were invalid: Table is being created with a stream "
                   "disabled, UpdateViewType should not be specified")
    code, _ = error_of(make_table, ddb=ddb, name="bad3", spec={"StreamEnabled": True, "StreamViewType": "Fisk"})
    assert code == "ValidationException"
    assert ddb.list_tables()["TableNames"] == []
    assert streams.list_streams()["Streams"] == []
    # A CreateTable refused because the table exists makes no stream either.
    arn = make_table(ddb, "twice", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    code, _ = error_of(make_table, ddb=ddb, name="twice", view="NEW_IMAGE", schema=HASH_SCHEMA)
    assert code == "ResourceInUseException"
    assert [s["StreamArn"] for s in streams.list_streams()["Streams"]] == [arn]
    assert describe(streams, arn)["StreamViewType"] == "KEYS_ONLY"


def test_list_streams_pages(signed_server):
    # Signed with real SigV4 keys: the streams client signs as service "dynamodb".
    ddb = boto3_client(signed_server.url, *KEYS["default"])
    streams = streams_client(signed_server.url, *KEYS["ci"])
    arns = {}
    for name in ("alpha", "bravo", "charlie", "delta"):
        arns[name] = make_table(ddb, name, "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    make_table(ddb, "nostream", schema=HASH_SCHEMA)
    assert len(set(arns.values())) == 4

    everything = streams.list_streams()
    assert "LastEvaluatedStreamArn" not in everything
    assert {s["StreamArn"]: s["TableName"] for s in everything["Streams"]} == {v: k for k, v in arns.items()}
    for s in everything["Streams"]:
        assert s["StreamArn"].endswith("/stream/" + s["StreamLabel"])

    for limit in (1, 3):
        seen, start, calls = [], None, 0
        while True:
            kw = {"Limit": limit}
            if start:
                kw["ExclusiveStartStreamArn"] = start
            page = streams.list_streams(**kw)
            calls += 1
            assert len(page["Streams"]) <= limit
            seen += [s["StreamArn"] for s in page["Streams"]]
            start = page.get("LastEvaluatedStreamArn")
            if not start:
                break
            assert start == page["Streams"][-1]["StreamArn"]
            assert calls < 10
        assert sorted(seen) == sorted(arns.values())

    bad = streams_client(signed_server.url, KEYS["default"][0], "not-the-secret")
    assert error_of(bad.list_streams)[0] == "InvalidSignatureException"
    assert error_of(streams_client(signed_server.url, "AKIDNOTINTHEFILE", "x").list_streams)[0] \
        == "UnrecognizedClientException"

    # Tables made between two pages do not upset the paging of the streams listed before.
    page = streams.list_streams(Limit=2)
    first_two = [s["StreamArn"] for s in page["Streams"]]
    for name in ("echo", "foxtrot", "golf"):
        make_table(ddb, name, "KEYS_ONLY", schema=HASH_SCHEMA)
    rest = streams.list_streams(ExclusiveStartStreamArn=page["LastEvaluatedStreamArn"])
    listed = first_two + [s["StreamArn"] for s in rest["Streams"]]
    for arn in arns.values():
        assert listed.count(arn) == 1
    assert len(listed) == 7

    only = streams.list_streams(TableName="charlie")["Streams"]
    assert [s["StreamArn"] for s in only] == [arns["charlie"]]
    assert streams.list_streams(TableName="nostream")["Streams"] == []


def test_list_streams_limits(ddb, streams):
    make_table(ddb, "one", "KEYS_ONLY", schema=HASH_SCHEMA)
    # Limit is at least 1; "the upper limit is 100" (and Alternator records that 101 is refused).
    for bad in (0, -1, 101):
        assert error_of(streams.list_streams, Limit=bad)[0] == "ValidationException"
    assert len(streams.list_streams(Limit=100)["Streams"]) == 1
    # Alternator records that DynamoDB refuses an ExclusiveStartStreamArn that is not an ARN.
    code, _ = error_of(streams.list_streams, TableName="one",
                       ExclusiveStartStreamArn="kossaapaaasdafsdaasdasdasdasasdasfadfadfasdasdas")
    assert code == "ValidationException"


def test_describe_stream_shard_paging(ddb, streams):
    arn = make_table(ddb, "shards", "KEYS_ONLY")["LatestStreamArn"]
    all_shards = describe(streams, arn)["Shards"]
    first = streams.describe_stream(StreamArn=arn, Limit=1)["StreamDescription"]
    assert len(first["Shards"]) == 1
    assert first["Shards"][0] == all_shards[0]
    # Starting after the last shard leaves nothing (Alternator records this of DynamoDB).
    after_last = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=all_shards[-1]["ShardId"])
    assert after_last["StreamDescription"]["Shards"] == []
    assert "LastEvaluatedShardId" not in after_last["StreamDescription"]
    for bad in (0, -1):
        assert error_of(streams.describe_stream, StreamArn=arn, Limit=bad)[0] == "ValidationException"


def test_describe_stream_shard_filter(server, ddb, streams):
    # ShardFilter came to DescribeStream in July 2025, after the botocore Debian ships: the
    # requests go raw. CHILD_SHARDS lists a shard's children; the one shard has none.
    arn = make_table(ddb, "filtered", "KEYS_ONLY")["LatestStreamArn"]
    shard = describe(streams, arn)["Shards"][0]["ShardId"]

    def call(shard_filter):
        return raw(server.url, "DynamoDBStreams_20120810.DescribeStream",
                   {"StreamArn": arn, "ShardFilter": shard_filter})

    r = call({"Type": "CHILD_SHARDS", "ShardId": shard})
    assert r.status == 200, r.body
    assert r.json()["StreamDescription"]["Shards"] == []
    assert r.json()["StreamDescription"]["StreamArn"] == arn
    validate = "com.amazon.coral.validate#ValidationException"
    for shard_filter, message in [
            ({"Type": "PARENT_SHARDS", "ShardId": shard},
             "1 validation error detected: Value 'PARENT_SHARDS' at 'shardFilter.type' failed to "
             "satisfy constraint: Member must satisfy enum value set: [CHILD_SHARDS]"),
            ({"Type": "CHILD_SHARDS", "ShardId": "shardId-short"},
             "1 validation error detected: Value 'shardId-short' at 'shardFilter.shardId' failed to "
             "satisfy constraint: Member must have length greater than or equal to 28"),
            ({"ShardId": shard},
             "ShardFilter must have a Type: CHILD_SHARDS is the one filter DescribeStream knows"),
            ({"Type": "CHILD_SHARDS"},
             "ShardFilter of Type CHILD_SHARDS must name the ShardId whose child shards it lists")]:
        r = call(shard_filter)
        assert (r.status, r.json()) == (400, {"__type": validate, "message": message}), shard_filter
    # A shard the stream does not have is not found, as GetShardIterator answers it.
    r = call({"Type": "CHILD_SHARDS", "ShardId": "shardId-00000000000000000000-ffffffff"})
    assert (r.status, r.json()) == (400, {
        "__type": "com.amazonaws.dynamodb.v20120810#ResourceNotFoundException",
        "message": "Requested resource not found: Shard does not exist"})
    r = call([])
    assert r.status == 400 and r.json()["__type"] == "com.amazon.coral.service#SerializationException"


# ---- records ----

@pytest.mark.parametrize("view", VIEW_TYPES)
def test_item_writes_leave_records_per_view_type(ddb, streams, view):
    since = time.time()
    arn = make_table(ddb, "items", view)["LatestStreamArn"]
    t = "items"
    k1 = {"pk": {"S": "user#1"}, "sk": {"N": "7"}}
    k2 = {"pk": {"S": "user#2"}, "sk": {"N": "-1.5"}}
    v1 = dict(k1, name={"S": "Ada"}, bin={"B": b"\x00\x01\xff"}, tags={"SS": ["b", "a"]},
              nums={"NS": ["3", "1"]}, doc={"M": {"n": {"N": "1.5"}, "l": {"L": [{"BOOL": True}, {"NULL": True}]}}})
    v2 = dict(k1, name={"S": "Grace"})
    v3 = dict(v2, age={"N": "36"})
    w1 = dict(k2, x={"N": "1"})
    expected = []

    ddb.put_item(TableName=t, Item=v1)
    expected.append(("INSERT", k1, None, v1))
    ddb.put_item(TableName=t, Item=w1)
    expected.append(("INSERT", k2, None, w1))
    ddb.put_item(TableName=t, Item=v1)  # the same item again: nothing changes, no record
    code, _ = error_of(ddb.put_item, TableName=t, Item=v2, ConditionExpression="attribute_not_exists(pk)")
    assert code == "ConditionalCheckFailedException"  # a refused write leaves no record
    code, _ = error_of(ddb.delete_item, TableName=t, Key=k1, ConditionExpression="attribute_not_exists(pk)")
    assert code == "ConditionalCheckFailedException"
    code, _ = error_of(ddb.update_item, TableName=t, Key=k1, UpdateExpression="SET q = :q",
                       ConditionExpression="attribute_not_exists(pk)", ExpressionAttributeValues={":q": {"N": "1"}})
    assert code == "ConditionalCheckFailedException"
    ddb.put_item(TableName=t, Item=v2)
    expected.append(("MODIFY", k1, v1, v2))
    ddb.update_item(TableName=t, Key=k1, UpdateExpression="SET age = :a", ExpressionAttributeValues={":a": {"N": "36"}})
    expected.append(("MODIFY", k1, v2, v3))
    ddb.update_item(TableName=t, Key=k1, UpdateExpression="REMOVE #n, age", ExpressionAttributeNames={"#n": "name"})
    expected.append(("MODIFY", k1, v3, k1))  # an item left with its key alone still has a NewImage
    ddb.update_item(TableName=t, Key=k1, UpdateExpression="SET z = :z", ExpressionAttributeValues={":z": {"S": "z"}})
    expected.append(("MODIFY", k1, k1, dict(k1, z={"S": "z"})))
    ddb.delete_item(TableName=t, Key=k1)
    expected.append(("REMOVE", k1, dict(k1, z={"S": "z"}), None))
    ddb.delete_item(TableName=t, Key=k1)  # already gone: no record
    ddb.update_item(TableName=t, Key=k1, UpdateExpression="SET b = :b", ExpressionAttributeValues={":b": {"N": "4"}})
    expected.append(("INSERT", k1, None, dict(k1, b={"N": "4"})))
    ddb.update_item(TableName=t, Key=k2, UpdateExpression="ADD x :one", ExpressionAttributeValues={":one": {"N": "1"}})
    expected.append(("MODIFY", k2, w1, dict(k2, x={"N": "2"})))
    ddb.delete_item(TableName=t, Key=k2)
    expected.append(("REMOVE", k2, dict(k2, x={"N": "2"}), None))
    # UpdateItem with nothing to update still creates the item (its key alone), then changes it.
    k3 = {"pk": {"S": "user#3"}, "sk": {"N": "0"}}
    ddb.update_item(TableName=t, Key=k3)
    expected.append(("INSERT", k3, None, k3))
    ddb.update_item(TableName=t, Key=k3, UpdateExpression="SET y = :y", ExpressionAttributeValues={":y": {"N": "3"}})
    expected.append(("MODIFY", k3, k3, dict(k3, y={"N": "3"})))

    check_events(read_stream(streams, arn), view, expected, since)


def test_batch_write_and_transactions_leave_one_record_per_item(ddb, streams):
    since = time.time()
    view = "NEW_AND_OLD_IMAGES"
    arn = make_table(ddb, "bulk", view, schema=HASH_SCHEMA)["LatestStreamArn"]
    other = make_table(ddb, "bulk2", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    k = {n: {"pk": {"S": n}} for n in "abcdefz"}
    a0, b0 = dict(k["a"], v={"N": "0"}), dict(k["b"], v={"N": "0"})
    expected = []
    ddb.put_item(TableName="bulk", Item=a0)
    ddb.put_item(TableName="bulk", Item=b0)
    expected += [("INSERT", k["a"], None, a0), ("INSERT", k["b"], None, b0)]

    a1, c0 = dict(k["a"], v={"N": "1"}), dict(k["c"], v={"N": "0"})
    out = ddb.batch_write_item(RequestItems={"bulk": [
        {"PutRequest": {"Item": c0}}, {"PutRequest": {"Item": a1}},
        {"DeleteRequest": {"Key": k["b"]}}, {"DeleteRequest": {"Key": k["z"]}}],
        "bulk2": [{"PutRequest": {"Item": k["a"]}}]})
    assert out["UnprocessedItems"] == {}
    expected += [("INSERT", k["c"], None, c0), ("MODIFY", k["a"], a0, a1), ("REMOVE", k["b"], b0, None)]

    d0 = dict(k["d"], v={"N": "0"})
    ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": "bulk", "Item": d0}},
        {"Update": {"TableName": "bulk", "Key": k["a"], "UpdateExpression": "SET w = :w",
                    "ExpressionAttributeValues": {":w": {"S": "w"}}}},
        {"Delete": {"TableName": "bulk", "Key": k["c"]}},
        {"ConditionCheck": {"TableName": "bulk", "Key": k["e"], "ConditionExpression": "attribute_not_exists(pk)"}},
        {"Put": {"TableName": "bulk2", "Item": k["b"]}}])
    expected += [("INSERT", k["d"], None, d0), ("MODIFY", k["a"], a1, dict(a1, w={"S": "w"})),
                 ("REMOVE", k["c"], c0, None)]

    # A transaction sent again with the same ClientRequestToken is not run again: no records.
    once = [{"Update": {"TableName": "bulk", "Key": k["d"], "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": {"N": "1"}}}}]
    ddb.transact_write_items(TransactItems=once, ClientRequestToken="token-1")
    ddb.transact_write_items(TransactItems=once, ClientRequestToken="token-1")
    expected.append(("MODIFY", k["d"], d0, dict(d0, n={"N": "1"})))
    # A cancelled transaction writes nothing, so it leaves no record.
    code, _ = error_of(ddb.transact_write_items, TransactItems=[
        {"Put": {"TableName": "bulk", "Item": dict(k["f"], v={"N": "9"})}},
        {"ConditionCheck": {"TableName": "bulk", "Key": k["d"], "ConditionExpression": "attribute_not_exists(pk)"}}])
    assert code == "TransactionCanceledException"

    check_events(read_stream(streams, arn), view, expected, since)
    # Each table's stream holds its own table's records only.
    check_events(read_stream(streams, other), "KEYS_ONLY",
                 [("INSERT", k["a"], None, k["a"]), ("INSERT", k["b"], None, k["b"])], since)


def test_ttl_deletes_carry_the_service_identity(start):
    srv = start("--ttl-interval-ms", "200")
    ddb, streams = boto3_client(srv.url), streams_client(srv.url)
    since = time.time()
    view = "NEW_AND_OLD_IMAGES"
    arn = make_table(ddb, "expiring", view, schema=HASH_SCHEMA)["LatestStreamArn"]
    ddb.update_time_to_live(TableName="expiring",
                            TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    # Expired a minute ago (TTL leaves alone items that expired more than five years ago).
    old = {"pk": {"S": "old"}, "exp": {"N": str(int(time.time()) - 60)}}
    mine = {"pk": {"S": "mine"}, "exp": {"N": str(int(time.time()) + 86400)}}
    ddb.put_item(TableName="expiring", Item=old)
    ddb.put_item(TableName="expiring", Item=mine)
    ddb.delete_item(TableName="expiring", Key={"pk": {"S": "mine"}})
    deadline = time.monotonic() + 20
    while "Item" in ddb.get_item(TableName="expiring", Key={"pk": {"S": "old"}}):
        assert time.monotonic() < deadline, "the expired item was never swept"
        time.sleep(0.1)

    records = flat(read_stream(streams, arn))
    assert len(records) == 4
    ttl = [r for r in records if "userIdentity" in r]
    assert len(ttl) == 1
    rec = ttl[0]
    # "Items that are deleted by the Time to Live process after expiration": type "Service",
    # principalId "dynamodb.amazonaws.com".
    assert rec["userIdentity"] == {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"}
    assert rec["eventName"] == "REMOVE"
    assert rec["eventSource"] == "aws:dynamodb"
    assert is_sequence_number(rec["dynamodb"]["SequenceNumber"])
    assert rec["dynamodb"]["SizeBytes"] > 0
    assert rec["dynamodb"]["StreamViewType"] == view
    assert rec["dynamodb"]["Keys"] == {"pk": {"S": "old"}}
    assert rec["dynamodb"]["OldImage"] == old
    assert "NewImage" not in rec["dynamodb"]
    rest = [r for r in records if "userIdentity" not in r]
    check_events([rest], view, [("INSERT", {"pk": old["pk"]}, None, old),
                                ("INSERT", {"pk": mine["pk"]}, None, mine),
                                ("REMOVE", {"pk": mine["pk"]}, mine, None)], since)


# ---- shard iterators and GetRecords ----

def test_shard_iterator_types_and_paging(ddb, streams):
    arn = make_table(ddb, "iters", "NEW_IMAGE", schema=HASH_SCHEMA)["LatestStreamArn"]
    shards = describe(streams, arn)["Shards"]
    # One item's records all land in one shard, in order; a stream this small has one open shard.
    open_shards = [s for s in shards if "EndingSequenceNumber" not in s["SequenceNumberRange"]]
    assert len(open_shards) == 1
    shard = open_shards[0]
    sid = shard["ShardId"]

    # LATEST on an empty shard: no records (an empty list, not a missing one), and a way on.
    early_latest = iterator(streams, arn, sid, "LATEST")
    r = streams.get_records(ShardIterator=early_latest)
    assert r["Records"] == []
    assert r["NextShardIterator"]

    def write(n):
        ddb.put_item(TableName="iters", Item={"pk": {"S": "one"}, "v": {"N": str(n)}})

    for n in range(5):
        write(n)

    def values(records):
        return [int(x["dynamodb"]["NewImage"]["v"]["N"]) for x in records]

    everything, _, end = drain(streams, iterator(streams, arn, sid, "TRIM_HORIZON"))
    assert values(everything) == [0, 1, 2, 3, 4]
    assert [x["eventName"] for x in everything] == ["INSERT"] + ["MODIFY"] * 4
    assert_increasing([everything])
    assert end  # the stream is enabled: the end of the shard still hands back an iterator
    again = streams.get_records(ShardIterator=end)
    assert again["Records"] == [] and again["NextShardIterator"]

    # An iterator taken before the writes sees them; one taken now sees only later writes.
    assert values(drain(streams, early_latest)[0]) == [0, 1, 2, 3, 4]
    late_latest = iterator(streams, arn, sid, "LATEST")
    write(5)
    write(6)
    assert values(drain(streams, late_latest)[0]) == [5, 6]
    # The iterator left at the end of the first read picks up the writes made since.
    assert values(drain(streams, end)[0]) == [5, 6]

    everything = drain(streams, iterator(streams, arn, sid, "TRIM_HORIZON"))[0]
    seqs = [x["dynamodb"]["SequenceNumber"] for x in everything]
    assert len(seqs) == 7
    at = drain(streams, iterator(streams, arn, sid, "AT_SEQUENCE_NUMBER", seqs[2]))[0]
    assert [x["dynamodb"]["SequenceNumber"] for x in at] == seqs[2:]
    after = drain(streams, iterator(streams, arn, sid, "AFTER_SEQUENCE_NUMBER", seqs[2]))[0]
    assert [x["dynamodb"]["SequenceNumber"] for x in after] == seqs[3:]
    assert drain(streams, iterator(streams, arn, sid, "AFTER_SEQUENCE_NUMBER", seqs[-1]))[0] == []
    # Reading from the shard's StartingSequenceNumber reads all it holds, as TRIM_HORIZON does.
    start_seq = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    assert int(start_seq) <= int(seqs[0])
    from_start = drain(streams, iterator(streams, arn, sid, "AT_SEQUENCE_NUMBER", start_seq))[0]
    assert [x["dynamodb"]["SequenceNumber"] for x in from_start] == seqs

    # Limit pages through the shard, each page handing on the next iterator.
    trim = iterator(streams, arn, sid, "TRIM_HORIZON")
    paged, pages, last = drain(streams, trim, limit=2)
    assert pages[0] == 2 and pages[-1] == 0
    assert all(p <= 2 for p in pages)
    assert [x["dynamodb"]["SequenceNumber"] for x in paged] == seqs
    assert last
    # An iterator names a position: reading it again gives the same records.
    assert [x["dynamodb"]["SequenceNumber"] for x in streams.get_records(ShardIterator=trim, Limit=3)["Records"]] \
        == seqs[:3]
    assert len(streams.get_records(ShardIterator=trim, Limit=1000)["Records"]) == 7
    write(7)
    assert values(drain(streams, last, limit=2)[0]) == [7]


def test_iterator_and_records_errors(ddb, streams):
    created = make_table(ddb, "errs", "KEYS_ONLY", schema=HASH_SCHEMA)
    arn, label = created["LatestStreamArn"], created["LatestStreamLabel"]
    shard = describe(streams, arn)["Shards"][0]
    sid = shard["ShardId"]
    seq = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    ddb.put_item(TableName="errs", Item={"pk": {"S": "x"}})

    # A well-formed stream ARN that names no stream (only the documented label suffix changes).
    unknown = arn[:-len(label)] + "2000-01-01T00:00:00.000"
    code, msg = error_of(streams.describe_stream, StreamArn=unknown)
    assert code == "ResourceNotFoundException"
    # The text a suite run against real DynamoDB Streams records.
    assert msg == "Requested resource not found: Stream: %s not found" % unknown
    code, _ = error_of(streams.get_shard_iterator, StreamArn=unknown, ShardId=sid, ShardIteratorType="TRIM_HORIZON")
    assert code == "ResourceNotFoundException"
    # Something that is not an ARN at all: Alternator records ValidationException of DynamoDB.
    not_arn = "sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf"
    assert error_of(streams.describe_stream, StreamArn=not_arn)[0] == "ValidationException"
    assert error_of(streams.get_shard_iterator, StreamArn=not_arn, ShardId=sid,
                    ShardIteratorType="LATEST")[0] == "ValidationException"

    # A well-formed shard id (28 to 65 characters) that the stream does not have.
    code, _ = error_of(streams.get_shard_iterator, StreamArn=arn, ShardId="shardId-00000000000000000000-feedface",
                       ShardIteratorType="LATEST")
    assert code == "ResourceNotFoundException"

    for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
        assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=sid,
                        ShardIteratorType=kind)[0] == "ValidationException"
    # Alternator records that DynamoDB also refuses a SequenceNumber with TRIM_HORIZON or LATEST.
    for kind in ("TRIM_HORIZON", "LATEST"):
        assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=sid, ShardIteratorType=kind,
                        SequenceNumber=seq)[0] == "ValidationException"
    for kind in ("bulle", "latest", ""):
        assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=sid,
                        ShardIteratorType=kind)[0] == "ValidationException"
    assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=sid, ShardIteratorType="AT_SEQUENCE_NUMBER",
                    SequenceNumber="sdfsafglldfngjdafnasdflgnaldklkafdsgklnasdlv")[0] == "ValidationException"
    assert error_of(streams.get_shard_iterator, StreamArn=arn, ShardIteratorType="LATEST")[0] \
        == "ValidationException"
    assert error_of(streams.get_shard_iterator, ShardId=sid, ShardIteratorType="LATEST")[0] \
        == "ValidationException"

    for garbage in ("sdfsdfsgagaddafgagasgasgasdfasdfasdfasdfasdgasdasdgasdg", "x", "%%%%", "A" * 2048):
        assert error_of(streams.get_records, ShardIterator=garbage)[0] == "ValidationException"
    assert error_of(streams.get_records)[0] == "ValidationException"

    it = iterator(streams, arn, sid, "TRIM_HORIZON")
    assert len(streams.get_records(ShardIterator=it, Limit=1000)["Records"]) == 1
    # "The upper limit is 1000", minimum 1; Alternator records a ValidationException naming the limit.
    for bad in (0, -1, 1001):
        code, msg = error_of(streams.get_records, ShardIterator=it, Limit=bad)
        assert code == "ValidationException"
        assert "limit" in msg.lower()


def test_parameter_length_constraints(ddb, streams):
    # The API reference's length constraints, which DynamoDB checks before looking anything
    # up: a SequenceNumber has 21 to 40 characters, a ShardId 28 to 65, a StreamArn 37 to
    # 1024, a TableName 3 to 255. Each case is collected so one answer does not hide another.
    arn = make_table(ddb, "lens", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    shard = describe(streams, arn)["Shards"][0]
    sid, seq = shard["ShardId"], shard["SequenceNumberRange"]["StartingSequenceNumber"]
    cases = []
    for bad in ("1", seq[-20:], "1" * 41):
        for kind in ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER"):
            cases.append(("SequenceNumber %r" % bad, streams.get_shard_iterator,
                          dict(StreamArn=arn, ShardId=sid, ShardIteratorType=kind, SequenceNumber=bad)))
    for bad in ("shard-1", "s" * 27, "s" * 66):
        cases.append(("ShardId %r" % bad, streams.get_shard_iterator,
                      dict(StreamArn=arn, ShardId=bad, ShardIteratorType="LATEST")))
        cases.append(("ExclusiveStartShardId %r" % bad, streams.describe_stream,
                      dict(StreamArn=arn, ExclusiveStartShardId=bad)))
    cases.append(("StreamArn too short", streams.describe_stream, dict(StreamArn="arn:aws:dynamodb:x")))
    cases.append(("StreamArn too long", streams.describe_stream, dict(StreamArn=arn + "x" * 1024)))
    cases.append(("TableName too short", streams.list_streams, dict(TableName="ab")))
    cases.append(("ShardIterator empty", streams.get_records, dict(ShardIterator="")))
    wrong = []
    for name, call, kw in cases:
        try:
            call(**kw)
            wrong.append((name, "accepted"))
        except ClientError as e:
            if e.response["Error"]["Code"] != "ValidationException":
                wrong.append((name, e.response["Error"]["Code"]))
    assert wrong == [], wrong


def test_stream_arn_is_the_whole_string(ddb, streams):
    # JSON strings may hold a NUL character: an ARN with more after one is another ARN.
    arn = make_table(ddb, "nul", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    sid = describe(streams, arn)["Shards"][0]["ShardId"]
    code, _ = error_of(streams.describe_stream, StreamArn=arn + "\x00x")
    assert code in ("ResourceNotFoundException", "ValidationException")
    code, _ = error_of(streams.get_shard_iterator, StreamArn=arn + "\x00x", ShardId=sid, ShardIteratorType="LATEST")
    assert code in ("ResourceNotFoundException", "ValidationException")
    code, _ = error_of(streams.get_shard_iterator, StreamArn=arn, ShardId=sid + "\x00x", ShardIteratorType="LATEST")
    assert code in ("ResourceNotFoundException", "ValidationException")


def test_wrong_json_types_are_refused(server):
    # Bodies no SDK would send: the server must answer with an error, not crash.
    from conftest import raw
    for op, body in [("GetRecords", {"ShardIterator": 5}), ("GetRecords", {"ShardIterator": "x", "Limit": "ten"}),
                     ("GetShardIterator", {"StreamArn": [], "ShardId": {}, "ShardIteratorType": 1}),
                     ("DescribeStream", {"StreamArn": None}), ("ListStreams", {"Limit": "x"}),
                     ("ListStreams", [])]:
        r = raw(server.url, "DynamoDBStreams_20120810." + op, body)
        assert r.status == 400, (op, body, r.body)
        assert r.error_type in ("ValidationException", "SerializationException"), (op, body, r.body)
    r = raw(server.url, "DynamoDBStreams_20120810.ListStreams", "{not json")
    assert r.status == 400
    assert raw(server.url, "DynamoDBStreams_20120810.ListStreams", {}).status == 200


# ---- disabling, re-enabling, deleting ----

def test_disable_and_reenable_the_stream(ddb, streams):
    since = time.time()
    make_table(ddb, "flip", schema=HASH_SCHEMA)
    code, msg = error_of(ddb.update_table, TableName="flip", StreamSpecification={"StreamEnabled": False})
    assert code == "ValidationException"
    # The text recorded of DynamoDB (an API-quirks lab; Alternator's suite matches 'stream.*disable').
    assert msg == "Table has no stream to disable: TableName: flip"

    out = ddb.update_table(TableName="flip", StreamSpecification={"StreamEnabled": True,
                                                                   "StreamViewType": "NEW_IMAGE"})["TableDescription"]
    assert out["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    first, first_label = out["LatestStreamArn"], out["LatestStreamLabel"]
    assert first.endswith("/stream/" + first_label)
    assert latest_arn(ddb, "flip") == first
    wait_status(streams, first, "ENABLED")

    # Enabling again, with the same view type or another, is refused while a stream is on.
    for view in ("NEW_IMAGE", "KEYS_ONLY"):
        code, msg = error_of(ddb.update_table, TableName="flip",
                             StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
        assert code == "ValidationException"
        assert msg == "Table already has an enabled stream: TableName: flip"
    code, _ = error_of(ddb.update_table, TableName="flip", StreamSpecification={"StreamEnabled": True,
                                                                                 "StreamViewType": "Fisk"})
    assert code == "ValidationException"
    code, _ = error_of(ddb.update_table, TableName="nosuchtable",
                       StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    assert code == "ResourceNotFoundException"
    code, msg = error_of(ddb.update_table, TableName="flip", StreamSpecification={"StreamEnabled": True})
    assert code == "ValidationException"
    assert msg == "One or more parameter values were invalid: If stream is being enabled then UpdateViewType is required"
    code, msg = error_of(ddb.update_table, TableName="flip",
                         StreamSpecification={"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"})
    assert code == "ValidationException"
    assert msg == ("One or more parameter values were invalid: If stream is being disabled, then "
                   "UpdateViewType must not be specified")

    item = {"pk": {"S": "a"}, "v": {"N": "1"}}
    ddb.put_item(TableName="flip", Item=item)

    before = {s["ShardId"]: iterator(streams, first, s["ShardId"], "TRIM_HORIZON")
              for s in describe(streams, first)["Shards"]}
    ddb.update_table(TableName="flip", StreamSpecification={"StreamEnabled": False})
    assert describe(streams, first)["StreamStatus"] in ("DISABLING", "DISABLED")
    table = ddb.describe_table(TableName="flip")["Table"]
    assert table.get("StreamSpecification", {"StreamEnabled": False})["StreamEnabled"] is False
    # A lab's record of DynamoDB: LatestStreamArn and LatestStreamLabel stay after a disable.
    assert table["LatestStreamArn"] == first
    assert table["LatestStreamLabel"] == first_label
    desc = wait_status(streams, first, "DISABLED")
    assert desc["StreamViewType"] == "NEW_IMAGE"
    assert desc["TableName"] == "flip"
    for shard in desc["Shards"]:
        rng = shard["SequenceNumberRange"]
        assert is_sequence_number(rng["EndingSequenceNumber"])  # closed
        assert int(rng["EndingSequenceNumber"]) >= int(rng["StartingSequenceNumber"])

    ddb.put_item(TableName="flip", Item={"pk": {"S": "b"}})  # the stream is off: no record anywhere
    code, msg = error_of(ddb.update_table, TableName="flip", StreamSpecification={"StreamEnabled": False})
    assert (code, msg) == ("ValidationException", "Table has no stream to disable: TableName: flip")

    # The old records stay readable, and a closed shard ends: no NextShardIterator at its end.
    old = read_stream(streams, first)
    check_events(old, "NEW_IMAGE", [("INSERT", {"pk": item["pk"]}, None, item)], since)
    # LATEST on a closed shard: nothing to read, and no way on.
    for shard in desc["Shards"]:
        r = streams.get_records(ShardIterator=iterator(streams, first, shard["ShardId"], "LATEST"))
        assert r["Records"] == []
        assert "NextShardIterator" not in r
    # An iterator taken while the stream was on still reads what the shard holds.
    assert [r["dynamodb"]["SequenceNumber"] for it in before.values() for r in drain(streams, it)[0]] \
        == [r["dynamodb"]["SequenceNumber"] for r in flat(old)]
    for shard in desc["Shards"]:
        it = iterator(streams, first, shard["ShardId"], "TRIM_HORIZON")
        for _ in range(10):
            r = streams.get_records(ShardIterator=it)
            if "NextShardIterator" not in r:
                break
            it = r["NextShardIterator"]
        else:
            raise AssertionError("a closed shard never ended")
    # "The last sequence number for the stream records contained within a shard."
    assert max(int(s["SequenceNumberRange"]["EndingSequenceNumber"]) for s in desc["Shards"]) \
        >= seq_of(flat(old)[-1])

    out = ddb.update_table(TableName="flip", StreamSpecification={"StreamEnabled": True,
                                                                   "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    second = out["LatestStreamArn"]
    assert second != first
    assert second.endswith("/stream/" + out["LatestStreamLabel"])
    assert out["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    table = ddb.describe_table(TableName="flip")["Table"]
    assert table["LatestStreamArn"] == second
    assert table["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    listed = {s["StreamArn"] for s in streams.list_streams(TableName="flip")["Streams"]}
    assert listed == {first, second}
    assert wait_status(streams, second, "ENABLED")["StreamViewType"] == "KEYS_ONLY"
    assert describe(streams, first)["StreamStatus"] == "DISABLED"

    ddb.delete_item(TableName="flip", Key={"pk": {"S": "a"}})
    check_events(read_stream(streams, second), "KEYS_ONLY", [("REMOVE", {"pk": item["pk"]}, item, None)], since)
    assert len(flat(read_stream(streams, first))) == 1


def test_delete_table_leaves_the_stream_readable(ddb, streams):
    since = time.time()
    created = make_table(ddb, "doomed", "NEW_AND_OLD_IMAGES", schema=HASH_SCHEMA)
    arn = created["LatestStreamArn"]
    a, b = {"pk": {"S": "a"}}, {"pk": {"S": "b"}, "n": {"N": "2"}}
    ddb.put_item(TableName="doomed", Item=a)
    ddb.put_item(TableName="doomed", Item=b)
    deleted = ddb.delete_table(TableName="doomed")["TableDescription"]
    ddb.get_waiter("table_not_exists").wait(TableName="doomed", WaiterConfig={"Delay": 1})
    assert deleted.get("LatestStreamArn", arn) == arn

    assert arn in {s["StreamArn"] for s in streams.list_streams()["Streams"]}
    assert arn in {s["StreamArn"] for s in streams.list_streams(TableName="doomed")["Streams"]}
    desc = wait_status(streams, arn, "DISABLED")
    assert desc["TableName"] == "doomed"
    assert desc["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    for shard in desc["Shards"]:
        assert is_sequence_number(shard["SequenceNumberRange"]["EndingSequenceNumber"])
    records = flat(read_stream(streams, arn))
    check_events([records[:2]], "NEW_AND_OLD_IMAGES",
                 [("INSERT", a, None, a), ("INSERT", {"pk": b["pk"]}, None, b)], since)

    # A new table of the same name gets a new stream; both are listed for the name.
    again = make_table(ddb, "doomed", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    assert again != arn
    assert {s["StreamArn"] for s in streams.list_streams(TableName="doomed")["Streams"]} == {arn, again}
    assert flat(read_stream(streams, again)) == []
    assert describe(streams, arn)["StreamStatus"] == "DISABLED"


# ---- concurrency ----

def test_concurrent_writers_leave_exactly_one_record_per_write(server, streams):
    ddb = boto3_client(server.url)
    arn = make_table(ddb, "busy", "NEW_IMAGE")["LatestStreamArn"]
    threads_n, items_n = 4, 20
    errors = []

    def writer(w):
        try:
            c = boto3_client(server.url)
            for i in range(items_n):
                key = {"pk": {"S": "w%d" % w}, "sk": {"N": str(i)}}
                c.put_item(TableName="busy", Item=dict(key, step={"N": "1"}))
                c.update_item(TableName="busy", Key=key, UpdateExpression="SET step = :s",
                              ExpressionAttributeValues={":s": {"N": "2"}})
        except Exception as e:  # handed to the main thread's assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(threads_n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors

    per_shard = read_stream(streams, arn)
    records = flat(per_shard)
    assert len(records) == threads_n * items_n * 2
    assert_increasing(per_shard)
    seqs = [r["dynamodb"]["SequenceNumber"] for r in records]
    assert len(set(seqs)) == len(seqs)
    assert len({r["eventID"] for r in records}) == len(records)
    by_key = {}
    for r in records:
        by_key.setdefault(key_of(r), []).append(r)
    assert len(by_key) == threads_n * items_n
    for recs in by_key.values():
        assert [r["eventName"] for r in recs] == ["INSERT", "MODIFY"]
        assert [r["dynamodb"]["NewImage"]["step"]["N"] for r in recs] == ["1", "2"]


def test_reader_alongside_writers_sees_each_record_once(server, streams):
    # A reader following NextShardIterator while writers commit must neither skip a record
    # that commits late nor see one twice ("Each stream record appears exactly once").
    ddb = boto3_client(server.url)
    arn = make_table(ddb, "live", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    sid = describe(streams, arn)["Shards"][0]["ShardId"]
    it = iterator(streams, arn, sid, "TRIM_HORIZON")
    writers_n, items_n = 4, 30
    done = threading.Event()
    errors = []

    def writer(w):
        try:
            c = boto3_client(server.url)
            for i in range(items_n):
                c.put_item(TableName="live", Item={"pk": {"S": "w%d-%d" % (w, i)}})
        except Exception as e:  # handed to the main thread's assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(writers_n)]
    for t in threads:
        t.start()
    seen = []
    while not done.is_set():
        if not any(t.is_alive() for t in threads):
            done.set()  # one more pass after the last write
        r = streams.get_records(ShardIterator=it)
        seen += r["Records"]
        it = r["NextShardIterator"]
    for t in threads:
        t.join(60)
    assert not errors, errors
    seen += drain(streams, it)[0]
    keys = [r["dynamodb"]["Keys"]["pk"]["S"] for r in seen]
    assert sorted(keys) == sorted("w%d-%d" % (w, i) for w in range(writers_n) for i in range(items_n))
    assert_increasing([seen])


def test_get_records_answers_at_most_one_megabyte(ddb, streams):
    # "GetRecords can retrieve a maximum of 1 MB of data or 1000 stream records, whichever
    # comes first." Eight records of about 300 KB each need several calls.
    arn = make_table(ddb, "big", "NEW_IMAGE", schema=HASH_SCHEMA)["LatestStreamArn"]
    for i in range(8):
        ddb.put_item(TableName="big", Item={"pk": {"S": "k%d" % i}, "blob": {"S": "x" * 300000}})
    sid = describe(streams, arn)["Shards"][0]["ShardId"]
    it = iterator(streams, arn, sid, "TRIM_HORIZON")
    got, pages = [], 0
    while True:
        r = streams.get_records(ShardIterator=it, Limit=1000)
        if not r["Records"]:
            break
        pages += 1
        assert sum(x["dynamodb"]["SizeBytes"] for x in r["Records"]) <= 1 << 20
        got += r["Records"]
        it = r["NextShardIterator"]
        assert pages < 20
    assert [x["dynamodb"]["Keys"]["pk"]["S"] for x in got] == ["k%d" % i for i in range(8)]
    assert all(x["dynamodb"]["SizeBytes"] > 300000 for x in got)


def test_every_enable_makes_a_distinct_stream(server, streams):
    # A stream's label is a timestamp, yet "the combination of the AWS customer ID, the table
    # name and the StreamLabel is guaranteed to be unique": streams enabled in quick
    # succession on one table must still get distinct ARNs. Several clients flip the stream
    # at once (most flips are refused as redundant; the ones that enable are kept).
    from conftest import raw
    import http.client
    make_table(boto3_client(server.url), "flap", schema=HASH_SCHEMA)
    arns, lock = [], threading.Lock()
    on = {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}

    def flipper(w):
        conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
        try:
            for i in range(150):
                spec = on if (i + w) % 2 == 0 else {"StreamEnabled": False}
                r = raw(server.url, "DynamoDB_20120810.UpdateTable", {"TableName": "flap", "StreamSpecification": spec},
                        conn=conn)
                if r.status == 200 and spec["StreamEnabled"]:
                    with lock:
                        arns.append(r.json()["TableDescription"]["LatestStreamArn"])
        finally:
            conn.close()

    threads = [threading.Thread(target=flipper, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert arns
    assert len(set(arns)) == len(arns)
    listed, kw = [], {}
    while True:  # ListStreams answers at most 100 streams a page
        page = streams.list_streams(TableName="flap", **kw)
        listed += [s["StreamArn"] for s in page["Streams"]]
        if "LastEvaluatedStreamArn" not in page:
            break
        kw = {"ExclusiveStartStreamArn": page["LastEvaluatedStreamArn"]}
    assert sorted(listed) == sorted(arns)
    table = boto3_client(server.url).describe_table(TableName="flap")["Table"]
    if table.get("StreamSpecification", {}).get("StreamEnabled"):
        assert describe(streams, table["LatestStreamArn"])["StreamStatus"] == "ENABLED"
    for arn in arns:
        if arn != table["LatestStreamArn"]:
            assert describe(streams, arn)["StreamStatus"] == "DISABLED"


def test_streams_survive_a_restart(start, tmp_path):
    data = tmp_path / "kept"
    srv = start(data=data)
    ddb, streams = boto3_client(srv.url), streams_client(srv.url)
    arn = make_table(ddb, "kept", "NEW_IMAGE", schema=HASH_SCHEMA)["LatestStreamArn"]
    ddb.put_item(TableName="kept", Item={"pk": {"S": "a"}})
    ddb.put_item(TableName="kept", Item={"pk": {"S": "b"}})
    before = flat(read_stream(streams, arn))
    assert srv.stop() == 0

    srv = start(data=data)
    ddb, streams = boto3_client(srv.url), streams_client(srv.url)
    assert latest_arn(ddb, "kept") == arn
    assert describe(streams, arn)["StreamStatus"] == "ENABLED"
    assert [s["StreamArn"] for s in streams.list_streams()["Streams"]] == [arn]
    assert flat(read_stream(streams, arn)) == before
    ddb.put_item(TableName="kept", Item={"pk": {"S": "c"}})
    after = flat(read_stream(streams, arn))
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in after] == ["a", "b", "c"]
    assert_increasing([after])

    # Closed streams stay closed, listed and readable across a restart too: one disabled,
    # one whose table was deleted.
    ddb.update_table(TableName="kept", StreamSpecification={"StreamEnabled": False})
    gone = make_table(ddb, "gone", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    ddb.put_item(TableName="gone", Item={"pk": {"S": "z"}})
    ddb.delete_table(TableName="gone")
    closed = {a: wait_status(streams, a, "DISABLED") for a in (arn, gone)}
    assert srv.stop() == 0

    srv = start(data=data)
    ddb, streams = boto3_client(srv.url), streams_client(srv.url)
    assert sorted(s["StreamArn"] for s in streams.list_streams()["Streams"]) == sorted([arn, gone])
    for a, desc in closed.items():
        assert describe(streams, a) == desc
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in flat(read_stream(streams, arn))] == ["a", "b", "c"]
    assert [r["dynamodb"]["Keys"]["pk"]["S"] for r in flat(read_stream(streams, gone))] == ["z"]
    ddb.put_item(TableName="kept", Item={"pk": {"S": "d"}})  # the stream is off
    assert len(flat(read_stream(streams, arn))) == 3
    again = ddb.update_table(TableName="kept", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    assert again["TableDescription"]["LatestStreamArn"] not in (arn, gone)


def test_index_tables_and_binary_keys(ddb, streams):
    # A write that also maintains secondary indexes is still one record, keyed by the table's key.
    since = time.time()
    view = "NEW_AND_OLD_IMAGES"
    ddb.create_table(
        TableName="indexed", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}, {"AttributeName": "at", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "B"}, {"AttributeName": "at", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}, {"AttributeName": "l", "AttributeType": "N"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        LocalSecondaryIndexes=[{"IndexName": "by_l", "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"},
                                                                  {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
    arn = latest_arn(ddb, "indexed")
    assert describe(streams, arn)["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"},
                                                   {"AttributeName": "at", "KeyType": "RANGE"}]
    k = {"id": {"B": b"\x00\xfe"}, "at": {"S": "t1"}}
    v1 = dict(k, g={"S": "red"}, l={"N": "1"})
    v2 = dict(k, g={"S": "blue"}, l={"N": "2"})
    ddb.put_item(TableName="indexed", Item=v1)
    ddb.put_item(TableName="indexed", Item=v2)
    ddb.delete_item(TableName="indexed", Key=k)
    check_events(read_stream(streams, arn), view,
                 [("INSERT", k, None, v1), ("MODIFY", k, v1, v2), ("REMOVE", k, v2, None)], since)


def test_creation_time_is_the_writes_not_the_reads(ddb, streams):
    arn = make_table(ddb, "clock", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    before = time.time()
    ddb.put_item(TableName="clock", Item={"pk": {"S": "a"}})
    after = time.time()
    time.sleep(1.2)
    (rec,) = flat(read_stream(streams, arn))
    when = rec["dynamodb"]["ApproximateCreationDateTime"].timestamp()
    assert int(before) <= when <= after


def test_rewriting_equal_values_leaves_no_record(ddb, streams):
    # A PutItem that leaves the item as it was makes no record (Alternator records this of
    # DynamoDB). Sets have no order and numbers have one value however written, so an item
    # rewritten with its sets in another order or its numbers spelled otherwise is unchanged.
    since = time.time()
    view = "NEW_AND_OLD_IMAGES"
    arn = make_table(ddb, "same", view, schema=HASH_SCHEMA)["LatestStreamArn"]
    k = {"pk": {"S": "a"}}
    v = dict(k, s={"SS": ["x", "y", "z"]}, n={"N": "10"}, ns={"NS": ["1", "2.5"]}, bs={"BS": [b"\x01", b"\x02"]},
             m={"M": {"inner": {"SS": ["p", "q"]}}})
    ddb.put_item(TableName="same", Item=v)
    ddb.put_item(TableName="same", Item=dict(k, s={"SS": ["z", "x", "y"]}, n={"N": "1E1"}, ns={"NS": ["2.50", "1"]},
                                             bs={"BS": [b"\x02", b"\x01"]}, m={"M": {"inner": {"SS": ["q", "p"]}}}))
    ddb.put_item(TableName="same", Item=dict(v, n={"N": "10.0"}))
    check_events(read_stream(streams, arn), view, [("INSERT", k, None, v)], since)


def test_disable_while_writing(server, streams):
    # Writes racing a disable: a write that finished before the disable was asked for is in
    # the closed stream, one begun after the disable answered is not, and the closed shard
    # holds exactly the records up to its EndingSequenceNumber, each once.
    ddb = boto3_client(server.url)
    arn = make_table(ddb, "racing", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    stop = threading.Event()
    log, errors = [], []

    def writer(w):
        try:
            c = boto3_client(server.url)
            i = 0
            while not stop.is_set() and i < 400:
                key = "w%d-%d" % (w, i)
                t0 = time.monotonic()
                c.put_item(TableName="racing", Item={"pk": {"S": key}})
                log.append((key, t0, time.monotonic()))
                i += 1
        except Exception as e:  # handed to the main thread's assertion below
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    time.sleep(0.3)
    asked = time.monotonic()
    ddb.update_table(TableName="racing", StreamSpecification={"StreamEnabled": False})
    answered = time.monotonic()
    time.sleep(0.2)
    stop.set()
    for t in threads:
        t.join(60)
    assert not errors, errors

    desc = wait_status(streams, arn, "DISABLED")
    (shard,) = desc["Shards"]
    end = int(shard["SequenceNumberRange"]["EndingSequenceNumber"])
    it = iterator(streams, arn, shard["ShardId"], "TRIM_HORIZON")
    records = []
    for _ in range(1000):
        r = streams.get_records(ShardIterator=it)
        records += r["Records"]
        if "NextShardIterator" not in r:
            break
        it = r["NextShardIterator"]
    else:
        raise AssertionError("the closed shard never ended")
    assert_increasing([records])
    assert all(seq_of(r) <= end for r in records)
    keys = [r["dynamodb"]["Keys"]["pk"]["S"] for r in records]
    assert len(set(keys)) == len(keys)
    recorded = set(keys)
    assert {k for k, t0, t1 in log if t1 < asked} <= recorded
    assert not {k for k, t0, t1 in log if t0 > answered} & recorded
    assert recorded <= {k for k, _, _ in log}


def test_get_records_answers_at_most_a_thousand_records(ddb, streams):
    arn = make_table(ddb, "many", "KEYS_ONLY", schema=HASH_SCHEMA)["LatestStreamArn"]
    for b in range(0, 1100, 25):
        out = ddb.batch_write_item(RequestItems={"many": [{"PutRequest": {"Item": {"pk": {"S": "k%04d" % i}}}}
                                                          for i in range(b, b + 25)]})
        assert out["UnprocessedItems"] == {}
    sid = describe(streams, arn)["Shards"][0]["ShardId"]
    first = streams.get_records(ShardIterator=iterator(streams, arn, sid, "TRIM_HORIZON"))
    assert 0 < len(first["Records"]) <= 1000
    rest = drain(streams, first["NextShardIterator"])[0]
    keys = [r["dynamodb"]["Keys"]["pk"]["S"] for r in first["Records"] + rest]
    assert sorted(keys) == ["k%04d" % i for i in range(1100)]
