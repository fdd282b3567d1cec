"""The CQL frame codec (src/cqlwire/cql_frame.c, cql_codec.c, cql_value.c) against the Python
driver's own implementation (Debian python3-cassandra): v5 segments built by the driver's
cassandra/segment.py are decoded by ours and ours by it, plain and LZ4, CRCs and all; v4 LZ4
bodies both ways; requests the driver encodes (ProtocolHandler.encode_message) decoded by our
request decoders; and responses of every kind that ours write decoded by the driver's
ProtocolHandler.decode_message, values of every CQL type included. The C side is the test
programs $QUARRY_BUILD/tests/test_cql_frame and test_cql_codec run in a harness mode (stdin to
stdout); no server is started (the CQL listener comes later)."""
import datetime
import io
import json
import os
import random
import subprocess
import uuid
from decimal import Decimal

import pytest

cassandra = pytest.importorskip("cassandra", reason="python3-cassandra is not installed")
pytest.importorskip("lz4", reason="python3-lz4 is not installed")

from cassandra import ConsistencyLevel, WriteType  # noqa: E402
from cassandra.connection import lz4_compress, lz4_decompress  # noqa: E402
from cassandra.protocol import (AuthResponseMessage, BatchMessage, ExecuteMessage,  # noqa: E402
                                OptionsMessage, PrepareMessage, ProtocolHandler, QueryMessage,
                                RegisterMessage, StartupMessage, _UNSET_VALUE)
from cassandra.query import BatchType  # noqa: E402
from cassandra.segment import CrcException, Segment, SegmentCodec  # noqa: E402
from cassandra.util import Date, Duration, Time  # noqa: E402


def program(name):
    build = os.environ.get("QUARRY_BUILD", os.path.join(os.getcwd(), "build"))
    path = os.path.join(build, "tests", name)
    if not os.path.exists(path):
        pytest.fail(f"{path} not built (run make with the same BUILD first)")
    return path


def run(name, *args, data=b"", ok=True):
    p = subprocess.run([program(name), *args], input=data, capture_output=True, timeout=120)
    if ok:
        assert p.returncode == 0, p.stderr.decode()
    return p


def codec(lz4):
    return SegmentCodec(lz4_compress, lz4_decompress) if lz4 else SegmentCodec()


def driver_segments(data, lz4):
    """The segments the driver writes for one payload (one envelope)."""
    out = io.BytesIO()
    codec(lz4).encode(out, data)
    return out.getvalue()


def driver_read_segments(wire, lz4):
    """(self_contained, payload) of each segment, read by the driver."""
    c = codec(lz4)
    buf = io.BytesIO(wire)
    segments = []
    while buf.tell() < len(wire):
        header = c.decode_header(buf)
        segment = c.decode(buf, header)
        segments.append((segment.is_self_contained, bytes(segment.payload)))
    return segments


def payloads():
    rnd = random.Random(22)
    yield b""
    yield b"\x04\x00\x00\x01\x05\x00\x00\x00\x00"
    yield bytes(rnd.getrandbits(8) for _ in range(5000))
    yield b"SELECT * FROM events WHERE user_id = ? " * 400
    yield bytes(rnd.getrandbits(8) for _ in range(Segment.MAX_PAYLOAD_LENGTH))
    yield b"abcdefgh" * 40000  # 320 000 bytes: three segments


