"""TransactWriteItems and TransactGetItems through `quarry call`.

Each call is a new process, so ClientRequestToken idempotency (remembered in memory by
one process) is exercised by tests/unit/engine/test_txn_race.c, which calls in-process;
here only the token's parameter checks are covered."""
import pytest

A, B = "Accounts", "Orders"


@pytest.fixture
def t(q):
    q.create(A, sk=None)
    q.create(B)
    return q


def acct(name):
    return {"pk": {"S": name}}


def order(pk, sk):
    return {"pk": {"S": pk}, "sk": {"S": sk}}


def put(table, item, **kw):
    return {"Put": dict({"TableName": table, "Item": item}, **kw)}


def update(table, key, expr, values=None, **kw):
    spec = {"TableName": table, "Key": key, "UpdateExpression": expr}
    if values:
        spec["ExpressionAttributeValues"] = values
    spec.update(kw)
    return {"Update": spec}


def delete(table, key, **kw):
    return {"Delete": dict({"TableName": table, "Key": key}, **kw)}


def check(table, key, cond, values=None, **kw):
    spec = {"TableName": table, "Key": key, "ConditionExpression": cond}
    if values:
        spec["ExpressionAttributeValues"] = values
    spec.update(kw)
    return {"ConditionCheck": spec}


def get(q, table, key):
    return q.call("GetItem", {"TableName": table, "Key": key, "ConsistentRead": True}).get("Item")


def n(v):
    return {"N": str(v)}


def test_all_actions_across_tables(t):
    t.call("PutItem", {"TableName": A, "Item": dict(acct("alice"), bal=n(100))})
    t.call("PutItem", {"TableName": B, "Item": dict(order("o", "gone"), x=n(1))})
    r = t.call("TransactWriteItems", {"TransactItems": [
        check(A, acct("alice"), "bal >= :amt", {":amt": n(30)}),
        put(B, dict(order("o", "1"), amt=n(30)), ConditionExpression="attribute_not_exists(pk)"),
        update(A, acct("bob"), "ADD bal :amt", {":amt": n(30)}),
        delete(B, order("o", "gone")),
    ]})
    assert r == {}
    assert get(t, A, acct("alice"))["bal"] == n(100)
    assert get(t, B, order("o", "1"))["amt"] == n(30)
    assert get(t, A, acct("bob")) == dict(acct("bob"), bal=n(30))
    assert get(t, B, order("o", "gone")) is None


def test_failing_check_in_the_middle_changes_nothing(t):
    t.call("PutItem", {"TableName": A, "Item": dict(acct("alice"), bal=n(10))})
    t.call("PutItem", {"TableName": A, "Item": dict(acct("carol"), bal=n(5))})
    e = t.error("TransactWriteItems", {"TransactItems": [
        update(A, acct("alice"), "SET bal = bal - :amt", {":amt": n(20)}),
        check(A, acct("carol"), "bal > :min", {":min": n(100)}),
        put(B, order("o", "1")),
        delete(A, acct("alice2")),
    ]})
    assert e.type == "TransactionCanceledException"
    assert e.message == ("Transaction cancelled, please refer cancellation reasons for specific reasons "
                         "[None, ConditionalCheckFailed, None, None]")
    assert e.body["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
        {"Code": "None"}, {"Code": "None"}]
    assert get(t, A, acct("alice"))["bal"] == n(10)
    assert get(t, A, acct("carol"))["bal"] == n(5)
    assert get(t, B, order("o", "1")) is None


def test_cancellation_reasons_order_codes_and_items(t):
    t.call("PutItem", {"TableName": A, "Item": dict(acct("a"), bal=n(1), tag={"S": "x"})})
    t.call("PutItem", {"TableName": A, "Item": dict(acct("b"), bal=n(2))})
    e = t.error("TransactWriteItems", {"TransactItems": [
        check(A, acct("a"), "bal = :v", {":v": n(9)}, ReturnValuesOnConditionCheckFailure="ALL_OLD"),
        put(A, dict(acct("b"), bal=n(3)), ConditionExpression="attribute_not_exists(pk)"),
        update(A, acct("c"), "SET bal = :v", {":v": n(1)}),
        update(A, acct("d"), "SET bal = bal + :v", {":v": n(1)}),
        delete(A, acct("e"), ConditionExpression="attribute_exists(pk)", ReturnValuesOnConditionCheckFailure="ALL_OLD"),
    ]})
    reasons = e.body["CancellationReasons"]
    assert [r["Code"] for r in reasons] == ["ConditionalCheckFailed", "ConditionalCheckFailed", "None",
                                            "ValidationError", "ConditionalCheckFailed"]
    assert reasons[0]["Item"] == dict(acct("a"), bal=n(1), tag={"S": "x"})
    assert "Item" not in reasons[1]  # ReturnValuesOnConditionCheckFailure not set
    assert "Item" not in reasons[4]  # no item to return
    assert reasons[3]["Message"]  # the update's operand error, e.g. a missing attribute
    assert e.message.endswith("[ConditionalCheckFailed, ConditionalCheckFailed, None, ValidationError, "
                              "ConditionalCheckFailed]")
    assert get(t, A, acct("c")) is None


