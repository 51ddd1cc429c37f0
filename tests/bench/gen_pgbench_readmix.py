#!/usr/bin/env python3
"""Prints the pgbench script of read_mix.lua's SQL, the database's ceiling for scripts/bench's
read-mix scenario. Its six requests run one statement each, sent two ways by db/pool.c, so
the mix is two scripts of three statements, one per pgbench protocol:

  cached   prepared once per connection (pgbench -M prepared): the memory-mode GET
           (tests/bench/pgbench_mm_get.sql), the preference view (pgbench_pref_get.sql) and
           the source GET (db/memory.c: get_stmt)
  planned  planned at every call (DB_CUSTOM_PLAN, PQexecParams; pgbench -M extended): the
           source list (list_newest_stmt, the newest page of 50), the search (search_stmt)
           and the explain (explain_stmt) of "alpha bravo", with the handlers' limits

The db/memory.c statements are read at run time and their macros expanded by the C
preprocessor, so the ceiling follows the source. scripts/bench runs both and combines them:
a mix of six requests costs 1/tps(cached) + 1/tps(planned) seconds of database.

usage: gen_pgbench_readmix.py cached|planned > script.sql   (run with -D tenant=<tenant>)"""
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
bench = os.path.join(root, "tests/bench")


def literals(text):
    return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', text)).replace('\\"', '"')


def memory_sql(names):
    """The SQL text of each named db_stmt of db/memory.c, its macros expanded by cpp."""
    src = open(os.path.join(root, "db/memory.c")).read()
    defines = re.findall(r'^#define (?:.*\\\n)*.*\n', src, re.M)
    exprs = []
    for name in names:
        m = re.search(r'static const struct db_stmt %s = \{\s*"[a-z_]+",\s*(.*?),\s*\d+,\s*'
                      r'(?:true|false|DB_\w+),' % name, src, re.S)
        if m is None:
            sys.exit("gen_pgbench_readmix.py: no statement %s in db/memory.c" % name)
        exprs.append("@@%s@@ %s\n" % (name, m.group(1).replace("\n", " ")))
    out = subprocess.run(["cpp", "-P", "-x", "c", "-"], input="".join(defines) + "".join(exprs),
                         capture_output=True, text=True, check=True).stdout
    found = dict(re.findall(r'@@(\w+)@@ (.*)', out))
    return [literals(found[n]) for n in names]


def subst(text, values):
    return re.sub(r"\$(\d+)", lambda m: values[int(m.group(1))], text)


def script_body(name):
    with open(os.path.join(bench, name)) as f:
        return [line.rstrip("\n") for line in f if line.strip() and not line.startswith("--")]


QUERY = "'alpha bravo'"
KINDS = "'{source,derivative}'"  # no "kinds" in the body (handlers/memory_retrieval.c)


def main():
    which = sys.argv[1] if len(sys.argv) == 2 else ""
    if which == "cached":
        get, = memory_sql(["get_stmt"])
        lines = script_body("pgbench_mm_get.sql") + script_body("pgbench_pref_get.sql")
        lines.append(subst(get, {1: ":tenant", 2: "'src_00000000000000000000000000000001'"}) + ";")
        protocol = "prepared"
    elif which == "planned":
        listing, search, explain = memory_sql(["list_newest_stmt", "search_stmt", "explain_stmt"])
        lines = [
            # $3 the cursor (none), $4.. no filter, $8 the default page (50) + 1 (db_page_limit_param)
            subst(listing, {1: ":tenant", 2: "'source'", 3: "0", 4: "NULL", 5: "NULL", 6: "NULL",
                            7: "NULL", 8: "51", 9: "NULL"}) + ";",
            # RG_MEM_SEARCH_LIMIT_DEFAULT (core/memory.h)
            subst(search, {1: ":tenant", 2: QUERY, 3: "NULL", 4: KINDS, 5: "10"}) + ";",
            # RG_MEM_EXPLAIN_MAX + 1 (handlers/memory_retrieval.c)
            subst(explain, {1: ":tenant", 2: QUERY, 3: "NULL", 4: KINDS, 5: "501"}) + ";",
        ]
        protocol = "extended"
    else:
        sys.exit(__doc__.strip().split("\n")[-1])
    print("-- read_mix.lua's %s statements, written by tests/bench/gen_pgbench_readmix.py;" % which)
    print("-- run with -M %s -D tenant=<tenant>." % protocol)
    print("\n".join(lines))


if __name__ == "__main__":
    main()
