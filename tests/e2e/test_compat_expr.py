"""Expression behaviours DynamoDB shows that an independent compatibility suite checks.

Each test pins one thing real DynamoDB does with UpdateExpression, ConditionExpression,
FilterExpression, ProjectionExpression, KeyConditionExpression or their legacy forms that
quarry once did differently."""
import pytest

T = "CompatExpr"
# DynamoDB reports what is wrong with a single-item write's expressions inside this envelope.
ONE = "1 validation error detected: "


@pytest.fixture
def t(q):
    q.create(T, sk=("sk", "N"))
    return q


def put(t, item):
    t.call("PutItem", {"TableName": T, "Item": item})


def get(t, pk, sk, **extra):
    return t.call("GetItem", dict({"TableName": T, "Key": {"pk": {"S": pk}, "sk": {"N": str(sk)}},
                                   "ConsistentRead": True}, **extra))


def update(t, pk, sk, **extra):
    return t.call("UpdateItem", dict({"TableName": T, "Key": {"pk": {"S": pk}, "sk": {"N": str(sk)}}}, **extra))


def update_error(t, pk, sk, **extra):
    return t.error("UpdateItem", dict({"TableName": T, "Key": {"pk": {"S": pk}, "sk": {"N": str(sk)}}}, **extra))


@pytest.mark.parametrize("expression", ["SET _a = :v", "SET a = _f(b)", "SET a = :v REMOVE _b"])
def test_bare_name_may_not_start_with_underscore(t, expression):
    e = update_error(t, "u", 1, UpdateExpression=expression, ExpressionAttributeValues={":v": {"N": "1"}})
    assert e.type == "ValidationException"
    assert 'Syntax error; token: "_"' in e.message


def test_underscore_inside_names_and_references_is_fine(t):
    update(t, "u", 2, UpdateExpression="SET a_b = :_v, #_ = :_v",
           ExpressionAttributeNames={"#_": "c"}, ExpressionAttributeValues={":_v": {"N": "1"}})
    assert get(t, "u", 2)["Item"]["a_b"] == {"N": "1"}
    assert get(t, "u", 2)["Item"]["c"] == {"N": "1"}


def test_attribute_type_accepts_a_value_as_first_operand(t):
    put(t, {"pk": {"S": "at"}, "sk": {"N": "1"}})
    update(t, "at", 1, UpdateExpression="SET z = :v", ConditionExpression="attribute_type(:v, :t)",
           ExpressionAttributeValues={":v": {"N": "0"}, ":t": {"S": "N"}})
    assert get(t, "at", 1)["Item"]["z"] == {"N": "0"}
    e = update_error(t, "at", 1, UpdateExpression="SET z = :v", ConditionExpression="attribute_type(:v, :t)",
                     ExpressionAttributeValues={":v": {"N": "0"}, ":t": {"S": "S"}})
    assert e.type == "ConditionalCheckFailedException"


def test_projection_path_deeper_than_32_levels_is_refused(t):
    put(t, {"pk": {"S": "deep"}, "sk": {"N": "1"}})
    assert get(t, "deep", 1, ProjectionExpression="a" + ".b" * 31)["Item"] == {}
    e = t.error("GetItem", {"TableName": T, "Key": {"pk": {"S": "deep"}, "sk": {"N": "1"}},
                            "ProjectionExpression": "a" + ".b" * 32})
    assert e.message == ("Invalid ProjectionExpression: The document path has too many nesting levels; "
                         "nesting levels: 33")


def test_condition_path_deeper_than_32_levels_is_refused(t):
    e = update_error(t, "deep", 2, UpdateExpression="SET z = :v", ExpressionAttributeValues={":v": {"N": "1"}},
                     ConditionExpression="attribute_exists(a" + "[0]" * 32 + ")")
    assert e.message == (ONE + "Invalid ConditionExpression: The document path has too many nesting levels; "
                         "nesting levels: 33")


