#!/usr/bin/env python3
"""Reads on a hot standby (docs/scaling.md): the fleet's cluster gets a streaming standby
(pg_basebackup) whose replay is delayed 50 ms (recovery_min_apply_delay), and both instances
read there (RECALLGATE_READ_DATABASE_URL). Through nginx:
  * every 2xx write carries Recallgate-Commit-LSN; a GET does not, but for a recorded
    content read (below);
  * read your writes: PAIRS write-then-read pairs that send the LSN back as Recallgate-Min-LSN
    all see their write, most served by the standby; the same pairs without it read stale
    (the control: a server that ignored the header would fail the first check);
  * Recallgate-Min-LSN at its edges: a malformed one is 422 naming the header and changes
    nothing; one the standby never reaches is served by the primary after the 100 ms wait;
  * MCP: a writing tool gives _meta io.recallgate/commit-lsn, and a read tool that sends it
    back as _meta io.recallgate/min-lsn sees the write; a malformed one is -32602;
  * a content read never goes to the standby (it records a disclosure, and must not deliver
    what the primary already revoked); its answer carries its disclosure's commit LSN, so a
    disclosure list that sends it back finds the read on the delayed standby; a keyed MCP
    source_content (a request that also counts as a write) carries exactly one;
  * lag: with replay paused the standby is skipped once it trails by more than
    RECALLGATE_READ_MAX_LAG_MS, and its reads go to the primary (fresh); resumed, it serves again;
  * unreachable: the standby stopped, reads are served by the primary; started, it serves again;
  * a standby as the writer (DATABASE_URL naming it: a wrong URL, or a demoted primary): a
    write is 503 database_unavailable with Retry-After: 1, not 500, and writes nothing.
"""
import time

import fleet

PAIRS = 300
MAX_LAG_MS = 400
READ_SCOPES = "memory:read,memory:write,memory:admin,audit:read"


def standby_metrics(f):
    """Summed over the instances: reads the standby served, fallbacks by reason, and up."""
    total = {"reads": 0.0, "none_usable": 0.0, "unreachable": 0.0, "min_lsn": 0.0, "up": 0.0}
    name = f"127.0.0.1:{f.standby.port}"
    for inst in f.instances:
        text = inst.metrics()
        total["reads"] += fleet.metric(text, f'recallgate_standby_reads_total{{standby="{name}"}}') or 0
        total["up"] += fleet.metric(text, f'recallgate_standby_up{{standby="{name}"}}') or 0
        for why in ("none_usable", "unreachable", "min_lsn"):
            total[why] += fleet.metric(
                text, f'recallgate_standby_fallbacks_total{{reason="{why}"}}') or 0
    return total


def wait_up(f, want, timeout=10):
    deadline = time.monotonic() + timeout
    while standby_metrics(f)["up"] != want * len(f.instances):
        if time.monotonic() > deadline:
            fleet.fail(f"recallgate_standby_up did not become {want} on every instance")
        time.sleep(0.05)


class Thread:
    """A thread's memory mode, written and read through one client."""

    def __init__(self, c, token, thread_id):
        self.c, self.token, self.path = c, token, f"/v1/threads/{thread_id}/memory-mode"
        r = c.request("GET", self.path, token)
        if r.status != 200:
            fleet.fail(f"GET memory-mode answered {r.label()}")
        self.revision = r.json["revision"]

    def write(self):
        mode = "disabled" if self.revision % 2 == 0 else "enabled"
        r = self.c.request("PUT", self.path, self.token,
                           {"expected_revision": self.revision, "mode": mode})
        if r.status != 200:
            fleet.fail(f"PUT memory-mode answered {r.label()}")
        self.revision = r.json["revision"]
        lsn = r.header("Recallgate-Commit-LSN")
        if not lsn:
            fleet.fail("a 200 PUT carries no Recallgate-Commit-LSN")
        return lsn

    def read(self, lsn=None):
        r = self.c.request("GET", self.path, self.token,
                           headers={"Recallgate-Min-LSN": lsn} if lsn else None)
        if r.status != 200:
            fleet.fail(f"GET memory-mode answered {r.label()}")
        if r.header("Recallgate-Commit-LSN"):
            fleet.fail("a GET carries Recallgate-Commit-LSN")
        return r.json["revision"] == self.revision


def pairs(t, n, send_lsn):
    """n writes, each read back (with its LSN or without): how many reads were stale."""
    stale = 0
    for _ in range(n):
        lsn = t.write()
        stale += 0 if t.read(lsn if send_lsn else None) else 1
    return stale


