"""`quarry model render --html` as a page: every finding of `model check` shown (listed at
the top, placed beside what it concerns), a model check rejects and one that does not load
rendered with their errors marked, the rows as the table and its indexes hold the items.
Golden pages for a passing model are test_golden.py's; the broken ones are here
(regenerate with QUARRY_UPDATE_GOLDEN=1 and read the diff)."""
import html
import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser

import pytest

from modeltest import GOLDEN, ROOT, base_model, run

VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr"}
EXAMPLES = ["chat", "orders", "tickets", "overloaded", "iot", "leaderboard"]
RULES = os.path.join(os.path.dirname(__file__), "rules")
BROKEN_PAGES = {
    "orders-broken": "examples/orders-broken.yaml",
    "load-errors-fail": "tests/model/rules/load-errors-fail.yaml",
}


class Page(HTMLParser):
    """The page's structure: tags balanced, ids, finding blocks with the element (the last
    id seen before them that is not a finding's) they are placed on, the rows of each
    table with their cells' text."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.ids, self.blocks, self.tables = [], {}, [], []
        self.last_id = None
        self.block = None  # [id, text, placed-on] of the finding being read
        self.cell = None
        self.heading = None  # the text of the last h2/h3
        self.in_heading = False

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag not in VOID:
            self.stack.append(tag)
        if "id" in a:
            assert a["id"] not in self.ids, f"id {a['id']} twice"
            self.ids[a["id"]] = tag
        if tag == "div" and "finding" in (a.get("class") or "").split():
            self.block = [a.get("id"), "", self.last_id, a["class"].split()[1]]
        elif "id" in a:
            self.last_id = a["id"]
        if tag in ("h2", "h3"):
            self.in_heading, self.heading = True, ""
        if tag == "table":
            self.tables.append({"heading": self.heading, "rows": []})
        if tag == "tr" and self.tables:
            self.tables[-1]["rows"].append([])
        if tag in ("td", "th"):
            self.cell = ""

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, f"</{tag}> closes {self.stack[-1:]}"
        self.stack.pop()
        if tag == "div" and self.block is not None:
            self.blocks.append(self.block)
            self.block = None
        if tag in ("h2", "h3"):
            self.in_heading = False
        if tag in ("td", "th") and self.cell is not None and self.tables and self.tables[-1]["rows"]:
            self.tables[-1]["rows"][-1].append(self.cell.strip())
            self.cell = None

    def handle_data(self, data):
        if self.block is not None:
            self.block[1] += data
        if self.cell is not None:
            self.cell += data
        if self.in_heading:
            self.heading += data


def parse(text):
    assert text.startswith("<!DOCTYPE html>") and text.rstrip().endswith("</html>")
    p = Page()
    p.feed(text[len("<!DOCTYPE html>"):])
    p.close()
    assert p.stack == [], p.stack
    return p


def render(path, *extra):
    p = run("model", "render", path, "--html", *extra)
    assert p.returncode == 0, p.stderr
    return p.stdout


def check_json(path):
    return json.loads(run("model", "check", path, "--json").stdout)


def models_with_findings():
    paths = [f"examples/{f}" for f in sorted(os.listdir(os.path.join(ROOT, "examples"))) if f.endswith(".yaml")]
    paths += [f"tests/model/rules/{f}" for f in sorted(os.listdir(RULES)) if f.endswith(".yaml") and f != "load-errors-fail.yaml"]
    return paths


@pytest.mark.parametrize("path", models_with_findings())
def test_every_finding_is_on_the_page(path):
    """Each finding of check --json is in the list at the top and in exactly one placed
    block, with its severity, rule, message, why and fix, on the element it is about."""
    report = check_json(path)
    text = render(path)
    page = parse(text)
    top = next((t for t in page.tables if t["heading"] == "Findings"), None)
    if not report["findings"]:
        assert top is None and "accepts this model" in text
        return
    assert ("rejects this model" in text) == (report["summary"]["errors"] > 0)
    listed = [r for r in top["rows"][1:]]
    assert len(listed) == len(report["findings"])
    names = element_names(text)
    for i, fd in enumerate(report["findings"]):
        if re.search(r" on (table \S+|[GL]SI \S+ of table \S+)$", fd["subject"]):
            # linked from the table or index view the finding is about as well as the list
            assert text.count(f'href="#f{i}"') == 2, fd
        assert any(r[0] == fd["severity"] and r[1] == fd["rule"] and r[2] == fd["subject"]
                   and r[3].startswith(fd["message"]) and r[4] == f"{fd['line']}:{fd['column']}"
                   for r in listed), (fd, listed)
        mine = [b for b in page.blocks
                if fd["message"] in b[1] and fd["rule"] in b[1] and b[3] == fd["severity"]]
        assert len(mine) >= 1, fd
        block = next(b for b in mine if fd["explanation"] in b[1] and fd["fix"] in b[1])
        assert block[0] in page.ids
        assert placed_right(fd["subject"], block[2], names), (fd["subject"], block[2])


def element_names(text):
    """id -> (kind, name) of the page's tables, indexes, entities, patterns, copies and
    aggregates, read from the page itself."""
    names = {}
    for m in re.finditer(r'<h2 id="(t\d+)">Table ([^<]*)</h2>', text):
        names[m.group(1)] = ("table", html.unescape(m.group(2)))
    for m in re.finditer(r'<h3 id="(t\d+-i\d+)">[GL]SI ([^<]*)</h3>', text):
        names[m.group(1)] = ("index", html.unescape(m.group(2)))
    for m in re.finditer(r'<tr [^>]*id="([epdg]\d+)"[^>]*><td>([^<]*)<', text):
        kind = {"e": "entity", "p": "pattern", "d": "denormalised", "g": "aggregate"}[m.group(1)[0]]
        names[m.group(1)] = (kind, html.unescape(m.group(2)).strip())
    return names


def placed_right(subject, element_id, names):
    if element_id == "findings":
        return True  # the model as a whole
    kind, name = names[element_id]
    word, _, rest = subject.partition(" ")
    if word in ("pattern", "index", "table", "denormalised", "aggregate"):
        return kind == word and rest == name
    if word == "entity":
        return kind == "entity" and (rest == name or rest.startswith(name + " on "))
    if word == "attribute":
        return kind == "entity" and rest.split(".")[0] == name
    return kind in ("entity", "table", "index")  # "partition of TABLE" and the like


@pytest.mark.parametrize("name", sorted(BROKEN_PAGES))
def test_broken_page_golden(name):
    text = render(BROKEN_PAGES[name])
    parse(text)
    path = os.path.join(GOLDEN, f"{name}.render.html")
    if os.environ.get("QUARRY_UPDATE_GOLDEN"):
        with open(path, "w") as f:
            f.write(text)
    with open(path) as f:
        assert text == f.read()


def test_model_check_rejects_renders_with_errors_marked():
    text = render("examples/orders-broken.yaml")
    page = parse(text)
    assert "rejects this model: 1 error, 0 warnings, 0 notes" in text
    (block,) = [b for b in page.blocks if b[3] == "error"]
    assert "pending-orders" in block[1] and "needs a Scan" in block[1]
    assert element_names(text)[block[2]] == ("pattern", "pending-orders")
    assert '<tr id="p3" class="error">' in text
    assert "Table Shop" in text  # the layout is still drawn


def test_load_errors_render_each_under_its_line():
    path = "tests/model/rules/load-errors-fail.yaml"
    p = run("model", "check", path, "--json")
    errors = json.loads(p.stdout)["errors"]
    text = render(path)
    page = parse(text)
    assert f"The model does not load: {len(errors)} error" in text
    lines = open(os.path.join(ROOT, path)).read().split("\n")
    for i, e in enumerate(errors):
        (block,) = [b for b in page.blocks if b[0] == f"f{i}"]
        assert e["message"] in block[1]
        assert f'<tr class="error"><td class="ln">{e["line"]}</td>' in text
        # the block follows its line of the file
        row = f'<td class="ln">{e["line"]}</td><td><pre class="src">{html.escape(lines[e["line"] - 1], quote=True)}</pre>'
        assert text.index(row) < text.index(f'id="f{i}"')


def test_load_errors_render_what_loads(tmp_path):
    """One misspelt field in a pattern and one in an entity: the page lays out the rest."""
    text = open(os.path.join(ROOT, "examples/orders.yaml")).read()
    text = text.replace("    order_by: orderId", "    ordr_by: orderId")
    text = text.replace("customerName: {type: string,", "customerName: {type: strin,")
    path = tmp_path / "typo.yaml"
    path.write_text(text)
    page_text = render(str(path))
    page = parse(page_text)
    assert "The model does not load: 2 errors" in page_text
    assert [b[1].split(" (line")[0] for b in page.blocks] == [
        "error unknown type 'strin' (did you mean 'string'?)",
        "error unknown field 'ordr_by' in an access pattern (did you mean 'order_by'?)"]
    parts = page_text[page_text.index("<h2>What loads</h2>"):page_text.index("<h2>The file</h2>")]
    assert "without entity Order, access pattern customer-orders," in parts
    assert "denormalised copy Customer.name." in parts  # it names Order.customerName
    rows = shop_rows(page_text, "Table Shop")
    assert {r[2] for r in rows} == {"Customer", "OrderItem"}
    assert '<tr id="p0"><td>get-customer</td>' in parts


def test_unreadable_file_is_still_an_error():
    p = run("model", "render", "no/such/model.yaml", "--html")
    assert p.returncode == 2 and p.stdout == "" and "cannot open" in p.stderr


def shop_rows(text, heading):
    page = parse(text)
    table = next(t for t in page.tables if t["heading"] == heading)
    rows, pk = [], None
    for r in table["rows"][1:]:
        if len(r) == 5:
            pk = r[0]
            r = r[1:]
        rows.append((pk, *r))
    # the item type without its finding mark
    return [(pk, sk, kind.split(" ")[0], attrs, pats) for pk, sk, kind, attrs, pats in rows]


def test_constant_sort_key_is_one_item_per_partition():
    rows = shop_rows(render("examples/orders.yaml"), "Table Shop")
    profiles = [r for r in rows if r[2] == "Customer"]
    assert [r[1] for r in profiles] == ["PROFILE", "PROFILE"]
    assert len({r[0] for r in profiles}) == 2  # one in each example partition
    for pk, sk, _, attrs, _ in profiles:
        assert "customerId customer-10" in attrs and "name " in attrs and "email " in attrs
    for pk in {r[0] for r in rows}:
        sks = [r[1] for r in rows if r[0] == pk]
        assert sks == sorted(sks, key=lambda s: s.encode())  # an item collection's order
        assert sks.count("PROFILE") == 1
        # each order is followed by its items
        assert [r[2] for r in rows if r[0] == pk][:2] == ["Order", "OrderItem"]


def test_index_rows_hold_the_projection():
    text = render("examples/orders.yaml")
    rows = shop_rows(text, "GSI GSI1")
    assert rows and all(r[2] == "Order" for r in rows)
    for _, _, _, attrs, _ in rows:
        # the table's keys and the listed attributes only (projection: total, customerName)
        assert attrs.startswith("PK CUSTOMER#") and " SK ORDER#" in attrs
        assert "total " in attrs and "customerName " in attrs and "status" not in attrs
    keys_only = shop_rows(render("examples/tickets.yaml"), "GSI OpenTickets")
    for _, _, _, attrs, _ in keys_only:
        assert attrs.startswith("PK TICKET#") and attrs.count(" ") == 3  # PK v SK v


def test_sizes_and_rates_are_shown():
    text = render("examples/orders.yaml")
    page = parse(text)
    shapes = next(t for t in page.tables if t["heading"] == "Item shapes")
    order = next(r for r in shapes["rows"] if r[0] == "Order")
    assert order[3:7] == ["20M", "600 B", "2 per partition", "forever"]
    assert "status enum (PENDING, PAID, SHIPPED, DELIVERED, CANCELLED)" in order[7]
    assert "e.g. 01HV6Z3K8Q2M7N4P5R6S7T8V9W" in order[7]
    patterns = next(t for t in page.tables if t["heading"] == "Access patterns")
    rates = {r[0]: r[3] for r in patterns["rows"][1:] if len(r) == 5}
    assert rates["get-customer"] == "200/s" and rates["customer-orders"] == "100/s, limit 20"


def test_number_sort_key_orders_by_value(tmp_path):
    m = base_model()
    m["tables"]["App"]["sort_key"] = {"name": "SK", "type": "N"}
    m["entities"] = {
        "Reading": {"pk": "SENSOR#{sensorId}", "sk": "{seq}",
                    "attributes": {"sensorId": "id", "seq": "number", "value": "number"}},
    }
    m["access_patterns"] = [{"name": "readings", "kind": "query", "entity": "Reading",
                             "given": ["sensorId"], "order_by": "seq", "direction": "asc"}]
    path = tmp_path / "model.json"
    path.write_text(json.dumps(m))
    rows = shop_rows(render(str(path)), "Table App")
    for pk in {r[0] for r in rows}:
        sks = [r[1] for r in rows if r[0] == pk]
        assert len(sks) == 2 and sks == sorted(sks, key=float), sks


CHROMIUM = shutil.which("chromium") or ("/usr/bin/chromium" if os.path.exists("/usr/bin/chromium") else None)


@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed")
def test_browser_shows_every_finding(tmp_path):
    """Chromium parses the page as written: its DOM has every finding block."""
    out = tmp_path / "page.html"
    out.write_text(render("examples/overloaded-broken.yaml"))
    report = check_json("examples/overloaded-broken.yaml")
    p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={tmp_path / 'profile'}",
                        "--dump-dom", out.as_uri()], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr[-2000:]
    dom = Page()
    dom.feed(p.stdout)
    assert len(dom.blocks) == len(report["findings"]) > 0
    assert {b[1].split(" ", 1)[0].lower() for b in dom.blocks} <= {"error", "warning", "note"}


def test_multi_attribute_sort_key_orders_part_by_part(tmp_path):
    """A GSI keyed [tournamentId] + [round (N), bracket]: one partition, rounds by value."""
    m = {
        "tables": {"Esports": {"partition_key": "PK", "sort_key": "SK", "gsis": [
            {"name": "ByRound", "partition_key": ["tournamentId"],
             "sort_key": [{"name": "round", "type": "N"}, "bracket"], "projection": "keys_only"}]}},
        "entities": {"Match": {
            "pk": "TOURNAMENT#{tournamentId}", "sk": "MATCH#{matchId}",
            "attributes": {"tournamentId": "id", "matchId": "ulid", "round": "number",
                           "bracket": {"format": "enum", "values": ["UPPER", "LOWER"]}}}},
        "access_patterns": [{"name": "rounds", "kind": "query", "entity": "Match",
                             "given": ["tournamentId"], "order_by": "round"}],
    }
    path = tmp_path / "model.json"
    path.write_text(json.dumps(m))
    rows = shop_rows(render(str(path)), "GSI ByRound")
    for pk in {r[0] for r in rows}:
        keys = [r[1].split(", ") for r in rows if r[0] == pk]
        assert len(keys) == 2 and keys == sorted(keys, key=lambda k: (float(k[0]), k[1].encode())), keys
    # the table holds the GSI's key attributes as the item's own
    table = shop_rows(render(str(path)), "Table Esports")
    assert all("round " in r[3] and "bracket " in r[3] for r in table)


def test_denormalised_copy_holds_its_source_value():
    """Order.customerName copies Customer.name: each order shows its customer's name."""
    rows = shop_rows(render("examples/orders.yaml"), "Table Shop")
    names = {r[0]: re.search(r"\bname (\S+ \S+)", r[3]).group(1) for r in rows if r[2] == "Customer"}
    orders = [r for r in rows if r[2] == "Order"]
    assert len(orders) == 4 and len(set(names.values())) == 2
    for pk, _, _, attrs, _ in orders:
        assert f"customerName {names[pk]}" in attrs


def test_cql_table_rows_follow_the_clustering_order():
    """messages_by_user is CLUSTERING ORDER BY (sent_at DESC, message_id ASC)."""
    text = render("tests/model/golden/cql-seeds.model.yaml")
    rows = shop_rows(text, "Table app.messages_by_user")
    for pk in {r[0] for r in rows}:
        sent = [r[1].split("#")[0] for r in rows if r[0] == pk]
        assert len(sent) == 2 and sent == sorted(sent, reverse=True), sent
    # a table without a sort key has no sort-key column
    page = parse(text)
    counts = next(t for t in page.tables if t["heading"] == "Table app.order_counts_by_user")
    assert counts["rows"][0] == ["$pk", "item type", "attributes", "access patterns"]
