#!/usr/bin/env python3
"""Fails when openapi/openapi.yaml's request schemas disagree with the field descriptions that
validate the bodies (core/fields.h, the tables handlers/routes.c names), or its parameters with
the MCP tools' arguments that are not body fields (query and path parameters).

Usage: openapi_drift.py [--self-test] --dump <fields_dump or its JSON output> --openapi <yaml>

fields_dump (tests/unit/fields_dump.c) prints every route's body fields as JSON, with the MCP
tool that adapts the route (handlers/mcp_tool_table.c), if any, and every tool's route, query
parameters (the tool table's field_spec) and path parameters (handlers/mcp_tools.c's
path_params). For each route, the operation's application/json request schema is resolved ($ref, with sibling
keywords; oneOf [X, {type: null}] as nullable X) and compared member by member: the set of
members, which are required, type, nullability, string bounds (minLength; maxLength and
x-max-bytes, both of which must equal the byte limit), number bounds (minimum, maximum),
enum values, formats (date-time for timestamps), patterns that the code states ("must match
..."), array bounds (minItems, maxItems, uniqueItems), maps (maxProperties, propertyNames,
additionalProperties), and whether an object is closed (additionalProperties: false).
Where the code has a rule of its own on a string (`check`), openapi.yaml may state it as a
pattern with a larger minLength (the rule refuses what is shorter), or as an enum, which must
list exactly the values the rule accepts (fields_dump prints them) within the code's bounds. A
validation keyword this script does not understand is reported too, so that a new kind of
rule cannot pass unchecked. Rules across fields (the route's `check`, e.g. "exactly one of
content and pointer") are the OpenAPI document's oneOf/anyOf/not/dependentRequired of
`required` lists only, and are not compared: the integration tests cover them. A body of
several forms (oneOf of objects: a relevance check) is compared as the union of its forms,
which is what the code's table describes.

Descriptions: a field's one sentence for its reader (`desc`, which an MCP tool's input schema
shows) is the resolved property's `description` in openapi.yaml, exactly (a sibling
`description` beside a `$ref` overrides the target's); a longer explanation belongs in the
request schema's own description. Where the code has no desc, the document's description is
free, and so is that of a map's member named for its meaning (quality_gates' readability).
Every field of every route must have a desc (an MCP tool shows it to a model, and the API is
described the same way everywhere): every member, nested ones included, every array item that
is an object and every map's values; an array's plain items may go without (the array's desc
says what they are). A desc is one line of plain text (no markdown: a model reads it as it is)
of at most 160 characters; the bounds are the schema's to state, not the sentence's.

Defaults: a field's or a tool query parameter's `default` (the code's `dflt`, what an absent
value stands for) is the document's `default`, both ways: neither may state one the other
does not.

Tool arguments: a tool's sentence for each argument is its operation's parameter's
`description`, exactly, for its query parameters (the GET tools') and its path parameters
(every tool with an id in its path); a longer explanation belongs in the operation's
description, the document's Conventions or the parameter's schema's own description. Every
argument must have a desc (the same rules as a field's). Each query parameter of a tool is an
`in: query` parameter of the operation with the same required-ness, and the operation has no
query parameter the tool lacks. Where both the tool's table and the parameter's schema state a
rule, it is the same: type, enum values (an enum in the code must be one in the document),
format (a timestamp is a date-time), pattern ("must match ..."), minimum/maximum,
minLength/maxLength, minItems/maxItems/uniqueItems. Either may state rules the other does not
(the handler validates the query string itself, e.g. audit_verify's cursor pattern); this part
of the comparison is not closed the way a body's is.

--self-test mutates the dump instead (every field's type, required-ness, nullability,
bounds, enum values, closedness, uniqueness, key pattern, desc changed, desc dropped where one
is required; a field dropped, one added; every tool query parameter's desc changed and
dropped, required-ness, type, enum values and the bounds its OpenAPI parameter states, one
dropped, one added; every tool path parameter's desc changed and dropped) and fails unless
every mutation is reported: the comparison cannot silently pass a kind of drift.

Every OpenAPI operation with an application/json body must have a route with a body, and
the other way round (POST /mcp excepted: JSON-RPC, validated by handlers/mcp.c).
"""
import argparse
import json
import subprocess
import sys

import yaml

