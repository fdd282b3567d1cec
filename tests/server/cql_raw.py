"""A raw CQL native-protocol client for the `quarry serve --cql` tests: envelopes encoded and
decoded by the Python driver's own protocol classes (cassandra.protocol.ProtocolHandler), v5
segments by its cassandra.segment codec, LZ4 by cassandra.connection's functions, over a plain
socket, so that a test can send what no driver would (bad versions, unknown opcodes, oversized
or broken envelopes, thousands of streams at once) and read exactly what came back."""
import io
import re
import socket
import struct

from cassandra.connection import lz4_compress, lz4_decompress
from cassandra.protocol import ProtocolHandler, StartupMessage
from cassandra.segment import Segment, SegmentCodec


def cql_port(srv):
    """The CQL port a server started with --cql HOST:0 printed in its banner."""
    m = re.search(r"CQL: listening on \S+ port (\d+)", srv.banner)
    assert m, "no CQL line in the banner: %r" % srv.banner
    return int(m.group(1))


def split(data):
    """The envelopes of data, each with its header (a truncated last one as it is)."""
    pos = 0
    while pos < len(data):
        length = struct.unpack(">i", data[pos + 5:pos + 9])[0] if len(data) >= pos + 9 else 0
        end = min(len(data), pos + 9 + max(length, 0))
        yield data[pos:end]
        pos = end


def header(version, flags, stream, opcode, length):
    return struct.pack(">BBhBi", version, flags, stream, opcode, length)


class Envelope:
    def __init__(self, version, flags, stream, opcode, body):
        self.version, self.flags, self.stream, self.opcode, self.body = (
            version, flags, stream, opcode, body)

    def decode(self, decompressor=None):
        """The message, as the driver decodes it (an ErrorMessage subclass for ERROR)."""
        return ProtocolHandler.decode_message(self.version & 0x7f, {}, self.stream, self.flags,
                                              self.opcode, self.body, decompressor, None)


class Raw:
    def __init__(self, port, version=4, timeout=10, host="127.0.0.1"):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.version = version
        self.lz4 = False
        self.framed = False
        self.codec = None
        self.wire = b""      # bytes read from the socket, not yet used
        self.payload = b""   # v5: segment payloads, not yet split into envelopes

    def close(self):
        self.sock.close()

    # ---- sending ----

    def encode(self, msg, stream=0, version=None):
        compressor = lz4_compress if self.lz4 and not self.framed and not isinstance(
            msg, StartupMessage) else None
        return ProtocolHandler.encode_message(msg, stream, version or self.version, compressor,
                                              False)

    def send_bytes(self, data):
        """Sends envelope bytes, inside segments once the connection is framed."""
        if self.framed:
            # Whole envelopes share self-contained segments; one larger than a segment goes
            # alone as a run of segments that are not, as drivers send them.
            out = io.BytesIO()
            batch = b""
            for env in split(data):
                if batch and len(batch) + len(env) > Segment.MAX_PAYLOAD_LENGTH:
                    self.codec.encode(out, batch)
                    batch = b""
                if len(env) > Segment.MAX_PAYLOAD_LENGTH:
                    self.codec.encode(out, env)
                else:
                    batch += env
            if batch:
                self.codec.encode(out, batch)
            data = out.getvalue()
        self.sock.sendall(data)

    def send(self, msg, stream=0, version=None):
        self.send_bytes(self.encode(msg, stream, version))

    # ---- receiving ----

    def _read_more(self):
        chunk = self.sock.recv(1 << 16)
        if not chunk:
            raise EOFError("the server closed the connection")
        self.wire += chunk

    def _take(self, n):
        while len(self.wire) < n:
            self._read_more()
        data, self.wire = self.wire[:n], self.wire[n:]
        return data

    def _next_segment(self):
        hl = self.codec.header_length_with_crc
        while len(self.wire) < hl:
            self._read_more()
        h = self.codec.decode_header(io.BytesIO(self.wire[:hl]))
        total = hl + h.payload_length + 4
        while len(self.wire) < total:
            self._read_more()
        buf = io.BytesIO(self.wire[hl:total])
        seg = self.codec.decode(buf, h)
        self.wire = self.wire[total:]
        return seg

    def recv_envelope(self):
        if not self.framed:
            version, flags, stream, opcode, length = struct.unpack(">BBhBi", self._take(9))
            return Envelope(version, flags, stream, opcode, self._take(length))
        while True:
            if len(self.payload) >= 9:
                version, flags, stream, opcode, length = struct.unpack(">BBhBi", self.payload[:9])
                if len(self.payload) >= 9 + length:
                    body = self.payload[9:9 + length]
                    self.payload = self.payload[9 + length:]
                    return Envelope(version, flags, stream, opcode, body)
            self.payload += bytes(self._next_segment().payload)

    def recv(self):
        """(envelope, message) of the next envelope."""
        env = self.recv_envelope()
        return env, env.decode(lz4_decompress if self.lz4 and not self.framed else None)

    def closed(self, timeout=5):
        """Whether the server closes the connection (nothing more arrives) within timeout."""
        self.sock.settimeout(timeout)
        try:
            while True:
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    return True
                self.wire += chunk
        except socket.timeout:
            return False
        except ConnectionResetError:
            return True

    # ---- the handshake ----

    def startup(self, compression=None, stream=0):
        """Sends STARTUP and reads its answer; from v5 the connection is framed after it
        (READY or AUTHENTICATE)."""
        opts = {"COMPRESSION": compression} if compression else {}
        self.send(StartupMessage(cqlversion="3.0.0", options=opts), stream)
        self.lz4 = compression == "lz4"
        env, msg = self.recv()
        if env.opcode in (0x02, 0x03) and self.version >= 5:
            self.framed = True
            self.codec = SegmentCodec(lz4_compress, lz4_decompress) if self.lz4 else SegmentCodec()
        return env, msg
