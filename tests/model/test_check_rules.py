"""One test per checklist rule of `quarry model check`: a model that triggers it and one
that does not. Models are written as JSON (the loader accepts YAML and JSON alike)."""
from modeltest import base_model, findings, rules


def test_base_model_is_clean(check):
    status, rep = check(base_model())
    assert status == 0
    assert rep["summary"]["errors"] == 0 and rep["summary"]["warnings"] == 0
    plans = {p["name"]: p for p in rep["access_patterns"]}
    assert plans["get-user"]["operation"] == "GetItem"
    assert plans["user-posts"]["operation"] == "Query"
    assert plans["user-posts"]["key_condition"] == 'PK = "USER#{userId}" AND begins_with(SK, "POST#")'
    assert plans["user-posts"]["scan_index_forward"] is False
    assert plans["user-posts"]["limit"] == 20
    assert plans["write-post"]["operation"] == "PutItem"


# ---- access-pattern coverage ----

def test_coverage_scan_with_index_fix(check):
    m = base_model()
    m["entities"]["Post"]["attributes"]["topic"] = {"format": "enum", "values": ["news", "sport"]}
    m["access_patterns"].append({"name": "posts-by-topic", "kind": "query", "entity": "Post", "given": ["topic"],
                                 "order_by": "postedAt"})
    status, rep = check(m)
    assert status == 1
    (f,) = findings(rep, "access-pattern-coverage")
    assert f["severity"] == "error" and "needs a Scan" in f["message"]
    assert 'pk "TOPIC#{topic}"' in f["fix"] and 'sk "{postedAt}"' in f["fix"]
    plan = [p for p in rep["access_patterns"] if p["name"] == "posts-by-topic"][0]
    assert plan["served"] is False and plan["operation"] == "Scan"


def test_coverage_served_by_gsi(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "GSI1", "partition_key": "GSI1PK", "sort_key": "GSI1SK"}]
    m["entities"]["Post"]["attributes"]["topic"] = {"format": "enum", "values": ["news", "sport"], "cardinality": 1000}
    m["entities"]["Post"]["indexes"] = {"GSI1": {"pk": "TOPIC#{topic}", "sk": "{postedAt}"}}
    m["access_patterns"].append({"name": "posts-by-topic", "kind": "query", "entity": "Post", "given": ["topic"],
                                 "order_by": "postedAt", "direction": "desc"})
    status, rep = check(m)
    assert status == 0, rep
    plan = [p for p in rep["access_patterns"] if p["name"] == "posts-by-topic"][0]
    assert plan["served"] and plan["index"] == "GSI1"
    assert plan["key_condition"] == 'GSI1PK = "TOPIC#{topic}"'


def test_coverage_filter(check):
    m = base_model()
    m["entities"]["Post"]["attributes"]["draft"] = "boolean"
    m["access_patterns"].append({"name": "drafts", "kind": "query", "entity": "Post", "given": ["userId", "draft"]})
    status, rep = check(m)
    assert status == 1
    (f,) = findings(rep, "access-pattern-coverage")
    assert "needs a filter" in f["message"] and "draft" in f["message"]


def test_coverage_sparse_index_fix(check):
    m = base_model()
    m["entities"]["Post"]["attributes"]["state"] = {"format": "enum", "values": ["OPEN", "DONE"]}
    m["access_patterns"].append({"name": "open-posts", "kind": "query", "entity": "Post", "given": {"state": "OPEN"}})
    status, rep = check(m)
    (f,) = findings(rep, "access-pattern-coverage")
    assert "sparse index" in f["fix"] and "only while state = OPEN" in f["fix"]


def test_coverage_inverted_index_fix(check):
    m = base_model()
    m["entities"]["Post"]["attributes"]["tags"] = "set"
    m["access_patterns"].append({"name": "by-tag", "kind": "query", "entity": "Post", "given": ["tags"]})
    status, rep = check(m)
    (f,) = findings(rep, "access-pattern-coverage")
    assert "inverted index" in f["fix"]


