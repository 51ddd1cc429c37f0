"""Event stream numbers for scripts/bench-events (nothing asserted; the numbers are for notes).

  latency    commits on instance A (one at a time, 20 ms apart) to a stream on instance B,
             from the write's answer to the event's arrival: p50/p99/max
  writes     wrk PUT memory-mode against A (2 threads, 16 connections, 10 s), with no stream
             open and with 100 streams open on B that read everything
  memory     RSS of B before and with 1,000 idle streams
Each measurement runs twice (a noisy VM: report the range).
"""
import argparse
import os
import re
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "fleet"))
from fleet_events import Instance, Stream, put_mode, token, unique  # noqa: E402

SCOPES = ["events:read", "memory:admin", "memory:read"]


def latency(a, b, tok, n=500):
    s = Stream(b, tok, timeout=5)
    lat = []
    for _ in range(n):
        t = unique("lat")
        put_mode(a, tok, t, 0, "disabled")
        t1 = time.monotonic()
        ev = s.next_event()
        assert ev and ev[2]["resource_id"] == t
        lat.append((time.monotonic() - t1) * 1000)
        time.sleep(0.02)
    s.close()
    lat.sort()
    return statistics.median(lat), lat[int(n * 0.99) - 1], lat[-1]


class Readers:
    """n raw streams on inst, drained by one thread."""

    def __init__(self, inst, tok, n):
        self.sel = selectors.DefaultSelector()
        self.bytes = 0
        self.stop = False
        for _ in range(n):
            c = socket.create_connection(("127.0.0.1", inst.port))
            c.sendall(f"GET /v1/events HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer {tok}"
                      "\r\n\r\n".encode())
            c.setblocking(False)
            self.sel.register(c, selectors.EVENT_READ)
        self.t = threading.Thread(target=self.run)
        self.t.start()

    def run(self):
        while not self.stop:
            for key, _ in self.sel.select(0.2):
                try:
                    self.bytes += len(key.fileobj.recv(1 << 16))
                except BlockingIOError:
                    pass

    def close(self):
        self.stop = True
        self.t.join()
        for key in list(self.sel.get_map().values()):
            key.fileobj.close()


def wrk_put(a, tok, root):
    out = subprocess.run(["wrk", "-t2", "-c16", "-d10s", "-s",
                          os.path.join(root, "tests/bench/put_memory_mode.lua"),
                          f"http://127.0.0.1:{a.port}", "--", tok],
                         capture_output=True, text=True, timeout=60)
    m = re.search(r"Requests/sec:\s+([0-9.]+)", out.stdout)
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out.stdout)
    return float(m.group(1)) if m else 0.0, int(non2xx.group(1)) if non2xx else 0


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    log_dir = tempfile.mkdtemp(prefix="rg-bench-events-")
    env = {"RECALLGATE_LOG_LEVEL": "warn", "RECALLGATE_MAX_CLIENT_CONNECTIONS": "0",
           "RECALLGATE_MAX_STREAMS": "2000", "RECALLGATE_MAX_STREAMS_PER_TENANT": "2000"}
    a = Instance(args.bin, log_dir, "a", env).start()
    b = Instance(args.bin, log_dir, "b", env).start()
    try:
        tok = token(args.bin, unique("bench"), SCOPES)
        for run in (1, 2):
            p50, p99, mx = latency(a, b, tok)
            print(f"events latency run {run}: commit on A to a stream on B, 500 events: "
                  f"p50 {p50:.2f} ms, p99 {p99:.2f} ms, max {mx:.2f} ms")
        for run in (1, 2):
            none, bad0 = wrk_put(a, tok, args.root)
            readers = Readers(b, tok, 100)
            time.sleep(0.5)
            with100, bad1 = wrk_put(a, tok, args.root)
            time.sleep(1)
            readers.close()
            print(f"events writes run {run}: PUT memory-mode {none:.0f} req/s with no stream, "
                  f"{with100:.0f} req/s with 100 streams reading on B "
                  f"({readers.bytes / 1e6:.1f} MB streamed; non-2xx {bad0}/{bad1})")
        before = rss_kib(b.pid)
        socks = []
        for _ in range(1000):
            c = socket.create_connection(("127.0.0.1", b.port))
            c.sendall(f"GET /v1/events HTTP/1.1\r\nHost: b\r\nAuthorization: Bearer {tok}"
                      "\r\n\r\n".encode())
            socks.append(c)
        time.sleep(1)
        with_streams = rss_kib(b.pid)
        open_now = b.metric("recallgate_event_streams")
        print(f"events memory: {open_now:.0f} idle streams on B: RSS {before / 1024:.1f} → "
              f"{with_streams / 1024:.1f} MiB ({(with_streams - before) / 1000:.1f} KiB a stream)")
        for c in socks:
            c.close()
    finally:
        a.stop()
        b.stop()


if __name__ == "__main__":
    main()
