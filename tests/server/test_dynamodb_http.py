"""HTTP-level behaviour that independent DynamoDB compatibility suites check against real
DynamoDB: the health check's text, Authorization components parted by spaces alone, the
address DescribeEndpoints gives, compressed request bodies (Content-Encoding gzip and
deflate) and compressed responses (Accept-Encoding), with the checksum over the bytes
actually sent."""
import datetime
import gzip
import http.client
import json
import socket
import zlib

from conftest import KEYS, raw, sign

PUT = "DynamoDB_20120810.PutItem"
GET = "DynamoDB_20120810.GetItem"
CREATE = "DynamoDB_20120810.CreateTable"


def make_table(url, name="tab", **kw):
    r = raw(url, CREATE, {
        "TableName": name, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "k", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "k", "AttributeType": "S"}]}, **kw)
    assert r.status == 200, r.body


def put_body(key, value="v"):
    return json.dumps({"TableName": "tab", "Item": {"k": {"S": key}, "v": {"S": value}}}).encode()


def stored(url, item_key, **kw):
    r = raw(url, GET, {"TableName": "tab", "Key": {"k": {"S": item_key}}, "ConsistentRead": True},
            **kw)
    assert r.status == 200, r.body
    return "Item" in r.json()


# ---- the health check ----

def test_health_check_names_the_host_it_was_reached_at(server):
    for host in ["127.0.0.1:%d" % server.port, "localhost:%d" % server.port]:
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        c.request("GET", "/", headers={"Host": host})
        r = c.getresponse()
        assert r.status == 200
        assert r.read().decode().strip() == "healthy: " + host
        c.close()


def test_health_check_without_a_host_names_quarry(server):
    s = socket.create_connection(("127.0.0.1", server.port), timeout=10)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    data = b""
    while True:
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    assert data.startswith(b"HTTP/1.1 200") or data.startswith(b"HTTP/1.0 200"), data
    assert data.split(b"\r\n\r\n", 1)[1] == b"healthy: quarry\n"


def test_health_check_is_only_at_the_root(server):
    for path in ["/abc", "/-", "/index.htm", "/health"]:
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        c.request("GET", path)
        r = c.getresponse()
        r.read()
        assert 400 <= r.status <= 404, path
        c.close()


# ---- the Authorization header ----

def test_components_parted_by_spaces_alone_are_read(signed_server):
    # An expired date is reported as such even when the components have no commas.
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Date": "20170101T010101Z",
               "X-Amz-Target": "DynamoDB_20120810.DescribeEndpoints",
               "Authorization": "AWS4-HMAC-SHA256 Credential=whoever/2/3/4/aws4_request "
                                "SignedHeaders=x-amz-date;host Signature=123"}
    r = raw(signed_server.url, None, b"", auth=False, headers=headers, content_type=None)
    assert r.status == 400
    assert r.error_type == "InvalidSignatureException"
    assert r.message.startswith("Signature expired: 20170101T010101Z is now earlier than ")
    headers["X-Amz-Date"] = "30200101T010101Z"
    r = raw(signed_server.url, None, b"", auth=False, headers=headers, content_type=None)
    assert r.error_type == "InvalidSignatureException"
    assert r.message.startswith("Signature not yet current: 30200101T010101Z is still later than ")


def test_a_true_signature_with_space_parted_components_passes(signed_server):
    key, secret = KEYS["default"]
    body = b"{}"
    host = "127.0.0.1:%d" % signed_server.port
    h = sign({"Content-Type": "application/x-amz-json-1.0",
              "X-Amz-Target": "DynamoDB_20120810.ListTables"}, body, host, key, secret,
             datetime.datetime.now(datetime.timezone.utc))
    auth = h["Authorization"]
    commas_only = auth.split(" ", 1)[0] + " " + "".join(auth.split()[1:])
    for joined in [auth.replace(", ", " "), auth.replace(", ", "   "), commas_only]:
        c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
        c.request("POST", "/", body=body, headers=dict(h, Authorization=joined))
        r = c.getresponse()
        assert r.status == 200, (joined, r.read())
        r.read()
        c.close()


# ---- DescribeEndpoints ----

