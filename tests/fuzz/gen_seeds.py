#!/usr/bin/env python3
"""gen_seeds.py — writes the seed corpora of the libFuzzer harnesses in tests/fuzz.

    python3 tests/fuzz/gen_seeds.py OUTDIR [--e2e] [--typeconf]

OUTDIR/call:   one op-index byte + a request body (fuzz_call), hand-written requests on
               the harness's baseline tables "Fuzz" and "Flat"; with --e2e also every request
               the end-to-end tests in tests/e2e send (recorded by running them through
               pytest with QUARRY_BIN set; their op names are mapped to fuzz_call's byte).
OUTDIR/expr:   mode byte + expression + NUL + values + NUL + names (fuzz_expr), from
               tests/expr/cases/*.json.
OUTDIR/number: number texts, single and "a<NUL>b" pairs (fuzz_number).
OUTDIR/put_fast: PutItem items (and what may follow them in the body) for fuzz_put_fast:
               plain string-and-number items on pk S + sk N, and a few it must decline.
OUTDIR/seq:    the call seeds joined in twos and threes with NUL bytes (fuzz_seq).
OUTDIR/typeconf (with --typeconf): every call seed with each member replaced by null, a
               number, a string, [], {}, [5], [{}], true, a huge number, or removed: a few
               thousand fuzz_call inputs to replay with tests/fuzz/replay.py.
OUTDIR/wire:   credentials files, signed-request headers, bodies and targets (fuzz_wire).
OUTDIR/cql_parse: CQL statements (fuzz_cql_parse): every string of the case tables in
               tests/unit/cql/test_cql_parse.c (inputs, canonical prints, messages) and a few
               scripts of several statements.
OUTDIR/cql_frame: for fuzz_cql_frame, each mode byte with its input: requests of every opcode
               as the Python driver (python3-cassandra, when installed) encodes them in v4
               envelopes (plain and LZ4 bodies) and v5 segments (plain and LZ4), the bare
               bodies, and value bytes and type [option]s.
OUTDIR/storedrow: for fuzz_storedrow, a picker seed byte and a stored row's text: the rows
               that CQL statements (every column type, collections frozen and not, UDTs,
               tuples, static rows, TTLs, counters, deletions) leave in the engine, read back
               with `quarry call Scan` from a `quarry serve --cql` run in a temporary data
               directory (needs QUARRY_BIN naming a gcc-built quarry and python3-cassandra),
               each as the engine writes it, with \\u escapes for every non-ASCII character, and
               with white space; and a few hand-written rows.
It does not run the fuzzers; see README.md.
"""
import copy
import hashlib
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# qr_operations() order (src/ops/optable.c); fuzz_call picks data[0] % (len + 1).
OPS = ["CreateTable", "DescribeTable", "ListTables", "DeleteTable", "UpdateTable", "UpdateTimeToLive",
       "DescribeTimeToLive", "DescribeEndpoints", "DescribeLimits", "TagResource", "UntagResource",
       "ListTagsOfResource", "PutItem", "GetItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
       "BatchWriteItem", "TransactWriteItems", "TransactGetItems"]


def read_ops():
    """The operation names in optable.c's order, so the byte mapping follows the source."""
    path = os.path.join(ROOT, "src", "ops", "optable.c")
    names = []
    try:
        for line in open(path):
            line = line.strip()
            if line.startswith('{"') and "op_" in line:
                names.append(line.split('"')[1])
    except OSError:
        pass
    return names or OPS


def write(d, data):
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


S = lambda v: {"S": v}  # noqa: E731
N = lambda v: {"N": str(v)}  # noqa: E731
KEY = {"pk": S("p1"), "sk": S("s4")}


