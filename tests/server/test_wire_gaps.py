"""The wire as DynamoDB speaks it around the operations: presigned (query-string) SigV4
and temporary credentials, the error document's members and content type, and what
DynamoDB answers a body that is no JSON or a target that names no operation. Requests
are signed with botocore's own signers; each answer is asserted whole."""
import hashlib
import json
import re
import time
import urllib.parse

import pytest
from botocore.auth import SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from conftest import KEYS, REGION, raw

SERVICE = "com.amazon.coral.service#"
VALIDATE = "com.amazon.coral.validate#"
DYNAMODB = "com.amazonaws.dynamodb.v20120810#"
LIST = "DynamoDB_20120810.ListTables"
TEMP = ("ASIAQUARRYPRESIGN", "presign/secret", "FwoGZXIvYXdzEPresign//token+/=")


class BodyQueryAuth(SigV4QueryAuth):
    """botocore's presigner with the body's SHA-256 as the payload hash, as a DynamoDB
    request signs it (botocore's generic presigner would move a JSON body into the
    query string, which the JSON protocol does not read)."""

    def __init__(self, credentials, body, expires=SigV4QueryAuth.DEFAULT_EXPIRES):
        super().__init__(credentials, "dynamodb", REGION, expires=expires)
        self._body = body

    def payload(self, request):
        return hashlib.sha256(self._body).hexdigest()


def presign(srv, target, body, key, secret, token=None, expires=3600, headers=None):
    """A presigned URL (path and query) and the headers it was signed with."""
    body = body.encode() if isinstance(body, str) else body
    h = {"Content-Type": "application/x-amz-json-1.0"}
    if target:
        h["X-Amz-Target"] = target
    h.update(headers or {})
    req = AWSRequest(method="POST", url=srv.url + "/", headers=h)
    BodyQueryAuth(Credentials(key, secret, token), body, expires).add_auth(req)
    u = urllib.parse.urlsplit(req.url)
    return u.path + "?" + u.query, dict(req.headers), body


def send(srv, path, headers, body):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=10)
    try:
        c.putrequest("POST", path, skip_accept_encoding=True)
        for k, v in headers.items():
            c.putheader(k, v)
        c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def error_doc(reply):
    status, headers, body = reply
    assert status == 400, (status, body)
    assert headers["content-type"] == "application/x-amz-json-1.0"
    return json.loads(body)


@pytest.fixture
def temp_server(start, tmp_path):
    path = tmp_path / "credentials"
    path.write_text("[default]\naws_access_key_id = %s\naws_secret_access_key = %s\n\n"
                    "[temp]\naws_access_key_id = %s\naws_secret_access_key = %s\n"
                    "aws_session_token = %s\n" % (KEYS["default"] + TEMP))
    return start(credentials=path)


# ---- presigned requests ----

def test_a_presigned_request_is_served(temp_server):
    reply = send(temp_server, *presign(temp_server, LIST, "{}", *KEYS["default"]))
    assert reply[0] == 200 and json.loads(reply[2]) == {"TableNames": []}
    # A key with a session token signs it into the query string, as botocore does.
    path, headers, body = presign(temp_server, LIST, "{}", *TEMP)
    assert "X-Amz-Security-Token=" in path
    assert send(temp_server, path, headers, body)[0] == 200


def test_a_presigned_request_names_what_it_lacks(temp_server):
    path, headers, body = presign(temp_server, LIST, "{}", *KEYS["default"])
    for name in ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Signature", "X-Amz-SignedHeaders",
                 "X-Amz-Date"]:
        kept = "&".join(p for p in path.split("?", 1)[1].split("&") if not p.startswith(name + "="))
        doc = error_doc(send(temp_server, "/?" + kept, headers, body))
        assert doc == {"__type": SERVICE + "IncompleteSignatureException",
                       "message": "AWS query-string parameters must include '%s'. Re-examine the "
                                  "query-string parameters." % name}, name
    doc = error_doc(send(temp_server, path + "&X-Amz-Credential=x", headers, body))
    assert doc == {"__type": SERVICE + "IncompleteSignatureException",
                   "message": "'X-Amz-Credential' is given more than once in the query string; a "
                              "presigned request carries each of its signing parameters once."}


def test_a_presigned_request_expires(temp_server):
    doc = error_doc(send(temp_server, *presign(temp_server, LIST, "{}", *KEYS["default"],
                                               expires=604801)))
    assert doc == {"__type": SERVICE + "IncompleteSignatureException",
                   "message": "X-Amz-Expires must be a whole number of seconds from 1 to 604800, "
                              "not '604801'."}
    signed = presign(temp_server, LIST, "{}", *KEYS["default"], expires=1)
    assert send(temp_server, *signed)[0] == 200
    time.sleep(2.2)
    doc = error_doc(send(temp_server, *signed))
    when = re.search(r"X-Amz-Date=(\w+)", signed[0]).group(1)
    assert doc["__type"] == SERVICE + "InvalidSignatureException" and list(doc) == ["__type", "message"]
    m = re.fullmatch(r"Signature expired: (\w+) is now earlier than (\w+) \((\w+) - 1 sec\.\)",
                     doc["message"])
    assert m and m.group(1) == when, doc
    assert m.group(2) < m.group(3)


