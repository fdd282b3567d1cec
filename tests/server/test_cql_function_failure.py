"""The FunctionFailure error body (keyspace, function, argument types) that `quarry serve
--cql` sends when a native function fails as it runs, read through the Python driver
(Debian python3-cassandra): an operation names Cassandra's function for it (_divide,
_substract, ...) with its operands' types, fromJson names itself. Not the messages' words
(test_cql_query.py, test_cql_compat.py)."""
import datetime

import pytest

pytest.importorskip("cassandra", reason="python3-cassandra is not installed")

from cassandra.protocol import FunctionFailure  # noqa: E402


@pytest.fixture
def s(shared_keyspace):
    session = shared_keyspace("ff")
    session.execute("CREATE TABLE t (k int, ts timestamp, a int, b tinyint, j bigint, "
                    "PRIMARY KEY (k, ts))")
    session.execute("INSERT INTO t (k, ts, a, b) VALUES (1, '2020-01-01', 7, 3)")
    return session


def failure(s, statement, *args):
    with pytest.raises(FunctionFailure) as got:
        s.execute(s.prepare(statement) if args else statement, args or None)
    e = got.value
    return e.keyspace, e.function, e.arg_types


@pytest.mark.parametrize("selector, function, types", [
    ("a / (int) 0", "_divide", ["int", "int"]),
    ("a % (int) 0", "_modulo", ["int", "int"]),
    ("b / (tinyint) 0", "_divide", ["tinyint", "tinyint"]),
])
def test_an_operation_names_its_function_and_operand_types(s, selector, function, types):
    assert failure(s, "SELECT %s FROM t" % selector) == ("system", function, types)


def test_a_failing_operation_in_a_restriction_names_itself(s):
    since = datetime.datetime(2019, 12, 1)
    assert failure(s, "SELECT ts FROM t WHERE k = 1 AND ts > ? - 10us", since) == \
        ("system", "_substract", ["timestamp", "duration"])


def test_from_json_names_itself(s):
    assert failure(s, "INSERT INTO t (k, ts, j) VALUES (2, '2020-01-01', fromJson(?))",
                   '"abc"') == ("system", "fromjson", ["text"])