@pytest.mark.parametrize("lz4", [False, True], ids=["plain", "lz4"])
def test_our_segments_read_by_the_driver(lz4):
    for data in payloads():
        wire = run("test_cql_frame", "--encode-segments", "lz4" if lz4 else "plain", data=data).stdout
        segments = driver_read_segments(wire, lz4)
        assert b"".join(p for _, p in segments) == data
        single = len(data) <= Segment.MAX_PAYLOAD_LENGTH
        assert len(segments) == (1 if single else -(-len(data) // Segment.MAX_PAYLOAD_LENGTH))
        assert all(sc == single for sc, _ in segments)
        if lz4 and data and data[:8] == b"abcdefgh":
            assert len(wire) < len(data) // 10  # it was compressed, not sent as it is


@pytest.mark.parametrize("lz4", [False, True], ids=["plain", "lz4"])
def test_driver_segments_read_by_ours(lz4):
    for data in payloads():
        wire = driver_segments(data, lz4)
        out = run("test_cql_frame", "--decode-segments", "lz4" if lz4 else "plain", data=wire)
        lines = out.stdout.decode().split("\n")[:-1]
        got = [(int(line.split(" ")[1]), bytes.fromhex(line.split(" ")[2] if line.count(" ") == 2 else ""))
               for line in lines]
        assert b"".join(p for _, p in got) == data
        want = driver_read_segments(wire, lz4)
        assert [(bool(sc), p) for sc, p in got] == want


@pytest.mark.parametrize("lz4", [False, True], ids=["plain", "lz4"])
def test_a_flipped_bit_is_refused_by_both(lz4):
    wire = bytearray(driver_segments(b"SELECT release_version FROM system.local" * 3, lz4))
    header = 5 if lz4 else 3
    for spot in (0, header, header + 3, len(wire) - 1):
        bad = bytearray(wire)
        bad[spot] ^= 0x04
        p = run("test_cql_frame", "--decode-segments", "lz4" if lz4 else "plain", data=bytes(bad),
                ok=False)
        assert p.returncode == 1 and b"CRC mismatch" in p.stderr, (spot, p.stderr)
        with pytest.raises(CrcException):
            driver_read_segments(bytes(bad), lz4)


def test_v4_lz4_bodies_both_ways():
    for data in (b"x", b"rows " * 1000, bytes(range(256)) * 50):
        ours = run("test_cql_frame", "--compress-body", data=data).stdout
        assert lz4_decompress(ours) == data
        assert int.from_bytes(ours[:4], "big") == len(data)
        theirs = lz4_compress(data)
        assert run("test_cql_frame", "--decompress-body", data=theirs).stdout == data
    p = run("test_cql_frame", "--decompress-body", data=lz4_compress(b"abc" * 100)[:-2], ok=False)
    assert p.returncode == 1 and b"not a valid LZ4 block" in p.stderr


def envelopes_of(messages, version, compressor=None):
    return [ProtocolHandler.encode_message(m, stream, version, compressor, False)
            for stream, m in enumerate(messages, start=1)]


def request_messages(version):
    v5 = version >= 5
    big = "SELECT * FROM t WHERE k IN (" + ", ".join(["?"] * 60000) + ")"
    return [
        StartupMessage(cqlversion="3.0.0", options={"COMPRESSION": "lz4", "DRIVER_NAME": "py"}),
        OptionsMessage(),
        QueryMessage("SELECT * FROM events WHERE user_id = 'u1'", ConsistencyLevel.LOCAL_QUORUM,
                     serial_consistency_level=ConsistencyLevel.LOCAL_SERIAL, fetch_size=100,
                     paging_state=b"\x01\x02\x03", timestamp=1234567890123,
                     keyspace="ks" if v5 else None),
        QueryMessage(big, ConsistencyLevel.ONE),
        PrepareMessage("INSERT INTO t (k, v) VALUES (?, ?)", keyspace="ks" if v5 else None),
        ExecuteMessage(b"\xab\xcd\xef", [b"\x00\x00\x00\x07", None, _UNSET_VALUE],
                       ConsistencyLevel.QUORUM, fetch_size=10,
                       result_metadata_id=b"\xee\x01" if v5 else None),
        BatchMessage(BatchType.UNLOGGED,
                     [(False, "INSERT INTO t (k) VALUES (?)", [b"a"]), (True, b"\x01\x02", [])],
                     ConsistencyLevel.QUORUM, serial_consistency_level=ConsistencyLevel.SERIAL,
                     timestamp=5),
        RegisterMessage(["SCHEMA_CHANGE", "STATUS_CHANGE", "TOPOLOGY_CHANGE"]),
        AuthResponseMessage(b"\x00cassandra\x00cassandra"),
    ]


def check_requests(lines, version):
    got = [json.loads(line) for line in lines]
    assert [g["opcode"] for g in got] == ["STARTUP", "OPTIONS", "QUERY", "QUERY", "PREPARE",
                                          "EXECUTE", "BATCH", "REGISTER", "AUTH_RESPONSE"]
    assert [g["stream"] for g in got] == list(range(1, 10))
    assert all("error" not in g for g in got), got
    assert all(g["version"] == version for g in got)
    startup, _, query, big, prepare, execute, batch, register, auth = got
    assert startup["options"] == {"CQL_VERSION": "3.0.0", "COMPRESSION": "lz4", "DRIVER_NAME": "py"}
    assert startup["lz4"] is True
    assert query["query"] == "SELECT * FROM events WHERE user_id = 'u1'"
    assert query["consistency"] == "LOCAL_QUORUM" and query["serial"] == "LOCAL_SERIAL"
    assert query["page_size"] == 100 and query["paging_state"] == "010203"
    assert query["timestamp"] == 1234567890123 and query["values"] == []
    assert query["keyspace"] == ("ks" if version >= 5 else None)
    assert len(big["query"]) == len("SELECT * FROM t WHERE k IN ()") + 60000 * 3 - 2
    assert big["consistency"] == "ONE" and big["page_size"] == -1 and big["timestamp"] is None
    assert prepare["query"] == "INSERT INTO t (k, v) VALUES (?, ?)"
    assert prepare["keyspace"] == ("ks" if version >= 5 else None)
    assert execute["id"] == "abcdef" and execute["values"] == ["00000007", None, "unset"]
    assert execute["result_metadata_id"] == ("ee01" if version >= 5 else None)
    assert execute["consistency"] == "QUORUM" and execute["page_size"] == 10
    assert batch["type"] == 1 and batch["consistency"] == "QUORUM" and batch["timestamp"] == 5
    assert batch["statements"] == [
        {"prepared": False, "query": "INSERT INTO t (k) VALUES (?)", "values": ["61"]},
        {"prepared": True, "query": "0102", "values": []}]
    assert register["events"] == 7
    assert auth["token"] == b"\x00cassandra\x00cassandra".hex()


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "lz4"])
def test_driver_v4_requests_decoded_by_ours(compressed):
    wire = b"".join(envelopes_of(request_messages(4), 4, lz4_compress if compressed else None))
    out = run("test_cql_codec", "--decode-requests", "v4", data=wire)
    check_requests(out.stdout.decode().splitlines(), 4)


