"""boto3's PartiQL calls against `quarry serve`: execute_statement (with parameters, paging by
NextToken, RETURNING), batch_execute_statement and execute_transaction, and the errors boto3
raises for them (DuplicateItemException, ConditionalCheckFailedException,
TransactionCanceledException with its reasons)."""
import pytest
from botocore.exceptions import ClientError

from conftest import boto3_client


@pytest.fixture
def ddb(server):
    c = boto3_client(server.url)
    c.create_table(
        TableName="Orders", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "cust", "AttributeType": "S"},
                              {"AttributeName": "id", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "cust", "KeyType": "HASH"}, {"AttributeName": "id", "KeyType": "RANGE"}])
    return c


def code(e):
    return e.value.response["Error"]["Code"]


def test_execute_statement_round_trip(ddb):
    for i in range(5):
        out = ddb.execute_statement(Statement="INSERT INTO \"Orders\" VALUE {'cust': ?, 'id': ?, 'total': ?, 'blob': ?}",
                                    Parameters=[{"S": "c1"}, {"N": str(i)}, {"N": str(10 * i)}, {"B": b"\x00\x01"}])
        assert out["Items"] == []
    got = ddb.execute_statement(Statement="SELECT id, total, blob FROM \"Orders\" WHERE cust = ? AND id >= ?",
                                Parameters=[{"S": "c1"}, {"N": "3"}], ConsistentRead=True)
    assert [i["id"]["N"] for i in got["Items"]] == ["3", "4"]
    assert got["Items"][0]["blob"] == {"B": b"\x00\x01"}

    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement="INSERT INTO \"Orders\" VALUE {'cust': 'c1', 'id': 0}")
    assert code(e) == "DuplicateItemException"
    assert e.value.response["Error"]["Message"] == "Duplicate primary key exists in table"

    out = ddb.execute_statement(Statement="UPDATE \"Orders\" SET total = total + 1 WHERE cust = 'c1' AND id = 4 "
                                          "RETURNING MODIFIED NEW *")
    assert out["Items"] == [{"total": {"N": "41"}}]
    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement="UPDATE \"Orders\" SET total = 0 WHERE cust = 'c1' AND id = 4 AND total < 0")
    assert code(e) == "ConditionalCheckFailedException"
    out = ddb.execute_statement(Statement="DELETE FROM \"Orders\" WHERE cust = 'c1' AND id = 0 RETURNING ALL OLD *")
    assert out["Items"][0]["id"] == {"N": "0"}

    with pytest.raises(ClientError) as e:
        ddb.execute_statement(Statement="SELECT * FROM \"Orders\" WHERE")
    assert code(e) == "ValidationException"
    assert e.value.response["Error"]["Message"].startswith("Statement wasn't well formed, can't be processed: ")


def test_paging_a_scan_and_a_query(ddb):
    for c in ("a", "b"):
        ddb.batch_execute_statement(Statements=[
            {"Statement": "INSERT INTO \"Orders\" VALUE {'cust': ?, 'id': ?}", "Parameters": [{"S": c}, {"N": str(i)}]}
            for i in range(9)])
    for stmt in ("SELECT * FROM \"Orders\"", "SELECT * FROM \"Orders\" WHERE cust IN ['a', 'b']"):
        seen, kw = [], {}
        while True:
            out = ddb.execute_statement(Statement=stmt, Limit=4, **kw)
            seen += [(i["cust"]["S"], i["id"]["N"]) for i in out["Items"]]
            if "NextToken" not in out:
                break
            kw = {"NextToken": out["NextToken"]}
        assert sorted(seen) == sorted((c, str(i)) for c in "ab" for i in range(9))


def test_batch_and_transactions(ddb):
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": "INSERT INTO \"Orders\" VALUE {'cust': 'x', 'id': 1, 'n': 1}"},
        {"Statement": "INSERT INTO \"Orders\" VALUE {'cust': 'x', 'id': 1, 'n': 2}"},
    ])["Responses"]
    assert "Error" not in r[0] and r[0]["TableName"] == "Orders"
    assert r[1]["Error"]["Code"] == "DuplicateItem"
    r = ddb.batch_execute_statement(Statements=[
        {"Statement": "SELECT n FROM \"Orders\" WHERE cust = 'x' AND id = 1", "ConsistentRead": True},
        {"Statement": "SELECT n FROM \"Orders\" WHERE cust = 'x' AND id = 2"},
    ])["Responses"]
    assert r[0]["Item"] == {"n": {"N": "1"}} and "Item" not in r[1]

    out = ddb.execute_transaction(TransactStatements=[
        {"Statement": "UPDATE \"Orders\" SET n = n + 1 WHERE cust = 'x' AND id = 1"},
        {"Statement": "INSERT INTO \"Orders\" VALUE {'cust': 'x', 'id': 2, 'n': 0}"},
    ], ClientRequestToken="boto3-txn-1")
    assert "Responses" not in out or out["Responses"] == []
    with pytest.raises(ClientError) as e:
        ddb.execute_transaction(TransactStatements=[
            {"Statement": "INSERT INTO \"Orders\" VALUE {'cust': 'x', 'id': 2}"},
            {"Statement": "EXISTS(SELECT * FROM \"Orders\" WHERE cust = 'x' AND id = 1 AND n = 2)"},
        ])
    assert code(e) == "TransactionCanceledException"
    reasons = e.value.response["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["DuplicateItem", "None"]
    out = ddb.execute_transaction(TransactStatements=[
        {"Statement": "SELECT * FROM \"Orders\" WHERE cust = 'x' AND id = 1"},
        {"Statement": "SELECT n FROM \"Orders\" WHERE cust = ? AND id = ?", "Parameters": [{"S": "x"}, {"N": "2"}]},
    ])
    assert out["Responses"][0]["Item"]["n"] == {"N": "2"}
    assert out["Responses"][1] == {"Item": {"n": {"N": "0"}}}