def test_coverage_update_needs_full_key(check):
    m = base_model()
    m["access_patterns"].append({"name": "edit-post", "kind": "update", "entity": "Post", "given": ["userId"]})
    status, rep = check(m)
    assert status == 1
    (f,) = findings(rep, "access-pattern-coverage")
    assert "full primary key" in f["message"]
    m["access_patterns"][-1]["given"] = ["userId", "postedAt"]
    status, rep = check(m)
    assert status == 0
    plan = [p for p in rep["access_patterns"] if p["name"] == "edit-post"][0]
    assert plan["operation"] == "UpdateItem"


# ---- partition-key cardinality ----

def cardinality_model(pk, rps):
    m = base_model()
    m["entities"]["Event"] = {"pk": pk, "sk": "EVT#{at}", "item_size": "1KB",
                              "attributes": {"kind": {"format": "enum", "values": ["a", "b", "c"]}, "at": "timestamp",
                                             "deviceId": "id", "day": "date"}}
    m["access_patterns"].append({"name": "record", "kind": "put", "entity": "Event", "rps": rps})
    return m


def test_cardinality_enum_pk(check):
    status, rep = check(cardinality_model("KIND#{kind}", 1000))
    (f,) = findings(rep, "partition-key-cardinality")
    assert f["severity"] == "warning" and "kind (3 values)" in f["message"] and "33%" in f["message"]


def test_cardinality_date_and_constant_pk(check):
    _, rep = check(cardinality_model("DAY#{day}", 1000))
    assert "today's traffic" in findings(rep, "partition-key-cardinality")[0]["message"]
    _, rep = check(cardinality_model("EVENTS", 1000))
    assert 'constant "EVENTS"' in findings(rep, "partition-key-cardinality")[0]["message"]


def test_cardinality_low_traffic_is_a_note(check):
    _, rep = check(cardinality_model("KIND#{kind}", 1))
    assert findings(rep, "partition-key-cardinality")[0]["severity"] == "note"


def test_cardinality_high_is_clean(check):
    _, rep = check(cardinality_model("DEVICE#{deviceId}", 1000))
    assert "partition-key-cardinality" not in rules(rep)


# ---- per-partition throughput ----

def test_throughput_over_partition_ceiling(check):
    status, rep = check(cardinality_model("EVENTS", 4000))
    assert status == 1
    (f,) = findings(rep, "partition-throughput")
    assert f["severity"] == "error" and "4000 WCU" in f["message"] and "1,000 WCU" in f["message"]
    assert "write sharding" in f["fix"] and '"EVENTS#{shard}"' in f["fix"] and "8 suffixes" in f["fix"]
    assert "Queries" in f["fix"]


def test_throughput_within_ceiling(check):
    _, rep = check(cardinality_model("EVENTS", 500))
    assert "partition-throughput" not in rules(rep)


def test_throughput_sharded_pk_scatters_reads(check):
    m = cardinality_model("EVENTS#{shard}", 4000)
    m["entities"]["Event"]["attributes"]["shard"] = {"format": "shard", "shards": 10}
    m["access_patterns"].append({"name": "recent", "kind": "query", "entity": "Event", "order_by": "at",
                                 "direction": "desc", "limit": 10})
    status, rep = check(m)
    assert "partition-throughput" not in rules(rep)
    plan = [p for p in rep["access_patterns"] if p["name"] == "recent"][0]
    assert plan["served"] and plan["scatter"] == 10


# ---- sort keys that do not sort ----

def sort_model(attr, op=None):
    m = base_model()
    m["entities"]["Post"]["sk"] = "POST#{n}"
    m["entities"]["Post"]["attributes"]["n"] = attr
    p = {"name": "posts-by-n", "kind": "query", "entity": "Post", "given": ["userId"]}
    if op:
        p["sk_condition"] = {"op": op, "attribute": "n"}
    else:
        p["order_by"] = "n"
    m["access_patterns"][1] = p
    return m


def test_sort_unpadded_number(check):
    status, rep = check(sort_model("number"))
    assert status == 1
    (f,) = findings(rep, "sort-key-order")
    assert "without zero-padding" in f["message"] and "zero-padded" in f["fix"]


def test_sort_padded_number_is_clean(check):
    status, rep = check(sort_model({"format": "zero-padded", "width": 8}, ">="))
    assert status == 0 and "sort-key-order" not in rules(rep)