def test_describe_endpoints_names_an_address_clients_can_use(server):
    from conftest import boto3_client
    endpoints = boto3_client(server.url).describe_endpoints()["Endpoints"]
    assert len(endpoints) == 1
    assert endpoints[0]["Address"] == "127.0.0.1:%d" % server.port
    assert endpoints[0]["CachePeriodInMinutes"] > 0
    again = boto3_client("http://" + endpoints[0]["Address"]).describe_endpoints()["Endpoints"]
    assert again == endpoints
    via_name = boto3_client("http://localhost:%d" % server.port).describe_endpoints()
    assert via_name["Endpoints"][0]["Address"] == "localhost:%d" % server.port


# ---- compressed requests ----

def test_gzip_and_deflate_request_bodies_are_decoded(signed_server):
    key, secret = KEYS["default"]
    url = signed_server.url
    make_table(url, key=key, secret=secret)
    one = put_body("one")
    cases = {
        "gzip-one": ("gzip", gzip.compress(put_body("gzip-one"))),
        "gzip-two-members": ("gzip", gzip.compress(put_body("gzip-two-members")[:10]) +
                             gzip.compress(put_body("gzip-two-members")[10:])),
        "deflate-one": ("deflate", zlib.compress(put_body("deflate-one"))),
        "gzip-upper-case": ("GZIP", gzip.compress(put_body("gzip-upper-case"))),
    }
    for name, (coding, body) in cases.items():
        # The signature covers the compressed bytes, as an SDK that compresses signs them.
        r = raw(url, PUT, body, key=key, secret=secret, headers={"Content-Encoding": coding})
        assert r.status == 200, (name, r.body)
        assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body)
        assert stored(url, name, key=key, secret=secret), name
    assert raw(url, PUT, one, key=key, secret=secret,
               headers={"Content-Encoding": "identity"}).status == 200


def test_undecodable_request_bodies_are_internal_errors_and_change_nothing(signed_server):
    key, secret = KEYS["default"]
    url = signed_server.url
    make_table(url, key=key, secret=secret)
    cases = {
        "unknown-coding": ("garbage", put_body("unknown-coding")),
        "not-gzip": ("gzip", put_body("not-gzip")),
        "gzip-cut-short": ("gzip", gzip.compress(put_body("gzip-cut-short"))[:-1]),
        "gzip-then-junk": ("gzip", gzip.compress(put_body("gzip-then-junk")) + b"junk"),
        "gzip-empty": ("gzip", b""),
        "not-deflate": ("deflate", put_body("not-deflate")),
        "deflate-empty": ("deflate", b""),
        # Unlike gzip's members, a second zlib stream may not follow the first.
        "deflate-twice": ("deflate", zlib.compress(put_body("deflate-twice")[:10]) +
                          zlib.compress(put_body("deflate-twice")[10:])),
    }
    for name, (coding, body) in cases.items():
        r = raw(url, PUT, body, key=key, secret=secret, headers={"Content-Encoding": coding})
        assert r.status == 500, (name, r.status, r.body)
        assert r.error_type == "InternalServerError", name
        assert not stored(url, name, key=key, secret=secret), name


def test_a_compressed_body_is_still_signed_as_sent(signed_server):
    key, secret = KEYS["default"]
    url = signed_server.url
    make_table(url, key=key, secret=secret)
    packed = gzip.compress(put_body("x"))
    # Signed over the decoded bytes instead: the signature must not match.
    host = "127.0.0.1:%d" % signed_server.port
    h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": PUT},
              put_body("x"), host, key, secret, datetime.datetime.now(datetime.timezone.utc))
    h["Content-Encoding"] = "gzip"
    c = http.client.HTTPConnection("127.0.0.1", signed_server.port, timeout=10)
    c.request("POST", "/", body=packed, headers=h)
    r = c.getresponse()
    doc = json.loads(r.read())
    c.close()
    assert r.status == 400
    assert doc["__type"].endswith("#InvalidSignatureException")
    assert not stored(url, "x", key=key, secret=secret)


def test_a_body_that_decodes_past_the_limit_is_refused(server):
    make_table(server.url)
    big = put_body("big", " " * 20)[:-1] + b" " * (17 * 1024 * 1024) + b"}"
    r = raw(server.url, PUT, gzip.compress(big), headers={"Content-Encoding": "gzip"})
    assert r.status == 413
    assert not stored(server.url, "big")


def test_malformed_json_inside_gzip_is_a_serialization_exception(server):
    r = raw(server.url, PUT, gzip.compress(b"{not json"), headers={"Content-Encoding": "gzip"})
    assert r.status == 400
    assert r.error_type == "SerializationException"


# ---- compressed responses ----

