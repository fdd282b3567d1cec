"""Answers DynamoDB gives where a public conformance suite, run against quarry, found it
answering otherwise: which of several problems a request reports, and what reading behind a
local index costs.

Recorded against the live service by that suite (nubo-db/dynamodb-conformance, its tier 2
and tier 3 tests and its September 2026 captures in four regions)."""
import pytest

from quarry_cli import nested

T = "Ordering"

RCC = ("Value 'INVALID' at 'returnConsumedCapacity' failed to satisfy constraint: "
       "Member must satisfy enum value set: [INDEXES, TOTAL, NONE]")
RICM = ("Value 'INVALID' at 'returnItemCollectionMetrics' failed to satisfy constraint: "
        "Member must satisfy enum value set: [SIZE, NONE]")
RV_NAMED = ("Value 'INVALID' at 'returnValues' failed to satisfy constraint: "
            "Member must satisfy enum value set: [ALL_NEW, UPDATED_OLD, ALL_OLD, NONE, UPDATED_NEW]")
RV_AMONG_OTHERS = ("Failed to satisfy constraint: Member must satisfy enum value set: "
                   "[ALL_OLD, UPDATED_OLD, ALL_NEW, UPDATE_NEW, NONE]")


@pytest.fixture
def t(q):
    q.create(T, sk=None)
    return q


# ---- PutItem and DeleteItem judge their Return* members together ----

def test_put_reports_three_bad_enums_in_one_message(t):
    e = t.error("PutItem", {"TableName": "no_such_table", "Item": {"pk": {"S": "a"}},
                            "ReturnConsumedCapacity": "INVALID", "ReturnItemCollectionMetrics": "INVALID",
                            "ReturnValues": "INVALID"})
    assert e.type == "ValidationException"
    assert e.message == f"3 validation errors detected: {RCC}; {RV_AMONG_OTHERS}; {RICM}"


def test_delete_reports_two_bad_enums_in_one_message(t):
    e = t.error("DeleteItem", {"TableName": T, "Key": {"pk": {"S": "a"}},
                               "ReturnValues": "INVALID", "ReturnConsumedCapacity": "INVALID"})
    assert e.message == f"2 validation errors detected: {RCC}; {RV_AMONG_OTHERS}"


def test_put_two_bad_enums_without_return_values_are_both_named(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "a"}},
                            "ReturnConsumedCapacity": "INVALID", "ReturnItemCollectionMetrics": "INVALID"})
    assert e.message == f"2 validation errors detected: {RCC}; {RICM}"


def test_a_bad_return_values_alone_is_named(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "a"}}, "ReturnValues": "INVALID"})
    assert e.message == f"1 validation error detected: {RV_NAMED}"


def test_a_member_of_the_wrong_type_is_reported_alone(t):
    e = t.error("DeleteItem", {"TableName": T, "Key": {"pk": {"S": "a"}},
                               "ReturnValues": "INVALID", "ReturnConsumedCapacity": 7})
    assert e.type == "SerializationException"


# ---- TransactGetItems: a key that does not fit cancels the transaction ----

def test_transact_get_with_an_empty_key_is_cancelled(t):
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": T, "Key": {}}}]})
    assert e.type == "TransactionCanceledException"
    assert e.message == ("Transaction cancelled, please refer cancellation reasons for specific reasons "
                         "[ValidationError]")
    assert e.body["CancellationReasons"] == [
        {"Code": "ValidationError", "Message": "The provided key element does not match the schema"}]


def test_transact_get_cancellation_marks_only_the_bad_action(t):
    e = t.error("TransactGetItems", {"TransactItems": [
        {"Get": {"TableName": T, "Key": {"pk": {"S": "a"}}}},
        {"Get": {"TableName": T, "Key": {"pk": {"N": "1"}}}}]})
    assert [r["Code"] for r in e.body["CancellationReasons"]] == ["None", "ValidationError"]


