"""Malformed, unsigned and unusual requests on the wire, answered as DynamoDB answers them:
the HTTP status, the error type in the namespace DynamoDB writes before it in __type, a
message that names the problem, and x-amzn-RequestId and x-amz-crc32 on every answer,
including the ones h2o makes itself before quarry reads a request. After each volley the
server must still answer ordinary calls on the same port."""
import datetime
import gzip
import http.client
import json
import socket
import time
import zlib

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from conftest import KEYS, boto3_client, raw, sign

LIST = "DynamoDB_20120810.ListTables"
PUT = "DynamoDB_20120810.PutItem"
CREATE = "DynamoDB_20120810.CreateTable"

SERVICE = "com.amazon.coral.service#"
VALIDATE = "com.amazon.coral.validate#"
DYNAMODB = "com.amazonaws.dynamodb.v20120810#"


def now():
    return datetime.datetime.now(datetime.timezone.utc)


def assert_stamped(headers, body):
    """Every answer carries a request id and the CRC32 of the bytes it sent."""
    rid = headers["x-amzn-requestid"]
    assert len(rid) == 52 and rid.isalnum() and rid.upper() == rid
    assert int(headers["x-amz-crc32"]) == zlib.crc32(body)


def assert_error(r, status, full_type, message_part=None, bare=False):
    assert r.status == status, (r.status, r.body)
    assert_stamped(r.headers, r.body)
    doc = r.json()
    assert doc["__type"] == full_type, doc
    if bare:  # DynamoDB names only the type of a body that is no JSON, or of an unknown target
        assert doc == {"__type": full_type}, doc
        return
    # The text is "message", or "Message" for the errors DynamoDB spells so (SerializationException,
    # TransactionCanceledException and others; see tests/e2e/test_error_message_member.py).
    text = doc.get("message", doc.get("Message"))
    if message_part is None and full_type.endswith("#SerializationException"):
        assert "message" not in doc and (text is None or text), doc
        return
    assert text, doc
    if message_part is not None:
        assert message_part in text, doc


def signed_raw(srv, target, body, mutate=None, key=None, secret=None, conn=None):
    """A request signed with the credentials file's default key; mutate(headers) may
    then change the headers as a broken client would."""
    key, secret = (key, secret) if key else KEYS["default"]
    if isinstance(body, str):
        body = body.encode()
    h = {"Content-Type": "application/x-amz-json-1.0"}
    if target is not None:
        h["X-Amz-Target"] = target
    h = sign(h, body, "127.0.0.1:%d" % srv.port, key, secret, now())
    if mutate:
        mutate(h)
    return raw(srv.url, None, body, auth=False, content_type=None, headers=h, conn=conn)


def exchange(port, data, timeout=10):
    """Sends raw bytes, half-closes, and returns everything the server wrote back."""
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout)
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


def parse_answers(data):
    """Splits bytes holding HTTP/1.1 answers (with Content-Length) into (status, headers, body)."""
    answers = []
    while data:
        head, _, rest = data.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split()[1])
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        if status == 100:
            data = rest
            continue
        n = int(headers.get("content-length", "0"))
        answers.append((status, headers, rest[:n]))
        data = rest[n:]
    return answers


def head(port, extra="", length=2, target=LIST):
    """The head of an unsigned-but-shaped request for a server without credentials."""
    auth = ("AWS4-HMAC-SHA256 Credential=k/20200101/us-east-1/dynamodb/aws4_request, "
            "SignedHeaders=host, Signature=0")
    h = ("POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/x-amz-json-1.0\r\n"
         "X-Amz-Target: %s\r\nAuthorization: %s\r\nX-Amz-Date: 20200101T000000Z\r\n" % (port, target, auth))
    if length is not None:
        h += "Content-Length: %d\r\n" % length
    return (h + extra + "\r\n").encode()


def make_table(srv, name="tab"):
    r = signed_raw(srv, CREATE, json.dumps({
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}]}))
    assert r.status == 200, r.body
    return r.json()["TableDescription"]["TableArn"]


def still_serves(srv):
    r = signed_raw(srv, LIST, "{}")
    assert r.status == 200 and "TableNames" in r.json(), r.body


# ---- bodies that are not one JSON object ----

