"""The fleet topology of docker/compose.yaml on this machine, without Docker: a PostgreSQL
cluster of its own, `recallgate migrate`, N `recallgate serve` instances and nginx in front of
them with docker/nginx.conf, used verbatim. Real components only; Python's standard library.

    import fleet
    args = fleet.parse_args("what this test checks")
    with fleet.Fleet(args) as f:          # starts everything; stops everything on exit
        token = f.token("scopes,comma,separated")
        c = fleet.Client(f.gateway_url)   # or f.instances[0].url: one instance directly
        r = c.request("PUT", "/v1/threads/t/memory-mode", token, {...})
        f.instances[0].stop()             # SIGTERM; returns the exit status
        f.instances[0].start()            # same port, waits for /readyz 200
        f.pg.kill9(); f.pg.start()        # the postmaster, restarted on the same port
        f.psql("select ...")              # rows as lists of strings

Everything it starts is stopped on exit, on an exception and on SIGTERM/SIGINT (turned into
SystemExit), and the exit checks that no process it started is left. Children die with this
process (PR_SET_PDEATHSIG) if it is killed; a cluster left by a killed run is removed by the
next run (its directory names a dead pid). A missing nginx or PostgreSQL is a failure, never a
skip. See tests/fleet/README.md for how to add a test.
"""

import argparse
import ctypes
import http.client
import json
import os
import random
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time

PG_BIN = os.environ.get("RG_PG_BIN", "/usr/lib/postgresql/15/bin")
# This cluster is killed with -9 by the outage test: acknowledged must mean durable.
# RG_FLEET_PG_OPTS replaces these, to check that a test fails without them
# (synchronous_commit=off).
PG_OPTS = os.environ.get(
    "RG_FLEET_PG_OPTS",
    "-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=100")


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


_ports_taken = set()


def free_port():
    """A TCP port on 127.0.0.1 below the ephemeral range (as scripts/lib/common.sh picks)."""
    lo, hi = 20000, 32767
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            eph = int(f.read().split()[0])
            if eph > lo + 1000:
                hi = eph - 1
    except (OSError, ValueError):
        pass
    for _ in range(200):
        port = random.randint(lo, hi)
        if port in _ports_taken:
            continue
        s = socket.socket()
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            continue
        finally:
            s.close()
        _ports_taken.add(port)
        return port
    fail("no free TCP port on 127.0.0.1")


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


# ---------------------------------------------------------------------------------------------
# Components