def test_transact_get_with_an_empty_key_value_fails_the_request(t):
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": T, "Key": {"pk": {"S": ""}}}}]})
    assert e.type == "ValidationException"


# ---- PartiQL checks operand types before it looks the table up ----

def test_partiql_operand_type_is_judged_before_the_table(t):
    e = t.error("ExecuteStatement", {"Statement": 'SELECT pk FROM "no_such_table" WHERE pk = ? AND val < ?',
                                     "Parameters": [{"S": "x"}, {"BOOL": True}]})
    assert e.type == "ValidationException"
    assert e.message == "Incorrect operand type for operator or function; operator or function: <, operand type: BOOL"


def test_partiql_well_formed_statement_on_a_missing_table(t):
    e = t.error("ExecuteStatement", {"Statement": 'SELECT pk FROM "no_such_table" WHERE pk = ?',
                                     "Parameters": [{"S": "x"}]})
    assert e.type == "ResourceNotFoundException"


def test_partiql_update_with_a_wrong_operand_on_a_missing_table(t):
    e = t.error("ExecuteStatement", {"Statement": "UPDATE \"no_such_table\" SET a = 1 WHERE pk = 'x' AND b > true"})
    assert e.type == "ValidationException"
    assert "operand type: BOOL" in e.message


# ---- PartiQL's UPDATE measures only the finished item ----

def test_partiql_update_writes_what_update_item_refuses(t):
    # UpdateItem also measures what its expression writes, key aside; an item of exactly
    # 400 KB at a one-letter key is refused by that measure but not by the finished item's.
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "X"}}})
    value = "p" * (400 * 1024 - len("pk") - len("X") - len("p"))
    e = t.error("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "X"}}, "UpdateExpression": "SET p = :p",
                               "ExpressionAttributeValues": {":p": {"S": value}}})
    assert e.message == "Item size to update has exceeded the maximum allowed size"
    t.call("ExecuteStatement", {"Statement": f'UPDATE "{T}" SET p = ? WHERE pk = ?',
                                "Parameters": [{"S": value}, {"S": "X"}]})
    got = t.call("GetItem", {"TableName": T, "Key": {"pk": {"S": "X"}}})["Item"]
    assert len(got["p"]["S"]) == len(value)
    # One byte more is over the limit on every surface.
    e = t.error("ExecuteStatement", {"Statement": f'UPDATE "{T}" SET p = ? WHERE pk = ?',
                                     "Parameters": [{"S": value + "p"}, {"S": "X"}]})
    assert e.type == "ValidationException"


# ---- reading behind a local index is charged to the table ----

L = "OrderingLsi"


