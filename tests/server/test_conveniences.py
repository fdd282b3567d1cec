"""The conveniences users of DynamoDB Local expect, through the CLI: --version, --help on
every subcommand, `quarry call` without a body, the data directory made with its parents
(and not at all when the server cannot listen), the one line a second server on a held
directory gets, --in-memory, and `make install` with pkg-config building the README's
library example.
"""
import os
import re
import socket
import subprocess
import time

import pytest

from conftest import boto3_client, launch, quarry_bin, Server

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SUBCOMMANDS = ["serve", "call", "verify", "model", "reconcile", "top", "replicate"]


def run(*args, **kw):
    kw.setdefault("timeout", 60)
    return subprocess.run([quarry_bin(), *args], capture_output=True, text=True, **kw)


def test_version_names_the_header_version():
    p = run("--version")
    assert p.returncode == 0, p.stderr
    header = open(os.path.join(ROOT, "include", "quarry.h")).read()
    version = re.search(r'#define QR_VERSION "([^"]+)"', header).group(1)
    assert p.stdout == "quarry %s\n" % version


@pytest.mark.parametrize("command", SUBCOMMANDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_every_subcommand_answers_help_with_its_usage(command, flag):
    p = run(command, flag)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("usage: quarry %s" % command), p.stdout
    assert "--help" in p.stdout
    assert p.stderr == ""


def test_help_after_other_options_still_helps():
    p = run("verify", "--quiet", "--help")
    assert p.returncode == 0 and p.stdout.startswith("usage: quarry verify")
    p = run("model", "check", "--help")
    assert p.returncode == 0 and "quarry model check FILE" in p.stdout


def test_top_level_help_lists_every_subcommand():
    p = run("--help")
    assert p.returncode == 0
    for c in SUBCOMMANDS:
        assert "quarry %s" % c in p.stdout


def test_call_without_a_body_sends_an_empty_object(tmp_path):
    # stdin stays open and unwritten: a call that read it would hang past the timeout.
    r, w = os.pipe()
    try:
        p = run("call", "--data", str(tmp_path / "d"), "ListTables", stdin=r, timeout=30)
    finally:
        os.close(r)
        os.close(w)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == '{"TableNames":[]}'
    # "-" still reads the request from standard input.
    p = run("call", "--data", str(tmp_path / "d"), "ListTables", "-", input='{"Limit": 1}')
    assert p.returncode == 0 and p.stdout.strip() == '{"TableNames":[]}'
    # An operation that needs members says which is missing, as it would for {}.
    p = run("call", "--data", str(tmp_path / "d"), "DescribeTable")
    assert p.returncode == 1 and "tableName" in p.stdout


def test_data_directory_is_made_with_its_parents(tmp_path):
    data = tmp_path / "a" / "b" / "c"
    srv = launch(data, tmp_path / "s.log")
    try:
        assert isinstance(srv, Server), (tmp_path / "s.log").read_text()
        boto3_client(srv.url).list_tables()
        assert (data / "CURRENT").exists()
    finally:
        assert srv.stop() == 0


def test_no_directory_when_the_server_cannot_listen(tmp_path):
    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen(1)
    port = holder.getsockname()[1]
    try:
        data = tmp_path / "never" / "made"
        p = run("serve", "--listen", "127.0.0.1:%d" % port, "--data", str(data))
    finally:
        holder.close()
    assert p.returncode == 1
    assert p.stderr.strip().splitlines() == [
        "quarry serve: cannot listen on 127.0.0.1:%d: Address already in use" % port]
    assert not (tmp_path / "never").exists()


def test_second_server_on_a_directory_is_told_which_process_holds_it(tmp_path):
    data = tmp_path / "shared"
    first = launch(data, tmp_path / "first.log")
    try:
        assert isinstance(first, Server)
        p = run("serve", "--listen", "127.0.0.1:0", "--data", str(data))
        assert p.returncode == 1
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1, p.stderr
        assert "locked by process %d (" % first.proc.pid in lines[0], lines[0]
        assert "quarry serve" in lines[0] and str(data) in lines[0]
        # `quarry call` on it gets the same line.
        c = run("call", "--data", str(data), "ListTables")
        assert c.returncode == 2 and "locked by process %d" % first.proc.pid in c.stderr
    finally:
        assert first.stop() == 0


def test_in_memory_writes_no_file_and_forgets_at_exit(tmp_path):
    data = tmp_path / "mem"
    servers = [launch(data, tmp_path / ("m%d.log" % i), "--in-memory") for i in range(2)]
    try:
        # Two in-memory servers never share anything, whatever --data names.
        for s in servers:
            assert isinstance(s, Server), "in-memory server did not start"
            assert "data in memory" in s.banner
        ddb = boto3_client(servers[0].url)
        ddb.create_table(TableName="Tab", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                         BillingMode="PAY_PER_REQUEST")
        for i in range(200):
            ddb.put_item(TableName="Tab", Item={"k": {"S": "k%d" % i}, "v": {"N": str(i)}})
        got = ddb.get_item(TableName="Tab", Key={"k": {"S": "k7"}}, ConsistentRead=True)
        assert got["Item"]["v"] == {"N": "7"}
        assert ddb.scan(TableName="Tab", Select="COUNT")["Count"] == 200
        assert boto3_client(servers[1].url).list_tables()["TableNames"] == []
        assert not data.exists() and not (tmp_path / "mem").exists()
    finally:
        for s in servers:
            if isinstance(s, Server):
                assert s.stop() == 0
    again = launch(data, tmp_path / "again.log", "--in-memory")
    try:
        assert boto3_client(again.url).list_tables()["TableNames"] == []
    finally:
        assert again.stop() == 0
    assert not data.exists()


def readme_example():
    text = open(os.path.join(ROOT, "README.md")).read()
    blocks = re.findall(r"```c\n(.*?)```", text, re.S)
    assert blocks, "README.md has no ```c block"
    return blocks[0]


def test_make_install_then_pkg_config_builds_the_readme_example(tmp_path):
    build = os.environ.get("QUARRY_BUILD") or os.path.join(ROOT, "build")
    prefix = tmp_path / "prefix"
    # The sanitizer build installs a library that needs its runtime in the program too.
    sanitize = "SANITIZE=1" if os.path.basename(build.rstrip("/")) == "build-asan" else "SANITIZE=0"
    p = subprocess.run(["make", "-s", "-C", ROOT, "install", sanitize, "BUILD=%s" % build,
                        "PREFIX=%s" % prefix], capture_output=True, text=True, timeout=900)
    assert p.returncode == 0, p.stdout + p.stderr
    for f in ["bin/quarry", "lib/libquarry.a", "lib/libquarry.so", "include/quarry.h",
              "lib/pkgconfig/quarry.pc", "share/man/man1/quarry.1"]:
        assert (prefix / f).exists(), f
    v = subprocess.run([str(prefix / "bin/quarry"), "--version"], capture_output=True, text=True)
    assert v.returncode == 0 and v.stdout.startswith("quarry ")
    man = (prefix / "share/man/man1/quarry.1").read_text()
    assert ".TH QUARRY 1" in man and "replicate" in man

    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "quarry"], env=env,
                           capture_output=True, text=True)
    assert flags.returncode == 0, flags.stderr
    assert "-I%s/include" % prefix in flags.stdout and "-lquarry" in flags.stdout
    work = tmp_path / "app"
    work.mkdir()
    (work / "app.c").write_text(readme_example())
    cc = subprocess.run("cc -Wall -Werror app.c -o app $(pkg-config --cflags --libs quarry)",
                        shell=True, cwd=work, env=env, capture_output=True, text=True,
                        timeout=120)
    assert cc.returncode == 0, cc.stderr
    # The example reads an item of table Chat in ./data: made here with the installed CLI.
    mk = subprocess.run([str(prefix / "bin/quarry"), "call", "--data", "data", "CreateTable",
                         '{"TableName":"Chat","KeySchema":[{"AttributeName":"pk","KeyType":"HASH"}],'
                         '"AttributeDefinitions":[{"AttributeName":"pk","AttributeType":"S"}],'
                         '"BillingMode":"PAY_PER_REQUEST"}'], cwd=work, capture_output=True,
                        text=True)
    assert mk.returncode == 0, mk.stdout + mk.stderr
    subprocess.run([str(prefix / "bin/quarry"), "call", "--data", "data", "PutItem",
                    '{"TableName":"Chat","Item":{"pk":{"S":"room#1"},"text":{"S":"hello"}}}'],
                   cwd=work, check=True, capture_output=True)
    app = subprocess.run(["./app"], cwd=work, capture_output=True, text=True, timeout=60)
    assert app.returncode == 0, app.stdout + app.stderr
    assert '"text":{"S":"hello"}' in app.stdout
    ldd = subprocess.run(["ldd", str(work / "app")], capture_output=True, text=True)
    assert str(prefix / "lib") in ldd.stdout, ldd.stdout


