"""A database on a full filesystem: `quarry call` and `quarry serve` (durable and
--no-sync) refuse to open with a message naming the full disk and the space needed, start
normally once space is freed, and a server whose disk fills while it runs answers writes
with the cause and, stopped, closes without an abort, says why writes failed and keeps
what it acknowledged. Each test mounts a small
tmpfs; where the machine cannot mount one the tests are skipped with the reason."""
import errno
import json
import os
import subprocess

import pytest

from conftest import Server, launch, quarry_bin, raw

TABLE = {"TableName": "full", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
         "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
         "BillingMode": "PAY_PER_REQUEST"}
# Large enough that, once the filler is gone, the reopen finds what it needs (a memtable's
# WAL block and slack, about 10 MB, plus recovery of a WAL that grew to its preallocated
# block while the disk filled): 24 MB was short by half a megabyte under ASan.
SIZE_MB = 48


@pytest.fixture
def small_fs(tmp_path):
    """A SIZE_MB tmpfs of its own, unmounted after the test."""
    mnt = tmp_path / "fs"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%dm" % SIZE_MB, "tmpfs", str(mnt)],
                       capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a %d MB tmpfs for the full-disk tests (they need root): %s"
                    % (SIZE_MB, (p.stderr or p.stdout).strip()))
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


def fill(fs):
    """Fills fs to the last byte with one file; returns its path."""
    path = fs / "filler"
    with open(path, "wb", buffering=0) as f:
        chunk = b"\0" * (64 << 10)
        while True:
            try:
                f.write(chunk)
            except OSError as e:
                assert e.errno == errno.ENOSPC
                break
        for size in (4096, 512, 1):  # whatever the last chunk left
            try:
                while True:
                    f.write(b"\0" * size)
            except OSError:
                pass
    return path


def call(data, op, body, *args):
    return subprocess.run([quarry_bin(), "call", "--data", str(data), *args, op, body],
                          capture_output=True, text=True, timeout=60)


def assert_refused_full(p, what):
    # A refusal, not a crash: 134/-6 would be RocksDB's assertion aborting the process.
    assert p.returncode in (1, 2), "%s exited %s: %s" % (what, p.returncode, p.stderr)
    assert "the disk is full" in p.stderr, p.stderr
    assert "needs at least" in p.stderr and "MB" in p.stderr, p.stderr


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_call_refuses_a_full_disk_and_opens_once_space_is_freed(small_fs, mode):
    data = small_fs / "db"
    p = call(data, "CreateTable", json.dumps(TABLE), *mode)
    assert p.returncode == 0, p.stderr
    filler = fill(small_fs)
    for _ in range(2):  # a failed open leaves nothing that makes the next one different
        assert_refused_full(call(data, "ListTables", "{}", *mode), "quarry call")
    os.unlink(filler)
    p = call(data, "ListTables", "{}", *mode)
    assert p.returncode == 0, p.stderr
    assert "full" in p.stdout


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_serve_refuses_a_full_disk_and_starts_once_space_is_freed(small_fs, tmp_path, mode):
    data = small_fs / "db"
    assert call(data, "ListTables", "{}").returncode == 0
    filler = fill(small_fs)
    proc = launch(data, tmp_path / "refused.log", *mode)
    assert not isinstance(proc, Server), "quarry serve started on a full disk"
    stderr = (tmp_path / "refused.log").read_text()
    assert proc.returncode == 1, "exited %s: %s" % (proc.returncode, stderr)
    assert "the disk is full" in stderr and "needs at least" in stderr, stderr
    os.unlink(filler)
    srv = launch(data, tmp_path / "started.log", *mode)
    assert isinstance(srv, Server), (tmp_path / "started.log").read_text()
    assert raw(srv.url, "DynamoDB_20120810.ListTables", {}).status == 200
    assert srv.stop() == 0, srv.log()


@pytest.mark.parametrize("mode", [[], ["--no-sync"]], ids=["durable", "no-sync"])
def test_a_disk_filling_under_a_server_fails_writes_and_stops_cleanly(small_fs, tmp_path, mode):
    data = small_fs / "db"
    srv = launch(data, tmp_path / "s1.log", "--capacity", "off", *mode)
    assert isinstance(srv, Server), (tmp_path / "s1.log").read_text()
    assert raw(srv.url, "DynamoDB_20120810.CreateTable", TABLE).status == 200
    kept = {"TableName": "full", "Item": {"pk": {"S": "kept"}}}
    for _ in range(100):  # the table becomes ACTIVE at once or soon
        r = raw(srv.url, "DynamoDB_20120810.PutItem", kept)
        if r.status == 200:
            break
    assert r.status == 200, r.body
    filler = fill(small_fs)
    big = "x" * 350000
    errors = []
    for i in range(60):  # past the WAL's preallocated block
        r = raw(srv.url, "DynamoDB_20120810.PutItem",
                {"TableName": "full", "Item": {"pk": {"S": "k%d" % i}, "v": {"S": big}}})
        if r.status != 200:
            errors.append(r)
    assert errors, "the writes never filled the disk"
    for r in errors:
        assert r.status == 500 and r.error_type == "InternalServerError", r.body
        assert "the disk is full" in r.message, r.message
    # Stopping on the full disk: no abort in RocksDB; the close says the writes failed.
    assert srv.stop() == 1, srv.log()
    assert "Assertion" not in srv.log(), srv.log()
    assert "closing the database in" in srv.log() and "the disk is full" in srv.log(), srv.log()
    assert "opens again once" in srv.log() and "MB free" in srv.log(), srv.log()
    os.unlink(filler)
    srv = launch(data, tmp_path / "s2.log", *mode)
    assert isinstance(srv, Server), (tmp_path / "s2.log").read_text()
    r = raw(srv.url, "DynamoDB_20120810.GetItem", {"TableName": "full", "Key": {"pk": {"S": "kept"}}})
    assert r.status == 200 and r.json().get("Item") == {"pk": {"S": "kept"}}, r.body
    assert srv.stop() == 0, srv.log()
