"""openapi_drift.py --self-test: every way the field tables and the MCP tools' arguments
could drift from openapi/openapi.yaml, as mutations of fields_dump's output, each of which
openapi_drift's comparison must report (openapi_drift.py's docstring lists them). Kept apart
from the comparison so that each file reads as one thing."""
import json
import sys

from openapi_drift import compare, desc_required, operation_params


def mutations(dump):
    """(what, mutated dump) for every way a field table could drift: each field's type,
    required-ness, nullability, bounds, enum values, closedness, uniqueness, key pattern, desc
    (changed; dropped where one is required), default (changed, dropped, stated where there
    was none), a field dropped and a field added, route by route."""
    def walk(fields, where):
        for i, f in enumerate(fields):
            yield where + [i], f
            for sub in [f.get("item")] if f.get("item") else []:
                yield from walk_item(sub, where + [i, "item"])
            if f.get("fields"):
                yield from walk(f["fields"], where + [i, "fields"])

    def walk_item(f, where):
        yield where, f
        if f.get("item"):
            yield from walk_item(f["item"], where + ["item"])
        if f.get("fields"):
            yield from walk(f["fields"], where + ["fields"])

    def at(d, route, where):
        node = d["routes"][route]["fields"]
        for k in where:
            node = node[k]
        return node

    for route in dump["routes"]:
        fields = dump["routes"][route]["fields"]
        required = {id(f) for _, f in desc_required(fields, route)}
        edits = [(f"{route}: a new field", lambda d, r=route: d["routes"][r]["fields"].append(
            {"name": "zz_new", "type": "bool", "required": False, "nullable": False}))]
        for where, f in walk(fields, []):
            name = f"{route} {'/'.join(map(str, where))} ({f.get('name', 'item')})"

            def edit(fn, where=where):
                return lambda d: fn(at(d, route, where))
            if "name" in f:
                def drop(d, where=where):
                    parent = at(d, route, where[:-1])
                    del parent[where[-1]]
                edits.append((name + " dropped", drop))
                edits.append((name + " required", edit(lambda x: x.update(
                    required=not x["required"]))))
            edits.append((name + " nullable", edit(lambda x: x.update(
                nullable=not x["nullable"]))))
            edits.append((name + " type", edit(lambda x: x.update(
                type="bool" if x["type"] != "bool" else "int", min=0, max=None))))
            # a string with a rule of its own may be tighter in openapi.yaml (its pattern or
            # enum): move its bounds past anything the document could state
            if "max" in f:
                edits.append((name + " max", edit(lambda x: x.update(
                    max=1 if "check_reason" in x else (x["max"] or 1000) + 1))))
            if "min" in f:
                edits.append((name + " min", edit(lambda x: x.update(
                    min=((x["max"] or 1000) + 1) if "check_reason" in x
                    else (x["min"] or 0) + 1))))
            if "values" in f:
                edits.append((name + " enum value dropped", edit(lambda x: x["values"].pop())))
                edits.append((name + " enum value added", edit(lambda x: x["values"].append(
                    "zz_new"))))
            if f.get("fields") is not None and "open" in f:
                edits.append((name + " open", edit(lambda x: x.update(open=not x["open"]))))
            if "unique" in f:
                edits.append((name + " unique", edit(lambda x: x.update(unique=not x["unique"]))))
            if "key_pattern" in f:
                edits.append((name + " key pattern", edit(lambda x: x.update(
                    key_pattern="^zz$"))))
            if "desc" in f:
                edits.append((name + " desc changed", edit(lambda x: x.update(
                    desc=x["desc"] + " (changed)"))))
            if "desc" in f and id(f) in required:
                edits.append((name + " desc dropped", edit(lambda x: x.pop("desc"))))
            # a default changed, dropped, or one stated where there was none
            edits.append((name + " default", edit(lambda x: x.pop("default") if "default" in x
                                                  else x.update(default="zz_new"))))
            if "default" in f:
                edits.append((name + " default changed", edit(lambda x: x.update(
                    default=[x["default"]]))))
        for what, fn in edits:
            d = json.loads(json.dumps(dump))
            fn(d)
            yield what, d


def tool_mutations(dump, doc):
    """(what, mutated dump) for every way a tool's arguments could drift from the document,
    tool by tool: each query parameter's desc (changed, dropped), required-ness, type, enum
    values and the bounds its OpenAPI parameter states (a parameter may state fewer than the
    code: the others cannot be compared), a query parameter dropped and one added; each path
    parameter's desc (changed, dropped); a default dropped, or stated where there was none."""
    bounds = {"int": ("minimum", "maximum"), "number": ("minimum", "maximum"),
              "string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}
    for name, tool in dump["tools"].items():
        method, path = tool["route"].split(" ", 1)
        params = operation_params(doc, method, path) or {}
        edits = [(f"{name}: a new query parameter", lambda t: t["query"].append(
            {"name": "zz_new", "type": "bool", "required": False, "nullable": False,
             "desc": "A new argument."}))]
        for kind in ("query", "path"):
            for i, f in enumerate(tool[kind]):
                what = f"{name} {kind} parameter {f['name']}"

                def edit(fn, kind=kind, i=i):
                    return lambda t: fn(t[kind][i])
                if "desc" in f:
                    edits.append((what + " desc changed", edit(lambda x: x.update(
                        desc=x["desc"] + " (changed)"))))
                    edits.append((what + " desc dropped", edit(lambda x: x.pop("desc"))))
                if kind == "path":
                    continue
                schema = doc.resolve(params.get((kind, f["name"]), {}).get("schema") or {})
                edits.append((what + " dropped", lambda t, i=i: t["query"].pop(i)))
                edits.append((what + " default", edit(lambda x: x.pop("default")
                                                      if "default" in x
                                                      else x.update(default="zz_new"))))
                edits.append((what + " required", edit(lambda x: x.update(
                    required=not x["required"]))))
                edits.append((what + " type", edit(lambda x: x.update(
                    type="bool" if x["type"] != "bool" else "int"))))
                if "values" in f:
                    edits.append((what + " enum value dropped", edit(
                        lambda x: x["values"].pop())))
                    edits.append((what + " enum value added", edit(
                        lambda x: x["values"].append("zz_new"))))
                for key, member in zip(bounds.get(f["type"], ()), ("min", "max")):
                    if key in schema:
                        edits.append((f"{what} {member}", edit(lambda x, m=member: x.update(
                            {m: (x[m] or 0) + 1}))))
        for what, fn in edits:
            d = json.loads(json.dumps(dump))
            fn(d["tools"][name])
            yield what, d


def self_test(dump, doc):
    """Every mutation of the field tables and of the tools' parameters must be reported; the
    unmutated ones must not."""
    if compare(dump, doc):
        print("self-test: the unmutated tables already disagree; run without --self-test")
        return 1

    def all_mutations():
        yield from mutations(dump)
        yield from tool_mutations(dump, doc)
    missed = [what for what, d in all_mutations() if not compare(d, doc)]
    total = sum(1 for _ in all_mutations())
    for what in missed:
        print(f"self-test: drift not detected: {what}")
    print(f"openapi_drift self-test: {total - len(missed)} of {total} mutations of the field "
          "tables and the tools' parameters detected", file=sys.stderr)
    return 1 if missed else 0