@pytest.fixture
def lsi(q):
    defs = [{"AttributeName": n, "AttributeType": "S"} for n in ("pk", "sk", "l2")]
    q.call("CreateTable", {
        "TableName": L, "AttributeDefinitions": defs, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "LocalSecondaryIndexes": [{"IndexName": "keys", "Projection": {"ProjectionType": "KEYS_ONLY"},
                                   "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                 {"AttributeName": "l2", "KeyType": "RANGE"}]}]})
    for i in range(3):
        q.call("PutItem", {"TableName": L, "Item": {"pk": {"S": "p"}, "sk": {"S": f"s{i}"}, "l2": {"S": f"k{i}"},
                                                    "extra": {"S": "x" * 100}}})
    return q


def query(q, **extra):
    req = {"TableName": L, "IndexName": "keys", "KeyConditionExpression": "pk = :p",
           "ExpressionAttributeValues": {":p": {"S": "p"}}, "ReturnConsumedCapacity": "INDEXES"}
    req.update(extra)
    return q.call("Query", req)


def test_lsi_fetch_of_unprojected_attributes_is_charged_to_the_table(lsi):
    r = query(lsi, ProjectionExpression="extra")
    assert [i["extra"]["S"] for i in r["Items"]] == ["x" * 100] * 3
    cc = r["ConsumedCapacity"]
    # Each fetch of a small item: half a unit, eventually consistent.
    assert cc["Table"] == {"CapacityUnits": 1.5}
    assert cc["LocalSecondaryIndexes"] == {"keys": {"CapacityUnits": 0.5}}
    assert cc["CapacityUnits"] == 2.0


def test_lsi_fetch_is_charged_per_row_walked_even_when_filtered_out(lsi):
    kept_none = query(lsi, Select="ALL_ATTRIBUTES", FilterExpression="sk = :no",
                      ExpressionAttributeValues={":p": {"S": "p"}, ":no": {"S": "none"}})
    assert kept_none["Count"] == 0
    assert kept_none["ConsumedCapacity"]["Table"] == {"CapacityUnits": 1.5}
    one = query(lsi, Select="ALL_ATTRIBUTES", Limit=1)
    assert one["ConsumedCapacity"]["Table"] == {"CapacityUnits": 0.5}


def test_lsi_read_of_projected_attributes_reads_the_index_alone(lsi):
    r = query(lsi, ProjectionExpression="l2, sk")
    assert r["ConsumedCapacity"]["Table"] == {"CapacityUnits": 0.0}
    assert all(set(i) == {"l2", "sk"} for i in r["Items"])


def test_partiql_through_an_lsi_charges_the_table_only_when_it_reaches_back(lsi):
    back = lsi.call("ExecuteStatement", {"Statement": f'SELECT extra FROM "{L}"."keys" WHERE pk = \'p\'',
                                         "ReturnConsumedCapacity": "INDEXES"})
    assert len(back["Items"]) == 3 and back["ConsumedCapacity"]["Table"]["CapacityUnits"] > 0
    held = lsi.call("ExecuteStatement", {"Statement": f'SELECT l2 FROM "{L}"."keys" WHERE pk = \'p\'',
                                         "ReturnConsumedCapacity": "INDEXES"})
    assert held["ConsumedCapacity"]["Table"] == {"CapacityUnits": 0.0}
    assert all(set(i) == {"l2"} for i in held["Items"])



# ---- more answers the suite's newer tests pin ----

def test_transact_get_projection_matching_nothing_leaves_no_item(t):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "p"}, "a": {"S": "x"}}})
    r = t.call("TransactGetItems", {"TransactItems": [{"Get": {"TableName": T, "Key": {"pk": {"S": "p"}},
                                                               "ProjectionExpression": "nothing_here"}}]})
    assert r["Responses"] == [{}]


def test_condition_check_is_billed_as_a_transactional_write(t):
    t.call("PutItem", {"TableName": T, "Item": {"pk": {"S": "c"}}})
    t.create("OrderingOther", sk=None)
    r = t.call("TransactWriteItems", {"ReturnConsumedCapacity": "INDEXES", "TransactItems": [
        {"Put": {"TableName": "OrderingOther", "Item": {"pk": {"S": "w"}}}},
        {"ConditionCheck": {"TableName": T, "Key": {"pk": {"S": "c"}}, "ConditionExpression": "attribute_exists(pk)"}}]})
    check = next(c for c in r["ConsumedCapacity"] if c["TableName"] == T)
    assert (check["CapacityUnits"], check["WriteCapacityUnits"]) == (2.0, 2.0)
    assert "ReadCapacityUnits" not in check


def test_all_projected_attributes_with_a_projection_and_no_index(t):
    for op, extra in (("Query", {"KeyConditionExpression": "pk = :p", "ExpressionAttributeValues": {":p": {"S": "a"}}}),
                      ("Scan", {})):
        e = t.error(op, {"TableName": T, "Select": "ALL_PROJECTED_ATTRIBUTES", "ProjectionExpression": "a", **extra})
        assert "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES" in e.message
        e = t.error(op, {"TableName": T, "Select": "ALL_PROJECTED_ATTRIBUTES", **extra})
        assert e.message == "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"


