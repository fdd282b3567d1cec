"""Request smuggling, sent as raw bytes: a request whose framing is ambiguous (Content-Length
with Transfer-Encoding, Content-Lengths that differ), that folds a header line, that puts
bytes RFC 9110 forbids in a header name or value, or that names two Hosts is answered 400
and its connection closed; neither it nor the bytes after it run (no table is created)."""
import datetime
import json
import socket

import pytest

from conftest import raw

CREATE = "DynamoDB_20120810.CreateTable"


def table(name):
    return json.dumps({"TableName": name, "BillingMode": "PAY_PER_REQUEST",
                       "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                       "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}
                      ).encode()


def head(port, extra=b"", length=None):
    """A CreateTable request's head (any key is accepted without credentials)."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ").encode()
    h = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
         b"Content-Type: application/x-amz-json-1.0\r\nX-Amz-Target: " % port
         + CREATE.encode() + b"\r\nX-Amz-Date: " + when + b"\r\n"
         b"Authorization: AWS4-HMAC-SHA256 Credential=local/" + when[:8] +
         b"/us-east-1/dynamodb/aws4_request, SignedHeaders=host;x-amz-date;x-amz-target, "
         b"Signature=" + b"0" * 64 + b"\r\n" + extra)
    if length is not None:
        h += b"Content-Length: %d\r\n" % length
    return h + b"\r\n"


def request(port, name, extra=b""):
    body = table(name)
    return head(port, extra, len(body)) + body


def chunked(body):
    return b"%x\r\n" % len(body) + body + b"\r\n0\r\n\r\n"


def exchange(port, data):
    """Sends data on a new connection; returns what came back and whether the server closed."""
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    s.sendall(data)
    got = b""
    s.settimeout(3)
    closed = False
    try:
        while True:
            c = s.recv(65536)
            if not c:
                closed = True
                break
            got += c
    except socket.timeout:
        pass
    s.close()
    return got, closed


def tables(server):
    return raw(server.url, "DynamoDB_20120810.ListTables", {}).json()["TableNames"]


def smuggled(port, form):
    """The attack of each form: a first CreateTable ("first") whose framing is in doubt,
    with a second ("smuggled") in the bytes after the body the server would read."""
    second = request(port, "smuggled")
    body = table("first")
    if form == "content-length and chunked":
        c = chunked(body)
        return head(port, b"Transfer-Encoding: chunked\r\nContent-Length: %d\r\n" % len(c)) + c + second
    if form == "chunked and content-length":
        c = chunked(body)
        return head(port, b"Content-Length: %d\r\nTransfer-Encoding: chunked\r\n" % (len(c) + 10)) + c + second
    if form == "two content-lengths":
        return head(port, b"Content-Length: %d\r\nContent-Length: %d\r\n"
                    % (len(body), len(body) + len(second))) + body + second
    if form == "a content-length list":
        return head(port, b"Content-Length: %d, %d\r\n" % (len(body), len(body) + 5)) + body + second
    if form == "transfer-encoding not chunked":
        return head(port, b"Transfer-Encoding: identity, chunked\r\n") + chunked(body) + second
    if form == "obsolete line folding":
        return head(port, b"X-Folded: one\r\n two\r\n", len(body)) + body + second
    if form == "folded content-length":
        return head(port, b"X-Pad: a\r\n Content-Length: 0\r\n", len(body)) + body + second
    if form == "two hosts":
        return head(port, b"Host: other.example\r\n", len(body)) + body + second
    if form == "nul in a value":
        return head(port, b"X-Bad: a\x00b\r\n", len(body)) + body + second
    if form == "bare cr in a value":
        return head(port, b"X-Bad: a\rb\r\n", len(body)) + body + second
    if form == "control byte in a value":
        return head(port, b"X-Bad: a\x0bb\r\n", len(body)) + body + second
    if form == "space in a name":
        return head(port, b"Content-Length : 0\r\n", len(body)) + body + second
    if form == "control byte in a name":
        return head(port, b"X-B\x01ad: a\r\n", len(body)) + body + second
    raise AssertionError(form)


FORMS = ["content-length and chunked", "chunked and content-length", "two content-lengths",
         "a content-length list", "transfer-encoding not chunked", "obsolete line folding",
         "folded content-length", "two hosts", "nul in a value", "bare cr in a value",
         "control byte in a value", "space in a name", "control byte in a name"]


@pytest.mark.parametrize("form", FORMS)
def test_smuggling_is_refused_and_the_connection_closed(server, form):
    got, closed = exchange(server.port, smuggled(server.port, form))
    assert got.startswith(b"HTTP/1.1 400 "), got[:200]
    assert got.count(b"HTTP/1.1 ") == 1, got  # one answer: the smuggled request got none
    assert closed, "the connection stayed open after a refused request"
    assert tables(server) == []  # neither request ran


def test_unambiguous_requests_still_run_pipelined(server):
    # The forms that are fine: chunked alone, equal Content-Lengths, obs-text in a value.
    body = table("chunky")
    data = (head(server.port, b"Transfer-Encoding: chunked\r\n") + chunked(body)
            + head(server.port, b"Content-Length: %d\r\nX-Text: caf\xc3\xa9\r\n" % len(table("twice")),
                   len(table("twice"))) + table("twice")
            + request(server.port, "third"))
    got, _ = exchange(server.port, data)
    assert got.count(b"HTTP/1.1 200 ") == 3, got
    assert sorted(tables(server)) == ["chunky", "third", "twice"]
