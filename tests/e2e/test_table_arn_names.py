"""A table's ARN given as its TableName (DDB-TABLE-011/072): DynamoDB takes
arn:aws:dynamodb:<region>:<account>:table/<name> wherever a TableName is read, answers with
the bare name, and names the bare table when it is missing. Checked through each family of
operations: items, transactions, PartiQL, tables, and the table's sub-resources."""
import pytest

ARN = "arn:aws:dynamodb:ddblocal:000000000000:table/"
KEY = {"pk": {"S": "a"}, "sk": {"S": "b"}}


@pytest.fixture
def q(q):
    q.create("Named")
    return q


def test_item_operations(q):
    t = ARN + "Named"
    out = q.call("PutItem", {"TableName": t, "Item": KEY, "ReturnConsumedCapacity": "TOTAL"})
    assert out["ConsumedCapacity"]["TableName"] == "Named"
    q.call("UpdateItem", {"TableName": t, "Key": KEY, "UpdateExpression": "SET v = :v",
                          "ExpressionAttributeValues": {":v": {"N": "1"}}})
    assert q.call("GetItem", {"TableName": t, "Key": KEY})["Item"]["v"] == {"N": "1"}
    got = q.call("Query", {"TableName": t, "KeyConditionExpression": "pk = :p",
                           "ExpressionAttributeValues": {":p": {"S": "a"}}, "ReturnConsumedCapacity": "TOTAL"})
    assert got["Count"] == 1 and got["ConsumedCapacity"]["TableName"] == "Named"
    assert q.call("Scan", {"TableName": t})["Count"] == 1
    q.call("DeleteItem", {"TableName": t, "Key": KEY})
    assert "Item" not in q.call("GetItem", {"TableName": "Named", "Key": KEY})
    e = q.error("GetItem", {"TableName": ARN + "Gone", "Key": KEY})
    assert (e.type, e.message) == ("ResourceNotFoundException", "Requested resource not found")


def test_transactions_and_partiql(q):
    t = ARN + "Named"
    out = q.call("TransactWriteItems", {"TransactItems": [{"Put": {"TableName": t, "Item": KEY}}],
                                        "ReturnConsumedCapacity": "TOTAL"})
    assert out["ConsumedCapacity"][0]["TableName"] == "Named"
    got = q.call("TransactGetItems", {"TransactItems": [{"Get": {"TableName": t, "Key": KEY}}]})
    assert got["Responses"] == [{"Item": KEY}]
    rows = q.call("ExecuteStatement", {"Statement": 'SELECT * FROM "%s"' % t})["Items"]
    assert rows == [KEY]


def test_table_operations_answer_the_bare_name(q):
    t = ARN + "Named"
    assert q.call("DescribeTable", {"TableName": t})["Table"]["TableName"] == "Named"
    out = q.call("UpdateTable", {"TableName": t, "DeletionProtectionEnabled": False})["TableDescription"]
    assert out["TableName"] == "Named"
    e = q.error("DescribeTable", {"TableName": ARN + "Gone"})
    assert (e.type, e.message) == ("ResourceNotFoundException", "Requested resource not found: Table: Gone not found")
    assert q.call("DeleteTable", {"TableName": t})["TableDescription"]["TableName"] == "Named"
    assert q.call("ListTables", {})["TableNames"] == []