def call_seeds():
    yield "CreateTable", {"TableName": "New1", "BillingMode": "PAY_PER_REQUEST",
                          "AttributeDefinitions": [{"AttributeName": "a", "AttributeType": "S"},
                                                   {"AttributeName": "b", "AttributeType": "N"}],
                          "KeySchema": [{"AttributeName": "a", "KeyType": "HASH"},
                                        {"AttributeName": "b", "KeyType": "RANGE"}],
                          "GlobalSecondaryIndexes": [{"IndexName": "G", "KeySchema": [
                              {"AttributeName": "b", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}],
                          "Tags": [{"Key": "k", "Value": "v"}]}
    yield "DescribeTable", {"TableName": "Fuzz"}
    yield "ListTables", {"Limit": 1, "ExclusiveStartTableName": "Flat"}
    yield "DeleteTable", {"TableName": "Flat"}
    yield "UpdateTable", {"TableName": "Flat", "AttributeDefinitions": [{"AttributeName": "c", "AttributeType": "N"}],
                          "GlobalSecondaryIndexUpdates": [{"Create": {"IndexName": "ByC", "KeySchema": [
                              {"AttributeName": "c", "KeyType": "HASH"}], "Projection": {"ProjectionType": "KEYS_ONLY"}}}]}
    yield "UpdateTable", {"TableName": "Fuzz", "GlobalSecondaryIndexUpdates": [{"Delete": {"IndexName": "Gsi"}}]}
    yield "UpdateTimeToLive", {"TableName": "Flat", "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "c"}}
    yield "DescribeTimeToLive", {"TableName": "Fuzz"}
    yield "DescribeEndpoints", {}
    yield "DescribeLimits", {}
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/Fuzz"
    yield "TagResource", {"ResourceArn": arn, "Tags": [{"Key": "a", "Value": "b"}]}
    yield "UntagResource", {"ResourceArn": arn, "TagKeys": ["a"]}
    yield "ListTagsOfResource", {"ResourceArn": arn}
    yield "PutItem", {"TableName": "Fuzz", "Item": {"pk": S("p9"), "sk": S("x"), "lsk": N(3), "gpk": S("g1"),
                                                  "gsk": N("1e5"), "t": S("T"), "r": S("EU"), "score": N(7),
                                                  "player": {"B": "AQID"}, "m": {"M": {"a": {"L": [N(1)]}}},
                                                  "exp": N(1)},
                      "ConditionExpression": "attribute_not_exists(pk) OR #v < :v",
                      "ExpressionAttributeNames": {"#v": "v"}, "ExpressionAttributeValues": {":v": S("zz")},
                      "ReturnValues": "ALL_OLD", "ReturnConsumedCapacity": "INDEXES",
                      "ReturnItemCollectionMetrics": "SIZE"}
    yield "PutItem", {"TableName": "Flat", "Item": {"id": N(1), "c": N(2)}, "Expected": {"c": {"Exists": False}}}
    yield "GetItem", {"TableName": "Fuzz", "Key": KEY, "ProjectionExpression": "l[1].a, #v, ns",
                      "ExpressionAttributeNames": {"#v": "v"}, "ConsistentRead": True}
    yield "GetItem", {"TableName": "Flat", "Key": {"id": N(3)}, "AttributesToGet": ["c"]}
    yield "UpdateItem", {"TableName": "Fuzz", "Key": KEY,
                         "UpdateExpression": "SET v = :v, l[5] = :v, n = if_not_exists(n, :z) + :one, "
                                             "l = list_append(l, :l) REMOVE gpk ADD ns :ns DELETE ss :ss",
                         "ConditionExpression": "size(l) > :z AND begins_with(v, :p)",
                         "ExpressionAttributeValues": {":v": S("w"), ":z": N(0), ":one": N(1), ":l": {"L": [N(2)]},
                                                       ":ns": {"NS": ["3"]}, ":ss": {"SS": ["x"]}, ":p": S("val")},
                         "ReturnValues": "UPDATED_NEW"}
    yield "UpdateItem", {"TableName": "Fuzz", "Key": KEY, "UpdateExpression": "SET gsk = :n, score = :n, r = :r",
                         "ExpressionAttributeValues": {":n": N(42), ":r": S("AS")}, "ReturnValues": "ALL_OLD"}
    yield "UpdateItem", {"TableName": "Flat", "Key": {"id": N(4)},
                         "AttributeUpdates": {"c": {"Action": "ADD", "Value": N(5)}, "b": {"Action": "DELETE"}}}
    yield "DeleteItem", {"TableName": "Fuzz", "Key": KEY, "ConditionExpression": "attribute_exists(v)",
                         "ReturnValues": "ALL_OLD", "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    yield "Query", {"TableName": "Fuzz", "KeyConditionExpression": "pk = :p AND sk BETWEEN :a AND :b",
                    "FilterExpression": "contains(v, :s) OR NOT attribute_type(l, :t)",
                    "ExpressionAttributeValues": {":p": S("p1"), ":a": S("s0"), ":b": S("s9"), ":s": S("1"),
                                                  ":t": S("L")},
                    "Limit": 2, "ScanIndexForward": False, "Select": "COUNT"}
    yield "Query", {"TableName": "Fuzz", "IndexName": "Lsi", "KeyConditionExpression": "pk = :p AND lsk >= :n",
                    "ExpressionAttributeValues": {":p": S("p0"), ":n": N(1)}, "Select": "ALL_ATTRIBUTES"}
    yield "Query", {"TableName": "Fuzz", "IndexName": "Gsi", "KeyConditionExpression": "gpk = :g AND gsk < :n",
                    "ExpressionAttributeValues": {":g": S("g1"), ":n": N(8)},
                    "ExclusiveStartKey": {"pk": S("p1"), "sk": S("s1"), "gpk": S("g1"), "gsk": N("1.5")}}
    yield "Query", {"TableName": "Fuzz", "IndexName": "Multi",
                    "KeyConditionExpression": "t = :t AND r = :r AND score = :s AND begins_with(player, :b)",
                    "ExpressionAttributeValues": {":t": S("T"), ":r": S("EU"), ":s": N(101), ":b": {"B": "AQ=="}}}
    yield "Query", {"TableName": "Flat", "KeyConditions": {"id": {"ComparisonOperator": "EQ",
                                                                "AttributeValueList": [N(2)]}},
                    "QueryFilter": {"c": {"ComparisonOperator": "GT", "AttributeValueList": [N(1)]}}}
    yield "Scan", {"TableName": "Fuzz", "Segment": 1, "TotalSegments": 3, "Limit": 5,
                   "FilterExpression": "score IN (:a, :b) AND size(ns) = :two",
                   "ExpressionAttributeValues": {":a": N(100), ":b": N(101), ":two": N(2)}}
    yield "Scan", {"TableName": "Fuzz", "IndexName": "Multi", "ProjectionExpression": "player, t",
                   "ExclusiveStartKey": {"pk": S("p0"), "sk": S("s0"), "t": S("T"), "r": S("US"), "score": N(100),
                                         "player": {"B": "AQIA"}}}
    yield "Scan", {"TableName": "Flat", "ScanFilter": {"b": {"ComparisonOperator": "EQ",
                                                           "AttributeValueList": [{"BOOL": True}]}},
                   "ConditionalOperator": "OR"}
    yield "BatchGetItem", {"RequestItems": {"Fuzz": {"Keys": [KEY, {"pk": S("p0"), "sk": S("s0")}],
                                                   "ProjectionExpression": "v"},
                                            "Flat": {"Keys": [{"id": N(1)}], "ConsistentRead": True}}}
    yield "BatchWriteItem", {"RequestItems": {"Fuzz": [{"PutRequest": {"Item": {"pk": S("b"), "sk": S("1"),
                                                                              "gpk": S("g"), "gsk": N(1)}}},
                                                     {"DeleteRequest": {"Key": KEY}}],
                                              "Flat": [{"PutRequest": {"Item": {"id": N(99)}}}]},
                             "ReturnConsumedCapacity": "TOTAL", "ReturnItemCollectionMetrics": "SIZE"}
    yield "TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": "Flat", "Item": {"id": N(50), "c": N(1)}}},
        {"Update": {"TableName": "Fuzz", "Key": KEY, "UpdateExpression": "ADD score :n",
                    "ExpressionAttributeValues": {":n": N(1)}}},
        {"Delete": {"TableName": "Fuzz", "Key": {"pk": S("p0"), "sk": S("s0")}}},
        {"ConditionCheck": {"TableName": "Flat", "Key": {"id": N(2)}, "ConditionExpression": "c = :c",
                            "ExpressionAttributeValues": {":c": N(20)},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}}],
        "ClientRequestToken": "tok-1", "ReturnConsumedCapacity": "INDEXES"}
    yield "TransactGetItems", {"TransactItems": [{"Get": {"TableName": "Fuzz", "Key": KEY,
                                                          "ProjectionExpression": "#v",
                                                          "ExpressionAttributeNames": {"#v": "v"}}},
                                                 {"Get": {"TableName": "Flat", "Key": {"id": N(1)}}}]}


