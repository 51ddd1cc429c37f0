#!/usr/bin/env python3
"""Event streams through the gateway across a rolling restart (docs/events.md).

Two consumers read GET /v1/events through nginx while four writers change memory modes
through nginx and both instances are restarted one after the other (SIGTERM, exit 0, start).
A draining instance ends its streams; each consumer reconnects through the gateway with the
last id it saw (Last-Event-ID), landing on whichever instance nginx picks. Afterwards each
consumer has seen every one of the tenant's records exactly once and in seq order, and was
moved at least once per restart.
"""
import http.client
import json
import signal
import threading
import time

import fleet

DRAIN_S = 10


def consume(url, token, start, state, stop):
    hostport = url.split("://", 1)[1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    last = start
    while not stop.is_set():
        conn = http.client.HTTPConnection(host, int(port), timeout=5)
        try:
            conn.request("GET", "/v1/events", headers={"Authorization": f"Bearer {token}",
                                                       "Last-Event-ID": str(last)})
            resp = conn.getresponse()
            if resp.status != 200:
                state["refused"].append(resp.status)
                time.sleep(0.1)
                continue
            ev = {}
            while not stop.is_set():
                line = resp.readline()
                if not line:
                    break
                line = line.decode().rstrip("\n")
                if line == "" and "data" in ev:
                    seq = int(ev["id"])
                    if json.loads(ev["data"])["seq"] != seq:
                        state["errors"].append(f"id {seq} does not match its data")
                    state["seen"].append(seq)
                    last = seq
                    ev = {}
                elif line and not line.startswith(":"):
                    k, _, v = line.partition(": ")
                    ev[k] = v
        except (OSError, http.client.HTTPException):
            pass  # the instance went away mid-stream: reconnect
        finally:
            conn.close()
        state["reconnects"] += 1


def test():
    args = fleet.parse_args(__doc__)
    with fleet.Fleet(args) as f:
        token = f.token("memory:read,memory:write,memory:admin,audit:read,events:read")
        r = fleet.Client(f.gateway_url).request("GET", "/v1/audit", token)
        if r.status != 200 or not r.json["items"]:
            fleet.fail(f"audit list: {r.label()}")
        tenant_first = r.json["items"][0]["seq"]
        stop = threading.Event()
        consumers = []
        for _ in range(2):
            st = {"seen": [], "errors": [], "refused": [], "reconnects": 0}
            t = threading.Thread(target=consume, args=(f.gateway_url, token, tenant_first, st,
                                                       stop), daemon=True)
            t.start()
            consumers.append((t, st))
        # keyed, so that nginx may pass a PUT to the other instance (docker/nginx.conf)
        w = fleet.Writers(f.gateway_url, token, ["mode"] * 4, pace_s=0.005,
                          keyed=("mode",)).start()
        try:
            time.sleep(1.5)
            for inst in f.instances:
                inst.signal(signal.SIGTERM)
                status = inst.wait(DRAIN_S + 2)
                if status != 0:
                    fleet.fail(f"{inst.name} exited {status} after SIGTERM")
                inst.start()
                # nginx marked it failed (fail_timeout 2 s): the next stop waits until the
                # gateway sends it writes again, as an operator's rollout waits for traffic.
                fleet.wait_served(inst)
        finally:
            w.stop()
        if w.failures():
            fleet.fail(f"writes failed during the restart: {w.failures()}")
        tenant = f.psql(f"select tenant_id from audit_log where seq = {tenant_first}")[0][0]
        expected = [int(row[0]) for row in f.psql(
            f"select seq from audit_log where tenant_id = '{tenant}' and seq > {tenant_first} "
            "order by seq")]
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(
                st["seen"] and st["seen"][-1] >= expected[-1] for _, st in consumers):
            time.sleep(0.1)
        stop.set()
        for t, _ in consumers:
            t.join(timeout=10)
        for i, (_, st) in enumerate(consumers):
            seen = st["seen"]
            if st["errors"]:
                fleet.fail(f"consumer {i}: {st['errors'][:3]}")
            if len(seen) != len(set(seen)):
                fleet.fail(f"consumer {i}: {len(seen) - len(set(seen))} repeated ids")
            if any(x >= y for x, y in zip(seen, seen[1:])):
                fleet.fail(f"consumer {i}: ids out of order")
            if seen != expected:
                missing = sorted(set(expected) - set(seen))
                fleet.fail(f"consumer {i}: {len(missing)} of {len(expected)} records missing "
                           f"(first {missing[:5]})")
            if st["reconnects"] < len(f.instances):
                fleet.fail(f"consumer {i} was moved {st['reconnects']} times across "
                           f"{len(f.instances)} restarts")
            fleet.log(f"consumer {i}: {len(seen)} records exactly once in order, "
                      f"{st['reconnects']} reconnects through the gateway, refused "
                      f"{st['refused'] or 'never'}")
        fleet.log(f"writers: {w.summary()}")


if __name__ == "__main__":
    fleet.main(test)
