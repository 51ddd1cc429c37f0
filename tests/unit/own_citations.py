#!/usr/bin/env python3
"""Fails when code cites the external contract instead of the repository's own files: every
citation must name openapi/openapi.yaml (a tag, schema, parameter or section of its
description) or a docs/ page, which ship with the code.

Usage: own_citations.py <root of the source tree>

Not searched: docs/ (its pages may name the contract they sit beside), db/migrations/ (an
applied migration is checksummed: db/migrate.c refuses one whose bytes changed, so its
comments stay as they were written), prose *.md outside tests/, build trees and .git.
"""
import os
import sys

NAME = "API" + ".md"  # spelled so that this file does not cite it
SKIP_DIRS = {".git", "node_modules", ".test-data", "__pycache__"}
KEEP = ("docs/", "db/migrations/")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    found = []
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not d.startswith("build")]
        for f in files:
            rel = os.path.relpath(os.path.join(dirpath, f), root).replace(os.sep, "/")
            if rel.startswith(KEEP) or (rel.endswith(".md") and not rel.startswith("tests/")):
                continue
            try:
                with open(os.path.join(dirpath, f), encoding="utf-8") as fh:
                    lines = fh.read().split("\n")
            except (UnicodeDecodeError, OSError):
                continue
            found += [f"{rel}:{i + 1}: {s.strip()}" for i, s in enumerate(lines) if NAME in s]
    for line in found:
        print(line)
    print(f"own_citations: {len(found)} lines cite {NAME} outside docs/ "
          "(rewrite them with the helpers' cite.py)", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
