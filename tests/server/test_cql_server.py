"""`quarry serve --cql`: the native protocol's server side, through a raw socket client
(cql_raw.py: the Python driver's own encoders and decoders, no driver logic). Version
negotiation and the refusal drivers downgrade on, OPTIONS, STARTUP with and without LZ4 on v4
and v5 (v5 switching to segments after READY or AUTHENTICATE), PasswordAuthenticator against
--cql-credentials, requests out of turn, unknown opcodes, oversized and malformed envelopes
(answered, the connection kept where the spec allows), thousands of streams in flight on one
connection, SCHEMA_CHANGE events pushed to another connection, USE, and the start-up
refusals."""
import random
import socket
import struct
import subprocess
import threading

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")
pytest.importorskip("lz4", reason="python3-lz4 is not installed")

from cassandra import ConsistencyLevel  # noqa: E402
from cassandra.query import BatchType  # noqa: E402
from cassandra.protocol import (AuthenticateMessage, AuthResponseMessage, BatchMessage,  # noqa: E402
                                AuthSuccessMessage, ErrorMessage, EventMessage, OptionsMessage,
                                QueryMessage, ReadyMessage, RegisterMessage, ResultMessage,
                                StartupMessage, SupportedMessage)

from conftest import launch, quarry_bin  # noqa: E402
from cql_raw import Raw, header  # noqa: E402

PROTOCOL_ERROR = 0x000A
AUTH_ERROR = 0x0100
INVALID = 0x2200
LOCAL = "SELECT release_version FROM system.local"
ROLES = "# roles of the CQL tests\nalice:wonder land\n\nbob:builder\n"


@pytest.fixture
def cql(cql_server):
    return cql_server().port


@pytest.fixture
def cql_auth(cql_server):
    return cql_server(roles=ROLES).port


def ready(port, version=4, compression=None):
    c = Raw(port, version)
    env, msg = c.startup(compression)
    assert isinstance(msg, ReadyMessage), msg
    return c


def query(c, text, stream=1):
    c.send(QueryMessage(text, ConsistencyLevel.ONE), stream)
    return c.recv()


def assert_error(msg, code, text=None):
    assert isinstance(msg, ErrorMessage), msg
    assert msg.code == code, (hex(msg.code), msg.message)
    if text is not None:
        assert msg.message == text


# ---- negotiation ----

@pytest.mark.parametrize("version", [3, 4, 5])
def test_options_before_startup_answers_supported(cql, version):
    c = Raw(cql, version)
    c.send(OptionsMessage(), 7)
    env, msg = c.recv()
    assert env.version == 0x80 | version and env.stream == 7
    assert isinstance(msg, SupportedMessage)
    assert msg.options["COMPRESSION"] == ["lz4"]
    assert msg.options["PROTOCOL_VERSIONS"] == ["3/v3", "4/v4", "5/v5"]
    assert msg.cql_versions and msg.cql_versions[0].startswith("3.")


@pytest.mark.parametrize("version", [6, 65, 66])
def test_a_newer_version_is_refused_in_v5_and_the_connection_closed(cql, version):
    c = Raw(cql, 5)
    c.sock.sendall(header(version, 0, 3, 0x05, 0))
    env = c.recv_envelope()
    assert env.version == 0x85 and env.stream == 3
    msg = env.decode()
    assert_error(msg, PROTOCOL_ERROR, "Invalid or unsupported protocol version (%d); supported "
                                      "versions are (3/v3, 4/v4, 5/v5)" % version)
    # The Python driver downgrades on these words; gocql on the envelope's version.
    assert "unsupported protocol version" in msg.message
    assert c.closed()


def test_a_retired_version_is_refused_in_its_own_framing(cql):
    c = Raw(cql, 2)
    c.sock.sendall(struct.pack(">BBbBi", 2, 0, 5, 0x05, 0))
    version, flags, stream, opcode, length = struct.unpack(">BBbBi", c._take(8))
    assert (version, stream, opcode) == (0x82, 5, 0x00)
    body = c._take(length)
    assert struct.unpack(">i", body[:4])[0] == PROTOCOL_ERROR
    assert b"Invalid or unsupported protocol version (2)" in body
    assert c.closed()


