"""CORS and who may reach a server. With credentials, a browser script's requests (they
carry Origin) may read quarry's answers from any origin, as they may DynamoDB's, and a
preflight OPTIONS is allowed what it asks for. Without credentials (any key accepted), a
request must be addressed to a loopback Host or one --allow-host names (no DNS
rebinding), and only the server's own origin, loopback pages on its port and
--cors-origin origins are answered; the others are refused before anything runs.
Requests without Origin get no CORS headers."""
import datetime
import http.client
import json

from conftest import KEYS, raw, sign

LIST = "DynamoDB_20120810.ListTables"
CREATE = "DynamoDB_20120810.CreateTable"
CORS = ["access-control-allow-origin", "access-control-expose-headers", "access-control-max-age",
        "access-control-allow-methods", "access-control-allow-headers"]
KEY, SECRET = KEYS["default"]
TABLE = {"TableName": "browsed", "BillingMode": "PAY_PER_REQUEST",
         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]}


def request(server, method, headers):
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        c.request(method, "/", headers=headers)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def call(server, target, body, host=None, origin=None, signed=False):
    """A POST / addressed to host (default the server's 127.0.0.1:port), from origin."""
    host = host or "127.0.0.1:%d" % server.port
    data = json.dumps(body).encode()
    h = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": target}
    if origin:
        h["Origin"] = origin
    h = sign(h, data, host, KEY if signed else "local", SECRET if signed else "local",
             datetime.datetime.now(datetime.timezone.utc))
    c = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        c.putrequest("POST", "/", skip_host=True, skip_accept_encoding=True)
        for k, v in h.items():
            c.putheader(k, v)
        c.putheader("Content-Length", str(len(data)))
        c.endheaders(data)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, json.loads(r.read())
    finally:
        c.close()


def tables(server, signed=False):
    return call(server, LIST, {}, signed=signed)[2]["TableNames"]


# ---- with credentials: any origin, as DynamoDB ----

def test_no_origin_no_cors_headers(server, signed_server):
    for srv in (server, signed_server):
        for method in ("GET", "OPTIONS", "POST"):
            _, headers, _ = request(srv, method, {})
            assert not [h for h in CORS if h in headers], method
    r = raw(server.url, LIST, {})
    assert r.status == 200 and not [h for h in CORS if h in r.headers]


def test_signed_call_from_a_browser_origin(signed_server):
    r = raw(signed_server.url, LIST, {}, key=KEY, secret=SECRET,
            headers={"Origin": "http://localhost:3000"})
    assert r.status == 200 and r.json() == {"TableNames": []}
    assert r.headers["access-control-allow-origin"] == "*"
    expose = r.headers["access-control-expose-headers"].lower().split(",")
    assert "x-amzn-requestid" in expose and "x-amz-crc32" in expose
    assert "access-control-max-age" not in r.headers
    # An error is readable too, or the browser would hide DynamoDB's error type.
    r = raw(signed_server.url, LIST, {"Limit": 0}, key=KEY, secret=SECRET,
            headers={"Origin": "http://evil.example"})
    assert r.status == 400 and r.headers["access-control-allow-origin"] == "*"


def test_preflight_echoes_what_it_asks(signed_server):
    asked = {"Origin": "http://localhost:3000", "Access-Control-Request-Method": "POST",
             "Access-Control-Request-Headers": "authorization, content-type, x-amz-date, x-amz-target"}
    status, headers, body = request(signed_server, "OPTIONS", asked)
    assert status == 200 and body == b""
    assert headers["access-control-allow-origin"] == "*"
    assert headers["access-control-allow-methods"] == "POST"
    assert headers["access-control-allow-headers"] == asked["Access-Control-Request-Headers"]
    assert int(headers["access-control-max-age"]) > 0
    # A GET with the same headers is no preflight: it is allowed, but nothing is echoed.
    status, headers, _ = request(signed_server, "GET", asked)
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-methods" not in headers and "access-control-max-age" not in headers