def get_raw(url, key, accept=None):
    headers = {"Accept-Encoding": accept} if accept is not None else {}
    return raw(url, GET, {"TableName": "tab", "Key": {"k": {"S": key}}, "ConsistentRead": True},
               headers=headers)


def value_for_response_of(url, key, size):
    """Stores item key with a value that makes its GetItem answer exactly size bytes."""
    assert raw(url, PUT, put_body(key, "x")).status == 200
    base = len(get_raw(url, key).body)
    assert raw(url, PUT, put_body(key, "x" * (1 + size - base))).status == 200
    assert len(get_raw(url, key).body) == size


def test_responses_from_4_kb_on_are_compressed_for_clients_that_accept_it(server):
    make_table(server.url)
    value_for_response_of(server.url, "at", 4096)
    value_for_response_of(server.url, "below", 4095)
    plain = get_raw(server.url, "at")
    assert "content-encoding" not in plain.headers
    for coding, unpack in [("gzip", gzip.decompress), ("deflate", zlib.decompress)]:
        r = get_raw(server.url, "at", coding)
        assert r.status == 200
        assert r.headers["content-encoding"] == coding
        assert int(r.headers["content-length"]) == len(r.body) < 4096
        # The checksum is of the bytes on the wire, as DynamoDB computes it.
        assert int(r.headers["x-amz-crc32"]) == zlib.crc32(r.body)
        assert unpack(r.body) == plain.body
        small = get_raw(server.url, "below", coding)
        assert "content-encoding" not in small.headers
        assert len(small.body) == 4095


def test_accept_encoding_is_read_as_dynamodb_reads_it(server):
    make_table(server.url)
    value_for_response_of(server.url, "k", 5000)
    cases = [
        ("identity", None), ("", None), ("br", None), ("zstd", None), ("compress", None),
        ("x-gzip", None),
        ("gzip, deflate", "gzip"), ("br, identity, deflate, gzip", "deflate"),
        ("GZIP, identity", "gzip"), ("dog, gzip ,, cat", "gzip"),
        ("gzip;q=0.8, deflate;q=0.5", "gzip"),
        ("br, gzip;q=0, deflate; q = 0.5 , identity;q=0", "deflate"),
        ("*", "gzip"), ("*, deflate;q=0.5", "gzip"), ("*, deflate", "deflate"),
        ("*, identity", "gzip"),
        ("*, gzip;q=0.5", "deflate"), ("gzip ;q=0", None), ("identity;q=0", None), ("*;q=0", None),
        ("*;q=0.5,identity", "gzip"), ("gzip;q=0.5,identity;q=0.8", "gzip"),
        ("br;q=0.8,identity;q=0.5,*;q=0", None),
        ('"gzip"', None), ("gzip br", None), ("gzip:q=1", None),
        ("deflate;q=0.5, gzip;q=31", "gzip"), ("gzip;q=31,deflate;q=51", "gzip"),
        ("deflate;q=0.5, gzip;q=0.2", "deflate"), ("deflate;q=0.5, gzip;q=1;q=0.2", "gzip"),
        ("deflate;q=0.5,gzip;q=0.", "deflate"), ("deflate;q=0.5,gzip;q=0.x", "gzip"),
        ("deflate;q=-0.5,gzip;q=0.2", "gzip"), ("gzip;nq=1;q=0 ", None),
        ("gzip;q=0, gzip;q=1, gzip;q=0", "gzip"), ("br,identity;q=0.5,gzip;q=0.0001", "gzip"),
    ]
    for accept, expected in cases:
        r = get_raw(server.url, "k", accept)
        assert r.status == 200, accept
        assert r.headers.get("content-encoding") == expected, accept


def test_the_last_accept_encoding_header_counts(server):
    make_table(server.url)
    value_for_response_of(server.url, "k", 5000)
    body = json.dumps({"TableName": "tab", "Key": {"k": {"S": "k"}}}).encode()
    for values, expected in [(["identity", "gzip"], "gzip"), (["gzip", "identity"], None)]:
        h = sign({"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": GET}, body,
                 "127.0.0.1:%d" % server.port, "local", "local",
                 datetime.datetime.now(datetime.timezone.utc))
        c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
        c.putrequest("POST", "/", skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            c.putheader(k, v)
        for v in values:
            c.putheader("Accept-Encoding", v)
        c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        r.read()
        assert r.status == 200
        assert r.getheader("content-encoding") == expected, values
        c.close()
