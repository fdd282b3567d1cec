"""What a SigV4 signature must cover, against a credentials file: Host and every X-Amz-*
header present (a signed DescribeTable re-sent with another X-Amz-Target must not become
a DeleteTable); an Authorization header with a parameter twice, an unknown parameter,
or two Authorization headers is malformed; X-Amz-Security-Token must be the profile's
aws_session_token, and a key without one must carry none."""
import datetime
import hashlib
import hmac
import http.client

import pytest

from conftest import KEYS, REGION, boto3_client

TARGET = "DynamoDB_20120810."
TEMP = ("ASIAQUARRYTEMP1", "temp/secret/1", "IQoJb3JpZ2luX2VjE//temporary+token=")


def _hmac(key, msg):
    return hmac.new(key, msg.encode(), hashlib.sha256).digest()


def signed(port, target, body, signed_names, key=KEYS["default"], extra=None, auth_extra=""):
    """Headers for a POST / whose signature covers only signed_names (lower case, with
    host); extra headers are sent too, and signed only if named."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    headers = {"host": "127.0.0.1:%d" % port, "x-amz-date": when,
               "content-type": "application/x-amz-json-1.0", "x-amz-target": TARGET + target}
    headers.update({k.lower(): v for k, v in (extra or {}).items()})
    names = sorted(signed_names)
    canonical = "\n".join(["POST", "/", "", "".join("%s:%s\n" % (n, headers.get(n, ""))
                                                    for n in names),
                           ";".join(names), hashlib.sha256(body).hexdigest()])
    scope = "%s/%s/dynamodb/aws4_request" % (when[:8], REGION)
    sts = "\n".join(["AWS4-HMAC-SHA256", when, scope,
                     hashlib.sha256(canonical.encode()).hexdigest()])
    k = _hmac(("AWS4" + key[1]).encode(), when[:8])
    for part in (REGION, "dynamodb", "aws4_request"):
        k = _hmac(k, part)
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    headers["authorization"] = ("AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, "
                                "Signature=%s%s" % (key[0], scope, ";".join(names), sig,
                                                    auth_extra))
    return headers


def send(port, headers, body, more=()):
    """POSTs body with headers (and any (name, value) in more, repeated names allowed)."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    c.putrequest("POST", "/", skip_host=True, skip_accept_encoding=True)
    for name, value in list(headers.items()) + list(more):
        c.putheader(name, value)
    c.putheader("Content-Length", str(len(body)))
    c.endheaders(body)
    r = c.getresponse()
    data = r.read()
    c.close()
    import json
    doc = json.loads(data)
    return r.status, doc.get("__type", "").rsplit("#", 1)[-1], doc.get("message", doc.get("Message"))


def make_table(url, name="victim"):
    ddb = boto3_client(url, *KEYS["default"])
    ddb.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}])
    return ddb


def test_a_retargeted_request_with_an_unsigned_target_is_refused(signed_server):
    ddb = make_table(signed_server.url)
    body = b'{"TableName":"victim"}'
    # Signed as a DescribeTable over host and x-amz-date only, then re-sent as DeleteTable.
    h = signed(signed_server.port, "DescribeTable", body, ["host", "x-amz-date"])
    h["x-amz-target"] = TARGET + "DeleteTable"
    status, typ, msg = send(signed_server.port, h, body)
    assert (status, typ) == (400, "InvalidSignatureException")
    assert msg == "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization."
    assert ddb.describe_table(TableName="victim")["Table"]["TableName"] == "victim"
    # Signed over every header, the same request is accepted.
    h = signed(signed_server.port, "DescribeTable", body,
               ["content-type", "host", "x-amz-date", "x-amz-target"])
    assert send(signed_server.port, h, body)[0] == 200


