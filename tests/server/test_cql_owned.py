"""A CQL table through the DynamoDB API of the same `quarry serve --cql`: its engine table
`ks.t` is the CQL schema's, so boto3's writes of its items (PutItem, UpdateItem, DeleteItem,
BatchWriteItem, TransactWriteItems, PartiQL) and changes of its schema (DeleteTable,
UpdateTable, UpdateTimeToLive) are refused with a ValidationException naming it as CQL's,
and leave the rows as CQL wrote them; reads through the DynamoDB API stay allowed. Tables
of the DynamoDB API beside it are written as before."""
import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")
pytest.importorskip("boto3", reason="python3-boto3 is not installed")

from botocore.exceptions import ClientError  # noqa: E402

from conftest import boto3_client  # noqa: E402

TABLE = "shop.orders"
KEY = {"$pk": {"B": b"\x00"}, "$ck": {"B": b"\x01"}}


@pytest.fixture
def both(cql_server):
    srv = cql_server()
    session = srv.session()
    session.execute("CREATE KEYSPACE shop WITH replication = "
                    "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    session.execute("CREATE TABLE shop.orders (customer text, n int, total int, "
                    "PRIMARY KEY (customer, n))")
    session.execute("INSERT INTO shop.orders (customer, n, total) VALUES ('ann', 1, 10)")
    return session, boto3_client(srv.url)


def refused(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationException", err
    assert "shop.orders is owned by CQL" in err["Message"], err
    return err


def rows(session):
    return [tuple(r) for r in session.execute("SELECT customer, n, total FROM shop.orders")]


def test_item_writes_through_dynamodb_are_refused(both):
    session, ddb = both
    # the row's own key, as a DynamoDB client reads it
    item = ddb.scan(TableName=TABLE)["Items"][0]
    key = {"$pk": item["$pk"], "$ck": item["$ck"]}
    refused(ddb.put_item, TableName=TABLE, Item=dict(key, total={"N": "99"}))
    refused(ddb.put_item, TableName=TABLE, Item=KEY)
    refused(ddb.update_item, TableName=TABLE, Key=key, UpdateExpression="SET #t = :t", ExpressionAttributeNames={"#t": "total"},
            ExpressionAttributeValues={":t": {"N": "99"}})
    refused(ddb.delete_item, TableName=TABLE, Key=key)
    refused(ddb.batch_write_item, RequestItems={TABLE: [{"DeleteRequest": {"Key": key}}]})
    refused(ddb.transact_write_items,
            TransactItems=[{"Delete": {"TableName": TABLE, "Key": key}}])
    refused(ddb.execute_statement, Statement='DELETE FROM "shop.orders" WHERE "$pk" = ? AND '
            '"$ck" = ?', Parameters=[key["$pk"], key["$ck"]])
    refused(ddb.execute_statement, Statement="INSERT INTO \"shop.orders\" VALUE "
            "{'$pk': ?, '$ck': ?}", Parameters=[KEY["$pk"], KEY["$ck"]])
    assert rows(session) == [("ann", 1, 10)]
    # CQL still writes it
    session.execute("UPDATE shop.orders SET total = 11 WHERE customer = 'ann' AND n = 1")
    assert rows(session) == [("ann", 1, 11)]


def test_schema_changes_through_dynamodb_are_refused(both):
    session, ddb = both
    refused(ddb.delete_table, TableName=TABLE)
    refused(ddb.update_table, TableName=TABLE, BillingMode="PROVISIONED",
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1})
    arn = ddb.describe_table(TableName=TABLE)["Table"]["TableArn"]
    refused(ddb.delete_table, TableName=arn)
    refused(ddb.update_time_to_live, TableName=TABLE,
            TimeToLiveSpecification={"Enabled": False, "AttributeName": "$expires"})
    assert TABLE in ddb.list_tables()["TableNames"]
    assert rows(session) == [("ann", 1, 10)]
    # CQL's own schema changes of it go on: an index (an UpdateTable inside), then DROP
    session.execute("CREATE INDEX ON shop.orders (total)")
    session.execute("DROP TABLE shop.orders")
    assert TABLE not in ddb.list_tables()["TableNames"]


def test_reads_through_dynamodb_and_dynamodb_tables_stay(both):
    _, ddb = both
    items = ddb.scan(TableName=TABLE)["Items"]
    assert len(items) == 1 and items[0]["total"] == {"N": "10"}
    key = {"$pk": items[0]["$pk"], "$ck": items[0]["$ck"]}
    assert ddb.get_item(TableName=TABLE, Key=key)["Item"]["total"] == {"N": "10"}
    got = ddb.execute_statement(Statement='SELECT total FROM "shop.orders"')["Items"]
    assert got == [{"total": {"N": "10"}}]
    # a DynamoDB table is untouched by the check
    ddb.create_table(TableName="plain", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}])
    ddb.put_item(TableName="plain", Item={"k": {"S": "a"}})
    ddb.transact_write_items(TransactItems=[{"Put": {"TableName": "plain",
                                                     "Item": {"k": {"S": "b"}}}}])
    ddb.update_table(TableName="plain", BillingMode="PROVISIONED",
                     ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    assert ddb.scan(TableName="plain")["Count"] == 2
    ddb.delete_table(TableName="plain")
