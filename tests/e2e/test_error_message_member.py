"""Which member carries an error's text: "message" for most of DynamoDB's errors, but
"Message" for TransactionCanceledException, IdempotentParameterMismatchException and
TransactionInProgressException, as DynamoDB's service model names them, and for Coral's
own SerializationException and AccessDeniedException, as DynamoDB sends them. boto3 reads
either spelling; the AWS SDK for Go v2 reads only the model's, so an error with the other
spelling reached Go programs with an empty ErrorMessage(). A body that is no JSON at all
gets the type alone. IdempotentParameterMismatchException needs one process for both
calls: it is checked in tests/server/test_error_message_idempotent.py."""
import pytest

T = "ErrMember"


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    q.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "here"}}})
    return q


def check_needs(pk):
    return {"ConditionCheck": {"TableName": T, "Key": {"pk": {"S": pk}},
                               "ConditionExpression": "attribute_exists(pk)"}}


def test_transaction_canceled_text_is_under_Message(t):
    e = t.error("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": T, "Item": {"pk": {"S": "new"}}}}, check_needs("missing")]})
    assert e.type == "TransactionCanceledException"
    assert "message" not in e.body
    assert e.body["Message"] == ("Transaction cancelled, please refer cancellation reasons for specific "
                                 "reasons [None, ConditionalCheckFailed]")
    assert [r["Code"] for r in e.body["CancellationReasons"]] == ["None", "ConditionalCheckFailed"]


def test_partiql_transaction_canceled_text_is_under_Message(t):
    e = t.error("ExecuteTransaction", {"TransactStatements": [
        {"Statement": "INSERT INTO \"%s\" VALUE {'pk': 'here'}" % T}]})
    assert e.type == "TransactionCanceledException"
    assert "message" not in e.body
    assert e.body["Message"].endswith("[DuplicateItem]")


def test_other_errors_keep_message(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "here"}}, "ConditionExpression": "attribute_not_exists(pk)"})
    assert e.type == "ConditionalCheckFailedException"
    assert "Message" not in e.body and e.body["message"] == "The conditional request failed"
    e = t.error("GetItem", {"TableName": "NoSuchTable", "Key": {"pk": {"S": "a"}}})
    assert e.type == "ResourceNotFoundException" and "Message" not in e.body and e.body["message"]


def test_serialization_errors_say_Message_or_nothing(q):
    # A member of the wrong type: Coral's SerializationException carries "Message".
    e = q.error("DescribeTable", {"TableName": 5})
    assert e.type == "SerializationException"
    assert "message" not in e.body and e.body["Message"]
    # A body that is no JSON at all: the type alone, as DynamoDB answers it.
    for text in ["hi", "", '{"TableName": "x"']:
        rc, body = q.raw("DescribeTable", text)
        assert (rc, body) == (1, {"__type": "com.amazon.coral.service#SerializationException"}), text
