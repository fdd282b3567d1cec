"""DynamoDB's behaviour in its secondary features, checked with boto3 against `quarry serve`:
streams, tags, transactions' client request tokens, and the control-plane operations
around tables (contributor insights, resource policies). Each test states what DynamoDB
answers, from its documentation and from suites recorded against the real service."""
import datetime
import json
import re
import time
from unittest.mock import ANY

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from conftest import REGION, boto3_client, raw

ACCOUNT = "000000000000"


@pytest.fixture
def ddb(server):
    return boto3_client(server.url)


@pytest.fixture
def loose(server):
    """A client that sends what it is given, without checking it first."""
    return boto3.client("dynamodb", endpoint_url=server.url, region_name=REGION, aws_access_key_id="k",
                        aws_secret_access_key="s",
                        config=Config(retries={"max_attempts": 1}, parameter_validation=False))


def make_table(ddb, name, **kw):
    ddb.create_table(TableName=name, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST", **kw)
    return ddb.describe_table(TableName=name)["Table"]


def error_of(call, **kw):
    with pytest.raises(ClientError) as e:
        call(**kw)
    return e.value.response["Error"]["Code"], e.value.response["Error"]["Message"]


# ---- tags ----

def test_tags_only_on_table_arns(ddb, loose):
    arn = make_table(ddb, "tagged")["TableArn"]
    tags = [{"Key": "env", "Value": "test"}]
    invalid = "One or more parameter values were invalid: "
    # Only a table's own ARN takes tags, and each other kind is named for what it is.
    for bad, msg in [("not-a-valid-arn", invalid + "ARNs must start with 'arn:': not-a-valid-arn"),
                     (arn + "/index/byname", invalid + "Invalid resource arn provided, only table or stream is "
                                                       "accepted. Provided resource arn: " + arn + "/index/byname"),
                     (arn + "/backup/01234567890123-abcdef12",
                      invalid + "Provided Arn is not a DynamoDB resource arn: " + arn + "/backup/01234567890123-abcdef12"),
                     ("arn:aws:s3:::bucket", invalid + "Provided Arn is not a DynamoDB resource arn: arn:aws:s3:::bucket"),
                     ("arn:aws:dynamodb:%s:%s:table/ab" % (REGION, ACCOUNT),
                      "Invalid TableArn: Invalid ResourceArn provided as input arn:aws:dynamodb:%s:%s:table/ab"
                      % (REGION, ACCOUNT))]:
        assert error_of(ddb.tag_resource, ResourceArn=bad, Tags=tags) == ("ValidationException", msg)
        assert error_of(ddb.list_tags_of_resource, ResourceArn=bad) == ("ValidationException", msg)
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    assert error_of(loose.list_tags_of_resource)[1] == "Invalid TableArn"


def test_tag_rules(ddb, loose):
    arn = make_table(ddb, "tagged")["TableArn"]
    for tags, msg in [([], "Atleast one Tag needs to be provided as Input."),
                      ([{"Key": "aws:owner", "Value": "x"}], "Tag Key cannot be prefixed with aws:, Key: aws:owner"),
                      ([{"Key": "k", "Value": "a"}, {"Key": "k", "Value": "b"}],
                       "Duplicate Tag Keys provided as input: Duplicate Tag Key found k"),
                      ([{"Key": "bad#key", "Value": "v"}], "The Tag Key provided is invalid, Key: bad#key"),
                      ([{"Key": "k", "Value": "bad#value"}], "The Tag Value provided is invalid, Value: bad#value"),
                      ([{"Key": "k"}], "The Tag Value provided is invalid, Value: null"),
                      ([{"Key": str(i), "Value": "v"} for i in range(51)],
                       "Number of Tags exceed the current limit for the provided ResourceArn")]:
        assert error_of(loose.tag_resource, ResourceArn=arn, Tags=tags) == ("ValidationException", msg)
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == []
    # The limit counts what the table would hold afterwards.
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": str(i), "Value": "v"} for i in range(50)])
    assert error_of(ddb.tag_resource, ResourceArn=arn, Tags=[{"Key": "one-more", "Value": "v"}])[1] == \
        "Number of Tags exceed the current limit for the provided ResourceArn"
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "0", "Value": "replaced"}])  # a replacement adds none
    # CreateTable judges its Tags the same way, and makes no table when they are bad.
    code, msg = error_of(ddb.create_table, TableName="tagged2", BillingMode="PAY_PER_REQUEST",
                         AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                         KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                         Tags=[{"Key": "aws:x", "Value": "y"}])
    assert (code, msg) == ("ValidationException", "Tag Key cannot be prefixed with aws:, Key: aws:x")
    assert "tagged2" not in ddb.list_tables()["TableNames"]


