"""DynamoDB's export to S3 and import from S3 against `quarry serve --s3-root DIR`, with
boto3 (and raw requests for what Debian's botocore 1.29 does not know: incremental
exports). The files are read back independently of quarry's C code: the manifests as JSON
with their MD5s recomputed, the DYNAMODB_JSON data with gzip and json, the Ion data with
ion-js from npm (tests/server/ion/decode.mjs). Imports read files written here by hand
from AWS's documented formats, and files quarry exported (round trips)."""
import base64
import gzip
import hashlib
import json
import os
import shutil
import subprocess
import threading
import time
import zlib
from decimal import Decimal
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client, launch, npm_install, quarry_bin, raw

ION_DIR = Path(__file__).parent / "ion"
TARGET = "DynamoDB_20120810."


@pytest.fixture
def s3(tmp_path):
    root = tmp_path / "s3"
    (root / "bucket").mkdir(parents=True)
    return root


@pytest.fixture
def srv(start, s3):
    return start("--s3-root", str(s3))


@pytest.fixture
def ddb(srv):
    return boto3_client(srv.url)


def make_table(ddb, name="Books", pitr=True, gsi=False):
    params = dict(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                   {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST")
    if gsi:
        params["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        params["GlobalSecondaryIndexes"] = [{
            "IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    ddb.create_table(**params)
    if pitr:
        ddb.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    return "arn:aws:dynamodb:ddblocal:000000000000:table/" + name


def rich_item(i):
    """An item with every DynamoDB type, keyed pk = "p<i>", sk = i."""
    return {
        "pk": {"S": "p%d" % i}, "sk": {"N": str(i)},
        "s": {"S": "text \"quoted\"\nline two, é"}, "n": {"N": "-12.5e3"},
        "tiny": {"N": "0.000001"}, "b": {"B": bytes([0, 1, 2, i % 256])},
        "t": {"BOOL": i % 2 == 0}, "z": {"NULL": True},
        "ss": {"SS": ["a", "b b"]}, "ns": {"NS": ["1", "2.5", "100"]},
        "bs": {"BS": [b"x", b"yz"]},
        "l": {"L": [{"S": "x"}, {"N": "3"}, {"M": {"deep": {"L": []}}}]},
        "m": {"M": {"weird name!": {"S": "v"}, "k": {"BOOL": False}}},
    }


def scan_all(ddb, table):
    items, kw = [], {"TableName": table}
    while True:
        page = ddb.scan(**kw)
        items += page["Items"]
        if "LastEvaluatedKey" not in page:
            return items
        kw["ExclusiveStartKey"] = page["LastEvaluatedKey"]


def canon(av):
    """An AttributeValue in a form where equal values compare equal: numbers as Decimal,
    binaries as bytes, sets as sorted lists."""
    (t, v), = av.items()
    if t == "N":
        return ("N", Decimal(v.replace("d", "E").replace("D", "E")))
    if t == "B":
        return ("B", base64.b64decode(v))
    if t == "NS":
        return ("NS", tuple(sorted(Decimal(x.replace("d", "E")) for x in v)))
    if t == "BS":
        return ("BS", tuple(sorted(base64.b64decode(x) for x in v)))
    if t == "SS":
        return ("SS", tuple(sorted(v)))
    if t == "L":
        return ("L", tuple(canon(x) for x in v))
    if t == "M":
        return ("M", tuple(sorted((k, canon(x)) for k, x in v.items())))
    return (t, v)


def canon_item(item):
    return tuple(sorted((k, canon(v)) for k, v in item.items()))


def boto_item(item):
    """boto3's client returns B values as bytes; the files hold base64 text."""
    def conv(av):
        (t, v), = av.items()
        if t == "B":
            return {"B": base64.b64encode(v).decode()}
        if t == "BS":
            return {"BS": [base64.b64encode(x).decode() for x in v]}
        if t == "L":
            return {"L": [conv(x) for x in v]}
        if t == "M":
            return {"M": {k: conv(x) for k, x in v.items()}}
        return {t: v}
    return {k: conv(v) for k, v in item.items()}


def table_set(ddb, table):
    return sorted(canon_item(boto_item(i)) for i in scan_all(ddb, table))


def wait(describe, member, status):
    """Asks describe() until the job it describes is no longer IN_PROGRESS, as a waiter
    does; the description then."""
    deadline = time.monotonic() + 60
    while True:
        d = describe()[member]
        if d[status] != "IN_PROGRESS" or time.monotonic() > deadline:
            return d
        time.sleep(0.02)


def wait_export(ddb, arn):
    return wait(lambda: ddb.describe_export(ExportArn=arn), "ExportDescription", "ExportStatus")


def wait_import(ddb, arn):
    return wait(lambda: ddb.describe_import(ImportArn=arn), "ImportTableDescription",
                "ImportStatus")


def export(ddb, arn, **kw):
    r = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", **kw)
    d = r["ExportDescription"]
    assert d["ExportStatus"] == "IN_PROGRESS" and "EndTime" not in d
    assert d["ExportArn"].startswith(arn + "/export/")
    return d, wait_export(ddb, d["ExportArn"])


def md5(data):
    return hashlib.md5(data).digest()


def test_list_exports_is_newest_first_in_pages(ddb, s3):
    arn = make_table(ddb)
    arns = [export(ddb, arn)[1]["ExportArn"] for _ in range(3)]
    page = ddb.list_exports(TableArn=arn, MaxResults=2)
    assert [e["ExportArn"] for e in page["ExportSummaries"]] == arns[::-1][:2]
    rest = ddb.list_exports(TableArn=arn, MaxResults=2, NextToken=page["NextToken"])
    assert [e["ExportArn"] for e in rest["ExportSummaries"]] == arns[:1]
    assert "NextToken" not in rest


def read_export(s3, done):
    """Checks an export's files against DynamoDB's documented layout and returns
    (summary, [(manifest entry, decompressed bytes)])."""
    bucket = s3 / "bucket"
    export_id = done["ExportArn"].rsplit("/", 1)[1]
    prefix = done.get("S3Prefix")
    base = (prefix.rstrip("/") + "/" if prefix else "") + "AWSDynamoDB/"
    folder = bucket / base / export_id
    assert (folder / "_started").read_bytes() == b""
    summary_bytes = (folder / "manifest-summary.json").read_bytes()
    files_bytes = (folder / "manifest-files.json").read_bytes()
    assert (folder / "manifest-summary.checksum").read_text() == hashlib.md5(summary_bytes).hexdigest()
    assert (folder / "manifest-files.checksum").read_text() == hashlib.md5(files_bytes).hexdigest()
    # DynamoDB's exports also hold NAME.md5: the MD5 in base64 (24 bytes).
    assert (folder / "manifest-summary.md5").read_text() == base64.b64encode(md5(summary_bytes)).decode()
    assert (folder / "manifest-files.md5").read_text() == base64.b64encode(md5(files_bytes)).decode()
    assert sorted(p.name for p in folder.iterdir()) == [
        "_started", "data", "manifest-files.checksum", "manifest-files.json", "manifest-files.md5",
        "manifest-summary.checksum", "manifest-summary.json", "manifest-summary.md5"]
    assert done["ExportManifest"] == base + export_id + "/manifest-summary.json"
    summary = json.loads(summary_bytes)
    for field in ("version", "exportArn", "startTime", "endTime", "tableArn", "tableId",
                  "s3Bucket", "s3Prefix", "s3SseAlgorithm", "s3SseKmsKeyId",
                  "manifestFilesS3Key", "billedSizeBytes", "itemCount", "outputFormat"):
        assert field in summary, field
    assert summary["version"] == "2020-06-30"
    assert summary["exportArn"] == done["ExportArn"]
    assert summary["tableArn"] == done["TableArn"]
    assert summary["tableId"] == done["TableId"]
    assert summary["s3Bucket"] == "bucket"
    assert summary["s3Prefix"] == prefix
    assert summary["outputFormat"] == done["ExportFormat"]
    assert summary["manifestFilesS3Key"] == base + export_id + "/manifest-files.json"
    assert summary["startTime"].endswith("Z") and "T" in summary["startTime"]
    files = []
    for line in files_bytes.decode().splitlines():
        entry = json.loads(line)
        assert set(entry) == {"itemCount", "md5Checksum", "etag", "dataFileS3Key"}
        data = (bucket / entry["dataFileS3Key"]).read_bytes()
        assert entry["md5Checksum"] == base64.b64encode(md5(data)).decode()
        assert entry["etag"] == hashlib.md5(md5(data)).hexdigest() + "-1"
        ext = ".ion.gz" if done["ExportFormat"] == "ION" else ".json.gz"
        assert entry["dataFileS3Key"].endswith(ext)
        plain = gzip.decompress(data)
        assert plain.count(b"\n") == entry["itemCount"]
        files.append((entry, plain))
    assert sum(e["itemCount"] for e, _ in files) == summary["itemCount"] == done["ItemCount"]
    return summary, files


def json_lines(files):
    return [json.loads(line) for _, plain in files for line in plain.decode().splitlines()]


@pytest.fixture(scope="session")
def ion_reader():
    if shutil.which("npm") is None or shutil.which("node") is None:
        pytest.skip("npm is not installed")
    npm_install(ION_DIR)

    def read(s3, entry):
        out = subprocess.run(["node", str(ION_DIR / "decode.mjs"),
                              str(s3 / "bucket" / entry["dataFileS3Key"])],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return [json.loads(line) for line in out.stdout.splitlines()]
    return read


# ---- exports ----

def test_full_export_in_dynamodb_json_is_the_documented_layout(ddb, s3, srv):
    arn = make_table(ddb)
    for i in range(30):
        ddb.put_item(TableName="Books", Item=rich_item(i))
    started, done = export(ddb, arn, S3Prefix="exports/2026", ExportFormat="DYNAMODB_JSON",
                           ClientToken="full-json-1")
    assert done["ExportStatus"] == "COMPLETED"
    raw_done = raw(srv.url, TARGET + "DescribeExport", {"ExportArn": done["ExportArn"]}).json()
    assert raw_done["ExportDescription"]["ExportType"] == "FULL_EXPORT"  # botocore 1.29 drops it
    assert done["ItemCount"] == 30 and done["BilledSizeBytes"] > 0
    assert done["S3Prefix"] == "exports/2026" and done["S3SseAlgorithm"] == "AES256"
    summary, files = read_export(s3, done)
    assert summary["itemCount"] == 30
    lines = json_lines(files)
    assert all(set(line) == {"Item"} for line in lines)
    assert sorted(canon_item(line["Item"]) for line in lines) == table_set(ddb, "Books")
    listed = ddb.list_exports(TableArn=arn)["ExportSummaries"]
    assert {"ExportArn": done["ExportArn"], "ExportStatus": "COMPLETED"} in listed


def test_ion_export_reads_back_with_ion_js(ddb, s3, ion_reader):
    arn = make_table(ddb)
    for i in range(12):
        ddb.put_item(TableName="Books", Item=rich_item(i))
    _, done = export(ddb, arn, ExportFormat="ION")
    assert done["ExportStatus"] == "COMPLETED" and done["ExportFormat"] == "ION"
    summary, files = read_export(s3, done)
    assert summary["outputFormat"] == "ION"
    for _, plain in files:
        for line in plain.decode().splitlines():
            assert line.startswith("$ion_1_0 {Item:")
    decoded = [v for entry, _ in files for v in ion_reader(s3, entry)]
    assert all(set(v) == {"Item"} for v in decoded)
    assert sorted(canon_item(v["Item"]["M"]) for v in decoded) == table_set(ddb, "Books")
    # DynamoDB's annotations and types, as its documentation shows them.
    text = b"".join(p for _, p in files).decode()
    assert "$dynamodb_SS::[" in text and "$dynamodb_NS::[" in text and "$dynamodb_BS::[{{" in text
    assert "sk:0." in text or "sk:0," in text


def test_export_at_a_past_time_is_that_snapshot(ddb, s3):
    arn = make_table(ddb)
    for i in range(10):
        ddb.put_item(TableName="Books", Item={"pk": {"S": "p%d" % i}, "sk": {"N": "1"},
                                              "v": {"S": "before"}})
    # botocore sends ExportTime in whole seconds: the snapshot is at the next second.
    time.sleep(1.05 - time.time() % 1)
    when = float(int(time.time()))
    expected = table_set(ddb, "Books")
    ddb.delete_item(TableName="Books", Key={"pk": {"S": "p1"}, "sk": {"N": "1"}})
    ddb.put_item(TableName="Books", Item={"pk": {"S": "p2"}, "sk": {"N": "1"}, "v": {"S": "after"}})
    ddb.put_item(TableName="Books", Item={"pk": {"S": "new"}, "sk": {"N": "1"}})
    _, done = export(ddb, arn, ExportTime=when)
    assert done["ExportStatus"] == "COMPLETED"
    assert abs(done["ExportTime"].timestamp() - when) < 0.01
    _, files = read_export(s3, done)
    assert sorted(canon_item(line["Item"]) for line in json_lines(files)) == expected


def test_export_reads_one_snapshot_while_the_table_takes_writes(ddb, s3, srv):
    arn = make_table(ddb)
    for i in range(200):
        ddb.put_item(TableName="Books", Item={"pk": {"S": "seed%d" % i}, "sk": {"N": "0"},
                                              "pad": {"S": "x" * 500}})
    stop = threading.Event()
    written = []

    def writer():
        c = boto3_client(srv.url)
        n = 0
        while not stop.is_set() and n < 5000:
            c.put_item(TableName="Books", Item={"pk": {"S": "w"}, "sk": {"N": str(n)}})
            written.append(n)
            n += 1

    t = threading.Thread(target=writer)
    t.start()
    try:
        while len(written) < 20:
            time.sleep(0.01)
        _, done = export(ddb, arn)
    finally:
        stop.set()
        t.join()
    assert done["ExportStatus"] == "COMPLETED"
    _, files = read_export(s3, done)
    items = [line["Item"] for line in json_lines(files)]
    seq = sorted(int(i["sk"]["N"]) for i in items if i["pk"]["S"] == "w")
    # Written one after another, so one moment's view holds a prefix of them, no gaps.
    assert seq == list(range(len(seq))) and len(seq) >= 20
    assert sum(1 for i in items if i["pk"]["S"].startswith("seed")) == 200


def test_incremental_export_lists_changes_with_images(ddb, s3, srv, ion_reader):
    arn = make_table(ddb)
    key = lambda p: {"pk": {"S": p}, "sk": {"N": "1"}}
    for p in ("keep", "upd", "gone", "later"):
        ddb.put_item(TableName="Books", Item=dict(key(p), v={"S": "v1"}))
    time.sleep(0.05)
    start = time.time()
    time.sleep(0.05)
    ddb.put_item(TableName="Books", Item=dict(key("upd"), v={"S": "v2"}))
    ddb.delete_item(TableName="Books", Key=key("gone"))
    ddb.put_item(TableName="Books", Item=dict(key("ins"), v={"S": "new"}))
    ddb.put_item(TableName="Books", Item=dict(key("flash"), v={"S": "x"}))
    ddb.delete_item(TableName="Books", Key=key("flash"))  # in and out: no change
    time.sleep(0.05)
    end = time.time()
    time.sleep(0.05)
    ddb.put_item(TableName="Books", Item=dict(key("later"), v={"S": "v2"}))
    ddb.put_item(TableName="Books", Item=dict(key("upd"), v={"S": "v3"}))
    r = raw(srv.url, TARGET + "ExportTableToPointInTime", {
        "TableArn": arn, "S3Bucket": "bucket", "S3Prefix": "inc", "ExportType": "INCREMENTAL_EXPORT",
        "IncrementalExportSpecification": {"ExportFromTime": start, "ExportToTime": end,
                                           "ExportViewType": "NEW_AND_OLD_IMAGES"}})
    assert r.status == 200, r.body
    d = r.json()["ExportDescription"]
    assert d["ExportType"] == "INCREMENTAL_EXPORT" and d["ExportStatus"] == "IN_PROGRESS"
    done = wait(lambda: raw(srv.url, TARGET + "DescribeExport", {"ExportArn": d["ExportArn"]}).json(),
                "ExportDescription", "ExportStatus")
    assert done["ExportStatus"] == "COMPLETED"
    assert done["IncrementalExportSpecification"]["ExportViewType"] == "NEW_AND_OLD_IMAGES"
    folder = s3 / "bucket" / "inc" / "AWSDynamoDB" / d["ExportArn"].rsplit("/", 1)[1]
    summary = json.loads((folder / "manifest-summary.json").read_text())
    assert summary["exportType"] == "INCREMENTAL_EXPORT"
    assert summary["outputView"] == "NEW_AND_OLD_IMAGES" and summary["itemCount"] == 3
    lines = []
    for entry in map(json.loads, (folder / "manifest-files.json").read_text().splitlines()):
        assert entry["dataFileS3Key"].startswith("inc/AWSDynamoDB/data/")
        plain = gzip.decompress((s3 / "bucket" / entry["dataFileS3Key"]).read_bytes())
        assert base64.b64encode(md5((s3 / "bucket" / entry["dataFileS3Key"]).read_bytes())).decode() \
            == entry["md5Checksum"]
        lines += [json.loads(x) for x in plain.decode().splitlines()]
    by_key = {line["Keys"]["pk"]["S"]: line for line in lines}
    assert set(by_key) == {"upd", "gone", "ins"}
    for line in lines:
        micros = int(line["Metadata"]["WriteTimestampMicros"]["N"])
        assert start * 1e6 - 1000 <= micros <= end * 1e6 + 1000
        assert line["Keys"] == {"pk": line["Keys"]["pk"], "sk": {"N": "1"}}
    assert by_key["upd"]["NewImage"]["v"] == {"S": "v2"}
    assert by_key["upd"]["OldImage"]["v"] == {"S": "v1"}
    assert "NewImage" not in by_key["gone"] and by_key["gone"]["OldImage"]["v"] == {"S": "v1"}
    assert by_key["ins"]["NewImage"]["v"] == {"S": "new"} and "OldImage" not in by_key["ins"]
    # NEW_IMAGE: the same changes, without the old images.
    r = raw(srv.url, TARGET + "ExportTableToPointInTime", {
        "TableArn": arn, "S3Bucket": "bucket", "S3Prefix": "new", "ExportType": "INCREMENTAL_EXPORT",
        "IncrementalExportSpecification": {"ExportFromTime": start, "ExportToTime": end,
                                           "ExportViewType": "NEW_IMAGE"}})
    new_arn = r.json()["ExportDescription"]["ExportArn"]
    wait(lambda: raw(srv.url, TARGET + "DescribeExport", {"ExportArn": new_arn}).json(),
         "ExportDescription", "ExportStatus")
    folder = s3 / "bucket" / "new" / "AWSDynamoDB" / new_arn.rsplit("/", 1)[1]
    entries = [json.loads(x) for x in (folder / "manifest-files.json").read_text().splitlines()]
    new_lines = [json.loads(x) for e in entries for x in
                 gzip.decompress((s3 / "bucket" / e["dataFileS3Key"]).read_bytes()).decode().splitlines()]
    assert sorted((x["Keys"]["pk"]["S"], x.get("NewImage", {}).get("v", {}).get("S")) for x in new_lines) \
        == [("gone", None), ("ins", "new"), ("upd", "v2")]
    assert all("OldImage" not in x for x in new_lines)
    # ION: the same lines, read with ion-js.
    r = raw(srv.url, TARGET + "ExportTableToPointInTime", {
        "TableArn": arn, "S3Bucket": "bucket", "S3Prefix": "ion", "ExportType": "INCREMENTAL_EXPORT",
        "ExportFormat": "ION", "IncrementalExportSpecification": {"ExportFromTime": start,
                                                                  "ExportToTime": end}})
    ion_arn = r.json()["ExportDescription"]["ExportArn"]
    wait(lambda: raw(srv.url, TARGET + "DescribeExport", {"ExportArn": ion_arn}).json(),
         "ExportDescription", "ExportStatus")
    folder = s3 / "bucket" / "ion" / "AWSDynamoDB" / ion_arn.rsplit("/", 1)[1]
    entries = [json.loads(x) for x in (folder / "manifest-files.json").read_text().splitlines()]
    assert all(e["dataFileS3Key"].endswith(".ion.gz") for e in entries)
    decoded = {v["Keys"]["M"]["pk"]["S"]: v for e in entries for v in ion_reader(s3, e)}
    assert set(decoded) == {"upd", "gone", "ins"}
    assert decoded["upd"]["NewImage"]["M"]["v"] == {"S": "v2"}
    assert decoded["upd"]["OldImage"]["M"]["v"] == {"S": "v1"}
    assert "NewImage" not in decoded["gone"]
    micros = Decimal(decoded["ins"]["Metadata"]["M"]["WriteTimestampMicros"]["N"])
    assert start * 1e6 - 1000 <= micros <= end * 1e6 + 1000
    for bad in ({"ExportFromTime": end, "ExportToTime": start},
                {"ExportFromTime": start - 2 * 86400, "ExportToTime": end},
                {"ExportToTime": end}):
        r = raw(srv.url, TARGET + "ExportTableToPointInTime", {
            "TableArn": arn, "S3Bucket": "bucket", "ExportType": "INCREMENTAL_EXPORT",
            "IncrementalExportSpecification": bad})
        assert r.error_type == "ValidationException", (bad, r.body)
    listed = raw(srv.url, TARGET + "ListExports", {"TableArn": arn}).json()["ExportSummaries"]
    assert {"ExportArn": d["ExportArn"], "ExportStatus": "COMPLETED",
            "ExportType": "INCREMENTAL_EXPORT"} in listed


def test_export_errors_are_dynamodbs(ddb, s3, srv, start):
    arn = make_table(ddb, pitr=False)
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket")
    assert e.value.response["Error"]["Code"] == "PointInTimeRecoveryUnavailableException"
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(
            TableArn="arn:aws:dynamodb:ddblocal:000000000000:table/Nope", S3Bucket="bucket")
    assert e.value.response["Error"]["Code"] == "TableNotFoundException"
    ddb.update_continuous_backups(
        TableName="Books", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket",
                                          ExportTime=time.time() - 3600)
    assert e.value.response["Error"]["Code"] == "InvalidExportTimeException"
    # A bucket that does not exist: the export fails as DynamoDB's does.
    r = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="no-such-bucket")
    d = wait_export(ddb, r["ExportDescription"]["ExportArn"])
    assert d["ExportStatus"] == "FAILED" and d["FailureCode"] == "S3NoSuchBucket"
    assert "no-such-bucket" in d["FailureMessage"]
    # A folder that cannot be written (root ignores modes: a file where a folder must be).
    (s3 / "bucket" / "blocked").write_text("a file")
    r = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", S3Prefix="blocked")
    d = wait_export(ddb, r["ExportDescription"]["ExportArn"])
    assert d["ExportStatus"] == "FAILED" and d["FailureCode"] == "S3AccessDenied"
    assert "blocked/AWSDynamoDB" in d["FailureMessage"]
    assert (s3 / "bucket" / "blocked").read_text() == "a file"
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", S3Prefix="../out")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="Bad_Bucket")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ddb.describe_export(ExportArn=arn + "/export/01234567890123-abcdef01")
    assert e.value.response["Error"]["Code"] == "ExportNotFoundException"
    # ClientToken: a repeat answers the first export; other parameters conflict.
    a = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ClientToken="tok")
    b = ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ClientToken="tok")
    assert a["ExportDescription"]["ExportArn"] == b["ExportDescription"]["ExportArn"]
    with pytest.raises(ClientError) as e:
        ddb.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ClientToken="tok",
                                          ExportFormat="ION")
    assert e.value.response["Error"]["Code"] == "ExportConflictException"
    # Without --s3-root there is no S3 to export to.
    bare = boto3_client(start().url)
    make_table(bare)
    with pytest.raises(ClientError) as e:
        bare.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket")
    assert e.value.response["Error"]["Code"] == "ValidationException"
    assert "--s3-root" in e.value.response["Error"]["Message"]


