#!/usr/bin/env python3
"""Sends every case of the hostile corpus (corpus.py) to a recallgate on loopback, each on its
own connection and within a bounded time, and reports what came back.

usage: run_corpus.py ADDR [--token T] [--only NAME]... [--timeout S] [--drain-pid PID] [--strict]
                    [--gateway]

ADDR is 127.0.0.1:PORT (or http://127.0.0.1:PORT). A case that gets no complete answer and
no close within --timeout (default 5 s, at most 5) is a hang. --drain-pid runs the drain cases
last: their requests are started, PID gets SIGTERM, then they are finished. Exit status: 1 when
a case hung (or, with --strict, when a case's answer differs from its expectation), else 0.
Standard library only.
"""
import argparse
import os
import signal
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from corpus import CASES, DRAIN_CASES  # noqa: E402

MAX_TIMEOUT = 5.0


def fill(data, token, fake):
    return data.replace(b"{TOKEN}", token.encode()).replace(b"{FAKE}", fake.encode())


def fake_token(token):
    """A token of the same shape that no one was issued."""
    prefix = "rg_k_"
    return prefix + "Z" * (len(token) - len(prefix)) if token else prefix + "Z" * 41


class Outcome:
    def __init__(self):
        self.status = None
        self.content_type = None
        self.body = b""
        self.closed = False
        self.hang = False
        self.error = None
        self.raw_len = 0

    def kind(self):
        if self.hang:
            return "hang"
        if self.status is None:
            return "closed" if self.closed else "none"
        return str(self.status)

    def problem(self):
        return (self.content_type or "").startswith("application/problem+json")

    def html(self):
        ct = (self.content_type or "").lower()
        return "html" in ct or self.body.lstrip()[:1] == b"<"


def parse(buf, head_only):
    """(status, headers, body, complete) of the first answer in buf, or None when the head
    is not in yet."""
    end = buf.find(b"\r\n\r\n")
    if end < 0:
        return None
    lines = buf[:end].split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    try:
        status = int(parts[1])
    except (IndexError, ValueError):
        status = -1
    headers = {}
    for line in lines[1:]:
        k, _, v = line.partition(b":")
        headers.setdefault(k.strip().lower().decode("latin-1"), v.strip().decode("latin-1"))
    body = buf[end + 4:]
    if head_only or status in (204, 304) or 100 <= status < 200:
        return status, headers, b"", True
    if "content-length" in headers:
        try:
            n = int(headers["content-length"])
        except ValueError:
            return status, headers, body, False
        return status, headers, body[:n], len(body) >= n
    return status, headers, body, False  # until the close


def read_answer(sock, deadline, head_only, out):
    buf = b""
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            p = parse(buf, head_only)
            if p and p[3]:
                break
            out.hang = True
            break
        sock.settimeout(left)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError, OSError) as e:
            out.error = out.error or type(e).__name__
            out.closed = True
            break
        if not chunk:
            out.closed = True
            break
        buf += chunk
        p = parse(buf, head_only)
        if p and p[3]:
            break
    out.raw_len = len(buf)
    p = parse(buf, head_only)
    if p:
        out.status, headers, out.body, _ = p
        out.content_type = headers.get("content-type")
    elif buf:
        out.status = -1  # bytes that are not HTTP


def connect(addr, timeout):
    s = socket.create_connection(addr, timeout=timeout)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def do_steps(sock, steps, token, fake, deadline, out):
    """Runs the steps; returns 'read' (read the answer), or 'gone' (the client left)."""
    for step in steps:
        op = step[0]
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            if op == "send":
                sock.sendall(fill(step[1], token, fake))
            elif op == "sleep":
                time.sleep(step[1])
            elif op == "shut_wr":
                sock.shutdown(socket.SHUT_WR)
            elif op == "close":
                sock.close()
                return "gone"
            elif op == "rst":
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                sock.close()
                return "gone"
        except socket.timeout:
            out.error = "send timed out"
            out.hang = True
            return "gone"
        except (ConnectionResetError, BrokenPipeError, OSError) as e:
            out.error = type(e).__name__  # the server closed early: read what it said
            return "read"
    return "read"


def head_only(steps):
    first = next((s[1] for s in steps if s[0] == "send"), b"")
    return first.startswith(b"HEAD ")


def run_case(addr, case, token, fake, timeout):
    out = Outcome()
    deadline = time.monotonic() + timeout
    try:
        sock = connect(addr, timeout)
    except OSError as e:
        out.error = "connect: " + type(e).__name__
        return out
    try:
        if do_steps(sock, case["steps"], token, fake, deadline, out) == "read":
            read_answer(sock, deadline, head_only(case["steps"]), out)
    finally:
        sock.close()
    return out