# The longest desc: one sentence, which a model reads in every tools/list.
DESC_MAX = 160
# Keywords that only describe (never refuse a body).
ANNOTATIONS = {
    "description", "title", "examples", "example", "default", "deprecated", "readOnly",
    "writeOnly", "$comment", "x-enumDescriptions", "externalDocs",
}
# Keywords that express rules across members of one object: the route's `check`.
CROSS_FIELD = {"oneOf", "anyOf", "not", "dependentRequired", "allOf"}


class Doc:
    def __init__(self, doc):
        self.doc = doc

    def ref(self, ref):
        if not ref.startswith("#/"):
            raise ValueError(f"external $ref {ref}")
        node = self.doc
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    def resolve(self, s, seen=()):
        """The schema with $ref followed (siblings override the target's keywords) and
        oneOf/anyOf [X, {type: null}] folded into X plus a "null" type."""
        if not isinstance(s, dict):
            return s
        s = dict(s)
        if "$ref" in s:
            ref = s.pop("$ref")
            if ref in seen:
                raise ValueError(f"recursive $ref {ref}")
            target = self.resolve(self.ref(ref), seen + (ref,))
            merged = dict(target)
            merged.update(s)
            s = merged
        for key in ("oneOf", "anyOf"):
            branches = s.get(key)
            if not isinstance(branches, list):
                continue
            nulls = [b for b in branches if b == {"type": "null"}]
            others = [b for b in branches if b != {"type": "null"}]
            if len(nulls) == 1 and len(others) == 1:
                del s[key]
                inner = self.resolve(others[0], seen)
                merged = dict(inner)
                merged.update(s)
                merged["x-nullable-by-oneof"] = True
                s = merged
        return s


def types_of(s):
    t = s.get("type")
    if t is None:
        return set()
    return set(t) if isinstance(t, list) else {t}


def only_required(branch):
    """A cross-field branch: only required / not / nested such branches."""
    if not isinstance(branch, dict):
        return False
    for k, v in branch.items():
        if k in ANNOTATIONS:
            continue
        if k == "required":
            continue
        if k == "not":
            if not only_required(v):
                return False
            continue
        if k in ("anyOf", "oneOf", "allOf"):
            if not all(only_required(b) for b in v):
                return False
            continue
        if k == "properties":
            # {properties: {x: {const: ...}}} in an if/oneOf branch would be a value rule
            return False
        return False
    return True


