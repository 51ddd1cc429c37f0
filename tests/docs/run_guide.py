#!/usr/bin/env python3
"""Run every example of the user guide (docs/guide/) against a live recallgate and check it.

The convention the examples follow is written at the top of docs/guide/README.md; in short:

* Every ```sh block runs, in page order, in one bash session per page (variables and
  functions carry over from block to block within a page; the working directory is the
  repository root).
* A ```sh block that runs `curl` is an example: exactly one `curl -si` command, and the
  very next fenced block must be an ```http block holding the expected answer: the status
  line, optional headers to check, a blank line and the body (JSON, or text lines).
  A ```sh block without `curl` is a set-up step (variables, files, the fake provider): it
  must exit 0 and has no expected answer.
* In the expected answer `…` marks what varies or is left out:
    "…"            any value;            "tok_…"  a string with that prefix (… matches any run
                                          of characters, anywhere in the string);
    …  (a member)  other object members may be present (otherwise members must be exactly
                   the ones shown);
    …  (an item)   any number of array items here (otherwise arrays match item for item);
    a body that is only …   the body is not checked; no body at all: the body must be empty.
  A text body is a list of lines that must appear in that order (a line `…` skips lines).
* `# → NAME=.path` lines in a ```sh block capture a value from its answer (`.a.b[0].c`, or
  `header:Location`) into the shell variable NAME for the blocks after it.

Before it runs a block the runner rewrites what differs between a newcomer's machine and the
test: the base URL http://127.0.0.1:8080, the token file .data/admin-token and the fake
provider's path build/tests/integration/fake_provider.

Usage (ctest runs the first form; see tests/docs/CMakeLists.txt):
  run_guide.py --bin BUILD/recallgate --fake BUILD/.../fake_provider [--guide docs/guide]
      needs DATABASE_URL (migrated); scripts/rg-launch mints an admin token of a fresh tenant
      docs-<random> and serves the binary on a free port; runs the guide, stops the server.
  run_guide.py --url http://127.0.0.1:8080 --token-file .data/admin-token --fake PATH
      runs the guide against a server that is already running (use a fresh tenant's token).

Exit status: 0 when every example passed; 1 when one failed (the page, the example's line and
what differed are printed), when a block has no expected answer, or when the server cannot be
reached. Nothing is ever skipped.
"""

import argparse
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

from guide_match import Answer, Expected, Failure, capture, check

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from fleet_proc import FleetError, Launched  # noqa: E402 (the fleet library: scripts/rg-launch)

GUIDE_URL = "http://127.0.0.1:8080"
GUIDE_TOKEN_FILE = ".data/admin-token"
GUIDE_FAKE = "build/tests/integration/fake_provider"
BLOCK_TIMEOUT = 60  # seconds a single block may take


# ---------------------------------------------------------------------------------------------
# Markdown: fenced blocks


class Block:
    def __init__(self, lang, text, line):
        self.lang = lang
        self.text = text
        self.line = line  # 1-based line of the opening fence


def fenced_blocks(path):
    blocks = []
    lang = None
    buf = []
    start = 0
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if fence is None:
                m = re.match(r"^(```+)\s*([A-Za-z0-9_+-]*)", line)
                if m:
                    fence, lang, buf, start = m.group(1), m.group(2).lower(), [], n
            elif line.strip() == fence:
                blocks.append(Block(lang, "\n".join(buf), start))
                fence = None
            elif line.startswith("```"):
                raise Failure(f"{path}:{n}: a fence inside the block opened at line {start} "
                              "(is that block closed?)")
            else:
                buf.append(line)
    if fence is not None:
        raise Failure(f"{path}:{start}: the fenced block is never closed")
    return blocks


def guide_pages(guide_dir):
    """The pages in the order the index links them; every page must be linked."""
    index = os.path.join(guide_dir, "README.md")
    with open(index, encoding="utf-8") as f:
        text = f.read()
    pages = []
    for m in re.finditer(r"\]\(([A-Za-z0-9_.-]+\.md)\)", text):
        if m.group(1) not in pages and m.group(1) != "README.md":
            pages.append(m.group(1))
    present = sorted(p for p in os.listdir(guide_dir) if p.endswith(".md") and p != "README.md")
    missing = [p for p in present if p not in pages]
    if missing:
        raise Failure(f"{index}: pages not linked from the index (they would not run): {missing}")
    for p in pages:
        if not os.path.isfile(os.path.join(guide_dir, p)):
            raise Failure(f"{index}: links {p}, which does not exist")
    return [index] + [os.path.join(guide_dir, p) for p in pages]