def test_conditional_operator_needs_two_legacy_conditions(t):
    put_one = {"a": {"Value": {"N": "1"}, "Action": "PUT"}}
    e = update_error(t, "co", 1, AttributeUpdates=put_one, Expected={}, ConditionalOperator="OR")
    assert e.message == ONE + "ConditionalOperator can only be used when Filter or Expected has two or more elements"
    e = update_error(t, "co", 1, AttributeUpdates=put_one, ConditionalOperator="AND",
                     Expected={"a": {"Exists": False}})
    assert e.message == ONE + "ConditionalOperator can only be used when Filter or Expected has two or more elements"
    e = update_error(t, "co", 1, AttributeUpdates=put_one, ConditionalOperator="AND")
    assert e.message == ONE + "ConditionalOperator cannot be used without Filter or Expected"
    e = t.error("Scan", {"TableName": T, "ConditionalOperator": "OR",
                         "ScanFilter": {"a": {"ComparisonOperator": "NULL"}}})
    assert e.message == "ConditionalOperator can only be used when Filter or Expected has two or more elements"
    update(t, "co", 1, AttributeUpdates=put_one, ConditionalOperator="OR",
           Expected={"a": {"Exists": False}, "b": {"Exists": False}})
    assert get(t, "co", 1)["Item"]["a"] == {"N": "1"}


def test_conditional_operator_is_a_legacy_parameter(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "x"}, "sk": {"N": "1"}},
                            "ConditionExpression": "attribute_not_exists(pk)", "ConditionalOperator": "OR"})
    assert e.message == (ONE + "Can not use both expression and non-expression parameters in the same request: "
                         "Non-expression parameters: {ConditionalOperator} Expression parameters: "
                         "{ConditionExpression}")


def test_key_conditions_go_with_projection_and_filter_expressions(t):
    put(t, {"pk": {"S": "kc"}, "sk": {"N": "1"}, "a": {"M": {"x": {"N": "1"}, "y": {"N": "2"}}}, "b": {"S": "no"}})
    put(t, {"pk": {"S": "kc"}, "sk": {"N": "2"}, "a": {"M": {"x": {"N": "3"}}}, "b": {"S": "yes"}})
    kc = {"pk": {"AttributeValueList": [{"S": "kc"}], "ComparisonOperator": "EQ"}}
    r = t.call("Query", {"TableName": T, "KeyConditions": kc, "ProjectionExpression": "a.x",
                         "FilterExpression": "b = :b", "ExpressionAttributeValues": {":b": {"S": "yes"}}})
    assert r["Items"] == [{"a": {"M": {"x": {"N": "3"}}}}]
    e = t.error("Query", {"TableName": T, "KeyConditions": kc, "KeyConditionExpression": "pk = :p",
                          "ExpressionAttributeValues": {":p": {"S": "kc"}}})
    assert e.message.endswith("Non-expression parameters: {KeyConditions} Expression parameters: "
                              "{KeyConditionExpression}")


def test_mixing_message_lists_parameters_in_dynamodb_order(t):
    e = t.error("Query", {"TableName": T, "KeyConditionExpression": "pk = :p", "FilterExpression": "b = :p",
                          "ProjectionExpression": "b", "AttributesToGet": ["b"],
                          "QueryFilter": {"b": {"ComparisonOperator": "NULL"}},
                          "ExpressionAttributeValues": {":p": {"S": "kc"}}})
    assert e.message == ("Can not use both expression and non-expression parameters in the same request: "
                         "Non-expression parameters: {AttributesToGet, QueryFilter} Expression parameters: "
                         "{ProjectionExpression, FilterExpression, KeyConditionExpression}")


def test_more_than_300_operators_are_refused(t):
    put(t, {"pk": {"S": "ops"}, "sk": {"N": "1"}, "a": {"N": "1"}, "b": {"N": "2"}})
    values = {":v": {"N": "1"}}
    # 149 levels of "a<b or (...)" hold 299 operators: parentheses do not count.
    nested = "a<b " + "or (a<b " * 149 + ")" * 149
    update(t, "ops", 1, UpdateExpression="SET z = :v", ConditionExpression=nested, ExpressionAttributeValues=values)
    for condition in ["a<b " + "or (a<b " * 150 + ")" * 150, "a<b " + "or a<b " * 150,
                      "not " * 150 + "a<b or a<b" + " and a<b" * 149]:
        e = update_error(t, "ops", 1, UpdateExpression="SET z = :v", ConditionExpression=condition,
                         ExpressionAttributeValues=values)
        assert e.message == (ONE + "Invalid ConditionExpression: The expression contains too many operators; "
                             "operator count: 301")
    # BETWEEN's AND is part of the BETWEEN: 150 of them are 150 operators plus 149 ORs.
    between = " or ".join(["a between :v and b"] * 150)
    update(t, "ops", 1, UpdateExpression="SET z = :v", ConditionExpression=between, ExpressionAttributeValues=values)
    sums = ",".join("s%d=:v+:v" % i for i in range(301))
    e = update_error(t, "ops", 1, UpdateExpression="SET " + sums, ExpressionAttributeValues=values)
    assert e.message == ONE + "Invalid UpdateExpression: The expression contains too many operators; operator count: 301"


