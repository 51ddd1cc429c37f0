"""The event-stream tests' part of the fleet library (tests/events/test_*.py; stdlib only).

Instances are `recallgate serve` started by scripts/rg-launch (fleet_proc.Launched) against
DATABASE_URL, ready when /readyz answers 200 and their event listener is up; tokens and the
tests' own databases come from rg-launch too. Event streams are read with http.client
(chunked decoding) line by line. Nothing here skips: a missing binary or database fails.
The tests find this module through PYTHONPATH (tests/events/CMakeLists.txt) or
`PYTHONPATH=tests/fleet` by hand.
"""
import contextlib
import http.client
import json
import os
import socket
import subprocess
import sys
import time
import urllib.parse
import uuid

import fleet_proc
from fleet_proc import Launched, token


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def psql(url, sql):
    out = subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-tA", url, "-c", sql],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 0, f"psql: {out.stderr.strip()}")
    return out.stdout.strip()


def with_db(url, name):
    u = urllib.parse.urlsplit(url)
    return urllib.parse.urlunsplit((u.scheme, u.netloc, "/" + name, u.query, u.fragment))


@contextlib.contextmanager
def own_database(binary, prefix):
    """A migrated database of the test's own on DATABASE_URL's server (rg-launch --database),
    which DATABASE_URL names inside the block (instances and tokens inherit it); yields
    (server URL, name). The suite's database is shared with integration tests that lock
    audit_log for seconds (it_edge), and these tests time deliveries."""
    admin = os.environ["DATABASE_URL"]
    try:
        held = Launched(binary, ["--database", prefix, "--no-server"])
    except fleet_proc.FleetError as e:
        fail(str(e))
    os.environ["DATABASE_URL"] = held.database_url
    try:
        yield admin, held.database
    finally:
        os.environ["DATABASE_URL"] = admin
        held.close()


class Session:
    """One psql session kept open, to hold a transaction across the test's requests."""

    def __init__(self, url):
        self.proc = subprocess.Popen(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-tA", url],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def query(self, sql):
        """Runs sql (one statement returning one row) and returns that row's text."""
        self.proc.stdin.write(sql + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        check(line != "", f"psql ended on: {sql.split()[0]}")
        return line.strip()

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


class Instance:
    def __init__(self, binary, log_dir, name, env=None):
        self.binary = binary
        self.name = name
        self.log_path = os.path.join(log_dir, f"{name}.log")
        self.env = dict(os.environ, **(env or {}))
        self.server = None
        self.port = self.pid = None

    def start(self):
        try:
            self.server = Launched(self.binary, ["--ready", "/readyz"], log_path=self.log_path,
                                   env=self.env, ready_timeout=30)
        except fleet_proc.FleetError as e:
            fail(f"{self.name}: {e}")
        self.port, self.pid = self.server.port, self.server.pid
        deadline = time.time() + 15
        while time.time() < deadline:
            if self.metric("recallgate_event_listener_up") == 1:
                return self
            time.sleep(0.05)
        fail(f"{self.name}: event listener not up in 15 s; see {self.log_path}")

    def signal(self, sig):
        self.server.signal(sig)

    def stop(self, timeout=20):
        if self.server is None:
            return None
        rc = self.server.stop(timeout)
        self.server = None
        if rc is None:
            fail(f"{self.name} did not stop within {timeout} s")
        return rc

    def request(self, method, path, token=None, body=None, headers=None, timeout=10):
        c = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        h = dict(headers or {})
        if token:
            h["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body)
            h["Content-Type"] = "application/json"
        try:
            c.request(method, path, body=data, headers=h)
            r = c.getresponse()
            raw = r.read()
            try:
                doc = json.loads(raw) if raw else None
            except ValueError:
                doc = raw.decode("utf-8", "replace")
            return r.status, doc, dict(r.getheaders())
        finally:
            c.close()

    def metric(self, name):
        st, text, _ = self.request("GET", "/metrics", timeout=2)
        if st != 200:
            return None
        for line in str(text).splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
        return None


class Stream:
    """One GET /v1/events: events() yields (id, event, data) as they arrive."""

    def __init__(self, inst, tok, path="/v1/events", last_id=None, timeout=10):
        self.conn = http.client.HTTPConnection("127.0.0.1", inst.port, timeout=timeout)
        h = {"Authorization": f"Bearer {tok}", "Accept": "text/event-stream"}
        if last_id is not None:
            h["Last-Event-ID"] = str(last_id)
        self.conn.request("GET", path, headers=h)
        self.resp = self.conn.getresponse()
        self.status = self.resp.status
        self.retry = None

    def next_event(self):
        """The next event as (id, event, data dict); None at the end of the stream."""
        ev = {}
        while True:
            line = self.resp.readline()
            if not line:
                return None
            line = line.decode("utf-8").rstrip("\n")
            if line == "":
                if "data" in ev:
                    return int(ev["id"]), ev["event"], json.loads(ev["data"])
                ev = {}
                continue
            if line.startswith(":"):
                continue
            field, _, value = line.partition(": ")
            if field == "retry":
                self.retry = int(value)
            else:
                ev[field] = value

    def close(self):
        try:
            self.conn.sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        self.conn.close()


def put_mode(inst, tok, thread_id, expected, mode):
    return inst.request("PUT", f"/v1/threads/{thread_id}/memory-mode", tok,
                        {"expected_revision": expected, "mode": mode})
