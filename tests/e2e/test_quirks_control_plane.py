"""Control-plane answers recorded from real DynamoDB (a public lab's findings, verified in
October 2026 and cited by their DDB-TABLE numbers), checked against quarry: table, index,
stream, encryption, class, capacity, tag, TTL, insights and backup requests on one region.
Tests marked xfail(strict) pin where quarry still answers otherwise; the rest hold
recorded behaviour no other test covered."""
import pytest

PRE = "One or more parameter values were invalid: "
PK = [{"AttributeName": "pk", "AttributeType": "S"}]
HASH = [{"AttributeName": "pk", "KeyType": "HASH"}]
G_DEF = {"AttributeName": "g", "AttributeType": "S"}
PT = {"ReadCapacityUnits": 2, "WriteCapacityUnits": 2}
ARN = "arn:aws:dynamodb:ddblocal:000000000000:table/"
NOTHING_TO_CHANGE = ("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                     "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, "
                     "ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, "
                     "WarmThroughput or TableClass is required")


def gsi(name="byG", **extra):
    return {"IndexName": name, "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}, **extra}


def make(q, name, provisioned=False, indexes=(), **extra):
    """A table keyed on pk; provisioned ones (and their indexes) get 2/2 units."""
    req = {"TableName": name, "AttributeDefinitions": PK + ([G_DEF] if indexes else []), "KeySchema": HASH}
    if provisioned:
        req["ProvisionedThroughput"] = PT
        indexes = [dict(i, ProvisionedThroughput=PT) for i in indexes]
    else:
        req["BillingMode"] = "PAY_PER_REQUEST"
    if indexes:
        req["GlobalSecondaryIndexes"] = list(indexes)
    req.update(extra)
    return q.call("CreateTable", req)["TableDescription"]


def describe(q, name):
    return q.call("DescribeTable", {"TableName": name})["Table"]


def update_error(q, name, **changes):
    return q.error("UpdateTable", {"TableName": name, **changes})


def create_error(q, name, **extra):
    req = {"TableName": name, "AttributeDefinitions": PK, "KeySchema": HASH, "BillingMode": "PAY_PER_REQUEST"}
    req.update(extra)
    return q.error("CreateTable", req)


# ---- global secondary index updates ----

@pytest.mark.parametrize("second", ["update", "create"])
def test_two_index_actions_in_one_call(q, second):
    make(q, "Two", provisioned=True, indexes=[gsi("gs1"), gsi("gs2")])
    updates = [{"Update": {"IndexName": "gs1", "ProvisionedThroughput": {"ReadCapacityUnits": 3,
                                                                         "WriteCapacityUnits": 3}}}]
    if second == "update":
        updates.append({"Update": {"IndexName": "gs2", "ProvisionedThroughput": {"ReadCapacityUnits": 4,
                                                                                 "WriteCapacityUnits": 4}}})
    else:
        updates.append({"Create": gsi("gs3", ProvisionedThroughput=PT)})
    q.call("UpdateTable", {"TableName": "Two", "AttributeDefinitions": [G_DEF], "GlobalSecondaryIndexUpdates": updates})
    got = {g["IndexName"]: g["ProvisionedThroughput"]["ReadCapacityUnits"] for g in describe(q, "Two")[
        "GlobalSecondaryIndexes"]}
    assert got == ({"gs1": 3, "gs2": 4} if second == "update" else {"gs1": 3, "gs2": 2, "gs3": 2})


def test_two_index_creates_or_deletes_in_one_call_exceed_the_limit(q):
    """DDB-TABLE-159: more than one Create or Delete in one call is LimitExceededException."""
    make(q, "TwoDdl", provisioned=True, indexes=[gsi("gs1"), gsi("gs2")])
    e = update_error(q, "TwoDdl", GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "gs1"}},
                                                               {"Delete": {"IndexName": "gs2"}}])
    assert (e.type, e.message) == ("LimitExceededException", "Subscriber limit exceeded: Only 1 online index can be "
                                                             "created or deleted simultaneously per table")


@pytest.mark.parametrize("updates,message", [
    ([{"Update": {"IndexName": "gs1", "ProvisionedThroughput": PT}},
      {"Update": {"IndexName": "gs1", "ProvisionedThroughput": PT}}],
     PRE + "Only one global secondary index update per index is allowed simultaneously. Index: gs1"),
    ([{"Delete": {"IndexName": "gs1"}}, {"Create": gsi("gs1", ProvisionedThroughput=PT)}],
     PRE + "Only one global secondary index update per index is allowed simultaneously. Index: gs1"),
    ([{"Update": {"IndexName": "gs1", "ProvisionedThroughput": PT}, "Delete": {"IndexName": "gs1"}}],
     PRE + "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object"),
    ([{}], PRE + "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, "
                 "GlobalSecondaryIndexUpdate.Delete must not be null"),
])
def test_index_update_entry_rules(q, updates, message):
    make(q, "Entries", provisioned=True, indexes=[gsi("gs1")])
    e = update_error(q, "Entries", GlobalSecondaryIndexUpdates=updates, AttributeDefinitions=[G_DEF])
    assert (e.type, e.message) == ("ValidationException", message)


@pytest.mark.parametrize("action", [{"Delete": {"IndexName": "ghost"}},
                                    {"Update": {"IndexName": "ghost", "ProvisionedThroughput": PT}}])
def test_unknown_index_in_index_updates(q, action):
    make(q, "Ghost", provisioned=True, indexes=[gsi("gs1")])
    e = update_error(q, "Ghost", GlobalSecondaryIndexUpdates=[action])
    assert (e.type, e.message) == ("ResourceNotFoundException", "Requested resource not found: Index ghost for "
                                                                "table Ghost")


def test_same_index_capacity_is_refused(q):
    make(q, "SameIx", provisioned=True, indexes=[gsi("gs1")])
    e = update_error(q, "SameIx", GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "gs1",
                                                                           "ProvisionedThroughput": PT}}])
    assert e.type == "ValidationException"
    assert e.message.startswith("The provisioned throughput for the index gs1 will not change. The requested value "
                                "equals the current value. Current ReadCapacityUnits provisioned for index gs1: 2. "
                                "Requested ReadCapacityUnits: 2. Current WriteCapacityUnits")


def test_index_create_needs_attribute_definitions(q):
    make(q, "NoDefs")
    e = update_error(q, "NoDefs", GlobalSecondaryIndexUpdates=[{"Create": gsi("gs3")}])
    assert e.type == "ValidationException"
    assert e.message.endswith("AttributeDefinitions is not specified for index: gs3")


def test_creating_an_existing_index(q):
    make(q, "Twice", indexes=[gsi("gs1")])
    e = update_error(q, "Twice", AttributeDefinitions=[G_DEF], GlobalSecondaryIndexUpdates=[{"Create": gsi("gs1")}])
    assert (e.type, e.message) == ("ValidationException", "Attempting to create an index which already exists")


def test_empty_index_update_list_beside_a_change(q):
    make(q, "EmptyList")
    e = update_error(q, "EmptyList", GlobalSecondaryIndexUpdates=[], DeletionProtectionEnabled=True)
    assert (e.type, e.message) == ("ValidationException", PRE + "List of GlobalSecondaryIndexUpdates is empty")
    assert describe(q, "EmptyList")["DeletionProtectionEnabled"] is False


