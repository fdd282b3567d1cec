"""DynamoDB Streams behaviours that running ScyllaDB Alternator's streams suite against
`quarry serve` exercised and tests/server/test_streams.py did not yet pin down: a table's
stream ARN survives changes to the table that are not about its stream (tags, billing),
tables with names of the longest allowed length keep working streams, and the images of a
table with a local secondary index carry the whole item, index key included or absent as
the item has it. Our own tests, written from AWS's API reference and what that suite
records of real DynamoDB."""
import time

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client
from test_streams import check_events, describe, drain, flat, iterator, read_stream, streams_client


@pytest.fixture
def ddb(server):
    return boto3_client(server.url)


@pytest.fixture
def streams(server):
    return streams_client(server.url)


def string_keys(*names):
    return [{"AttributeName": n, "AttributeType": "S"} for n in names]


def test_tagging_the_table_keeps_its_one_stream(ddb, streams):
    out = ddb.create_table(
        TableName="tagged", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=string_keys("pk"), StreamSpecification={"StreamEnabled": True,
                                                                     "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    arn = out["LatestStreamArn"]
    ddb.tag_resource(ResourceArn=out["TableArn"], Tags=[{"Key": "animal", "Value": "dog"}])
    ddb.untag_resource(ResourceArn=out["TableArn"], TagKeys=["animal"])
    ddb.update_table(TableName="tagged", BillingMode="PAY_PER_REQUEST")
    listed = streams.list_streams(TableName="tagged")["Streams"]
    assert [s["StreamArn"] for s in listed] == [arn]
    assert ddb.describe_table(TableName="tagged")["Table"]["LatestStreamArn"] == arn
    assert describe(streams, arn)["StreamStatus"] == "ENABLED"
    # The stream still takes the table's writes.
    ddb.put_item(TableName="tagged", Item={"pk": {"S": "a"}})
    assert [r["eventName"] for r in flat(read_stream(streams, arn))] == ["INSERT"]


@pytest.mark.parametrize("how", ["create", "update"])
def test_longest_table_name_has_a_working_stream(ddb, streams, how):
    # TableName may be 255 characters; its stream ARN, shard iterators and records must work
    # all the same (Alternator's suite records a crash at 222 in its own implementation).
    name = "s" + "x" * 254
    spec = {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    kw = {"StreamSpecification": spec} if how == "create" else {}
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], AttributeDefinitions=string_keys("pk"),
                     **kw)
    if how == "update":
        ddb.update_table(TableName=name, StreamSpecification=spec)
    arn = ddb.describe_table(TableName=name)["Table"]["LatestStreamArn"]
    assert (":table/%s/stream/" % name) in arn
    desc = describe(streams, arn)
    assert desc["TableName"] == name
    shard = desc["Shards"][0]["ShardId"]
    it = iterator(streams, arn, shard, "LATEST")
    assert len(it) <= 2048  # GetRecords' ShardIterator: 1 to 2048 characters
    item = {"pk": {"S": "k"}, "v": {"N": "1"}}
    ddb.put_item(TableName=name, Item=item)
    records, _, _ = drain(streams, it)
    assert [(r["eventName"], r["dynamodb"]["NewImage"]) for r in records] == [("INSERT", item)]
    ddb.delete_table(TableName=name)


def lsi_table(ddb, view):
    ddb.create_table(
        TableName="lsi", BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
        AttributeDefinitions=string_keys("p", "c", "k"),
        LocalSecondaryIndexes=[{"IndexName": "by_k", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                                                   {"AttributeName": "k", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view})
    return ddb.describe_table(TableName="lsi")["Table"]["LatestStreamArn"]


def test_images_of_an_lsi_table_hold_the_whole_item(ddb, streams):
    # The old image is the whole item as it was, the index key among its attributes when the
    # item had one and absent when not; updates that leave the index key alone keep it.
    since = time.time()
    view = "NEW_AND_OLD_IMAGES"
    arn = lsi_table(ddb, view)
    a = {"p": {"S": "p1"}, "c": {"S": "a"}}
    b = {"p": {"S": "p1"}, "c": {"S": "b"}}
    expected = []
    ddb.update_item(TableName="lsi", Key=a, UpdateExpression="SET x = :x, k = :k",
                    ExpressionAttributeValues={":x": {"N": "2"}, ":k": {"S": "dog"}})
    a1 = dict(a, x={"N": "2"}, k={"S": "dog"})
    expected.append(("INSERT", a, None, a1))
    ddb.update_item(TableName="lsi", Key=a, UpdateExpression="SET y = :y", ExpressionAttributeValues={":y": {"N": "3"}})
    a2 = dict(a1, y={"N": "3"})
    expected.append(("MODIFY", a, a1, a2))
    ddb.update_item(TableName="lsi", Key=b, UpdateExpression="SET x = :x", ExpressionAttributeValues={":x": {"N": "2"}})
    b1 = dict(b, x={"N": "2"})
    expected.append(("INSERT", b, None, b1))
    ddb.update_item(TableName="lsi", Key=b, UpdateExpression="SET y = :y", ExpressionAttributeValues={":y": {"N": "3"}})
    b2 = dict(b1, y={"N": "3"})
    expected.append(("MODIFY", b, b1, b2))
    check_events(read_stream(streams, arn), view, expected, since)


def test_replacing_an_item_drops_its_lsi_key(ddb, streams):
    # A PutItem that replaces an item with one lacking the index key is one MODIFY (not a
    # REMOVE and an INSERT) whose old image has the key, and the item leaves the index.
    since = time.time()
    view = "NEW_AND_OLD_IMAGES"
    arn = lsi_table(ddb, view)
    key = {"p": {"S": "p1"}, "c": {"S": "a"}}
    with_k = dict(key, k={"S": "1"})
    ddb.put_item(TableName="lsi", Item=with_k)
    assert ddb.scan(TableName="lsi", IndexName="by_k")["Count"] == 1
    ddb.put_item(TableName="lsi", Item=key)
    assert ddb.scan(TableName="lsi", IndexName="by_k")["Count"] == 0
    check_events(read_stream(streams, arn), view, [("INSERT", key, None, with_k), ("MODIFY", key, with_k, key)],
                 since)


def test_index_projection_all_refuses_non_key_attributes(ddb):
    # Alternator's LSI stream fixture passes NonKeyAttributes with ProjectionType ALL; DynamoDB
    # refuses that (as dynalite records), so quarry does too and the fixture cannot run here.
    with pytest.raises(ClientError) as e:
        ddb.create_table(
            TableName="lsi_bad", BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
            AttributeDefinitions=string_keys("p", "c", "a"),
            LocalSecondaryIndexes=[{"IndexName": "a_idx", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                                                         {"AttributeName": "a", "KeyType": "RANGE"}],
                                    "Projection": {"ProjectionType": "ALL", "NonKeyAttributes": ["string"]}}],
            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationException"
    assert err["Message"] == ("One or more parameter values were invalid: ProjectionType is ALL, but "
                              "NonKeyAttributes is specified")
    assert ddb.list_tables()["TableNames"] == []