# ---------------------------------------------------------------------------------------------
# One bash session per page


class Shell:
    def __init__(self, cwd, work):
        self.work = work
        self.n = 0
        self.log = open(os.path.join(work, "bash.log"), "ab")
        self.proc = subprocess.Popen(["bash", "--noprofile", "--norc"], stdin=subprocess.PIPE,
                                     stdout=self.log, stderr=self.log, cwd=cwd,
                                     start_new_session=True)

    def run(self, script):
        self.n += 1
        base = os.path.join(self.work, f"b{self.n}")
        with open(base + ".sh", "w", encoding="utf-8") as f:
            f.write(script + "\n")
        cmd = (f"source {base}.sh >{base}.out 2>{base}.err </dev/null; "
               f"echo $? >{base}.rc.tmp; mv {base}.rc.tmp {base}.rc\n")
        self.proc.stdin.write(cmd.encode())
        self.proc.stdin.flush()
        deadline = time.time() + BLOCK_TIMEOUT
        while not os.path.exists(base + ".rc"):
            if self.proc.poll() is not None:
                raise Failure("the page's bash session ended (a block ran `exit`?)")
            if time.time() > deadline:
                raise Failure(f"the block did not finish within {BLOCK_TIMEOUT} s")
            time.sleep(0.02)
        with open(base + ".rc") as f:
            rc = int(f.read().strip() or "1")
        with open(base + ".out", "rb") as f:
            out = f.read()
        with open(base + ".err", "rb") as f:
            err = f.read().decode("utf-8", "replace")
        return rc, out, err

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)  # the session and what it started
        except ProcessLookupError:
            pass
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.close()


def shell_quote(s):
    return "'" + s.replace("'", "'\\''") + "'"


CAPTURE_RE = re.compile(r"^\s*#\s*(?:→|->)\s*([A-Za-z_][A-Za-z0-9_]*)=(\S+)\s*$")


def run_page(page, env, root, work, counts):
    rel = os.path.relpath(page, root)
    blocks = fenced_blocks(page)
    shell = Shell(root, tempfile.mkdtemp(prefix="page-", dir=work))
    failures = 0
    try:
        i = 0
        while i < len(blocks):
            b = blocks[i]
            where = f"{rel}:{b.line}"
            if b.lang == "http":
                raise Failure(f"{where}: an ```http block that follows no ```sh example")
            if b.lang not in ("sh", "bash", "shell"):
                i += 1
                continue
            script = b.text
            for old, new in env["rewrite"]:
                script = script.replace(old, new)
            curls = re.findall(r"(?:^|[\s;|&(])curl\s", b.text)
            captures = [CAPTURE_RE.match(l) for l in b.text.split("\n")]
            captures = [m for m in captures if m]
            if not curls:
                if captures:
                    raise Failure(f"{where}: a capture line in a block without curl")
                rc, out, err = shell.run(script)
                counts["setup"] += 1
                if rc != 0:
                    raise Failure(f"{where}: the set-up block exited {rc}: {err.strip()[-500:]}")
                i += 1
                continue
            if len(curls) != 1:
                raise Failure(f"{where}: an example runs exactly one curl (this one runs {len(curls)})")
            if not re.search(r"\bcurl\s+-si\b", b.text):
                raise Failure(f"{where}: an example runs `curl -si` (the status line and headers are part of the answer)")
            nxt = blocks[i + 1] if i + 1 < len(blocks) else None
            if nxt is None or nxt.lang != "http":
                raise Failure(f"{where}: the example has no expected answer (an ```http block right after it)")
            exp = Expected(nxt.text, f"{rel}:{nxt.line}")
            rc, out, err = shell.run(script)
            counts["examples"] += 1
            if rc != 0 and not out:
                raise Failure(f"{where}: curl exited {rc} without an answer (is the server reachable?): {err.strip()[-300:]}")
            try:
                ans = Answer(out)
            except Failure as e:
                raise Failure(f"{where}: {e}")
            diffs = check(exp, ans)
            if diffs:
                failures += 1
                print(f"FAIL {where}: the answer differs from {rel}:{nxt.line}", flush=True)
                for d in diffs:
                    print(f"  {d}")
                print(f"  got: {ans.status_line}\n  {ans.body[:1500]}")
            for m in captures:
                try:
                    val = capture(m.group(2), ans)
                except Failure as e:
                    raise Failure(f"{where}: {e}")
                rc, _, err = shell.run(f"{m.group(1)}={shell_quote(val)}")
                if rc != 0:
                    raise Failure(f"{where}: could not set {m.group(1)}: {err}")
            i += 2
    finally:
        shell.close()
    return failures