# ---- imports ----

def import_table(ddb, fmt, prefix, params, compression="NONE", token=None, options=None):
    kw = dict(S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": prefix}, InputFormat=fmt,
              InputCompressionType=compression, TableCreationParameters=params)
    if token:
        kw["ClientToken"] = token
    if options:
        kw["InputFormatOptions"] = options
    d = ddb.import_table(**kw)["ImportTableDescription"]
    assert d["ImportStatus"] == "IN_PROGRESS" and "EndTime" not in d
    return d, wait_import(ddb, d["ImportArn"])


def error_log(s3, final):
    """Where quarry writes an import's CloudWatch error entries (DescribeImport names it as
    QuarryErrorLog, which botocore 1.29 does not pass on)."""
    return s3 / "_aws-dynamodb-imports" / final["ImportArn"].rsplit("/", 1)[1] / "error.log"


def params(name, gsi=False):
    p = {"TableName": name,
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                  {"AttributeName": "sk", "AttributeType": "N"}],
         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                       {"AttributeName": "sk", "KeyType": "RANGE"}],
         "BillingMode": "PAY_PER_REQUEST"}
    if gsi:
        p["AttributeDefinitions"].append({"AttributeName": "g", "AttributeType": "S"})
        p["GlobalSecondaryIndexes"] = [{
            "IndexName": "byG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"}}]
    return p


