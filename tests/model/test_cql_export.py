"""`quarry model export --format cql` writes CQL that Cassandra accepts: names that are reserved
words or not lower-case words quoted, a counter table holding only keys and counters (the
other columns in a table of the same key), each attribute its own column, keyspace and table
names that are \\w+ of at most 48 characters, comments a name cannot end. (That every export
is created on the live front end is tests/server/test_cql_exports_load.py.)"""
import json
import os
import re

from modeltest import ROOT, base_model, run

AWKWARD = os.path.join(ROOT, "tests", "model", "export", "awkward.yaml")


def export(path):
    p = run("model", "export", str(path), "--format", "cql")
    assert p.returncode == 0, p.stderr
    return p.stdout


def table(cql, name):
    m = re.search(r"CREATE TABLE IF NOT EXISTS \S+\.%s \(\n(.*?)\n\)" % re.escape(name), cql, re.S)
    assert m, cql
    return m.group(1)


def test_reserved_words_are_quoted_and_attributes_kept_apart():
    cql = export(AWKWARD)
    sales = table(cql, "sales_by_store_id")
    assert '    "order" text,' in sales and '    "limit" decimal,' in sales
    assert '    "token" text,' in sales
    # userId (the key) and user_id (an attribute) are two columns, not one
    assert "    user_id text,\n    user_id_2 text," in sales
    assert 'PRIMARY KEY ((store_id), "order", user_id)' in sales
    assert 'WITH CLUSTERING ORDER BY ("order" DESC, user_id ASC);' in cql


def test_a_counter_table_holds_only_keys_and_counters():
    cql = export(AWKWARD)
    assert table(cql, "sale_statss_by_store_id") == (
        "    store_id text,\n    sales counter,\n    PRIMARY KEY ((store_id))")
    assert table(cql, "sale_statss_by_store_id_values") == (
        "    store_id text,\n    label text,\n    PRIMARY KEY ((store_id))")


def test_keyspace_and_table_names_are_words_of_48_characters(tmp_path):
    cql = export(AWKWARD)
    (ks,) = re.findall(r"CREATE KEYSPACE IF NOT EXISTS (\S+)", cql)
    assert ks == "order_history_returns_of_the_2026_spring_sale_by"
    m = base_model()
    m["name"] = "select\nDROP KEYSPACE system;"
    m["entities"]["User"]["attributes"]["aVeryLongAttributeNameThatGoesOnAndOnForeverAndEver"] = "id"
    m["access_patterns"].append(
        {"name": "by-long", "kind": "query", "entity": "User",
         "given": ["aVeryLongAttributeNameThatGoesOnAndOnForeverAndEver"]})
    m["entities"]["User"]["attributes"]["aVeryLongAttributeNameThatGoesOnAndOnForeverAndEverMore"] = "id"
    m["access_patterns"].append(
        {"name": "by-longer", "kind": "query", "entity": "User",
         "given": ["aVeryLongAttributeNameThatGoesOnAndOnForeverAndEverMore"]})
    m["access_patterns"].append(
        {"name": "by-long-name", "kind": "query", "entity": "User", "given": ["name"],
         "sk_condition": {"op": ">", "attribute": "aVeryLongAttributeNameThatGoesOnAndOnForeverAndEver"}})
    path = tmp_path / "model.json"
    path.write_text(json.dumps(m))
    cql = export(path)
    # the name stays inside its comment line, and is a word as a keyspace name
    assert "\nDROP KEYSPACE" not in cql
    assert "CREATE KEYSPACE IF NOT EXISTS select_drop_keyspace_system\n" in cql
    names = re.findall(r"CREATE TABLE IF NOT EXISTS \S+?\.(\S+) \(", cql)
    assert names and all(re.fullmatch(r"\w{1,48}", n) for n in names), names
    assert len(set(names)) == len(names)
    # two names that are one once cut to 48 characters stay two
    assert "users_by_a_very_long_attribute_name_that_goes_on" in names
    assert "users_by_a_very_long_attribute_name_that_goes_2" in names


def test_quoted_cql_names_come_back_quoted(tmp_path):
    out = tmp_path / "quoted.yaml"
    p = run("model", "import", "--cql", os.path.join(ROOT, "tests", "model", "export", "quoted.cql"),
            "-o", str(out))
    assert p.returncode == 0, p.stderr
    cql = export(out)
    assert 'CREATE KEYSPACE IF NOT EXISTS "Shop"\n' in cql
    assert 'CREATE TABLE IF NOT EXISTS "Shop"."Users" (' in cql
    assert '    "userId" uuid,\n    "order" int,\n    "select" text,\n    "Sort Key" text,' in cql
    assert 'PRIMARY KEY (("userId"), "order")' in cql
    assert 'CREATE INDEX IF NOT EXISTS ON "Shop"."Users" ("select");' in cql
    # no keyspace is created for the model's name when no table is in it
    assert cql.count("CREATE KEYSPACE") == 1


def test_user_types_are_created_before_the_tables_that_use_them(tmp_path):
    out = tmp_path / "types.yaml"
    p = run("model", "import", "--cql", os.path.join(ROOT, "tests", "model", "export", "types.cql"),
            "-o", str(out))
    assert p.returncode == 0, p.stderr
    cql = export(out)
    geo = "CREATE TYPE IF NOT EXISTS crm.geo (lat double, lon double);\n"
    address = ('CREATE TYPE IF NOT EXISTS crm."Address" (street text, town text, '
               '"where" frozen<geo>, zip text);\n')
    # each once, a type before the type and the tables that use it; an unused one not at all
    assert cql.count(geo) == 1 and cql.count(address) == 1
    assert cql.index(geo) < cql.index(address) < cql.index("CREATE TABLE IF NOT EXISTS crm.customers (")
    assert "unused" not in cql
    assert '    home frozen<"Address">,\n    past list<frozen<"Address">>,' in cql


def test_a_type_used_before_it_is_made_is_refused(tmp_path):
    schema = tmp_path / "bad.cql"
    schema.write_text("CREATE TABLE ks.t (id int PRIMARY KEY, a frozen<address>);\n")
    p = run("model", "import", "--cql", str(schema), "-o", str(tmp_path / "out.yaml"))
    assert p.returncode != 0
    assert "bad.cql:1:" in p.stderr and "Unknown type ks.address" in p.stderr
