#!/usr/bin/env python3
"""gen.py — data and pre-signed requests for the wrk benchmarks of bench/http/run.sh.

  gen.py load URL            create the bench table and load the items the scripts read
  gen.py requests URL KIND N OUT.lua
                             write N SigV4-signed requests of KIND (put, get, query) for
                             the server at URL as a Lua table that put/get/query.lua load
  gen.py report RESULTS.tsv  print the table of results (Markdown) and the ratios aimed at

Requests are signed here (HMAC-SHA256 from Python's standard library) with the
benchmark's key, so that wrk replays real signatures and the server pays for verifying
them; a signature stays valid for 15 minutes, longer than one run. Not a load generator.
"""
import datetime
import hashlib
import hmac
import json
import random
import sys
import urllib.parse

TABLE = "bench"
KEY_ID, SECRET, REGION = "AKIDQUARRYBENCH", "quarry-bench-secret", "us-east-1"
USERS = 10000            # items read by GetItem, keys user#00000..user#09999
PARTITIONS = 20          # partitions read by Query, 100 items each
PER_PARTITION = 100
PAYLOAD = "x" * 100      # makes an item about 200 bytes


def user_item(i):
    return {"pk": {"S": "user#%05d" % i}, "sk": {"S": "profile"},
            "name": {"S": "user %d" % i}, "email": {"S": "user%d@example.com" % i},
            "n": {"N": str(i)}, "payload": {"S": PAYLOAD}}


def event_item(p, j):
    return {"pk": {"S": "events#%02d" % p}, "sk": {"S": "event#%05d" % j},
            "n": {"N": str(j)}, "payload": {"S": PAYLOAD}}


