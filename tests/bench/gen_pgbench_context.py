#!/usr/bin/env python3
"""Prints a pgbench script that replays what POST /v1/memory/context runs: the ranked match
with content (db/memory.c: mem_context, MATCH_SQL) and the recording of the load, its receipt
row with the delivered items (db/disclosures.c: mem_deliver), two statements like the
service's two round trips. The SQL is read from
db/memory.c at run time, so the ceiling follows the source; the receipt body is the one the
service stored for the same query (a file, given as the only argument), so both write the
same bytes.

usage: gen_pgbench_context.py BODY_FILE > pgbench_memory_context.sql
run with -M extended -D tenant=<tenant> (the service plans the match at every call; -M prepared
gives the cached-plan figure)."""
import json
import os
import re
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
src = open(os.path.join(root, "db/memory.c")).read()


def literals(text):
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text)).replace('\\"', '"')


def match_sql(columns):
    m = re.search(r'#define MATCH_SQL\(columns\)((?:.*\\\n)*.*\n)', src)
    body = m.group(1).replace("\\\n", "\n")
    # the macro's text with its one parameter spliced in where it stands
    parts = re.split(r'\bcolumns\b', body)
    return columns.join(literals(p) for p in parts)


def stmt_sql(name, path="db/memory.c"):
    text = src if path == "db/memory.c" else open(os.path.join(root, path)).read()
    m = re.search(r'static const struct db_stmt %s = \{\n?\s*"[a-z_]+",\s*\n?(.*?),\s*\d+,' % name,
                  text, re.S)
    return literals(m.group(1))


def sql_literal(s):
    # An escape string with every colon as \x3a: pgbench would take ":name" inside a plain
    # literal (the JSON's ":true", ":[") for one of its variables.
    s = s.replace("\\", "\\\\").replace("'", "\\'").replace(":", "\\x3a")
    return "E'" + s + "'"


def subst(text, values):
    return re.sub(r"\$(\d+)", lambda m: values[int(m.group(1))], text)


ctx = re.search(r'static const struct db_stmt context_stmt = \{"[a-z_]+", MATCH_SQL\("((?:[^"\\]|\\.)*)"\)', src)
context = subst(match_sql(ctx.group(1)), {
    1: ":tenant", 2: "'alpha bravo'", 3: "NULL", 4: "'{source,derivative}'",
    5: "50"})  # RG_MEM_CANDIDATES_MAX (core/memory.h)
body = open(sys.argv[1]).read().rstrip("\n")
loaded = json.loads(body)["loaded_inputs"]
ids = "ARRAY[" + ",".join("'%s'" % x["record_id"] for x in loaded) + "]::text[]"
hashes = "ARRAY[" + ",".join(sql_literal(x["delivered_hash"]) for x in loaded) + "]::text[]"
# the kinds the match answered, read in the same statement like the revisions
kinds = ("ARRAY(SELECT r.record_kind FROM unnest(%s) WITH ORDINALITY AS u(id, n)"
         " JOIN memory_records r ON r.tenant_id = :tenant AND r.record_id = u.id"
         " ORDER BY u.n)" % ids)
# the revisions the match answered: read in the same statement, in the items' order
revisions = ("ARRAY(SELECT r.revision FROM unnest(%s) WITH ORDINALITY AS u(id, n)"
             " JOIN memory_records r ON r.tenant_id = :tenant AND r.record_id = u.id"
             " ORDER BY u.n)" % ids)
# one load per statement (the service records the loads waiting together, one per element)
deliver = subst(stmt_sql("deliver_stmt", "db/disclosures.c"), {
    1: "ARRAY[:tenant]", 2: "ARRAY['tok_pgbench']", 3: "ARRAY['req_pgbench']",
    4: "ARRAY[NULL::text]", 5: "ARRAY['rest']",
    6: "ARRAY['lrc_pgb' || :client_id || 'x' || :r]", 7: "ARRAY[" + sql_literal(body) + "]",
    8: "array_fill(1, ARRAY[%d])" % len(loaded), 9: ids, 10: kinds, 11: revisions,
    12: hashes})

print("-- POST /v1/memory/context's SQL (db/memory.c: mem_context; db/disclosures.c: mem_deliver,")
print("-- its receipt and disclosures), written by tests/bench/gen_pgbench_context.py; run with")
print("-- -M extended -D tenant=<tenant>.")
print("\\set r random(1, 999999999999)")
print(context + ";")
print(deliver + ";")