def test_empty_index_update_list_alone(q):
    make(q, "EmptyAlone")
    e = update_error(q, "EmptyAlone", GlobalSecondaryIndexUpdates=[])
    assert (e.type, e.message) == ("ValidationException", NOTHING_TO_CHANGE)


def test_attribute_definitions_alone_change_nothing(q):
    """DDB-TABLE-162: AttributeDefinitions alone is no change, and the whole list is named."""
    make(q, "DefsAlone")
    e = update_error(q, "DefsAlone", AttributeDefinitions=PK)
    assert (e.type, e.message) == ("ValidationException", NOTHING_TO_CHANGE)


def test_attribute_definitions_beside_other_changes_are_ignored(q):
    """DDB-TABLE-162: outside an index Create, UpdateTable ignores AttributeDefinitions, even
    unused ones or ones that redefine the table's key with another type."""
    make(q, "Ignored", provisioned=True, indexes=[gsi("gs1")])
    stale = [{"AttributeName": "pk", "AttributeType": "N"}, {"AttributeName": "zz", "AttributeType": "S"}]
    q.call("UpdateTable", {"TableName": "Ignored", "AttributeDefinitions": stale, "DeletionProtectionEnabled": True})
    q.call("UpdateTable", {"TableName": "Ignored", "AttributeDefinitions": stale, "GlobalSecondaryIndexUpdates": [
        {"Update": {"IndexName": "gs1", "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 3}}}]})
    assert sorted(d["AttributeName"] for d in describe(q, "Ignored")["AttributeDefinitions"]) == ["g", "pk"]
    assert {d["AttributeName"]: d["AttributeType"] for d in describe(q, "Ignored")["AttributeDefinitions"]} == \
        {"pk": "S", "g": "S"}


def test_deletion_protection_does_not_protect_indexes(q):
    """DDB-TABLE-166: an index Delete succeeds on a protected table; its key attribute
    leaves AttributeDefinitions."""
    make(q, "Guarded", indexes=[gsi("gs1")], DeletionProtectionEnabled=True)
    q.call("UpdateTable", {"TableName": "Guarded", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "gs1"}}]})
    desc = describe(q, "Guarded")
    assert "GlobalSecondaryIndexes" not in desc and desc["AttributeDefinitions"] == PK
    assert desc["DeletionProtectionEnabled"] is True


def test_index_update_shapes_on_an_on_demand_table(q):
    """DDB-TABLE-456/457: on an on-demand table an index Update must carry OnDemandThroughput
    or WarmThroughput (an empty OnDemandThroughput does not count); {-1,-1} is accepted;
    CreateTable takes an empty index OnDemandThroughput as none."""
    make(q, "OdIx", indexes=[gsi("gs1", OnDemandThroughput={})])
    assert "OnDemandThroughput" not in describe(q, "OdIx")["GlobalSecondaryIndexes"][0]
    only = PRE + ("The only Updates for index: gs1 when TableThroughputMode is PAY_PER_REQUEST can be to "
                  "OnDemandThroughput, WarmThroughput")
    for update in ({"IndexName": "gs1"}, {"IndexName": "gs1", "OnDemandThroughput": {}}):
        e = update_error(q, "OdIx", GlobalSecondaryIndexUpdates=[{"Update": update}])
        assert (e.type, e.message) == ("ValidationException", only)
    q.call("UpdateTable", {"TableName": "OdIx", "GlobalSecondaryIndexUpdates": [{"Update": {
        "IndexName": "gs1", "OnDemandThroughput": {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}}}]})


def test_empty_index_warm_throughput_at_create(q):
    make(q, "WarmIx", indexes=[gsi("gs1", WarmThroughput={})])
    warm = describe(q, "WarmIx")["GlobalSecondaryIndexes"][0]["WarmThroughput"]
    assert (warm["ReadUnitsPerSecond"], warm["WriteUnitsPerSecond"]) == (12000, 4000)


@pytest.mark.parametrize("table", ["WarmGhost", "NoSuchTable"])
def test_empty_index_warm_throughput_is_judged_before_the_index(q, table):
    make(q, "WarmGhost", indexes=[gsi("gs1")])
    e = update_error(q, table, GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "ghost", "WarmThroughput": {}}}])
    assert (e.type, e.message) == ("ValidationException", PRE + "WarmThroughput must have at least one of "
                                   "ReadUnitsPerSecond or WriteUnitsPerSecond specified for index: ghost")


def test_empty_index_capacity_on_an_on_demand_table(q):
    make(q, "EmptyPt", indexes=[gsi("gs1")])
    e = update_error(q, "EmptyPt", GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "gs1",
                                                                            "ProvisionedThroughput": {}}}])
    field = "globalSecondaryIndexUpdates.1.member.update.provisionedThroughput."
    assert e.message == ("2 validation errors detected: Value null at '%swriteCapacityUnits' failed to satisfy "
                         "constraint: Member must not be null; Value null at '%sreadCapacityUnits' failed to satisfy "
                         "constraint: Member must not be null" % (field, field))


def test_empty_projection(q):
    e = create_error(q, "NoProj", AttributeDefinitions=PK + [G_DEF], GlobalSecondaryIndexes=[gsi(Projection={})])
    assert (e.type, e.message) == ("ValidationException", PRE + "Unknown ProjectionType: null")


# ---- billing mode, capacity, on-demand and warm throughput ----

@pytest.mark.parametrize("op", ["UpdateTable", "CreateTable"])
def test_on_demand_throughput_on_a_provisioned_table(q, op):
    odt = {"MaxReadRequestUnits": 100, "MaxWriteRequestUnits": 100}
    if op == "UpdateTable":
        make(q, "ProvOdt", provisioned=True)
        e = update_error(q, "ProvOdt", OnDemandThroughput=odt)
        message = ("MaxReadRequestUnits for OnDemandThroughput cannot be specified when the table BillingMode is "
                   "PROVISIONED")
    else:  # CreateTable words it a little differently
        e = create_error(q, "ProvOdt", BillingMode="PROVISIONED", ProvisionedThroughput=PT, OnDemandThroughput=odt)
        message = ("MaxReadRequestUnits for OnDemandThroughput cannot be specified when table BillingMode is "
                   "PROVISIONED.")
    assert (e.type, e.message) == ("ValidationException", PRE + message)


@pytest.mark.parametrize("op,odt,member", [
    ("UpdateTable", {"MaxWriteRequestUnits": 0}, "MaxWriteRequestUnits"),
    ("UpdateTable", {"MaxReadRequestUnits": -2}, "MaxReadRequestUnits"),
    ("UpdateTable", {"MaxReadRequestUnits": 0, "MaxWriteRequestUnits": 0}, "MaxReadRequestUnits"),
    ("CreateTable", {"MaxReadRequestUnits": 0}, "MaxReadRequestUnits"),
    ("CreateTable", {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}, "MaxReadRequestUnits"),
])
def test_on_demand_limits_out_of_range(q, op, odt, member):
    if op == "UpdateTable":
        make(q, "OdtRange")
        e = update_error(q, "OdtRange", OnDemandThroughput=odt)
    else:
        e = create_error(q, "OdtRange", OnDemandThroughput=odt)
    assert (e.type, e.message) == ("ValidationException", PRE + "Requested %s for OnDemandThroughput for table is "
                                   "outside of valid range" % member)


