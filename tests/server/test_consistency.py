"""Eventual consistency on purpose: `quarry serve --gsi-lag-ms` holds global index
updates back, so an application can be tested against the lag it will meet on
DynamoDB; the table itself stays strongly consistent."""
import time

from conftest import boto3_client


def test_injected_gsi_lag(start):
    srv = start("--gsi-lag-ms", "700")
    c = boto3_client(srv.url)
    c.create_table(TableName="Orders", BillingMode="PAY_PER_REQUEST",
                   AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "status", "AttributeType": "S"}],
                   KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                   GlobalSecondaryIndexes=[{"IndexName": "ByStatus",
                                            "KeySchema": [{"AttributeName": "status", "KeyType": "HASH"}],
                                            "Projection": {"ProjectionType": "ALL"}}])
    c.put_item(TableName="Orders", Item={"pk": {"S": "o1"}, "status": {"S": "PENDING"}})

    def pending():
        return c.query(TableName="Orders", IndexName="ByStatus", KeyConditionExpression="#s = :p",
                       ExpressionAttributeNames={"#s": "status"},
                       ExpressionAttributeValues={":p": {"S": "PENDING"}})["Count"]

    written = time.time()
    # The table answers at once, the index only after the lag.
    assert c.get_item(TableName="Orders", Key={"pk": {"S": "o1"}}, ConsistentRead=True)["Item"]
    assert pending() == 0
    while pending() == 0 and time.time() < written + 10:
        time.sleep(0.05)
    assert pending() == 1
    assert time.time() - written >= 0.6


def test_ttl_sweeps_through_the_server(start):
    srv = start("--ttl-interval-ms", "100")
    c = boto3_client(srv.url)
    c.create_table(TableName="Sessions", BillingMode="PAY_PER_REQUEST",
                   AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                   KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    c.update_time_to_live(TableName="Sessions", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    now = int(time.time())
    c.put_item(TableName="Sessions", Item={"id": {"S": "old"}, "exp": {"N": str(now - 5)}})
    c.put_item(TableName="Sessions", Item={"id": {"S": "new"}, "exp": {"N": str(now + 3600)}})
    deadline = time.time() + 10
    while time.time() < deadline and "Item" in c.get_item(TableName="Sessions", Key={"id": {"S": "old"}}):
        time.sleep(0.05)
    assert "Item" not in c.get_item(TableName="Sessions", Key={"id": {"S": "old"}})
    assert "Item" in c.get_item(TableName="Sessions", Key={"id": {"S": "new"}})
    assert c.describe_time_to_live(TableName="Sessions")["TimeToLiveDescription"]["TimeToLiveStatus"] == "ENABLED"