def test_untag_needs_a_key(ddb):
    arn = make_table(ddb, "tagged")["TableArn"]
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "env", "Value": "test"}])
    code, msg = error_of(ddb.untag_resource, ResourceArn=arn, TagKeys=[])
    assert (code, msg) == ("ValidationException", "Atleast one Tag Key needs to be provided as Input.")
    assert error_of(ddb.untag_resource, ResourceArn=arn, TagKeys=["env", "bad#key"]) == \
        ("ValidationException", "The Tag Key provided is invalid, Key: bad#key")
    ddb.untag_resource(ResourceArn=arn, TagKeys=["absent"])  # a key not there is no error
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "test"}]


def test_tags_of_missing_and_foreign_tables(ddb):
    make_table(ddb, "tagged")
    missing = "arn:aws:dynamodb:us-east-1:%s:table/nonexistent_table_xyz" % ACCOUNT
    code, msg = error_of(ddb.list_tags_of_resource, ResourceArn=missing)
    assert (code, msg) == ("ResourceNotFoundException", "Requested resource not found: ResourceArn: %s not found" % missing)
    # Tagging names the ARN too, as recorded from DynamoDB in October 2026 (an earlier
    # recording had the bare "Requested resource not found").
    assert error_of(ddb.tag_resource, ResourceArn=missing, Tags=[{"Key": "a", "Value": "b"}]) == \
        ("ResourceNotFoundException", "Requested resource not found: ResourceArn: %s not found" % missing)
    assert error_of(ddb.untag_resource, ResourceArn=missing, TagKeys=["a"]) == \
        ("ResourceNotFoundException", "Requested resource not found: ResourceArn: %s not found" % missing)
    # A table of another account is not ours to read: IAM refuses before DynamoDB looks.
    foreign = "arn:aws:dynamodb:us-east-1:123456789012:table/tagged"
    code, msg = error_of(ddb.list_tags_of_resource, ResourceArn=foreign)
    assert code == "AccessDeniedException"
    assert "dynamodb:ListTagsOfResource on resource: " + foreign in msg
    assert error_of(ddb.tag_resource, ResourceArn=foreign, Tags=[{"Key": "a", "Value": "b"}])[0] == \
        "AccessDeniedException"


# ---- time to live ----