def test_sub_resources(q):
    t = ARN + "Named"
    q.call("UpdateTimeToLive", {"TableName": t, "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "e"}})
    ttl = q.call("DescribeTimeToLive", {"TableName": t})["TimeToLiveDescription"]
    assert ttl == {"TimeToLiveStatus": "ENABLED", "AttributeName": "e"}
    q.call("UpdateContinuousBackups", {"TableName": t, "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True}})
    pitr = q.call("DescribeContinuousBackups", {"TableName": t})["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "ENABLED"
    out = q.call("UpdateContributorInsights", {"TableName": t, "ContributorInsightsAction": "ENABLE"})
    assert out["TableName"] == "Named"
    assert q.call("DescribeContributorInsights", {"TableName": t})["TableName"] == "Named"
    summaries = q.call("ListContributorInsights", {"TableName": t})["ContributorInsightsSummaries"]
    assert [s["TableName"] for s in summaries] == ["Named"]
    backup = q.call("CreateBackup", {"TableName": t, "BackupName": "bk1"})["BackupDetails"]
    assert backup["BackupArn"].startswith(ARN + "Named/backup/")
    listed = q.call("ListBackups", {"TableName": t})["BackupSummaries"]
    assert [b["TableName"] for b in listed] == ["Named"]
    for op, req in [("DescribeTimeToLive", {}), ("DescribeContributorInsights", {})]:
        e = q.error(op, {"TableName": ARN + "Gone", **req})
        assert (e.type, e.message) == ("ResourceNotFoundException", "Requested resource not found: Table: Gone not found")
    e = q.error("CreateBackup", {"TableName": ARN + "Gone", "BackupName": "bk2"})
    assert (e.type, e.message) == ("TableNotFoundException", "Table not found: Gone")


def test_arns_that_name_no_table_here(q):
    """DDB-TABLE-011: another region is a ValidationException, another account is denied;
    an index's ARN, an ARN over 1024 characters and a too-short name inside are refused."""
    e = q.error("DescribeTable", {"TableName": "arn:aws:dynamodb:mars-1:000000000000:table/Named"})
    assert (e.type, e.message) == ("ValidationException", "1 validation error detected: Invalid AWS region in "
                                   "'arn:aws:dynamodb:mars-1:000000000000:table/Named'")
    e = q.error("PutItem", {"TableName": "arn:aws:dynamodb:ddblocal:111111111111:table/Named", "Item": KEY})
    assert (e.type, e.message) == ("AccessDeniedException", "Access is denied")
    e = q.error("DescribeTable", {"TableName": ARN + "Named/index/byG"})
    assert e.type == "ValidationException" and "regular expression pattern" in e.message
    long = ARN + "n" * (1025 - len(ARN))
    e = q.error("GetItem", {"TableName": long, "Key": KEY})
    assert e.message == ("1 validation error detected: Value '%s' at 'tableName' failed to satisfy constraint: Member "
                         "must have length less than or equal to 1024" % long[:700])
    e = q.error("DescribeTable", {"TableName": ARN + "ab"})
    assert e.message == ("1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: Member "
                         "must have length greater than or equal to 3")


def test_names_only_where_no_arn_is_taken(q):
    """The ListTables cursor and a restore's target take a name, never an ARN."""
    e = q.error("ListTables", {"ExclusiveStartTableName": ARN + "Named"})
    assert e.type == "ValidationException" and "regular expression pattern" in e.message
    arn = q.call("CreateBackup", {"TableName": "Named", "BackupName": "bk1"})["BackupDetails"]["BackupArn"]
    e = q.error("RestoreTableFromBackup", {"BackupArn": arn, "TargetTableName": ARN + "Copy"})
    assert e.type == "ValidationException"
    assert q.call("ListTables", {})["TableNames"] == ["Named"]


def test_batch_request_items_keyed_by_arn(q):
    """BatchWriteItem and BatchGetItem take table ARNs as RequestItems keys too, and answer
    under the key each table was asked by."""
    t = ARN + "Named"
    q.call("BatchWriteItem", {"RequestItems": {t: [{"PutRequest": {"Item": KEY}}]}})
    got = q.call("BatchGetItem", {"RequestItems": {t: {"Keys": [KEY]}, "Named": {"Keys": [KEY]}}})
    assert got["Responses"] == {t: [KEY], "Named": [KEY]}
    e = q.error("BatchGetItem", {"RequestItems": {ARN + "Gone": {"Keys": [KEY]}}})
    assert e.type == "ResourceNotFoundException"
    e = q.error("BatchWriteItem", {"RequestItems": {"arn:aws:dynamodb:ddblocal:000000000000:table/Named/index/x": [
        {"PutRequest": {"Item": KEY}}]}})
    assert e.type == "ValidationException"