def test_nul_in_expression_or_name_is_refused_not_truncated(t):
    put(t, {"pk": {"S": "nul"}, "sk": {"N": "1"}})
    values = {":v": {"N": "1"}}
    e = update_error(t, "nul", 1, UpdateExpression="SET z = :v\u0000 REMOVE q", ExpressionAttributeValues=values)
    assert e.message.startswith(ONE + 'Invalid UpdateExpression: Syntax error; token: "\\u0000"')
    e = update_error(t, "nul", 1, UpdateExpression="SET #n = :v", ExpressionAttributeNames={"#n": "x\u0000y"},
                     ExpressionAttributeValues=values)
    assert e.type == "ValidationException"
    e = t.error("GetItem", {"TableName": T, "Key": {"pk": {"S": "nul"}, "sk": {"N": "1"}},
                            "AttributesToGet": ["x\u0000y"]})
    assert e.type == "ValidationException"
    assert get(t, "nul", 1)["Item"] == {"pk": {"S": "nul"}, "sk": {"N": "1"}}


def test_key_condition_on_an_empty_key_value_is_refused(t):
    message = ("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain "
               "an empty string value. Key: pk")
    e = t.error("Query", {"TableName": T, "KeyConditionExpression": "pk = :p",
                          "ExpressionAttributeValues": {":p": {"S": ""}}})
    assert e.message == message
    e = t.error("Query", {"TableName": T, "KeyConditions": {
        "pk": {"AttributeValueList": [{"S": ""}], "ComparisonOperator": "EQ"}}})
    assert e.message == message
    r = t.call("Query", {"TableName": T, "KeyConditionExpression": "pk = :p AND sk < :s",
                         "ExpressionAttributeValues": {":p": {"S": "x"}, ":s": {"N": "0"}}})
    assert r["Items"] == []


@pytest.mark.parametrize("param,key,message", [
    ("ExpressionAttributeNames", "#", 'Syntax error; key: "#"'),
    ("ExpressionAttributeNames", "#a-b", 'Syntax error; key: "#a-b"'),
    ("ExpressionAttributeValues", ":", 'Syntax error; key: ":"'),
    ("ExpressionAttributeValues", "", "The expression attribute map contains an empty key;"),
    ("ExpressionAttributeNames", "#" + "n" * 255,
     "The expression attribute map contains a key that is too long; size of key: 256"),
    ("ExpressionAttributeValues", ":" + "v" * 255, "The expression attribute map contains a key that is too long;"),
    ("ExpressionAttributeNames", "#" + "-" * 255,
     "The expression attribute map contains a key that is too long; size of key: 256"),
])
def test_substitution_keys_are_checked_before_parsing(t, param, key, message):
    request = {"UpdateExpression": "SET z = :v", "ExpressionAttributeValues": {":v": {"N": "1"}}}
    request.setdefault(param, {})[key] = {"S": "x"} if param == "ExpressionAttributeValues" else "x"
    e = update_error(t, "keys", 1, **request)
    assert e.message == ONE + "%s contains invalid key: %s" % (param, message)


def test_begins_with_on_a_number_sort_key_is_named_even_with_a_string_operand(t):
    e = t.error("Query", {"TableName": T, "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
                          "ExpressionAttributeValues": {":p": {"S": "x"}, ":s": {"S": "1"}}})
    assert e.message == ("Invalid KeyConditionExpression: Incorrect operand type for operator or function; "
                         "operator or function: begins_with, operand type: N")


@pytest.mark.parametrize("op,request_,missing", [
    # The single-item writes now answer in the envelope, without naming the expressions.
    ("UpdateItem", {"Key": {"pk": {"S": "v"}, "sk": {"N": "1"}}}, None),
    ("PutItem", {"Item": {"pk": {"S": "v"}, "sk": {"N": "1"}}}, None),
    ("DeleteItem", {"Key": {"pk": {"S": "v"}, "sk": {"N": "1"}}}, None),
    ("Scan", {"ProjectionExpression": "a"}, "FilterExpression is null"),
    ("Query", {"KeyConditions": {"pk": {"AttributeValueList": [{"S": "v"}], "ComparisonOperator": "EQ"}},
               "ProjectionExpression": "a"}, "FilterExpression and KeyConditionExpression are null"),
])
def test_values_without_an_expression_that_takes_them_are_refused(t, op, request_, missing):
    request = dict(request_, TableName=T, ExpressionAttributeValues={":v": {"N": "1"}})
    e = t.error(op, request)
    if missing is None:
        assert e.message == ONE + "ExpressionAttributeValues can only be specified when using expressions"
    else:
        assert e.message == "ExpressionAttributeValues can only be specified when using expressions: " + missing