def _statuses(ddb, table="Tab"):
    t = ddb.describe_table(TableName=table)["Table"]
    return t["TableStatus"], {g["IndexName"]: g["IndexStatus"]
                              for g in t.get("GlobalSecondaryIndexes", [])}


def _wait(ddb, waiter, seconds):
    t0 = time.monotonic()
    ddb.get_waiter(waiter).wait(TableName="Tab", WaiterConfig={"Delay": 0.1, "MaxAttempts": 200})
    return time.monotonic() - t0


def test_delay_transient_states_keep_tables_and_indexes_busy(tmp_path):
    from botocore.exceptions import ClientError
    srv = launch(tmp_path / "d", tmp_path / "s.log", "--delay-transient-states",
                 "--transient-ms", "1200")
    assert isinstance(srv, Server), (tmp_path / "s.log").read_text()
    try:
        ddb = boto3_client(srv.url)
        r = ddb.create_table(
            TableName="Tab", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"},
                                  {"AttributeName": "g", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
            GlobalSecondaryIndexes=[{"IndexName": "byG",
                                     "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                     "Projection": {"ProjectionType": "ALL"}}])
        assert r["TableDescription"]["TableStatus"] == "CREATING"
        assert not [k for k in r["TableDescription"] if k.startswith("Quarry")]
        assert _statuses(ddb) == ("CREATING", {"byG": "CREATING"})
        # A table being created is not found by the item operations, and is not changed.
        with pytest.raises(ClientError) as e:
            ddb.put_item(TableName="Tab", Item={"k": {"S": "a"}})
        assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
        with pytest.raises(ClientError) as e:
            ddb.delete_table(TableName="Tab")
        assert e.value.response["Error"]["Code"] == "ResourceInUseException"
        assert "Table is being created: Tab" in e.value.response["Error"]["Message"]
        assert _wait(ddb, "table_exists", 1.2) > 0.6
        assert _statuses(ddb) == ("ACTIVE", {"byG": "ACTIVE"})
        ddb.put_item(TableName="Tab", Item={"k": {"S": "a"}, "g": {"S": "x"}})

        # UpdateTable: UPDATING; items still served; a second change refused.
        r = ddb.update_table(TableName="Tab", BillingMode="PROVISIONED",
                             ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
                             GlobalSecondaryIndexUpdates=[{"Update": {
                                 "IndexName": "byG", "ProvisionedThroughput": {
                                     "ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}}])
        assert r["TableDescription"]["TableStatus"] == "UPDATING"
        assert _statuses(ddb)[0] == "UPDATING"
        assert ddb.get_item(TableName="Tab", Key={"k": {"S": "a"}})["Item"]["g"] == {"S": "x"}
        with pytest.raises(ClientError) as e:
            ddb.update_table(TableName="Tab", TableClass="STANDARD_INFREQUENT_ACCESS")
        assert e.value.response["Error"]["Code"] == "ResourceInUseException"
        _wait(ddb, "table_exists", 1.2)
        assert _statuses(ddb)[0] == "ACTIVE"

        # A global index created stays CREATING, one deleted DELETING, for the delay.
        ddb.update_table(TableName="Tab", AttributeDefinitions=[
            {"AttributeName": "h", "AttributeType": "S"}], GlobalSecondaryIndexUpdates=[{"Create": {
            "IndexName": "byH", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}}])
        assert _statuses(ddb)[1] == {"byG": "ACTIVE", "byH": "CREATING"}
        deadline = time.monotonic() + 10
        while _statuses(ddb) != ("ACTIVE", {"byG": "ACTIVE", "byH": "ACTIVE"}):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        r = ddb.update_table(TableName="Tab",
                             GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "byH"}}])
        assert [g["IndexName"] for g in r["TableDescription"]["GlobalSecondaryIndexes"]] == [
            "byG", "byH"]
        assert _statuses(ddb)[1] == {"byG": "ACTIVE", "byH": "DELETING"}
        deadline = time.monotonic() + 10
        while _statuses(ddb) != ("ACTIVE", {"byG": "ACTIVE"}):
            assert time.monotonic() < deadline
            time.sleep(0.1)

        # DeleteTable: DELETING, listed, its items gone from reach; then not found.
        assert ddb.delete_table(TableName="Tab")["TableDescription"]["TableStatus"] == "DELETING"
        assert _statuses(ddb)[0] == "DELETING"
        assert ddb.list_tables()["TableNames"] == ["Tab"]
        with pytest.raises(ClientError) as e:
            ddb.get_item(TableName="Tab", Key={"k": {"S": "a"}})
        assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
        with pytest.raises(ClientError) as e:
            ddb.create_table(TableName="Tab", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                             AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                             BillingMode="PAY_PER_REQUEST")
        assert e.value.response["Error"]["Code"] == "ResourceInUseException"
        assert _wait(ddb, "table_not_exists", 1.2) > 0.6
        assert ddb.list_tables()["TableNames"] == []
        ddb.create_table(TableName="Tab", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                         AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                         BillingMode="PAY_PER_REQUEST")
        _wait(ddb, "table_exists", 1.2)
        assert ddb.scan(TableName="Tab")["Count"] == 0  # a new table, not the deleted one
    finally:
        assert srv.stop() == 0


def test_without_the_delay_every_change_is_active_at_once(tmp_path):
    srv = launch(tmp_path / "d", tmp_path / "s.log")
    try:
        ddb = boto3_client(srv.url)
        r = ddb.create_table(TableName="Tab", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                             AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                             BillingMode="PAY_PER_REQUEST")
        assert r["TableDescription"]["TableStatus"] == "CREATING"  # as DynamoDB answers
        assert _statuses(ddb)[0] == "ACTIVE"
        ddb.put_item(TableName="Tab", Item={"k": {"S": "a"}})
        ddb.delete_table(TableName="Tab")
        assert ddb.list_tables()["TableNames"] == []
    finally:
        assert srv.stop() == 0