@pytest.mark.parametrize("fmt", ["DYNAMODB_JSON", "ION"])
def test_round_trip_export_then_import_is_the_same_table(ddb, s3, fmt):
    arn = make_table(ddb, gsi=True)
    for i in range(250):
        item = rich_item(i)
        if i % 3 == 0:
            item["g"] = {"S": "g%d" % (i % 7)}
        ddb.put_item(TableName="Books", Item=item)
    _, done = export(ddb, arn, ExportFormat=fmt)
    export_id = done["ExportArn"].rsplit("/", 1)[1]
    d, final = import_table(ddb, fmt, "AWSDynamoDB/%s/data/" % export_id,
                            params("Copy", gsi=True), compression="GZIP")
    assert final["ImportStatus"] == "COMPLETED", final
    assert final["ImportedItemCount"] == 250 and final["ProcessedItemCount"] == 250
    assert final["ErrorCount"] == 0 and final["ProcessedSizeBytes"] > 0
    assert final["TableArn"].endswith(":table/Copy") and "TableId" in final
    assert ddb.describe_table(TableName="Copy")["Table"]["TableStatus"] == "ACTIVE"
    assert table_set(ddb, "Copy") == table_set(ddb, "Books")
    q = ddb.query(TableName="Copy", IndexName="byG", KeyConditionExpression="g = :g",
                  ExpressionAttributeValues={":g": {"S": "g0"}})
    q0 = ddb.query(TableName="Books", IndexName="byG", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "g0"}})
    assert q["Count"] == q0["Count"] > 0
    listed = ddb.list_imports(TableArn=final["TableArn"])["ImportSummaryList"]
    assert [s["ImportArn"] for s in listed] == [d["ImportArn"]]
    assert listed[0]["ImportStatus"] == "COMPLETED" and listed[0]["InputFormat"] == fmt
    # A prefix over the whole export reads its data files, not its manifests.
    _, whole = import_table(ddb, fmt, "AWSDynamoDB/%s/" % export_id, params("Whole", gsi=True),
                            compression="GZIP")
    assert whole["ImportStatus"] == "COMPLETED" and whole["ErrorCount"] == 0, whole
    assert table_set(ddb, "Whole") == table_set(ddb, "Books")


