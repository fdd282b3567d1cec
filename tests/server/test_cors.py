"""CORS: a browser script's requests (they carry Origin) may read quarry's answers, as
they may DynamoDB's, and a preflight OPTIONS is allowed what it asks for; requests
without Origin get no CORS headers."""
import http.client

from conftest import raw

LIST = "DynamoDB_20120810.ListTables"
CORS = ["access-control-allow-origin", "access-control-expose-headers", "access-control-max-age",
        "access-control-allow-methods", "access-control-allow-headers"]


def request(server, method, headers):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        c.request(method, "/", headers=headers)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def test_no_origin_no_cors_headers(server):
    for method in ("GET", "OPTIONS", "POST"):
        _, headers, _ = request(server, method, {})
        assert not [h for h in CORS if h in headers], method
    r = raw(server.url, LIST, {})
    assert r.status == 200 and not [h for h in CORS if h in r.headers]


def test_signed_call_from_a_browser_origin(server):
    r = raw(server.url, LIST, {}, headers={"Origin": "http://localhost:3000"})
    assert r.status == 200 and r.json() == {"TableNames": []}
    assert r.headers["access-control-allow-origin"] == "*"
    expose = r.headers["access-control-expose-headers"].lower().split(",")
    assert "x-amzn-requestid" in expose and "x-amz-crc32" in expose
    assert "access-control-max-age" not in r.headers
    # An error is readable too, or the browser would hide DynamoDB's error type.
    r = raw(server.url, LIST, {"Limit": 0}, headers={"Origin": "http://localhost:3000"})
    assert r.status == 400 and r.headers["access-control-allow-origin"] == "*"


def test_preflight_echoes_what_it_asks(server):
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "authorization, content-type, x-amz-date, x-amz-target"}
    status, headers, body = request(server, "OPTIONS", asked)
    assert status == 200 and body == b""
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-methods"] == "POST"
    assert headers["access-control-allow-headers"] == asked["Access-Control-Request-Headers"]
    assert int(headers["access-control-max-age"]) > 0
    # A GET with the same headers is no preflight: it is allowed, but nothing is echoed.
    status, headers, _ = request(server, "GET", asked)
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-methods" not in headers and "access-control-max-age" not in headers
