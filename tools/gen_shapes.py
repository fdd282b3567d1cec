#!/usr/bin/python3
"""gen_shapes.py — writes src/ops/shapes_gen.c, the input shapes of DynamoDB's operations as
data, from the service models botocore ships (DynamoDB and DynamoDB Streams, 2012-08-10).

Every shape an operation's input reaches becomes one constant: its type, its constraints
(required members, lengths, pattern, enum values, numeric range, sizes) and its members.
tools/shapes_overrides.json holds where the live service differs from its model. The
output is committed; run `tools/gen_shapes.py > src/ops/shapes_gen.c` after a change."""
import json
import os
import sys

MODELS = "/usr/lib/python3/dist-packages/botocore/data/%s/2012-08-10/service-2.json"
HERE = os.path.dirname(os.path.abspath(__file__))
TYPES = {"structure": "WIRE_STRUCTURE", "list": "WIRE_LIST", "map": "WIRE_MAP",
         "string": "WIRE_STRING", "integer": "WIRE_INTEGER", "long": "WIRE_LONG",
         "double": "WIRE_DOUBLE", "boolean": "WIRE_BOOLEAN", "blob": "WIRE_BLOB",
         "timestamp": "WIRE_TIMESTAMP"}


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def load():
    """The operations (name -> input shape name) and shapes of both models, the overrides
    applied; a name both models give one shape (TableName, ...) is taken from DynamoDB's."""
    ops, shapes = {}, {}
    for service in ("dynamodbstreams", "dynamodb"):
        m = json.load(open(MODELS % service))
        for name, op in m["operations"].items():
            if "input" in op:
                ops[name] = (service, op["input"]["shape"])
        for name, s in m["shapes"].items():
            shapes[(service, name)] = s
    overrides = json.load(open(os.path.join(HERE, "shapes_overrides.json")))
    for key in overrides.get("handler_judges", []):
        service, name = key.split("/")
        shapes[(service, name)]["handler_judges"] = True
    for key, change in overrides["shapes"].items():
        service, name = key.split("/")
        shape = shapes.setdefault((service, name), {})
        for field, value in change.items():
            if value is None:
                shape.pop(field, None)
            else:
                shape[field] = value
    for key, members in overrides.get("added_members", {}).items():
        service, name = key.split("/")
        shapes[(service, name)]["members"].update(members)
    for key, members in overrides.get("length_messages", {}).items():
        service, name = key.split("/")
        for member, text in members.items():
            shapes[(service, name)]["members"][member]["length_message"] = text
    for key, order in overrides.get("judged_alone", {}).items():
        service, name = key.split("/")
        for part in ("before", "after"):
            if part in order:
                shapes[(service, name)]["alone_" + part] = order[part]
    for key, members in overrides.get("unshown_values", {}).items():
        service, name = key.split("/")
        shapes[(service, name)]["unshown"] = members
    for key, entries in overrides.get("map_entries", {}).items():
        service, name = key.split("/")
        shapes[(service, name)]["map_entries"] = entries
    for key, fields in overrides.get("java_fields", {}).items():
        service, name = key.split("/")
        shapes[(service, name)]["java_fields"] = fields
    for key, joints in overrides.get("joint_messages", {}).items():
        service, name = key.split("/")
        shapes[(service, name)]["joints"] = joints
    for kind in ("absent_messages", "enum_messages", "empty_messages", "among_messages"):
        for key, members in overrides.get(kind, {}).items():
            service, name = key.split("/")
            for member, text in members.items():
                shapes[(service, name)]["members"][member][kind[:-1]] = text
    for key, members in overrides.get("member_shapes", {}).items():
        service, name = key.split("/")
        for member, target in members.items():
            shapes[(service, name)]["members"][member]["shape"] = target
    return ops, shapes, set(overrides.get("handler_judges_operations", []))


def ere(s):
    """A shape's pattern as an anchored POSIX extended expression, or None when it uses
    what POSIX does not have (\\p{...}, \\u escapes): such patterns are not judged. An
    override may give the expression itself (ere) where the live service matches more."""
    if "ere" in s:
        return s["ere"]
    p = s.get("pattern")
    if p is None or "\\" in p:
        return None
    return "^(" + p.lstrip("^").rstrip("$") + ")$"


def write_joints(w, sid, joints):
    """A structure's joint messages (shape_joint), each with its NULL-terminated members."""
    for i, j in enumerate(joints):
        w("static const char *const %s_joint%d[] = {%s, NULL};" %
          (sid, i, ", ".join(c_string(b) for b in j["broken"])))
    w("static const shape_joint %s_joints[] = {" % sid)
    for i, j in enumerate(joints):
        (beside, least), = j["beside"].items()
        w("    {%s_joint%d, %s, %d, %s}," % (sid, i, c_string(beside), least, c_string(j["message"])))
    w("};")


def ident(service, name):
    return ("T_" if service == "dynamodbstreams" else "S_") + name


