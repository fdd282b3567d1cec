"""What real DynamoDB answers to the core table and item operations, where quarry once differed.

Each test pins one answer DynamoDB gives (recorded against the live service by a public
conformance suite): the value it accepts or the error type and text it returns. The tables
mirror that suite's shapes: a string-keyed table and a composite table with two local and
two global indexes on the same attributes; the capacity tests use a table of their own."""
import pytest

H = "ConfHash"
C = "ConfComposite"


@pytest.fixture
def t(q):
    q.create(H, sk=None)
    defs = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "lsi1sk", "lsi2sk")]
    local = [{"IndexName": name, "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": attr, "KeyType": "RANGE"}],
              "Projection": {"ProjectionType": "ALL"}} for name, attr in (("lsi1", "lsi1sk"), ("lsi2", "lsi2sk"))]
    glob = [{"IndexName": "gsi1", "KeySchema": [{"AttributeName": "lsi1sk", "KeyType": "HASH"}],
             "Projection": {"ProjectionType": "ALL"}},
            {"IndexName": "gsi2", "KeySchema": [{"AttributeName": "lsi1sk", "KeyType": "HASH"},
                                                {"AttributeName": "lsi2sk", "KeyType": "RANGE"}],
             "Projection": {"ProjectionType": "KEYS_ONLY"}}]
    q.call("CreateTable", {"TableName": C, "AttributeDefinitions": defs, "BillingMode": "PAY_PER_REQUEST",
                           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                         {"AttributeName": "sk", "KeyType": "RANGE"}],
                           "LocalSecondaryIndexes": local, "GlobalSecondaryIndexes": glob})
    return q


