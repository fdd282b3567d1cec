"""Contributor insights over the wire: boto3 enables them on a table and a global index,
a skewed load runs, GetInsightRuleReport (sent as the server routes it, by X-Amz-Target)
names the hot keys in CloudWatch's report shape, QuarryLargeItemCollections lists the big
partition, and `quarry top --once` prints the hot key with its share and units.
"""
import os
import subprocess
import time

from conftest import boto3_client, quarry_bin, raw

TARGET = "DynamoDB_20120810."


def rules(ddb, table, index=None):
    kw = {"IndexName": index} if index else {}
    return ddb.describe_contributor_insights(TableName=table, **kw)["ContributorInsightsRuleList"]


def report(server, rule, **kw):
    now = time.time()
    body = {"RuleName": rule, "StartTime": now - 600, "EndTime": now + 60, "Period": 60,
            "MaxContributorCount": 3, **kw}
    r = raw(server.url, TARGET + "GetInsightRuleReport", body)
    assert r.status == 200, r.body
    return r.json()


def test_hot_keys_report_and_top(server):
    ddb = boto3_client(server.url)
    ddb.create_table(
        TableName="insights_t", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g",
                                 "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    ddb.update_contributor_insights(TableName="insights_t", ContributorInsightsAction="ENABLE")
    ddb.update_contributor_insights(TableName="insights_t", IndexName="by_g",
                                    ContributorInsightsAction="ENABLE")
    # 300 writes to one partition, 60 to cold ones; one item read 100 times.
    for i in range(300):
        ddb.put_item(TableName="insights_t",
                     Item={"pk": {"S": "hotkey"}, "sk": {"S": "s%d" % i}, "g": {"S": "hot-g"}})
    for i in range(60):
        ddb.put_item(TableName="insights_t",
                     Item={"pk": {"S": "cold%d" % i}, "sk": {"S": "0"}, "g": {"S": "g%d" % i}})
    for _ in range(100):
        ddb.get_item(TableName="insights_t", Key={"pk": {"S": "hotkey"}, "sk": {"S": "s1"}})

    names = rules(ddb, "insights_t")
    pkc = next(n for n in names if "-PKC-" in n)
    rep = report(server, pkc, Metrics=["Sum", "UniqueContributors"])
    assert rep["KeyLabels"] == ["pk"]
    assert rep["AggregationStatistic"] == "Count"
    assert rep["AggregateValue"] == 460
    top = rep["Contributors"][0]
    assert top["Keys"] == ["hotkey"]
    assert 400 <= top["ApproximateAggregateValue"] <= 400 + 460 / 64
    assert sum(d["ApproximateValue"] for d in top["Datapoints"]) == top["ApproximateAggregateValue"]
    assert len(rep["Contributors"]) == 3
    assert sum(m["Sum"] for m in rep["MetricDatapoints"]) == 460

    skc = next(n for n in names if "-SKC-" in n)
    top = report(server, skc)["Contributors"][0]
    assert top["Keys"] == ["hotkey", "s1"]
    assert top["ApproximateAggregateValue"] >= 101

    gpkc = next(n for n in rules(ddb, "insights_t", "by_g") if "-PKC-" in n)
    assert report(server, gpkc)["Contributors"][0]["Keys"] == ["hot-g"]

    # An unknown rule is CloudWatch's ResourceNotFoundException.
    r = raw(server.url, TARGET + "GetInsightRuleReport",
            {"RuleName": "DynamoDBContributorInsights-PKC-nope-1", "StartTime": 0,
             "EndTime": time.time(), "Period": 60})
    assert r.status == 400 and r.error_type == "ResourceNotFoundException"

    r = raw(server.url, TARGET + "QuarryLargeItemCollections",
            {"TableName": "insights_t", "MinItemCount": 100})
    assert r.status == 200, r.body
    large = r.json()["LargeItemCollections"]
    assert [c["Key"] for c in large] == [{"pk": {"S": "hotkey"}}]
    assert large[0]["ItemCount"] == 300

    env = dict(os.environ, AWS_ACCESS_KEY_ID="local", AWS_SECRET_ACCESS_KEY="local",
               AWS_REGION="us-east-1")
    out = subprocess.run([quarry_bin(), "top", "--endpoint", server.url, "--once", "--window",
                          "300", "insights_t"], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert any("most accessed partition keys" in ln for ln in lines), out.stdout
    hot = next(ln for ln in lines if ln.strip().startswith("hotkey ") and "%" in ln)
    share = float(hot.split()[1].rstrip("%"))
    assert 85 <= share <= 90, hot  # 400 of 460
    assert any(ln.strip().startswith("hotkey | s1") for ln in lines), out.stdout

    # Without a table, every table and index with insights on is shown.
    out = subprocess.run([quarry_bin(), "top", "--endpoint", server.url, "--once"],
                         capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    assert "insights_t / index by_g" in out.stdout and "hot-g" in out.stdout

    # Disabled: the rules and their reports are gone.
    ddb.update_contributor_insights(TableName="insights_t", ContributorInsightsAction="DISABLE")
    r = raw(server.url, TARGET + "GetInsightRuleReport",
            {"RuleName": pkc, "StartTime": 0, "EndTime": time.time(), "Period": 60})
    assert r.error_type == "ResourceNotFoundException"
