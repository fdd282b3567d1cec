"""Table operations through `quarry call`: CreateTable, DescribeTable, ListTables, UpdateTable, DeleteTable."""


def test_create_describe_delete(q):
    r = q.create("Orders")
    d = r["TableDescription"]
    assert d["TableName"] == "Orders"
    assert d["TableStatus"] == "CREATING"
    assert d["KeySchema"][0] == {"AttributeName": "pk", "KeyType": "HASH"}
    assert d["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    t = q.call("DescribeTable", {"TableName": "Orders"})["Table"]
    assert t["TableStatus"] == "ACTIVE"
    assert t["ItemCount"] == 0
    assert t["TableArn"].endswith(":table/Orders")
    q.call("PutItem", {"TableName": "Orders", "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}, "x": {"S": "hello"}}})
    t = q.call("DescribeTable", {"TableName": "Orders"})["Table"]
    assert t["ItemCount"] == 1
    assert t["TableSizeBytes"] > 0
    d = q.call("DeleteTable", {"TableName": "Orders"})["TableDescription"]
    assert d["TableStatus"] == "DELETING"
    e = q.error("DescribeTable", {"TableName": "Orders"})
    assert e.type == "ResourceNotFoundException"
    assert "Orders" in e.message


def test_recreated_table_is_empty(q):
    q.create("Tab1")
    q.call("PutItem", {"TableName": "Tab1", "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}}})
    q.call("DeleteTable", {"TableName": "Tab1"})
    q.create("Tab1")
    assert q.call("Scan", {"TableName": "Tab1"})["Count"] == 0


def test_duplicate_table(q):
    q.create("Dup")
    e = q.error("CreateTable", {"TableName": "Dup", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"})
    assert e.type == "ResourceInUseException"


def test_list_tables_pagination(q):
    names = [f"table{i:02d}" for i in range(7)]
    for n in reversed(names):
        q.create(n, sk=None)
    seen, start = [], None
    while True:
        req = {"Limit": 3}
        if start:
            req["ExclusiveStartTableName"] = start
        r = q.call("ListTables", req)
        seen += r["TableNames"]
        start = r.get("LastEvaluatedTableName")
        if not start:
            break
    assert seen == names


def test_bad_schemas(q):
    base = {"TableName": "Bad", "BillingMode": "PAY_PER_REQUEST"}
    e = q.error("CreateTable", dict(base, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}]))
    assert e.type == "ValidationException" and "keySchema" in e.message
    e = q.error("CreateTable", dict(base, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "X"}],
                                    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}]))
    assert "enum value set" in e.message
    e = q.error("CreateTable", dict(base, AttributeDefinitions=[{"AttributeName": "a", "AttributeType": "S"}],
                                    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}]))
    assert "not defined in AttributeDefinitions" in e.message
    e = q.error("CreateTable", dict(base, TableName="x"))
    assert "length greater than or equal to 3" in e.message
    e = q.error("CreateTable", {"TableName": "Prov", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    assert "ReadCapacityUnits and WriteCapacityUnits must both be specified" in e.message


def test_update_table_billing(q):
    q.call("CreateTable", {"TableName": "Prov", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                           "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}})
    t = q.call("UpdateTable", {"TableName": "Prov", "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 7}})
    assert t["TableDescription"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 10
    t = q.call("UpdateTable", {"TableName": "Prov", "BillingMode": "PAY_PER_REQUEST"})
    assert t["TableDescription"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    d = q.call("DescribeTable", {"TableName": "Prov"})["Table"]
    assert d["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    e = q.error("UpdateTable", {"TableName": "Nope", "BillingMode": "PAY_PER_REQUEST"})
    assert e.type == "ResourceNotFoundException"
