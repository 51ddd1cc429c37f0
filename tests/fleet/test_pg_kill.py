#!/usr/bin/env python3
"""PostgreSQL kill -9 under write load (docs/fleet.md; DESIGN.md: "a lost database
connection is detected, the request answers 503 database_unavailable, and the pool
reconnects; the server itself never dies of it").

Eight compare-and-swap writers go through nginx; the postmaster gets SIGKILL, stays down for
OUTAGE_S, and is started again on the same port. Then:
  * every answer was 2xx or 503 database_unavailable, and no request took longer than the
    configured timeouts allow (a hung request would fail the writer's 30 s timeout);
  * the first write sent after PostgreSQL is back is answered 200 within 3 s, and from
    3 s on every request succeeds;
  * no acknowledged write is lost (fsync and synchronous_commit are on for this cluster);
  * no process was restarted: the instances and nginx keep their pids and are ready.
"""
import time

import fleet

WRITERS = ["mode"] * 8
OUTAGE_S = 3
BACK_WITHIN_S = 3
ACQUIRE_TIMEOUT_MS = 2000  # RECALLGATE_DB_ACQUIRE_TIMEOUT_MS's default, set explicitly
SLOWEST_S = ACQUIRE_TIMEOUT_MS / 1000 + 2  # the wait for a connection, plus a reconnect


def test():
    args = fleet.parse_args(__doc__)
    env = {"RECALLGATE_DB_ACQUIRE_TIMEOUT_MS": str(ACQUIRE_TIMEOUT_MS)}
    with fleet.Fleet(args, instance_env=env) as f:
        token = f.token("memory:read,memory:admin,audit:read")
        pids = [i.pid for i in f.instances] + [f.gateway.proc.pid]
        w = fleet.Writers(f.gateway_url, token, WRITERS, pace_s=0.002).start()
        try:
            time.sleep(2)
            t_kill = time.monotonic()
            f.pg.kill9()
            time.sleep(OUTAGE_S)
            f.pg.start()
            t_back = time.monotonic()
            fleet.log(f"PostgreSQL back after {t_back - t_kill:.2f} s")
            time.sleep(BACK_WITHIN_S + 2)
        finally:
            w.stop()

        before = w.failures(until=t_kill, answered=True)
        if before:
            fleet.fail(f"requests failed before the kill: {before}")
        # From the kill on (a request sent just before it may fail too).
        outage = w.failures(since=t_kill, answered=True)
        fleet.log(f"ledger: {w.summary()}; answers other than 2xx from the kill on: {outage}")
        wrong = {k: v for k, v in outage.items() if k != "503 database_unavailable"}
        if wrong:
            fleet.fail(f"during the outage only 503 database_unavailable may fail a request; "
                       f"seen: {outage}\n{f.logs_tail()}")
        if not outage:
            fleet.fail("no request failed while PostgreSQL was down: was it killed?")
        slowest = max(elapsed for _, elapsed, _, _ in w.answers)
        if slowest > SLOWEST_S:
            fleet.fail(f"a request took {slowest:.2f} s (at most {SLOWEST_S} s allowed)")
        back = [t0 + elapsed for t0, elapsed, label, method in w.answers
                if t0 >= t_back and label == "200" and method == "PUT"]
        if not back:
            fleet.fail("no write succeeded after PostgreSQL came back")
        recovered = back and min(back) - t_back
        fleet.log(f"first write acknowledged {recovered:.3f} s after PostgreSQL was back; "
                  f"slowest answer {slowest:.3f} s")
        if recovered > BACK_WITHIN_S:
            fleet.fail(f"the first write after PostgreSQL came back took {recovered:.2f} s "
                       f"(at most {BACK_WITHIN_S} s)")
        late = w.failures(since=t_back + BACK_WITHIN_S)
        if late:
            fleet.fail(f"requests still failed {BACK_WITHIN_S} s after PostgreSQL was back: "
                       f"{late}\n{f.logs_tail()}")
        lost = w.lost(f)
        fleet.log(f"lost {len(lost)} acknowledged writes")
        if lost:
            fleet.fail(f"{len(lost)} acknowledged writes are not in the database: {lost[:10]}")
        now = [i.pid for i in f.instances] + [f.gateway.proc.pid]
        dead = [i.name for i in f.instances if i.wait(0) is not None]
        if f.gateway.proc.poll() is not None:
            dead.append("nginx")
        if dead or now != pids:
            fleet.fail(f"processes restarted or died: {dead}, pids {pids} -> {now}")
        for inst in f.instances:
            if fleet.get_status(inst.url, "/readyz") != 200:
                fleet.fail(f"{inst.name} is not ready after PostgreSQL came back")


if __name__ == "__main__":
    fleet.main(test)