def test_a_presigned_request_covers_its_body_and_headers(temp_server):
    path, headers, body = presign(temp_server, LIST, '{"Limit": 5}', *KEYS["default"])
    doc = error_doc(send(temp_server, path, headers, b'{"Limit": 6}'))
    assert doc["__type"] == SERVICE + "InvalidSignatureException"
    assert doc["message"].startswith("The request signature we calculated does not match the "
                                     "signature you provided.")
    # The canonical query it names is the request's without X-Amz-Signature.
    assert "X-Amz-Signature" not in doc["message"] and "X-Amz-Credential=" in doc["message"]
    # A header that decides the operation must be signed.
    path, headers, body = presign(temp_server, None, "{}", *KEYS["default"])
    headers["X-Amz-Target"] = LIST
    doc = error_doc(send(temp_server, path, headers, body))
    assert doc == {"__type": SERVICE + "InvalidSignatureException",
                   "message": "'X-Amz-Target' must be a 'SignedHeader' in the AWS Authorization."}


def test_a_presigned_session_token_must_be_the_keys(temp_server):
    invalid = {"__type": SERVICE + "UnrecognizedClientException",
               "message": "The security token included in the request is invalid."}
    for key, secret, token in [(TEMP[0], TEMP[1], TEMP[2] + "x"),  # another token
                               (TEMP[0], TEMP[1], None),  # none at all
                               (KEYS["default"][0], KEYS["default"][1], TEMP[2])]:  # a key without
        doc = error_doc(send(temp_server, *presign(temp_server, LIST, "{}", key, secret, token)))
        assert doc == invalid, (key, token)


# ---- error documents ----

def test_a_body_that_is_no_json_is_answered_with_the_type_alone(signed_server):
    for body in ["hi", "", "{", '{"a" "b"}', '{"Limit": 1']:
        for target in [LIST, "DynamoDB_20120810.PutItem", "DynamoDB_20120810.Query"]:
            r = raw(signed_server.url, target, body, *KEYS["default"])
            assert r.status == 400 and r.headers["content-type"] == "application/x-amz-json-1.0"
            assert r.body == b'{"__type":"com.amazon.coral.service#SerializationException"}', (target, body)
        # Before the target and the signature, too.
        r = raw(signed_server.url, "DynamoDB_20120810.Nope", body, auth=False)
        if body:
            assert r.json() == {"__type": SERVICE + "SerializationException"}, body


def test_an_unknown_target_is_answered_with_the_type_alone(signed_server):
    for target in ["DynamoDB_20120810.ListTable", "whatever", None]:
        r = raw(signed_server.url, target, "{}", *KEYS["default"])
        assert (r.status, r.body) == (400, b'{"__type":"com.amazon.coral.service#UnknownOperationException"}')


def test_each_error_spells_its_message_member_as_dynamodb_does(signed_server):
    def doc(target, body, content_type="application/x-amz-json-1.0"):
        r = raw(signed_server.url, "DynamoDB_20120810." + target, body, *KEYS["default"],
                content_type=content_type)
        assert r.status == 400 and r.headers["content-type"] == content_type
        return r.json()

    d = doc("DescribeTable", {"TableName": "Gone"})
    assert d == {"__type": DYNAMODB + "ResourceNotFoundException",
                 "message": "Requested resource not found: Table: Gone not found"}
    d = doc("ListTables", {"Limit": 0})
    assert list(d) == ["__type", "message"] and d["__type"] == VALIDATE + "ValidationException"
    # Coral's own SerializationException and AccessDeniedException say "Message".
    d = doc("DescribeTable", {"TableName": 5})
    assert list(d) == ["__type", "Message"] and d["__type"] == SERVICE + "SerializationException"
    d = doc("ListTagsOfResource", {"ResourceArn": "arn:aws:dynamodb:us-east-1:123456789012:table/tab"})
    assert list(d) == ["__type", "Message"] and d["__type"] == SERVICE + "AccessDeniedException"
    # A request sent as application/json is answered as application/json.
    d = doc("DescribeTable", {"TableName": "Gone"}, content_type="application/json")
    assert d["__type"] == DYNAMODB + "ResourceNotFoundException"


# ---- the size of the request line and headers ----

def head_exchange(port, data):
    import socket
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        out = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk
    finally:
        s.close()


def test_a_request_line_and_headers_past_16_kb_are_a_bad_request(signed_server):
    # DynamoDB reads at most 16 KB of request line and headers and answers more with 400
    # Bad Request before it looks at the signature (recorded by Alternator's suite).
    host = "127.0.0.1:%d" % signed_server.port
    base = ("Host: %s\r\nContent-Type: application/x-amz-json-1.0\r\nX-Amz-Target: %s\r\n"
            "Authorization: AWS4-HMAC-SHA256 Credential=%s/20200101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=0\r\nX-Amz-Date: 20200101T000000Z\r\n"
            "Content-Length: 2\r\n" % (host, LIST, KEYS["default"][0]))

    def answer(path, extra):
        head = "POST %s HTTP/1.1\r\n%s%s\r\n" % (path, base, extra)
        out = head_exchange(signed_server.port, head.encode() + b"{}")
        status = int(out.split(b" ", 2)[1])
        return status, len(head), out.partition(b"\r\n\r\n")[2]

    for path, extra in [("/" + "x" * 17000, ""), ("/", "X-Big: %s\r\n" % ("a" * 17000)),
                        ("/", "".join("X-H%d: %s\r\n" % (i, "v" * 300) for i in range(60)))]:
        status, size, body = answer(path, extra)
        assert size > 16384
        assert status == 400 and b"InvalidSignatureException" not in body, body
        assert body == ("Bad Request: the request line and headers take %d bytes; at most 16384 are "
                        "read, as DynamoDB reads them\n" % size).encode()
    # Just under the limit the request is read, and judged on its (stale) signature.
    status, size, body = answer("/", "X-Big: %s\r\n" % ("a" * (16384 - len(base) - 40)))
    assert size <= 16384 and status == 400 and b"InvalidSignatureException" in body, (size, body)
