"""Load with a ledger of acknowledged writes (fleet.Writers), and how many requests an
instance served. fleet.py re-exports these; tests import fleet, not this module."""

import os
import random
import time

from fleet_proc import Client, fail


class Writers:
    """Threads that write through one URL until stop(), keeping a ledger of what was
    acknowledged (2xx) and of every answer that was not.

    kinds: a list with one entry per thread:
      "mode"    PUT /v1/threads/{own thread}/memory-mode, a compare-and-swap on the revision
                that the last answer named (after a failure it reads the revision back);
                the ledger has (thread_id, revision) per acknowledged write;
      "source"  POST /v1/memory/sources with unique content (not idempotent: no operation id),
                the ledger has the source_id per acknowledged write.
    pace_s: a pause between requests, so that the suite's other tests (ctest -j2) keep a core.
    keyed: the kinds ("mode", "source") whose every write carries an Idempotency-Key of its own, and a write that was not
      answered 2xx is sent again with the same key (after its Retry-After) until it is, as a
      client that must not lose or repeat a write does (openapi/openapi.yaml "IdempotencyKey").
      stop() lets a write being retried finish (up to FINISH_S); unfinished counts those that
      still had no 2xx.
    """

    def __init__(self, url, token, kinds, pace_s=0.0, timeout=30.0, keyed=()):
        import threading
        self.url = url
        self.token = token
        self.kinds = kinds
        self.pace_s = pace_s
        self.timeout = timeout
        self.keyed = keyed
        self.unfinished = 0
        self.finish_by = None
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.acked_modes = []    # (thread_id, revision)
        self.acked_sources = []  # source_id
        self.answers = []        # (t_monotonic_sent, elapsed_s, label, method) of every answer
        self.retry_after = {}    # {Retry-After value (None: absent): count} of the 503s
        self.tag = f"{os.getpid()}-{random.getrandbits(32):08x}"
        self.threads = [threading.Thread(target=self._run, args=(i, k), daemon=True)
                        for i, k in enumerate(kinds)]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    FINISH_S = 15

    def stop(self):
        self.finish_by = time.monotonic() + self.FINISH_S
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=self.timeout + self.FINISH_S + 5)
            if t.is_alive():
                fail("a writer did not stop: a request hangs")

    def _note(self, t0, r, method):
        with self.lock:
            self.answers.append((t0, r.elapsed, r.label(), method))
            if r.status == 503:
                v = r.header("Retry-After")
                self.retry_after[v] = self.retry_after.get(v, 0) + 1

    def _run(self, i, kind):
        c = Client(self.url, timeout=self.timeout)
        try:
            if kind == "mode":
                self._modes(c, f"fleet-{self.tag}-w{i}")
            else:
                self._sources(c, i)
        finally:
            c.close()

    def _write(self, c, method, path, body, key):
        """One write; with a key, sent again until it is answered 2xx or stop() comes."""
        headers = {"Idempotency-Key": key} if key else None
        while True:
            t0 = time.monotonic()
            r = c.request(method, path, self.token, body, headers)
            self._note(t0, r, method)
            if not key or r.status // 100 == 2:
                return r
            if self.stopping.is_set() and time.monotonic() > self.finish_by:
                with self.lock:
                    self.unfinished += 1
                return r
            retry_after = r.header("Retry-After")
            time.sleep(min(float(retry_after), 1.0) if retry_after else 0.1)

    def _key(self, kind, i, n):
        return f"{self.tag}-{kind}-{i}-{n}" if kind in self.keyed else None

    def _modes(self, c, thread_id):
        path = f"/v1/threads/{thread_id}/memory-mode"
        rev, n = 0, 0
        while not self.stopping.is_set():
            n += 1
            body = {"expected_revision": rev, "mode": "disabled" if n % 2 else "enabled"}
            r = self._write(c, "PUT", path, body, self._key("mode", thread_id, n))
            if r.status == 200:
                rev = r.json["revision"]
                with self.lock:
                    self.acked_modes.append((thread_id, rev))
            else:
                # Unknown whether it was applied: read the revision back before going on.
                while not self.stopping.is_set():
                    t0 = time.monotonic()
                    g = c.request("GET", path, self.token)
                    self._note(t0, g, "GET")
                    if g.status == 200:
                        rev = g.json["revision"]
                        break
                    time.sleep(0.05)
            if self.pace_s:
                time.sleep(self.pace_s)

    def _sources(self, c, i):
        n = 0
        while not self.stopping.is_set():
            n += 1
            body = {"source_kind": "note", "content": f"fleet ledger {self.tag} w{i} n{n}"}
            r = self._write(c, "POST", "/v1/memory/sources", body, self._key("source", i, n))
            if r.status == 201:
                with self.lock:
                    self.acked_sources.append(r.json["source_id"])
            if self.pace_s:
                time.sleep(self.pace_s)

    def failures(self, since=None, until=None, answered=False):
        """{label: count} of the answers that were not 2xx, of the requests sent (or, with
        answered, answered) within [since, until) on time.monotonic()'s clock."""
        out = {}
        with self.lock:
            for t0, elapsed, label, _ in self.answers:
                t = t0 + elapsed if answered else t0
                if since is not None and t < since or until is not None and t >= until:
                    continue
                if not label[:1] == "2":
                    out[label] = out.get(label, 0) + 1
        return out

    def lost(self, f):
        """The acknowledged writes that the database does not have (checked with psql)."""
        lost = []
        if self.acked_modes:
            rows = f.psql("select resource_id || ' ' || revision_after from audit_log "
                          "where resource_type = 'thread' and action = "
                          "'thread.memory_mode.updated' and resource_id like "
                          f"'fleet-{self.tag}-%'")
            have = {r[0] for r in rows}
            lost += [f"{t} revision {v}" for t, v in self.acked_modes if f"{t} {v}" not in have]
        if self.acked_sources:
            rows = f.psql("select record_id from memory_records where content like "
                          f"'fleet ledger {self.tag} %'")
            have = {r[0] for r in rows}
            lost += [s for s in self.acked_sources if s not in have]
        return lost

    def check_database_matches(self, f):
        """Fails unless the database holds exactly the acknowledged writes: none lost, none
        committed without its client hearing 2xx, none twice."""
        audit = int(f.psql("select count(*) from audit_log where resource_type = 'thread' "
                           f"and resource_id like 'fleet-{self.tag}-%'")[0][0])
        sources = int(f.psql("select count(*) from memory_records where content like "
                             f"'fleet ledger {self.tag} %'")[0][0])
        if audit != len(self.acked_modes) or sources != len(self.acked_sources):
            fail(f"the database holds {audit} memory-mode writes and {sources} sources, the "
                 f"ledger {len(self.acked_modes)} and {len(self.acked_sources)}: a write "
                 "committed without its client hearing 2xx, or twice")

    def summary(self):
        with self.lock:
            n = len(self.answers)
        return (f"{n} answers, {len(self.acked_modes)} memory-mode writes and "
                f"{len(self.acked_sources)} sources acknowledged")


def requests_served(inst, *labels):
    """Requests this process of the instance has answered (its counters start at 0) whose
    series holds any of labels (e.g. 'method="PUT"', 'route="/mcp"')."""
    n = 0
    for line in inst.metrics().splitlines():
        if line.startswith("recallgate_http_requests_total{") and any(
                label in line for label in labels):
            n += int(float(line.split()[-1]))
    return n


def writes_served(inst):
    return requests_served(inst, 'method="PUT"', 'method="POST"')


def wait_served(inst, timeout=10):
    """Until a restarted instance answers writes again: the gateway took it back (nginx
    keeps a failed instance out for fail_timeout, 2 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if writes_served(inst) > 0:
            return
        time.sleep(0.1)
    fail(f"{inst.name} took no writes within {timeout} s of being ready again")