def test_the_python_driver_downgrades_to_v5_on_its_own(cql):
    """Without an explicit version the driver starts above v5 (its DSE versions) and steps down
    on our PROTOCOL_ERROR until STARTUP succeeds: it ends on v5."""
    from cassandra.cluster import Cluster
    from cassandra.policies import RoundRobinPolicy
    cluster = Cluster(["127.0.0.1"], port=cql, load_balancing_policy=RoundRobinPolicy(),
                      schema_metadata_enabled=False, token_metadata_enabled=False)
    assert cluster.protocol_version > 5
    try:
        session = cluster.connect()
        assert cluster.protocol_version == 5
        assert session.execute(LOCAL).one().release_version.startswith("4.")
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("version,compression", [(3, None), (4, None), (4, "lz4"), (5, None),
                                                 (5, "lz4")],
                         ids=["v3", "v4", "v4-lz4", "v5", "v5-lz4"])
def test_startup_then_queries(cql, version, compression):
    c = ready(cql, version, compression)
    assert c.framed == (version >= 5)
    env, msg = query(c, LOCAL, 9)
    assert env.stream == 9 and env.version == 0x80 | version
    assert isinstance(msg, ResultMessage), msg
    assert msg.column_names == ["release_version"] and len(msg.parsed_rows) == 1
    if compression and version == 4:
        assert env.flags & 0x01  # the body came compressed
    # OPTIONS stays allowed once ready (drivers' heartbeat).
    c.send(OptionsMessage(), 10)
    env, msg = c.recv()
    assert env.stream == 10 and isinstance(msg, SupportedMessage)


@pytest.mark.parametrize("compression", [None, "lz4"])
def test_a_request_larger_than_a_segment_is_reassembled(cql, compression):
    """A v5 envelope past a segment's 128 KiB comes as a run of segments that are not
    self-contained; the server puts it together and answers it."""
    c = ready(cql, 5, compression)
    env, msg = query(c, LOCAL + " " * 300000, 4)
    assert env.stream == 4 and isinstance(msg, ResultMessage), msg
    env, msg = query(c, LOCAL, 5)
    assert env.stream == 5 and isinstance(msg, ResultMessage)


def test_a_request_before_startup_is_refused_and_the_connection_kept(cql):
    c = Raw(cql, 4)
    env, msg = query(c, LOCAL, 2)
    assert env.stream == 2
    assert_error(msg, PROTOCOL_ERROR, "Unexpected message QUERY, expecting STARTUP or OPTIONS")
    c.send(RegisterMessage(["SCHEMA_CHANGE"]), 3)
    assert_error(c.recv()[1], PROTOCOL_ERROR,
                 "Unexpected message REGISTER, expecting STARTUP or OPTIONS")
    env, msg = c.startup()
    assert isinstance(msg, ReadyMessage)
    assert isinstance(query(c, LOCAL)[1], ResultMessage)


def test_a_second_startup_is_refused(cql):
    c = ready(cql, 5)
    c.send(StartupMessage(cqlversion="3.0.0", options={}), 1)
    assert_error(c.recv()[1], PROTOCOL_ERROR,
                 "Unexpected message STARTUP, the connection is already initialized")
    assert isinstance(query(c, LOCAL)[1], ResultMessage)


def test_startup_options_are_judged(cql):
    c = Raw(cql, 4)
    c.send(StartupMessage(cqlversion="3.0.0", options={"COMPRESSION": "snappy"}), 1)
    assert_error(c.recv()[1], PROTOCOL_ERROR)
    body = struct.pack(">H", 0)  # an empty [string map]: no CQL_VERSION
    c.sock.sendall(header(4, 0, 2, 0x01, len(body)) + body)
    assert_error(c.recv()[1], PROTOCOL_ERROR, "Missing value CQL_VERSION in STARTUP message")
    c.startup()
    assert isinstance(query(c, LOCAL)[1], ResultMessage)