class Postgres:
    """A cluster of the fleet's own under DIR (scripts/lib/common.sh's rg_pg_start: the
    postgres OS user when run as root, trust on 127.0.0.1 only), durable settings, and a port
    that stays the same across kill -9 and restart (the instances keep their DATABASE_URL)."""

    def __init__(self, root, dir_):
        self.root = root
        self.dir = dir_
        self.start_cmd = None
        self.url = None
        self.port = None
        self.data = None
        self.pids_seen = set()

    def init_and_start(self):
        script = (f"source {shlex.quote(os.path.join(self.root, 'scripts/lib/common.sh'))} && "
                  f"rg_pg_start {shlex.quote(self.dir)} >&2 && "
                  'printf "%s\\n" "$DATABASE_URL" "$RG_PG_START_CMD" "$RG_PG_PORT" "$RG_PG_DATA"')
        env = dict(os.environ, RG_PG_EXTRA_OPTS=PG_OPTS, RG_SCRIPT_NAME="fleet")
        p = run(["bash", "-c", script], timeout=120, env=env)
        self.url, self.start_cmd, port, self.data = p.stdout.strip().split("\n")[-4:]
        self.port = int(port)
        self.remember_pids()
        log(f"PostgreSQL on 127.0.0.1:{self.port} ({PG_OPTS})")

    def postmaster_pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                pid = int(f.readline())
        except (OSError, ValueError):
            return None
        return pid if alive(pid) else None

    def remember_pids(self):
        pm = self.postmaster_pid()
        if pm:
            self.pids_seen.update(identity(p) for p in [pm] + children_of(pm))

    def kill9(self):
        """SIGKILL to the postmaster and every process of the cluster at once: a crash, in
        which WAL that a backend had not yet written out is lost with it (killing the
        postmaster alone lets its orphans finish writing)."""
        pm = self.postmaster_pid()
        if pm is None:
            fail("PostgreSQL is not running")
        self.remember_pids()
        victims = [pm] + children_of(pm)
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while any(alive(p) for p in victims) and time.monotonic() < deadline:
            time.sleep(0.01)
        log(f"PostgreSQL killed with SIGKILL: postmaster {pm} and {len(victims) - 1} children")

    def start(self, timeout=30):
        """Start again on the same port (retried while a killed cluster's shared memory or
        port is still held)."""
        deadline = time.monotonic() + timeout
        while True:
            p = subprocess.run(["sh", "-c", self.start_cmd], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if p.returncode == 0:
                self.remember_pids()
                return
            if time.monotonic() > deadline:
                fail(f"PostgreSQL did not start again: {p.stdout.strip()}\n"
                     f"{tail(os.path.join(self.dir, 'log'))}")
            time.sleep(0.2)

    def stop(self):
        script = (f"source {shlex.quote(os.path.join(self.root, 'scripts/lib/common.sh'))} && "
                  f"rg_pg_stop {shlex.quote(self.dir)}")
        subprocess.run(["bash", "-c", script], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=90)


class Instance:
    """One `recallgate serve` on a fixed loopback port."""

    def __init__(self, fleet, index, port, env):
        self.fleet = fleet
        self.name = f"recallgate-{index}"
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.env = env
        self.proc = None
        self.log_path = os.path.join(fleet.dir, f"{self.name}.log")
        self.pids_seen = set()

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def start(self, ready_timeout=20):
        env = dict(os.environ)
        env.update(self.env)
        env["RECALLGATE_ADDR"] = f"127.0.0.1:{self.port}"
        self.proc = spawn([self.fleet.bin, "serve"], self.log_path, env=env)
        self.pids_seen.add(identity(self.proc.pid))
        deadline = time.monotonic() + ready_timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                fail(f"{self.name} exited {self.proc.returncode} at start:\n"
                     f"{tail(self.log_path)}")
            if get_status(self.url, "/readyz", timeout=1.0) == 200:
                return
            time.sleep(0.05)
        fail(f"{self.name} not ready within {ready_timeout} s:\n{tail(self.log_path)}")

    def signal(self, sig):
        self.proc.send_signal(sig)

    def wait(self, timeout):
        """The exit status (negative: the signal), or None if still running."""
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def stop(self, timeout=15):
        """SIGTERM and wait: its exit status, or None after a SIGKILL (it did not stop)."""
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else 0
        self.proc.terminate()
        status = self.wait(timeout)
        if status is None:
            self.proc.kill()
            self.proc.wait()
        return status

    def metrics(self):
        c = Client(self.url, timeout=5)
        try:
            r = c.request("GET", "/metrics")
        finally:
            c.close()
        if r.status != 200:
            fail(f"{self.name} /metrics answered {r.label()}")
        return r.body.decode()


class Gateway:
    """nginx in the foreground (master + workers) with docker/nginx.conf verbatim: the
    directory holds a symlink to it and the two files it includes from recallgate/."""

    def __init__(self, fleet, port, nginx):
        self.fleet = fleet
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.nginx = nginx
        self.dir = os.path.join(fleet.dir, "nginx")
        self.proc = None
        self.pids_seen = set()
        self.error_log = os.path.join(self.dir, "error.log")
        self.access_log = os.path.join(self.dir, "access.log")

    def configure(self, instances):
        repo_conf = os.path.join(self.fleet.root, "docker", "nginx.conf")
        compose_upstreams = os.path.join(self.fleet.root, "docker", "recallgate", "upstreams.conf")
        os.makedirs(os.path.join(self.dir, "recallgate"))
        os.makedirs(os.path.join(self.dir, "tmp"))
        os.symlink(repo_conf, os.path.join(self.dir, "nginx.conf"))
        # The compose file's server lines with loopback addresses: the same parameters
        # (max_fails, fail_timeout) as in docker compose.
        with open(compose_upstreams) as f:
            compose = f.read()
        lines = []
        for line in compose.splitlines():
            if line.lstrip().startswith("server "):
                words = line.split()
                i = int(words[1].split(":")[0].rsplit("-", 1)[1]) - 1
                words[1] = f"127.0.0.1:{instances[i].port}"
                line = " ".join(words)
            lines.append(line)
        with open(os.path.join(self.dir, "recallgate", "upstreams.conf"), "w") as f:
            f.write("\n".join(lines) + "\n")
        t = os.path.join(self.dir, "tmp")
        with open(os.path.join(self.dir, "recallgate", "server.conf"), "w") as f:
            f.write(f"listen 127.0.0.1:{self.port};\n"
                    f"access_log {self.access_log} recallgate;\n"
                    f"client_body_temp_path {t}/body;\nproxy_temp_path {t}/proxy;\n"
                    f"fastcgi_temp_path {t}/fastcgi;\nuwsgi_temp_path {t}/uwsgi;\n"
                    f"scgi_temp_path {t}/scgi;\n")

    def globals(self):
        g = f"daemon off; master_process on; pid {self.dir}/nginx.pid;"
        if os.geteuid() == 0:
            g += " user root;"  # the workers write the temporary files under self.dir
        return g

    def start(self):
        conf = os.path.join(self.dir, "nginx.conf")
        cmd = [self.nginx, "-p", self.dir, "-c", conf, "-e", self.error_log, "-g", self.globals()]
        t = run(cmd[:1] + ["-t", "-q"] + cmd[1:], check=False)
        if t.returncode != 0:
            fail(f"nginx -t refused docker/nginx.conf: {t.stderr.strip()}\n{tail(self.error_log)}")
        self.proc = spawn(cmd, os.path.join(self.dir, "stderr.log"))
        self.pids_seen.add(identity(self.proc.pid))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                fail(f"nginx exited {self.proc.returncode}:\n{tail(self.error_log)}")
            if get_status(self.url, "/healthz", timeout=1.0) == 200:
                self.pids_seen.update(identity(p) for p in children_of(self.proc.pid))
                return
            time.sleep(0.05)
        fail(f"nginx did not answer within 10 s:\n{tail(self.error_log)}")

    def retried(self):
        """Requests that nginx passed to another instance after a failed attempt (the access
        log's upstream= lists every instance tried)."""
        with open(self.access_log) as f:
            return sum(1 for line in f if "," in line.split("upstream=", 1)[-1].split(" ", 1)[0])

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.pids_seen.update(identity(p) for p in children_of(self.proc.pid))
        self.proc.send_signal(signal.SIGQUIT)  # graceful: workers finish their requests
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def find_nginx(name):
    path = shutil.which(name) or (shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
                                  if name == "nginx" else None)
    if not path:
        fail(f"nginx not found ({name}; scripts/bootstrap installs it): the fleet tests need "
             "a real gateway and do not skip")
    return path


class Fleet:
    """PostgreSQL + migrate + N instances + nginx. instance_env: extra environment for
    every instance (RECALLGATE_TRUST_PROXY=1 is always set, as behind the gateway)."""

    def __init__(self, args, instances=2, instance_env=None, name=None):
        self.root = os.path.abspath(args.root)
        self.bin = os.path.abspath(args.bin)
        self.keep = args.keep
        self.nginx = args.nginx
        self.n = instances
        self.instance_env = dict(instance_env or {})
        self.name = name or os.path.splitext(os.path.basename(sys.argv[0]))[0]
        base = os.path.join(self.root, ".test-data")
        self.dir = os.path.join(base, f"fleet-{self.name}-{os.getpid()}")
        self.pg = None
        self.instances = []
        self.gateway = None
        self.ok = False

    # -- the context manager

    def __enter__(self):
        self._old = {s: signal.signal(s, self._on_signal) for s in (signal.SIGTERM, signal.SIGINT)}
        try:
            self.start()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def __exit__(self, exc_type, exc, tb):
        left = self.stop()
        for s, h in self._old.items():
            signal.signal(s, h)
        if exc_type is None and left:
            raise FleetError(f"processes left running after the stop: {left}")
        if exc_type is None and not self.keep:
            shutil.rmtree(self.dir, ignore_errors=True)
        elif exc_type is not None:
            log(f"logs kept in {self.dir}")
        return False

    @staticmethod
    def _on_signal(sig, frame):
        raise SystemExit(128 + sig)

    # -- start and stop

    def start(self):
        t0 = time.monotonic()
        self.nginx = find_nginx(self.nginx)
        if not os.access(self.bin, os.X_OK):
            fail(f"{self.bin} is not an executable")
        self._remove_stale()
        os.makedirs(self.dir)
        self.pg = Postgres(self.root, os.path.join(self.dir, "pg"))
        self.pg.init_and_start()
        env = dict(self.instance_env)
        env.setdefault("RECALLGATE_TRUST_PROXY", "1")
        env["DATABASE_URL"] = self.pg.url
        self.db_env = env
        run([self.bin, "migrate"], env=dict(os.environ, DATABASE_URL=self.pg.url))
        for i in range(self.n):
            inst = Instance(self, i + 1, free_port(), env)
            self.instances.append(inst)
            inst.start()
        self.gateway = Gateway(self, free_port(), self.nginx)
        self.gateway.configure(self.instances)
        self.gateway.start()
        log(f"{self.n} instances behind nginx at {self.gateway.url}, "
            f"started in {time.monotonic() - t0:.1f} s")

    def _remove_stale(self):
        """Directories of earlier runs that were killed: their clusters are stopped."""
        base = os.path.dirname(self.dir)
        if not os.path.isdir(base):
            return
        for d in os.listdir(base):
            if not d.startswith("fleet-"):
                continue
            pid = d.rsplit("-", 1)[-1]
            if pid.isdigit() and not alive(int(pid)):
                log(f"removing the stale {d}")
                Postgres(self.root, os.path.join(base, d, "pg")).stop()
                shutil.rmtree(os.path.join(base, d), ignore_errors=True)

    def stop(self):
        """Stops everything; returns the pids of the processes it started that were still
        running 10 s after the stop (none, normally; they are then killed)."""
        if self.gateway:
            self.gateway.stop()
        for inst in self.instances:
            inst.stop()
        if self.pg:
            self.pg.remember_pids()
            self.pg.stop()
        seen = set()
        if self.gateway:
            seen |= self.gateway.pids_seen
        for inst in self.instances:
            seen |= inst.pids_seen
        if self.pg:
            seen |= self.pg.pids_seen
        deadline = time.monotonic() + 10
        left = [i for i in seen if still_running(i)]
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [i for i in left if still_running(i)]
        for ident in left:
            if still_running(ident):  # never a later process that got the pid
                try:
                    os.kill(ident[0], signal.SIGKILL)
                except OSError:
                    pass
        return sorted(pid for pid, _ in left)

    # -- helpers

    @property
    def gateway_url(self):
        return self.gateway.url

    def token(self, scopes, tenant=None, name="fleet"):
        """A new bearer token (of a new tenant unless one is named)."""
        tenant = tenant or f"fleet-{os.getpid()}-{random.getrandbits(32):08x}"
        p = run([self.bin, "token", "create", "--tenant", tenant, "--scopes", scopes,
                 "--name", name], env=dict(os.environ, DATABASE_URL=self.pg.url))
        return p.stdout.strip()

    def psql(self, sql, timeout=60):
        """Rows of a query as lists of strings (psql -tA, fields split at '|')."""
        p = run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
                 "-d", self.pg.url, "-c", sql], timeout=timeout)
        return [line.split("|") for line in p.stdout.splitlines() if line]

    def logs_tail(self):
        parts = [f"--- {i.name}\n{tail(i.log_path, 15)}" for i in self.instances]
        if self.gateway:
            parts.append(f"--- nginx error.log\n{tail(self.gateway.error_log, 15)}")
        return "\n".join(parts)


