"""Malformed requests get DynamoDB's error types, never a crash."""


def test_bad_json_and_unknown_operation(q):
    rc, body = q.raw("ListTables", "{not json")
    assert rc == 1 and body["__type"].endswith("#SerializationException")
    rc, body = q.raw("ListTables", "[1, 2]")
    assert body["__type"].endswith("#SerializationException")
    rc, body = q.raw("FlyToTheMoon", "{}")
    assert body["__type"].endswith("#UnknownOperationException")


def test_wrong_parameter_types(q):
    q.create("Mal1")
    for req in ({"TableName": 5}, {"TableName": "Mal1", "Item": []}, {"TableName": "Mal1", "Item": {"pk": "x"}},
                {"TableName": "Mal1", "Item": {"pk": {"S": 1}, "sk": {"S": "a"}}}, {"TableName": "Mal1", "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}}, "ReturnValues": 3}):
        rc, body = q.raw("PutItem", req)
        assert rc == 1
        assert body["__type"].split("#")[-1] in ("ValidationException", "SerializationException"), body
    rc, body = q.raw("GetItem", {"TableName": "Mal1"})
    assert "Value null at 'key'" in body["message"]
    rc, body = q.raw("PutItem", {"TableName": "Mal1", "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}}, "ReturnValues": "BOGUS"})
    assert "enum value set" in body["message"]


def test_messages_that_quote_long_input_stay_valid_utf8(q):
    """Found by fuzzing: a message cut inside a multi-byte character made the error
    document unencodable and crashed the process."""
    q.create("Utf8", ("pk", "S"), None)
    long_name = "a" * 63 + "é" + "b" * 200
    rc, body = q.raw("DescribeTable", {"TableName": long_name})
    assert rc == 1 and "length less than or equal to 255" in body["message"]
    rc, body = q.raw("GetItem", {"TableName": "Utf8", "Key": {"pk": {"S": "x"}}, "ProjectionExpression": "#n",
                                 "ExpressionAttributeNames": {"#n": "a", "#" + "é" * 600: "b"}})
    assert rc == 1 and body["__type"].endswith("ValidationException")
    rc, body = q.raw("PutItem", {"TableName": "Utf8", "Item": {"pk": {"S": "x"}, "n": {"N": "1" * 511 + "é"}}})
    assert rc == 1 and body["__type"].endswith("ValidationException")
    for rc_body in (body,):
        rc_body["message"].encode("utf-8")