def record_e2e():
    """Runs tests/e2e with a recorder around Quarry.raw_opts; returns (op, text) pairs."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
    import pytest
    import quarry_cli
    seen = []
    original = quarry_cli.Quarry.raw_opts

    def recording(self, options, op, request):
        seen.append((op, request if isinstance(request, str) else json.dumps(request)))
        return original(self, options, op, request)

    quarry_cli.Quarry.raw_opts = recording
    pytest.main(["-q", "-p", "no:cacheprovider", os.path.join(ROOT, "tests", "e2e")])
    return seen


def expr_seeds():
    """(mode, text, values, names) from the expression case files; modes as in fuzz_expr.c."""
    mode_of = {"condition": 0, "update": 2, "projection": 5, "key": 7}
    legacy = {"expected": 11, "filter": 12, "attribute_updates": 13, "attributes_to_get": 14,
              "key_conditions": 15}
    legacy_field = {"expected": "expected", "filter": "filter", "attribute_updates": "updates",
                    "attributes_to_get": "names_list", "key_conditions": "conditions"}
    cases_dir = os.path.join(ROOT, "tests", "expr", "cases")
    for fn in sorted(os.listdir(cases_dir)):
        doc = json.load(open(os.path.join(cases_dir, fn)))
        kind = doc.get("kind")
        values = json.dumps(doc.get("values", {})).encode()
        names = json.dumps(doc.get("names", {})).encode()
        for case in doc.get("cases", []):
            k = case.get("kind", kind)
            if k in legacy:
                field = case.get(legacy_field[k])
                if field is not None:
                    yield bytes([legacy[k]]) + json.dumps(field).encode()
                continue
            if "expr" not in case or k not in mode_of:
                continue
            text = case["expr"].encode()
            yield bytes([mode_of[k]]) + text + b"\0" + values + b"\0" + names
            if k == "key":
                # The same text against multi-attribute schemas (mode 9, variant bits above).
                yield bytes([9 | 0x10]) + text + b"\0" + values + b"\0" + names
            if k == "condition":
                yield bytes([0]) + text  # default values and names


NUMBERS = ["0", "-0", "1", "-1", "0.5", "1e5", "1E-130", "9.9999999999999999999999999999999999999E+125",
           "-9.9999999999999999999999999999999999999E+125", "12345678901234567890123456789012345678",
           "0.00000000000000000000000000000000000001", "000123.4500", ".5", "5.", "+7", "1e+0", "1e-0",
           "99999999999999999999999999999999999999", "1E126", "1E-131", "123456789012345678901234567890123456789",
           "-1.5e-7", "3.14159", "100", "1e2", "0e999999", "1e-129"]


WIRE = [
    b"\0[default]\naws_access_key_id = AKID\naws_secret_access_key = SECRET\n# c\n; c\n[p2]\n"
    b"aws_access_key_id=K2\naws_secret_access_key=S2\n",
    b"\0[only]\naws_access_key_id = AKID\n",
    b"\1host: localhost:8000\nx-amz-date: 20150830T123600Z\n"
    b"x-amz-target: DynamoDB_20120810.ListTables\ncontent-type: application/x-amz-json-1.0\n"
    b"authorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/dynamodb/aws4_request, "
    b"SignedHeaders=content-type;host;x-amz-date;x-amz-target, "
    b"Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7\n\n{}",
    b"\1host: h\nauthorization: AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/2015/us-east-1/dynamodb/aws4_request\n\n",
    b"\2{\"TableName\": \"Fuzz\"}",
    b"\2{\"RequestItems\": {\"A\": [], \"Bbb\": {}}}",
    b"\2{\"TransactItems\": [{\"Put\": {\"TableName\": \"T1\"}}, {\"Get\": {\"TableName\": \"T2\"}}]}",
    b"\2DynamoDB_20120810.PutItem",
    b"\3\x01abc\x00\x00",
    b"\3\x80\x81\x23\x00",
]


def paths(v, p=()):
    yield p
    if isinstance(v, dict):
        for k, x in v.items():
            yield from paths(x, p + (k,))
    elif isinstance(v, list):
        for i, x in enumerate(v):
            yield from paths(x, p + (i,))


def replaced(v, p, r):
    """A copy of v with the member at path p replaced by r (removed if r is REMOVE)."""
    v = copy.deepcopy(v)
    t = v
    for k in p[:-1]:
        t = t[k]
    if r is REMOVE:
        if isinstance(t, dict):
            del t[p[-1]]
        else:
            t.pop(p[-1])
    else:
        t[p[-1]] = r
    return v


REMOVE = object()
CONFUSE = [None, 5, -1, "x", "", [], {}, [5], [{}], True, 1e300, 2 ** 64, REMOVE]


# fuzz_put_fast seeds beside the generated plain items: shapes the fast path declines.
PUT_FAST_EXTRA = [
    '{"pk":{"S":"a"},"sk":{"N":"1"},"b":{"BOOL":true},"m":{"M":{"x":{"S":"y"}}}}',
    '{"pk":{"S":"a"},"sk":{"N":"1"},"l":{"L":[{"N":"1"}]},"ss":{"SS":["a","b"]}}',
    '{"pk":{"S":"a"},"sk":{"N":"1"},"t":{"S":"caf\u00e9"}}',
    '{"pk":{"S":"a"},"sk":{"N":"1"}},"ReturnConsumedCapacity":"TOTAL"',
    '{"pk":{"S":"a"},"sk":{"N":"1"}},"ConditionExpression":"attribute_not_exists(pk)"',
    '{"pk":{"S":""},"sk":{"N":"1"}}',
    '{"sk":{"N":"1"}}',
]


def cql_seeds():
    """The C string literals of the CQL parser's test tables, adjacent ones joined."""
    import re
    text = open(os.path.join(ROOT, "tests", "unit", "cql", "test_cql_parse.c")).read()
    text = text[text.index("ok_cases[] = {"):text.index("static void check_ok")]
    lit = re.compile(r'"((?:[^"\\]|\\.)*)"')
    seeds, cur, last_end = [], None, 0
    for m in lit.finditer(text):
        between = text[last_end:m.start()]
        part = m.group(1).encode().decode("unicode_escape").encode("latin-1")
        if cur is not None and between.strip() == "":
            cur += part
        else:
            if cur is not None:
                seeds.append(cur)
            cur = part
        last_end = m.end()
    if cur is not None:
        seeds.append(cur)
    scripts = [b";\n".join(seeds[i:i + 4]) for i in range(0, len(seeds), 4)]
    return seeds + scripts