def test_sort_day_month_year_date(check):
    _, rep = check(sort_model({"format": "date", "pattern": "D/M/YYYY"}, "between"))
    (f,) = findings(rep, "sort-key-order")
    assert f["severity"] == "error" and "14/3/2026" in f["message"]


def test_sort_range_on_uuid(check):
    status, rep = check(sort_model("uuid", ">"))
    (f,) = findings(rep, "sort-key-order")
    assert "UUID" in f["message"] and status == 1


def test_sort_fine_to_coarse(check):
    m = base_model()
    m["entities"]["Post"]["sk"] = "POST#{day}#{month}"
    m["entities"]["Post"]["attributes"].update({"day": "date", "month": "month"})
    _, rep = check(m)
    (f,) = findings(rep, "sort-key-order")
    assert "fine to coarse" in f["message"]


# ---- item collections ----

def collection_model(pk, lsi):
    m = base_model()
    m["entities"]["Post"]["pk"] = pk
    m["entities"]["Post"]["attributes"]["month"] = "month"
    m["entities"]["Post"].update({"growth_per_day": "50k", "item_size": "1KB", "retention": "1y"})
    if lsi:
        m["tables"]["App"]["lsis"] = [{"name": "ByBody", "sort_key": "bodySk"}]
    return m


def test_collection_over_10gb_with_lsi(check):
    status, rep = check(collection_model("USER#{userId}", True))
    assert status == 1
    (f,) = findings(rep, "item-collection-size")
    assert f["severity"] == "error" and "17.4 GB" in f["message"]
    assert "#{month}" in f["fix"]


def test_collection_over_10gb_without_lsi_is_warning(check):
    _, rep = check(collection_model("USER#{userId}", False))
    assert findings(rep, "item-collection-size")[0]["severity"] == "warning"


def test_collection_bucketed_is_clean(check):
    _, rep = check(collection_model("USER#{userId}#{month}", True))
    assert "item-collection-size" not in rules(rep)


# ---- indexes ----

def test_index_count_limits(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": f"G{i}", "partition_key": f"G{i}PK"} for i in range(21)]
    m["tables"]["App"]["lsis"] = [{"name": f"L{i}", "sort_key": f"L{i}SK"} for i in range(6)]
    status, rep = check(m)
    assert status == 1
    msgs = [f["message"] for f in findings(rep, "index-count")]
    assert any("21 GSIs" in x for x in msgs) and any("6 LSIs" in x for x in msgs)


def test_index_count_at_the_limits_is_clean(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": f"G{i}", "partition_key": f"G{i}PK"} for i in range(20)]
    m["tables"]["App"]["lsis"] = [{"name": f"L{i}", "sort_key": f"L{i}SK"} for i in range(5)]
    _, rep = check(m)
    assert "index-count" not in rules(rep)


def test_index_unused_and_cost(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "A", "partition_key": "APK"}, {"name": "B", "partition_key": "BPK"}]
    m["entities"]["Post"]["indexes"] = {"A": {"pk": "A#{userId}"}, "B": {"pk": "B#{userId}"}}
    status, rep = check(m)
    unused = findings(rep, "index-unused")
    assert {f["subject"] for f in unused} == {"index A", "index B"}
    cost = findings(rep, "index-cost")
    assert any(f["severity"] == "note" and "WCU/s" in f["message"] for f in cost)
    assert any(f["severity"] == "warning" and "together cost" in f["message"] for f in cost)


def test_index_used_is_not_reported_unused(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "A", "partition_key": "APK", "sort_key": "ASK", "projection": "keys_only"}]
    m["entities"]["Post"]["indexes"] = {"A": {"pk": "A#{userId}", "sk": "{postedAt}"}}
    m["access_patterns"][1]["index"] = "A"
    _, rep = check(m)
    assert "index-unused" not in rules(rep)


def test_under_provisioned_gsi(check):
    m = base_model()
    m["tables"]["App"].update({"billing": "provisioned", "read_capacity": 100, "write_capacity": 100,
                               "gsis": [{"name": "A", "partition_key": "APK", "write_capacity": 10, "read_capacity": 10}]})
    m["entities"]["Post"]["indexes"] = {"A": {"pk": "A#{userId}"}}
    m["access_patterns"].append({"name": "posts-by-a", "kind": "query", "entity": "Post", "index": "A",
                                 "given": ["userId"], "rps": 1})
    _, rep = check(m)
    assert not findings(rep, "provisioned-capacity")  # 5 WCU/s of writes fit the GSI's 10
    m["access_patterns"][2]["rps"] = 50
    status, rep = check(m)
    (f,) = findings(rep, "provisioned-capacity")
    assert status == 1 and f["severity"] == "error" and f["subject"] == "index A"
    assert "provisioned with 10 WCU" in f["message"] and "back-pressure" in f["explanation"]