def simple_table(q, name, **extra):
    req = {"TableName": name, "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
           "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]}
    req.update(extra)
    q.call("CreateTable", req)
    return q.call("DescribeTable", {"TableName": name})["Table"]


# ---- table names on item operations ----

def test_item_operations_take_short_table_names(t):
    e = t.error("GetItem", {"TableName": "ab", "Key": {"pk": {"S": "k"}}})
    assert e.type == "ResourceNotFoundException"
    e = t.error("PutItem", {"TableName": "", "Item": {"pk": {"S": "k"}}})
    assert e.type == "ValidationException"
    assert "Member must have length greater than or equal to 1" in e.message


def test_too_long_table_name_is_echoed_whole(t):
    name = "a" * 256
    e = t.error("PutItem", {"TableName": name, "Item": {"pk": {"S": "k"}}})
    assert e.message == (f"1 validation error detected: Value '{name}' at 'tableName' failed to satisfy constraint: "
                         "Member must have length less than or equal to 255")


# ---- Query and Scan ----

def test_select_enum_is_listed_in_dynamodb_order(t):
    e = t.error("Query", {"TableName": C, "KeyConditionExpression": "pk = :v",
                          "ExpressionAttributeValues": {":v": {"S": "v"}}, "Select": "EVERYTHING"})
    assert e.message == ("1 validation error detected: Value 'EVERYTHING' at 'select' failed to satisfy constraint: "
                         "Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, "
                         "ALL_PROJECTED_ATTRIBUTES]")


# ---- BatchGetItem ----

@pytest.mark.parametrize("op", ["BatchGetItem", "BatchWriteItem"])
def test_empty_request_items(t, op):
    e = t.error(op, {"RequestItems": {}})
    assert e.type == "ValidationException"
    if op == "BatchWriteItem":  # most regions still give BatchWriteItem's own sentence (October 2026)
        assert e.message == "The requestItems parameter is required for BatchWriteItem"
        return
    assert e.message == ("1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: "
                         "Member must have length greater than or equal to 1")


def test_one_table_over_one_hundred_keys(t):
    keys = [{"pk": {"S": f"k{i}"}} for i in range(101)]
    e = t.error("BatchGetItem", {"RequestItems": {H: {"Keys": keys}}})
    assert e.message == (f"1 validation error detected: Value at 'RequestItems.{H}.member.Keys' failed to satisfy "
                         "constraint: Member must have length less than or equal to 100")


def test_keys_over_one_hundred_across_tables(t):
    e = t.error("BatchGetItem", {"RequestItems": {
        H: {"Keys": [{"pk": {"S": f"k{i}"}} for i in range(60)]},
        C: {"Keys": [{"pk": {"S": "p"}, "sk": {"S": f"s{i}"}} for i in range(41)]}}})
    assert e.message == "Too many items requested for the BatchGetItem call"


def test_projection_styles_cannot_mix_across_tables(t):
    e = t.error("BatchGetItem", {"RequestItems": {
        H: {"Keys": [{"pk": {"S": "a"}}], "ProjectionExpression": "pk"},
        C: {"Keys": [{"pk": {"S": "b"}, "sk": {"S": "z"}}], "AttributesToGet": ["pk"]}}})
    assert e.type == "ValidationException"
    assert e.message == ("Can not use both expression and non-expression parameters in the same request: "
                         "Non-expression parameters: {AttributesToGet} Expression parameters: {ProjectionExpression}")


# ---- BatchWriteItem ----

@pytest.mark.parametrize("value", [{"N": "5"}, {"L": [{"S": "x"}]}])
def test_batch_put_with_key_of_another_type(t, value):
    e = t.error("BatchWriteItem", {"RequestItems": {H: [{"PutRequest": {"Item": {"pk": value}}}]}})
    assert e.type == "ValidationException"
    assert e.message == "The provided key element does not match the schema"
    # A single PutItem names the attribute and both types.
    e = t.error("PutItem", {"TableName": H, "Item": {"pk": {"N": "5"}}})
    assert e.message == "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"


@pytest.mark.parametrize("value, message", [
    ({"N": "5"}, "One or more parameter values were invalid: Type mismatch for Index Key lsi1sk Expected: S "
                 "Actual: N IndexName: gsi1"),
    ({"L": [{"S": "x"}]}, "One or more parameter values were invalid: Type mismatch for Index Key lsi1sk Expected: "
                          "S Actual: L IndexName: gsi1"),
    ({"S": ""}, "One or more parameter values are not valid. A value specified for a secondary index key is not "
                "supported. The AttributeValue for a key attribute cannot contain an empty string value. "
                "IndexName: gsi1, IndexKey: lsi1sk"),
])
def test_bad_index_key_names_first_index_by_name(t, value, message):
    item = {"pk": {"S": "p"}, "sk": {"S": "s"}, "lsi1sk": value}
    e = t.error("BatchWriteItem", {"RequestItems": {C: [{"PutRequest": {"Item": item}}]}})
    assert e.message == message
    e = t.error("PutItem", {"TableName": C, "Item": item})
    assert e.message == message


# ---- CreateTable ----

def test_create_table_without_name(t):
    e = t.error("CreateTable", {"AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                                "BillingMode": "PAY_PER_REQUEST"})
    assert e.type == "ValidationException"
    assert e.message == "The parameter 'TableName' is required but was not present in the request"


def test_create_table_with_one_attribute_as_both_keys(t):
    e = t.error("CreateTable", {"TableName": "Twice", "BillingMode": "PAY_PER_REQUEST",
                                "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "pk", "KeyType": "RANGE"}]})
    assert e.message == "Invalid KeySchema: Some index key attribute have no definition"


def test_on_demand_throughput_is_kept_and_updated(t):
    desc = simple_table(t, "OnDemand", BillingMode="PAY_PER_REQUEST",
                        OnDemandThroughput={"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": 5})
    assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 10, "MaxWriteRequestUnits": 5}
    t.call("UpdateTable", {"TableName": "OnDemand",
                           "OnDemandThroughput": {"MaxReadRequestUnits": 20, "MaxWriteRequestUnits": 15}})
    desc = t.call("DescribeTable", {"TableName": "OnDemand"})["Table"]
    assert desc["OnDemandThroughput"] == {"MaxReadRequestUnits": 20, "MaxWriteRequestUnits": 15}
    assert "OnDemandThroughput" not in simple_table(t, "NoLimits", BillingMode="PAY_PER_REQUEST")


# ---- UpdateTable ----

def test_provisioned_throughput_that_would_not_change(t):
    simple_table(t, "Prov", ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    for extra in ({"BillingMode": "PROVISIONED"}, {}):
        e = t.error("UpdateTable", dict({"TableName": "Prov", "ProvisionedThroughput": {
            "ReadCapacityUnits": 5, "WriteCapacityUnits": 5}}, **extra))
        assert e.type == "ValidationException"
        assert e.message.startswith("The provisioned throughput for the table will not change.")
    t.call("UpdateTable", {"TableName": "Prov",
                           "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 6}})
    desc = t.call("DescribeTable", {"TableName": "Prov"})["Table"]
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 6


# ---- consumed capacity ----

IX = "ConfIndexed"


@pytest.fixture
def ix(q):
    q.call("CreateTable", {
        "TableName": IX, "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "g", "l")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "gix", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["proj"]}}],
        "LocalSecondaryIndexes": [{"IndexName": "lix", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                                    {"AttributeName": "l", "KeyType": "RANGE"}],
                                   "Projection": {"ProjectionType": "ALL"}}]})
    return q


def arms(cc):
    """(total, table, global index, local index) units of one ConsumedCapacity."""
    return (cc["CapacityUnits"], cc["Table"]["CapacityUnits"],
            cc.get("GlobalSecondaryIndexes", {}).get("gix", {}).get("CapacityUnits"),
            cc.get("LocalSecondaryIndexes", {}).get("lix", {}).get("CapacityUnits"))


def full_item(pk):
    return {"pk": {"S": pk}, "sk": {"S": "1"}, "g": {"S": "g"}, "l": {"S": "l"}, "proj": {"S": "p"},
            "extra": {"S": "o"}}


def test_single_table_capacity_has_no_read_write_split(ix):
    ix.call("PutItem", {"TableName": IX, "Item": full_item("a")})
    got = ix.call("GetItem", {"TableName": IX, "Key": {"pk": {"S": "a"}, "sk": {"S": "1"}},
                              "ReturnConsumedCapacity": "TOTAL"})["ConsumedCapacity"]
    assert got == {"TableName": IX, "CapacityUnits": 0.5}
    got = ix.call("PutItem", {"TableName": IX, "Item": full_item("b"),
                              "ReturnConsumedCapacity": "INDEXES"})["ConsumedCapacity"]
    assert got == {"TableName": IX, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 1.0},
                   "GlobalSecondaryIndexes": {"gix": {"CapacityUnits": 1.0}},
                   "LocalSecondaryIndexes": {"lix": {"CapacityUnits": 1.0}}}
    got = ix.call("Query", {"TableName": IX, "KeyConditionExpression": "pk = :p", "ConsistentRead": True,
                            "ExpressionAttributeValues": {":p": {"S": "a"}},
                            "ReturnConsumedCapacity": "INDEXES"})["ConsumedCapacity"]
    assert got == {"TableName": IX, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def test_index_is_charged_only_when_its_view_changes(ix):
    put = {"TableName": IX, "Item": full_item("same"), "ReturnConsumedCapacity": "INDEXES"}
    assert arms(ix.call("PutItem", put)["ConsumedCapacity"]) == (3.0, 1.0, 1.0, 1.0)
    assert arms(ix.call("PutItem", put)["ConsumedCapacity"]) == (1.0, 1.0, None, None)

    def update(pk, expr, values=None):
        ix.call("PutItem", {"TableName": IX, "Item": full_item(pk)})
        req = {"TableName": IX, "Key": {"pk": {"S": pk}, "sk": {"S": "1"}}, "UpdateExpression": expr,
               "ReturnConsumedCapacity": "INDEXES"}
        if values:
            req["ExpressionAttributeValues"] = values
        return arms(ix.call("UpdateItem", req)["ConsumedCapacity"])

    v = {":v": {"S": "new"}}
    assert update("u1", "SET extra = :v", v) == (2.0, 1.0, None, 1.0)  # not projected into gi
    assert update("u2", "SET proj = :v", v) == (3.0, 1.0, 1.0, 1.0)
    assert update("u3", "SET g = :v", v) == (4.0, 1.0, 2.0, 1.0)  # gi: delete plus insert
    assert update("u4", "REMOVE g") == (3.0, 1.0, 1.0, 1.0)
    assert update("u5", "SET l = :v", v) == (3.0, 1.0, None, 2.0)


def test_batch_write_reports_index_arms(ix):
    got = ix.call("BatchWriteItem", {"RequestItems": {IX: [
        {"PutRequest": {"Item": {"pk": {"S": "i"}, "sk": {"S": "1"}, "g": {"S": "g"}, "proj": {"S": "p"}}}},
        {"PutRequest": {"Item": {"pk": {"S": "s"}, "sk": {"S": "1"}, "extra": {"S": "o"}}}}]},
        "ReturnConsumedCapacity": "INDEXES"})["ConsumedCapacity"]
    assert got == [{"TableName": IX, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 2.0},
                    "GlobalSecondaryIndexes": {"gix": {"CapacityUnits": 1.0}}}]


# ---- Query and Scan parameters ----

@pytest.mark.parametrize("op", ["Query", "Scan"])
def test_read_parameter_messages(t, op):
    base = {"TableName": C}
    if op == "Query":
        base.update(KeyConditionExpression="pk = :v", ExpressionAttributeValues={":v": {"S": "v"}})
    if op == "Scan":  # most regions still answer Scan in the older wording: test_conformance_more
        return
    e = t.error(op, dict(base, Limit=0))
    assert e.message == ("1 validation error detected: Value at 'Limit' failed to satisfy constraint: Member must "
                         "have value greater than or equal to 1")
    e = t.error(op, dict(base, ExclusiveStartKey={"bad": {"S": "p"}}))
    assert e.message == "The provided starting key is invalid"
    e = t.error(op, dict(base, Select="SPECIFIC_ATTRIBUTES"))
    assert e.message == ("1 validation error detected: Must specify the AttributesToGet or ProjectionExpression "
                         "when choosing to get SPECIFIC_ATTRIBUTES")


def test_scan_segment_messages(t):
    # The older wording most regions still give (28 of 33, October 2026).
    e = t.error("Scan", {"TableName": H, "Segment": 5, "TotalSegments": 5})
    assert e.message == ("The Segment parameter is zero-based and must be less than parameter TotalSegments: "
                         "Segment: 5 is not less than TotalSegments: 5")
    e = t.error("Scan", {"TableName": H, "Segment": -1, "TotalSegments": 4})
    assert e.message == ("1 validation error detected: Value '-1' at 'segment' failed to satisfy constraint: Member "
                         "must have value greater than or equal to 0")


def test_binary_set_messages(t):
    e = t.error("PutItem", {"TableName": H, "Item": {"pk": {"S": "b"}, "bs": {"BS": []}}})
    assert e.message == "One or more parameter values were invalid: Binary sets should not be empty"
    e = t.error("PutItem", {"TableName": H, "Item": {"pk": {"S": "b"}, "bs": {"BS": ["", ""]}}})
    # PutItem reports a repeated member inside the envelope, quoted (the current layer)
    assert e.message == ('1 validation error detected: One or more parameter values were invalid: '
                         'Input collection ["",""]of type BS contains duplicates.')


def test_batch_get_keys_and_table_names(t):
    e = t.error("BatchGetItem", {"RequestItems": {H: {"Keys": []}}})
    assert e.message == (f"1 validation error detected: Value at 'RequestItems.{H}.member.Keys' failed to satisfy "
                         "constraint: Member must have length greater than or equal to 1")
    e = t.error("BatchGetItem", {"RequestItems": {"bad!name": {"Keys": [{"pk": {"S": "a"}}]}}})
    assert e.message == ("1 validation error detected: Value '{\"bad!name\":{\"Keys\":[{\"pk\":{\"S\":\"a\"}}]}}' at "
                         "'requestItems' failed to satisfy constraint: Map keys must satisfy constraint: [Member must "
                         "have length less than or equal to 255, Member must have length greater than or equal to 3, "
                         "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+]")


# ---- single-item writes: the request validation envelope ----

ONE = "1 validation error detected: "


@pytest.mark.parametrize("op", ["PutItem", "DeleteItem"])
def test_write_request_errors_are_enveloped(t, op):
    base = {"TableName": H}
    base.update({"Item": {"pk": {"S": "e"}}} if op == "PutItem" else {"Key": {"pk": {"S": "e"}}})
    cases = [
        ({"ExpressionAttributeValues": {":v": {"S": "x"}}},
         "ExpressionAttributeValues can only be specified when using expressions"),
        ({"ExpressionAttributeNames": {"#a": "a"}}, "ExpressionAttributeNames can only be specified when using expressions"),
        ({"ConditionExpression": "attribute_exists(a)", "ExpressionAttributeValues": {}},
         "ExpressionAttributeValues must not be empty"),
        ({"ConditionExpression": ""}, "Invalid ConditionExpression: The expression can not be empty;"),
        ({"ReturnValues": "ALL_NEW"}, "ReturnValues can only be ALL_OLD or NONE"),
        ({"Expected": {"a": {"Exists": True}}},
         "One or more parameter values were invalid: Value must be provided when Exists is true for Attribute: a"),
        ({"Expected": {"a": {"ComparisonOperator": "EQ"}}}, "One or more parameter values were invalid: Value or "
                                                            "AttributeValueList must be used with ComparisonOperator: "
                                                            "EQ for Attribute: a"),
    ]
    for extra, message in cases:
        e = t.error(op, dict(base, **extra))
        assert e.type == "ValidationException"
        assert e.message == ONE + message, extra


def test_update_condition_with_undefined_value_is_enveloped(t):
    e = t.error("UpdateItem", {"TableName": H, "Key": {"pk": {"S": "e"}}, "UpdateExpression": "SET b = :w",
                               "ConditionExpression": "a = :v", "ExpressionAttributeValues": {":w": {"S": "x"}}})
    assert e.message == (ONE + "Invalid ConditionExpression: An expression attribute value used in expression is "
                         "not defined; attribute value: :v")
    # Key attributes are judged after the expressions, and without the envelope.
    e = t.error("UpdateItem", {"TableName": H, "Key": {"pk": {"S": "e"}}, "UpdateExpression": "SET pk = :v",
                               "ExpressionAttributeValues": {":v": {"S": "x"}}})
    assert e.message == ("One or more parameter values were invalid: Cannot update attribute pk. This attribute is "
                         "part of the key")


def test_create_table_with_three_key_elements_echoes_them(t):
    e = t.error("CreateTable", {"TableName": "Three", "BillingMode": "PAY_PER_REQUEST",
                                "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"}
                                                         for n in ("pk", "sk", "extra")],
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "sk", "KeyType": "RANGE"},
                                              {"AttributeName": "extra", "KeyType": "RANGE"}]})
    assert e.message == ("1 validation error detected: Value '[KeySchemaElement(attributeName=pk, keyType=HASH), "
                         "KeySchemaElement(attributeName=sk, keyType=RANGE), KeySchemaElement(attributeName=extra, "
                         "keyType=RANGE)]' at 'keySchema' failed to satisfy constraint: Member must have length less "
                         "than or equal to 2")


def test_return_values_enum_is_listed_in_dynamodb_order(t):
    e = t.error("UpdateItem", {"TableName": H, "Key": {"pk": {"S": "x"}}, "ReturnValues": "INVALID",
                               "UpdateExpression": "SET a = :a", "ExpressionAttributeValues": {":a": {"S": "x"}}})
    assert e.message == ("1 validation error detected: Value 'INVALID' at 'returnValues' failed to satisfy "
                         "constraint: Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, "
                         "UPDATED_NEW]")


def test_size_of_a_string_counts_utf16_code_units(t):
    # é is one UTF-16 code unit, U+1D11E a surrogate pair: three units, six UTF-8 bytes.
    t.call("PutItem", {"TableName": C, "Item": {"pk": {"S": "size"}, "sk": {"S": "1"}, "s": {"S": "\u00e9\U0001d11e"}}})

    def count(n):
        return t.call("Query", {"TableName": C, "KeyConditionExpression": "pk = :p", "FilterExpression": "size(s) = :n",
                                "ExpressionAttributeValues": {":p": {"S": "size"}, ":n": {"N": n}}})["Count"]
    assert count("3") == 1
    assert count("6") == 0


@pytest.mark.parametrize("op, request_", [
    ("UpdateItem", {"Key": {"pk": {"S": "k"}}, "ReturnValues": "INVALID"}),
    ("PutItem", {"Item": {"pk": {"S": "k"}}, "ReturnValues": "INVALID"}),
    ("DeleteItem", {"Key": {"pk": {"S": "k"}}, "ReturnConsumedCapacity": "INVALID"}),
    ("GetItem", {"Key": {"pk": {"S": "k"}}, "ReturnConsumedCapacity": "INVALID"}),
    ("Query", {"KeyConditionExpression": "pk = :v", "ExpressionAttributeValues": {":v": {"S": "k"}}, "Select": "BAD"}),
    ("Scan", {"Limit": 0}),
    ("Scan", {"Segment": 0, "TotalSegments": 0}),
])
def test_parameter_constraints_are_judged_before_the_table_is_looked_for(t, op, request_):
    e = t.error(op, dict(request_, TableName="NoSuchTable"))
    assert e.type == "ValidationException"
    assert e.message.startswith("1 validation error detected: ")