MALFORMED = [
    b"",
    b'{"Limit": 1',
    b"7",
    b'"ListTables"',
    b"null",
    b"true",
    b"   ",
    b"{} x",
    b"{}{}",
    b"\xef\xbb\xbf{}",
    b'{"\xff": 1}',
    b'{"ExclusiveStartTableName": "\xc3\x28"}',
    b'{"Limit": 123456789012345678901234567890}',
    b'{"Limit": 1e99999}',
    b"}}}",
    b"{,}",
    b"{7}",
    b'{"a" "b"}',
    b"{" * 10000 + b"}" * 9999,
    b"{" * 10000 + b"}" * 10007,
    b'{"TableName": "tab", "Item": {"k": {"S": "x"}, "deep": ' + b'{"":' * 100000 + b"{}" +
    b"}" * 100000 + b"}}",
]


@pytest.mark.parametrize("body", MALFORMED, ids=lambda b: repr(b[:24]))
def test_a_body_that_is_no_json_object_is_a_serialization_exception(signed_server, body):
    r = signed_raw(signed_server, PUT, body)
    assert_error(r, 400, SERVICE + "SerializationException")


def test_a_top_level_array_is_a_serialization_exception(signed_server):
    for body in ["[]", '[{"TableName": "tab"}]']:
        assert_error(signed_raw(signed_server, LIST, body), 400, SERVICE + "SerializationException")


def test_every_cut_of_a_put_is_refused_and_nothing_is_written(signed_server):
    make_table(signed_server)
    whole = '{"TableName": "tab", "Item": {"k": {"S": "cut"}, "v": {"N": "12"}}}'
    c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
    try:
        for i in range(len(whole)):
            r = signed_raw(signed_server, PUT, whole[:i], conn=c)
            assert_error(r, 400, SERVICE + "SerializationException")
        r = signed_raw(signed_server, "DynamoDB_20120810.GetItem",
                       '{"TableName": "tab", "Key": {"k": {"S": "cut"}}}', conn=c)
        assert r.status == 200 and "Item" not in r.json()
    finally:
        c.close()


def test_a_deeply_nested_item_leaves_the_server_serving(signed_server):
    make_table(signed_server)
    body = ('{"TableName": "tab", "Item": {"k": {"S": "deep"}, "v": ' + '{"M": {"a": ' * 40 +
            '{"S": "x"}' + "}}" * 40 + "}}")
    assert_error(signed_raw(signed_server, PUT, body), 400, VALIDATE + "ValidationException",
                 "Nesting Levels have exceeded supported limits")
    still_serves(signed_server)


# ---- error namespaces ----

def test_errors_carry_the_namespace_dynamodb_gives_their_type(signed_server):
    make_table(signed_server)
    # The engine's errors, on the loop and (writes) through the worker pool.
    assert_error(signed_raw(signed_server, LIST, '{"Limit": 0}'), 400, VALIDATE + "ValidationException",
                 "limit")
    assert_error(signed_raw(signed_server, PUT, '{"TableName": "tab", "Item": {"k": {"N": "1"}}}'),
                 400, VALIDATE + "ValidationException", "Type mismatch")
    assert_error(signed_raw(signed_server, LIST, '{"Limit": "ten"}'), 400,
                 SERVICE + "SerializationException", "STRING_VALUE cannot be converted to Integer")
    assert_error(signed_raw(signed_server, "DynamoDB_20120810.DescribeTable", '{"TableName": "none"}'),
                 400, DYNAMODB + "ResourceNotFoundException")
    # An error document with more than a message keeps it all.
    item = '{"TableName": "tab", "Item": {"k": {"S": "a"}}}'
    assert signed_raw(signed_server, PUT, item).status == 200
    r = signed_raw(signed_server, "DynamoDB_20120810.TransactWriteItems", json.dumps({"TransactItems": [
        {"Put": {"TableName": "tab", "Item": {"k": {"S": "a"}},
                 "ConditionExpression": "attribute_not_exists(k)"}}]}))
    assert_error(r, 400, DYNAMODB + "TransactionCanceledException")
    assert r.json()["CancellationReasons"][0]["Code"] == "ConditionalCheckFailed"
    # And the SDKs still read the type after the '#'.
    ddb = boto3_client(signed_server.url, *KEYS["default"])
    with pytest.raises(ClientError) as info:
        ddb.put_item(TableName="tab", Item={"k": {"N": "1"}})
    assert info.value.response["Error"]["Code"] == "ValidationException"


# ---- the operation ----