def test_consistent_read_needs_lsi(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "A", "partition_key": "APK", "sort_key": "ASK"}]
    m["entities"]["Post"]["attributes"]["likes"] = {"format": "zero-padded", "width": 8}
    m["entities"]["Post"]["indexes"] = {"A": {"pk": "USER#{userId}", "sk": "{likes}"}}
    m["access_patterns"].append({"name": "top-posts", "kind": "query", "entity": "Post", "given": ["userId"],
                                 "order_by": "likes", "direction": "desc", "consistent": True})
    status, rep = check(m)
    assert status == 1
    (f,) = findings(rep, "index-lsi-at-creation")
    assert "cannot be added later" in f["explanation"]
    m["tables"]["App"]["lsis"] = [{"name": "ByLikes", "sort_key": "likesSk"}]
    m["entities"]["Post"]["indexes"]["ByLikes"] = {"sk": "{likes}"}
    status, rep = check(m)
    assert "index-lsi-at-creation" not in rules(rep)
    plan = [p for p in rep["access_patterns"] if p["name"] == "top-posts"][0]
    assert plan["index"] == "ByLikes"


def test_overloaded_index_needs_prefixes(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "G", "partition_key": "GPK"}]
    m["entities"]["User"]["attributes"]["team"] = "text"
    m["entities"]["Post"]["attributes"]["topic"] = "text"
    m["entities"]["User"]["indexes"] = {"G": {"pk": "{team}"}}
    m["entities"]["Post"]["indexes"] = {"G": {"pk": "{topic}"}}
    status, rep = check(m)
    assert status == 1 and "index-overload" in rules(rep, "error")
    m["entities"]["User"]["indexes"] = {"G": {"pk": "TEAM#{team}"}}
    m["entities"]["Post"]["indexes"] = {"G": {"pk": "TOPIC#{topic}"}}
    _, rep = check(m)
    assert "index-overload" not in rules(rep)


# ---- TTL ----

def test_ttl_missing(check):
    m = base_model()
    m["entities"]["Post"]["retention"] = "30d"
    _, rep = check(m)
    (f,) = findings(rep, "ttl")
    assert f["severity"] == "warning" and "no TTL attribute" in f["message"]


def test_ttl_attribute_missing_or_wrong_type(check):
    m = base_model()
    m["tables"]["App"]["ttl"] = "expiresAt"
    m["entities"]["Post"]["retention"] = "30d"
    _, rep = check(m)
    assert "has no expiresAt attribute" in findings(rep, "ttl")[0]["message"]
    m["entities"]["Post"]["attributes"]["expiresAt"] = "timestamp"
    status, rep = check(m)
    assert status == 1 and findings(rep, "ttl")[0]["severity"] == "error"


def test_ttl_present_is_clean(check):
    m = base_model()
    m["tables"]["App"]["ttl"] = "expiresAt"
    m["entities"]["Post"]["retention"] = "30d"
    m["entities"]["Post"]["attributes"]["expiresAt"] = "epoch"
    _, rep = check(m)
    assert "ttl" not in rules(rep)


# ---- aggregates ----

def test_aggregate_by_query(check):
    m = base_model()
    m["access_patterns"].append({"name": "count-posts", "kind": "query", "entity": "Post", "given": ["userId"],
                                 "aggregate": "count", "result_size": 100, "rps": 50})
    status, rep = check(m)
    (f,) = findings(rep, "aggregate-by-query")
    assert f["severity"] == "error" and "counter" in f["fix"] and status == 1


