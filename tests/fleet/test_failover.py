#!/usr/bin/env python3
"""Failover with pg_auto_failover under write load (docs/scaling.md).

A monitor, a primary and a synchronous standby (tests/fleet/fleet_paf.py), two instances with
the libpq multi-host DATABASE_URL (target_session_attrs=read-write) and the standby as
RECALLGATE_READ_DATABASE_URL, behind nginx. Two event consumers read GET /v1/events through
the gateway for the whole test, resuming with Last-Event-ID when a stream drops.

 1. Read your writes, before any fault: with recovery_min_apply_delay = 50ms on the standby,
    READ_PAIRS memory-mode PUTs each followed by a GET with the PUT's Recallgate-Commit-LSN as
    Recallgate-Min-LSN: every read shows its write, and the standby served most of them
    (recallgate_standby_reads_total). Control: the same pairs without the header show at
    least one stale read (a server that ignores the header fails).
 2. Failover: compare-and-swap writers and source creates through nginx; SIGKILL to the
    primary's keeper and PostgreSQL; the monitor promotes the standby. Every answer is 2xx or
    503 database_unavailable with Retry-After: 1; writes are acknowledged again within
    BACK_WITHIN_S of the kill; no acknowledged write is lost; both instances are ready again
    with the same pids (nothing in recallgate is restarted).
 3. Rejoin and failback: the old primary's keeper starts again and rejoins as the standby
    (pg_rewind); `pg_autoctl perform switchover` makes it the primary again, under writes.
    Same checks, and the writes go on after it.
 4. Each consumer saw every one of the tenant's audit records exactly once, in order.
A phase that fails is reported, the others still run, and the test fails at the end.
"""
import http.client
import socket
import threading
import time

import fleet
import fleet_events
import fleet_paf

WRITERS = ["mode"] * 4 + ["source"] * 2
PACE_S = 0.01             # a core stays free for the formation (2-core CI)
ACQUIRE_TIMEOUT_MS = 2000
BACK_WITHIN_S = 15        # kill -> first acknowledged write (the monitor takes ~5 s)
SETTLED_S = 2             # this long after the first write goes through, none fails
READ_PAIRS = 1000
READ_THREADS = 10
APPLY_DELAY = "50ms"
CHECKS = "memory:read,memory:write,memory:admin,audit:read,events:read"


# ---------------------------------------------------------------------------------------
# Event consumers (through the gateway, resuming with Last-Event-ID)


class Consumer:
    def __init__(self, gateway, token, start):
        self.gateway, self.token, self.last = gateway, token, start
        self.seen, self.errors, self.refused, self.reconnects = [], [], [], 0
        self.stream = None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while not self.stop.is_set():
            s = None
            try:
                s = self.stream = fleet_events.Stream(self.gateway, self.token,
                                                      last_id=self.last, timeout=5)
                if s.status != 200:
                    self.refused.append(s.status)
                    time.sleep(0.1)
                    continue
                while not self.stop.is_set():
                    ev = s.next_event()
                    if ev is None:
                        break
                    seq, _, data = ev
                    if data.get("seq") != seq:
                        self.errors.append(f"id {seq} does not match its data")
                    self.seen.append(seq)
                    self.last = seq
            except (OSError, http.client.HTTPException, ValueError):
                pass  # the stream dropped (or went quiet): resume from the last id
            finally:
                if s is not None:
                    s.close()
            self.reconnects += 1

    def check(self, i, expected):
        self.stop.set()
        sock = self.stream and self.stream.conn.sock
        if sock is not None:  # ends a read that waits for the next event (EOF)
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(timeout=15)
        seen = self.seen
        if self.errors:
            return f"consumer {i}: {self.errors[:3]}"
        if len(seen) != len(set(seen)):
            return f"consumer {i}: {len(seen) - len(set(seen))} records seen twice"
        if any(x >= y for x, y in zip(seen, seen[1:])):
            return f"consumer {i}: ids out of order"
        if seen != expected:
            missing = sorted(set(expected) - set(seen))
            extra = sorted(set(seen) - set(expected))
            return (f"consumer {i}: {len(missing)} of {len(expected)} records missing (first "
                    f"{missing[:5]}), {len(extra)} not of this tenant")
        fleet.log(f"consumer {i}: {len(seen)} records exactly once, in order; "
                  f"{self.reconnects} reconnects, refused {self.refused or 'never'}")
        return None


