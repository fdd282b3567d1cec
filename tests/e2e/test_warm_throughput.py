"""WarmThroughput: what DynamoDB reports for a table's and its global indexes' prepared
throughput, how CreateTable and UpdateTable raise it, and what they refuse."""
import pytest

KEYS = {"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                 {"AttributeName": "g", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
GSI = {"IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
       "Projection": {"ProjectionType": "ALL"}}


def make(q, name, gsi=None, **extra):
    req = {"TableName": name, **KEYS, **extra}
    if gsi is not None:
        req["GlobalSecondaryIndexes"] = [gsi]
    else:
        req["AttributeDefinitions"] = req["AttributeDefinitions"][:1]
    return q.call("CreateTable", req)["TableDescription"]


def warm(q, name, index=None):
    desc = q.call("DescribeTable", {"TableName": name})["Table"]
    if index is None:
        return desc["WarmThroughput"]
    return [g for g in desc["GlobalSecondaryIndexes"] if g["IndexName"] == index][0]["WarmThroughput"]


def test_on_demand_table_and_index_start_at_the_baseline(q):
    make(q, "Tab", gsi=GSI, BillingMode="PAY_PER_REQUEST")
    baseline = {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}
    assert warm(q, "Tab") == baseline
    assert warm(q, "Tab", "byG") == baseline


def test_provisioned_table_starts_at_its_capacity_and_never_comes_down(q):
    make(q, "Prov", ProvisionedThroughput={"ReadCapacityUnits": 2, "WriteCapacityUnits": 1})
    assert warm(q, "Prov") == {"ReadUnitsPerSecond": 2, "WriteUnitsPerSecond": 1, "Status": "ACTIVE"}
    q.call("UpdateTable", {"TableName": "Prov", "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 3}})
    q.call("UpdateTable", {"TableName": "Prov", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}})
    assert warm(q, "Prov")["ReadUnitsPerSecond"] == 5 and warm(q, "Prov")["WriteUnitsPerSecond"] == 3
    q.call("UpdateTable", {"TableName": "Prov", "BillingMode": "PAY_PER_REQUEST"})
    assert warm(q, "Prov")["ReadUnitsPerSecond"] == 12000 and warm(q, "Prov")["WriteUnitsPerSecond"] == 4000


def test_create_table_raises_one_unit_and_keeps_the_other(q):
    d = make(q, "Raise", BillingMode="PAY_PER_REQUEST", WarmThroughput={"ReadUnitsPerSecond": 15000})
    assert d["WarmThroughput"]["ReadUnitsPerSecond"] == 15000
    assert warm(q, "Raise") == {"ReadUnitsPerSecond": 15000, "WriteUnitsPerSecond": 4000, "Status": "ACTIVE"}


def test_update_table_with_only_warm_throughput_raises_it(q):
    make(q, "Upd", BillingMode="PAY_PER_REQUEST")
    q.call("UpdateTable", {"TableName": "Upd", "WarmThroughput": {"ReadUnitsPerSecond": 13000,
                                                                "WriteUnitsPerSecond": 5000}})
    assert warm(q, "Upd")["ReadUnitsPerSecond"] == 13000 and warm(q, "Upd")["WriteUnitsPerSecond"] == 5000
    # The same value again is accepted; a lower one is refused, naming the unit.
    q.call("UpdateTable", {"TableName": "Upd", "WarmThroughput": {"ReadUnitsPerSecond": 13000}})
    e = q.error("UpdateTable", {"TableName": "Upd", "WarmThroughput": {"WriteUnitsPerSecond": 4500}})
    assert e.type == "ValidationException"
    assert e.message == ("One or more parameter values were invalid: Requested WriteUnitsPerSecond for "
                         "WarmThroughput for table is lower than current WarmThroughput, decreasing "
                         "WarmThroughput is not supported")
    assert warm(q, "Upd")["WriteUnitsPerSecond"] == 5000


@pytest.mark.parametrize("units,low", [({"ReadUnitsPerSecond": 11999}, "ReadUnitsPerSecond"),
                                       ({"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 3999},
                                        "WriteUnitsPerSecond")])
def test_create_table_below_the_on_demand_baseline_is_refused(q, units, low):
    e = q.error("CreateTable", {"TableName": "Low", **KEYS, "AttributeDefinitions": KEYS["AttributeDefinitions"][:1],
                                "BillingMode": "PAY_PER_REQUEST", "WarmThroughput": units})
    assert e.type == "ValidationException"
    assert e.message.startswith("One or more parameter values were invalid: Requested %s for WarmThroughput for "
                                "table is lower than initial throughput for OnDemand." % low)
    assert q.error("DescribeTable", {"TableName": "Low"}).type == "ResourceNotFoundException"


def test_create_table_below_provisioned_capacity_is_refused(q):
    e = q.error("CreateTable", {"TableName": "Low", **KEYS, "AttributeDefinitions": KEYS["AttributeDefinitions"][:1],
                                "ProvisionedThroughput": {"ReadCapacityUnits": 10, "WriteCapacityUnits": 10},
                                "WarmThroughput": {"ReadUnitsPerSecond": 9}})
    assert e.message == ("One or more parameter values were invalid: Requested ReadUnitsPerSecond for "
                         "WarmThroughput for table is lower than ReadCapacityUnits of ProvisionedThroughput")


def test_malformed_warm_throughput(q):
    make(q, "Mal", BillingMode="PAY_PER_REQUEST")
    e = q.error("UpdateTable", {"TableName": "Mal", "WarmThroughput": {}})
    assert e.message == ("One or more parameter values were invalid: WarmThroughput must have at least one of "
                         "ReadUnitsPerSecond or WriteUnitsPerSecond specified")
    e = q.error("UpdateTable", {"TableName": "Mal", "WarmThroughput": {"ReadUnitsPerSecond": 0}})
    assert e.message == ("1 validation error detected: Value '0' at 'warmThroughput.readUnitsPerSecond' failed to "
                         "satisfy constraint: Member must have value greater than or equal to 1")
    assert q.error("UpdateTable", {"TableName": "Mal", "WarmThroughput": "fast"}).type == "SerializationException"
    assert q.error("UpdateTable", {"TableName": "Mal",
                                   "WarmThroughput": {"ReadUnitsPerSecond": "x"}}).type == "SerializationException"


def test_index_warm_throughput_on_create_and_update(q):
    gsi = dict(GSI, WarmThroughput={"WriteUnitsPerSecond": 6000})
    make(q, "Gsi", gsi=gsi, BillingMode="PAY_PER_REQUEST")
    assert warm(q, "Gsi", "byG") == {"ReadUnitsPerSecond": 12000, "WriteUnitsPerSecond": 6000, "Status": "ACTIVE"}
    assert warm(q, "Gsi")["WriteUnitsPerSecond"] == 4000  # the table's own is apart
    q.call("UpdateTable", {"TableName": "Gsi", "GlobalSecondaryIndexUpdates": [
        {"Update": {"IndexName": "byG", "WarmThroughput": {"ReadUnitsPerSecond": 20000}}}]})
    assert warm(q, "Gsi", "byG")["ReadUnitsPerSecond"] == 20000
    e = q.error("UpdateTable", {"TableName": "Gsi", "GlobalSecondaryIndexUpdates": [
        {"Update": {"IndexName": "byG", "WarmThroughput": {"ReadUnitsPerSecond": 100}}}]})
    assert e.message == ("One or more parameter values were invalid: Requested ReadUnitsPerSecond for "
                         "WarmThroughput for index byG is lower than current WarmThroughput, decreasing "
                         "WarmThroughput is not supported")
    e = q.error("UpdateTable", {"TableName": "Gsi", "GlobalSecondaryIndexUpdates": [
        {"Update": {"IndexName": "byG", "WarmThroughput": {}}}]})
    assert e.message.endswith("specified for index: byG")
    e = q.error("UpdateTable", {"TableName": "Gsi", "GlobalSecondaryIndexUpdates": [{"Update": {"IndexName": "byG"}}]})
    assert e.message == ("One or more parameter values were invalid: The only Updates for index: byG when "
                         "TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput")


def test_index_on_demand_throughput_update(q):
    make(q, "Odt", gsi=GSI, BillingMode="PAY_PER_REQUEST")
    q.call("UpdateTable", {"TableName": "Odt", "GlobalSecondaryIndexUpdates": [
        {"Update": {"IndexName": "byG", "OnDemandThroughput": {"MaxReadRequestUnits": 50}}}]})
    desc = q.call("DescribeTable", {"TableName": "Odt"})["Table"]
    assert desc["GlobalSecondaryIndexes"][0]["OnDemandThroughput"] == {"MaxReadRequestUnits": 50}