# ---------------------------------------------------------------------------------------------
# Load with a ledger of acknowledged writes


class Writers:
    """Threads that write through one URL until stop(), keeping a ledger of what was
    acknowledged (2xx) and of every answer that was not.

    kinds: a list with one entry per thread:
      "mode"    PUT /v1/threads/{own thread}/memory-mode, a compare-and-swap on the revision
                that the last answer named (after a failure it reads the revision back);
                the ledger has (thread_id, revision) per acknowledged write;
      "source"  POST /v1/memory/sources with unique content (not idempotent: no operation id),
                the ledger has the source_id per acknowledged write.
    pace_s: a pause between requests, so that the suite's other tests (ctest -j2) keep a core.
    """

    def __init__(self, url, token, kinds, pace_s=0.0, timeout=30.0):
        import threading
        self.url = url
        self.token = token
        self.kinds = kinds
        self.pace_s = pace_s
        self.timeout = timeout
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.acked_modes = []    # (thread_id, revision)
        self.acked_sources = []  # source_id
        self.answers = []        # (t_monotonic_sent, elapsed_s, label, method) of every answer
        self.tag = f"{os.getpid()}-{random.getrandbits(32):08x}"
        self.threads = [threading.Thread(target=self._run, args=(i, k), daemon=True)
                        for i, k in enumerate(kinds)]

    def start(self):
        for t in self.threads:
            t.start()
        return self

    def stop(self):
        self.stopping.set()
        for t in self.threads:
            t.join(timeout=self.timeout + 5)
            if t.is_alive():
                fail("a writer did not stop: a request hangs")

    def _note(self, t0, r, method):
        with self.lock:
            self.answers.append((t0, r.elapsed, r.label(), method))

    def _run(self, i, kind):
        c = Client(self.url, timeout=self.timeout)
        try:
            if kind == "mode":
                self._modes(c, f"fleet-{self.tag}-w{i}")
            else:
                self._sources(c, i)
        finally:
            c.close()

    def _modes(self, c, thread_id):
        path = f"/v1/threads/{thread_id}/memory-mode"
        rev, n = 0, 0
        while not self.stopping.is_set():
            n += 1
            body = {"expected_revision": rev, "mode": "disabled" if n % 2 else "enabled"}
            t0 = time.monotonic()
            r = c.request("PUT", path, self.token, body)
            self._note(t0, r, "PUT")
            if r.status == 200:
                rev = r.json["revision"]
                with self.lock:
                    self.acked_modes.append((thread_id, rev))
            else:
                # Unknown whether it was applied: read the revision back before going on.
                while not self.stopping.is_set():
                    t0 = time.monotonic()
                    g = c.request("GET", path, self.token)
                    self._note(t0, g, "GET")
                    if g.status == 200:
                        rev = g.json["revision"]
                        break
                    time.sleep(0.05)
            if self.pace_s:
                time.sleep(self.pace_s)

    def _sources(self, c, i):
        n = 0
        while not self.stopping.is_set():
            n += 1
            body = {"source_kind": "note", "content": f"fleet ledger {self.tag} w{i} n{n}"}
            t0 = time.monotonic()
            r = c.request("POST", "/v1/memory/sources", self.token, body)
            self._note(t0, r, "POST")
            if r.status == 201:
                with self.lock:
                    self.acked_sources.append(r.json["source_id"])
            if self.pace_s:
                time.sleep(self.pace_s)

    def failures(self, since=None, until=None, answered=False):
        """{label: count} of the answers that were not 2xx, of the requests sent (or, with
        answered, answered) within [since, until) on time.monotonic()'s clock."""
        out = {}
        with self.lock:
            for t0, elapsed, label, _ in self.answers:
                t = t0 + elapsed if answered else t0
                if since is not None and t < since or until is not None and t >= until:
                    continue
                if not label[:1] == "2":
                    out[label] = out.get(label, 0) + 1
        return out

    def lost(self, f):
        """The acknowledged writes that the database does not have (checked with psql)."""
        lost = []
        if self.acked_modes:
            rows = f.psql("select resource_id || ' ' || revision_after from audit_log "
                          "where resource_type = 'thread' and action = "
                          "'thread.memory_mode.updated' and resource_id like "
                          f"'fleet-{self.tag}-%'")
            have = {r[0] for r in rows}
            lost += [f"{t} revision {v}" for t, v in self.acked_modes if f"{t} {v}" not in have]
        if self.acked_sources:
            rows = f.psql("select record_id from memory_records where content like "
                          f"'fleet ledger {self.tag} %'")
            have = {r[0] for r in rows}
            lost += [s for s in self.acked_sources if s not in have]
        return lost

    def summary(self):
        with self.lock:
            n = len(self.answers)
        return (f"{n} answers, {len(self.acked_modes)} memory-mode writes and "
                f"{len(self.acked_sources)} sources acknowledged")


def requests_served(inst, *labels):
    """Requests this process of the instance has answered (its counters start at 0) whose
    series holds any of labels (e.g. 'method="PUT"', 'route="/mcp"')."""
    n = 0
    for line in inst.metrics().splitlines():
        if line.startswith("recallgate_http_requests_total{") and any(
                label in line for label in labels):
            n += int(float(line.split()[-1]))
    return n


def writes_served(inst):
    return requests_served(inst, 'method="PUT"', 'method="POST"')


def wait_served(inst, timeout=10):
    """Until a restarted instance answers writes again: the gateway took it back (nginx
    keeps a failed instance out for fail_timeout, 2 s)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if writes_served(inst) > 0:
            return
        time.sleep(0.1)
    fail(f"{inst.name} took no writes within {timeout} s of being ready again")


def main(test):
    """Runs test() and turns FleetError into one line and exit 1."""
    t0 = time.monotonic()
    try:
        test()
    except FleetError as e:
        print(f"FAIL: {e}", flush=True)
        sys.exit(1)
    log(f"PASS in {time.monotonic() - t0:.1f} s")