def test_ttl_changes_are_refused_as_dynamodb_words_them(ddb):
    make_table(ddb, "expiring")
    ddb.update_time_to_live(TableName="expiring", TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"})
    assert error_of(ddb.update_time_to_live, TableName="expiring",
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": "other"}) == \
        ("ValidationException", "TimeToLive is already enabled")
    assert error_of(ddb.update_time_to_live, TableName="expiring",
                    TimeToLiveSpecification={"Enabled": False, "AttributeName": "other"}) == \
        ("ValidationException", "TimeToLive is active on a different AttributeName: current AttributeName is ttl")
    d = ddb.describe_time_to_live(TableName="expiring")["TimeToLiveDescription"]
    assert d == {"TimeToLiveStatus": "ENABLED", "AttributeName": "ttl"}
    assert error_of(ddb.describe_time_to_live, TableName="absent") == \
        ("ResourceNotFoundException", "Requested resource not found: Table: absent not found")
    assert error_of(ddb.update_time_to_live, TableName="absent",
                    TimeToLiveSpecification={"Enabled": True, "AttributeName": "ttl"}) == \
        ("ResourceNotFoundException", "Requested resource not found: Table: absent not found")


def test_ttl_attribute_length_is_judged_in_dynamodb_words(ddb, loose):
    make_table(ddb, "expiring")
    code, msg = error_of(loose.update_time_to_live, TableName="expiring",
                         TimeToLiveSpecification={"Enabled": True, "AttributeName": "a" * 256})
    assert (code, msg) == ("ValidationException", "1 validation error detected: Value '%s' at "
                           "'timeToLiveSpecification.attributeName' failed to satisfy constraint: Member must have "
                           "length less than or equal to 255" % ("a" * 256))


# ---- point-in-time recovery ----

def test_recovery_period_belongs_to_an_enabled_recovery(server, ddb):
    make_table(ddb, "recovered")
    def update(spec):
        return call(server, "UpdateContinuousBackups", {"TableName": "recovered",
                                                        "PointInTimeRecoverySpecification": spec})
    r = update({"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 7})
    assert r.json()["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 7
    r = update({"PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 7})
    assert (r.error_type, r.message) == ("ValidationException", "Invalid Request: Cannot specify RecoveryPeriodInDays "
                                         "when disabling point-in-time recovery.")
    r = update({"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 36})
    assert r.message.endswith("Member must have value less than or equal to 35")
    assert update({"PointInTimeRecoveryEnabled": False}).status == 200
    # Enabled again without a period, it is the default again.
    r = update({"PointInTimeRecoveryEnabled": True})
    assert r.json()["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]["RecoveryPeriodInDays"] == 35


# ---- transactions: ClientRequestToken ----

def test_token_repeat_may_change_what_it_asks_back(ddb):
    make_table(ddb, "txn")
    items = [{"Put": {"TableName": "txn", "Item": {"pk": {"S": "a"}, "v": {"S": "first"}}}},
             {"Put": {"TableName": "txn", "Item": {"pk": {"S": "b"}, "v": {"S": "first"}}}}]
    first = ddb.transact_write_items(ClientRequestToken="tok-1", TransactItems=items,
                                     ReturnConsumedCapacity="TOTAL")
    assert first["ConsumedCapacity"] == [{"TableName": "txn", "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}]
    ddb.put_item(TableName="txn", Item={"pk": {"S": "a"}, "v": {"S": "changed"}})
    # The same items with other Return* choices are the same request: nothing is written
    # again, and the answer reports reading the items rather than writing them.
    again = ddb.transact_write_items(ClientRequestToken="tok-1", TransactItems=items,
                                     ReturnConsumedCapacity="INDEXES")
    # (a transactional read of each item: 2 units apiece)
    assert again["ConsumedCapacity"] == [{"TableName": "txn", "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0,
                                          "Table": {"CapacityUnits": 4.0, "ReadCapacityUnits": 4.0}}]
    assert "ConsumedCapacity" not in ddb.transact_write_items(ClientRequestToken="tok-1", TransactItems=items)
    assert ddb.get_item(TableName="txn", Key={"pk": {"S": "a"}})["Item"]["v"] == {"S": "changed"}
    other = [{"Put": {"TableName": "txn", "Item": {"pk": {"S": "a"}, "v": {"S": "different"}}}}]
    assert error_of(ddb.transact_write_items, ClientRequestToken="tok-1", TransactItems=other)[0] == \
        "IdempotentParameterMismatchException"


def test_execute_transaction_repeat_reads_the_items_transactionally(ddb):
    """A repeat under the same token applies nothing and is charged as a transactional
    read of each item (2 units for a small one), where the first run wrote it (2 units)."""
    make_table(ddb, "ptxn")
    ddb.put_item(TableName="ptxn", Item={"pk": {"S": "c"}, "n": {"N": "0"}})
    stmts = [{"Statement": "UPDATE \"ptxn\" SET n = n + 1 WHERE pk = 'c'"}]
    first = ddb.execute_transaction(ClientRequestToken="tok-p", TransactStatements=stmts,
                                    ReturnConsumedCapacity="INDEXES")
    again = ddb.execute_transaction(ClientRequestToken="tok-p", TransactStatements=stmts,
                                    ReturnConsumedCapacity="INDEXES")
    assert ddb.get_item(TableName="ptxn", Key={"pk": {"S": "c"}}, ConsistentRead=True)["Item"]["n"] == {"N": "1"}
    assert first["ConsumedCapacity"][0]["WriteCapacityUnits"] == 2.0
    assert "ReadCapacityUnits" not in first["ConsumedCapacity"][0]
    assert again["ConsumedCapacity"][0]["ReadCapacityUnits"] == 2.0
    assert "WriteCapacityUnits" not in again["ConsumedCapacity"][0]


def call(server, op, body):
    """One request through the wire, for operations the installed boto3 may not know."""
    return raw(server.url, "DynamoDB_20120810." + op, body)


# ---- contributor insights ----

def test_contributor_insights_status(server, ddb):
    ddb.create_table(TableName="insights", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "g", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     GlobalSecondaryIndexes=[{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}])
    # Off until enabled; enabling answers ENABLING, and the table is then listed.
    assert ddb.describe_contributor_insights(TableName="insights")["ContributorInsightsStatus"] == "DISABLED"
    assert ddb.list_contributor_insights()["ContributorInsightsSummaries"] == []
    r = ddb.update_contributor_insights(TableName="insights", ContributorInsightsAction="ENABLE")
    assert (r["TableName"], r["ContributorInsightsStatus"]) == ("insights", "ENABLING")
    d = ddb.describe_contributor_insights(TableName="insights")
    assert d["ContributorInsightsStatus"] in ("ENABLING", "ENABLED")
    assert len(d["ContributorInsightsRuleList"]) == 2  # partition keys accessed and throttled
    ddb.update_contributor_insights(TableName="insights", IndexName="byg", ContributorInsightsAction="ENABLE")
    got = ddb.list_contributor_insights()["ContributorInsightsSummaries"]
    assert [(s["TableName"], s.get("IndexName")) for s in got] == [("insights", None), ("insights", "byg")]
    # Asking for what is already so is no change, and answers the settled status.
    again = call(server, "UpdateContributorInsights", {"TableName": "insights", "ContributorInsightsAction": "ENABLE"})
    assert again.json() == {"TableName": "insights", "ContributorInsightsStatus": "ENABLED",
                            "ContributorInsightsMode": "ACCESSED_AND_THROTTLED_KEYS"}
    # THROTTLED_KEYS keeps only the throttled-key rules, under the same names.
    r = call(server, "UpdateContributorInsights", {"TableName": "insights", "ContributorInsightsAction": "ENABLE",
                                                   "ContributorInsightsMode": "THROTTLED_KEYS"}).json()
    assert (r["ContributorInsightsStatus"], r["ContributorInsightsMode"]) == ("ENABLING", "THROTTLED_KEYS")
    rules = call(server, "DescribeContributorInsights", {"TableName": "insights"}).json()["ContributorInsightsRuleList"]
    assert rules == [d["ContributorInsightsRuleList"][1]] and "-PKT-insights-" in rules[0]
    page = ddb.list_contributor_insights(MaxResults=1)
    assert len(page["ContributorInsightsSummaries"]) == 1
    rest = ddb.list_contributor_insights(MaxResults=1, NextToken=page["NextToken"])
    assert rest["ContributorInsightsSummaries"][0].get("IndexName") == "byg" and "NextToken" not in rest
    r = ddb.update_contributor_insights(TableName="insights", ContributorInsightsAction="DISABLE")
    assert r["ContributorInsightsStatus"] == "DISABLING"
    d = ddb.describe_contributor_insights(TableName="insights")
    assert d["ContributorInsightsStatus"] == "DISABLED" and "LastUpdateDateTime" in d
    assert "ContributorInsightsRuleList" not in d
    assert [s.get("IndexName") for s in ddb.list_contributor_insights()["ContributorInsightsSummaries"]] == ["byg"]
    r = ddb.update_contributor_insights(TableName="insights", ContributorInsightsAction="DISABLE")
    assert r["ContributorInsightsStatus"] == "DISABLED"
    # A table, or an index, that is not there.
    assert error_of(ddb.describe_contributor_insights, TableName="absent")[0] == "ResourceNotFoundException"
    assert error_of(ddb.describe_contributor_insights, TableName="absent") == \
        ("ResourceNotFoundException", "Requested resource not found: Table: absent not found")
    assert error_of(ddb.describe_contributor_insights, TableName="insights", IndexName="nope") == \
        ("ResourceNotFoundException", "Requested resource not found: Index: nope not found for table: insights")
    bad = call(server, "UpdateContributorInsights", {"TableName": "insights", "ContributorInsightsAction": "ON"})
    assert (bad.status, bad.error_type) == (400, "ValidationException")
    # A table made again under the same name starts with insights off.
    ddb.delete_table(TableName="insights")
    make_table(ddb, "insights")
    assert ddb.describe_contributor_insights(TableName="insights") == {"TableName": "insights",
                                                                        "ContributorInsightsStatus": "DISABLED",
                                                                        "ResponseMetadata": ANY}


# ---- resource policies ----

def test_resource_policy_round_trip(server, ddb):
    arn = make_table(ddb, "guarded")["TableArn"]
    # Deleting what was never there is no error, and names no revision.
    nothing = call(server, "DeleteResourcePolicy", {"ResourceArn": arn})
    assert (nothing.status, nothing.json()) == (200, {})
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::%s:root" % ACCOUNT},
        "Action": "dynamodb:GetItem", "Resource": arn}]})
    r = call(server, "GetResourcePolicy", {"ResourceArn": arn})
    assert (r.status, r.error_type) == (400, "PolicyNotFoundException")
    put = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy})
    assert put.status == 200 and put.json()["RevisionId"]
    got = call(server, "GetResourcePolicy", {"ResourceArn": arn}).json()
    assert got == {"Policy": policy, "RevisionId": put.json()["RevisionId"]}
    # A change conditional on an outdated revision is refused; on the current one it goes.
    stale = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy, "ExpectedRevisionId": "1"})
    assert stale.error_type == "PolicyNotFoundException"
    again = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy.replace("GetItem", "Query"),
                                               "ExpectedRevisionId": put.json()["RevisionId"]})
    assert again.status == 200 and again.json()["RevisionId"] != put.json()["RevisionId"]
    gone = call(server, "DeleteResourcePolicy", {"ResourceArn": arn})
    assert gone.status == 200 and gone.json() == {"RevisionId": again.json()["RevisionId"]}  # the one removed
    assert call(server, "GetResourcePolicy", {"ResourceArn": arn}).error_type == "PolicyNotFoundException"
    # Deleting again succeeds, answering with the deletion's own revision.
    after = call(server, "DeleteResourcePolicy", {"ResourceArn": arn})
    assert after.status == 200 and int(after.json()["RevisionId"]) > int(again.json()["RevisionId"])
    r = call(server, "DeleteResourcePolicy", {"ResourceArn": arn, "ExpectedRevisionId": "123"})
    assert (r.error_type, r.message) == ("PolicyNotFoundException", "Resource-based policy not found for the provided "
                                         "ResourceArn: Requested update for policy with revision id 123, but table "
                                         "guarded has no associated policy.")
    # Putting the document a table already has changes nothing, its revision included, even
    # laid out differently; revisions are 13-digit change times in milliseconds.
    a = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy}).json()["RevisionId"]
    assert re.fullmatch(r"\d{13}", a)
    relaid = json.dumps(json.loads(policy), indent=2, sort_keys=True)
    assert call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": relaid}).json()["RevisionId"] == a
    # NO_POLICY asks that there be none yet.
    r = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy, "ExpectedRevisionId": "NO_POLICY"})
    assert (r.error_type, r.message) == ("PolicyNotFoundException", "Resource-based policy not found for the "
                                         "provided ResourceArn: Requested policy update expecting none to be present "
                                         "for table guarded, but a policy exists with revision id %s." % a)
    r = call(server, "DeleteResourcePolicy", {"ResourceArn": arn, "ExpectedRevisionId": "unknown"})
    assert r.message == ("Resource-based policy not found for the provided ResourceArn: Requested update for policy "
                         "with revision id unknown, but the policy associated to target table guarded has revision "
                         "id %s." % a)
    call(server, "DeleteResourcePolicy", {"ResourceArn": arn, "ExpectedRevisionId": a})
    r = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy, "ExpectedRevisionId": "NO_POLICY"})
    assert r.status == 200
    # Not a policy document, not a table's ARN, another account's table, no such table.
    invalid = "One or more parameter values were invalid: "
    for doc, msg in [("{nope", "Invalid policy document: This policy contains invalid Json"),
                     ('{"Version": "2012-10-17", "Statement": []}',
                      "Invalid policy document: Could not parse the policy: Statement is empty!"),
                     ("x" * 20481, "Maximum policy size of 20480 bytes exceeded")]:
        r = call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": doc})
        assert (r.error_type, r.message) == ("ValidationException", invalid + msg)
    for bad, kind, msg in [
            ("guarded", "ValidationException", invalid + "ARNs must start with 'arn:': guarded"),
            (arn + "/index/x", "ValidationException",
             invalid + "Invalid resource arn provided, only table or stream is accepted. Provided resource arn: "
             + arn + "/index/x"),
            (arn.replace(ACCOUNT, "123456789012"), "ValidationException",
             "This action is only supported by accounts that match the resource owner\u2019s account."),
            (arn + "x", "ResourceNotFoundException", "Requested resource not found: Table: guardedx not found"),
            (arn + "/stream/2000-01-01T00:00:00.000", "ResourceNotFoundException",
             "Requested resource not found: Stream: 2000-01-01T00:00:00.000 not found for Table: guarded")]:
        r = call(server, "GetResourcePolicy", {"ResourceArn": bad})
        assert (r.error_type, r.message) == (kind, msg)
    # The policy belongs to the table: one made again under the name has none.
    call(server, "PutResourcePolicy", {"ResourceArn": arn, "Policy": policy})
    ddb.delete_table(TableName="guarded")
    arn = make_table(ddb, "guarded")["TableArn"]
    assert call(server, "GetResourcePolicy", {"ResourceArn": arn}).error_type == "PolicyNotFoundException"


