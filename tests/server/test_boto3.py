"""boto3 against quarry, signed with real SigV4 against a credentials file: the client API
(tables, items, conditions, errors) and the resource API (Table.query with Key conditions,
batch_writer, paginators)."""
import decimal

import pytest
from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError

from conftest import KEYS, boto3_client, boto3_resource


@pytest.fixture
def ddb(signed_server):
    return boto3_client(signed_server.url, *KEYS["default"])


@pytest.fixture
def res(signed_server):
    return boto3_resource(signed_server.url, *KEYS["ci"])


def make_table(ddb, name, sk_type="S"):
    ddb.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": sk_type}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})


def test_client_items_and_conditions(ddb):
    make_table(ddb, "music")
    assert "music" in ddb.list_tables()["TableNames"]
    ddb.put_item(TableName="music", Item={
        "pk": {"S": "artist#1"}, "sk": {"S": "song#1"}, "plays": {"N": "10"},
        "art": {"B": b"\x00\xffbytes"}, "genres": {"SS": ["rock", "pop"]}})
    item = ddb.get_item(TableName="music", Key={"pk": {"S": "artist#1"}, "sk": {"S": "song#1"}})["Item"]
    assert item["plays"] == {"N": "10"}
    assert item["art"] == {"B": b"\x00\xffbytes"}
    assert set(item["genres"]["SS"]) == {"rock", "pop"}

    out = ddb.update_item(TableName="music", Key={"pk": {"S": "artist#1"}, "sk": {"S": "song#1"}},
                          UpdateExpression="ADD plays :one", ExpressionAttributeValues={":one": {"N": "1"}},
                          ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"plays": {"N": "11"}}

    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName="music", Item={"pk": {"S": "artist#1"}, "sk": {"S": "song#1"}},
                     ConditionExpression="attribute_not_exists(pk)")
    assert e.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400

    with pytest.raises(ClientError) as e:
        ddb.get_item(TableName="nope", Key={"pk": {"S": "x"}, "sk": {"S": "y"}})
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"

    with pytest.raises(ClientError) as e:
        ddb.put_item(TableName="music", Item={"pk": {"S": "only-hash"}})
    assert e.value.response["Error"]["Code"] == "ValidationException"

    ddb.delete_item(TableName="music", Key={"pk": {"S": "artist#1"}, "sk": {"S": "song#1"}})
    assert "Item" not in ddb.get_item(TableName="music", Key={"pk": {"S": "artist#1"}, "sk": {"S": "song#1"}})
    d = ddb.describe_table(TableName="music")["Table"]
    assert d["TableStatus"] == "ACTIVE"
    assert {k["AttributeName"] for k in d["KeySchema"]} == {"pk", "sk"}


def test_resource_query_batch_writer_and_paginators(ddb, res):
    make_table(ddb, "orders")
    table = res.Table("orders")
    with table.batch_writer() as bw:  # 70 puts: three BatchWriteItem calls
        for i in range(60):
            bw.put_item(Item={"pk": "user#1", "sk": "order#%03d" % i, "total": decimal.Decimal(i) / 4})
        bw.put_item(Item={"pk": "user#1", "sk": "profile", "name": "Ada"})
        for i in range(9):
            bw.put_item(Item={"pk": "user#2", "sk": "order#%03d" % i, "total": 1})

    r = table.query(KeyConditionExpression=Key("pk").eq("user#1") & Key("sk").begins_with("order#"))
    assert r["Count"] == 60
    assert r["Items"][0] == {"pk": "user#1", "sk": "order#000", "total": decimal.Decimal(0)}
    assert r["Items"][5]["total"] == decimal.Decimal("1.25")

    r = table.query(KeyConditionExpression=Key("pk").eq("user#1") & Key("sk").between("order#010", "order#019"),
                    FilterExpression=Attr("total").gte(4), ScanIndexForward=False)
    assert [it["sk"] for it in r["Items"]] == ["order#%03d" % i for i in range(19, 15, -1)]
    assert r["ScannedCount"] == 10

    assert table.get_item(Key={"pk": "user#1", "sk": "profile"})["Item"]["name"] == "Ada"

    pages = list(ddb.get_paginator("query").paginate(
        TableName="orders", KeyConditionExpression="pk = :p AND begins_with(sk, :s)",
        ExpressionAttributeValues={":p": {"S": "user#1"}, ":s": {"S": "order#"}},
        PaginationConfig={"PageSize": 7}))
    assert len(pages) >= 9
    assert sum(p["Count"] for p in pages) == 60
    sks = [it["sk"]["S"] for p in pages for it in p["Items"]]
    assert sks == ["order#%03d" % i for i in range(60)]

    scanned = list(ddb.get_paginator("scan").paginate(TableName="orders", PaginationConfig={"PageSize": 11}))
    assert sum(p["Count"] for p in scanned) == 70

    with table.batch_writer() as bw:
        for i in range(9):
            bw.delete_item(Key={"pk": "user#2", "sk": "order#%03d" % i})
    assert table.query(KeyConditionExpression=Key("pk").eq("user#2"))["Count"] == 0
