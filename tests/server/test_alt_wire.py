"""Wire behaviour found by running ScyllaDB Alternator's suite against `quarry serve`:
what a client that sends a whole over-long body reads back."""
import json

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client, raw

PUT = "DynamoDB_20120810.PutItem"
LIST = "DynamoDB_20120810.ListTables"
LIMIT = 16 * 1024 * 1024


def put_request(table, padding):
    # Valid JSON whatever its length: the padding is white space between members.
    return ('{"TableName": "%s", %s"Item": {"pk": {"S": "x"}}}' % (table, " " * padding)).encode()


def test_a_client_sending_a_whole_oversized_body_reads_413(server):
    # Refused before the body is read, the client still gets to send all of it and read
    # DynamoDB's 413 answer, not a connection reset, whatever the size.
    for padding in (LIMIT + 1, LIMIT + 1024 * 1024):
        r = raw(server.url, PUT, put_request("T", padding))
        assert r.status == 413
        doc = json.loads(r.body)
        assert doc["__type"].endswith("RequestEntityTooLarge")
        assert str(LIMIT) in doc["message"]
    assert raw(server.url, LIST, {}).status == 200


def test_an_sdk_sees_the_413_as_an_error_answer(server):
    c = boto3_client(server.url)
    c.create_table(TableName="big", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                   BillingMode="PAY_PER_REQUEST")
    with pytest.raises(ClientError) as e:
        c.put_item(TableName="big", Item={"pk": {"S": "x"}, "big": {"S": "y" * (LIMIT + 7)}})
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 413
    assert e.value.response["Error"]["Code"] == "RequestEntityTooLarge"
    assert "Item" not in c.get_item(TableName="big", Key={"pk": {"S": "x"}})