def test_targets_that_name_no_operation(signed_server):
    for target in ["DynamoDB_20120810.ListTables.x", "DynamoDB_20120810.List Tables",
                   "DynamoDBStreams_20120810.ListTables", "DynamoDB_20120810.ListStreams", ".ListTables", "DynamoDB_20120810.",
                   "DynamoDB_20120810.BogusOperation"]:
        r = signed_raw(signed_server, target, "{}")
        assert_error(r, 400, SERVICE + "UnknownOperationException", bare=True)
    assert_error(signed_raw(signed_server, None, "{}"), 400, SERVICE + "UnknownOperationException",
                 bare=True)
    # Whitespace around a header's value is no part of it.
    assert signed_raw(signed_server, "DynamoDB_20120810.ListTables \t", "{}").status == 200


def test_the_target_is_judged_before_the_signature(signed_server):
    def garble(h):
        h["Authorization"] = "AWS4-HMAC-SHA256 nonsense"
    r = signed_raw(signed_server, "DynamoDB_20120810.Bogus", "{}", mutate=garble)
    assert_error(r, 400, SERVICE + "UnknownOperationException", bare=True)


# ---- method, path and content type ----

def test_other_methods_and_content_types_are_not_found(server):
    for method in ["PUT", "DELETE", "PATCH", "OPTIONS", "post"]:
        r = raw(server.url, LIST, {}, method=method)
        assert r.status == 404, method
        assert r.body == b"<UnknownOperationException/>\n"
        assert_stamped(r.headers, r.body)
    for ctype in ["application/x-amz-json-1.1", "text/plain", "application/xml", None]:
        r = raw(server.url, LIST, {}, content_type=ctype)
        assert r.status == 404, ctype
        assert_stamped(r.headers, r.body)
    for ctype in ["application/x-amz-json-1.0; charset=utf-8", "APPLICATION/X-AMZ-JSON-1.0"]:
        assert raw(server.url, LIST, {}, content_type=ctype).status == 200, ctype


def test_the_path_of_a_post_does_not_matter(signed_server):
    key, secret = KEYS["default"]
    body = b"{}"
    for path in ["/some/where", "/a%20b"]:
        h = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": LIST}
        # Signed over the path actually sent (conftest's signer signs "/"): botocore's signer.
        req = AWSRequest(method="POST", url=signed_server.url + path, data=body, headers=h)
        SigV4Auth(Credentials(key, secret), "dynamodb", "us-east-1").add_auth(req)
        c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
        c.request("POST", path, body=body, headers=dict(req.headers))
        r = c.getresponse()
        assert r.status == 200, r.read()
        assert json.loads(r.read()) == {"TableNames": []}
        c.close()


# ---- the Authorization header ----

def test_authorization_defects_are_named(signed_server):
    today = now().strftime("%Y%m%d")

    def set_auth(v):
        return lambda h: h.__setitem__("Authorization", v)

    def edit_auth(old, new):
        return lambda h: h.__setitem__("Authorization", h["Authorization"].replace(old, new))

    def set_header(name, v):
        return lambda h: h.__setitem__(name, v)

    cases = [
        (lambda h: h.pop("Authorization"), "MissingAuthenticationTokenException",
         "Request is missing Authentication Token"),
        (set_auth("Bearer abc"), "MissingAuthenticationTokenException", "missing Authentication Token"),
        (set_auth("aws4-hmac-sha256 Credential=x"), "MissingAuthenticationTokenException", "Token"),
        (set_auth("AWS4-HMAC-SHA256 FooBar, BazBurp"), "IncompleteSignatureException",
         "'FooBar' not a valid key=value pair (missing equal-sign) in Authorization header: "
         "'AWS4-HMAC-SHA256 FooBar, BazBurp'."),
        (edit_auth("Signature=", "Sig="), "IncompleteSignatureException",
         "Authorization header requires 'Signature' parameter."),
        (edit_auth("SignedHeaders=", "Signed="), "IncompleteSignatureException",
         "Authorization header requires 'SignedHeaders' parameter."),
        (lambda h: h.pop("X-Amz-Date"), "IncompleteSignatureException",
         "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."),
        (set_header("X-Amz-Date", "2020-01-01"), "IncompleteSignatureException",
         "Date must be in ISO-8601 'basic format'. Got '2020-01-01'."),
        (set_header("X-Amz-Date", "20170101T010101Z"), "InvalidSignatureException",
         "Signature expired: 20170101T010101Z is now earlier than"),
        (set_header("X-Amz-Date", "30200101T010101Z"), "InvalidSignatureException",
         "Signature not yet current: 30200101T010101Z is still later than"),
        (edit_auth("host;", ""), "InvalidSignatureException",
         "'Host' must be a 'SignedHeader' in the AWS Authorization."),
        (edit_auth("AWS4-HMAC-SHA256", "AWS4-HMAC-SHA1"), "IncompleteSignatureException",
         "Unsupported AWS 'algorithm': 'AWS4-HMAC-SHA1'"),
        (edit_auth("/aws4_request", ""), "IncompleteSignatureException",
         "Credential must have exactly 5 slash-delimited elements"),
        (edit_auth("/dynamodb/", "/sqs/"), "InvalidSignatureException",
         "Credential should be scoped to correct service: 'dynamodb'."),
        (edit_auth("/%s/" % today, "/20200101/"), "InvalidSignatureException",
         "Date in Credential scope does not match YYYYMMDD"),
        (edit_auth(KEYS["default"][0], "AKIDUNKNOWN"), "UnrecognizedClientException",
         "The security token included in the request is invalid."),
        (set_header("X-Amz-Target", "DynamoDB_20120810.DescribeLimits"), "InvalidSignatureException",
         "The request signature we calculated does not match the signature you provided."),
        (lambda h: h.__setitem__("Authorization", h["Authorization"][:-8]), "InvalidSignatureException",
         "does not match"),
    ]
    c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
    try:
        for mutate, error, text in cases:
            r = signed_raw(signed_server, LIST, "{}", mutate=mutate, conn=c)
            assert_error(r, 400, SERVICE + error, text)
    finally:
        c.close()
    still_serves(signed_server)