def test_another_version_after_startup_is_refused(cql):
    c = ready(cql, 4)
    c.sock.sendall(header(3, 0, 6, 0x05, 0))
    env, msg = c.recv()
    assert env.version == 0x84 and env.stream == 6
    assert_error(msg, PROTOCOL_ERROR, "Invalid message version. Got 3 but previous messages on "
                                      "this connection had version 4")
    assert isinstance(query(c, LOCAL)[1], ResultMessage)


# ---- bad envelopes ----

@pytest.mark.parametrize("version", [4, 5])
def test_unknown_opcodes_and_responses_are_refused_and_skipped(cql, version):
    c = ready(cql, version)
    c.send_bytes(header(version, 0, 11, 0x04, 3) + b"abc")
    env, msg = c.recv()
    assert env.stream == 11
    assert_error(msg, PROTOCOL_ERROR, "Unknown opcode 4")
    c.send_bytes(header(0x80 | version, 0, 12, 0x07, 0))  # a QUERY marked as a response
    env, msg = c.recv()
    assert env.stream == 12
    assert_error(msg, PROTOCOL_ERROR, "Wrong protocol direction (expected REQUEST, got RESPONSE) "
                                      "for opcode 7 (QUERY)")
    assert isinstance(query(c, LOCAL, 13)[1], ResultMessage)


@pytest.mark.parametrize("version", [4, 5])
def test_an_oversized_envelope_is_refused_and_skipped(cql_server, version):
    c = ready(cql_server("--cql-max-frame", "4096").port, version)
    big = "SELECT * FROM system.local WHERE k = '" + "x" * 20000 + "'"
    c.send(QueryMessage(big, ConsistencyLevel.ONE), 21)
    env, msg = c.recv()
    assert env.stream == 21
    assert isinstance(msg, ErrorMessage)
    assert msg.message.startswith("Request is too big: length ")
    assert msg.message.endswith("exceeds maximum allowed length 4096.")
    # Its bytes were dropped: the next request is read as the next envelope.
    env, msg = query(c, LOCAL, 22)
    assert env.stream == 22 and isinstance(msg, ResultMessage)


def test_an_oversized_header_is_answered_before_its_body_arrives(cql_server):
    c = ready(cql_server("--cql-max-frame", "4096").port, 4)
    c.sock.sendall(header(4, 0, 5, 0x07, 200 << 20))  # 200 MiB announced, none sent
    env, msg = c.recv()
    assert env.stream == 5 and msg.message.startswith("Request is too big")


@pytest.mark.parametrize("version", [4, 5])
def test_malformed_bodies_are_protocol_errors_and_the_connection_kept(cql, version):
    c = ready(cql, version)
    c.send_bytes(header(version, 0, 31, 0x0B, 5) + b"\x00\x01\x00\x09x")  # REGISTER, cut short
    env, msg = c.recv()
    assert env.stream == 31
    assert_error(msg, PROTOCOL_ERROR)
    assert msg.message.startswith("REGISTER message: ")
    c.send_bytes(header(version, 0, 32, 0x07, 6) + b"\x00\x00\x00\x50ab")  # QUERY, cut short
    env, msg = c.recv()
    assert env.stream == 32
    assert_error(msg, PROTOCOL_ERROR)
    assert isinstance(query(c, LOCAL, 33)[1], ResultMessage)


def test_a_bad_lz4_body_is_refused_and_the_connection_kept(cql):
    c = ready(cql, 4, "lz4")
    c.sock.sendall(header(4, 0x01, 8, 0x07, 8) + b"\x00\x00\x10\x00\xff\xff\xff\xff")
    env, msg = c.recv()
    assert env.stream == 8
    assert_error(msg, PROTOCOL_ERROR)
    assert isinstance(query(c, LOCAL, 9)[1], ResultMessage)


def test_a_broken_segment_closes_the_connection(cql):
    c = ready(cql, 5)
    c.sock.sendall(b"\x05\x00\x02\x00\x00\x00" + b"\x00" * 10)  # a header whose CRC24 is wrong
    env, msg = c.recv()
    assert_error(msg, PROTOCOL_ERROR)
    assert c.closed()