DOC_JSON = ('{"Item":{"Authors":{"SS":["Author1","Author2"]},"Dimensions":{"S":"8.5 x 11.0 x 1.5"},'
            '"ISBN":{"S":"333-3333333333"},"Id":{"N":"103"},"InPublication":{"BOOL":false},'
            '"PageCount":{"N":"600"},"Price":{"N":"2000"},"ProductCategory":{"S":"Book"},'
            '"Title":{"S":"Book 103 Title"}}}\n')
DOC_ION = """$ion_1_0 {
    Item:{
        Authors:$dynamodb_SS::["Author1","Author2"],
        Dimensions:"8.5 x 11.0 x 1.5",
        ISBN:"333-3333333333",
        Id:103.,
        InPublication:false,
        PageCount:6d2,
        Price:2d3,
        ProductCategory:"Book",
        Title:"Book 103 Title"
    }
}
"""
DOC_ITEM = {"Authors": {"SS": ["Author1", "Author2"]}, "Dimensions": {"S": "8.5 x 11.0 x 1.5"},
            "ISBN": {"S": "333-3333333333"}, "Id": {"N": "103"}, "InPublication": {"BOOL": False},
            "PageCount": {"N": "600"}, "Price": {"N": "2000"}, "ProductCategory": {"S": "Book"},
            "Title": {"S": "Book 103 Title"}}
