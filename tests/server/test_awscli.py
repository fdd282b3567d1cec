"""The AWS CLI against quarry, changing only --endpoint-url: create-table, put-item, query
and scan, including the CLI's automatic pagination, signed with a profile of the server's
credentials file."""
import json
import os
import shutil
import subprocess

import pytest


def aws_binary():
    for cand in ("/usr/bin/aws", shutil.which("aws")):
        if cand and os.path.exists(cand):
            return cand
    pytest.skip("the AWS CLI is not installed")


@pytest.fixture
def aws(signed_server, credentials_file, tmp_path):
    bin_ = aws_binary()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_SHARED_CREDENTIALS_FILE=str(credentials_file),
               AWS_CONFIG_FILE=str(tmp_path / "no-config"), AWS_DEFAULT_REGION="us-east-1",
               AWS_EC2_METADATA_DISABLED="true", AWS_PAGER="", HOME=str(tmp_path))

    def run(*args):
        p = subprocess.run([bin_, "--profile", "ci", "--output", "json", "dynamodb", *args,
                            "--endpoint-url", signed_server.url],
                           env=env, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, "aws %s failed:\n%s%s" % (" ".join(args), p.stdout, p.stderr)
        return json.loads(p.stdout) if p.stdout.strip() else None

    return run


def test_aws_cli_round_trip(aws):
    t = aws("create-table", "--table-name", "cli",
            "--attribute-definitions", "AttributeName=pk,AttributeType=S",
            "AttributeName=sk,AttributeType=N",
            "--key-schema", "AttributeName=pk,KeyType=HASH", "AttributeName=sk,KeyType=RANGE",
            "--billing-mode", "PAY_PER_REQUEST")
    assert t["TableDescription"]["TableName"] == "cli"
    aws("wait", "table-exists", "--table-name", "cli")
    for i in range(7):
        aws("put-item", "--table-name", "cli",
            "--item", json.dumps({"pk": {"S": "a"}, "sk": {"N": str(i)}, "v": {"S": "x%d" % i}}))
    aws("put-item", "--table-name", "cli", "--item", '{"pk":{"S":"b"},"sk":{"N":"1"}}')

    # --page-size 2 makes the CLI follow LastEvaluatedKey through four requests.
    q = aws("query", "--table-name", "cli", "--key-condition-expression", "pk = :p",
            "--expression-attribute-values", '{":p":{"S":"a"}}', "--page-size", "2")
    assert q["Count"] == 7
    assert [int(it["sk"]["N"]) for it in q["Items"]] == list(range(7))

    s = aws("scan", "--table-name", "cli", "--page-size", "3")
    assert s["Count"] == 8 and len(s["Items"]) == 8

    part = aws("scan", "--table-name", "cli", "--max-items", "5", "--page-size", "2")
    assert len(part["Items"]) == 5 and "NextToken" in part
    rest = aws("scan", "--table-name", "cli", "--starting-token", part["NextToken"],
               "--page-size", "2")
    assert len(rest["Items"]) == 3

    g = aws("get-item", "--table-name", "cli", "--key", '{"pk":{"S":"a"},"sk":{"N":"3"}}')
    assert g["Item"]["v"]["S"] == "x3"
    names = aws("list-tables")["TableNames"]
    assert "cli" in names