@pytest.mark.parametrize("version,stage", [(4, "before"), (4, "after"), (5, "after")])
def test_random_bytes_are_answered_or_cut_and_others_served_on(cql, version, stage):
    """Garbage on a connection, before STARTUP or after it (inside segments from v5): the server
    answers what it can, closes the connection when it cannot read on, and serves the others."""
    rnd = random.Random(22 + version)
    bystander = ready(cql, 4)
    for round in range(30):
        c = Raw(cql, version)
        if stage == "after":
            c.startup()
        junk = bytes(rnd.getrandbits(8) for _ in range(rnd.randrange(1, 3000)))
        if rnd.random() < 0.5:  # a plausible header with a random body
            junk = header(version, rnd.getrandbits(8), rnd.getrandbits(15), rnd.randrange(0, 17),
                          len(junk)) + junk
        try:
            c.send_bytes(junk) if c.framed else c.sock.sendall(junk)
            c.closed(timeout=0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        c.close()
        env, msg = query(bystander, LOCAL, round)
        assert env.stream == round and isinstance(msg, ResultMessage)


# ---- many streams ----

@pytest.mark.parametrize("version,sync", [(4, True), (5, True), (5, False)],
                         ids=["v4", "v5", "v5-no-sync"])
def test_thousands_of_streams_in_flight_are_each_answered_once(cql_server, version, sync):
    c = ready(cql_server(*([] if sync else ["--no-sync"])).port, version, "lz4")
    n = 3000  # past the per-connection cap: the server stops reading, then reads on
    wire = b"".join(c.encode(QueryMessage(LOCAL, ConsistencyLevel.ONE), s) for s in range(n))
    sender = threading.Thread(target=c.send_bytes, args=(wire,))
    sender.start()
    seen = []
    for _ in range(n):
        env, msg = c.recv()
        assert isinstance(msg, ResultMessage), msg
        seen.append(env.stream)
    sender.join()
    assert sorted(seen) == list(range(n))


@pytest.mark.parametrize("sync", [True, False], ids=["workers", "no-sync"])
def test_clients_that_leave_while_workers_run_their_requests(cql_server, sync):
    """A BATCH may write, so a durable server runs it on a worker; a client that sends many and
    goes at once leaves them running there, cancelled, and the server serves on. Without sync
    they run on the loop, their answers due at the end of the turn."""
    port = cql_server(*([] if sync else ["--no-sync"])).port
    c = ready(port, 4)
    query(c, "CREATE KEYSPACE gone WITH replication = {'class': 'SimpleStrategy', "
             "'replication_factor': 1}")
    query(c, "CREATE TABLE gone.t (k int PRIMARY KEY, v int)", 2)
    batch = BatchMessage(BatchType.UNLOGGED, [(False, "INSERT INTO gone.t (k, v) VALUES (1, 2)",
                                               [])], ConsistencyLevel.ONE)
    for round in range(20):
        leaver = ready(port, 4 if round % 2 else 5)
        leaver.send_bytes(b"".join(leaver.encode(batch, s) for s in range(300)))
        leaver.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        leaver.close()  # a reset, with the answers unread
    # Serving on is the point, not how soon: a loaded machine may still be running the
    # leavers' first batches (durable writes) when this one queues behind them.
    c.sock.settimeout(60)
    c.send(batch, 3)
    env, msg = c.recv()
    assert env.stream == 3 and isinstance(msg, (ResultMessage, ErrorMessage)), msg
    assert isinstance(query(c, LOCAL, 4)[1], ResultMessage)


# ---- authentication ----

def sasl(user, password):
    return b"\x00" + user.encode() + b"\x00" + password.encode()


@pytest.mark.parametrize("version", [4, 5])
def test_password_authentication(cql_auth, version):
    c = Raw(cql_auth, version)
    env, msg = c.startup("lz4")
    assert isinstance(msg, AuthenticateMessage)
    assert msg.authenticator == "org.apache.cassandra.auth.PasswordAuthenticator"
    assert c.framed == (version >= 5)
    env, msg = query(c, LOCAL, 2)
    assert_error(msg, PROTOCOL_ERROR, "Unexpected message QUERY, expecting SASL_RESPONSE")
    c.send(AuthResponseMessage(sasl("alice", "wonder")), 3)
    env, msg = c.recv()
    assert env.stream == 3
    assert_error(msg, AUTH_ERROR, "Provided username alice and/or password are incorrect")
    c.send(AuthResponseMessage(sasl("mallory", "wonder land")), 4)
    assert_error(c.recv()[1], AUTH_ERROR, "Provided username mallory and/or password are "
                                          "incorrect")
    c.send(AuthResponseMessage(b"\x00alice\x00"), 5)
    assert_error(c.recv()[1], AUTH_ERROR, "Password must not be null")
    c.send(AuthResponseMessage(sasl("alice", "wonder land")), 6)
    env, msg = c.recv()
    assert env.stream == 6 and isinstance(msg, AuthSuccessMessage)
    assert isinstance(query(c, LOCAL, 7)[1], ResultMessage)


def test_no_credentials_given_is_an_authentication_error(cql_auth):
    c = Raw(cql_auth, 4)
    c.startup()
    c.send(AuthResponseMessage(b""), 1)
    assert_error(c.recv()[1], AUTH_ERROR, "Password must not be null")
    c.send(AuthResponseMessage(b"bob\x00builder"), 2)  # no leading NUL: no user read
    assert_error(c.recv()[1], AUTH_ERROR, "Authentication ID must not be null")
    c.send(AuthResponseMessage(sasl("bob", "builder")), 3)
    assert isinstance(c.recv()[1], AuthSuccessMessage)


def test_without_credentials_startup_is_ready(cql):
    c = Raw(cql, 4)
    env, msg = c.startup()
    assert isinstance(msg, ReadyMessage)
    c.send(AuthResponseMessage(sasl("alice", "x")), 1)
    assert_error(c.recv()[1], PROTOCOL_ERROR,
                 "Unexpected message AUTH_RESPONSE, the connection is already initialized")


def refused(tmp_path, *args):
    p = launch(tmp_path / "d", tmp_path / "refused.log", *args)
    assert isinstance(p, subprocess.Popen) and not hasattr(p, "banner"), "the server started"
    assert p.returncode == 2
    return (tmp_path / "refused.log").read_text()


def test_a_non_loopback_listener_needs_credentials(tmp_path):
    log = refused(tmp_path, "--cql", "0.0.0.0:0")
    assert "refusing to serve CQL on 0.0.0.0:0 without --cql-credentials" in log


@pytest.mark.parametrize("text,why", [
    ("alice\n", "line 1: expected username:password"),
    ("# c\n:pw\n", "line 2: the username is empty"),
    ("alice:\n", "line 1: the password is empty"),
    ("a:1\na:2\n", "line 2: the username is given twice"),
    ("# only a comment\n", "no username:password line"),
])
def test_a_bad_credentials_file_is_refused(tmp_path, text, why):
    path = tmp_path / "roles"
    path.write_text(text)
    log = refused(tmp_path, "--cql", "127.0.0.1:0", "--cql-credentials", str(path))
    assert "CQL credentials: " in log and why in log, log


def test_the_frame_cap_is_judged(tmp_path):
    log = refused(tmp_path, "--cql", "127.0.0.1:0", "--cql-max-frame", "12")
    assert "--cql-max-frame wants a number of bytes" in log


# ---- events ----

def test_schema_changes_are_pushed_to_registered_connections(cql):
    watcher = ready(cql, 5)
    watcher.send(RegisterMessage(["SCHEMA_CHANGE", "STATUS_CHANGE", "TOPOLOGY_CHANGE"]), 1)
    env, msg = watcher.recv()
    assert env.stream == 1 and isinstance(msg, ReadyMessage)
    quiet = ready(cql, 4)  # not registered: gets nothing
    other = ready(cql, 4, "lz4")
    env, msg = query(other, "CREATE KEYSPACE shop WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
    assert isinstance(msg, ResultMessage), msg
    env, msg = query(other, "CREATE TABLE shop.orders (id int PRIMARY KEY, total int)", 2)
    assert isinstance(msg, ResultMessage), msg
    events = []
    for _ in range(2):
        env, msg = watcher.recv()
        assert env.stream == -1 and isinstance(msg, EventMessage)
        events.append((msg.event_type, msg.event_args))
    assert events[0] == ("SCHEMA_CHANGE", {"change_type": "CREATED", "target_type": "KEYSPACE",
                                           "keyspace": "shop"})
    assert events[1] == ("SCHEMA_CHANGE", {"change_type": "CREATED", "target_type": "TABLE",
                                           "keyspace": "shop", "table": "orders"})
    assert not quiet.closed(timeout=0.5) and quiet.wire == b""


def test_use_sets_the_connections_keyspace(cql):
    c = ready(cql, 4)
    query(c, "CREATE KEYSPACE ks1 WITH replication = {'class': 'SimpleStrategy', "
             "'replication_factor': 1}")
    env, msg = query(c, "USE ks1", 2)
    assert isinstance(msg, ResultMessage) and msg.new_keyspace == "ks1"
    env, msg = query(c, "CREATE TABLE t (k int PRIMARY KEY)", 3)
    assert isinstance(msg, ResultMessage), msg
    other = ready(cql, 4)  # another connection has no keyspace
    env, msg = query(other, "CREATE TABLE t2 (k int PRIMARY KEY)", 4)
    assert_error(msg, INVALID)


# ---- shutdown ----

def test_sigterm_closes_idle_connections_and_exits_cleanly(cql_server):
    srv = cql_server()
    c = ready(srv.port, 4)
    framed = ready(srv.port, 5)
    srv.proc.send_signal(15)
    assert c.closed(timeout=10)
    assert framed.closed(timeout=10)
    assert srv.proc.wait(timeout=30) == 0
    with pytest.raises(OSError):
        socket.create_connection((srv.host, srv.port), timeout=2).recv(1)


def test_sigterm_answers_what_was_read_then_closes(cql_server):
    """Requests already read when the drain begins are run and answered; then the connection
    closes and the server exits 0."""
    srv = cql_server()
    c = ready(srv.port, 4)
    query(c, "CREATE KEYSPACE d WITH replication = {'class': 'SimpleStrategy', "
             "'replication_factor': 1}")
    query(c, "CREATE TABLE d.t (k int PRIMARY KEY, v int)", 2)
    batch = BatchMessage(BatchType.UNLOGGED, [(False, "INSERT INTO d.t (k, v) VALUES (1, 2)",
                                               [])], ConsistencyLevel.ONE)
    c.send_bytes(b"".join(c.encode(batch, s) for s in range(500)))
    srv.proc.send_signal(15)
    seen = set()
    with pytest.raises(EOFError):
        while True:
            env, msg = c.recv()
            assert isinstance(msg, ResultMessage), msg
            assert env.stream not in seen
            seen.add(env.stream)
    assert seen <= set(range(500))
    assert srv.proc.wait(timeout=30) == 0


def test_an_ipv6_loopback_listener(cql_server):
    if not socket.has_ipv6:
        pytest.skip("no IPv6")
    srv = cql_server(listen="[::1]:0")
    assert "cqlsh ::1 %d" % srv.port in srv.banner
    c = Raw(srv.port, 5, host="::1")
    c.send(OptionsMessage(), 1)
    env, msg = c.recv()
    assert env.stream == 1 and isinstance(msg, SupportedMessage)
    c.startup("lz4")
    assert isinstance(query(c, LOCAL, 2)[1], ResultMessage)


def test_the_banner_says_how_to_connect(cql_server):
    srv = cql_server()
    assert "cqlsh 127.0.0.1 %d" % srv.port in srv.banner
    srv = cql_server(roles=ROLES)
    assert "cqlsh 127.0.0.1 %d -u alice -p PASSWORD" % srv.port in srv.banner
    assert quarry_bin()
