"""TTL settings, tags, limits and endpoints through `quarry call`."""


def test_time_to_live_settings(q):
    q.create("Sessions", ("id", "S"), None)
    assert q.call("DescribeTimeToLive", {"TableName": "Sessions"}) == {"TimeToLiveDescription": {"TimeToLiveStatus": "DISABLED"}}
    spec = {"Enabled": True, "AttributeName": "expires"}
    assert q.call("UpdateTimeToLive", {"TableName": "Sessions", "TimeToLiveSpecification": spec}) == {"TimeToLiveSpecification": spec}
    d = q.call("DescribeTimeToLive", {"TableName": "Sessions"})["TimeToLiveDescription"]
    assert d == {"TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}
    assert "already enabled" in q.error("UpdateTimeToLive", {"TableName": "Sessions", "TimeToLiveSpecification": spec}).message
    assert "TimeToLive" not in str(q.call("DescribeTable", {"TableName": "Sessions"}))
    e = q.error("UpdateTimeToLive", {"TableName": "Sessions", "TimeToLiveSpecification": dict(spec, Enabled=False)})
    assert e.message == "Time to live has been modified multiple times within a fixed interval"
    q.create("Plain", ("id", "S"), None)
    e = q.error("UpdateTimeToLive", {"TableName": "Plain", "TimeToLiveSpecification": dict(spec, Enabled=False)})
    assert "already disabled" in e.message
    assert q.error("DescribeTimeToLive", {"TableName": "Nope1"}).type == "ResourceNotFoundException"
    assert "timeToLiveSpecification" in q.error("UpdateTimeToLive", {"TableName": "Sessions"}).message


def test_tags(q):
    q.call("CreateTable", {"TableName": "Tagged", "BillingMode": "PAY_PER_REQUEST",
                           "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                           "Tags": [{"Key": "team", "Value": "core"}]})
    arn = q.call("DescribeTable", {"TableName": "Tagged"})["Table"]["TableArn"]
    q.call("TagResource", {"ResourceArn": arn, "Tags": [{"Key": "env", "Value": "dev"}]})
    tags = q.call("ListTagsOfResource", {"ResourceArn": arn})["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "dev"), ("team", "core")]
    q.call("UntagResource", {"ResourceArn": arn, "TagKeys": ["team"]})
    assert q.call("ListTagsOfResource", {"ResourceArn": arn})["Tags"] == [{"Key": "env", "Value": "dev"}]
    assert q.error("ListTagsOfResource", {"ResourceArn": arn + "x"}).type == "ResourceNotFoundException"


def test_limits_and_endpoints(q):
    assert q.call("DescribeLimits", {})["TableMaxReadCapacityUnits"] == 40000
    assert q.call("DescribeEndpoints", {})["Endpoints"][0]["CachePeriodInMinutes"] == 1440