def cql_frame_seeds():
    """fuzz_cql_frame inputs; the driver builds the requests, so none without it."""
    try:
        from cassandra import ConsistencyLevel
        from cassandra.connection import lz4_compress, lz4_decompress
        from cassandra.protocol import (AuthResponseMessage, BatchMessage, ExecuteMessage,
                                        OptionsMessage, PrepareMessage, ProtocolHandler,
                                        QueryMessage, RegisterMessage, StartupMessage)
        from cassandra.query import BatchType
        from cassandra.segment import SegmentCodec
    except ImportError:
        print("cql: python3-cassandra (and python3-lz4) not installed, no request seeds")
        return []
    import io

    def messages(v):
        ks = "ks" if v >= 5 else None
        return [
            StartupMessage(cqlversion="3.0.0", options={"COMPRESSION": "lz4"}),
            OptionsMessage(),
            QueryMessage("SELECT * FROM t WHERE k = 1", ConsistencyLevel.LOCAL_QUORUM,
                         serial_consistency_level=ConsistencyLevel.SERIAL, fetch_size=100,
                         paging_state=b"\x01\x02", timestamp=99, keyspace=ks),
            PrepareMessage("SELECT * FROM t WHERE k = ?", keyspace=ks),
            ExecuteMessage(b"\xab\xcd", [b"\x00\x00\x00\x07", None], ConsistencyLevel.ONE,
                           fetch_size=10, result_metadata_id=b"\xee" if v >= 5 else None),
            BatchMessage(BatchType.LOGGED, [(False, "INSERT INTO t (k) VALUES (?)", [b"a"]),
                                            (True, b"\x01", [])], ConsistencyLevel.QUORUM),
            RegisterMessage(["SCHEMA_CHANGE", "STATUS_CHANGE"]),
            AuthResponseMessage(b"\x00cassandra\x00cassandra"),
        ]

    ops = [0x01, 0x0F, 0x05, 0x07, 0x09, 0x0A, 0x0D, 0x0B]  # fuzz_cql_frame's request_ops
    seeds = []
    for v in (3, 4, 5):
        envs = [ProtocolHandler.encode_message(m, i, v, None, False)
                for i, m in enumerate(messages(v)) if not (v < 5 and getattr(m, "keyspace", None))]
        if v == 4:
            seeds.append(b"\x00" + b"".join(envs))
            packed = [ProtocolHandler.encode_message(m, i, v, lz4_compress, False)
                      for i, m in enumerate(messages(v))]
            seeds.append(b"\x00" + b"".join(packed))
        for e in envs:
            seeds.append(b"\x00" + e)
            seeds.append(b"\x04" + bytes([ops.index(e[4]) * 3 + v - 3, e[1]]) + e[9:])
        if v == 5:
            for lz4, mode in ((False, b"\x01"), (True, b"\x02")):
                c = SegmentCodec(lz4_compress, lz4_decompress) if lz4 else SegmentCodec()
                out = io.BytesIO()
                c.encode(out, b"".join(envs))
                big = ProtocolHandler.encode_message(
                    QueryMessage("SELECT " + "x, " * 50000 + "y FROM t", ConsistencyLevel.ONE), 9, 5,
                    None, False)
                c.encode(out, big)
                seeds.append(mode + b"\x07" + out.getvalue())
                seeds.append(b"\x03" + out.getvalue())
    values = [b"\x00", b"\x80", b"\xff\x7f", b"\x00\x00\x00\x02\x00\x96", b"\x02\x04\x06",
              b"\x00\x00\x00\x02\x00\x00\x00\x01a\xff\xff\xff\xff",
              b"\x00\x21\x00\x0d\x00\x20\x00\x09",
              b"\x00\x31\x00\x02\x00\x09\x00\x30\x00\x02ks\x00\x04addr\x00\x01\x00\x01z\x00\x09",
              b"\x00\x00\x00\x29org.apache.cassandra.db.marshal.BytesType", b"-12.345", b"1E-70",
              b"123456789012345678901234567890"]
    seeds += [b"\x05" + v for v in values]
    return seeds