def test_aggregate_by_counter_is_clean(check):
    m = base_model()
    m["entities"]["PostCount"] = {"pk": "USER#{userId}", "sk": "COUNT#POSTS", "counter": True,
                                  "attributes": {"userId": "id", "posts": "number"}}
    m["access_patterns"].append({"name": "count-posts", "kind": "get", "entity": "PostCount", "given": ["userId"],
                                 "aggregate": "count"})
    m["aggregates"] = [{"name": "posts-per-user", "of": "Post", "counter": "PostCount", "strategy": "same-transaction"}]
    _, rep = check(m)
    assert "aggregate-by-query" not in rules(rep)


def test_aggregate_without_counter(check):
    m = base_model()
    m["aggregates"] = [{"name": "posts-per-user", "of": "Post", "function": "count"}]
    _, rep = check(m)
    assert "has no counter item" in findings(rep, "aggregate-by-query")[0]["message"]


# ---- denormalisation ----

def test_denormalised_without_strategy(check):
    m = base_model()
    m["entities"]["Post"]["attributes"]["authorName"] = {"type": "string", "copy_of": "User.name"}
    status, rep = check(m)
    assert status == 1
    assert "is a copy of User.name with no update strategy" in findings(rep, "denormalised-update")[0]["message"]
    m["denormalised"] = [{"source": "User.name", "copies": ["Post.authorName"]}]
    _, rep = check(m)
    assert any("no update strategy" in f["message"] for f in findings(rep, "denormalised-update"))


def test_denormalised_with_strategy(check):
    m = base_model()
    m["entities"]["Post"]["attributes"]["authorName"] = {"type": "string", "copy_of": "User.name"}
    m["denormalised"] = [{"source": "User.name", "copies": ["Post.authorName"], "strategy": "same-transaction"}]
    status, rep = check(m)
    assert status == 0 and "denormalised-update" not in rules(rep)
    m["denormalised"][0]["strategy"] = "accepted-staleness"
    _, rep = check(m)
    assert findings(rep, "denormalised-update")[0]["severity"] == "warning"


def copy_model():
    """Post copies its author's name; the author is the post's userId, or under copy_key."""
    m = base_model()
    m["entities"]["Post"]["attributes"]["authorName"] = {"type": "string", "copy_of": "User.name"}
    m["denormalised"] = [{"source": "User.name", "copies": ["Post.authorName"], "strategy": "stream"}]
    return m


def test_denormalised_source_key_from_the_same_name(check):
    status, rep = check(copy_model())
    assert status == 0 and "denormalised-source-key" not in rules(rep)


def test_denormalised_source_key_missing(check):
    m = copy_model()
    # the comment's author is not the partition's user: nothing names the source's userId
    m["entities"]["Comment"] = {"pk": "POST#{postedAt}", "sk": "C#{at}",
                                "attributes": {"postedAt": "timestamp", "at": "timestamp",
                                               "author": "id",
                                               "authorName": {"type": "string", "copy_of": "User.name"}}}
    m["denormalised"][0]["copies"].append("Comment.authorName")
    status, rep = check(m)
    assert status == 1
    (f,) = findings(rep, "denormalised-source-key")
    assert f["severity"] == "error" and f["subject"] == "attribute Comment.authorName"
    assert "Comment has no attribute giving User's key variable userId" in f["message"]
    assert "copy_key: {userId: ATTRIBUTE}" in f["fix"]
    # copy_key says which attribute holds it
    m["entities"]["Comment"]["attributes"]["authorName"]["copy_key"] = {"userId": "author"}
    status, rep = check(m)
    assert status == 0 and "denormalised-source-key" not in rules(rep)


def test_copy_key_and_copy_of_must_name_what_exists(tmp_path):
    import json
    from modeltest import run
    cases = [
        ({"copy_of": "User.name", "copy_key": {"nope": "userId"}},
         "copy_key names 'nope', which is not a variable of User's key templates"),
        ({"copy_of": "User.name", "copy_key": {"userId": "nope"}},
         "copy_key maps userId to 'nope', which entity Post does not define"),
        ({"copy_key": {"userId": "userId"}}, "'copy_key' applies to a copy (with copy_of)"),
        ({"copy_of": "Nobody.name"}, "refers to entity 'Nobody', which the model does not define"),
        ({"copy_of": "User.nope"}, "entity User has no attribute 'nope'"),
    ]
    for attr, message in cases:
        m = base_model()
        m["entities"]["Post"]["attributes"]["authorName"] = dict(type="string", **attr)
        path = tmp_path / "m.json"
        path.write_text(json.dumps(m, indent=1))
        p = run("model", "check", str(path))
        assert p.returncode == 2 and message in p.stderr, (attr, p.stderr)
        assert str(path) + ":" in p.stderr