# ---------------------------------------------------------------------------------------------
# The server


def get(url, timeout=2):
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code


def start_server(binary, work, tenant):
    """scripts/rg-launch: the admin token of a fresh tenant, and the binary served on a free
    port until /readyz answers 200."""
    try:
        return Launched(binary, ["--ready", "/readyz", "--token", f"admin:{tenant}:admin"],
                        log_path=os.path.join(work, "server.log"))
    except FleetError as e:
        raise Failure(str(e))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    root_default = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    ap.add_argument("--root", default=root_default, help="the repository (working directory of the examples)")
    ap.add_argument("--guide", help="the guide's directory (default ROOT/docs/guide)")
    ap.add_argument("--bin", help="the recallgate binary to serve (needs DATABASE_URL)")
    ap.add_argument("--url", help="a running server instead of --bin")
    ap.add_argument("--token-file", help="with --url: the admin token of a fresh tenant")
    ap.add_argument("--fake", required=True, help="the fake provider binary")
    ap.add_argument("--keep", action="store_true", help="keep the work directory")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    guide = os.path.abspath(args.guide or os.path.join(root, "docs", "guide"))
    if not os.access(args.fake, os.X_OK):
        print(f"docs_guide: FAIL: the fake provider {args.fake} is not an executable", file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="rg-docs-")
    server = None
    counts = {"examples": 0, "setup": 0}
    failures = 0
    try:
        if args.url:
            if not args.token_file:
                raise Failure("--url needs --token-file")
            url, token_file = args.url.rstrip("/"), os.path.abspath(args.token_file)
        else:
            if not args.bin or not os.environ.get("DATABASE_URL"):
                raise Failure("--bin and DATABASE_URL (a migrated database) are required")
            tenant = "docs-" + secrets.token_hex(6)
            server = start_server(os.path.abspath(args.bin), work, tenant)
            url = server.url
            token_file = os.path.join(work, "admin-token")
            with open(token_file, "w") as f:
                f.write(server.tokens["admin"] + "\n")
            print(f"docs_guide: tenant {tenant}, server {url}", flush=True)
        try:
            get(url + "/healthz")
        except (OSError, urllib.error.URLError) as e:
            raise Failure(f"cannot reach the server at {url}: {e}")
        env = {"rewrite": [(GUIDE_URL, url), (GUIDE_TOKEN_FILE, token_file),
                           (GUIDE_FAKE, os.path.abspath(args.fake))]}
        for page in guide_pages(guide):
            n0 = counts["examples"]
            try:
                f = run_page(page, env, root, work, counts)
            except Failure as e:  # the rest of this page cannot run; the next pages can
                print(f"docs_guide: FAIL: {e}", flush=True)
                f = 1
            failures += f
            print(f"docs_guide: {os.path.relpath(page, root)}: {counts['examples'] - n0} examples, "
                  f"{f} failed", flush=True)
    except Failure as e:
        print(f"docs_guide: FAIL: {e}", flush=True)
        failures += 1
    finally:
        if server is not None:
            rc = server.stop(15)
            if rc != 0:
                print(f"docs_guide: FAIL: the server exited {rc} (logs in {work})", flush=True)
                failures += 1
                args.keep = True
        if failures:
            args.keep = True
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        else:
            print(f"docs_guide: work directory kept: {work}")
    print(f"docs_guide: {counts['examples']} examples and {counts['setup']} set-up blocks run, "
          f"{failures} failure(s)")
    if counts["examples"] == 0 and not failures:
        print("docs_guide: FAIL: no example ran")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