# ---- on-demand backups ----

def test_backup_lifecycle_and_restore(ddb):
    ddb.create_table(TableName="source", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "g", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     GlobalSecondaryIndexes=[{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}])
    for i in range(30):
        ddb.put_item(TableName="source", Item={"pk": {"S": "k%d" % i}, "g": {"S": "g%d" % (i % 3)}})
    made = ddb.create_backup(TableName="source", BackupName="conformance_backup")["BackupDetails"]
    arn = made["BackupArn"]
    assert made["BackupName"] == "conformance_backup" and made["BackupType"] == "USER"
    assert made["BackupStatus"] in ("CREATING", "AVAILABLE")
    # The backup is a snapshot: later writes are not in it.
    ddb.put_item(TableName="source", Item={"pk": {"S": "late"}, "g": {"S": "g0"}})
    d = ddb.describe_backup(BackupArn=arn)["BackupDescription"]
    assert d["BackupDetails"]["BackupStatus"] == "AVAILABLE"
    assert (d["SourceTableDetails"]["TableName"], d["SourceTableDetails"]["ItemCount"]) == ("source", 30)
    assert [g["IndexName"] for g in d["SourceTableFeatureDetails"]["GlobalSecondaryIndexes"]] == ["byg"]
    second = ddb.create_backup(TableName="source", BackupName="second")["BackupDetails"]["BackupArn"]
    listed = ddb.list_backups(TableName="source")["BackupSummaries"]
    assert [b["BackupArn"] for b in listed] == [arn, second]
    page = ddb.list_backups(Limit=1)
    assert [b["BackupArn"] for b in page["BackupSummaries"]] == [arn] and page["LastEvaluatedBackupArn"] == arn
    assert [b["BackupArn"] for b in ddb.list_backups(ExclusiveStartBackupArn=arn)["BackupSummaries"]] == [second]
    # A restore makes a new table, announced as in progress, holding the backup's items
    # and its indexes; the source's deletion does not touch the backup.
    ddb.delete_table(TableName="source")
    r = ddb.restore_table_from_backup(TargetTableName="restored", BackupArn=arn)["TableDescription"]
    assert r["TableName"] == "restored"
    assert (r["RestoreSummary"]["SourceBackupArn"], r["RestoreSummary"]["RestoreInProgress"]) == (arn, True)
    # The time restored to is the backup's.
    assert r["RestoreSummary"]["RestoreDateTime"] == d["BackupDetails"]["BackupCreationDateTime"]
    t = ddb.describe_table(TableName="restored")["Table"]
    assert t["ItemCount"] == 30 and t["RestoreSummary"]["RestoreInProgress"] is False
    got = ddb.query(TableName="restored", IndexName="byg", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "g0"}})["Items"]
    assert sorted(i["pk"]["S"] for i in got) == sorted("k%d" % i for i in range(0, 30, 3))
    assert error_of(ddb.restore_table_from_backup, TargetTableName="restored", BackupArn=arn)[0] == \
        "TableAlreadyExistsException"
    gone = ddb.delete_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]
    assert (gone["BackupArn"], gone["BackupStatus"]) == (arn, "DELETED")
    assert error_of(ddb.describe_backup, BackupArn=arn)[0] == "BackupNotFoundException"
    assert error_of(ddb.delete_backup, BackupArn=arn)[0] == "BackupNotFoundException"
    assert error_of(ddb.restore_table_from_backup, TargetTableName="again", BackupArn=arn)[0] == \
        "BackupNotFoundException"
    assert [b["BackupArn"] for b in ddb.list_backups()["BackupSummaries"]] == [second]