# ---- relational smells ----

def test_relational_two_round_trips(check):
    m = base_model()
    m["entities"]["Comment"] = {"pk": "POSTC#{userId}", "sk": "C#{at}", "attributes": {"userId": "id", "at": "timestamp"}}
    m["access_patterns"].append({"name": "user-with-comments", "kind": "query", "entities": ["User", "Comment"],
                                 "given": ["userId"]})
    _, rep = check(m)
    (f,) = findings(rep, "relational-smell")
    assert "two round trips" in f["message"] and "item collection of User" in f["fix"]


def test_relational_one_collection_is_clean(check):
    m = base_model()
    m["access_patterns"].append({"name": "user-with-posts", "kind": "query", "entities": ["User", "Post"],
                                 "given": ["userId"]})
    _, rep = check(m)
    assert "relational-smell" not in rules(rep)
    plan = [p for p in rep["access_patterns"] if p["name"] == "user-with-posts"][0]
    assert plan["key_condition"] == 'PK = "USER#{userId}"'


# ---- per-partition throughput close to the ceiling ----

def test_throughput_near_ceiling_is_a_warning(check):
    status, rep = check(cardinality_model("EVENTS", 700))
    (f,) = findings(rep, "partition-throughput")
    assert f["severity"] == "warning" and "70% of its ceiling" in f["message"] and status == 0


# ---- latency budget ----

def test_latency_budget_missed_by_pages(check):
    m = base_model()
    m["access_patterns"][1].update({"limit": 5000, "latency": "20ms"})
    _, rep = check(m)
    (f,) = findings(rep, "latency-budget")
    assert "20 ms budget" in f["message"] and "5 pages" in f["message"]


def test_latency_budget_met(check):
    m = base_model()
    m["access_patterns"][1].update({"limit": 20, "latency": "20ms"})
    _, rep = check(m)
    assert "latency-budget" not in rules(rep)


def test_range_attribute_may_also_be_given(check):
    m = base_model()
    m["access_patterns"].append({"name": "posts-between", "kind": "query", "entity": "Post", "given": ["userId", "postedAt"],
                                 "sk_condition": {"op": "between", "attribute": "postedAt"}})
    status, rep = check(m)
    assert status == 0, rep["findings"]
    plan = [p for p in rep["access_patterns"] if p["name"] == "posts-between"][0]
    assert "BETWEEN" in plan["key_condition"]


def test_deletes_without_ttl_are_noted(check):
    m = base_model()
    m["access_patterns"].append({"name": "delete-post", "kind": "delete", "entity": "Post",
                                 "given": ["userId", "postedAt"], "rps": 50})
    status, rep = check(m)
    (f,) = findings(rep, "ttl")
    assert status == 0 and f["severity"] == "note" and "50 per second" in f["message"]
    m["tables"]["App"]["ttl"] = "expiresAt"
    m["entities"]["Post"].update({"retention": "90d"})
    m["entities"]["Post"]["attributes"]["expiresAt"] = "epoch"
    _, rep = check(m)
    assert "ttl" not in rules(rep)


def test_named_index_that_does_not_serve(check):
    m = base_model()
    m["tables"]["App"]["gsis"] = [{"name": "G", "partition_key": "GPK"}]
    m["entities"]["User"]["attributes"]["team"] = "text"
    m["entities"]["User"]["indexes"] = {"G": {"pk": "TEAM#{team}"}}
    m["access_patterns"][0]["index"] = "G"
    status, rep = check(m)
    assert status == 1
    (f,) = findings(rep, "access-pattern-coverage")
    assert "names index G, which does not serve it" in f["message"] and "needs team" in f["message"]
    assert f["fix"].startswith("drop 'index: G': table App serves it")


def test_order_the_key_cannot_give(check):
    m = base_model()
    m["access_patterns"][1]["order_by"] = "body"
    status, rep = check(m)
    (f,) = findings(rep, "access-pattern-coverage")
    assert "cannot be read in order" in f["message"] and 'SK = "POST#{body}..."' in f["fix"]