def test_on_demand_limits_merge_member_by_member(q):
    """DDB-TABLE-178: UpdateTable changes only the OnDemandThroughput members it gives, and
    its answer echoes a cleared member as -1."""
    make(q, "OdtMerge")
    q.call("UpdateTable", {"TableName": "OdtMerge",
                           "OnDemandThroughput": {"MaxReadRequestUnits": 1000, "MaxWriteRequestUnits": 500}})
    q.call("UpdateTable", {"TableName": "OdtMerge", "OnDemandThroughput": {"MaxReadRequestUnits": 2000}})
    assert describe(q, "OdtMerge")["OnDemandThroughput"] == {"MaxReadRequestUnits": 2000, "MaxWriteRequestUnits": 500}
    out = q.call("UpdateTable", {"TableName": "OdtMerge", "OnDemandThroughput": {
        "MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}})["TableDescription"]
    assert out["OnDemandThroughput"] == {"MaxReadRequestUnits": -1, "MaxWriteRequestUnits": -1}


def test_cleared_on_demand_limits_leave_the_description(q):
    make(q, "OdtClear")
    q.call("UpdateTable", {"TableName": "OdtClear",
                           "OnDemandThroughput": {"MaxReadRequestUnits": 1000, "MaxWriteRequestUnits": 500}})
    q.call("UpdateTable", {"TableName": "OdtClear", "OnDemandThroughput": {"MaxReadRequestUnits": -1}})
    assert describe(q, "OdtClear")["OnDemandThroughput"] == {"MaxWriteRequestUnits": 500}
    q.call("UpdateTable", {"TableName": "OdtClear", "OnDemandThroughput": {"MaxWriteRequestUnits": -1}})
    assert "OnDemandThroughput" not in describe(q, "OdtClear")


def test_provisioned_mode_alone_needs_capacity(q):
    make(q, "ProvAlone", provisioned=True)
    e = update_error(q, "ProvAlone", BillingMode="PROVISIONED")
    assert (e.type, e.message) == ("ValidationException", PRE + "ProvisionedThroughput must be specified when "
                                                                "BillingMode is PROVISIONED")


def test_provisioned_mode_with_the_same_capacity_will_not_change(q):
    """DDB-TABLE-057: BillingMode=PROVISIONED with the current capacity is the 'will not
    change' refusal, not a no-op."""
    make(q, "ProvSame", provisioned=True)
    e = update_error(q, "ProvSame", BillingMode="PROVISIONED", ProvisionedThroughput=PT)
    assert e.type == "ValidationException"
    assert e.message.startswith("The provisioned throughput for the table will not change. The requested value "
                                "equals the current value. Current ReadCapacityUnits provisioned for the table: 2. "
                                "Requested ReadCapacityUnits: 2. Current WriteCapacityUnits")


@pytest.mark.parametrize("other", [{"DeletionProtectionEnabled": False}, {"TableClass": "STANDARD"}])
def test_empty_warm_throughput_beside_another_change_is_ignored(q, other):
    make(q, "WarmBeside")
    q.call("UpdateTable", {"TableName": "WarmBeside", "WarmThroughput": {}, **other})
    warm = describe(q, "WarmBeside")["WarmThroughput"]
    assert (warm["ReadUnitsPerSecond"], warm["WriteUnitsPerSecond"]) == (12000, 4000)


@pytest.mark.parametrize("warm", [{"ReadUnitsPerSecond": 0, "WriteUnitsPerSecond": 0}, {"ReadUnitsPerSecond": -1}])
def test_warm_throughput_of_zero_is_a_decrease(q, warm):
    make(q, "WarmZero")
    e = update_error(q, "WarmZero", WarmThroughput=warm)
    assert (e.type, e.message) == ("ValidationException", PRE + "Requested ReadUnitsPerSecond for WarmThroughput "
                                   "for table is lower than current WarmThroughput, decreasing WarmThroughput is "
                                   "not supported")


@pytest.mark.parametrize("change", [{"DeletionProtectionEnabled": True},
                                    {"OnDemandThroughput": {"MaxReadRequestUnits": 100}},
                                    {"WarmThroughput": {"ReadUnitsPerSecond": 13000}},
                                    {"GlobalSecondaryIndexUpdates": [{"Update": {
                                        "IndexName": "gs1", "OnDemandThroughput": {"MaxReadRequestUnits": 100}}}]}])
def test_synchronous_changes_answer_active(q, change):
    make(q, "Sync", indexes=[gsi("gs1")])
    out = q.call("UpdateTable", {"TableName": "Sync", **change})["TableDescription"]
    assert out["TableStatus"] == "ACTIVE"


def test_same_value_resends_are_accepted(q):
    """DDB-TABLE-018/383: re-sending the current DeletionProtection, on-demand BillingMode or
    TableClass is accepted (the billing one answers UPDATING, DescribeTable stays ACTIVE)."""
    make(q, "Resend", TableClass="STANDARD_INFREQUENT_ACCESS")
    for change in ({"DeletionProtectionEnabled": False}, {"TableClass": "STANDARD_INFREQUENT_ACCESS"}):
        q.call("UpdateTable", {"TableName": "Resend", **change})
    out = q.call("UpdateTable", {"TableName": "Resend", "BillingMode": "PAY_PER_REQUEST"})["TableDescription"]
    assert out["TableStatus"] == "UPDATING"
    desc = describe(q, "Resend")
    assert desc["TableStatus"] == "ACTIVE" and desc["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"


def test_standard_class_on_a_table_without_one_adds_no_summary(q):
    make(q, "Classless")
    out = q.call("UpdateTable", {"TableName": "Classless", "TableClass": "STANDARD"})["TableDescription"]
    assert "TableClassSummary" not in out
    assert "TableClassSummary" not in describe(q, "Classless")


# ---- existence checks come after the request's own ----

@pytest.mark.parametrize("changes,message", [
    ({}, NOTHING_TO_CHANGE),
    ({"ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 0}},
     "1 validation error detected: Value '0' at 'provisionedThroughput.writeCapacityUnits' failed to satisfy "
     "constraint: Member must have value greater than or equal to 1"),
])
def test_update_table_judges_the_request_before_the_table(q, changes, message):
    e = update_error(q, "NoSuchTable", **changes)
    assert (e.type, e.message) == ("ValidationException", message)


def test_not_found_texts_per_family(q):
    """DDB-TABLE-070/447: table operations say 'Table: <name> not found', ListTagsOfResource
    names the ARN, and the backup family answers TableNotFoundException."""
    table = "Requested resource not found: Table: Gone not found"
    for op, req in [("DescribeTimeToLive", {"TableName": "Gone"}),
                    ("UpdateTimeToLive", {"TableName": "Gone",
                                          "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "t"}}),
                    ("DescribeContributorInsights", {"TableName": "Gone"}),
                    ("GetResourcePolicy", {"ResourceArn": ARN + "Gone"}),
                    ("DeleteTable", {"TableName": "Gone"})]:
        e = q.error(op, req)
        assert (e.type, e.message) == ("ResourceNotFoundException", table), op
    e = q.error("ListTagsOfResource", {"ResourceArn": ARN + "Gone"})
    assert (e.type, e.message) == ("ResourceNotFoundException",
                                   "Requested resource not found: ResourceArn: %sGone not found" % ARN)
    for op, req in [("DescribeContinuousBackups", {"TableName": "Gone"}),
                    ("CreateBackup", {"TableName": "Gone", "BackupName": "bk1"}),
                    ("UpdateContinuousBackups", {"TableName": "Gone", "PointInTimeRecoverySpecification": {
                        "PointInTimeRecoveryEnabled": True}})]:
        e = q.error(op, req)
        assert (e.type, e.message) == ("TableNotFoundException", "Table not found: Gone"), op


# ---- tags ----

@pytest.mark.parametrize("op,extra", [("TagResource", {"Tags": [{"Key": "a", "Value": "b"}]}),
                                      ("UntagResource", {"TagKeys": ["a"]})])
def test_tagging_a_missing_table_names_its_arn(q, op, extra):
    e = q.error(op, {"ResourceArn": ARN + "Gone", **extra})
    assert (e.type, e.message) == ("ResourceNotFoundException",
                                   "Requested resource not found: ResourceArn: %sGone not found" % ARN)


@pytest.mark.parametrize("tag,message", [({"Key": "k", "Value": "\U0001F511"},
                                          "The Tag Value provided is invalid, Value: \U0001F511"),
                                         ({"Key": "\U0001F511", "Value": "v"},
                                          "The Tag Key provided is invalid, Key: \U0001F511")])
def test_emoji_in_tags_are_refused(q, tag, message):
    make(q, "Emoji")
    e = q.error("TagResource", {"ResourceArn": ARN + "Emoji", "Tags": [tag]})
    assert (e.type, e.message) == ("ValidationException", message)


def test_tags_in_other_scripts_and_allowed_punctuation(q):
    """DDB-TABLE-372: letters of any script and + - = . _ : / @ are accepted; other
    punctuation is refused and the whole call with it."""
    make(q, "Scripts")
    q.call("TagResource", {"ResourceArn": ARN + "Scripts", "Tags": [
        {"Key": "ключ", "Value": "café"}, {"Key": "表", "Value": "a+b-c=d.e_f:g/h@i"}]})
    for bad in ["100%", "a,b", "a&b", "a*b", "a;b", "a?b", "a|b", "<a>", "~a"]:
        e = q.error("TagResource", {"ResourceArn": ARN + "Scripts", "Tags": [{"Key": "x", "Value": "ok"},
                                                                           {"Key": "k", "Value": bad}]})
        assert (e.type, e.message) == ("ValidationException", "The Tag Value provided is invalid, Value: " + bad)
    tags = q.call("ListTagsOfResource", {"ResourceArn": ARN + "Scripts"})["Tags"]
    assert sorted(t["Key"] for t in tags) == sorted(["ключ", "表"])


@pytest.mark.parametrize("op,extra,message", [
    ("TagResource", {"Tags": [{}]}, "The Tag Key provided is invalid, Key: null"),
    ("TagResource", {"Tags": [{"Value": "v"}]}, "The Tag Key provided is invalid, Key: null"),
    ("UntagResource", {"TagKeys": [""]}, "The Tag Key provided is invalid, Key: "),
])
def test_tag_without_a_key(q, op, extra, message):
    make(q, "KeyLess")
    e = q.error(op, {"ResourceArn": ARN + "KeyLess", **extra})
    assert (e.type, e.message) == ("ValidationException", message)


def test_create_table_with_an_empty_tag_list(q):
    """DDB-TABLE-110: CreateTable takes Tags=[] (TagResource refuses it)."""
    make(q, "NoTags", Tags=[])
    assert q.call("ListTagsOfResource", {"ResourceArn": ARN + "NoTags"})["Tags"] == []


# ---- streams and encryption ----

def test_create_table_with_streams_and_encryption_off(q):
    """DDB-TABLE-029/044: StreamSpecification {StreamEnabled: false} gives no stream at all,
    and SSESpecification {} keeps the AWS owned key (no SSEDescription)."""
    make(q, "Plain", StreamSpecification={"StreamEnabled": False}, SSESpecification={})
    desc = describe(q, "Plain")
    for absent in ("StreamSpecification", "LatestStreamArn", "LatestStreamLabel", "SSEDescription"):
        assert absent not in desc


def test_sse_type_without_enabled_turns_kms_on(q):
    make(q, "KmsByType", SSESpecification={"SSEType": "KMS"})
    sse = describe(q, "KmsByType").get("SSEDescription", {})
    assert (sse.get("Status"), sse.get("SSEType")) == ("ENABLED", "KMS")
    assert sse["KMSMasterKeyArn"].startswith("arn:aws:kms:")


def test_stream_view_type_enum_order(q):
    e = create_error(q, "BadView", StreamSpecification={"StreamEnabled": True, "StreamViewType": ""})
    assert e.message == ("1 validation error detected: Value '' at 'streamSpecification.streamViewType' failed to "
                         "satisfy constraint: Member must satisfy enum value set: [OLD_IMAGE, KEYS_ONLY, "
                         "NEW_AND_OLD_IMAGES, NEW_IMAGE]")


@pytest.mark.parametrize("sse", [{"Enabled": False}, {}])
def test_disabling_default_encryption_is_refused(q, sse):
    make(q, "Default")
    e = update_error(q, "Default", SSESpecification=sse)
    assert (e.type, e.message) == ("ValidationException", PRE + "Table is already encrypted by default")


@pytest.mark.parametrize("sse,message", [
    ({"Enabled": False, "SSEType": "KMS"}, PRE + "SSEType can not be specified if Enabled is false"),
    ({"Enabled": False, "KMSMasterKeyId": "alias/mine"}, "KMSMasterKeyId can not be specified if Enabled is false"),
    ({"Enabled": True, "KMSMasterKeyId": "alias/mine"}, "SSEType KMS is required if KMSMasterKeyId is specified"),
    ({"Enabled": True, "SSEType": "AES256"}, "SSEType AES256 is not supported"),
    ({"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": ""},
     "1 validation error detected: Value '' at 'sSESpecification.kMSMasterKeyId' failed to satisfy constraint: "
     "Member must have length greater than or equal to 1"),
])
@pytest.mark.parametrize("op", ["CreateTable", "UpdateTable"])
def test_sse_specification_member_rules(q, op, sse, message):
    if op == "CreateTable":
        e = create_error(q, "SseRules", SSESpecification=sse)
    else:
        make(q, "SseRules")
        e = update_error(q, "SseRules", SSESpecification=sse)
    assert e.type == "ValidationException"
    if message.startswith((PRE, "1 validation")):
        assert e.message == message
    else:  # recorded without the rest of the text: the rule's own words end the message
        assert e.message.endswith(message)


# ---- key schema and names ----

@pytest.mark.parametrize("defs,message", [
    (PK + PK, "Attribute Name is duplicated: pk"),
    (PK + [{"AttributeName": "pk", "AttributeType": "N"}], "Attribute Name is duplicated: pk"),
    ([], "Invalid KeySchema: Some index key attribute have no definition"),
])
def test_attribute_definition_messages(q, defs, message):
    e = create_error(q, "Defs", AttributeDefinitions=defs)
    assert (e.type, e.message) == ("ValidationException", message)


def test_key_schema_order_and_definition_mismatches(q):
    """DDB-TABLE-042: the HASH element comes first, names are case-sensitive, and an unused
    definition is refused."""
    rng = {"AttributeName": "sk", "KeyType": "RANGE"}
    sk = {"AttributeName": "sk", "AttributeType": "S"}
    for extra, message in [
        ({"KeySchema": [rng] + HASH, "AttributeDefinitions": PK + [sk]},
         "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
        ({"KeySchema": HASH + HASH, "AttributeDefinitions": PK},
         "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"),
        ({"AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}]},
         PRE + "Some index key attributes are not defined in AttributeDefinitions. Keys: [pk], "
               "AttributeDefinitions: [PK]"),
        ({"AttributeDefinitions": PK + [sk]},
         PRE + "Number of attributes in KeySchema does not exactly match number of attributes defined in "
               "AttributeDefinitions"),
    ]:
        e = create_error(q, "Order", **extra)
        assert (e.type, e.message) == ("ValidationException", message)
    assert "Order" not in q.call("ListTables", {})["TableNames"]


@pytest.mark.parametrize("extra,message", [
    ({"AttributeDefinitions": [{}]},
     "2 validation errors detected: Value null at 'attributeDefinitions.1.member.attributeType' failed to satisfy "
     "constraint: Member must not be null; Value null at 'attributeDefinitions.1.member.attributeName' failed to "
     "satisfy constraint: Member must not be null"),
    ({"KeySchema": [{}]},
     "2 validation errors detected: Value null at 'keySchema.1.member.attributeName' failed to satisfy constraint: "
     "Member must not be null; Value null at 'keySchema.1.member.keyType' failed to satisfy constraint: Member "
     "must not be null"),
])
def test_empty_key_elements(q, extra, message):
    e = create_error(q, "EmptyEl", **extra)
    assert (e.type, e.message) == ("ValidationException", message)


def test_update_table_checks_ignored_definitions(q):
    make(q, "DefShape")
    e = update_error(q, "DefShape", AttributeDefinitions=[{"AttributeName": "x", "AttributeType": ""}],
                     DeletionProtectionEnabled=False)
    assert (e.type, e.message) == ("ValidationException", "1 validation error detected: Value '' at "
                                   "'attributeDefinitions.1.member.attributeType' failed to satisfy constraint: "
                                   "Member must satisfy enum value set: [B, N, S]")


@pytest.mark.parametrize("op,req,message", [
    ("DescribeTable", {"TableName": ""},
     "2 validation errors detected: Value '' at 'tableName' failed to satisfy constraint: Member must have length "
     "greater than or equal to 3; Value '' at 'tableName' failed to satisfy constraint: Member must satisfy regular "
     "expression pattern: [a-zA-Z0-9_.-]+"),
    ("ListTables", {"ExclusiveStartTableName": ""},
     "2 validation errors detected: Value '' at 'exclusiveStartTableName' failed to satisfy constraint: Member must "
     "satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value '' at 'exclusiveStartTableName' failed to satisfy "
     "constraint: Member must have length greater than or equal to 3"),
    ("CreateBackup", {"TableName": "Named", "BackupName": ""},
     "2 validation errors detected: Value '' at 'backupName' failed to satisfy constraint: Member must satisfy "
     "regular expression pattern: [a-zA-Z0-9_.-]+; Value '' at 'backupName' failed to satisfy constraint: Member "
     "must have length greater than or equal to 3"),
])
def test_empty_names(q, op, req, message):
    make(q, "Named")
    e = q.error(op, req)
    assert (e.type, e.message) == ("ValidationException", message)


# ---- time to live, insights, backups ----

def test_empty_time_to_live_specification(q):
    make(q, "TtlEmpty")
    e = q.error("UpdateTimeToLive", {"TableName": "TtlEmpty", "TimeToLiveSpecification": {}})
    assert e.message == ("2 validation errors detected: Value null at 'timeToLiveSpecification.attributeName' failed "
                         "to satisfy constraint: Member must not be null; Value null at "
                         "'timeToLiveSpecification.enabled' failed to satisfy constraint: Member must not be null")


def test_time_to_live_cooldown(q):
    """DDB-TABLE-143: after a change, another within the hour is refused."""
    make(q, "TtlCool")
    spec = {"Enabled": True, "AttributeName": "exp"}
    q.call("UpdateTimeToLive", {"TableName": "TtlCool", "TimeToLiveSpecification": spec})
    # What is wrong with the request itself is reported first.
    e = q.error("UpdateTimeToLive", {"TableName": "TtlCool", "TimeToLiveSpecification": spec})
    assert e.message == "TimeToLive is already enabled"
    e = q.error("UpdateTimeToLive", {"TableName": "TtlCool", "TimeToLiveSpecification": dict(spec, Enabled=False)})
    assert (e.type, e.message) == ("ValidationException",
                                   "Time to live has been modified multiple times within a fixed interval")


@pytest.mark.parametrize("op,extra,message", [
    ("DescribeContributorInsights", {"IndexName": ""},
     "IndexName must be at least 3 characters long and at most 255 characters long"),
    ("UpdateContributorInsights", {"IndexName": "", "ContributorInsightsAction": "ENABLE"},
     "IndexName must be at least 3 characters long and at most 255 characters long"),
    ("UpdateContributorInsights", {"ContributorInsightsAction": "ENABLE", "ContributorInsightsMode": ""},
     "1 validation error detected: Value '' at 'contributorInsightsMode' failed to satisfy constraint: Member must "
     "satisfy enum value set: [THROTTLED_KEYS, ACCESSED_AND_THROTTLED_KEYS]"),
])
def test_insights_messages(q, op, extra, message):
    make(q, "Insight")
    e = q.error(op, {"TableName": "Insight", **extra})
    assert (e.type, e.message) == ("ValidationException", message)


def test_insights_mode_follows_each_enable(q):
    """DDB-TABLE-092: ENABLE without a mode goes back to ACCESSED_AND_THROTTLED_KEYS; ENABLE
    with the current mode is a settled no-op; DISABLE with a mode echoes the current one."""
    make(q, "Modes")
    req = {"TableName": "Modes", "ContributorInsightsAction": "ENABLE"}
    q.call("UpdateContributorInsights", dict(req, ContributorInsightsMode="THROTTLED_KEYS"))
    q.call("UpdateContributorInsights", req)
    d = q.call("DescribeContributorInsights", {"TableName": "Modes"})
    assert d["ContributorInsightsMode"] == "ACCESSED_AND_THROTTLED_KEYS" and len(d["ContributorInsightsRuleList"]) == 2
    r = q.call("UpdateContributorInsights", dict(req, ContributorInsightsMode="ACCESSED_AND_THROTTLED_KEYS"))
    assert r["ContributorInsightsStatus"] == "ENABLED"
    r = q.call("UpdateContributorInsights", {"TableName": "Modes", "ContributorInsightsAction": "DISABLE",
                                             "ContributorInsightsMode": "THROTTLED_KEYS"})
    assert (r["ContributorInsightsStatus"], r["ContributorInsightsMode"]) == ("DISABLING",
                                                                             "ACCESSED_AND_THROTTLED_KEYS")


def test_point_in_time_recovery_specification_shapes(q):
    """DDB-TABLE-457: the PITR specification's own members are checked as DynamoDB does."""
    make(q, "Pitr")
    for spec, message in [
        ({}, "1 validation error detected: Value null at 'pointInTimeRecoverySpecification.pointInTimeRecoveryEnabled'"
             " failed to satisfy constraint: Member must not be null"),
        ({"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": -1},
         "1 validation error detected: Value '-1' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed "
         "to satisfy constraint: Member must have value greater than or equal to 1"),
        ({"PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 0},
         "1 validation error detected: Value '0' at 'pointInTimeRecoverySpecification.recoveryPeriodInDays' failed "
         "to satisfy constraint: Member must have value greater than or equal to 1"),
    ]:
        e = q.error("UpdateContinuousBackups", {"TableName": "Pitr", "PointInTimeRecoverySpecification": spec})
        assert (e.type, e.message) == ("ValidationException", message)


def test_describe_backup_with_an_empty_arn(q):
    e = q.error("DescribeBackup", {"BackupArn": ""})
    assert (e.type, e.message) == ("ValidationException", "Invalid Backup ARN")


@pytest.fixture
def backup(q):
    make(q, "Src")
    return q.call("CreateBackup", {"TableName": "Src", "BackupName": "bk1"})["BackupDetails"]["BackupArn"]


@pytest.mark.parametrize("extra,message", [
    ({"TargetTableName": ""}, "TableName must be at least 3 characters long and at most 255 characters long"),
    ({"BillingModeOverride": ""},
     "1 validation error detected: Value '' at 'billingModeOverride' failed to satisfy constraint: Member must "
     "satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]"),
    ({"OnDemandThroughputOverride": {"MaxReadRequestUnits": 0}},
     "Invalid Request: Requested MaxReadRequestUnits for OnDemandThroughput is outside of valid range"),
    ({"ProvisionedThroughputOverride": {}},
     "2 validation errors detected: Value null at 'provisionedThroughputOverride.writeCapacityUnits' failed to "
     "satisfy constraint: Member must not be null; Value null at 'provisionedThroughputOverride.readCapacityUnits' "
     "failed to satisfy constraint: Member must not be null"),
])
def test_restore_override_messages(q, backup, extra, message):
    e = q.error("RestoreTableFromBackup", {"BackupArn": backup, "TargetTableName": "Restored", **extra})
    assert (e.type, e.message) == ("ValidationException", message)


def test_restore_onto_an_existing_table(q, backup):
    """DDB-TABLE-100: a restore target that exists is TableAlreadyExistsException."""
    make(q, "Taken")
    e = q.error("RestoreTableFromBackup", {"BackupArn": backup, "TargetTableName": "Taken"})
    assert (e.type, e.message) == ("TableAlreadyExistsException", "Table already exists: Taken")


def test_restore_on_demand_override(q, backup):
    """DDB-TABLE-457: on-demand limits of -1 or at least 1 are taken and kept by the restored
    table; an empty override changes nothing; the other override members are range-checked
    before the backup is read."""
    q.call("RestoreTableFromBackup", {"BackupArn": backup, "TargetTableName": "Capped", "OnDemandThroughputOverride": {
        "MaxReadRequestUnits": 10, "MaxWriteRequestUnits": -1}})
    assert describe(q, "Capped")["OnDemandThroughput"] == {"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": -1}
    q.call("RestoreTableFromBackup", {"BackupArn": backup, "TargetTableName": "Uncapped",
                                      "OnDemandThroughputOverride": {}})
    assert "OnDemandThroughput" not in describe(q, "Uncapped")
    for extra, message in [
        ({"OnDemandThroughputOverride": {"MaxWriteRequestUnits": -2}},
         "Invalid Request: Requested MaxWriteRequestUnits for OnDemandThroughput is outside of valid range"),
        ({"ProvisionedThroughputOverride": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 5}},
         "1 validation error detected: Value '0' at 'provisionedThroughputOverride.readCapacityUnits' failed to "
         "satisfy constraint: Member must have value greater than or equal to 1"),
    ]:
        e = q.error("RestoreTableFromBackup", {"BackupArn": ARN + "Src/backup/01700000000000-ffffffff",
                                               "TargetTableName": "Other", **extra})
        assert (e.type, e.message) == ("ValidationException", message)


def test_backup_name_and_ttl_members_fail_together(q):
    """DDB-TABLE-457: a short name with a bad character breaks both constraints, and a TTL
    specification reports its attribute name before its missing Enabled."""
    make(q, "Both")
    e = q.error("CreateBackup", {"TableName": "Both", "BackupName": "a#"})
    assert e.message == ("2 validation errors detected: Value 'a#' at 'backupName' failed to satisfy constraint: Member "
                         "must satisfy regular expression pattern: [a-zA-Z0-9_.-]+; Value 'a#' at 'backupName' failed "
                         "to satisfy constraint: Member must have length greater than or equal to 3")
    e = q.error("UpdateTimeToLive", {"TableName": "Both", "TimeToLiveSpecification": {"AttributeName": ""}})
    assert e.message == ("2 validation errors detected: Value '' at 'timeToLiveSpecification.attributeName' failed to "
                         "satisfy constraint: Member must have length greater than or equal to 1; Value null at "
                         "'timeToLiveSpecification.enabled' failed to satisfy constraint: Member must not be null")


def test_point_in_time_restore_precedence(q):
    make(q, "Src")
    make(q, "Taken")
    req = {"SourceTableName": "Src", "TargetTableName": "Taken", "UseLatestRestorableTime": True}
    e = q.error("RestoreTableToPointInTime", req)
    assert (e.type, e.message) == ("PointInTimeRecoveryUnavailableException",
                                   "Point in time recovery is not enabled for table 'Src'")
    e = q.error("RestoreTableToPointInTime", {"SourceTableName": "Src", "TargetTableName": "New"})
    assert (e.type, e.message) == ("ValidationException", "Invalid Request: Either one of RestoreDateTime or "
                                                          "UseLatestRestorableTime must be specified, but not both")
    q.call("UpdateContinuousBackups", {"TableName": "Src", "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True}})
    e = q.error("RestoreTableToPointInTime", req)
    assert (e.type, e.message) == ("TableAlreadyExistsException", "Table already exists: Taken")
    q.call("RestoreTableToPointInTime", dict(req, TargetTableName="New"))
    assert describe(q, "New")["KeySchema"] == HASH


# ---- billing switches, capacity limits and quotas ----

def test_switch_to_provisioned_needs_every_index_capacity(q):
    make(q, "SwitchIx", indexes=[gsi("gs1")])
    e = update_error(q, "SwitchIx", BillingMode="PROVISIONED", ProvisionedThroughput=PT)
    assert (e.type, e.message) == ("ValidationException", PRE + "ProvisionedThroughput must be specified for index: "
                                                                "gs1")
    assert describe(q, "SwitchIx")["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_switch_to_provisioned_drops_on_demand_limits(q):
    make(q, "SwitchOdt", OnDemandThroughput={"MaxReadRequestUnits": 7, "MaxWriteRequestUnits": 8})
    q.call("UpdateTable", {"TableName": "SwitchOdt", "BillingMode": "PROVISIONED", "ProvisionedThroughput": PT})
    assert "OnDemandThroughput" not in describe(q, "SwitchOdt")


def test_index_on_demand_throughput_at_create_is_described(q):
    make(q, "IxOdt", indexes=[gsi("gs1", OnDemandThroughput={"MaxReadRequestUnits": 50, "MaxWriteRequestUnits": 50})])
    assert describe(q, "IxOdt")["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == {
        "MaxReadRequestUnits": 50, "MaxWriteRequestUnits": 50}


@pytest.mark.parametrize("provisioned,odt,start", [
    (False, {"MaxReadRequestUnits": 0}, "Requested MaxReadRequestUnits for OnDemandThroughput for index : gs1 is "
                                        "outside of valid range"),
    (False, {"MaxReadRequestUnits": -1}, "Requested MaxReadRequestUnits for OnDemandThroughput for index : gs1 is "
                                         "outside of valid range"),
    (True, {"MaxReadRequestUnits": 10}, "MaxReadRequestUnits for OnDemandThroughput for index: gs1 cannot be "
                                        "specified"),
])
def test_index_on_demand_throughput_rules_at_create(q, provisioned, odt, start):
    defs = {"AttributeDefinitions": PK + [G_DEF]}
    index = gsi("gs1", OnDemandThroughput=odt, **({"ProvisionedThroughput": PT} if provisioned else {}))
    billing = {"BillingMode": "PROVISIONED", "ProvisionedThroughput": PT} if provisioned else {}
    e = create_error(q, "IxOdtBad", GlobalSecondaryIndexes=[index], **defs, **billing)
    assert e.type == "ValidationException" and e.message.startswith(PRE + start)


def test_switch_to_on_demand_with_capacity(q):
    make(q, "ToPpr", provisioned=True)
    e = update_error(q, "ToPpr", BillingMode="PAY_PER_REQUEST", ProvisionedThroughput={"ReadCapacityUnits": 3,
                                                                                       "WriteCapacityUnits": 3})
    assert (e.type, e.message) == ("ValidationException", PRE + "ProvisionedThroughput cannot be specified when "
                                                                "BillingMode is PAY_PER_REQUEST")


def test_capacity_alone_on_an_on_demand_table(q):
    """DDB-TABLE-056/059: capacity sent to an on-demand table without a billing switch."""
    make(q, "PtOnPpr")
    e = update_error(q, "PtOnPpr", ProvisionedThroughput=PT)
    assert (e.type, e.message) == ("ValidationException", PRE + "Neither ReadCapacityUnits nor WriteCapacityUnits "
                                                                "can be specified when BillingMode is PAY_PER_REQUEST")


@pytest.mark.parametrize("pt,message", [
    ({"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
     "2 validation errors detected: Value '0' at 'provisionedThroughput.writeCapacityUnits' failed to satisfy "
     "constraint: Member must have value greater than or equal to 1; Value '0' at "
     "'provisionedThroughput.readCapacityUnits' failed to satisfy constraint: Member must have value greater than "
     "or equal to 1"),
    ({}, "2 validation errors detected: Value null at 'provisionedThroughput.writeCapacityUnits' failed to satisfy "
         "constraint: Member must not be null; Value null at 'provisionedThroughput.readCapacityUnits' failed to "
         "satisfy constraint: Member must not be null"),
])
def test_capacity_with_both_members_wrong(q, pt, message):
    e = create_error(q, "ZeroPt", BillingMode="PROVISIONED", ProvisionedThroughput=pt)
    assert (e.type, e.message) == ("ValidationException", message)


def test_warm_throughput_at_create(q):
    make(q, "WarmEmpty", WarmThroughput={})
    warm = describe(q, "WarmEmpty")["WarmThroughput"]
    assert (warm["ReadUnitsPerSecond"], warm["WriteUnitsPerSecond"]) == (12000, 4000)
    e = create_error(q, "WarmLow", WarmThroughput={"ReadUnitsPerSecond": 1, "WriteUnitsPerSecond": 1})
    assert e.message == (PRE + "Requested ReadUnitsPerSecond for WarmThroughput for table is lower than initial "
                         "throughput for OnDemand. See: https://docs.aws.amazon.com/amazondynamodb/latest/"
                         "developerguide/on-demand-capacity-mode.html#on-demand-capacity-mode-initial")


def test_billing_summary_keeps_the_last_switch_to_on_demand(q):
    make(q, "Summary")
    since = describe(q, "Summary")["BillingModeSummary"]["LastUpdateToPayPerRequestDateTime"]
    q.call("UpdateTable", {"TableName": "Summary", "BillingMode": "PROVISIONED", "ProvisionedThroughput": PT})
    assert describe(q, "Summary")["BillingModeSummary"] == {"BillingMode": "PROVISIONED",
                                                            "LastUpdateToPayPerRequestDateTime": since}


def test_create_table_answer_is_leaner_than_describe(q):
    out = make(q, "Lean", indexes=[gsi("gs1")])
    assert "WarmThroughput" not in out and "WarmThroughput" not in out["GlobalSecondaryIndexes"][0]
    assert out["BillingModeSummary"] == {"BillingMode": "PAY_PER_REQUEST"}


def test_fifth_capacity_decrease_in_a_day(q):
    make(q, "Decrease", provisioned=True, ProvisionedThroughput={"ReadCapacityUnits": 10, "WriteCapacityUnits": 10})
    for units in (9, 8, 7, 6):
        q.call("UpdateTable", {"TableName": "Decrease", "ProvisionedThroughput": {"ReadCapacityUnits": units,
                                                                                  "WriteCapacityUnits": 10}})
    assert describe(q, "Decrease")["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 4
    e = update_error(q, "Decrease", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 10})
    assert e.type == "LimitExceededException"
    assert e.message.startswith("Subscriber limit exceeded: Provisioned throughput decreases are limited within a "
                                "given UTC day. After the first 4 decreases, each subsequent decrease in the same "
                                "UTC day can be performed at most once every 3600 seconds. Number of decreases "
                                "today: 4. Last decrease at ")
    # An increase is still allowed.
    q.call("UpdateTable", {"TableName": "Decrease", "ProvisionedThroughput": {"ReadCapacityUnits": 20,
                                                                              "WriteCapacityUnits": 20}})


def test_third_table_class_change(q):
    make(q, "Classy")
    for cls in ("STANDARD_INFREQUENT_ACCESS", "STANDARD"):
        q.call("UpdateTable", {"TableName": "Classy", "TableClass": cls})
    e = update_error(q, "Classy", TableClass="STANDARD_INFREQUENT_ACCESS")
    assert (e.type, e.message) == ("LimitExceededException", "Subscriber limit exceeded: Updates to TableClass are "
                                                             "limited to 2 times in 30 day(s).")


@pytest.mark.parametrize("change,start,end", [
    ({"ProvisionedThroughput": {"ReadCapacityUnits": 40001, "WriteCapacityUnits": 2}},
     "The requested ReadCapacityUnits, 40001, is above the per table maximum for the account in ",
     ". Per table maximum: 40000. Refer to the Amazon DynamoDB Developer Guide for current limits and how to "
     "request higher limits."),
    ({"OnDemandThroughput": {"MaxReadRequestUnits": 40001}},
     "Subscriber limit exceeded: Requested MaxReadRequestUnits for OnDemandThroughput for table exceeds "
     "TableMaxReadCapacityUnits of the account in region ", ""),
])
def test_capacity_above_the_table_quota(q, change, start, end):
    make(q, "Quota", provisioned="ProvisionedThroughput" in change)
    limits = q.call("DescribeLimits", {})
    assert limits["TableMaxReadCapacityUnits"] == 40000
    e = update_error(q, "Quota", **change)
    assert e.type == "LimitExceededException" and e.message.startswith(start) and e.message.endswith(end)


def test_twenty_first_index_via_update_table(q):
    make(q, "Many", indexes=[gsi("gi%02d" % i, Projection={"ProjectionType": "KEYS_ONLY"}) for i in range(20)])
    e = update_error(q, "Many", AttributeDefinitions=[G_DEF], GlobalSecondaryIndexUpdates=[{"Create": gsi("gi99")}])
    assert (e.type, e.message) == ("LimitExceededException", "Subscriber limit exceeded: Number of global secondary "
                                                             "indexes exceeds per-table limit of 20")


# ---- schema echo, names and immutable members ----

def test_definitions_and_non_key_attributes_come_back_sorted(q):
    defs = [{"AttributeName": n, "AttributeType": "S"} for n in ("z", "g", "pk")]
    index = gsi("gs1", Projection={"ProjectionType": "INCLUDE", "NonKeyAttributes": ["zz", "aa", "mm"]})
    out = q.call("CreateTable", {"TableName": "Sorted", "AttributeDefinitions": defs,
                                 "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                               {"AttributeName": "z", "KeyType": "RANGE"}],
                                 "BillingMode": "PAY_PER_REQUEST", "GlobalSecondaryIndexes": [index]})
    for desc in (out["TableDescription"], describe(q, "Sorted")):
        assert [d["AttributeName"] for d in desc["AttributeDefinitions"]] == ["g", "pk", "z"]
        assert desc["GlobalSecondaryIndexes"][0]["Projection"]["NonKeyAttributes"] == ["aa", "mm", "zz"]


def test_unused_definition_beside_indexes(q):
    e = create_error(q, "Unused", AttributeDefinitions=PK + [G_DEF, {"AttributeName": "b", "AttributeType": "S"}],
                     GlobalSecondaryIndexes=[gsi("gs1")])
    assert e.type == "ValidationException"
    assert e.message.startswith(PRE + "Some AttributeDefinitions are not used. AttributeDefinitions: [")


@pytest.mark.parametrize("projection,fragment", [
    ({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x", "x"]}, "Duplicate element in NonKeyAttributes: x"),
    ({"ProjectionType": "INCLUDE", "NonKeyAttributes": []},
     "projection.nonKeyAttributes' failed to satisfy constraint: Member must have length greater than or equal to 1"),
])
def test_non_key_attribute_rules(q, projection, fragment):
    e = create_error(q, "Nka", AttributeDefinitions=PK + [G_DEF], GlobalSecondaryIndexes=[gsi(Projection=projection)])
    assert e.type == "ValidationException" and fragment in e.message


def test_local_indexes_sent_to_update_table_are_ignored(q):
    make(q, "NoLsi")
    lsi = [{"IndexName": "ls1", "KeySchema": HASH, "Projection": {"ProjectionType": "ALL"}}]
    e = update_error(q, "NoLsi", LocalSecondaryIndexes=lsi)
    assert (e.type, e.message) == ("ValidationException", NOTHING_TO_CHANGE)
    q.call("UpdateTable", {"TableName": "NoLsi", "LocalSecondaryIndexes": lsi, "DeletionProtectionEnabled": True})
    assert describe(q, "NoLsi")["DeletionProtectionEnabled"] is True


def test_key_schema_sent_to_update_table_is_ignored(q):
    """DDB-TABLE-357: KeySchema is no UpdateTable member: alone it changes nothing, beside a
    real change it is ignored."""
    make(q, "KeepKeys")
    other = [{"AttributeName": "x", "KeyType": "HASH"}]
    e = update_error(q, "KeepKeys", KeySchema=other)
    assert (e.type, e.message) == ("ValidationException", NOTHING_TO_CHANGE)
    q.call("UpdateTable", {"TableName": "KeepKeys", "KeySchema": other, "DeletionProtectionEnabled": True})
    assert describe(q, "KeepKeys")["KeySchema"] == HASH


def test_table_arn_as_table_name(q):
    make(q, "ByArn")
    assert describe(q, ARN + "ByArn")["TableName"] == "ByArn"
    e = q.error("DescribeTable", {"TableName": ARN + "Gone"})
    assert (e.type, e.message) == ("ResourceNotFoundException", "Requested resource not found: Table: Gone not found")
    q.call("PutItem", {"TableName": ARN + "ByArn", "Item": {"pk": {"S": "a"}}})
    q.call("DescribeTimeToLive", {"TableName": ARN + "ByArn"})
    q.call("DescribeContinuousBackups", {"TableName": ARN + "ByArn"})
    q.call("DescribeContributorInsights", {"TableName": ARN + "ByArn"})
    out = q.call("UpdateTable", {"TableName": ARN + "ByArn", "DeletionProtectionEnabled": False})["TableDescription"]
    assert out["TableName"] == "ByArn"
    q.call("DeleteTable", {"TableName": ARN + "ByArn"})


def test_list_tables_cursor_is_a_name(q):
    """DDB-TABLE-072/379/012: the ListTables cursor must be a name (an ARN fails the pattern),
    may name a table that does not exist, and names sort byte-wise."""
    for name in ("abc", "Zed", "Abc"):
        make(q, name)
    e = q.error("ListTables", {"ExclusiveStartTableName": ARN + "abc"})
    assert e.type == "ValidationException" and "Member must satisfy regular expression pattern" in e.message
    assert q.call("ListTables", {})["TableNames"] == ["Abc", "Zed", "abc"]
    assert q.call("ListTables", {"ExclusiveStartTableName": "Abd"})["TableNames"] == ["Zed", "abc"]
    page = q.call("ListTables", {"Limit": 2})
    assert page == {"TableNames": ["Abc", "Zed"], "LastEvaluatedTableName": "Zed"}
    assert q.call("ListTables", {"ExclusiveStartTableName": "Zed", "Limit": 2}) == {"TableNames": ["abc"]}


def test_deleting_a_pitr_table_leaves_a_system_backup(q):
    make(q, "Kept")
    q.call("UpdateContinuousBackups", {"TableName": "Kept", "PointInTimeRecoverySpecification": {
        "PointInTimeRecoveryEnabled": True}})
    q.call("DeleteTable", {"TableName": "Kept"})
    assert q.call("ListBackups", {"TableName": "Kept"})["BackupSummaries"] == []  # USER is the default filter
    system = q.call("ListBackups", {"TableName": "Kept", "BackupType": "SYSTEM"})["BackupSummaries"]
    assert [(b["BackupName"], b["BackupType"]) for b in system] == [("Kept$DeletedTableBackup", "SYSTEM")]
    e = q.error("DeleteBackup", {"BackupArn": system[0]["BackupArn"]})
    assert e.type == "ValidationException"
    assert e.message.startswith("Invalid Request: User is not allowed to delete the system backup with arn ")