def test_signed_requests_may_name_any_host(signed_server):
    status, _, doc = call(signed_server, CREATE, TABLE, host="dynamodb.example:443", signed=True)
    assert status == 200, doc
    assert tables(signed_server, signed=True) == ["browsed"]


# ---- without credentials: loopback hosts, own and loopback origins ----

def test_a_foreign_host_is_refused_without_credentials(server):
    for host in ("evil.example", "evil.example:%d" % server.port, "10.1.2.3:%d" % server.port,
                 "localhost.evil.example"):
        status, headers, doc = call(server, CREATE, TABLE, host=host)
        assert status == 400, (host, doc)
        assert doc["__type"].endswith("#AccessDeniedException")
        name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
        assert "not a loopback name or address" in doc["Message"]
        assert "DNS rebinding" in doc["Message"]
        assert "--allow-host %s " % name in doc["Message"], doc["Message"]
    assert tables(server) == []  # nothing ran
    for host in ("localhost:%d" % server.port, "127.0.0.1:%d" % server.port,
                 "[::1]:%d" % server.port, "app.localhost:%d" % server.port):
        assert call(server, LIST, {}, host=host)[0] == 200, host


def test_allow_host_answers_that_name(start):
    srv = start("--allow-host", "devbox.example", "--allow-host", "quarry.internal")
    assert call(srv, CREATE, TABLE, host="devbox.example:%d" % srv.port)[0] == 200
    assert call(srv, LIST, {}, host="quarry.internal")[0] == 200
    assert call(srv, LIST, {}, host="evil.example")[0] == 400
    # The console's own origin at that name may call it.
    status, headers, _ = call(srv, LIST, {}, host="devbox.example:%d" % srv.port,
                              origin="http://devbox.example:%d" % srv.port)
    assert status == 200
    assert headers["access-control-allow-origin"] == "http://devbox.example:%d" % srv.port


def test_a_foreign_origin_is_refused_without_credentials(server):
    for origin in ("http://evil.example", "http://localhost:3000", "http://127.0.0.1:1",
                   "null", "http://evil.example:%d" % server.port):
        status, headers, doc = call(server, CREATE, TABLE, origin=origin)
        assert status == 400, (origin, doc)
        assert doc["__type"].endswith("#AccessDeniedException")
        assert "--cors-origin %s " % origin in doc["Message"], doc["Message"]
        assert "access-control-allow-origin" not in headers
        asked = {"Origin": origin, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "authorization, x-amz-target"}
        status, headers, _ = request(server, "OPTIONS", asked)
        assert status == 400 and not [h for h in CORS if h in headers]
    assert tables(server) == []


def test_loopback_origins_on_the_same_port_are_answered(server):
    for origin in ("http://localhost:%d" % server.port, "http://127.0.0.1:%d" % server.port,
                   "http://[::1]:%d" % server.port):
        status, headers, _ = call(server, LIST, {}, origin=origin)
        assert status == 200, origin
        assert headers["access-control-allow-origin"] == origin
        assert "origin" in headers["vary"].lower()
        status, headers, _ = request(server, "OPTIONS", {
            "Origin": origin, "Access-Control-Request-Method": "POST"})
        assert status == 200 and headers["access-control-allow-origin"] == origin


def test_cors_origin_allows_that_origin(start):
    srv = start("--cors-origin", "http://localhost:3000", "--cors-origin", "https://app.example")
    for origin in ("http://localhost:3000", "https://app.example"):
        status, headers, _ = call(srv, LIST, {}, origin=origin)
        assert status == 200 and headers["access-control-allow-origin"] == origin
    assert call(srv, CREATE, TABLE, origin="http://localhost:3000")[0] == 200
    assert call(srv, LIST, {}, origin="http://localhost:3001")[0] == 400
    assert call(srv, LIST, {}, origin="https://app.example.evil")[0] == 400