def check_ryw(f, c, token):
    t = Thread(c, token, "ryw")
    before = standby_metrics(f)
    stale = pairs(t, PAIRS, True)
    after = standby_metrics(f)
    served = after["reads"] - before["reads"]
    fleet.log(f"read your writes: {PAIRS} pairs with Recallgate-Min-LSN, {stale} stale, "
              f"{served:.0f} served by the standby, {after['min_lsn'] - before['min_lsn']:.0f} "
              "by the primary after the wait")
    if stale:
        fleet.fail(f"{stale} of {PAIRS} reads with Recallgate-Min-LSN missed their write")
    if served < PAIRS / 2:
        fleet.fail(f"the standby served only {served:.0f} of {PAIRS} reads")
    control = pairs(t, PAIRS // 3, False)
    fleet.log(f"control: {PAIRS // 3} pairs without the header, {control} stale")
    if control == 0:
        fleet.fail("without Recallgate-Min-LSN no read was stale: the test could not fail")


def check_edges(f, c, token):
    t = Thread(c, token, "edges")
    for bad in ("0/", "1/2/3", "0/123456789", "x"):
        r = c.request("GET", t.path, token, headers={"Recallgate-Min-LSN": bad})
        fields = [e.get("field") for e in (r.json or {}).get("errors", [])]
        if r.status != 422 or r.code != "validation_failed" or fields != ["Recallgate-Min-LSN"]:
            fleet.fail(f"Recallgate-Min-LSN {bad!r} answered {r.label()} {fields}")
    r = c.request("PUT", t.path, token, {"expected_revision": t.revision, "mode": "disabled"},
                  headers={"Recallgate-Min-LSN": "0/"})
    if r.status != 422 or not t.read():
        fleet.fail(f"a PUT with a malformed Recallgate-Min-LSN answered {r.label()} or wrote")
    before = standby_metrics(f)
    t.write()
    t0 = time.monotonic()
    if not t.read("FFFFFFFF/FFFFFFFF"):
        fleet.fail("a read the standby cannot serve in time was stale")
    waited = time.monotonic() - t0
    if standby_metrics(f)["min_lsn"] - before["min_lsn"] != 1:
        fleet.fail("an LSN no standby has replayed did not go to the primary")
    fleet.log(f"Recallgate-Min-LSN: malformed ones 422; FFFFFFFF/FFFFFFFF served by the primary "
              f"in {waited * 1000:.0f} ms")


def mcp(c, token, name, arguments, meta=None):
    params = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    r = c.request("POST", "/mcp", token,
                  {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params},
                  headers={"Accept": "application/json, text/event-stream",
                           "MCP-Protocol-Version": "2025-11-25"})
    if r.status != 200 or not isinstance(r.json, dict):
        fleet.fail(f"/mcp {name} answered {r.label()}")
    return r.json


def check_mcp(c, token):
    stale = 0
    rev = mcp(c, token, "memory_mode_get", {"thread_id": "mcp"})["result"]["structuredContent"]["revision"]
    for i in range(30):
        res = mcp(c, token, "memory_mode_set", {"thread_id": "mcp", "expected_revision": rev,
                                                "mode": ["disabled", "enabled"][i % 2]})["result"]
        if res.get("isError"):
            fleet.fail(f"memory_mode_set failed: {res}")
        rev = res["structuredContent"]["revision"]
        lsn = (res.get("_meta") or {}).get("io.recallgate/commit-lsn")
        if not lsn:
            fleet.fail(f"a writing tool's result has no _meta io.recallgate/commit-lsn: {res}")
        got = mcp(c, token, "memory_mode_get", {"thread_id": "mcp"},
                  {"io.recallgate/min-lsn": lsn})["result"]
        if "_meta" in got and "io.recallgate/commit-lsn" in got["_meta"]:
            fleet.fail("a reading tool's result carries a commit LSN")
        stale += got["structuredContent"]["revision"] != rev
    if stale:
        fleet.fail(f"{stale} of 30 MCP reads with _meta io.recallgate/min-lsn missed their write")
    err = mcp(c, token, "memory_mode_get", {"thread_id": "mcp"}, {"io.recallgate/min-lsn": "0/"})
    if (err.get("error") or {}).get("code") != -32602:
        fleet.fail(f"a malformed _meta io.recallgate/min-lsn answered {err}")
    fleet.log("MCP: 30 write-then-read tool pairs through _meta, 0 stale; malformed: -32602")


def check_content_on_primary(f, c, token):
    r = c.request("POST", "/v1/memory/sources", token,
                  {"source_kind": "note", "content": "standby test"})
    if r.status != 201 or not r.header("Recallgate-Commit-LSN"):
        fleet.fail(f"a source create answered {r.label()} without a commit LSN")
    path = f"/v1/memory/sources/{r.json['source_id']}"
    lsn = r.header("Recallgate-Commit-LSN")
    before = standby_metrics(f)["reads"]
    r = c.request("GET", path + "/content", token, headers={"Recallgate-Min-LSN": lsn})
    if r.status != 200 or standby_metrics(f)["reads"] != before:
        fleet.fail(f"a content read answered {r.label()} or was served by the standby")
    read_lsn, read_id = r.header("Recallgate-Commit-LSN"), r.header("X-Request-Id")
    if not read_lsn:
        fleet.fail("a recorded content read carries no Recallgate-Commit-LSN")
    r = c.request("GET", f"/v1/disclosures?record_id={path.rsplit('/', 1)[1]}", token,
                  headers={"Recallgate-Min-LSN": read_lsn})
    seen = [d["request_id"] for d in (r.json or {}).get("items", [])]
    if r.status != 200 or seen != [read_id] or standby_metrics(f)["reads"] != before + 1:
        fleet.fail(f"the disclosure list after a content read answered {r.label()} {seen}, "
                   "or was not served by the standby")
    before += 1
    r = c.request("POST", "/mcp", token,
                  {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                   "params": {"name": "source_content",
                              "arguments": {"source_id": path.rsplit("/", 1)[1]}}},
                  headers={"Accept": "application/json, text/event-stream",
                           "MCP-Protocol-Version": "2025-11-25",
                           "Idempotency-Key": f"content-{time.monotonic_ns()}"})
    lsns = [v for k, v in r.headers if k.lower() == "recallgate-commit-lsn"]
    if r.status != 200 or (r.json or {}).get("result", {}).get("isError") or len(lsns) != 1:
        fleet.fail(f"a keyed source_content answered {r.label()} with commit LSNs {lsns}")
    r = c.request("GET", path, token, headers={"Recallgate-Min-LSN": lsn})
    if r.status != 200 or standby_metrics(f)["reads"] != before + 1:
        fleet.fail(f"a source GET answered {r.label()} or was not served by the standby")


def check_lag(f, c, token):
    t = Thread(c, token, "lag")
    f.standby.psql("select pg_wal_replay_pause()")
    t0 = time.monotonic()
    while standby_metrics(f)["up"] > 0:
        t.write()
        if time.monotonic() - t0 > 10:
            fleet.fail("a standby whose replay is paused was still used after 10 s")
        time.sleep(0.02)
    skipped_after = time.monotonic() - t0
    before = standby_metrics(f)["none_usable"]
    stale = pairs(t, 20, False)
    if stale or standby_metrics(f)["none_usable"] - before < 20:
        fleet.fail(f"with the standby lagging, {stale} of 20 reads were stale or not sent "
                   "to the primary")
    f.standby.psql("select pg_wal_replay_resume()")
    wait_up(f, 1)
    fleet.log(f"lag: replay paused, standby skipped after {skipped_after:.2f} s "
              f"(RECALLGATE_READ_MAX_LAG_MS={MAX_LAG_MS}); 20 reads fresh from the primary; "
              "resumed, up again")


def check_unreachable(f, c, token):
    t = Thread(c, token, "down")
    f.standby.stop()
    wait_up(f, 0)
    stale = pairs(t, 20, True)
    if stale:
        fleet.fail(f"with the standby down, {stale} of 20 reads were stale")
    f.standby.start()
    wait_up(f, 1, timeout=20)
    before = standby_metrics(f)["reads"]
    if not t.read(t.write()) or standby_metrics(f)["reads"] <= before:
        fleet.fail("the restarted standby serves no read")
    fleet.log("unreachable: standby stopped, 20 reads from the primary; started, serving again")


def check_standby_as_writer(f, token):
    env = dict(f.db_env)
    env["DATABASE_URL"] = f.standby.url(f.pg.url.rsplit("/", 1)[1])
    env.pop("RECALLGATE_READ_DATABASE_URL", None)
    inst = fleet.Instance(f, 9, env)
    inst.start()
    try:
        c = fleet.Client(inst.url)
        before = f.psql("select count(*) from memory_records")
        r = c.request("POST", "/v1/memory/sources", token,
                      {"source_kind": "note", "content": "to a standby"})
        if (r.status != 503 or r.code != "database_unavailable"
                or r.header("Retry-After") != "1"):
            fleet.fail(f"a write to a standby answered {r.label()}, "
                       f"Retry-After {r.header('Retry-After')!r}")
        if f.psql("select count(*) from memory_records") != before:
            fleet.fail("a write refused by the standby changed the primary")
        c.close()
    finally:
        inst.stop()
    fleet.log("a standby as the writer: 503 database_unavailable with Retry-After: 1")


def test():
    args = fleet.parse_args(__doc__)
    env = {"RECALLGATE_READ_MAX_LAG_MS": str(MAX_LAG_MS)}
    with fleet.Fleet(args, instance_env=env, standby=True) as f:
        f.standby.psql("alter system set recovery_min_apply_delay = '50ms'")
        f.standby.psql("select pg_reload_conf()")
        token = f.token(READ_SCOPES)
        c = fleet.Client(f.gateway_url)
        wait_up(f, 1)
        check_ryw(f, c, token)
        check_edges(f, c, token)
        check_mcp(c, token)
        check_content_on_primary(f, c, token)
        check_lag(f, c, token)
        check_unreachable(f, c, token)
        check_standby_as_writer(f, token)


if __name__ == "__main__":
    fleet.main(test)
