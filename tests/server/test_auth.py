"""SigV4 against a credentials file: boto3's real signatures pass for every profile's key;
a wrong key id, a wrong secret, a skewed clock, a tampered body or a missing header fail
with DynamoDB's error types and messages. Without a credentials file any key passes."""
import datetime

import pytest
from botocore.exceptions import ClientError

from conftest import KEYS, boto3_client, raw

LIST = "DynamoDB_20120810.ListTables"


def utcnow():
    return datetime.datetime.now(datetime.timezone.utc)


def error_of(call):
    with pytest.raises(ClientError) as info:
        call()
    return info.value.response["Error"]["Code"], info.value.response["Error"]["Message"]


def test_boto3_signatures_verify_for_every_profile(signed_server):
    for key, secret in KEYS.values():
        ddb = boto3_client(signed_server.url, key, secret)
        assert ddb.list_tables()["TableNames"] == []


def test_temporary_credentials_sign_their_session_token(start, tmp_path, server):
    # Clients with temporary credentials add X-Amz-Security-Token and sign it; quarry
    # checks it against the profile's aws_session_token (there is no STS to ask).
    path = tmp_path / "temporary"
    path.write_text("[temp]\naws_access_key_id = ASIAQUARRYTEMP\n"
                    "aws_secret_access_key = temp/secret\n"
                    "aws_session_token = FQoGZXIvYXdzE//token+/=\n")
    srv = start(credentials=path)
    ddb = boto3_client(srv.url, "ASIAQUARRYTEMP", "temp/secret",
                       aws_session_token="FQoGZXIvYXdzE//token+/=")
    assert ddb.list_tables()["TableNames"] == []
    assert boto3_client(server.url, aws_session_token="token").list_tables()["TableNames"] == []


def test_unknown_access_key(signed_server):
    ddb = boto3_client(signed_server.url, "AKIDNOTINTHEFILE", KEYS["default"][1])
    code, msg = error_of(ddb.list_tables)
    assert code == "UnrecognizedClientException"
    assert msg == "The security token included in the request is invalid."


def test_wrong_secret(signed_server):
    ddb = boto3_client(signed_server.url, KEYS["default"][0], "not-the-secret")
    code, msg = error_of(ddb.list_tables)
    assert code == "InvalidSignatureException"
    assert msg.startswith("The request signature we calculated does not match the signature "
                          "you provided. Check your AWS Secret Access Key and signing method. "
                          "Consult the service documentation for details.")
    assert "The Canonical String for this request should have been" in msg


def test_key_of_one_profile_with_secret_of_another(signed_server):
    ddb = boto3_client(signed_server.url, KEYS["default"][0], KEYS["ci"][1])
    assert error_of(ddb.list_tables)[0] == "InvalidSignatureException"


def test_hand_signed_request_verifies(signed_server):
    key, secret = KEYS["ci"]
    r = raw(signed_server.url, LIST, {}, key=key, secret=secret)
    assert r.status == 200, r.body


def test_clock_skew_past_fifteen_minutes(signed_server):
    key, secret = KEYS["default"]
    old = utcnow() - datetime.timedelta(minutes=16)
    r = raw(signed_server.url, LIST, {}, key=key, secret=secret, when=old)
    assert r.status == 400
    assert r.error_type == "InvalidSignatureException"
    assert r.message.startswith("Signature expired: %s is now earlier than " % old.strftime("%Y%m%dT%H%M%SZ"))
    assert r.message.endswith(" - 15 min.)")
    future = utcnow() + datetime.timedelta(minutes=16)
    r = raw(signed_server.url, LIST, {}, key=key, secret=secret, when=future)
    assert r.error_type == "InvalidSignatureException"
    assert r.message.startswith("Signature not yet current: ")
    assert r.message.endswith(" + 15 min.)")
    # Within the window is fine.
    r = raw(signed_server.url, LIST, {}, key=key, secret=secret,
            when=utcnow() - datetime.timedelta(minutes=14))
    assert r.status == 200


def test_tampered_body(signed_server):
    key, secret = KEYS["default"]
    # Sign one body, send another of the same length.
    from conftest import sign
    import http.client
    body = b'{"Limit": 10}'
    h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": LIST}, body,
             "127.0.0.1:%d" % signed_server.port, key, secret, utcnow())
    c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
    c.request("POST", "/", body=b'{"Limit": 11}', headers=h)
    r = c.getresponse()
    data = r.read()
    c.close()
    assert r.status == 400
    assert b"InvalidSignatureException" in data


def test_missing_authorization(signed_server):
    r = raw(signed_server.url, LIST, {}, auth=False)
    assert r.status == 400
    assert r.error_type == "MissingAuthenticationTokenException"
    assert r.message == "Request is missing Authentication Token"


def test_incomplete_authorization(signed_server):
    r = raw(signed_server.url, LIST, {}, auth=False,
            headers={"Authorization": "AWS4-HMAC-SHA256 Credential=AKIDQUARRYTEST1/20250101/us-east-1/dynamodb/aws4_request",
                     "X-Amz-Date": utcnow().strftime("%Y%m%dT%H%M%SZ")})
    assert r.error_type == "IncompleteSignatureException"
    assert r.message.startswith("Authorization header requires 'Signature' parameter. "
                                "Authorization header requires 'SignedHeaders' parameter. ")


def test_wrong_service_in_scope(signed_server):
    key, secret = KEYS["default"]
    from conftest import sign
    import http.client
    body = b"{}"
    h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": LIST}, body,
             "127.0.0.1:%d" % signed_server.port, key, secret, utcnow(), service="s3")
    c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
    c.request("POST", "/", body=body, headers=h)
    r = c.getresponse()
    doc = __import__("json").loads(r.read())
    c.close()
    assert doc["__type"].endswith("#InvalidSignatureException")
    assert doc["message"] == "Credential should be scoped to correct service: 'dynamodb'."


def test_any_key_without_credentials_file(server):
    ddb = boto3_client(server.url, "anything", "at-all")
    assert ddb.list_tables()["TableNames"] == []
    # Signatures are not checked, but a request must still carry one.
    r = raw(server.url, LIST, {}, key="x", secret="y", when=utcnow() - datetime.timedelta(days=3))
    assert r.status == 200
