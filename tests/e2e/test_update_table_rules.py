"""UpdateTable's rules for what one request may change together, and its answer to a
request that changes nothing, in DynamoDB's words (as recorded from DynamoDB in 2026)."""
import pytest

PRE = "One or more parameter values were invalid: "
GSI_CREATE = [{"Create": {"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                          "Projection": {"ProjectionType": "ALL"}}}]


@pytest.fixture
def tab(q):
    q.call("CreateTable", {"TableName": "Rules", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                           "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}})
    return q


def update(q, **changes):
    return q.error("UpdateTable", {"TableName": "Rules", **changes})


@pytest.mark.parametrize("changes,message", [
    ({"SSESpecification": {"Enabled": True}, "DeletionProtectionEnabled": True},
     "Server-Side Encryption modification must be the only operation in the request"),
    ({"TableClass": "STANDARD_INFREQUENT_ACCESS", "DeletionProtectionEnabled": True},
     "TableClass modification must be the only operation in the request"),
    ({"DeletionProtectionEnabled": True, "BillingMode": "PAY_PER_REQUEST"},
     "DeletionProtection modification must be the only operation in the request"),
    ({"WarmThroughput": {"ReadUnitsPerSecond": 20000}, "BillingMode": "PAY_PER_REQUEST"},
     "WarmThroughput must be the only operation in the request"),
    ({"WarmThroughput": {"ReadUnitsPerSecond": 20000}, "GlobalSecondaryIndexUpdates": GSI_CREATE,
      "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}]},
     "Create global secondary index cannot be specified when updating WarmThroughput"),
    ({"OnDemandThroughput": {"MaxReadRequestUnits": 5}, "StreamSpecification": {"StreamEnabled": False}},
     "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request"),
    ({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
      "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}},
     "You cannot modify stream status while updating table IOPS"),
    ({"ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2},
      "GlobalSecondaryIndexUpdates": GSI_CREATE, "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}]},
     "You cannot create or delete index while updating table IOPS"),
    ({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
      "GlobalSecondaryIndexUpdates": GSI_CREATE, "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}]},
     "You cannot create or delete index while changing stream status"),
])
def test_changes_that_cannot_be_combined(tab, changes, message):
    e = update(tab, **changes)
    assert e.type == "ValidationException"
    assert e.message == PRE + message
    desc = tab.call("DescribeTable", {"TableName": "Rules"})["Table"]
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 1 and "GlobalSecondaryIndexes" not in desc
    assert "LatestStreamArn" not in desc and desc["DeletionProtectionEnabled"] is False


def test_an_empty_warm_throughput_is_judged_after_the_billing(q):
    q.call("CreateTable", {"TableName": "Ppr", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"})
    e = q.error("UpdateTable", {"TableName": "Ppr", "WarmThroughput": {},
                                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}})
    assert e.message == (PRE + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode "
                         "is PAY_PER_REQUEST")


def test_changes_that_can_be_combined(tab):
    tab.call("UpdateTable", {"TableName": "Rules", "BillingMode": "PAY_PER_REQUEST",
                             "OnDemandThroughput": {"MaxReadRequestUnits": 5}})
    tab.call("UpdateTable", {"TableName": "Rules", "BillingMode": "PROVISIONED",
                             "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}})
    desc = tab.call("DescribeTable", {"TableName": "Rules"})["Table"]
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 3


def test_nothing_to_change_names_what_could_change(tab):
    e = update(tab)
    assert e.message == ("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                         "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, "
                         "ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, "
                         "OnDemandThroughput, WarmThroughput or TableClass is required")
    # What the request holds, even empty, is left out of the list.
    e = update(tab, GlobalSecondaryIndexUpdates=[], TableClass=None)
    assert "GlobalSecondaryIndexUpdates" not in e.message and "TableClass" not in e.message
    assert e.message.endswith("OnDemandThroughput or WarmThroughput is required")


def test_capacity_messages_differ_between_create_and_update(q):
    keys = {"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "g", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
    gsi = {"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "ALL"}}
    pt = {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
    e = q.error("CreateTable", {"TableName": "Cap", **keys, "ProvisionedThroughput": pt,
                                "GlobalSecondaryIndexes": [gsi]})
    assert e.message == PRE + "ProvisionedThroughput is not specified for index: byG"
    q.call("CreateTable", {"TableName": "Cap", "AttributeDefinitions": keys["AttributeDefinitions"][:1],
                           "KeySchema": keys["KeySchema"], "ProvisionedThroughput": pt})
    e = q.error("UpdateTable", {"TableName": "Cap", "AttributeDefinitions": keys["AttributeDefinitions"],
                                "GlobalSecondaryIndexUpdates": [{"Create": gsi}]})
    assert e.message == PRE + "ProvisionedThroughput must be specified for index: byG"
    q.call("UpdateTable", {"TableName": "Cap", "AttributeDefinitions": keys["AttributeDefinitions"],
                           "GlobalSecondaryIndexUpdates": [{"Create": dict(gsi, ProvisionedThroughput=pt)}]})
    e = q.error("UpdateTable", {"TableName": "Cap", "GlobalSecondaryIndexUpdates": [
        {"Update": {"IndexName": "byG", "ProvisionedThroughput": {"ReadCapacityUnits": 2}}}]})
    assert e.message == PRE + "Both ReadCapacityUnits and WriteCapacityUnits must be specified for index: byG"
    q.call("CreateTable", {"TableName": "Ppr2", "AttributeDefinitions": keys["AttributeDefinitions"][:1],
                           "KeySchema": keys["KeySchema"], "BillingMode": "PAY_PER_REQUEST"})
    e = q.error("UpdateTable", {"TableName": "Ppr2", "AttributeDefinitions": keys["AttributeDefinitions"],
                                "GlobalSecondaryIndexUpdates": [{"Create": dict(gsi, ProvisionedThroughput=pt)}]})
    assert e.message == (PRE + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: byG "
                         "when BillingMode is PAY_PER_REQUEST")
    e = q.error("UpdateTable", {"TableName": "Ppr2", "BillingMode": "PROVISIONED"})
    assert e.message == PRE + "ProvisionedThroughput must be specified when BillingMode is PROVISIONED"