# ---------------------------------------------------------------------------------------
# Read your writes


def pairs(url, token, tag, with_lsn):
    """READ_PAIRS PUT-then-GET pairs on READ_THREADS threads of their own: counts."""
    out = {"pairs": 0, "stale": 0, "no_lsn": 0, "errors": {}}
    lock = threading.Lock()

    def one(i):
        c = fleet.Client(url, timeout=10)
        path = f"/v1/threads/ryw-{tag}-{int(with_lsn)}-{i}/memory-mode"
        rev = 0
        try:
            for n in range(READ_PAIRS // READ_THREADS):
                body = {"expected_revision": rev, "mode": "disabled" if n % 2 == 0 else "enabled"}
                w = c.request("PUT", path, token, body)
                if w.status != 200:
                    with lock:
                        out["errors"][f"PUT {w.label()}"] = out["errors"].get(f"PUT {w.label()}", 0) + 1
                    return
                rev = w.json["revision"]
                lsn = w.header("Recallgate-Commit-LSN")
                headers = {"Recallgate-Min-LSN": lsn} if with_lsn and lsn else None
                r = c.request("GET", path, token, headers=headers)
                with lock:
                    out["pairs"] += 1
                    out["no_lsn"] += lsn is None
                    if r.status != 200:
                        out["errors"][f"GET {r.label()}"] = out["errors"].get(f"GET {r.label()}", 0) + 1
                    elif r.json["revision"] != rev:
                        out["stale"] += 1
        finally:
            c.close()

    threads = [threading.Thread(target=one, args=(i,), daemon=True) for i in range(READ_THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
        if t.is_alive():
            fleet.fail("a read-your-writes client hangs")
    return out


def standby_reads(f, standby):
    series = f'recallgate_standby_reads_total{{standby="127.0.0.1:{standby.port}"}}'
    values = [fleet.metric(i.metrics(), series) for i in f.instances]
    return None if all(v is None for v in values) else sum(v or 0 for v in values)


def read_your_writes(f, token):
    paf = f.pg
    standby = paf.other(paf.primary())
    paf.psql(standby, [f"alter system set recovery_min_apply_delay = '{APPLY_DELAY}'",
                       "select pg_reload_conf()"])
    try:
        deadline = time.monotonic() + 10
        while paf.psql(standby, ["show recovery_min_apply_delay"])[0][0] != APPLY_DELAY:
            if time.monotonic() > deadline:
                fleet.fail(f"{standby}: recovery_min_apply_delay did not become {APPLY_DELAY}")
            time.sleep(0.05)
        before = standby_reads(f, standby)
        t0 = time.monotonic()
        got = pairs(f.gateway_url, token, f"{time.time_ns():x}", with_lsn=True)
        spent = time.monotonic() - t0
        after = standby_reads(f, standby)
        served = None if after is None else after - (before or 0)
        control = pairs(f.gateway_url, token, f"{time.time_ns():x}", with_lsn=False)
    finally:
        paf.psql(standby, ["alter system reset recovery_min_apply_delay",
                           "select pg_reload_conf()"])
    fleet.log(f"read your writes ({APPLY_DELAY} apply delay on {standby}): {got['pairs']} pairs "
              f"in {spent:.1f} s, {got['stale']} stale, {got['no_lsn']} writes without "
              f"Recallgate-Commit-LSN, standby served {served}, errors {got['errors'] or 'none'};"
              f" control without Recallgate-Min-LSN: {control['stale']} stale of "
              f"{control['pairs']}")
    problems = []
    if got["errors"] or control["errors"]:
        problems.append(f"answers other than 200: {got['errors']} {control['errors']}")
    if got["pairs"] != READ_PAIRS:
        problems.append(f"{got['pairs']} of {READ_PAIRS} pairs done")
    if got["no_lsn"]:
        problems.append(f"{got['no_lsn']} write answers without Recallgate-Commit-LSN")
    if got["stale"]:
        problems.append(f"{got['stale']} reads with Recallgate-Min-LSN did not show the write")
    if served is None:
        problems.append("no recallgate_standby_reads_total series for "
                        f"127.0.0.1:{standby.port} in /metrics")
    elif served <= READ_PAIRS // 2:
        problems.append(f"the standby served {served:.0f} of {READ_PAIRS} reads (most expected)")
    if control["stale"] == 0:
        problems.append("no stale read without Recallgate-Min-LSN: were reads sent to the "
                        "standby at all?")
    if problems:
        fleet.fail("; ".join(problems))


# ---------------------------------------------------------------------------------------
# Writes across a switch


def check_answers(w, since, settled, what):
    """Every answer from `since` on is 2xx or 503 database_unavailable with Retry-After: 1,
    none after `settled`; returns the 503 count."""
    outage = w.failures(since=since, answered=True)
    wrong = {k: v for k, v in outage.items() if k != "503 database_unavailable"}
    problems = []
    if wrong:
        problems.append(f"{what}: answers other than 2xx and 503 database_unavailable: {outage}")
    bad_ra = {k: v for k, v in w.retry_after.items() if k != "1"}
    if bad_ra:
        problems.append(f"{what}: 503s without Retry-After: 1 ({bad_ra})")
    late = w.failures(since=settled)
    if late:
        problems.append(f"{what}: requests still failed {SETTLED_S} s after the formation "
                        f"settled: {late}")
    if problems:
        fleet.fail("; ".join(problems))
    return outage.get("503 database_unavailable", 0)


def first_write(w, since):
    """Seconds from `since` to the first write sent after it and acknowledged, or None."""
    done = [t0 + el for t0, el, label, method in list(w.answers)
            if t0 >= since and label[:1] == "2" and method in ("PUT", "POST")]
    return min(done) - since if done else None


def wait_first_write(w, since, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if first_write(w, since) is not None:
            return first_write(w, since)
        time.sleep(0.05)
    return None


def check_lost(f, w, what):
    lost = w.lost(f)
    fleet.log(f"{what}: {w.summary()}; lost {len(lost)}")
    if lost:
        fleet.fail(f"{what}: {len(lost)} acknowledged writes are not in the database: "
                   f"{lost[:10]}")


def check_instances(f, pids, what, timeout=15):
    now = [i.pid for i in f.instances] + [f.gateway.proc.pid]
    dead = [i.name for i in f.instances if i.wait(0) is not None]
    if dead or now != pids:
        fleet.fail(f"{what}: processes restarted or died: {dead}, pids {pids} -> {now}")
    deadline = time.monotonic() + timeout
    for inst in f.instances:
        while fleet.get_status(inst.url, "/readyz") != 200:
            if time.monotonic() > deadline:
                fleet.fail(f"{what}: {inst.name} /readyz is not 200 {timeout} s on")
            time.sleep(0.1)


def failover(f, token, pids):
    paf = f.pg
    old = paf.primary()
    new = paf.other(old)
    w = fleet.Writers(f.gateway_url, token, WRITERS, pace_s=PACE_S).start()
    try:
        time.sleep(1)
        t_kill = time.monotonic()
        paf.kill9(old)
        t_dead = time.monotonic()
        promoted = paf.wait_roles(new, timeout=30, sync=False) + (t_dead - t_kill)
        back = wait_first_write(w, t_dead, BACK_WITHIN_S)
        t_settled = time.monotonic()
        time.sleep(SETTLED_S + 1)
    finally:
        w.stop()
    if back is None:
        fleet.fail(f"no write acknowledged within {BACK_WITHIN_S} s of the kill\n{f.logs_tail()}")
    back += t_dead - t_kill
    before = w.failures(until=t_kill, answered=True)
    if before:
        fleet.fail(f"requests failed before the kill: {before}")
    n503 = check_answers(w, t_kill, t_settled + SETTLED_S, "failover")
    if n503 == 0:
        fleet.fail("no request failed while the primary was gone: was it killed?")
    fleet.log(f"failover: {new} promoted {promoted:.2f} s after the kill; first write "
              f"acknowledged {back:.2f} s after the kill; {n503} answers 503 "
              "database_unavailable (all with Retry-After: 1), no other failure")
    check_lost(f, w, "after the failover")
    check_instances(f, pids, "after the failover")
    return old, new


def rejoin_and_failback(f, token, pids, old, new):
    paf = f.pg
    w = fleet.Writers(f.gateway_url, token, WRITERS, pace_s=PACE_S).start()
    try:
        t0 = time.monotonic()
        paf.start_keeper(old)
        paf.wait_roles(new, timeout=60)
        fleet.log(f"{old} rejoined as the synchronous standby in {time.monotonic() - t0:.1f} s")
        t_switch = time.monotonic()
        cli = paf.switchover()
        paf.wait_roles(old, timeout=60, sync=False)  # writable; its standby follows
        t_settled = time.monotonic()
        time.sleep(SETTLED_S + 1)
    finally:
        w.stop()
    fleet.log(f"switchover back to {old}: writable after {t_settled - t_switch:.1f} s")
    n503 = check_answers(w, None, t_settled + SETTLED_S, "failback")
    after = [1 for t0_, el, label, m in w.answers
             if t0_ >= t_settled and label[:1] == "2" and m in ("PUT", "POST")]
    fleet.log(f"failback: {n503} answers 503 database_unavailable, {len(after)} writes "
              "acknowledged after it")
    if not after:
        fleet.fail("no write acknowledged after the failback")
    if old is not paf.primary():
        fleet.fail(f"{old} is not the primary after the switchover")
    check_lost(f, w, "after the failback")
    check_instances(f, pids, "after the failback")
    paf.finish_switchover(cli)  # it returns once the standby is back: meanwhile, the checks
    paf.remember_pids()
    fleet.log(f"pg_autoctl perform switchover done after {time.monotonic() - t_switch:.1f} s "
              f"(with {new} as the synchronous standby)")


# ---------------------------------------------------------------------------------------


def test():
    args = fleet.parse_args(__doc__)
    env = {"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS": str(ACQUIRE_TIMEOUT_MS)}
    with fleet.Fleet(args, instance_env=env, database=fleet_paf.Formation) as f:
        token = f.token(CHECKS)
        r = fleet.Client(f.gateway_url).request("GET", "/v1/audit", token)
        if r.status != 200 or not r.json["items"]:
            fleet.fail(f"audit list: {r.label()}")
        first = r.json["items"][0]["seq"]
        consumers = [Consumer(f.gateway, token, first) for _ in range(2)]
        pids = [i.pid for i in f.instances] + [f.gateway.proc.pid]
        problems = []

        def attempt(name, phase):
            try:
                return phase()
            except fleet.FleetError as e:
                fleet.log(f"FAILED ({name}): {e}")
                problems.append(f"{name}: {e}")
                return None

        attempt("read your writes", lambda: read_your_writes(f, token))
        switched = attempt("failover", lambda: failover(f, token, pids))
        if switched is None:
            fleet.fail("; ".join(problems))
        attempt("rejoin and failback", lambda: rejoin_and_failback(f, token, pids, *switched))

        tenant = f.psql(f"select tenant_id from audit_log where seq = {first}")[0][0]
        expected = [int(row[0]) for row in f.psql(
            f"select seq from audit_log where tenant_id = '{tenant}' and seq > {first} "
            "order by seq")]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(
                c.seen and c.seen[-1] >= expected[-1] for c in consumers):
            time.sleep(0.1)
        for i, c in enumerate(consumers):
            p = c.check(i, expected)
            if p:
                problems.append(p)
        if problems:
            fleet.fail("; ".join(problems))


if __name__ == "__main__":
    fleet.main(test)