def test_remove_through_a_missing_attribute_is_ignored_only_on_a_missing_item(t):
    """REMOVE x.y or x[0] when x is absent: refused on an existing item, ignored (and no
    item created) when the item does not exist, in UpdateItem and in a transaction."""
    for expression in ("REMOVE x.y", "REMOVE x[0]"):
        update(t, "missing", 1, UpdateExpression=expression)
        assert "Item" not in get(t, "missing", 1)
    update(t, "missing", 2, UpdateExpression="SET a = :v REMOVE x.y", ExpressionAttributeValues={":v": {"N": "5"}})
    assert get(t, "missing", 2)["Item"] == {"pk": {"S": "missing"}, "sk": {"N": "2"}, "a": {"N": "5"}}
    t.call("TransactWriteItems", {"TransactItems": [{"Update": {
        "TableName": T, "Key": {"pk": {"S": "missing"}, "sk": {"N": "3"}}, "UpdateExpression": "REMOVE x.y"}}]})
    assert "Item" not in get(t, "missing", 3)
    put(t, {"pk": {"S": "present"}, "sk": {"N": "1"}})
    for expression in ("REMOVE x.y", "REMOVE x[0]"):
        e = update_error(t, "present", 1, UpdateExpression=expression)
        assert e.type == "ValidationException" and "document path" in e.message


def test_projections_and_filters_may_not_look_inside_key_attributes(q):
    """Keys are scalars: a ProjectionExpression or FilterExpression path that goes below
    a key attribute of the table (Key) or of one of its indexes (IndexKey) is refused,
    in GetItem, BatchGetItem, Query and Scan; naming the attribute itself is fine."""
    q.call("CreateTable", {
        "TableName": "CompatKeyPaths", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "g")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "GlobalSecondaryIndexes": [{"IndexName": "ByG", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}]})
    key = {"pk": {"S": "a"}, "sk": {"S": "b"}}
    q.call("PutItem", {"TableName": "CompatKeyPaths", "Item": dict(key, g={"S": "c"}, m={"M": {"x": {"S": "y"}}})})
    message = "Key attributes must be scalars; list random access '[]' and map lookup '.' are not allowed: "
    cases = [
        ("GetItem", {"Key": key, "ProjectionExpression": "pk.x"}, "Key: pk"),
        ("GetItem", {"Key": key, "ProjectionExpression": "m, #s[0]", "ExpressionAttributeNames": {"#s": "sk"}},
         "Key: sk"),
        ("GetItem", {"Key": key, "ProjectionExpression": "g.x"}, "IndexKey: g"),
        ("Scan", {"FilterExpression": "attribute_exists(g.x)"}, "IndexKey: g"),
        ("Scan", {"ProjectionExpression": "pk[1]"}, "Key: pk"),
        ("Query", {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}},
                   "ProjectionExpression": "g.x"}, "IndexKey: g"),
    ]
    for op, extra, named in cases:
        e = q.error(op, dict({"TableName": "CompatKeyPaths"}, **extra))
        assert e.type == "ValidationException" and e.message == message + named, (op, extra, e.message)
    e = q.error("BatchGetItem", {"RequestItems": {"CompatKeyPaths": {"Keys": [key], "ProjectionExpression": "g[0]"}}})
    assert e.message == message + "IndexKey: g"
    item = q.call("GetItem", {"TableName": "CompatKeyPaths", "Key": key, "ProjectionExpression": "pk, g, m.x"})["Item"]
    assert item == {"pk": {"S": "a"}, "g": {"S": "c"}, "m": {"M": {"x": {"S": "y"}}}}
    assert q.call("Scan", {"TableName": "CompatKeyPaths", "FilterExpression": "m.x = :y",
                           "ExpressionAttributeValues": {":y": {"S": "y"}}})["Count"] == 1