def test_batch_write_put_without_the_key_and_an_empty_list(t):
    e = t.error("BatchWriteItem", {"RequestItems": {T: [{"PutRequest": {"Item": {"other": {"S": "x"}}}}]}})
    assert e.message == "The provided key element does not match the schema"
    e = t.error("BatchWriteItem", {"RequestItems": {T: []}})
    assert e.message == (f"1 validation error detected: Value '{{{T}=[]}}' at 'requestItems' failed to satisfy "
                         "constraint: Map value must satisfy constraint: [Member must have length less than or equal "
                         "to 25, Member must have length greater than or equal to 1]")


def test_transact_write_action_naming_no_operation(t):
    e = t.error("TransactWriteItems", {"TransactItems": [{}]})
    assert e.message == "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"


def test_query_key_condition_operand_is_judged_before_the_table(t):
    e = t.error("Query", {"TableName": "no_such_table", "KeyConditionExpression": "pk = :p AND begins_with(sk, :n)",
                          "ExpressionAttributeValues": {":p": {"S": "q"}, ":n": {"N": "1"}}})
    assert e.type == "ValidationException"
    assert e.message.endswith("Incorrect operand type for operator or function; operator or function: begins_with, "
                              "operand type: N")
    e = t.error("Query", {"TableName": "no_such_table", "KeyConditionExpression": "pk = :p AND begins_with(sk, :s)",
                          "ExpressionAttributeValues": {":p": {"S": "q"}, ":s": {"S": "a"}}})
    assert e.type == "ResourceNotFoundException"


# ---- values nested past the 32-level limit ----

NEST = ("Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond "
        "supported limit")


def test_single_item_depth_messages_change_far_past_the_limit(t):
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "d"}, "data": nested(61)}})
    assert e.message == "1 validation error detected: " + NEST
    e = t.error("PutItem", {"TableName": T, "Item": {"pk": {"S": "d"}, "data": nested(63)}})
    assert e.message == NEST
    e = t.error("UpdateItem", {"TableName": T, "Key": {"pk": {"S": "d"}}, "UpdateExpression": "SET a = :t",
                               "ConditionExpression": "#d = :deep", "ExpressionAttributeNames": {"#d": "data"},
                               "ExpressionAttributeValues": {":t": {"S": "y"}, ":deep": nested(63)}})
    assert e.message == f"ExpressionAttributeValues contains invalid value: {NEST} for key :deep"


def test_transactions_judge_deep_values_before_running(t):
    check = {"ConditionCheck": {"TableName": "no_such_table", "Key": {"pk": {"S": "a"}}, "ConditionExpression": "d = :deep",
                                "ExpressionAttributeValues": {":deep": nested(33)}}}
    e = t.error("TransactWriteItems", {"TransactItems": [check]})
    assert (e.type, e.message) == ("ValidationException",
                                   f"ExpressionAttributeValues contains invalid value: {NEST} for key :deep")
    # One level past the limit is left to the condition, which then fails.
    check["ConditionCheck"].update(TableName=T, ExpressionAttributeValues={":deep": nested(32)})
    e = t.error("TransactWriteItems", {"TransactItems": [check]})
    assert [r["Code"] for r in e.body["CancellationReasons"]] == ["ConditionalCheckFailed"]


def test_transactions_report_problems_in_action_order(t):
    deep_delete = {"Delete": {"TableName": "no_such_table", "Key": {"pk": nested(40)}}}
    bad_put = {"Put": {"TableName": "no_such_table", "Item": {"pk": {"S": "a"}}, "ConditionExpression": "a = = b"}}
    assert t.error("TransactWriteItems", {"TransactItems": [deep_delete, bad_put]}).message == NEST
    assert t.error("TransactWriteItems", {"TransactItems": [bad_put, deep_delete]}).message.startswith(
        "Invalid ConditionExpression: Syntax error")
    empty_name = {"Put": {"TableName": "no_such_table", "Item": {"pk": {"S": "a"}, "": {"S": "x"}, "d": nested(100)}}}
    assert t.error("TransactWriteItems", {"TransactItems": [empty_name]}).message == "Empty attribute name"