STORED_ROWS_CQL = [
    "CREATE TYPE addr (street text, nums frozen<list<int>>, \"Zip\" int)",
    "CREATE TABLE every (k int, c text, a ascii, bi bigint, bl blob, bo boolean, d date, dec decimal,"
    " db double, du duration, f float, i inet, si smallint, t time, ts timestamp, tu timeuuid,"
    " ti tinyint, u uuid, vc varchar, vi varint, st text static, PRIMARY KEY (k, c))",
    "CREATE TABLE coll (k int PRIMARY KEY, l list<text>, s set<int>, m map<text, frozen<list<int>>>,"
    " fl frozen<list<int>>, fs frozen<set<text>>, fm frozen<map<int, text>>, tup tuple<int, text, double>,"
    " ad addr, fad frozen<addr>, nested list<frozen<map<text, tuple<int, frozen<set<int>>>>>>)",
    "CREATE TABLE cnt (k int PRIMARY KEY, c counter, d counter)",
    "CREATE TABLE comp (a int, b text, c1 int, c2 text, v text, s int static,"
    " PRIMARY KEY ((a, b), c1, c2)) WITH CLUSTERING ORDER BY (c1 DESC, c2 ASC)",
    "INSERT INTO every (k, c, a, bi, bl, bo, d, dec, db, du, f, i, si, t, ts, tu, ti, u, vc, vi, st)"
    " VALUES (1, 'first', 'ascii', -9223372036854775808, 0xcafe, true, '2024-02-29', -1.50e-3, 2.5e300,"
    " 1y2mo3d4h5m6s7ms, -0.5, '::1', -32768, '23:59:59.999999999', '2024-01-01T00:00:00Z',"
    " now(), -128, uuid(), 'caf\u00e9 \u20ac \"q\" back\\slash', 123456789012345678901234567890, 'static')",
    "INSERT INTO every (k, c, vc) VALUES (1, 'second', 'tab\tnewline\n') USING TTL 86400",
    "INSERT INTO every (k, c, bi) VALUES (2, '', 0) USING TIMESTAMP 1000",
    "UPDATE every SET st = 'other' WHERE k = 2",
    "INSERT INTO coll (k, l, s, m, fl, fs, fm, tup, ad, fad, nested) VALUES (1, ['a', 'b', 'a'], {3, 1, 2},"
    " {'x': [1, 2], 'y': []}, [1, 2, 3], {'p', 'q'}, {1: 'one', 2: 'two'}, (1, 'two', 3.0),"
    " {street: 'main', nums: [1], \"Zip\": 12345}, {street: null, nums: [], \"Zip\": 0},"
    " [{'k': (1, {2, 3})}])",
    "UPDATE coll SET l = l + ['c'], s = s - {1}, m['z'] = [9] WHERE k = 1",
    "UPDATE coll SET l = ['front'] + l WHERE k = 1",
    "DELETE m['x'] FROM coll WHERE k = 1",
    "INSERT INTO coll (k, tup) VALUES (2, (null, null, null)) USING TTL 1000",
    "UPDATE cnt SET c = c + 5, d = d - 2 WHERE k = 1",
    "UPDATE cnt SET c = c + 9223372036854775807 WHERE k = 2",
    "INSERT INTO comp (a, b, c1, c2, v, s) VALUES (1, 'x', 2, 'y', 'v', 7)",
    "INSERT INTO comp (a, b, s) VALUES (2, 'only static', 8)",
    "INSERT INTO comp (a, b, c1, c2, v) VALUES (1, 'x', 3, 'z', null)",
    "DELETE v FROM comp WHERE a = 1 AND b = 'x' AND c1 = 2 AND c2 = 'y'",
]

