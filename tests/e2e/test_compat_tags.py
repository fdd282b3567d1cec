"""Tagging behaviours DynamoDB shows that an independent compatibility suite checks.

A ResourceArn must be an ARN; a TagResource needs at least one tag; keys and values
have DynamoDB's lengths and characters; more than 50 tags is a ValidationException;
and CreateTable with bad tags creates no table."""
import pytest

T = "CompatTags"


@pytest.fixture
def arn(q):
    return q.create(T, sk=None)["TableDescription"]["TableArn"]


def tag(q, arn, tags):
    return q.raw("TagResource", {"ResourceArn": arn, "Tags": tags})


@pytest.mark.parametrize("bad", ["I_do_not_exist", "arn:not/a/good/format", " "])
def test_malformed_arn_is_a_validation_error(q, arn, bad):
    e = q.error("TagResource", {"ResourceArn": bad, "Tags": [{"Key": "k", "Value": "v"}]})
    assert e.type == "ValidationException"
    e = q.error("ListTagsOfResource", {"ResourceArn": bad})
    assert e.type == "ValidationException"


def test_well_formed_arn_of_no_table_is_not_found(q, arn):
    assert q.error("TagResource", {"ResourceArn": arn + "x", "Tags": [{"Key": "k", "Value": "v"}]}).type == \
        "ResourceNotFoundException"


def test_empty_tag_list_is_refused(q, arn):
    e = q.error("TagResource", {"ResourceArn": arn, "Tags": []})
    assert e.type == "ValidationException"


@pytest.mark.parametrize("key,value", [("ok", "#!%%^$$&"), ("->>;-)])", "ok"), ("!!!\\|", "<><"), ("", "v"),
                                       ("k" * 129, "v"), ("k", "v" * 257)])
def test_bad_keys_and_values_are_refused(q, arn, key, value):
    rc, body = tag(q, arn, [{"Key": key, "Value": value}])
    assert rc == 1 and body["__type"].endswith("ValidationException")
    assert q.call("ListTagsOfResource", {"ResourceArn": arn})["Tags"] == []


def test_allowed_characters_and_lengths(q, arn):
    tags = [{"Key": "k" * 128, "Value": "v" * 256}, {"Key": "e", "Value": ""}, {"Key": " ", "Value": "9"},
            {"Key": "ok_.:/=+-@ 9", "Value": "ok_.:/=+-@ 9"}, {"Key": "\u0417\u0430\u043a\u043e\u043d", "Value": "\u00e9"}]
    assert tag(q, arn, tags)[0] == 0
    got = q.call("ListTagsOfResource", {"ResourceArn": arn})["Tags"]
    assert sorted(got, key=lambda t: t["Key"]) == sorted(tags, key=lambda t: t["Key"])


def test_more_than_fifty_tags_is_a_validation_error(q, arn):
    assert tag(q, arn, [{"Key": str(i), "Value": str(i)} for i in range(40)])[0] == 0
    rc, body = tag(q, arn, [{"Key": str(i), "Value": str(i)} for i in range(40, 60)])
    assert rc == 1 and body["__type"].endswith("ValidationException")
    assert len(q.call("ListTagsOfResource", {"ResourceArn": arn})["Tags"]) == 40


@pytest.mark.parametrize("tags", [[{"Key": str(i), "Value": str(i)} for i in range(100)], [{"Key": "", "Value": "v"}]])
def test_create_table_with_bad_tags_creates_nothing(q, tags):
    e = q.error("CreateTable", {"TableName": T, "BillingMode": "PAY_PER_REQUEST",
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}], "Tags": tags})
    assert e.type == "ValidationException"
    assert q.error("DescribeTable", {"TableName": T}).type == "ResourceNotFoundException"
