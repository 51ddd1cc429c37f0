"""Streams under load on one instance (docs/events.md): 1,000 concurrent idle streams hold no
thread and no database connection and each gets the next commit; a reader that never reads is
closed once its unsent backlog passes 1 MiB, while writers and the other streams go on."""
import argparse
import json
import os
import resource
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fleet"))
from fleet_events import Instance, Stream, check, own_database, put_mode, token, unique

SCOPES = ["events:read", "memory:admin", "audit:read"]


def proc_status(pid):
    out = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.strip()
    return int(out["VmRSS"].split()[0]), int(out["Threads"])


def open_raw(inst, tok, rcvbuf=None):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.connect(("127.0.0.1", inst.port))
    s.sendall(f"GET /v1/events HTTP/1.1\r\nHost: t\r\nAuthorization: Bearer {tok}\r\n\r\n"
              .encode())
    return s


def read_until(s, marker, limit_s=20):
    s.settimeout(limit_s)
    buf = b""
    while marker not in buf:
        chunk = s.recv(65536)
        if not chunk:
            break
        buf += chunk
    return buf


def write_many(inst, tok, n, writers=8):
    errors = []

    def run(k):
        t = unique("w")
        for rev in range(n // writers):
            st = put_mode(inst, tok, t, rev, "disabled" if rev % 2 == 0 else "enabled")[0]
            if st != 200:
                errors.append(st)
                return

    ts = [threading.Thread(target=run, args=(k,)) for k in range(writers)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    check(not errors, f"writes failed: {errors[:3]}")


def test_idle_streams(inst, binary, n):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 512)), hard))
    tok = token(binary, unique("idle"), SCOPES)
    rss0, threads0 = proc_status(inst.pid)
    open0 = inst.metric("recallgate_event_streams")
    socks = []
    for _ in range(n):
        s = open_raw(inst, tok)
        socks.append(s)
    for s in socks:
        head = read_until(s, b"retry: 2000\n\n")
        check(b" 200 " in head.split(b"\r\n")[0] and b"retry: 2000" in head,
              f"stream opened: {head[:80]!r}")
    time.sleep(0.5)
    rss1, threads1 = proc_status(inst.pid)
    check(inst.metric("recallgate_event_streams") == open0 + n, f"{n} more streams open")
    check(inst.metric("recallgate_db_pool_in_use") == 0, "idle streams hold no connection")
    check(threads1 == threads0, f"idle streams hold no thread ({threads0} → {threads1})")
    thread = unique("th")
    t0 = time.monotonic()
    check(put_mode(inst, tok, thread, 0, "disabled")[0] == 200, "put")
    for s in socks:
        data = read_until(s, thread.encode())
        check(thread.encode() in data, "every idle stream gets the commit")
    fanout = time.monotonic() - t0
    for s in socks:
        s.close()
    per = (rss1 - rss0) / n
    print(f"ok idle: {n} streams: RSS {rss0 / 1024:.1f} → {rss1 / 1024:.1f} MiB "
          f"({per:.1f} KiB a stream), threads {threads0} → {threads1}, no pooled connection; "
          f"one commit reached all of them in {fanout * 1000:.0f} ms")


def test_slow_reader(inst, binary):
    tok = token(binary, unique("slow"), SCOPES)
    stuck = open_raw(inst, tok, rcvbuf=4096)
    check(b"retry: 2000" in read_until(stuck, b"retry: 2000\n\n"), "slow stream opened")
    follower = Stream(inst, tok, timeout=30)
    got = []

    def follow():
        try:
            while True:
                ev = follower.next_event()
                if ev is None:
                    return
                got.append(ev[0])
        except (OSError, ValueError, AttributeError):
            return  # closed by the test below (http.client then fails in several ways)

    ft = threading.Thread(target=follow)
    ft.start()
    before = inst.metric('recallgate_event_streams_closed_total{reason="slow_reader"}') or 0
    t0 = time.monotonic()
    total = 0
    while time.monotonic() - t0 < 120:
        write_many(inst, tok, 800)
        total += 800
        after = inst.metric('recallgate_event_streams_closed_total{reason="slow_reader"}')
        if after == before + 1:
            break
    wrote = time.monotonic() - t0
    check(after == before + 1, f"the reader that never reads was closed ({after})")
    # What reached the slow client's socket, then the end of the connection.
    stuck.settimeout(10)
    received = b""
    while True:
        try:
            chunk = stuck.recv(65536)
        except ConnectionResetError:
            break
        if not chunk:
            break
        received += chunk
    stuck.close()
    check(len(received) < 1024 * 1024, "the dropped backlog was never sent")
    # The follower got every write, in order, while the other stream was stuck.
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(got) < total:
        time.sleep(0.05)
    follower.close()
    ft.join()
    check(len(got) == total and all(x < y for x, y in zip(got, got[1:])),
          f"the other stream got {len(got)} of {total} in order")
    print(f"ok slow reader: closed after {total} records ({wrote:.1f} s of writes), "
          f"{len(received)} bytes reached it; the other stream got all {total} in order")


def test_keepalive(quiet, opened):
    """A stream whose tenant writes nothing gets a comment after 15 s of silence, not before."""
    data = read_until(quiet, b": keep-alive\n\n", limit_s=25)
    after = time.monotonic() - opened
    quiet.close()
    check(b": keep-alive\n\n" in data, "a keep-alive comment within 25 s")
    check(after >= 15, f"the keep-alive came after {after:.1f} s of silence (15 s expected)")
    check(b"id:" not in data, "nothing but the comment on a silent stream")
    print(f"ok keep-alive: the first comment after {after:.1f} s of silence")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--streams", type=int, default=1000)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="rg-load-")
    with own_database(args.bin, "rg_load"):
        # One tenant holds every stream here: its share (a quarter of the instance's by
        # default) is raised to the instance's, the load being the point, not fairness.
        inst = Instance(args.bin, log_dir, "load", {"RECALLGATE_LOG_LEVEL": "warn",
                                                 "RECALLGATE_MAX_CLIENT_CONNECTIONS": "0",
                                                 "RECALLGATE_MAX_STREAMS_PER_TENANT": "1024"}
                        ).start()
        try:
            quiet = open_raw(inst, token(args.bin, unique("quiet"), SCOPES))
            opened = time.monotonic()
            check(b"retry: 2000" in read_until(quiet, b"retry: 2000\n\n"), "quiet stream")
            test_idle_streams(inst, args.bin, args.streams)
            test_slow_reader(inst, args.bin)
            test_keepalive(quiet, opened)
        finally:
            rc = inst.stop()
        check(rc == 0, f"exit {rc}")


if __name__ == "__main__":
    main()