class Compare:
    def __init__(self, doc, rule_values):
        self.doc = doc
        self.rule_values = rule_values
        self.drift = []

    def say(self, where, msg):
        self.drift.append(f"{where}: {msg}")

    def expect(self, where, what, api, code):
        if api != code:
            self.say(where, f"{what}: openapi.yaml says {api!r}, the code {code!r}")

    def field(self, where, f, s, named_member=False):
        """named_member: s is a map's member named for its meaning, which may say more than the
        map values' desc."""
        s = self.doc.resolve(s)
        types = types_of(s)
        api_nullable = "null" in types or s.get("x-nullable-by-oneof", False) or (
            None in (s.get("enum") or []))
        self.expect(where, "nullable", bool(api_nullable), f["nullable"])
        if "desc" in f and not named_member:
            self.expect(where, "description", s.get("description"), f["desc"])
        self.expect(where, "default", s.get("default"), f.get("default"))
        types.discard("null")
        used = set(ANNOTATIONS) | {"type", "x-nullable-by-oneof"}
        kind = f["type"]

        def want_type(t):
            if kind == "enum" and not types:
                return
            if kind == "object" and not types and self.branches_of(s)[1]:
                return  # several forms, each an object
            self.expect(where, "type", sorted(types), [t])

        def bound(key, code_value, absent=None):
            used.add(key)
            self.expect(where, key, s.get(key, absent), code_value)

        if kind in ("string", "timestamp", "enum"):
            want_type("string")
        if kind == "string":
            reason = f.get("check_reason")
            if reason is not None and "enum" in s:
                # a rule that accepts a closed set, stated as an enum: the code's bounds must
                # admit every value (the enum bounds the length itself)
                used.add("enum")
                self.expect(where, "enum (the values the code's rule accepts)",
                            sorted(s["enum"]), sorted(self.rule_values.get(reason, ["?"])))
                for v in s["enum"]:
                    n = len(v.encode())
                    if n < (f["min"] or 0) or (f["max"] and n > f["max"]):
                        self.say(where, f"enum value {v!r}: outside the code's bounds")
            else:
                used.add("minLength")
                if reason is not None and s.get("minLength", 0) >= (f["min"] or 0):
                    pass  # the code's rule refuses what is shorter than its pattern allows
                else:
                    self.expect(where, "minLength", s.get("minLength", 0), f["min"] or 0)
                bound("maxLength", f["max"])
                if "x-max-bytes" in s:
                    bound("x-max-bytes", f["max"])
            reason = reason or ""
            used.add("pattern")
            if reason.startswith("must match "):
                self.expect(where, "pattern", s.get("pattern"), reason[len("must match "):])
            elif "pattern" in s and "check_reason" not in f:
                self.say(where, f"pattern {s['pattern']!r} in openapi.yaml, no rule in the code")
            used.add("format")
            if s.get("format") == "date-time":
                self.say(where, "format date-time in openapi.yaml, a plain string in the code")
        elif kind == "timestamp":
            used.add("format")
            self.expect(where, "format", s.get("format"), "date-time")
        elif kind == "enum":
            used.add("enum")
            api = [v for v in (s.get("enum") or []) if v is not None]
            if "const" in s:
                used.add("const")
                api = [s["const"]]
            self.expect(where, "enum", sorted(api), sorted(f["values"]))
        elif kind in ("int", "number"):
            want_type("integer" if kind == "int" else "number")
            used.add("format")  # int64, double: the width, no rule of its own
            bound("minimum", f["min"])
            bound("maximum", f["max"])
        elif kind == "bool":
            want_type("boolean")
        elif kind == "object":
            want_type("object")
            self.object(where, f, s, used)
        elif kind == "array":
            want_type("array")
            bound("minItems", f["min"] or 0, 0)
            bound("maxItems", f["max"])
            bound("uniqueItems", f["unique"], False)
            used.add("items")
            if "item" in f:
                if "items" not in s:
                    self.say(where, "items: missing in openapi.yaml")
                else:
                    self.field(where + "[]", f["item"], s["items"])
        elif kind == "map":
            want_type("object")
            bound("maxProperties", f["max"])
            used.update({"propertyNames", "additionalProperties", "properties"})
            names = self.doc.resolve(s.get("propertyNames") or {})
            self.expect(where, "propertyNames.pattern", names.get("pattern"), f.get("key_pattern"))
            ap = s.get("additionalProperties")
            if "item" in f:
                if not isinstance(ap, dict):
                    self.say(where, "additionalProperties: the code checks every value, "
                                    "openapi.yaml has no schema for them")
                else:
                    self.field(where + "{}", f["item"], ap)
                # members named for their meaning are still values of the map
                for n, p in (s.get("properties") or {}).items():
                    self.field(f"{where}{{{n}}}", f["item"], p, named_member=True)
            elif s.get("properties"):
                self.say(where, "a map of any values in the code, named members in openapi.yaml")
        self.unchecked(where, s, used)

    def branches_of(self, s):
        """A body of several forms (oneOf/anyOf whose branches are all objects with members):
        the resolved branches, else None."""
        for key in ("oneOf", "anyOf"):
            bs = [self.doc.resolve(b) for b in s.get(key) or []]
            if bs and all("object" in types_of(b) and "properties" in b for b in bs):
                return key, bs
        return None, None

    def object(self, where, f, s, used):
        used.update({"properties", "required", "additionalProperties", "maxProperties"})
        used.update(k for k in CROSS_FIELD if k in s and self.cross_field_only(s[k], k))
        key, forms = self.branches_of(s)
        if forms:
            # the code takes the union of the forms, each member optional, and tells them
            # apart with the route's check: compare the members with every form that has them
            used.add(key)
            if "object" not in types_of(s):
                s = dict(s, type="object")
            props, required = {}, None
            for b in forms:
                for n, p in b["properties"].items():
                    props.setdefault(n, []).append(p)
                req = set(b.get("required") or [])
                required = req if required is None else required & req
            closed = all(b.get("additionalProperties", True) is False for b in forms)
            ap = False if closed else True
        else:
            props = {n: [p] for n, p in (s.get("properties") or {}).items()}
            required = set(s.get("required") or [])
            ap = s.get("additionalProperties", True)
        fields = f.get("fields")
        if fields is None:  # free-form: any members
            if props or ap is False:
                self.say(where, "free-form object in the code, described members in openapi.yaml")
            return
        closed = not f.get("open", False)
        self.expect(where, "closed (additionalProperties: false)", ap is False, closed)
        if not fields and closed:
            # {} exactly: additionalProperties false (maxProperties 0 says the same)
            if s.get("maxProperties") not in (None, 0):
                self.say(where, "maxProperties: the code takes no member")
        elif "maxProperties" in s:
            self.say(where, f"maxProperties {s['maxProperties']}: no such rule in the code")
        names = [x["name"] for x in fields]
        for n in names:
            if n not in props:
                self.say(where, f"member {n!r}: validated by the code, missing in openapi.yaml")
        for n in props:
            if n not in names:
                self.say(where, f"member {n!r}: in openapi.yaml, unknown to the code "
                                f"({'refused with unknown_field' if closed else 'ignored'})")
        for x in fields:
            sub = f"{where}.{x['name']}"
            for p in props.get(x["name"], []):
                self.expect(sub, "required", x["name"] in required, x["required"])
                self.field(sub, x, p)
        for n in required - set(names):
            self.say(where, f"required {n!r}: not a member the code knows")

    def param(self, where, f, s):
        """A tool's query parameter f against its OpenAPI parameter's schema s, where both
        state a rule: type, enum values, format, pattern and bounds. Either may state rules
        the other does not (the handler validates the query string itself); a code enum must
        be the document's enum, and a timestamp a date-time."""
        s = self.doc.resolve(s)
        kind = f["type"]
        self.expect(where, "default", s.get("default"), f.get("default"))
        types = types_of(s) - {"null"}
        want = {"string": "string", "timestamp": "string", "enum": "string", "int": "integer",
                "number": "number", "bool": "boolean", "array": "array",
                "object": "object", "map": "object"}[kind]
        if types:
            self.expect(where, "type", sorted(types), [want])
        if kind == "enum":
            api = [v for v in (s.get("enum") or []) if v is not None]
            self.expect(where, "enum", sorted(api), sorted(f["values"]))
        if kind == "timestamp" or s.get("format") == "date-time":
            self.expect(where, "format", s.get("format"), "date-time" if kind == "timestamp"
                        else None)
        reason = f.get("check_reason") or ""
        if "pattern" in s and reason.startswith("must match "):
            self.expect(where, "pattern", s["pattern"], reason[len("must match "):])
        keys = {"int": ("minimum", "maximum"), "number": ("minimum", "maximum"),
                "string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}
        for key, code in zip(keys.get(kind, ()), (f.get("min"), f.get("max"))):
            if key in s:
                if key in ("minLength", "minItems"):
                    code = code or 0
                self.expect(where, key, s[key], code)
        if kind == "array" and "uniqueItems" in s:
            self.expect(where, "uniqueItems", s["uniqueItems"], f["unique"])

    def cross_field_only(self, v, key):
        if key == "dependentRequired":
            return True
        if key == "not":
            return only_required(v)
        return all(only_required(b) for b in v)

    def unchecked(self, where, s, used):
        for k in s:
            if k not in used:
                self.say(where, f"keyword {k}: {json.dumps(s[k])[:80]} in openapi.yaml, "
                                "not compared with the code (a rule the code may not have)")


def desc_required(fields, where):
    """(where, field) for every field of a table that must have a desc: every member (nested
    ones included), every array item that is an object, every map's values."""
    def walk(f, at, must):
        if must:
            yield at, f
        for x in f.get("fields") or []:
            yield from walk(x, f"{at}.{x['name']}", True)
        item = f.get("item")
        if item and f["type"] == "map":
            yield from walk(item, at + "{}", True)
        elif item:
            yield from walk(item, at + "[]", item["type"] == "object")
    for x in fields:
        yield from walk(x, f"{where}.{x['name']}", True)


def desc_problem(f):
    """Why a parameter's desc is not one short line of plain text, or None."""
    if "desc" not in f:
        return None
    if len(f["desc"]) > DESC_MAX or any(c in f["desc"] for c in "`*\n"):
        return f"desc: one line of plain text, at most {DESC_MAX} characters"
    return None


def operation_params(doc, method, path):
    """The operation's parameters (path-level ones first, the operation's override them),
    resolved and keyed (in, name); None when openapi.yaml has no such operation."""
    item = doc.doc["paths"].get(path)
    op = item.get(method.lower()) if item else None
    if not isinstance(op, dict):
        return None
    params = {}
    for p in (item.get("parameters") or []) + (op.get("parameters") or []):
        p = doc.resolve(p)
        params[(p.get("in"), p.get("name"))] = p
    return params


def compare_tools(cmp, tools, doc):
    """Each MCP tool's arguments that are not body fields against its operation's parameters:
    every query parameter of the tool is one of the operation (in: query) with the same
    description, the same required-ness and no other rule (Compare.param), and the other way
    round; every path parameter has a desc, which is the operation's path parameter's
    description."""
    for name in sorted(tools):
        tool = tools[name]
        method, path = tool["route"].split(" ", 1)
        where = f"{tool['route']} (MCP tool {name})"
        params = operation_params(doc, method, path)
        if params is None:
            cmp.say(where, "no such operation in openapi.yaml")
            continue
        for kind, fields in (("query", tool["query"]), ("path", tool["path"])):
            for f in fields:
                at = f"{where} {kind} parameter {f['name']}"
                if "desc" not in f:
                    cmp.say(at, f"no desc in the code: a model calling {name} needs one "
                                "sentence per argument")
                elif desc_problem(f):
                    cmp.say(at, desc_problem(f))
                p = params.get((kind, f["name"]))
                if p is None:
                    cmp.say(at, f"an argument of the tool, not an in: {kind} parameter of the "
                                "operation in openapi.yaml")
                    continue
                cmp.expect(at, "description", p.get("description"), f.get("desc"))
                if kind == "query":
                    cmp.expect(at, "required", p.get("required", False), f["required"])
                    cmp.param(at, f, p.get("schema") or {})
            names = {f["name"] for f in fields}
            for k, n in sorted(params):
                if k == kind and n not in names:
                    cmp.say(f"{where} {kind} parameter {n}", "in openapi.yaml, not an "
                                                              "argument of the tool")


def compare(dump, doc):
    """Every disagreement between the dump of fields_dump and the document, as text lines."""
    cmp = Compare(doc, dump["rule_values"])
    routes = dump["routes"]
    for key in sorted(routes):
        tool = routes[key].get("mcp_tool")
        reader = f"a model calling the MCP tool {tool}" if tool else "a client"
        for where, f in desc_required(routes[key]["fields"], key + " body"):
            if "desc" not in f:
                cmp.say(where, f"no desc in the code: {reader} needs one sentence per field")
            elif desc_problem(f):
                cmp.say(where, desc_problem(f))
    ops = {}
    for path, item in doc.doc["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict) or "requestBody" not in op:
                continue
            content = doc.resolve(op["requestBody"]).get("content", {})
            if "application/json" in content and path != "/mcp":
                ops[f"{method.upper()} {path}"] = content["application/json"].get("schema")
    for key in sorted(set(ops) - set(routes)):
        cmp.say(key, "openapi.yaml takes a JSON body; the route validates none (or is missing)")
    for key in sorted(routes):
        if key not in ops:
            cmp.say(key, "the route validates a body; openapi.yaml has no application/json "
                         "request schema for it")
            continue
        body = {"type": "object", "required": True, "nullable": False, "open": False,
                "fields": routes[key]["fields"]}
        cmp.field(key + " body", body, ops[key])
    compare_tools(cmp, dump["tools"], doc)
    return cmp.drift


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dump", required=True,
                    help="tests/unit/fields_dump (run) or a file holding its output")
    ap.add_argument("--openapi", required=True)
    ap.add_argument("--self-test", action="store_true",
                    help="check instead that every mutation of the field tables is reported")
    a = ap.parse_args()
    if a.dump.endswith(".json"):
        with open(a.dump) as fh:
            dump = json.load(fh)
    else:
        dump = json.loads(subprocess.run([a.dump], check=True, capture_output=True,
                                         text=True).stdout)
    with open(a.openapi) as fh:
        doc = Doc(yaml.safe_load(fh))
    if a.self_test:
        from openapi_drift_mutations import self_test  # the script's folder is on sys.path
        return self_test(dump, doc)
    drift = compare(dump, doc)
    for line in drift:
        print(line)
    print(f"openapi_drift: {len(dump['routes'])} routes with a body, "
          f"the parameters of {len(dump['tools'])} MCP tools, "
          f"{len(drift)} disagreements", file=sys.stderr)
    return 1 if drift else 0


if __name__ == "__main__":
    sys.exit(main())
