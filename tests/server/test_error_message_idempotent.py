"""IdempotentParameterMismatchException carries its text as "Message", the member
DynamoDB's service model names (and the only spelling the AWS SDK for Go v2 reads); the
other errors' spelling is checked in tests/e2e/test_error_message_member.py. Here because
the two calls must reach one running server, which remembers the token."""
from conftest import raw

T = "ErrMemberIdem"
TARGET = "DynamoDB_20120810."


def test_idempotent_mismatch_text_is_under_Message(server):
    reply = raw(server.url, TARGET + "CreateTable", {
        "TableName": T, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]})
    assert reply.status == 200
    first = {"ClientRequestToken": "token-1",
             "TransactItems": [{"Put": {"TableName": T, "Item": {"pk": {"S": "a"}}}}]}
    assert raw(server.url, TARGET + "TransactWriteItems", first).status == 200
    reply = raw(server.url, TARGET + "TransactWriteItems",
                dict(first, TransactItems=[{"Put": {"TableName": T, "Item": {"pk": {"S": "b"}}}}]))
    assert reply.status == 400 and reply.error_type == "IdempotentParameterMismatchException"
    body = reply.json()
    assert "message" not in body and body["Message"]
