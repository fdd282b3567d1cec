"""RestoreTableToPointInTime: while a table's point-in-time recovery is enabled, quarry
keeps what each write replaced, and a restore makes a new table holding the source as it
was at the asked time. DynamoDB's latest restorable time trails the present by five
minutes, so a table whose recovery was enabled moments ago restores to that moment."""
import time

import pytest

KEYS = {"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "g", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "GlobalSecondaryIndexes": [{"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}],
        "BillingMode": "PAY_PER_REQUEST"}


def item(pk, g, n):
    return {"pk": {"S": pk}, "g": {"S": g}, "n": {"N": str(n)}}


def scan(q, name):
    items = q.call("Scan", {"TableName": name})["Items"]
    return sorted(items, key=lambda i: i["pk"]["S"])


def enable(q, name):
    return q.call("UpdateContinuousBackups", {"TableName": name, "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True}})["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]


@pytest.fixture
def source(q):
    q.call("CreateTable", {"TableName": "Src", **KEYS})
    for pk, n in (("a", 1), ("b", 2), ("c", 3)):
        q.call("PutItem", {"TableName": "Src", "Item": item(pk, "x", n)})
    window = enable(q, "Src")
    time.sleep(0.01)
    # After the window opened: a changed, b deleted, d added, c rewritten twice.
    q.call("PutItem", {"TableName": "Src", "Item": item("a", "y", 10)})
    q.call("DeleteItem", {"TableName": "Src", "Key": {"pk": {"S": "b"}}})
    q.call("PutItem", {"TableName": "Src", "Item": item("d", "x", 4)})
    q.call("UpdateItem", {"TableName": "Src", "Key": {"pk": {"S": "c"}}, "UpdateExpression": "SET n = :n",
                          "ExpressionAttributeValues": {":n": {"N": "30"}}})
    q.call("UpdateItem", {"TableName": "Src", "Key": {"pk": {"S": "c"}}, "UpdateExpression": "SET n = :n",
                          "ExpressionAttributeValues": {":n": {"N": "31"}}})
    return window


def test_restore_to_the_latest_restorable_time(q, source):
    r = q.call("RestoreTableToPointInTime", {"SourceTableName": "Src", "TargetTableName": "Back",
                                             "UseLatestRestorableTime": True})["TableDescription"]
    assert r["RestoreSummary"]["SourceTableArn"].endswith(":table/Src")
    assert "SourceBackupArn" not in r["RestoreSummary"]
    assert r["RestoreSummary"]["RestoreDateTime"] == pytest.approx(source["LatestRestorableDateTime"], abs=1)
    assert scan(q, "Back") == [item("a", "x", 1), item("b", "x", 2), item("c", "x", 3)]
    # The source is untouched, and its index and the restored one agree with their tables.
    assert [i["pk"]["S"] for i in scan(q, "Src")] == ["a", "c", "d"]
    got = q.call("Query", {"TableName": "Back", "IndexName": "byG", "KeyConditionExpression": "g = :g",
                           "ExpressionAttributeValues": {":g": {"S": "x"}}})["Items"]
    assert sorted(i["pk"]["S"] for i in got) == ["a", "b", "c"]
    desc = q.call("DescribeTable", {"TableName": "Back"})["Table"]
    assert desc["ItemCount"] == 3 and desc["RestoreSummary"]["RestoreInProgress"] is False
    # A restored table starts without point-in-time recovery, and no backup is left behind.
    pitr = q.call("DescribeContinuousBackups", {"TableName": "Back"})["ContinuousBackupsDescription"]
    assert pitr["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"
    assert q.call("ListBackups", {}).get("BackupSummaries", []) == []


def test_restore_by_date_and_by_arn(q, source):
    arn = q.call("DescribeTable", {"TableName": "Src"})["Table"]["TableArn"]
    q.call("RestoreTableToPointInTime", {"SourceTableArn": arn, "TargetTableName": "ByDate",
                                         "RestoreDateTime": source["EarliestRestorableDateTime"]})
    assert [i["pk"]["S"] for i in scan(q, "ByDate")] == ["a", "b", "c"]


def test_restore_time_outside_the_window(q, source):
    e = q.error("RestoreTableToPointInTime", {"SourceTableName": "Src", "TargetTableName": "Early",
                                              "RestoreDateTime": source["EarliestRestorableDateTime"] - 60})
    assert e.type == "InvalidRestoreTimeException"
    e = q.error("RestoreTableToPointInTime", {"SourceTableName": "Src", "TargetTableName": "Late",
                                              "RestoreDateTime": time.time() + 60})
    assert e.type == "InvalidRestoreTimeException"
    assert q.error("DescribeTable", {"TableName": "Late"}).type == "ResourceNotFoundException"


def test_disabling_forgets_the_history(q, source):
    q.call("UpdateContinuousBackups", {"TableName": "Src", "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": False}})
    enable(q, "Src")
    q.call("RestoreTableToPointInTime", {"SourceTableName": "Src", "TargetTableName": "Fresh",
                                         "UseLatestRestorableTime": True})
    # The new window opened after every change: the restore is the table as it is now.
    assert [i["pk"]["S"] for i in scan(q, "Fresh")] == ["a", "c", "d"]


def test_restore_request_rules(q, source):
    e = q.error("RestoreTableToPointInTime", {"TargetTableName": "X1y", "UseLatestRestorableTime": True})
    assert e.message == "Invalid Request: Must provide exactly one of: sourceTableArn, sourceTableName"
    e = q.error("RestoreTableToPointInTime", {"SourceTableName": "Gone", "TargetTableName": "X1y",
                                              "UseLatestRestorableTime": True})
    assert (e.type, e.message) == ("TableNotFoundException", "Table not found: Gone")
    e = q.error("RestoreTableToPointInTime", {"SourceTableName": "Src", "TargetTableName": "X1y",
                                              "UseLatestRestorableTime": True, "RestoreDateTime": time.time()})
    assert e.message.startswith("Invalid Request: Either one of RestoreDateTime or UseLatestRestorableTime")