def test_backup_errors(ddb):
    arn = make_table(ddb, "source")["TableArn"]
    assert error_of(ddb.create_backup, TableName="absent", BackupName="b1b") == \
        ("TableNotFoundException", "Table not found: absent")
    assert error_of(ddb.create_backup, TableName="source", BackupName="bad name!")[0] == "ValidationException"
    made = ddb.create_backup(TableName="source", BackupName="one")["BackupDetails"]["BackupArn"]
    # The id is the creation time in epoch milliseconds (14 digits) and 8 hex digits.
    assert re.fullmatch(re.escape(arn) + r"/backup/\d{14}-[0-9a-f]{8}", made)
    # A backup is its account, table and id: the region is not looked at, and the ARN asked
    # with is the one answered.
    moved = made.replace(":ddblocal:", ":eu-west-1:")
    assert ddb.describe_backup(BackupArn=moved)["BackupDescription"]["BackupDetails"]["BackupArn"] == moved
    for bad, code, msg in [(arn + "/stream/2020-01-01T00:00:00.000", "ValidationException", "Invalid Backup ARN"),
                           (made.replace("arn:aws:", "arn:aws-cn:"), "ValidationException",
                            "Invalid Request: BackupArn is not valid"),
                           (made.replace(ACCOUNT, "123456789012"), "AccessDeniedException", "Access is denied"),
                           (made[:-8] + "0000ffff", "BackupNotFoundException", "Backup not found: " + made[:-8] + "0000ffff"),
                           (made.replace("table/source/", "table/other/"), "BackupNotFoundException",
                            "Backup not found: " + made.replace("table/source/", "table/other/"))]:
        assert error_of(ddb.describe_backup, BackupArn=bad) == (code, msg)
    # ListBackups: [lower, upper) in time; the cursor is a position, even of a deleted backup.
    time.sleep(1.1)  # the SDK may send the bounds in whole seconds
    second = ddb.create_backup(TableName="source", BackupName="two")["BackupDetails"]
    when = second["BackupCreationDateTime"]
    assert [b["BackupName"] for b in ddb.list_backups(TimeRangeLowerBound=when)["BackupSummaries"]] == ["two"]
    assert [b["BackupName"] for b in ddb.list_backups(TimeRangeUpperBound=when)["BackupSummaries"]] == ["one"]
    assert error_of(ddb.list_backups, TimeRangeLowerBound=when, TimeRangeUpperBound=when - datetime.timedelta(1)) == \
        ("ValidationException", "One or more parameter values were invalid: Time range lower bound must be less "
                                "than or equal to upper bound")
    ddb.delete_backup(BackupArn=made)
    assert [b["BackupName"] for b in ddb.list_backups(ExclusiveStartBackupArn=made)["BackupSummaries"]] == ["two"]
    assert ddb.list_backups(TableName="absent")["BackupSummaries"] == []
    assert ddb.list_backups(BackupType="SYSTEM")["BackupSummaries"] == []


