"""Revocation everywhere (openapi/openapi.yaml 'Tokens'; docs/events.md 'Revocation
everywhere'): a token deleted through one instance is refused by the other within 100 ms; while
an instance's listener is down it caches no token, and it reconnects by itself. Runs on a
database of its own (the test closes it to new connections)."""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from fleet_events import Instance, Stream, check, own_database, psql, token, unique, with_db

SCOPES = ["admin", "memory:read", "events:read"]



def token_id_of(inst, admin, name_scopes):
    st, doc, _ = inst.request("GET", "/v1/tokens", admin)
    check(st == 200, f"tokens {st}")
    return [t["token_id"] for t in doc["items"] if t["scopes"] == name_scopes][-1]


def first_refusal_ms(inst, tok, t0, limit_s=2.0):
    while time.monotonic() - t0 < limit_s:
        st, _, _ = inst.request("GET", "/v1/threads/x/memory-mode", tok, timeout=2)
        if st == 401:
            return (time.monotonic() - t0) * 1000
        check(st == 200, f"status {st}")
    return None


def test_broadcast(a, b, binary):
    tenant = unique("rev")
    admin = token(binary, tenant, SCOPES)
    times = []
    for _ in range(10):
        victim = token(binary, tenant, ["memory:read"])
        # Cached on B (verified once, then served from B's cache).
        for _ in range(3):
            check(b.request("GET", "/v1/threads/x/memory-mode", victim)[0] == 200, "warm B")
        vid = token_id_of(a, admin, ["memory:read"])
        check(a.request("DELETE", f"/v1/tokens/{vid}", admin)[0] == 204, "delete on A")
        t0 = time.monotonic()
        ms = first_refusal_ms(b, victim, t0)
        check(ms is not None, "B never refused the deleted token")
        times.append(ms)
        time.sleep(0.1 - min(0.1, time.monotonic() - t0))
        check(b.request("GET", "/v1/threads/x/memory-mode", victim)[0] == 401,
              "B refuses the deleted token 100 ms after the deletion")
    times.sort()
    print(f"ok broadcast: a token deleted on A is refused by B after {times[0]:.1f}-"
          f"{times[-1]:.1f} ms (median {times[len(times) // 2]:.1f} ms, 10 trials)")


def wait_metric(inst, name, value, limit_s):
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit_s:
        if inst.metric(name) == value:
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def test_listener_down(a, b, binary, admin_url, db):
    tenant = unique("rev")
    admin = token(binary, tenant, SCOPES)
    victim = token(binary, tenant, ["memory:read", "events:read"])
    stream = Stream(b, victim, timeout=15)  # on B, open before its listener goes down
    check(stream.status == 200, "stream on B")
    for inst in (a, b):  # each instance's one pooled connection is open before the door shuts
        check(inst.request("GET", "/v1/threads/x/memory-mode", victim)[0] == 200, "warm")
    psql(admin_url, f'ALTER DATABASE "{db}" WITH ALLOW_CONNECTIONS false')
    try:
        psql(admin_url, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
                        f"application_name = 'recallgate events {b.pid}'")
        check(wait_metric(b, "recallgate_event_listener_up", 0, 5) is not None,
              "B notices its listener is down")
        # B cannot hear deletions now: it must not serve the token from a cache.
        for _ in range(3):
            check(b.request("GET", "/v1/threads/x/memory-mode", victim)[0] == 200, "B serves")
        vid = token_id_of(a, admin, ["memory:read", "events:read"])
        check(a.request("DELETE", f"/v1/tokens/{vid}", admin)[0] == 204, "delete on A")
        st = b.request("GET", "/v1/threads/x/memory-mode", victim)[0]
        check(st == 401, f"B, its listener down, refuses the deleted token at once ({st})")
    finally:
        psql(admin_url, f'ALTER DATABASE "{db}" WITH ALLOW_CONNECTIONS true')
    back = wait_metric(b, "recallgate_event_listener_up", 1, 10)
    check(back is not None, "B's listener reconnects by itself")
    # The deletion was not heard on B: back, its hub looks at its streams' tokens again.
    while True:
        ev = stream.next_event()
        if ev is None:
            break
        check(ev[1] == "token.deleted", f"only the deletion's own record may come: {ev[1]}")
    stream.close()
    print(f"ok listener down: B caches no token and refuses a deletion at once; it listens "
          f"again {back:.1f} s after the database admits connections")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="rg-rev-")
    with own_database(args.bin, "rg_rev") as (admin_url, db):
        a = b = None
        try:
            env = {"RECALLGATE_DB_POOL": "1"}
            a = Instance(args.bin, log_dir, "a", env).start()
            b = Instance(args.bin, log_dir, "b", env).start()
            test_broadcast(a, b, args.bin)
            test_listener_down(a, b, args.bin, admin_url, db)
        finally:
            codes = [i.stop() for i in (a, b) if i]
    check(codes == [0, 0], f"exits {codes}")


if __name__ == "__main__":
    main()
