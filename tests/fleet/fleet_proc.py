"""Processes, ports and HTTP for the fleet tests: failures and logging, children that die
with the test, scripts/rg-launch (servers, databases, tokens, free ports: Launched), and a
small HTTP client. fleet.py re-exports what tests use
(fleet.Client, fleet.fail, fleet.log, ...); tests import fleet, not this module."""

import argparse
import ctypes
import http.client
import json
import os
import select
import shlex
import signal
import subprocess
import time

PG_BIN = os.environ.get("RG_PG_BIN", "/usr/lib/postgresql/15/bin")

class FleetError(Exception):
    pass


def log(msg):
    print(f"fleet: {msg}", flush=True)


def fail(msg):
    """A test's failure: one clear line, exit 1 (the `with` block tears everything down)."""
    raise FleetError(msg)


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--root", required=True, help="the repository (docker/nginx.conf, scripts/)")
    p.add_argument("--bin", required=True, help="the recallgate binary under test")
    p.add_argument("--nginx", default=os.environ.get("RG_NGINX", "nginx"),
                   help="the nginx binary (default: nginx on PATH, then /usr/sbin/nginx)")
    p.add_argument("--keep", action="store_true", help="keep the fleet's directory on success")
    return p.parse_args()


def run(cmd, timeout=60, check=True, env=None):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout, env=env)
    if check and p.returncode != 0:
        fail(f"{shlex.join(cmd)} exited {p.returncode}: {p.stderr.strip()[-2000:]}")
    return p


_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    # PR_SET_PDEATHSIG = 1: SIGTERM when the thread that forked this child dies, so every
    # child is spawned from the main thread.
    _libc.prctl(1, signal.SIGTERM, 0, 0, 0)
    # Its own process group: a Ctrl-C in the terminal reaches the harness, which stops the
    # children in order (instances drain), rather than every process at once.
    os.setpgrp()


def spawn(cmd, log_path, env=None):
    out = open(log_path, "ab")
    try:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=out, stderr=out, env=env,
                                preexec_fn=_die_with_parent, close_fds=True)
    finally:
        out.close()


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def start_time(pid):
    """The process's start time (clock ticks since boot), or None when there is none: with
    the pid, it names one process even after its pid is reused (pid_max can be 32768)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[19])


def identity(pid):
    """(pid, start time): what the leftover check and any SIGKILL go by."""
    return (pid, start_time(pid))


def still_running(ident):
    """The process named by identity() is still running (not a later one with its pid)."""
    pid, started = ident
    return started is not None and start_time(pid) == started


def postmaster_pid(data_dir):
    """The running postmaster of the PostgreSQL data directory, or None."""
    try:
        with open(os.path.join(data_dir, "postmaster.pid")) as f:
            pid = int(f.readline())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


def cluster_identities(data_dir):
    """identity() of the cluster's postmaster and its children (none when it is down)."""
    pm = postmaster_pid(data_dir)
    return {identity(p) for p in [pm] + children_of(pm)} if pm else set()


def psql_rows(url, sql, timeout=60):
    """Rows of a query as lists of strings (psql -tA, fields split at '|')."""
    p = run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
             "-d", url, "-c", sql], timeout=timeout)
    return [line.split("|") for line in p.stdout.splitlines() if line]


def children_of(pid):
    kids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    kids.append(int(d))
        except (OSError, IndexError, ValueError):
            pass
    return kids


def tail(path, n=30):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-n:])
    except OSError:
        return "(no log)\n"


# ---------------------------------------------------------------------------------------------
# scripts/rg-launch: every server, database, token and port of these tests comes from it

LAUNCH = os.environ.get("RG_LAUNCH") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts", "rg-launch")


def free_port():
    """A free TCP port on 127.0.0.1 (`rg-launch port`: scripts/lib/common.sh's rg_free_port)."""
    return int(run([LAUNCH, "port"], timeout=30).stdout.strip())


def launch_once(args, env=None):
    """The JSON of a run of rg-launch that starts nothing lasting (--no-server, tokens)."""
    p = run([LAUNCH, "--no-server"] + args, timeout=120, env=env)
    return json.loads(p.stdout.strip().splitlines()[-1])


def token(binary, tenant, scopes, name="test", env=None):
    """A new bearer token (scopes: a list or a comma-separated string)."""
    if not isinstance(scopes, str):
        scopes = ",".join(scopes)
    return launch_once(["--bin", binary, "--token", f"{name}:{tenant}:{scopes}"],
                       env=env)["tokens"][name]


