"""The fleet topology of docker/compose.yaml on this machine, without Docker: a PostgreSQL
cluster of its own, `recallgate migrate`, N `recallgate serve` instances and nginx in front of
them with docker/nginx.conf, used verbatim. Real components only; Python's standard library.
The instances, their ports and the tokens come from scripts/rg-launch (fleet_proc.Launched),
like every server of the test suite; the cluster, nginx and the faults are this file's.

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

import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import time

# This cluster is killed with -9 by the outage test: acknowledged must mean durable.
# RG_FLEET_PG_OPTS replaces these, to check that a test fails without them
# (synchronous_commit=off).
PG_OPTS = os.environ.get(
    "RG_FLEET_PG_OPTS",
    "-c fsync=on -c synchronous_commit=on -c full_page_writes=on -c max_connections=100")

from fleet_proc import (Client, FleetError, Launched, Response, alive, children_of,
                        cluster_identities, fail, free_port, get_status, identity, log, metric,
                        parse_args, postmaster_pid, psql_rows, run, spawn, still_running, tail,
                        token)
from fleet_ledger import Writers, requests_served, wait_served, writes_served
from fleet_standby import Standby

# What tests use as fleet.X (the helpers live in fleet_proc.py and fleet_ledger.py).
__all__ = ["Client", "Fleet", "FleetError", "Launched", "Response", "Writers", "fail", "free_port",
           "get_status", "log", "main", "metric", "parse_args", "requests_served", "run",
           "spawn", "tail", "wait_served", "writes_served"]

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
        return postmaster_pid(self.data)

    def remember_pids(self):
        self.pids_seen |= cluster_identities(self.data)

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
    """One `recallgate serve` started by scripts/rg-launch (fleet_proc.Launched); its first
    start picks a free port, and every restart reuses it (nginx's upstream names it)."""

    def __init__(self, fleet, index, env):
        self.fleet = fleet
        self.name = f"recallgate-{index}"
        self.port = None
        self.url = None
        self.env = env
        self.server = None
        self.log_path = os.path.join(fleet.dir, f"{self.name}.log")
        self.pids_seen = set()

    @property
    def pid(self):
        return self.server.pid if self.server else None

    def start(self, ready_timeout=20, launch_args=()):
        env = dict(os.environ)
        env.update(self.env)
        args = ["--ready", "/readyz"] + list(launch_args)
        if self.port:
            args += ["--port", str(self.port)]
        self.server = Launched(self.fleet.bin, args, log_path=self.log_path, env=env,
                               ready_timeout=ready_timeout)
        self.pids_seen |= self.server.identities()
        self.port, self.url = self.server.port, self.server.url

    def signal(self, sig):
        self.server.signal(sig)

    def wait(self, timeout):
        """The exit status (negative: the signal), or None if still running."""
        return self.server.wait(timeout)

    def stop(self, timeout=15):
        """SIGTERM and wait: its exit status, or None after a SIGKILL (it did not stop)."""
        return self.server.stop(timeout) if self.server else 0

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
    every instance (RECALLGATE_TRUST_PROXY=1 is always set, as behind the gateway).
    database: what f.pg is, built as database(root, dir): Postgres (one cluster), or
    fleet_paf.Formation (pg_auto_failover: monitor, primary, synchronous standby), which
    gives the instances a multi-host DATABASE_URL and its .instance_env."""

    def __init__(self, args, instances=2, instance_env=None, name=None, database=None,
                 standby=False):
        self.root = os.path.abspath(args.root)
        self.bin = os.path.abspath(args.bin)
        self.keep = args.keep
        self.nginx = args.nginx
        self.n = instances
        self.instance_env = dict(instance_env or {})
        self.name = name or os.path.splitext(os.path.basename(sys.argv[0]))[0]
        base = os.path.join(self.root, ".test-data")
        self.dir = os.path.join(base, f"fleet-{self.name}-{os.getpid()}")
        self.database = database or Postgres
        self.pg = None
        # standby: a hot standby of the cluster (fleet_standby.py) whose URL the instances get
        # as RECALLGATE_READ_DATABASE_URL
        self.want_standby = standby
        self.standby = None
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
        self.pg = self.database(self.root, os.path.join(self.dir, "pg"))
        self.pg.init_and_start()
        env = dict(self.instance_env)
        env.setdefault("RECALLGATE_TRUST_PROXY", "1")
        env["DATABASE_URL"] = self.pg.url
        env.update(getattr(self.pg, "instance_env", {}))
        if self.want_standby:
            self.standby = Standby(self.root, os.path.join(self.dir, "standby"), self.pg)
            self.standby.start()
            env["RECALLGATE_READ_DATABASE_URL"] = self.standby.url(self.pg.url.rsplit("/", 1)[1])
        self.db_env = env
        for i in range(self.n):
            inst = Instance(self, i + 1, env)
            self.instances.append(inst)
            inst.start(launch_args=["--migrate"] if i == 0 else ())
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
                Standby(self.root, os.path.join(base, d, "standby"), None).stop()
                import fleet_paf  # a pg_auto_failover formation's keepers go first
                fleet_paf.Formation.stop_stale(os.path.join(base, d, "pg"), self.root)
                Postgres(self.root, os.path.join(base, d, "pg")).stop()
                shutil.rmtree(os.path.join(base, d), ignore_errors=True)

    def stop(self):
        """Stops everything; returns the pids of the processes it started that were still
        running 10 s after the stop (none, normally; they are then killed)."""
        if self.gateway:
            self.gateway.stop()
        for inst in self.instances:
            inst.stop()
        if self.standby:
            self.standby.stop()
        if self.pg:
            self.pg.remember_pids()
            self.pg.stop()
        seen = set()
        if self.standby:
            seen |= self.standby.pids_seen
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
        return token(self.bin, tenant, scopes, name,
                     env=dict(os.environ, DATABASE_URL=self.pg.url))

    def psql(self, sql, timeout=60):
        """Rows of a query as lists of strings (psql -tA, fields split at '|')."""
        return psql_rows(self.pg.url, sql, timeout)

    def logs_tail(self):
        parts = [f"--- {i.name}\n{tail(i.log_path, 15)}" for i in self.instances]
        if self.gateway:
            parts.append(f"--- nginx error.log\n{tail(self.gateway.error_log, 15)}")
        return "\n".join(parts)


def main(test):
    """Runs test() and turns FleetError into one line and exit 1."""
    t0 = time.monotonic()
    try:
        test()
    except FleetError as e:
        print(f"FAIL: {e}", flush=True)
        sys.exit(1)
    log(f"PASS in {time.monotonic() - t0:.1f} s")