def test_a_signature_over_another_body_is_refused_and_changes_nothing(signed_server):
    make_table(signed_server)
    key, secret = KEYS["default"]
    signed_body = b'{"TableName": "tab", "Item": {"k": {"S": "signed"}}}'
    sent_body = b'{"TableName": "tab", "Item": {"k": {"S": "sent!!"}}}'
    h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": PUT}, signed_body,
             "127.0.0.1:%d" % signed_server.port, key, secret, now())
    r = raw(signed_server.url, None, sent_body, auth=False, content_type=None, headers=h)
    assert_error(r, 400, SERVICE + "InvalidSignatureException", "does not match")
    r = signed_raw(signed_server, "DynamoDB_20120810.Scan", '{"TableName": "tab"}')
    assert r.json()["Count"] == 0


# ---- what h2o answers before quarry reads the request ----

@pytest.mark.parametrize("extra,body,status,text", [
    ("Transfer-Encoding: chunked\r\n", b"zz\r\n{}\r\n0\r\n\r\n", 400, "broken chunked-encoding"),
    ("Transfer-Encoding: gzip, chunked\r\n", b"2\r\n{}\r\n0\r\n\r\n", 400, "transfer-encoding"),
    ("Content-Length: abc\r\n", b"{}", 400, "content-length"),
    ("Expect: something-else\r\nContent-Length: 2\r\n", b"{}", 417, "expectation"),
])
def test_requests_h2o_refuses_get_dynamodb_answers(server, extra, body, status, text):
    out = exchange(server.port, head(server.port, extra, length=None) + body)
    (st, headers, doc), = parse_answers(out)
    assert st == status
    assert headers["content-type"] == "application/x-amz-json-1.0"
    assert_stamped(headers, doc)
    d = json.loads(doc)
    assert d["__type"] == SERVICE + "SerializationException"
    assert text in d["Message"]  # Coral's SerializationException spells it so
    still_serves(server)