def verdict(case, out, gateway=False):
    """'ok', or what differs from the expectation (gateway: through nginx, see --gateway)."""
    exp = case["expect"]
    if out.hang:
        return "HANG"
    if exp == "any":
        return "ok"
    if exp == "closed":
        return "ok" if out.status is None else "got %s, expected a close" % out.kind()
    allowed = exp if isinstance(exp, list) else [exp]
    if gateway:
        # nginx answers framing errors itself, by its own rules: any refusal will do, as
        # long as it is problem+json
        if out.status is None or out.status < 400:
            return "got %s, expected a refusal" % out.kind()
    elif out.status not in allowed:
        return "got %s, expected %s" % (out.kind(), "/".join(map(str, allowed)))
    if not gateway and case.get("mhd"):
        # libmicrohttpd's own page (a HEAD has no body to show it)
        if out.problem():
            return "problem+json where libmicrohttpd answered: update corpus.py and the docs"
        return "ok"
    if out.status >= 400 and not out.problem():
        return "%d but not problem+json (%s)" % (out.status, out.content_type)
    return "ok"


def refusal_expected(case):
    """The cases --gateway sends: those the service refuses (a status from 400 up) from a
    client that stays to read the answer (nginx ends a request whose client half-closed)."""
    exp = case["expect"]
    allowed = exp if isinstance(exp, list) else [exp]
    stays = all(step[0] in ("send", "sleep") for step in case["steps"])
    return stays and all(isinstance(x, int) and x >= 400 for x in allowed)


def describe(out):
    s = out.kind()
    if out.status is not None:
        if out.problem():
            s += " problem+json"
        elif out.html():
            s += " HTML"
        else:
            s += " " + str(out.content_type)
    if out.error:
        s += " [" + out.error + "]"
    return s


def run_drain(addr, pid, token, fake, timeout):
    """Starts every drain case, sends SIGTERM to pid, finishes them, reads their answers."""
    results = []
    socks = []
    deadline = time.monotonic() + timeout
    for case in DRAIN_CASES:
        out = Outcome()
        try:
            s = connect(addr, timeout)
            state = do_steps(s, case["before"], token, fake, deadline, out)
        except OSError as e:
            s, state = None, "gone"
            out.error = "connect: " + type(e).__name__
        socks.append((case, s, state, out))
    time.sleep(0.1)
    os.kill(pid, signal.SIGTERM)
    time.sleep(0.05)
    for case, s, state, out in socks:
        if s is not None and state == "read":
            state = do_steps(s, case["after"], token, fake, deadline, out)
            if state == "read":
                read_answer(s, deadline, False, out)
        if s is not None:
            s.close()
        results.append((case, out))
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("addr")
    ap.add_argument("--token", default=os.environ.get("RG_HOSTILE_TOKEN", ""))
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--timeout", type=float, default=MAX_TIMEOUT)
    ap.add_argument("--drain-pid", type=int)
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--gateway", action="store_true",
                    help="ADDR is the nginx gateway: send only the cases the service refuses "
                         "and require a problem+json refusal for each (nginx answers the "
                         "framing errors libmicrohttpd would answer in HTML)")
    a = ap.parse_args()
    hostport = a.addr.split("://", 1)[-1].rstrip("/")
    host, _, port = hostport.rpartition(":")
    if host not in ("127.0.0.1", "localhost"):
        sys.exit("run_corpus.py: loopback only (127.0.0.1)")
    addr = ("127.0.0.1", int(port))
    timeout = min(a.timeout, MAX_TIMEOUT)
    fake = fake_token(a.token)
    cases = [c for c in CASES if (not a.only or c["name"] in a.only) and
             (not a.gateway or refusal_expected(c))]
    hangs, diffs = [], []
    for case in cases:
        for _ in range(case.get("repeat", 1) - 1):  # the last one is reported
            out = run_case(addr, case, a.token, fake, timeout)
            if out.hang or verdict(case, out, a.gateway) != "ok":
                break
        else:
            out = run_case(addr, case, a.token, fake, timeout)
        v = verdict(case, out, a.gateway)
        print("%-34s %-44s %s" % (case["name"], describe(out), "" if v == "ok" else "<- " + v),
              flush=True)
        if out.hang:
            hangs.append(case["name"])
        elif v != "ok":
            diffs.append(case["name"])
    if a.drain_pid:
        for case, out in run_drain(addr, a.drain_pid, a.token, fake, timeout):
            v = "HANG" if out.hang else "ok"
            print("%-34s %-44s %s" % ("drain:" + case["name"], describe(out),
                                      "" if v == "ok" else "<- " + v), flush=True)
            if out.hang:
                hangs.append("drain:" + case["name"])
    print("hostile corpus: %d case(s), %d hang(s)%s, %d differ from their expectation%s" %
          (len(cases), len(hangs), (" " + ", ".join(hangs)) if hangs else "", len(diffs),
           (": " + ", ".join(diffs)) if diffs else ""))
    sys.exit(1 if hangs or (a.strict and diffs) else 0)


if __name__ == "__main__":
    main()
