"""Malformed requests get DynamoDB's error types, never a crash."""


def test_bad_json_and_unknown_operation(q):
    rc, body = q.raw("ListTables", "{not json")
    assert rc == 1 and body["__type"].endswith("#SerializationException")
    rc, body = q.raw("ListTables", "[1, 2]")
    assert body["__type"].endswith("#SerializationException")
    rc, body = q.raw("FlyToTheMoon", "{}")
    assert body["__type"].endswith("#UnknownOperationException")


def test_wrong_parameter_types(q):
    q.create("M1")
    for req in ({"TableName": 5}, {"TableName": "M1", "Item": []}, {"TableName": "M1", "Item": {"pk": "x"}},
                {"TableName": "M1", "Item": {"pk": {"S": 1}, "sk": {"S": "a"}}}, {"TableName": "M1", "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}}, "ReturnValues": 3}):
        rc, body = q.raw("PutItem", req)
        assert rc == 1
        assert body["__type"].split("#")[-1] in ("ValidationException", "SerializationException"), body
    rc, body = q.raw("GetItem", {"TableName": "M1"})
    assert "Value null at 'key'" in body["message"]
    rc, body = q.raw("PutItem", {"TableName": "M1", "Item": {"pk": {"S": "a"}, "sk": {"S": "b"}}, "ReturnValues": "BOGUS"})
    assert "enum value set" in body["message"]