def test_a_body_past_the_limit_gets_a_dynamodb_answer(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(head(server.port, length=16 * 1024 * 1024 + 1))
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    (st, headers, doc), = parse_answers(data)
    assert st == 413
    assert_stamped(headers, doc)
    d = json.loads(doc)
    assert d["__type"] == SERVICE + "RequestEntityTooLarge"
    assert "16777216" in d["message"]
    assert "413" in server.log() or "RequestEntityTooLarge" in server.log()


# ---- how a body arrives ----

def test_a_chunked_body_with_extensions_and_trailers_is_read(server):
    body = b"5;ext=1\r\n{\"Lim\r\n8\r\nit\": 1}\r\n0\r\nX-Trailer: t\r\n\r\n"
    (st, headers, doc), = parse_answers(exchange(server.port, head(
        server.port, "Transfer-Encoding: chunked\r\n", length=None) + body))
    assert st == 200 and json.loads(doc) == {"TableNames": []}
    assert_stamped(headers, doc)


def test_expect_100_continue_is_honoured(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    try:
        s.sendall(head(server.port, "Expect: 100-continue\r\n"))
        data = s.recv(4096)
        assert data.startswith(b"HTTP/1.1 100"), data  # before any byte of the body
        s.sendall(b"{}")
        s.shutdown(socket.SHUT_WR)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    (st, headers, doc), = parse_answers(data)
    assert st == 200 and json.loads(doc) == {"TableNames": []}


def test_a_body_shorter_than_its_content_length_is_dropped_at_the_timeout(start):
    srv = start("--timeout", "1")
    s = socket.create_connection(("127.0.0.1", srv.port), timeout=10)
    try:
        s.sendall(head(srv.port, length=10) + b"{}")
        t0 = time.monotonic()
        try:
            while s.recv(65536):
                pass
        except ConnectionResetError:
            pass
        assert time.monotonic() - t0 < 8  # closed, not left hanging
    finally:
        s.close()
    assert raw(srv.url, LIST, {}).status == 200


def test_bytes_past_the_content_length_are_the_next_request(server):
    # The extra bytes are no request: the first is answered, the rest closes the connection.
    answers = parse_answers(exchange(server.port, head(server.port) + b"{}" + b"XYZ\r\n\r\n"))
    assert answers[0][0] == 200 and json.loads(answers[0][2]) == {"TableNames": []}
    still_serves(server)


def test_gzip_bodies_that_do_not_decode_are_internal_errors(signed_server):
    whole = gzip.compress(b'{"Limit": 5}')

    def gz(h):
        h["Content-Encoding"] = "gzip"
    for body in [b"", whole[:-1], whole[:5], b"{}", zlib.compress(b"{}")]:
        r = signed_raw(signed_server, LIST, body, mutate=gz)
        assert_error(r, 500, DYNAMODB + "InternalServerError", "gzip")
    assert signed_raw(signed_server, LIST, whole, mutate=gz).status == 200


# ---- one connection, many answers ----

def test_one_connection_answers_errors_and_successes_in_order(server):
    port = server.port
    good = head(port) + b"{}"
    volley = [
        (good, 200),
        (head(port, length=1) + b"{", 400),
        (head(port, target="DynamoDB_20120810.Nope") + b"{}", 400),
        (("GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port).encode(), 200),
        (("PUT / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 2\r\n\r\n{}").encode(), 404),
        (head(port).replace(b"Authorization:", b"X-Not-Authorization:") + b"{}", 400),
        (head(port, length=12) + b'{"Limit": 0}', 400),
        (good, 200),
    ]
    answers = parse_answers(exchange(port, b"".join(d for d, _ in volley)))
    assert [a[0] for a in answers] == [st for _, st in volley]
    for st, headers, doc in answers:
        assert_stamped(headers, doc)
    # The same through a client that waits for each answer on one kept-alive connection.
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    c.connect()
    sock = c.sock
    try:
        for body, target, auth, status in [
            ("{}", LIST, True, 200), ("{", LIST, True, 400), ("{}", "X.Y", True, 400),
            ("{}", LIST, False, 400), ("[]", LIST, True, 400), ("{}", LIST, True, 200),
        ]:
            r = raw(server.url, target, body, auth=auth, conn=c)
            assert r.status == status, (body, target, r.body)
            assert_stamped(r.headers, r.body)
            assert c.sock is sock
    finally:
        c.close()


# ---- answers without a body ----

def test_tagging_succeeds_with_an_empty_body(signed_server):
    arn = make_table(signed_server)
    r = signed_raw(signed_server, "DynamoDB_20120810.TagResource",
                   json.dumps({"ResourceArn": arn, "Tags": [{"Key": "k", "Value": "v"}]}))
    assert r.status == 200 and r.body == b""
    assert_stamped(r.headers, r.body)
    r = signed_raw(signed_server, "DynamoDB_20120810.ListTagsOfResource",
                   json.dumps({"ResourceArn": arn}))
    assert r.json()["Tags"] == [{"Key": "k", "Value": "v"}]
    r = signed_raw(signed_server, "DynamoDB_20120810.UntagResource",
                   json.dumps({"ResourceArn": arn, "TagKeys": ["k"]}))
    assert r.status == 200 and r.body == b""
    # An SDK reads the empty answer as success.
    ddb = boto3_client(signed_server.url, *KEYS["default"])
    ddb.tag_resource(ResourceArn=arn, Tags=[{"Key": "a", "Value": "b"}])
    assert ddb.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "a", "Value": "b"}]