@pytest.mark.parametrize("names,extra,missing", [
    (["host"], {}, "X-Amz-Date"),
    (["host", "x-amz-date"], {}, "X-Amz-Target"),
    (["host", "x-amz-date", "x-amz-target"], {"X-Amz-Content-Sha256": "UNSIGNED-PAYLOAD"},
     "X-Amz-Content-Sha256"),
    (["host", "x-amz-date", "x-amz-target"], {"X-Amz-Security-Token": "anything"},
     "X-Amz-Security-Token"),
    (["host", "x-amz-date", "x-amz-target"], {"X-Amz-Anything-Else": "1"}, "X-Amz-Anything-Else"),
])
def test_every_x_amz_header_present_must_be_signed(signed_server, names, extra, missing):
    body = b"{}"
    status, typ, msg = send(signed_server.port, signed(signed_server.port, "ListTables", body,
                                                       names, extra=extra), body)
    assert (status, typ) == (400, "InvalidSignatureException")
    assert msg == "'%s' must be a 'SignedHeader' in the AWS Authorization." % missing


def test_host_must_be_signed(signed_server):
    body = b"{}"
    h = signed(signed_server.port, "ListTables", body, ["x-amz-date", "x-amz-target"])
    status, typ, msg = send(signed_server.port, h, body)
    assert (status, typ) == (400, "InvalidSignatureException")
    assert msg == "'Host' must be a 'SignedHeader' in the AWS Authorization."


ALL = ["content-type", "host", "x-amz-date", "x-amz-target"]


@pytest.mark.parametrize("auth_extra,word", [
    (", Credential=AKIDQUARRYTEST2/20200101/us-east-1/dynamodb/aws4_request", "'Credential'"),
    (", Signature=" + "0" * 64, "'Signature'"),
    (", SignedHeaders=host", "'SignedHeaders'"),
    (", Region=us-west-2", "'Region' is not a parameter"),
])
@pytest.mark.parametrize("signed_too", [True, False], ids=["credentials", "no-credentials"])
def test_malformed_authorization_parameters(signed_server, server, auth_extra, word, signed_too):
    srv = signed_server if signed_too else server
    body = b"{}"
    h = signed(srv.port, "ListTables", body, ALL, auth_extra=auth_extra)
    status, typ, msg = send(srv.port, h, body)
    assert (status, typ) == (400, "IncompleteSignatureException"), msg
    assert word in msg, msg


@pytest.mark.parametrize("signed_too", [True, False], ids=["credentials", "no-credentials"])
def test_two_authorization_headers(signed_server, server, signed_too):
    srv = signed_server if signed_too else server
    body = b"{}"
    good = signed(srv.port, "ListTables", body, ALL)
    other = signed(srv.port, "ListTables", body, ALL, key=KEYS["ci"])["authorization"]
    status, typ, msg = send(srv.port, good, body, more=[("Authorization", other)])
    assert (status, typ) == (400, "IncompleteSignatureException"), msg
    assert "2 Authorization headers" in msg
    assert send(srv.port, good, body)[0] == 200


@pytest.fixture
def temp_server(start, tmp_path):
    path = tmp_path / "credentials-with-token"
    path.write_text("[temp]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                    "aws_session_token = %s\n\n[long]\naws_access_key_id = %s\n"
                    "aws_secret_access_key = %s\n" % (TEMP + KEYS["default"]))
    return start(credentials=path)


def test_session_token_is_checked(temp_server):
    url = temp_server.url
    ok = boto3_client(url, TEMP[0], TEMP[1], aws_session_token=TEMP[2])
    assert ok.list_tables()["TableNames"] == []
    from botocore.exceptions import ClientError
    for client in (boto3_client(url, TEMP[0], TEMP[1], aws_session_token=TEMP[2] + "x"),
                   boto3_client(url, TEMP[0], TEMP[1]),  # no token at all
                   boto3_client(url, *KEYS["default"], aws_session_token=TEMP[2])):
        with pytest.raises(ClientError) as info:
            client.list_tables()
        err = info.value.response["Error"]
        assert err["Code"] == "UnrecognizedClientException"
        assert err["Message"] == "The security token included in the request is invalid."
    assert boto3_client(url, *KEYS["default"]).list_tables()["TableNames"] == []
