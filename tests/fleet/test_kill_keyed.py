#!/usr/bin/env python3
"""kill -9 of an instance under keyed writes through the gateway (openapi/openapi.yaml
'IdempotencyKey', Idempotency-Key; issue: a committed write must never be reported as a
failure).

Eight writers (six compare-and-swap PUTs of memory mode, two POSTs of sources), every write
with an Idempotency-Key of its own, sent again with that key until it is answered 2xx. Instance
1 gets SIGKILL mid-load, is started again and takes traffic; then instance 2; twice over. nginx
passes a keyed write that an instance received and never answered to the other instance, which
replays it when the first committed it. Then:
  * every acknowledged write is in the database, and the database holds exactly the
    acknowledged writes: no write committed without its client hearing 2xx (counted against
    the ledger: audit records and sources), and no duplicate source from a re-sent POST;
  * no client was ever told 409 stale_revision for its own write (without the key, nginx's
    re-send of a committed PUT came back stale);
  * every write finished with 2xx (none was left failing when the load stopped);
  * nginx did pass requests to the other instance (the kill was felt, not dodged).
"""
import signal
import time

import fleet

WRITERS = ["mode"] * 6 + ["source"] * 2
ROUNDS = 2  # instance 1, instance 2, instance 1, instance 2


def test():
    args = fleet.parse_args(__doc__)
    with fleet.Fleet(args) as f:
        token = f.token("memory:read,memory:write,memory:admin,audit:read")
        w = fleet.Writers(f.gateway_url, token, WRITERS, pace_s=0.002,
                          keyed=("mode", "source")).start()
        try:
            time.sleep(2)
            for inst in f.instances:
                fleet.wait_served(inst, timeout=5)
            for inst in f.instances * ROUNDS:
                time.sleep(1)
                inst.signal(signal.SIGKILL)
                inst.wait(10)
                inst.start()
                fleet.wait_served(inst)
                fleet.log(f"{inst.name}: killed (-9), started again and serving")
            time.sleep(1)
        finally:
            w.stop()
        answers = {}
        for _, _, label, _ in w.answers:
            answers[label] = answers.get(label, 0) + 1
        lost = w.lost(f)
        retried = f.gateway.retried()
        fleet.log(f"ledger: {w.summary()}; lost {len(lost)}; answers {answers}; "
                  f"nginx passed {retried} requests on")
        if lost:
            fleet.fail(f"{len(lost)} acknowledged writes are not in the database: {lost[:10]}")
        stale = answers.get("409 stale_revision", 0)
        if stale:
            fleet.fail(f"{stale} keyed writes were told 409 stale_revision for their own write")
        if w.unfinished:
            fleet.fail(f"{w.unfinished} writes never got their 2xx")
        w.check_database_matches(f)
        if retried == 0:
            fleet.fail("nginx passed no request to the other instance: no kill was felt")


if __name__ == "__main__":
    fleet.main(test)