def main():
    ops, shapes, handler_ops = load()
    reached, order = set(), []

    def reach(service, name):
        if (service, name) in reached:
            return
        reached.add((service, name))
        s = shapes[(service, name)]
        for m in s.get("members", {}).values():
            reach(service, m["shape"])
        for part in ("member", "key", "value", "absent_variant"):
            if part in s:
                reach(service, s[part]["shape"])
        order.append((service, name))

    for service, name in ops.values():
        reach(service, name)

    constrained = {}

    def is_constrained(key, seen=()):
        """Whether the constraint walk has anything to judge in shape key or below it (the
        keys and values of maps are left to the operations unless map_entries names them)."""
        if key in constrained:
            return constrained[key]
        if key in seen:
            return False
        s = shapes[key]
        own = not s.get("handler_judges") and any(
            f in s for f in ("min", "max", "enum", "required") if f != "pattern") or (
            not s.get("handler_judges") and ere(s) is not None)
        below = any(is_constrained((key[0], m["shape"]), seen + (key,))
                    for m in s.get("members", {}).values())
        if s["type"] == "list":
            below = below or is_constrained((key[0], s["member"]["shape"]), seen + (key,))
        if s["type"] == "map" and s.get("map_entries"):  # its keys and values judged too
            k = shapes[(key[0], s["key"]["shape"])]
            below = below or any(f in k for f in ("min", "max", "pattern")) or is_constrained(
                (key[0], s["value"]["shape"]), seen + (key,))
        if not seen:
            constrained[key] = own or below
        return own or below
    out = []
    w = out.append
    w("/* shapes_gen.c — the input shapes of DynamoDB's operations, generated by tools/gen_shapes.py")
    w(" * from botocore's service models with tools/shapes_overrides.json applied. Do not edit:")
    w(" * change the generator or the overrides and run it again. Data only; ops/shapes.c walks it. */")
    w('#include "ops/shapes.h"')
    w("")
    w("/* clang-format off */")
    for key in sorted(order):
        w("static const shape %s;" % ident(*key))
    w("")
    for service, name in sorted(order):
        s = shapes[(service, name)]
        sid = ident(service, name)
        fields = [".type = %s" % TYPES[s["type"]], ".name = %s" % c_string(name)]
        if is_constrained((service, name)):
            fields.append(".constrained = 1")
        if s.get("handler_judges"):
            fields.append(".handler_judges = 1")
        if "min" in s:
            fields.append(".has_min = 1, .min = %dLL" % s["min"])
        if "max" in s:
            fields.append(".has_max = 1, .max = %dLL" % s["max"])
        if ere(s) is not None:
            fields.append(".pattern = %s, .ere = %s" % (c_string(s["pattern"]), c_string(ere(s))))
        if s.get("pattern_first"):
            fields.append(".pattern_first = 1")
        if s.get("one_member_at_a_time"):
            fields.append(".one_member_at_a_time = 1")
        if "absent_variant" in s:
            fields.append(".variant_member = %s, .variant = &%s" % (
                c_string(s["absent_variant"]["member"]), ident(service, s["absent_variant"]["shape"])))
        if "enum" in s:
            w("static const char *const %s_enum[] = {%s, NULL};" %
              (sid, ", ".join(c_string(e) for e in s["enum"])))
            fields.append(".enums = %s_enum" % sid)
        if s["type"] == "structure" and s.get("members"):
            required = set(s.get("required", []))
            w("static const shape_member %s_members[] = {" % sid)
            for mname, m in s["members"].items():
                text = m.get("length_message")
                w("    {%s, &%s, %d, %s}," % (c_string(mname), ident(service, m["shape"]),
                                          mname in required,
                                          c_string(text) if text else "NULL"))
            w("};")
            fields.append(".members = %s_members, .nmembers = %d" % (sid, len(s["members"])))
            messages = [(mname, kind, m[field]) for mname, m in s["members"].items()
                        for field, kind in (("absent_message", "SHAPE_MESSAGE_ABSENT"),
                                            ("enum_message", "SHAPE_MESSAGE_ENUM"),
                                            ("empty_message", "SHAPE_MESSAGE_EMPTY"),
                                            ("among_message", "SHAPE_MESSAGE_AMONG"))
                        if field in m]
            if messages:
                w("static const shape_message %s_messages[] = {" % sid)
                for mname, kind, text in messages:
                    w("    {%s, %s, %s}," % (c_string(mname), kind, c_string(text)))
                w("};")
                fields.append(".messages = %s_messages, .nmessages = %d" % (sid, len(messages)))
        for part in ("alone_before", "alone_after", "unshown"):
            if s.get(part):
                for mname in s[part]:
                    assert mname in s["members"], (name, part, mname)
                w("static const char *const %s_%s[] = {%s, NULL};" %
                  (sid, part, ", ".join(c_string(mname) for mname in s[part])))
                fields.append(".%s = %s_%s" % (part, sid, part))
        if s.get("java_fields"):
            w("static const char *const %s_java_fields[] = {%s, NULL};" %
              (sid, ", ".join(c_string(f) for f in s["java_fields"])))
            fields.append(".java_fields = %s_java_fields" % sid)
        if s.get("map_entries"):
            entries = s["map_entries"]
            fields.append(".map_echo = SHAPE_ECHO_%s" % entries["echo"].upper())
            if entries.get("arn_keys"):
                fields.append(".arn_keys = 1")
        if s.get("joints"):
            write_joints(w, sid, s["joints"])
            fields.append(".joints = %s_joints, .njoints = %d" % (sid, len(s["joints"])))
        if s["type"] == "list":
            fields.append(".element = &%s" % ident(service, s["member"]["shape"]))
        if s["type"] == "map":
            fields.append(".key = &%s" % ident(service, s["key"]["shape"]))
            fields.append(".element = &%s" % ident(service, s["value"]["shape"]))
        w("static const shape %s = {%s};" % (sid, ", ".join(fields)))
    w("")
    w("const shape_operation shape_operations[] = {")
    for name in sorted(ops):
        w("    {%s, &%s, %d}," % (c_string(name), ident(*ops[name]), name not in handler_ops))
    w("};")
    w("const size_t shape_noperations = sizeof shape_operations / sizeof shape_operations[0];")
    w("/* clang-format on */")
    sys.stdout.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