HAND_ROWS = [
    '{}',
    '{"$pk":{"B":"cGFydA=="},"$ck":{"B":"AQ=="},"v":{"N":"-1.5e3"}}',
    '{"e":"a\\"b\\\\c\\/d\\b\\f\\n\\r\\t","k\\n":"v"}',
    '{"u":"caf\\u00e9 \\ud83d\\ude00","z":"a\\u0000b"}',
    '{"n":[0,-0,1.25,1e5,-7,1234567890123456789],"t":true,"f":false,"x":null,"dup":1,"dup":{"S":"2"}}',
    '{"deep":[[[[[[[[[[[[[[[[{"a":[[[[[[[[{"S":"b"}]]]]]]]]}]]]]]]]]]]]]]]]]}',
    # as deep as a row may be (CQL_SROW_MAX_DEPTH, src/cql/storedrow.h: 160 levels, the top
    # object counted), once with an AttributeValue innermost and once with a \u escape
    '{"limit":' + '[' * 158 + '{"S":"b"}' + ']' * 158 + '}',
    '{"limit":' + '[' * 158 + '{"S":"\\u0062"}' + ']' * 158 + '}',
]


def stored_rows():
    """The rows STORED_ROWS_CQL leaves in the engine, as JSON values in their key order; none
    without QUARRY_BIN and python3-cassandra."""
    import re
    import select
    import shutil
    import subprocess
    import tempfile
    import time
    quarry = os.environ.get("QUARRY_BIN")
    try:
        from cassandra.cluster import Cluster
    except ImportError:
        Cluster = None
    if not quarry or Cluster is None:
        print("storedrow: QUARRY_BIN or python3-cassandra missing, no rows from CQL tables")
        return []
    data = tempfile.mkdtemp(prefix="quarry-seeds-")
    proc = subprocess.Popen([quarry, "serve", "--listen", "127.0.0.1:0", "--cql", "127.0.0.1:0",
                             "--data", data, "--no-sync"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    rows = []
    try:
        banner, deadline = b"", time.monotonic() + 30
        while b"CQL: listening" not in banner or not banner.endswith(b"\n"):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
                raise RuntimeError("quarry serve printed no CQL banner")
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                raise RuntimeError("quarry serve exited")
            banner += chunk
        port = int(re.search(rb"CQL: listening on \S+ port (\d+)", banner).group(1))
        cluster = Cluster(["127.0.0.1"], port=port, protocol_version=4)
        try:
            session = cluster.connect()
            session.execute("CREATE KEYSPACE ks WITH replication = "
                            "{'class': 'SimpleStrategy', 'replication_factor': 1}")
            session.set_keyspace("ks")
            for stmt in STORED_ROWS_CQL:
                session.execute(stmt)
        finally:
            cluster.shutdown()
    finally:
        proc.terminate()
        proc.wait()
    try:
        tables = json.loads(subprocess.run([quarry, "call", "--data", data, "ListTables"], check=True,
                                           capture_output=True).stdout)["TableNames"]
        for t in tables:
            out = subprocess.run([quarry, "call", "--data", data, "Scan", json.dumps({"TableName": t})],
                                 check=True, capture_output=True).stdout
            rows += json.loads(out)["Items"]
    finally:
        shutil.rmtree(data, ignore_errors=True)
    return rows


def storedrow_seeds():
    """fuzz_storedrow inputs: a picker seed byte, then a row's text."""
    texts = [t.encode() for t in HAND_ROWS]
    for row in stored_rows():
        texts.append(json.dumps(row, ensure_ascii=False, separators=(",", ":")).encode())
        texts.append(json.dumps(row, separators=(",", ":")).encode())
        texts.append(json.dumps(row, ensure_ascii=False, indent=1).encode())
    return [bytes([i * 37 % 256]) + t for i, t in enumerate(texts)]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    ops = read_ops()
    # The op byte is taken modulo len(ops) + 1, so CreateTable (index 0) is written as
    # len(ops) + 1: a 0 byte separates the requests of a fuzz_seq input.
    opbyte = lambda op: bytes([ops.index(op) or len(ops) + 1])  # noqa: E731
    calls = [opbyte(op) + json.dumps(req).encode() for op, req in call_seeds()]
    for c in calls:
        write(os.path.join(out, "call"), c)
    for i, c in enumerate(calls):
        write(os.path.join(out, "seq"), c + b"\0" + calls[(i * 5 + 1) % len(calls)])
        write(os.path.join(out, "seq"), c + b"\0" + calls[(i * 3 + 2) % len(calls)] + b"\0" + calls[(i * 7 + 4) % len(calls)])
    if "--e2e" in sys.argv[2:]:
        for op, text in record_e2e():
            if op in ops:
                write(os.path.join(out, "call"), opbyte(op) + text.encode())
    if "--typeconf" in sys.argv[2:]:
        for op, req in call_seeds():
            for p in list(paths(req))[1:]:
                for r in CONFUSE:
                    write(os.path.join(out, "typeconf"), opbyte(op) + json.dumps(replaced(req, p, r)).encode())
    for seed in expr_seeds():
        write(os.path.join(out, "expr"), seed)
    for i, a in enumerate(NUMBERS):
        write(os.path.join(out, "number"), a.encode())
        b = NUMBERS[(i * 7 + 3) % len(NUMBERS)]
        write(os.path.join(out, "number"), a.encode() + b"\0" + b.encode())
    for seed in WIRE:
        write(os.path.join(out, "wire"), seed)
    for i, n in enumerate(NUMBERS):
        item = {"pk": {"S": "p%d" % (i % 7)}, "sk": {"N": NUMBERS[(i * 3) % len(NUMBERS)]}, "n": {"N": n},
                "s": {"S": "text %d" % i}}
        write(os.path.join(out, "put_fast"), json.dumps(item).encode())
    for extra in PUT_FAST_EXTRA:
        write(os.path.join(out, "put_fast"), extra.encode())
    for seed in cql_seeds():
        write(os.path.join(out, "cql_parse"), seed)
    for seed in cql_frame_seeds():
        write(os.path.join(out, "cql_frame"), seed)
    for seed in storedrow_seeds():
        write(os.path.join(out, "storedrow"), seed)
    for sub in ("call", "seq", "expr", "number", "wire", "typeconf", "put_fast", "cql_parse", "cql_frame",
                "storedrow"):
        d = os.path.join(out, sub)
        if not os.path.isdir(d):
            continue
        print(f"{d}: {len(os.listdir(d))} seeds")


if __name__ == "__main__":
    main()