ID_PARAMS = {"TableName": "Doc", "AttributeDefinitions": [{"AttributeName": "Id", "AttributeType": "N"}],
             "KeySchema": [{"AttributeName": "Id", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}


def compress(data, how):
    if how == "GZIP":
        return gzip.compress(data)
    if how == "ZSTD":
        return subprocess.run(["zstd", "-q", "-c"], input=data, capture_output=True,
                              check=True).stdout
    return data


DOC_JSON_PRINTED = json.dumps({"Item": DOC_ITEM}, indent=4) + "\n"  # as the guide prints it


@pytest.mark.parametrize("fmt,text", [("DYNAMODB_JSON", DOC_JSON), ("DYNAMODB_JSON", DOC_JSON_PRINTED),
                                      ("ION", DOC_ION)])
@pytest.mark.parametrize("how", ["NONE", "GZIP", "ZSTD"])
def test_documented_examples_import(ddb, s3, fmt, text, how):
    folder = s3 / "bucket" / "doc"
    folder.mkdir()
    (folder / "part-1").write_bytes(compress(text.encode(), how))
    _, final = import_table(ddb, fmt, "doc/", ID_PARAMS, compression=how)
    assert final["ImportStatus"] == "COMPLETED", final
    assert final["ImportedItemCount"] == 1 and final["ErrorCount"] == 0
    got = ddb.get_item(TableName="Doc", Key={"Id": {"N": "103"}})["Item"]
    assert canon_item(boto_item(got)) == canon_item(DOC_ITEM)


def test_csv_import_with_header_and_delimiter_options(ddb, s3):
    folder = s3 / "bucket" / "csv"
    folder.mkdir()
    (folder / "a.csv").write_text('pk,sk,name,note\n"p1",1,"Smith, J","say ""hi"""\np2,2,bob,\n')
    (folder / "b.csv").write_bytes(b"\xef\xbb\xbfpk,sk,name,note\r\np3,3,carol,multi\r\n")  # BOM, CRLF
    _, final = import_table(ddb, "CSV", "csv/", params("Csv"))
    assert final["ImportStatus"] == "COMPLETED" and final["ImportedItemCount"] == 3
    got = {i["pk"]["S"]: i for i in scan_all(ddb, "Csv")}
    assert got["p1"] == {"pk": {"S": "p1"}, "sk": {"N": "1"}, "name": {"S": "Smith, J"},
                         "note": {"S": 'say "hi"'}}
    assert got["p2"] == {"pk": {"S": "p2"}, "sk": {"N": "2"}, "name": {"S": "bob"}}
    assert got["p3"] == {"pk": {"S": "p3"}, "sk": {"N": "3"}, "name": {"S": "carol"},
                         "note": {"S": "multi"}}
    folder = s3 / "bucket" / "tsv"
    folder.mkdir()
    (folder / "x.tsv").write_text("p9\t9\tnine\n")
    _, final = import_table(ddb, "CSV", "tsv/", params("Tsv"),
                            options={"Csv": {"Delimiter": "\t", "HeaderList": ["pk", "sk", "word"]}})
    assert final["ImportedItemCount"] == 1, final
    assert final["InputFormatOptions"]["Csv"]["HeaderList"] == ["pk", "sk", "word"]
    assert scan_all(ddb, "Tsv") == [{"pk": {"S": "p9"}, "sk": {"N": "9"}, "word": {"S": "nine"}}]


def test_bad_items_are_counted_and_logged_and_the_rest_imported(ddb, s3):
    folder = s3 / "bucket" / "bad"
    folder.mkdir()
    good = [json.dumps({"Item": {"pk": {"S": "g%d" % i}, "sk": {"N": str(i)}}}) for i in range(5)]
    lines = [good[0], "{not json", good[1],
             json.dumps({"Item": {"pk": {"S": "x"}, "sk": {"N": "abc"}}}),  # not a number
             json.dumps({"Item": {"pk": {"N": "1"}, "sk": {"N": "1"}}}),    # key of the wrong type
             json.dumps({"Item": {"sk": {"N": "1"}}}),                       # no partition key
             json.dumps({"NotItem": {}}), good[2]]
    (folder / "one.json").write_text("\n".join(lines) + "\n")
    # A gzip'd object cut in the middle: the lines before the cut are read.
    body = "".join(json.dumps({"Item": {"pk": {"S": "g%d" % (3 + i % 2)}, "sk": {"N": str(3 + i % 2)},
                                         "v": {"S": os.urandom(16).hex()}}}) + "\n"
                   for i in range(400))
    whole = gzip.compress(body.encode())
    (folder / "two.json.gz").write_bytes(whole[: len(whole) // 2])
    _, final = import_table(ddb, "DYNAMODB_JSON", "bad/one", params("Bad"))
    assert final["ImportStatus"] == "COMPLETED", final
    assert final["ErrorCount"] == 5 and final["ImportedItemCount"] == 3
    assert final["ProcessedItemCount"] == 8
    log = error_log(s3, final).read_text().splitlines()
    entries = [json.loads(x) for x in log]
    assert [e["itemS3Pointer"]["itemIndex"] for e in entries] == [1, 3, 4, 5, 6]
    assert all(e["itemS3Pointer"] == {"bucket": "bucket", "key": "bad/one.json",
                                      "itemIndex": e["itemS3Pointer"]["itemIndex"]} for e in entries)
    assert all(e["importArn"] == final["ImportArn"] and e["errorMessages"] for e in entries)
    assert {i["pk"]["S"] for i in scan_all(ddb, "Bad")} == {"g0", "g1", "g2"}
    cut = zlib.decompressobj(16 + 15).decompress(whole[: len(whole) // 2])
    complete = cut.count(b"\n")
    _, final = import_table(ddb, "DYNAMODB_JSON", "bad/two", params("Cut"), compression="GZIP")
    assert final["ImportStatus"] == "COMPLETED" and final["ErrorCount"] == 1, final
    assert final["ImportedItemCount"] == complete > 0  # g3 and g4, over and over
    assert final["ProcessedItemCount"] == complete + 1
    assert {i["pk"]["S"] for i in scan_all(ddb, "Cut")} == {"g3", "g4"}
    assert "GZIP" in json.loads(error_log(s3, final).read_text())["errorMessages"][0]
    # Not gzip at all, read as gzip: one error for the object, nothing imported.
    (folder / "three.gz").write_bytes(b"plain text, not gzip\n")
    _, final = import_table(ddb, "DYNAMODB_JSON", "bad/three", params("NotGz"), compression="GZIP")
    assert final["ImportStatus"] == "COMPLETED" and final["ErrorCount"] == 1
    assert final["ImportedItemCount"] == 0
    # Ion of the wrong types: a struct expected, a set of the wrong members, a timestamp.
    (folder / "four.ion").write_text(
        '$ion_1_0 [1,2]\n$ion_1_0 {Item:{pk:"a",sk:1.,s:$dynamodb_SS::[1.]}}\n'
        '$ion_1_0 {Item:{pk:"b",sk:2.,t:2007-02-23T12:14Z}}\n$ion_1_0 {Item:{pk:"c",sk:3.}}\n')
    _, final = import_table(ddb, "ION", "bad/four", params("BadIon"))
    assert final["ErrorCount"] == 3 and final["ImportedItemCount"] == 1, final


def test_failed_imports_leave_no_table(ddb, s3):
    (s3 / "bucket" / "loop").mkdir()
    os.symlink("..", s3 / "bucket" / "loop" / "up")  # a folder link is not followed
    for bucket, prefix, code in (("no-such-bucket", "", "S3NoSuchBucket"),
                                 ("bucket", "nothing/here", "S3NoSuchKey"),
                                 ("bucket", "loop/", "S3NoSuchKey")):
        r = ddb.import_table(S3BucketSource={"S3Bucket": bucket, "S3KeyPrefix": prefix},
                             InputFormat="DYNAMODB_JSON", TableCreationParameters=params("Gone"))
        d = wait_import(ddb, r["ImportTableDescription"]["ImportArn"])
        assert d["ImportStatus"] == "FAILED" and d["FailureCode"] == code, d
        assert d["FailureMessage"]
        with pytest.raises(ClientError) as e:
            ddb.describe_table(TableName="Gone")
        assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
    make_table(ddb, "Taken", pitr=False)
    (s3 / "bucket" / "one.json").write_text(DOC_JSON)
    with pytest.raises(ClientError) as e:
        ddb.import_table(S3BucketSource={"S3Bucket": "bucket"}, InputFormat="DYNAMODB_JSON",
                         TableCreationParameters=dict(params("x"), TableName="Taken"))
    assert e.value.response["Error"]["Code"] == "ResourceInUseException"
    with pytest.raises(ClientError) as e:  # KeySchema naming an undefined attribute
        bad = params("BadKeys")
        bad["KeySchema"][0]["AttributeName"] = "missing"
        ddb.import_table(S3BucketSource={"S3Bucket": "bucket"}, InputFormat="DYNAMODB_JSON",
                         TableCreationParameters=bad)
    assert e.value.response["Error"]["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ddb.describe_table(TableName="BadKeys")
    with pytest.raises(ClientError) as e:
        ddb.describe_import(ImportArn="arn:aws:dynamodb:ddblocal:000000000000:table/x/import/1")
    assert e.value.response["Error"]["Code"] == "ImportNotFoundException"


def test_import_client_token_is_idempotent(ddb, s3):
    (s3 / "bucket" / "one.json").write_text(DOC_JSON)
    a, _ = import_table(ddb, "DYNAMODB_JSON", "one", ID_PARAMS, token="same")
    b = ddb.import_table(S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "one"},
                         InputFormat="DYNAMODB_JSON", InputCompressionType="NONE",
                         TableCreationParameters=ID_PARAMS, ClientToken="same")
    assert b["ImportTableDescription"]["ImportArn"] == a["ImportArn"]
    with pytest.raises(ClientError) as e:
        ddb.import_table(S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "two"},
                         InputFormat="DYNAMODB_JSON", TableCreationParameters=ID_PARAMS,
                         ClientToken="same")
    assert e.value.response["Error"]["Code"] == "ImportConflictException"
    assert len(ddb.list_imports()["ImportSummaryList"]) == 1


def test_concurrent_requests_with_one_token_start_one_job(ddb, s3, srv):
    (s3 / "bucket" / "one.json").write_text(DOC_JSON)
    arn = make_table(ddb)
    time.sleep(1.05 - time.time() % 1)  # botocore sends whole seconds, after PITR began
    when = int(time.time())
    answers = {"import": [], "export": []}

    def ask(kind):
        c = boto3_client(srv.url)
        if kind == "import":
            r = c.import_table(S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "one"},
                               InputFormat="DYNAMODB_JSON", TableCreationParameters=ID_PARAMS,
                               ClientToken="race")
            answers[kind].append(r["ImportTableDescription"]["ImportArn"])
        else:
            r = c.export_table_to_point_in_time(TableArn=arn, S3Bucket="bucket", ClientToken="race",
                                                ExportTime=when)
            answers[kind].append(r["ExportDescription"]["ExportArn"])

    threads = [threading.Thread(target=ask, args=(k,)) for k in ("import", "export") * 6]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(answers["import"]) == 6 and len(set(answers["import"])) == 1
    assert len(answers["export"]) == 6 and len(set(answers["export"])) == 1
    assert len(ddb.list_imports()["ImportSummaryList"]) == 1
    assert len(ddb.list_exports()["ExportSummaries"]) == 1
    assert wait_import(ddb, answers["import"][0])["ImportStatus"] == "COMPLETED"


def test_import_and_export_records_outlive_a_restart(start, s3, tmp_path):
    data = tmp_path / "keep"
    srv = start("--s3-root", str(s3), data=data)
    ddb = boto3_client(srv.url)
    arn = make_table(ddb)
    ddb.put_item(TableName="Books", Item=rich_item(1))
    _, done = export(ddb, arn)
    assert srv.stop() == 0
    srv = start("--s3-root", str(s3), data=data)
    ddb = boto3_client(srv.url)
    again = ddb.describe_export(ExportArn=done["ExportArn"])["ExportDescription"]
    assert again["ExportStatus"] == "COMPLETED" and again["ItemCount"] == 1


def test_a_server_killed_mid_import_leaves_no_table(start, s3, tmp_path):
    data = tmp_path / "killed"
    folder = s3 / "bucket" / "big"
    folder.mkdir()
    lines = "".join('{"Item":{"pk":{"S":"k%d"},"sk":{"N":"%d"},"pad":{"S":"%s"}}}\n'
                    % (i, i, "x" * 100) for i in range(300000))
    (folder / "all.json").write_text(lines)
    srv = launch(data, tmp_path / "killed.log", "--s3-root", str(s3))  # this test kills it
    try:
        ddb = boto3_client(srv.url)
        r = ddb.import_table(S3BucketSource={"S3Bucket": "bucket", "S3KeyPrefix": "big/"},
                             InputFormat="DYNAMODB_JSON", TableCreationParameters=params("Big"))
        arn = r["ImportTableDescription"]["ImportArn"]
        status = ddb.describe_table(TableName="Big")["Table"]["TableStatus"]
    finally:
        srv.proc.kill()
        srv.proc.wait()
        srv.proc.stdout.close()
    assert status == "CREATING"  # while the items go in
    srv = start("--s3-root", str(s3), data=data)
    ddb = boto3_client(srv.url)
    d = ddb.describe_import(ImportArn=arn)["ImportTableDescription"]
    if d["ImportStatus"] == "COMPLETED":  # it beat the kill: then all of it is there
        assert ddb.describe_table(TableName="Big")["Table"]["ItemCount"] == 300000
    else:
        assert d["ImportStatus"] == "FAILED" and "stopped" in d["FailureMessage"], d
        with pytest.raises(ClientError) as e:
            ddb.describe_table(TableName="Big")
        assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert ddb.list_imports()["ImportSummaryList"][0]["ImportStatus"] == "FAILED"


# ---- the CLI, without a server ----

def test_cli_export_and_import_round_trip(tmp_path, start, s3):
    data = tmp_path / "cli-data"
    srv = start(data=data)
    ddb = boto3_client(srv.url)
    make_table(ddb)
    for i in range(40):
        ddb.put_item(TableName="Books", Item=rich_item(i))
    before = table_set(ddb, "Books")
    assert srv.stop() == 0
    out = tmp_path / "Export_Out"  # any folder name, not only a bucket's
    for fmt in ("DYNAMODB_JSON", "ION"):
        p = subprocess.run([quarry_bin(), "export", "--data", str(data), "--format", fmt,
                            "Books", str(out)], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)["ExportDescription"]
        assert d["ExportStatus"] == "COMPLETED" and d["ItemCount"] == 40
        export_id = d["ExportArn"].rsplit("/", 1)[1]
        assert (out / "AWSDynamoDB" / export_id / "manifest-summary.json").exists()
        name = "Copy" + fmt[:3]
        p = subprocess.run([quarry_bin(), "import", "--data", str(data), "--format", fmt,
                            "--compression", "GZIP", "--prefix",
                            "AWSDynamoDB/%s/data/" % export_id, "--key", "pk:S,sk:N", name,
                            str(out)], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        d = json.loads(p.stdout)["ImportTableDescription"]
        assert d["ImportStatus"] == "COMPLETED" and d["ImportedItemCount"] == 40
    srv = start(data=data)
    ddb = boto3_client(srv.url)
    assert table_set(ddb, "CopyDYN") == before == table_set(ddb, "CopyION")
    assert srv.stop() == 0
    # A table without point-in-time recovery: DynamoDB's error, and how to enable it.
    p = subprocess.run([quarry_bin(), "call", "--data", str(data), "CreateTable",
                        json.dumps(dict(ID_PARAMS, TableName="NoPitr"))], capture_output=True)
    assert p.returncode == 0
    p = subprocess.run([quarry_bin(), "export", "--data", str(data), "NoPitr", str(out)],
                       capture_output=True, text=True)
    assert p.returncode == 1 and "PointInTimeRecoveryUnavailableException" in p.stderr
    assert "UpdateContinuousBackups" in p.stderr
    # An output that cannot be made: a file in the way.
    (tmp_path / "file").write_text("x")
    p = subprocess.run([quarry_bin(), "export", "--data", str(data), "Books",
                        str(tmp_path / "file" / "sub")], capture_output=True, text=True)
    assert p.returncode == 1 and "cannot write" in p.stderr
    p = subprocess.run([quarry_bin(), "export", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "usage: quarry export" in p.stdout
    p = subprocess.run([quarry_bin(), "import", "--help"], capture_output=True, text=True)
    assert p.returncode == 0 and "usage: quarry import" in p.stdout
