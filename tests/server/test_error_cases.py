"""The error cases of tests/server/cases/*.json, run against `quarry serve`: each file is
data (the requests that set a table up, then requests with the error document they must
get back), and this one runner sends them, as curl's test cases are run.

A case: {"name", "op", "body" (a JSON value) or "text" (the body as sent), "status",
"type" (the __type after its namespace), "message"}; "message" may be left out only for
an answer that succeeds (status 200). A cancelled transaction's case may add "reasons":
its CancellationReasons, each as {"Code", "Message"} (a Message left out where the
reason has none). Cases are sent in file order on one server per
file, after the file's "setup" requests, which must all succeed."""
import json
import pathlib

import pytest

from conftest import raw

CASES = pathlib.Path(__file__).parent / "cases"
STREAM_OPS = {"ListStreams", "DescribeStream", "GetShardIterator", "GetRecords"}


def target(op):
    return ("DynamoDBStreams_20120810." if op in STREAM_OPS else "DynamoDB_20120810.") + op


def send(server, op, case):
    body = case["text"] if "text" in case else json.dumps(case["body"])
    return raw(server.url, target(op), body)


def load(path):
    doc = json.loads(path.read_text())
    for case in doc["cases"]:
        assert {"name", "op", "status"} <= case.keys(), (path.name, case)
        assert ("body" in case) != ("text" in case), (path.name, case["name"])
        assert case["status"] == 200 or {"type", "message"} <= case.keys(), (path.name, case["name"])
    return doc


FILES = sorted(CASES.glob("*.json"))


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_case_file(server, path):
    doc = load(path)
    for step in doc.get("setup", []):
        r = send(server, step["op"], step)
        assert r.status == 200, (step, r.body)
    wrong = []
    for case in doc["cases"]:
        r = send(server, case["op"], case)
        got = {"status": r.status}
        want = {"status": case["status"]}
        if case["status"] != 200:
            got.update(type=r.error_type, message=r.message)
            want.update(type=case["type"], message=case["message"])
        if "reasons" in case:
            got["reasons"] = [{k: v for k, v in reason.items() if k in ("Code", "Message")}
                              for reason in r.json().get("CancellationReasons", [])]
            want["reasons"] = case["reasons"]
        if got != want:
            wrong.append("%s: want %s\n    got  %s" % (case["name"], want, got))
    assert not wrong, "%d of %d cases of %s differ:\n  %s" % (
        len(wrong), len(doc["cases"]), path.name, "\n  ".join(wrong))


def test_every_case_file_has_cases():
    assert FILES
    for path in FILES:
        assert load(path)["cases"], path.name


def test_an_item_too_large_is_worded_alike_in_every_form(server):
    """PutItem, its batch and transaction forms and PartiQL's INSERT refuse an item past
    400 KB with DynamoDB's one text."""
    table = {"TableName": "Large", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
             "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}
    assert send(server, "CreateTable", {"body": table}).status == 200
    big = {"S": "x" * 410000}
    item = {"pk": {"S": "a"}, "b": big}
    forms = {
        "PutItem": {"TableName": "Large", "Item": item},
        "BatchWriteItem": {"RequestItems": {"Large": [{"PutRequest": {"Item": item}}]}},
        "TransactWriteItems": {"TransactItems": [{"Put": {"TableName": "Large", "Item": item}}]},
        "ExecuteStatement": {"Statement": "INSERT INTO Large VALUE {'pk': 'a', 'b': ?}", "Parameters": [big]},
    }
    got = {}
    for op, body in forms.items():
        r = send(server, op, {"body": body})
        got[op] = (r.status, r.error_type, r.message)
    want = (400, "ValidationException", "Item size has exceeded the maximum allowed size")
    assert got == {op: want for op in forms}
