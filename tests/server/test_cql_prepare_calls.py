"""PREPARE of function calls whose arguments are bind markers, through the Python driver
(Debian python3-cassandra) against `quarry serve --cql`, compared with Cassandra 4: a call
that more than one overload matches once its markers are untyped is refused as PREPARE
runs, with Cassandra's message; a type hint or an unambiguous function types the marker.
Not the operators' markers (test_cql_query.py)."""
import datetime

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra import InvalidRequest  # noqa: E402

TO_TIMESTAMP = ("Ambiguous call to function system.totimestamp (can be matched by following "
                "signatures: ")


@pytest.fixture
def s(shared_keyspace):
    session = shared_keyspace("pc")
    session.execute("CREATE TABLE t (k timestamp PRIMARY KEY, v bigint)")
    return session


@pytest.mark.parametrize("statement", [
    "SELECT * FROM t WHERE k = toTimestamp(?)",
    "INSERT INTO t (k, v) VALUES (toTimestamp(?), 1)",
    "UPDATE t SET v = 2 WHERE k = toTimestamp(?)",
    "DELETE FROM t WHERE k = toTimestamp(?)",
])
def test_an_untyped_marker_in_an_overloaded_call_is_refused_at_prepare(s, statement):
    with pytest.raises(InvalidRequest) as got:
        s.prepare(statement)
    message = str(got.value)
    assert TO_TIMESTAMP in message, message
    assert "system.totimestamp : (timeuuid) -> timestamp" in message, message
    assert "system.totimestamp : (date) -> timestamp" in message, message
    assert message.endswith("): use type casts to disambiguate\""), message


def test_other_overloads_are_named_in_their_refusal(s):
    with pytest.raises(InvalidRequest,
                       match="Ambiguous call to function system.tounixtimestamp "):
        s.prepare("INSERT INTO t (k, v) VALUES ('2020-01-01', toUnixTimestamp(?))")


def test_a_hinted_marker_picks_the_overload(s):
    insert = s.prepare("INSERT INTO t (k, v) VALUES (toTimestamp((date)?), 1)")
    assert insert.column_metadata[0].type.typename == "date"
    s.execute(insert, [datetime.date(2020, 1, 2)])
    select = s.prepare("SELECT v FROM t WHERE k = toTimestamp((date)?)")
    assert [tuple(r) for r in s.execute(select, [datetime.date(2020, 1, 2)])] == [(1,)]


def test_a_single_overload_types_its_marker(s):
    insert = s.prepare("INSERT INTO t (k, v) VALUES ('2021-05-06', blobAsBigint(?))")
    assert insert.column_metadata[0].type.typename == "blob"
    s.execute(insert, [(7).to_bytes(8, "big")])
    assert [tuple(r) for r in s.execute("SELECT v FROM t")] == [(7,)]