@pytest.mark.parametrize("lz4", [False, True], ids=["plain", "lz4"])
def test_driver_v5_requests_decoded_by_ours(lz4):
    envelopes = envelopes_of(request_messages(5), 5)
    # Small envelopes share one self-contained segment, as drivers send them; the large
    # QUERY goes alone over several segments.
    wire = driver_segments(b"".join(envelopes[:3]), lz4)
    wire += driver_segments(envelopes[3], lz4)
    wire += driver_segments(b"".join(envelopes[4:]), lz4)
    out = run("test_cql_codec", "--decode-requests", "lz4" if lz4 else "plain", data=wire)
    check_requests(out.stdout.decode().splitlines(), 5)


def split_envelopes(data):
    envs = []
    pos = 0
    while pos < len(data):
        version, flags = data[pos], data[pos + 1]
        stream = int.from_bytes(data[pos + 2:pos + 4], "big", signed=True)
        opcode = data[pos + 4]
        length = int.from_bytes(data[pos + 5:pos + 9], "big")
        envs.append((version, flags, stream, opcode, data[pos + 9:pos + 9 + length]))
        pos += 9 + length
    assert pos == len(data)
    return envs


def decoded_responses(version, lz4):
    out = run("test_cql_codec", "--write-responses", str(version), "lz4" if lz4 else "plain").stdout
    if version >= 5:
        out = b"".join(p for _, p in driver_read_segments(out, lz4))
    messages = []
    for byte0, flags, stream, opcode, body in split_envelopes(out):
        assert byte0 == 0x80 | version
        messages.append((stream, ProtocolHandler.decode_message(
            version, {}, stream, flags, opcode, body, lz4_decompress if lz4 else None, None)))
    return messages


@pytest.mark.parametrize("version,lz4", [(4, False), (4, True), (5, False), (5, True)],
                         ids=["v4", "v4-lz4", "v5", "v5-lz4"])