def sign(host, target, body, when):
    amz_date = when.strftime("%Y%m%dT%H%M%SZ")
    day = amz_date[:8]
    headers = {"content-type": "application/x-amz-json-1.0", "host": host,
               "x-amz-date": amz_date, "x-amz-target": target}
    names = sorted(headers)
    canonical = "\n".join(["POST", "/", "", "".join("%s:%s\n" % (n, headers[n]) for n in names),
                           ";".join(names), hashlib.sha256(body.encode()).hexdigest()])
    scope = "%s/%s/dynamodb/aws4_request" % (day, REGION)
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                     hashlib.sha256(canonical.encode()).hexdigest()])
    k = ("AWS4" + SECRET).encode()
    for part in (day, REGION, "dynamodb", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    sig = hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()
    auth = "AWS4-HMAC-SHA256 Credential=%s/%s, SignedHeaders=%s, Signature=%s" % (
        KEY_ID, scope, ";".join(names), sig)
    return amz_date, auth


def client(url):
    import boto3
    from botocore.config import Config
    return boto3.client("dynamodb", endpoint_url=url, region_name=REGION,
                        aws_access_key_id=KEY_ID, aws_secret_access_key=SECRET,
                        config=Config(retries={"max_attempts": 10, "mode": "standard"}))


def load(url):
    ddb = client(url)
    ddb.create_table(TableName=TABLE,
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                           {"AttributeName": "sk", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"},
                                {"AttributeName": "sk", "KeyType": "RANGE"}],
                     BillingMode="PAY_PER_REQUEST")
    ddb.get_waiter("table_exists").wait(TableName=TABLE, WaiterConfig={"Delay": 1})
    items = [user_item(i) for i in range(USERS)]
    items += [event_item(p, j) for p in range(PARTITIONS) for j in range(PER_PARTITION)]
    for i in range(0, len(items), 25):
        req = {TABLE: [{"PutRequest": {"Item": it}} for it in items[i:i + 25]]}
        while req:
            req = ddb.batch_write_item(RequestItems=req).get("UnprocessedItems") or {}


def requests(url, kind, n, out):
    host = urllib.parse.urlsplit(url).netloc
    when = datetime.datetime.now(datetime.timezone.utc)
    rnd = random.Random(42)
    rows = []
    for i in range(n):
        if kind == "get":
            u = rnd.randrange(USERS)
            target = "DynamoDB_20120810.GetItem"
            body = {"TableName": TABLE, "Key": {"pk": {"S": "user#%05d" % u}, "sk": {"S": "profile"}}}
        elif kind == "put":
            target = "DynamoDB_20120810.PutItem"
            item = user_item(i)
            item["pk"] = {"S": "put#%06d" % i}
            body = {"TableName": TABLE, "Item": item}
        elif kind == "query":
            p = rnd.randrange(PARTITIONS)
            target = "DynamoDB_20120810.Query"
            body = {"TableName": TABLE, "KeyConditionExpression": "pk = :p", "Limit": 50,
                    "ExpressionAttributeValues": {":p": {"S": "events#%02d" % p}}}
        else:
            raise SystemExit("unknown kind %r" % kind)
        text = json.dumps(body, separators=(",", ":"))
        amz_date, auth = sign(host, target, text, when)
        rows.append((target, text, amz_date, auth))
    with open(out, "w") as f:
        f.write("return {\n")
        for target, text, amz_date, auth in rows:
            f.write("{target=%s,body=%s,date=%s,auth=%s},\n" % tuple(
                lua_string(s) for s in (target, text, amz_date, auth)))
        f.write("}\n")


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2


def report(path):
    """Medians over the rounds of run.sh; a ratio is the median of its per-round ratios
    (each taken within one round), shown with its lowest and highest round."""
    rows = {}
    with open(path) as f:
        for line in f:
            fields = line.split()
            server, op = fields[0], fields[1]
            rps, p99, non2xx, errs, cpu = (float(fields[2]), float(fields[3]), int(fields[4]),
                                           int(fields[5]), float(fields[6]))
            rnd = int(fields[7]) if len(fields) > 7 else 1
            rows.setdefault((server, op), {})[rnd] = (rps, p99, non2xx, errs, cpu)
    res = {key: (median([r[0] for r in by.values()]), median([r[1] for r in by.values()]),
                 sum(r[2] for r in by.values()), sum(r[3] for r in by.values()),
                 median([r[4] for r in by.values()]), len(by))
           for key, by in rows.items()}
    print("Medians of the rounds (non-2xx and errors: totals).")
    print()
    print("| server | operation | requests/s | p99 ms | server CPU us/request | non-2xx | errors | rounds |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for (server, op), (rps, p99, bad, errs, cpu, n) in res.items():
        print("| %s | %s | %.0f | %.2f | %.1f | %d | %d | %d |" % (server, op, rps, p99, cpu, bad, errs, n))

    def per_round(a, b, col):
        return [rows[a][r][col] / rows[b][r][col] for r in sorted(rows[a])
                if r in rows.get(b, {}) and rows[b][r][col] > 0]

    def ratio(label, a, b, goal):
        if a in rows and b in rows:
            rs = per_round(a, b, 0)
            if not rs:
                return
            r = median(rs)
            print("%-50s %7.2f  (goal %s: %s; rounds %.2f-%.2f)" % (label, r, goal,
                  "met" if r >= float(goal.strip("x>= ")) else "NOT met", min(rs), max(rs)))

    print()
    ratio("GetItem quarry / nginx", ("quarry", "get"), ("nginx", "get"), ">= 0.6")
    ratio("PutItem quarry --no-sync / nginx", ("quarry-nosync", "put"), ("nginx", "put"), ">= 0.5")
    ratio("GetItem --no-sync, capacity enforce / off", ("quarry-metered", "get"),
          ("quarry-nosync", "get"), ">= 0.95")
    ratio("PutItem --no-sync, capacity enforce / off", ("quarry-metered", "put"),
          ("quarry-nosync", "put"), ">= 0.95")
    for op, name in (("get", "GetItem"), ("put", "PutItem"), ("query", "Query(50)")):
        ratio("%s --no-sync, --model / without" % name, ("quarry-model", op),
              ("quarry-nosync", op), ">= 0.95")
    for op, name in (("get", "GetItem"), ("put", "PutItem"), ("query", "Query(50)")):
        ratio("%s --no-sync, this build / BASELINE" % name, ("quarry-nosync", op),
              ("quarry-baseline", op), ">= 0.95")
    ratio("PutItem quarry durable / dynalite on disk", ("quarry", "put"), ("dynalite-disk", "put"), ">= 2x")
    ratio("Query(50) quarry / dynalite on disk", ("quarry", "query"), ("dynalite-disk", "query"), ">= 10x")
    ratio("Query(50) quarry / dynalite in memory", ("quarry", "query"), ("dynalite-mem", "query"), ">= 10x")
    # Server CPU per request: steadier than requests/s on a shared machine.
    for label, a, b in [("GetItem server CPU per request, quarry / nginx", ("quarry", "get"), ("nginx", "get")),
                        ("PutItem --no-sync CPU per request, quarry / nginx", ("quarry-nosync", "put"),
                         ("nginx", "put"))] + [
            ("%s --no-sync CPU per request, this build / BASELINE" % name, ("quarry-nosync", op),
             ("quarry-baseline", op)) for op, name in (("get", "GetItem"), ("put", "PutItem"),
                                                       ("query", "Query(50)"))]:
        if a in res and b in res and res[b][4] > 0:
            print("%-50s %7.2f  (%.1f us against %.1f us)" % (label, res[a][4] / res[b][4], res[a][4], res[b][4]))
    if ("quarry", "get") in res:
        p99 = res[("quarry", "get")][1]
        print("%-50s %7.2f  (goal < 2 ms: %s)" % ("GetItem p99 latency, quarry (ms)", p99,
              "met" if p99 < 2 else "NOT met"))


def lua_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "load":
        load(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "report":
        report(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "requests":
        requests(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5])
    else:
        raise SystemExit(__doc__)