def test_backups_survive_a_restart(start, tmp_path):
    data = tmp_path / "kept"
    srv = start(data=data)
    ddb = boto3_client(srv.url)
    make_table(ddb, "source")
    ddb.put_item(TableName="source", Item={"pk": {"S": "a"}})
    arn = ddb.create_backup(TableName="source", BackupName="kept")["BackupDetails"]["BackupArn"]
    assert srv.stop() == 0
    srv = start(data=data)
    ddb = boto3_client(srv.url)
    assert [b["BackupArn"] for b in ddb.list_backups()["BackupSummaries"]] == [arn]
    # Numbering goes on above the backups kept.
    other = ddb.create_backup(TableName="source", BackupName="next")["BackupDetails"]["BackupArn"]
    assert other != arn and len(ddb.list_backups()["BackupSummaries"]) == 2
    ddb.restore_table_from_backup(TargetTableName="restored", BackupArn=arn)
    assert ddb.get_item(TableName="restored", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}


def test_restore_with_billing_override(ddb):
    ddb.create_table(TableName="provisioned", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "g", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     GlobalSecondaryIndexes=[{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "KEYS_ONLY"},
                                              "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}}])
    ddb.put_item(TableName="provisioned", Item={"pk": {"S": "a"}, "g": {"S": "x"}})
    arn = ddb.create_backup(TableName="provisioned", BackupName="prov")["BackupDetails"]["BackupArn"]
    same = ddb.restore_table_from_backup(TargetTableName="same", BackupArn=arn)["TableDescription"]
    assert same["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    ddb.restore_table_from_backup(TargetTableName="ondemand", BackupArn=arn, BillingModeOverride="PAY_PER_REQUEST")
    t = ddb.describe_table(TableName="ondemand")["Table"]
    assert t["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST" and t["ItemCount"] == 1
    got = ddb.query(TableName="ondemand", IndexName="byg", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    assert got == [{"pk": {"S": "a"}, "g": {"S": "x"}}]


def test_stream_has_its_own_policy(server, ddb):
    t = make_table(ddb, "streamed", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    stream, table = t["LatestStreamArn"], t["TableArn"]
    policy = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::%s:root" % ACCOUNT},
        "Action": "dynamodb:GetRecords", "Resource": stream}]})
    assert call(server, "PutResourcePolicy", {"ResourceArn": stream, "Policy": policy}).status == 200
    assert call(server, "GetResourcePolicy", {"ResourceArn": stream}).json()["Policy"] == policy
    r = call(server, "GetResourcePolicy", {"ResourceArn": table})
    assert (r.error_type, r.message) == ("PolicyNotFoundException",
                                         "Resource-based policy not found for the provided ResourceArn: " + table)


def test_restore_overrides_are_judged_against_the_backup(ddb):
    ddb.create_table(TableName="ondemand", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "g", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     GlobalSecondaryIndexes=[{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                              "Projection": {"ProjectionType": "ALL"}}],
                     SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "my-key"})
    arn = ddb.create_backup(TableName="ondemand", BackupName="ondemand")["BackupDetails"]["BackupArn"]
    pt = {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}
    gsi = [{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}, "ProvisionedThroughput": pt}]
    for kw, msg in [
            ({"ProvisionedThroughputOverride": pt},
             "Cannot override ProvisionedThroughput unless BillingMode is PROVISIONED"),
            ({"BillingModeOverride": "PAY_PER_REQUEST", "ProvisionedThroughputOverride": pt},
             "Cannot override ProvisionedThroughput if BillingMode is overridden to PAY_PER_REQUEST"),
            ({"BillingModeOverride": "PROVISIONED"},
             "Must override ProvisionedThroughput if BillingMode is overridden to PROVISIONED"),
            ({"BillingModeOverride": "PROVISIONED", "ProvisionedThroughputOverride": pt},
             "Must specify provisioned throughput for index byg"),
            ({"GlobalSecondaryIndexOverride": [dict(gsi[0], IndexName="other")]},
             "Index other does not match a secondary index that existed in the source table and cannot be "
             "created during the restore operation")]:
        assert error_of(ddb.restore_table_from_backup, TargetTableName="restored", BackupArn=arn, **kw) == \
            ("ValidationException", "Invalid Request: " + msg)
    assert "restored" not in ddb.list_tables()["TableNames"]
    r = ddb.restore_table_from_backup(TargetTableName="restored", BackupArn=arn, BillingModeOverride="PROVISIONED",
                                      ProvisionedThroughputOverride=pt, GlobalSecondaryIndexOverride=gsi)
    t = ddb.describe_table(TableName="restored")["Table"]
    assert t["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    assert t["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    # Encrypted as the source was, with its key.
    assert t["SSEDescription"]["KMSMasterKeyArn"] == ddb.describe_table(TableName="ondemand")["Table"][
        "SSEDescription"]["KMSMasterKeyArn"]
    assert r["TableDescription"]["RestoreSummary"]["SourceBackupArn"] == arn