def test_duplicate_items_rejected(t):
    e = t.error("TransactWriteItems", {"TransactItems": [
        put(A, dict(acct("a"), bal=n(1))),
        check(A, acct("a"), "attribute_exists(pk)"),
    ]})
    assert e.type == "ValidationException"
    assert e.message == "Transaction request cannot include multiple operations on one item"
    # The same key in two tables is two items.
    t.call("TransactWriteItems", {"TransactItems": [put(A, acct("a")), put(B, order("a", "a"))]})
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct("a")}}] * 2})
    assert e.message == "Transaction request cannot include multiple operations on one item"
    assert get(t, A, acct("a")) == acct("a")


def test_validation_happens_before_anything(t):
    base = [put(A, dict(acct("x"), bal=n(1)))]
    cases = [
        ({"TransactItems": base + [put("Missing", acct("y"))]}, "ResourceNotFoundException", "Requested resource not found"),
        ({"TransactItems": base + [update(A, acct("y"), "SET pk = :v", {":v": {"S": "z"}})]}, "ValidationException",
         "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"),
        ({"TransactItems": base + [{"ConditionCheck": {"TableName": A, "Key": acct("y")}}]}, "ValidationException",
         "1 validation error detected: Value null at 'transactItems.2.member.conditionCheck.conditionExpression' "
         "failed to satisfy constraint: Member must not be null"),
        ({"TransactItems": base + [{"Put": {"TableName": A, "Item": acct("y")}, "Delete": {"TableName": A, "Key": acct("z")}}]},
         "ValidationException", "TransactItems can only contain one of Check, Put, Update or Delete"),
        ({"TransactItems": base + [update(A, acct("y"), "SET a = :v")]}, "ValidationException", None),
        ({"TransactItems": base + [put(A, {"other": {"S": "y"}})]}, "ValidationException", None),
    ]
    for req, typ, msg in cases:
        e = t.error("TransactWriteItems", req)
        assert e.type == typ, (req, e)
        if msg:
            assert e.message == msg
    assert get(t, A, acct("x")) is None


def test_limits(t):
    e = t.error("TransactWriteItems", {"TransactItems": []})
    assert e.message == ("1 validation error detected: Value '[]' at 'transactItems' failed to satisfy constraint: "
                         "Member must have length greater than or equal to 1")
    e = t.error("TransactWriteItems", {})
    assert "Value null at 'transactItems'" in e.message
    many = [put(A, dict(acct(f"k{i}"), bal=n(i))) for i in range(101)]
    e = t.error("TransactWriteItems", {"TransactItems": many})
    assert e.type == "ValidationException"
    assert e.message.startswith("1 validation error detected: ")
    assert e.message.endswith("at 'transactItems' failed to satisfy constraint: "
                              "Member must have length less than or equal to 100")
    assert t.call("TransactWriteItems", {"TransactItems": many[:100]}) == {}
    assert get(t, A, acct("k99"))["bal"] == n(99)
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct(f"k{i}")}} for i in range(101)]})
    assert e.message.endswith("Member must have length less than or equal to 100")
    # Eleven 390 KB items make more than 4 MB.
    big = "x" * (390 * 1024)
    e = t.error("TransactWriteItems", {"TransactItems": [put(A, dict(acct(f"big{i}"), s={"S": big})) for i in range(11)]})
    assert e.type == "ValidationException"
    assert "4 MB" in e.message
    assert get(t, A, acct("big0")) is None
    # Updates that grow items count too, once computed.
    e = t.error("TransactWriteItems", {"TransactItems": [
        update(A, acct(f"big{i}"), "SET s = :s", {":s": {"S": big}}) for i in range(11)]})
    assert e.type == "ValidationException" and "4 MB" in e.message
    assert get(t, A, acct("big0")) is None
    for i in range(11):
        t.call("PutItem", {"TableName": A, "Item": dict(acct(f"big{i}"), s={"S": big})})
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct(f"big{i}")}} for i in range(11)]})
    assert e.type == "ValidationException" and "4 MB" in e.message
    r = t.call("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct(f"big{i}")}} for i in range(10)]})
    assert len(r["Responses"]) == 10
    e = t.error("TransactWriteItems", {"TransactItems": [put(A, acct("a"))], "ClientRequestToken": "x" * 37})
    assert "at 'clientRequestToken'" in e.message and "less than or equal to 36" in e.message


def test_capacity_and_metrics(t):
    t.call("PutItem", {"TableName": A, "Item": dict(acct("a"), s={"S": "x" * 1500})})
    r = t.call("TransactWriteItems", {"ReturnConsumedCapacity": "TOTAL", "ReturnItemCollectionMetrics": "SIZE",
                                      "TransactItems": [
                                          check(A, acct("a"), "attribute_exists(pk)"),
                                          put(B, order("o", "1")),
                                          update(B, order("o", "2"), "SET s = :s", {":s": {"S": "y" * 2500}}),
                                      ]})
    cc = {c["TableName"]: c for c in r["ConsumedCapacity"]}
    # a ConditionCheck is billed as a transactional write of the 1.5 KB item it checks
    assert cc[A] == {"TableName": A, "CapacityUnits": 4.0, "WriteCapacityUnits": 4.0}
    assert cc[B] == {"TableName": B, "CapacityUnits": 8.0, "WriteCapacityUnits": 8.0}  # 2*1 + 2*3
    assert "ItemCollectionMetrics" in r
    r = t.call("TransactGetItems", {"ReturnConsumedCapacity": "INDEXES", "TransactItems": [
        {"Get": {"TableName": A, "Key": acct("a")}}, {"Get": {"TableName": B, "Key": order("o", "9")}}]})
    cc = {c["TableName"]: c for c in r["ConsumedCapacity"]}
    assert cc[A]["CapacityUnits"] == 2.0 and cc[A]["Table"] == {"CapacityUnits": 2.0, "ReadCapacityUnits": 2.0}
    assert cc[B]["ReadCapacityUnits"] == 2.0


def test_transact_get_items(t):
    t.call("TransactWriteItems", {"TransactItems": [
        put(A, dict(acct("a"), bal=n(1), m={"M": {"x": n(1), "y": n(2)}})),
        put(B, dict(order("o", "1"), amt=n(5))),
    ]})
    r = t.call("TransactGetItems", {"TransactItems": [
        {"Get": {"TableName": B, "Key": order("o", "1")}},
        {"Get": {"TableName": A, "Key": acct("missing")}},
        {"Get": {"TableName": A, "Key": acct("a"), "ProjectionExpression": "#m.x, bal",
                 "ExpressionAttributeNames": {"#m": "m"}}},
    ]})
    assert r["Responses"] == [
        {"Item": dict(order("o", "1"), amt=n(5))},
        {},
        {"Item": {"bal": n(1), "m": {"M": {"x": n(1)}}}},
    ]
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": "Missing", "Key": acct("a")}}]})
    assert e.type == "ResourceNotFoundException"
    e = t.error("TransactGetItems", {"TransactItems": [{"Put": {"TableName": A, "Item": acct("a")}}]})
    assert e.message == ("1 validation error detected: Value null at 'transactItems.1.member.get' failed to satisfy "
                         "constraint: Member must not be null")
    e = t.error("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct("a"),
                                                                "ExpressionAttributeNames": {"#u": "u"}}}]})
    assert e.type == "ValidationException"