def test_our_responses_decoded_by_the_driver(version, lz4):
    msgs = decoded_responses(version, lz4)
    assert [s for s, _ in msgs] == list(range(1, 22)) + [-1, -1, -1]
    m = [msg for _, msg in msgs]
    ready, supported, authenticate, challenge, success = m[:5]
    assert type(ready).__name__ == "ReadyMessage"
    assert supported.cql_versions == ["3.4.5"]
    assert supported.options["PROTOCOL_VERSIONS"] == ["3/v3", "4/v4", "5/v5"]
    assert supported.options["COMPRESSION"] == ["lz4"]
    assert authenticate.authenticator == "org.apache.cassandra.auth.PasswordAuthenticator"
    assert challenge.challenge == b"challenge" and success.token == "welcome"  # the driver reads it as text

    unavailable, wt, rt, rf, wf, ff, ae, up, syntax, protocol = m[5:15]
    assert unavailable.code == 0x1000 and unavailable.message == "Cannot achieve consistency"
    assert unavailable.info == {"consistency": ConsistencyLevel.QUORUM, "required_replicas": 3,
                                "alive_replicas": 1}
    assert wt.info["consistency"] == ConsistencyLevel.LOCAL_QUORUM
    assert (wt.info["received_responses"], wt.info["required_responses"]) == (1, 2)
    assert wt.info["write_type"] == WriteType.BATCH_LOG
    assert rt.info == {"consistency": ConsistencyLevel.ONE, "received_responses": 0,
                       "required_responses": 1, "data_retrieved": True}
    assert rf.info["failures"] == 1 and rf.info["consistency"] == ConsistencyLevel.ALL
    assert (rf.info["received_responses"], rf.info["required_responses"]) == (2, 3)
    if version >= 5:
        assert rf.info["error_code_map"] == {"127.0.0.1": 1}
        assert wf.info["error_code_map"] == {"127.0.0.1": 1}
    assert wf.info["failures"] == 1 and wf.info["consistency"] == ConsistencyLevel.TWO
    assert ff.info == {"keyspace": "ks", "function": "fn", "arg_types": ["int", "text"]}
    assert ae.info == {"keyspace": "ks", "table": "tbl"}
    assert up.info == b"\xca\xfe\xba\xbe"
    assert syntax.code == 0x2000 and syntax.message == "line 1:0 no viable alternative"
    assert protocol.code == 0x000A and "(3/v3, 4/v4, 5/v5)" in protocol.message

    void, rows, keyspace, prepared, table_change, function_change = m[15:21]
    assert void.kind == 1
    assert rows.trace_id == uuid.UUID(bytes=bytes([0xa0] + list(range(1, 16))))
    assert rows.warnings == ["first warning", "second"]
    assert rows.paging_state == b"\xde\xad"
    names = rows.column_names
    assert names[:3] == ["c_ascii", "c_bigint", "c_blob"] and names[-1] == "c_custom"
    assert rows.column_metadata[0][:2] == ("ks", "every")
    row = dict(zip(names, rows.parsed_rows[0]))
    assert row["c_ascii"] == "ascii" and row["c_bigint"] == -9000000000
    assert row["c_blob"] == b"\x00\x01\xff" and row["c_boolean"] is True
    assert row["c_counter"] == 42 and row["c_decimal"] == Decimal("-12.345")
    assert row["c_double"] == 2.5 and row["c_float"] == -0.5 and row["c_int"] == -7
    assert row["c_timestamp"] == datetime.datetime(2020, 9, 13, 12, 26, 40, 123000)
    assert row["c_uuid"] == uuid.UUID("123e4567-e89b-42d3-a456-426614174000")
    assert row["c_text"] == "h\u00e9"
    assert row["c_varint"] == -123456789012345678901234567890
    assert row["c_timeuuid"] == uuid.UUID("123e4567-e89b-11d3-a456-426614174000")
    assert row["c_inet"] == "192.168.0.1"
    assert row["c_date"] == Date(datetime.date(2021, 1, 1))
    assert row["c_time"] == Time(3723000000004)
    assert row["c_smallint"] == -300 and row["c_tinyint"] == -5
    assert row["c_duration"] == Duration(1, 2, 3000000000)
    assert list(row["c_list"]) == [1, 2] and dict(row["c_map"]) == {"a": 1}
    assert set(row["c_set"]) == {"x", "y"}
    assert (row["c_udt"].street, row["c_udt"].zip) == ("main", 12345)
    assert tuple(row["c_tuple"]) == (3, "z") and row["c_custom"] == b"\xca\xfe"

    assert keyspace.new_keyspace == "ks"
    assert prepared.query_id == b"\x01\x02\x03"
    assert prepared.result_metadata_id == (b"\x04\x05" if version >= 5 else None)
    assert prepared.pk_indexes == [1, 0]
    assert [(c[0], c[1], c[2]) for c in prepared.bind_metadata] == [("ks", "t", "b"), ("ks", "t", "a")]
    assert [c[2] for c in prepared.column_metadata] == ["v"]
    assert table_change.schema_change_event == {"target_type": "TABLE", "change_type": "CREATED",
                                                "keyspace": "ks", "table": "t"}
    fn = function_change.schema_change_event
    assert fn["target_type"] == "FUNCTION" and fn["function"].name == "fn"
    assert fn["function"].argument_types == ["int", "text"]

    topology, status, schema = m[21:]
    assert topology.event_type == "TOPOLOGY_CHANGE"
    assert topology.event_args == {"change_type": "NEW_NODE", "address": ("127.0.0.1", 9042)}
    assert status.event_args == {"change_type": "DOWN", "address": ("::1", 9043)}
    assert schema.event_args == {"target_type": "KEYSPACE", "change_type": "DROPPED", "keyspace": "ks"}
