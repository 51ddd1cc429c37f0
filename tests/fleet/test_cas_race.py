#!/usr/bin/env python3
"""Compare-and-swap and operation-id races across two instances (openapi/openapi.yaml
'Conventions', 'Preferences'; docs/fleet.md).

Two clients, one per instance (directly, not through nginx, so that each round really spans
both processes), are released together by a barrier every round:
  * memory mode, ROUNDS rounds: both PUT the same expected_revision (every other round with
    the matching If-Match too). Exactly one 200; the other 409 stale_revision (412
    precondition_failed with If-Match) naming the winner's revision. Afterwards the thread's
    audit has exactly one record per win, carrying the winner's request id, revisions
    1..ROUNDS in order, and its hash chain verifies;
  * a preference journal, PREF_ROUNDS rounds: both PUT the same key at the same
    expected_revision, in even rounds with the same operation_id and arguments (one 201
    applied, the other 200 replayed with the same receipt: a retried uncertain write is
    safe), in odd rounds with different operation ids (one 201, the other 409
    stale_revision). One audit record per 201.
"""
import threading

import fleet

ROUNDS = 50
PREF_ROUNDS = 30


class Pair:
    """Two clients, one per instance, sending one request each at the same moment."""

    def __init__(self, f):
        self.clients = [fleet.Client(i.url) for i in f.instances]
        self.go = threading.Barrier(3)
        self.done = threading.Barrier(3)
        self.jobs = [None, None]
        self.results = [None, None]
        self.stop = False
        self.threads = [threading.Thread(target=self._run, args=(k,), daemon=True)
                        for k in (0, 1)]
        for t in self.threads:
            t.start()

    def _run(self, k):
        while True:
            self.go.wait()
            if self.stop:
                return
            self.results[k] = self.clients[k].request(*self.jobs[k])
            self.done.wait()

    def race(self, job0, job1):
        self.jobs = [job0, job1]
        self.go.wait()
        self.done.wait(timeout=60)
        return self.results[:]

    def close(self):
        self.stop = True
        self.go.wait()
        for c in self.clients:
            c.close()


def one_winner(results, win_status, lose, what):
    """(winner index, winner, loser); fails unless exactly one has win_status and the other
    the (status, code) in lose."""
    wins = [k for k, r in enumerate(results) if r.status == win_status]
    if len(wins) != 1:
        fleet.fail(f"{what}: {len(wins)} winners: {[r.label() for r in results]}")
    k = wins[0]
    loser = results[1 - k]
    if (loser.status, loser.code) not in lose:
        fleet.fail(f"{what}: the loser answered {loser.label()} (expected one of {lose})")
    return k, results[k], loser


def mode_rounds(f, token, pair, tag):
    tid = f"cas-{tag}"
    path = f"/v1/threads/{tid}/memory-mode"
    winners = []  # request ids
    wins_by = [0, 0]
    for n in range(ROUNDS):
        rev = n
        body = {"expected_revision": rev, "mode": "disabled" if n % 2 == 0 else "enabled"}
        jobs = []
        for k in (0, 1):
            headers = {"X-Request-Id": f"cas-{tag}-r{n}-c{k}"}
            if n % 2:
                headers["If-Match"] = f'"{rev}"'
            jobs.append(("PUT", path, token, body, headers))
        lose = {(412, "precondition_failed")} if n % 2 else {(409, "stale_revision")}
        k, win, loser = one_winner(pair.race(*jobs), 200, lose, f"memory-mode round {n}")
        if win.json["revision"] != rev + 1 or loser.json.get("current_revision") != rev + 1:
            fleet.fail(f"round {n}: winner revision {win.json['revision']}, loser's "
                       f"current_revision {loser.json.get('current_revision')} (want {rev + 1})")
        winners.append(f"cas-{tag}-r{n}-c{k}")
        wins_by[k] += 1
    # One audit record per win, in order, carrying the winner's request id.
    c = fleet.Client(f.instances[0].url)
    r = c.request("GET", f"/v1/audit?resource_type=thread&resource_id={tid}&limit=200", token)
    if r.status != 200:
        fleet.fail(f"GET /v1/audit answered {r.label()}")
    items = r.json["items"]
    got = [(i["revision_before"], i["revision_after"], i["request_id"]) for i in items]
    want = [(n, n + 1, winners[n]) for n in range(ROUNDS)]
    if got != want:
        fleet.fail(f"audit of {tid}: {len(items)} records, want one per win "
                   f"({ROUNDS}); first difference: "
                   f"{next((g, w) for g, w in zip(got + [None] * ROUNDS, want) if g != w)}")
    v = c.request("GET", f"/v1/audit/verify?resource_type=thread&resource_id={tid}", token)
    c.close()
    if v.status != 200 or not v.json["ok"] or v.json["checked"] != ROUNDS:
        fleet.fail(f"audit/verify of {tid}: {v.label()} {v.json}")
    fleet.log(f"memory mode: {ROUNDS} rounds, one winner each (instance 1 won {wins_by[0]}, "
              f"instance 2 {wins_by[1]}), {len(items)} audit records, chain verified")


def pref_rounds(f, token, pair, tag):
    base = f"/v1/goals/g-{tag}/agents/a/preferences"
    rev = None
    applied = 0
    for n in range(PREF_ROUNDS):
        same = n % 2 == 0
        jobs = []
        for k in (0, 1):
            body = {"statement": f"statement {n}", "source_ref": f"ref-{n}",
                    "source_quote": f"quote {n}", "expected_revision": rev,
                    "operation_id": f"op-{tag}-{n}" if same else f"op-{tag}-{n}-c{k}",
                    "execute": True}
            jobs.append(("PUT", f"{base}/k{n % 5}", token, body))
        results = pair.race(*jobs)
        lose = {(200, None)} if same else {(409, "stale_revision")}
        k, win, loser = one_winner(results, 201, lose, f"preference round {n}")
        if win.json["status"] != "applied":
            fleet.fail(f"preference round {n}: the 201 says {win.json['status']}")
        if same and (loser.json["status"] != "replayed" or
                     loser.json["receipt"] != win.json["receipt"]):
            fleet.fail(f"preference round {n}: the same operation twice gave {loser.json} "
                       f"after {win.json}")
        applied += 1
        rev = win.json["receipt"]["revision_after"]
    c = fleet.Client(f.instances[1].url)
    r = c.request("GET", "/v1/audit?resource_type=preference_journal&limit=200", token)
    c.close()
    if r.status != 200:
        fleet.fail(f"GET /v1/audit answered {r.label()}")
    if len(r.json["items"]) != applied:
        fleet.fail(f"{len(r.json['items'])} preference audit records for {applied} applied "
                   "operations")
    fleet.log(f"preferences: {PREF_ROUNDS} rounds, one 201 each; same operation id: the other "
              f"200 replayed; different: 409; {applied} audit records")


def test():
    args = fleet.parse_args(__doc__)
    with fleet.Fleet(args) as f:
        token = f.token("memory:read,memory:admin,preferences:read,preferences:write,"
                        "audit:read")
        tag = f"{fleet.os.getpid()}"
        pair = Pair(f)
        try:
            mode_rounds(f, token, pair, tag)
            pref_rounds(f, token, pair, tag)
        finally:
            pair.close()


if __name__ == "__main__":
    fleet.main(test)
