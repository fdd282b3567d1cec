"""Long work says how far it is in the server log: the backfill of a new global index over
some thousands of items logs lines of items done of the table's total with a rate, and a
last line when it is done; a restore from a backup does the same."""
import re
import time

from conftest import boto3_client

ITEMS = 6000


def load(ddb, table, n):
    for start in range(0, n, 25):
        ddb.batch_write_item(RequestItems={table: [
            {"PutRequest": {"Item": {"pk": {"S": "p%05d" % i}, "g": {"S": "g%d" % (i % 7)},
                                     "pad": {"S": "x" * 100}}}}
            for i in range(start, min(n, start + 25))]})


def wait_active(ddb, table, index, timeout=120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = ddb.describe_table(TableName=table)["Table"]
        gsis = {g["IndexName"]: g for g in d.get("GlobalSecondaryIndexes", [])}
        if index in gsis and gsis[index]["IndexStatus"] == "ACTIVE":
            return
        time.sleep(0.2)
    raise AssertionError("index %s never became ACTIVE" % index)


def test_backfill_logs_progress(start):
    srv = start("--capacity", "off")
    ddb = boto3_client(srv.url)
    ddb.create_table(TableName="Big", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    load(ddb, "Big", ITEMS)
    ddb.update_table(
        TableName="Big",
        AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
        GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    wait_active(ddb, "Big", "ByG")
    log = srv.log()
    assert "backfill of Big.ByG: started, 6000 items in the table" in log, log
    steps = re.findall(r"backfill of Big\.ByG: ([\d,]+) of 6,000 items \((\d+)%\), [\d,]+ items/s",
                       log)
    assert steps, log
    done = [int(d.replace(",", "")) for d, _ in steps]
    assert done == sorted(done) and all(0 < d < ITEMS for d in done), steps
    # a line at least at each tenth passed
    assert len(steps) >= 9, steps
    assert re.search(r"backfill of Big\.ByG: done, 6,000 items in [\d.]+ s, [\d,]+ items/s",
                     log), log
    # each line is one line of the log, stamped with the time like the others
    for line in log.splitlines():
        if "backfill of" in line:
            assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z backfill of", line), line


def test_restore_logs_progress(start):
    srv = start("--capacity", "off")
    ddb = boto3_client(srv.url)
    ddb.create_table(TableName="Src", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    load(ddb, "Src", 2000)
    arn = ddb.create_backup(TableName="Src", BackupName="before")["BackupDetails"]["BackupArn"]
    ddb.restore_table_from_backup(TargetTableName="Copy", BackupArn=arn)
    assert ddb.scan(TableName="Copy", Select="COUNT")["Count"] == 2000
    log = srv.log()
    assert re.search(r"restore of Copy: [\d,]+ of 2,000 items \(\d+%\)", log), log
    assert re.search(r"restore of Copy: done, 2,000 items in [\d.]+ s", log), log