def test_transact_get_sees_whole_transactions(t):
    """Balances moved by transactions always sum to the same total in one TransactGetItems."""
    t.call("TransactWriteItems", {"TransactItems": [put(A, dict(acct("x"), bal=n(50))), put(A, dict(acct("y"), bal=n(50)))]})
    for amt in (10, 25, 15):
        t.call("TransactWriteItems", {"TransactItems": [
            update(A, acct("x"), "SET bal = bal - :a", {":a": n(amt)}, ConditionExpression="bal >= :a"),
            update(A, acct("y"), "SET bal = bal + :a", {":a": n(amt)}),
        ]})
        r = t.call("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct(k)}} for k in "xy"]})
        bals = [int(x["Item"]["bal"]["N"]) for x in r["Responses"]]
        assert sum(bals) == 100
    e = t.error("TransactWriteItems", {"TransactItems": [
        update(A, acct("x"), "SET bal = bal - :a", {":a": n(1000)}, ConditionExpression="bal >= :a"),
        update(A, acct("y"), "SET bal = bal + :a", {":a": n(1000)}),
    ]})
    assert e.type == "TransactionCanceledException"
    r = t.call("TransactGetItems", {"TransactItems": [{"Get": {"TableName": A, "Key": acct(k)}} for k in "xy"]})
    assert [x["Item"]["bal"] for x in r["Responses"]] == [n(0), n(100)]


def test_update_item_too_large_cancels(t):
    t.call("PutItem", {"TableName": A, "Item": dict(acct("a"), s={"S": "x" * (300 * 1024)})})
    e = t.error("TransactWriteItems", {"TransactItems": [
        put(B, order("o", "1")),
        update(A, acct("a"), "SET t = :t", {":t": {"S": "y" * (200 * 1024)}}),
    ]})
    assert [r["Code"] for r in e.body["CancellationReasons"]] == ["None", "ValidationError"]
    assert e.body["CancellationReasons"][1]["Message"] == "Item size to update has exceeded the maximum allowed size"
    assert get(t, B, order("o", "1")) is None


def test_hundred_reasons_in_full(t):
    e = t.error("TransactWriteItems", {"TransactItems": [check(A, acct(f"none{i}"), "attribute_exists(pk)")
                                                         for i in range(100)]})
    assert len(e.body["CancellationReasons"]) == 100
    listed = e.message[e.message.index("[") + 1:-1].split(", ")
    assert listed == ["ConditionalCheckFailed"] * 100