class Launched:
    """One run of scripts/rg-launch that holds something: `recallgate serve` (pid, port, url,
    log) and/or a database of its own (database_url, database), with its tokens. The launcher
    is this process's child and ends when this process dies (its standard input closes);
    the server it started is a grandchild, signalled by pid.

        s = Launched(binary, ["--ready", "/readyz"], log_path="x.log", env={...})
        s.url, s.port, s.pid, s.tokens["admin"]
        s.signal(signal.SIGTERM); s.wait(10)   # the exit status (negative: the signal)
        s.stop()                               # SIGTERM and wait; SIGKILL after timeout
    """

    def __init__(self, binary, args=(), log_path=None, env=None, ready_timeout=60):
        cmd = [LAUNCH, "--bin", binary, "--ready-timeout", str(ready_timeout)] + list(args)
        if log_path:
            cmd += ["--log", log_path]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     env=env, preexec_fn=_die_with_parent, close_fds=True)
        self._buf = b""
        self.status = None
        line = self._line(ready_timeout + 30)
        if line is None:
            self.proc.kill()
            rc = self.proc.wait()
            fail(f"rg-launch {shlex.join(cmd[1:])} failed ({rc}; its stderr above)"
                 + (f":\n{tail(log_path)}" if log_path else ""))
        self.info = json.loads(line)
        self.pid = self.info["pid"]
        self.port = self.info["port"]
        self.url = self.info["url"]
        self.tokens = self.info["tokens"]
        self.database_url = self.info["database_url"]
        self.database = self.info["database"]
        self.running = self.pid is not None

    def _line(self, timeout):
        """The launcher's next line of JSON, or None (timeout, or it ended)."""
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self._buf:
            left = max(0.0, deadline - time.monotonic())  # 0: look once
            if not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 4096)
            if not chunk:
                return None
            self._buf += chunk
        line, self._buf = self._buf.split(b"\n", 1)
        return line.decode()

    def identities(self):
        """identity() of the launcher and of the server (for a leftover check)."""
        return {identity(p) for p in (self.proc.pid, self.pid) if p}

    def signal(self, sig):
        if self.running:
            os.kill(self.pid, sig)

    def wait(self, timeout):
        """The server's exit status (negative: the signal that ended it), or None while it
        still runs."""
        if self.running:
            line = self._line(timeout)
            if line is None:
                return None
            st = json.loads(line)["exit"]
            self.status = -(st - 128) if st > 128 else st
            self.running = False
            self.close()
        return self.status

    def stop(self, timeout=20):
        """SIGTERM and wait: the exit status, or None after a SIGKILL (it did not stop)."""
        if not self.running:
            return self.status
        self.signal(signal.SIGTERM)
        st = self.wait(timeout)
        if st is None:
            self.signal(signal.SIGKILL)
            self.wait(30)
        return st

    def close(self):
        """Ends the launcher (a stop request: a server it holds stops, its database is
        dropped) and reaps it."""
        if self.proc.stdin:
            self.proc.stdin.close()
            self.proc.stdin = None
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc.stdout.close()


# ---------------------------------------------------------------------------------------------
# HTTP


class Response:
    def __init__(self, status, headers, body, elapsed, error=None):
        self.status = status  # 0: no answer (error says why)
        self.headers = headers
        self.body = body
        self.elapsed = elapsed
        self.error = error
        self.json = None
        if body:
            try:
                self.json = json.loads(body)
            except ValueError:
                pass

    @property
    def code(self):
        """The problem code of an error answer, else None."""
        return self.json.get("code") if isinstance(self.json, dict) else None

    def label(self):
        """'200', '503 database_unavailable', 'no answer: ConnectionResetError'."""
        if self.status == 0:
            return f"no answer: {self.error}"
        return f"{self.status} {self.code}" if self.code else str(self.status)

    def header(self, name):
        for k, v in self.headers:
            if k.lower() == name.lower():
                return v
        return None


class Client:
    """One kept-alive HTTP/1.1 connection (like an agent's), reopened after a failure.
    Not thread-safe: one per thread."""

    def __init__(self, base_url, timeout=30.0):
        hostport = base_url.split("://", 1)[1].rstrip("/")
        self.host, port = hostport.rsplit(":", 1)
        self.port = int(port)
        self.timeout = timeout
        self.conn = None

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def request(self, method, path, token=None, body=None, headers=None):
        hdrs = {}
        if token:
            hdrs["Authorization"] = f"Bearer {token}"
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        t0 = time.monotonic()
        if self.conn is None:
            self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        try:
            self.conn.request(method, path, body=data, headers=hdrs)
            resp = self.conn.getresponse()
            payload = resp.read()
            r = Response(resp.status, resp.getheaders(), payload, time.monotonic() - t0)
            if resp.will_close:
                self.close()
            return r
        except (OSError, http.client.HTTPException) as e:
            self.close()
            return Response(0, [], b"", time.monotonic() - t0, error=type(e).__name__)


def get_status(url, path, timeout=2.0):
    c = Client(url, timeout=timeout)
    try:
        return c.request("GET", path).status
    finally:
        c.close()


def metric(text, series):
    """The value of the /metrics sample `series` (labels included), or None."""
    for line in text.splitlines():
        if line.startswith(series + " "):
            return float(line.split()[-1])
    return None