def test_scan_filter_value_too_deep_is_refused_before_the_table(t):
    e = t.error("Scan", {"TableName": "no_such_table", "ConditionalOperator": "AND",
                         "ScanFilter": {"a": {"ComparisonOperator": "EQ", "AttributeValueList": [nested(40)]}}})
    assert (e.type, e.message) == ("ValidationException", NEST)


def test_transaction_oversized_update_expression_has_no_size_tail(t):
    update = {"Update": {"TableName": "no_such_table", "Key": {"pk": {"S": "a"}},
                         "UpdateExpression": "SET " + ", ".join(f"a{i} = :v" for i in range(500)),
                         "ExpressionAttributeValues": {":v": {"S": "x"}}}}
    e = t.error("TransactWriteItems", {"TransactItems": [update]})
    assert e.message == "Invalid UpdateExpression: Expression size has exceeded the maximum allowed size;"


def test_far_too_deep_requests_are_read_the_older_way(t):
    # past about 62 levels, PutItem and UpdateItem check ConditionalOperator first, in the
    # older enum form, and DeleteItem words UPDATED_NEW bare
    expected = {"a": {"Value": nested(100)}, "b": {"Exists": False}}
    e = t.error("PutItem", {"TableName": "no_such_table", "Item": {"pk": {"S": "a"}}, "Expected": expected,
                            "ConditionalOperator": "XOR"})
    assert e.message == ("1 validation error detected: Value 'XOR' at 'conditionalOperator' failed to satisfy "
                         "constraint: Member must satisfy enum value set: [OR, AND]")
    e = t.error("DeleteItem", {"TableName": "no_such_table", "Key": {"pk": {"S": "a"}}, "ReturnValues": "UPDATED_NEW",
                               "ConditionExpression": "d = :deep", "ExpressionAttributeValues": {":deep": nested(100)}})
    assert e.message == "ReturnValues can only be ALL_OLD or NONE"
    e = t.error("DeleteItem", {"TableName": T, "Key": {"pk": {"S": "a"}}, "ReturnValues": "UPDATED_NEW"})
    assert e.message == "1 validation error detected: ReturnValues can only be ALL_OLD or NONE"


def test_query_filter_operator_and_select_both_outside_their_enums(t):
    e = t.error("Query", {"TableName": "no_such_table", "Select": "BOGUS", "ConditionalOperator": "XOR",
                          "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
                          "QueryFilter": {"b": {"ComparisonOperator": "NULL"}, "c": {"ComparisonOperator": "NULL"}}})
    assert e.message == "Failed to satisfy constraint: Member must satisfy enum value set: [ALL, OR]"
    # alone, the operator is named (as ScyllaDB's Alternator suite recorded it)
    e = t.error("Query", {"TableName": T, "ConditionalOperator": "DOG",
                          "KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
                          "QueryFilter": {"b": {"ComparisonOperator": "NULL"}, "c": {"ComparisonOperator": "NULL"}}})
    assert "DOG" in e.message


def test_batch_write_echoes_a_bad_table_name_as_java_objects(t):
    e = t.error("BatchWriteItem", {"RequestItems": {"bad!name": [{"PutRequest": {"Item": {"pk": {"S": "x"}}}}]}})
    assert e.message.startswith("1 validation error detected: Value '{bad!name=[WriteRequest(putRequest=PutRequest("
                                "item={pk=AttributeValue(s=x, n=null, b=null, ")
    assert e.message.endswith(", workloadProfileName=null), deleteRequest=null)]}' at 'requestItems' failed to satisfy "
                              "constraint: Map keys must satisfy constraint: [Member must have length less than or "
                              "equal to 255, Member must have length greater than or equal to 3, Member must satisfy "
                              "regular expression pattern: [a-zA-Z0-9_.-]+]")
