#!/usr/bin/env python3
"""Rolling restart under load through the gateway (docs/fleet.md).

Eight writers (six compare-and-swap PUTs of memory mode with an Idempotency-Key each, so that
nginx may pass them on; two non-idempotent POSTs of sources without one) go through nginx while instance 1 gets SIGTERM, must exit 0, is started again and takes
traffic again; then instance 2; twice over. Then:
  * every acknowledged write is in the database, and the database holds no write that was
    not acknowledged (audit records and sources counted against the ledger);
  * no request failed: nginx could route every one elsewhere, so a client sees no 502, 503,
    504 or dropped connection at all;
  * each restarted instance served writes again before the next one stopped.
"""
import signal
import time

import fleet

WRITERS = ["mode"] * 6 + ["source"] * 2
ROUNDS = 2  # instance 1, instance 2, instance 1, instance 2
DRAIN_S = 10  # RECALLGATE_DRAIN_TIMEOUT's default; serve exits within it + 1 s


def test():
    args = fleet.parse_args(__doc__)
    with fleet.Fleet(args) as f:
        token = f.token("memory:read,memory:write,memory:admin,audit:read")
        w = fleet.Writers(f.gateway_url, token, WRITERS, pace_s=0.002, keyed=("mode",)).start()
        try:
            time.sleep(2)
            for inst in f.instances:
                fleet.wait_served(inst, timeout=5)
            for inst in f.instances * ROUNDS:
                t0 = time.monotonic()
                inst.signal(signal.SIGTERM)
                status = inst.wait(DRAIN_S + 2)
                if status != 0:
                    fleet.fail(f"{inst.name} exited {status} after SIGTERM (0 expected):\n"
                               f"{fleet.tail(inst.log_path)}")
                stopped = time.monotonic() - t0
                inst.start()
                fleet.wait_served(inst)
                fleet.log(f"{inst.name}: drained and exited 0 in {stopped:.2f} s, "
                          f"serving again {time.monotonic() - t0:.2f} s after SIGTERM")
            time.sleep(1)
        finally:
            w.stop()
        failures = w.failures()
        lost = w.lost(f)
        fleet.log(f"ledger: {w.summary()}; lost {len(lost)}; failed {failures or 0}")
        if lost:
            fleet.fail(f"{len(lost)} acknowledged writes are not in the database: {lost[:10]}")
        if failures:
            fleet.fail(f"requests failed during the rolling restart: {failures}\n"
                       f"{f.logs_tail()}")
        # Nothing failed, so nothing may have been written that was not acknowledged.
        w.check_database_matches(f)
        fleet.log(f"nginx passed {f.gateway.retried()} requests to the other instance")


if __name__ == "__main__":
    fleet.main(test)
