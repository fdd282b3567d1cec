"""PartiQL statements a public conformance suite recorded DynamoDB answering: a statement
that is only a type test of a path ("x IS INT4"), which parses and is then refused as an
unsupported operation, and a SELECT whose OR branches read overlapping parts of one
partition, refused, beside the OR statements that still run."""
import pytest

MALFORMED = "Statement wasn't well formed, can't be processed: "
OVERLAP = "Overlapping conditions with range keys are not supported in where clause"


def s(v):
    return {"S": v}


def ex(q, statement):
    return q.call("ExecuteStatement", {"Statement": statement})


def refusal(q, statement):
    e = q.error("ExecuteStatement", {"Statement": statement})
    assert e.type == "ValidationException", (statement, e.message)
    return e.message


@pytest.fixture
def tab(q):
    """Table Tab (pk, sk), items ('p', '1'..'3') and ('o', '1')."""
    q.create("Tab")
    for pk, sk in (("p", "1"), ("p", "2"), ("p", "3"), ("o", "1")):
        q.call("PutItem", {"TableName": "Tab", "Item": {"pk": s(pk), "sk": s(sk), "x": s(sk)}})
    return q


def sort_keys(q, where):
    items = ex(q, "SELECT * FROM Tab WHERE " + where)["Items"]
    return sorted(i["pk"]["S"] + i["sk"]["S"] for i in items)


@pytest.mark.parametrize("statement", [
    "x IS INT4", "x IS INT8", "x IS DOUBLE PRECISION", "x IS CHARACTER VARYING", "x IS character varying",
    "a.b[2] IS NOT int4", '"quoted" IS VARCHAR', "x IS CHARACTER", "x IS INT4;", "x IS NULL"])
def test_a_statement_that_only_tests_a_type_parses_and_is_refused(q, statement):
    assert refusal(q, statement) == "Unsupported operation: IsType"


@pytest.mark.parametrize("statement", [
    "x IS FOO", "x IS DOUBLE", "x IS INT4 AND y = 1", "x = 1", "x", "IS INT4", "x IS", "x IS INT4 y",
    "1 IS INT4", "WHERE IS INT4"])
def test_other_bare_expressions_are_still_not_data_manipulation(q, statement):
    assert refusal(q, statement) == MALFORMED + "Expected data manipulation"


def test_a_type_test_inside_a_where_keeps_its_messages(tab):
    assert refusal(tab, "SELECT * FROM Tab WHERE pk = 'p' AND x IS FOO") == MALFORMED + "Expected type name"
    assert refusal(tab, "SELECT * FROM Tab WHERE pk = 'p' AND x IS INT4").startswith(
        "Unsupported data type for IS operator: INT4.")


@pytest.mark.parametrize("beside", ["x = '1'", "x <> '1'", "attribute_exists(x)"])
@pytest.mark.parametrize("ranged", ["sk = '2'", "sk > '1'", "sk BETWEEN '1' AND '2'", "begins_with(sk, '2')"])
def test_a_whole_partition_branch_beside_a_sort_key_branch_is_refused(tab, beside, ranged):
    assert refusal(tab, f"SELECT * FROM Tab WHERE pk = 'p' AND {beside} OR pk = 'p' AND {ranged}") == OVERLAP
    # in either order, among other branches, on a partition with no items
    assert refusal(tab, f"SELECT * FROM Tab WHERE pk = 'z' AND {ranged} OR pk = 'o' OR pk = 'z' AND {beside}") \
        == OVERLAP
    assert refusal(tab, f"SELECT * FROM Tab WHERE pk = 'p' OR pk = 'p' AND {ranged}") == OVERLAP


def test_or_statements_that_do_not_overlap_still_run(tab):
    # different partitions
    assert sort_keys(tab, "pk = 'o' AND x = '1' OR pk = 'p' AND sk = '2'") == ["o1", "p2"]
    # a branch whose sort-key condition is negated or a <> reads beside a ranged one
    assert sort_keys(tab, "pk = 'p' AND sk <> '1' OR pk = 'p' AND sk = '2'") == ["p2", "p3"]
    assert sort_keys(tab, "pk = 'p' AND NOT sk = '1' OR pk = 'p' AND sk = '2'") == ["p2", "p3"]
    assert sort_keys(tab, "pk = 'p' OR pk = 'p' AND NOT sk = '1'") == ["p1", "p2", "p3"]
    # two branches each with their own sort-key range
    assert sort_keys(tab, "pk = 'p' AND sk = '1' OR pk = 'p' AND sk = '3'") == ["p1", "p3"]
    # two whole-partition branches, and a branch that fixes no partition
    assert sort_keys(tab, "pk = 'p' AND x = '1' OR pk = 'p' AND x = '3'") == ["p1", "p3"]
    assert sort_keys(tab, "x = '1' OR pk = 'p' AND sk = '2'") == ["o1", "p1", "p2"]
    # an OR nested under an AND is not a choice of partition ranges
    assert sort_keys(tab, "pk = 'p' AND (x = '1' OR sk = '2')") == ["p1", "p2"]


def test_a_table_without_a_sort_key_reads_or_branches_on_one_partition(q):
    q.create("Hash", sk=None)
    q.call("PutItem", {"TableName": "Hash", "Item": {"pk": s("p"), "x": s("1")}})
    items = ex(q, "SELECT * FROM Hash WHERE pk = 'p' AND x = '1' OR pk = 'p' AND x = '2'")["Items"]
    assert [i["pk"]["S"] for i in items] == ["p"]


def test_the_overlap_is_judged_once_the_table_is_known(q):
    e = q.error("ExecuteStatement", {"Statement": "SELECT * FROM Nope WHERE pk = 'p' OR pk = 'p' AND sk = '2'"})
    assert e.type == "ResourceNotFoundException"
