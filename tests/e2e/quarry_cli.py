"""Helpers for end-to-end tests that drive the engine through `quarry call`."""
import json
import os
import subprocess

QUARRY = os.environ.get("QUARRY_BIN", os.path.join(os.path.dirname(__file__), "..", "..", "build", "quarry"))


def nested(wraps):
    """An attribute value of `wraps` single-key maps around a string: its leaf lies at level wraps + 1."""
    v = {"S": "leaf"}
    for _ in range(wraps):
        v = {"M": {"n": v}}
    return v


class CallError(Exception):
    def __init__(self, body):
        self.body = body
        self.type = body.get("__type", "").split("#")[-1]
        self.message = body.get("message", body.get("Message", ""))  # as botocore reads either
        super().__init__(f"{self.type}: {self.message}")


class Quarry:
    """One data directory; each call runs `quarry call` as a new process."""

    def __init__(self, data_dir):
        self.data_dir = str(data_dir)

    def raw(self, op, request):
        return self.raw_opts([], op, request)

    def raw_opts(self, options, op, request):
        text = request if isinstance(request, str) else json.dumps(request)
        p = subprocess.run([QUARRY, "call", "--data", self.data_dir] + options + [op, "-"], input=text.encode(),
                           capture_output=True, timeout=60)
        assert p.returncode in (0, 1), p.stderr.decode()
        return p.returncode, json.loads(p.stdout)

    def verify(self, table=None):
        args = [QUARRY, "verify", "--data", self.data_dir] + ([table] if table else [])
        return subprocess.run(args, capture_output=True, text=True, timeout=120)

    def call(self, op, request):
        rc, body = self.raw(op, request)
        if rc != 0:
            raise CallError(body)
        return body

    def error(self, op, request):
        rc, body = self.raw(op, request)
        assert rc == 1, f"expected an error, got {body}"
        return CallError(body)

    def create(self, name, pk=("pk", "S"), sk=("sk", "S")):
        defs = [{"AttributeName": pk[0], "AttributeType": pk[1]}]
        schema = [{"AttributeName": pk[0], "KeyType": "HASH"}]
        if sk:
            defs.append({"AttributeName": sk[0], "AttributeType": sk[1]})
            schema.append({"AttributeName": sk[0], "KeyType": "RANGE"})
        return self.call("CreateTable", {"TableName": name, "AttributeDefinitions": defs, "KeySchema": schema,
                                         "BillingMode": "PAY_PER_REQUEST"})

    def batch_put(self, table, items):
        for i in range(0, len(items), 25):
            chunk = items[i:i + 25]
            self.call("BatchWriteItem", {"RequestItems": {table: [{"PutRequest": {"Item": it}} for it in chunk]}})
