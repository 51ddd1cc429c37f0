"""A pg_auto_failover formation for the fleet (docs/scaling.md): a
monitor, a primary and a synchronous standby, on 127.0.0.1 only, under the fleet's
directory. Fleet starts it in place of its single cluster:

    with fleet.Fleet(args, database=fleet_paf.Formation) as f:
        paf = f.pg                      # this Formation; f.pg.url is the libpq multi-host URL
        old = paf.primary()             # a Node: .name, .port, .url
        paf.kill9(old)                  # its keeper and its PostgreSQL, SIGKILL
        paf.wait_roles(primary=paf.other(old), timeout=30)
        paf.start_keeper(old)           # it rejoins as a standby (pg_rewind)
        p = paf.switchover()            # pg_autoctl perform switchover, in the background
        paf.finish_switchover(p)

pg_autoctl refuses root, and initdb too: run as root, every command runs as the `postgres`
OS user (runuser), with a directory it owns, like scripts/lib/common.sh does for the single
cluster. The keepers' configuration and state live under the formation's directory
(XDG_CONFIG_HOME, XDG_DATA_HOME, XDG_RUNTIME_DIR), never in the postgres user's home. Each
process's identity is written to DIR/pids as it is seen, so that the next run stops a
formation whose test was killed (stop_stale). A missing pg_autoctl fails, never skips.
"""

import os
import pwd
import shlex
import shutil
import signal
import subprocess
import tempfile
import time

from fleet_proc import PG_BIN, alive, children_of, fail, free_port, identity, log, \
    postmaster_pid, run, spawn, still_running, tail
PG_AUTOCTL = os.environ.get("RG_PG_AUTOCTL") or shutil.which("pg_autoctl") or "/usr/bin/pg_autoctl"
OWNER = os.environ.get("RG_PG_OS_USER", "postgres")
FORMATION = "default"

# The monitor decides in seconds rather than the 20-30 s of its defaults. A primary is
# failed over once it has both failed a health check and not reported for
# node_considered_unhealthy_timeout; the keepers report every second (not configurable in
# pg_autoctl 2.0), so 1.5 s is one missed report with room for a loaded machine, and a
# health check every 0.5 s with one retry 0.2 s later marks a dead node bad within ~1 s (a
# connection to a dead port on loopback is refused at once; the 2 s connect timeout only
# matters for a live node on a busy machine, which must not be failed over). primary_demote_timeout is how long the monitor
# waits for the old primary's keeper to confirm it stopped before it promotes: that keeper
# was SIGKILLed, so this is pure waiting (1 s; the synchronous standby already has every
# acknowledged commit). startup_grace_period counts from the monitor's start: the test kills
# soon after building the formation.
MONITOR_SETTINGS = {
    "pgautofailover.health_check_period": 500,
    "pgautofailover.health_check_timeout": 2000,
    "pgautofailover.health_check_max_retries": 1,
    "pgautofailover.health_check_retry_delay": 200,
    "pgautofailover.node_considered_unhealthy_timeout": 1500,
    "pgautofailover.primary_demote_timeout": 1000,
    "pgautofailover.startup_grace_period": 1000,
}
# The keepers keep their defaults: timeout.network_partition_timeout only acts on a primary
# that is alive but cut off, timeout.postgresql_restart_failure_* on a PostgreSQL that died
# under a live keeper, and timeout.prepare_promotion_* are not waited on with synchronous
# replication (pg_autoctl 2.0). The kill here takes the keeper with its PostgreSQL.

# Every cluster: no 25%-of-RAM shared_buffers (pg_autoctl's tuning, for a dedicated host),
# the socket in our directory, durable commits (acknowledged must mean durable).
# And checkpoints without pacing: the pg_basebackup that pg_autoctl runs to rebuild a standby
# (when pg_rewind fails) waits for a spread checkpoint, minutes at the default 0.9.
CLUSTER_CONF = ("shared_buffers = '32MB'\nmax_connections = 100\nfsync = on\n"
                "checkpoint_completion_target = 0\n"
                "unix_socket_directories = '{sock}'\n")
HBA = ("# recallgate fleet formation: loopback only\n"
       "local all all trust\nhost all all 127.0.0.1/32 trust\n"
       "local replication all trust\nhost replication all 127.0.0.1/32 trust\n")


class Node:
    """One pg_autoctl-managed PostgreSQL (the monitor or a data node) and its keeper."""

    def __init__(self, formation, name, port):
        self.formation = formation
        self.name = name
        self.port = port
        self.data = os.path.join(formation.dir, name)
        self.log_path = os.path.join(formation.dir, f"{name}.log")
        self.keeper = None  # Popen of `pg_autoctl run` (through runuser when root)
        self.killed = False
        db = "pg_auto_failover" if name == "monitor" else "recallgate"
        self.url = f"postgresql://postgres@127.0.0.1:{port}/{db}"

    def postmaster_pid(self):
        return postmaster_pid(self.data)

    def autoctl_pid(self):
        """The `pg_autoctl run` process (runuser's child when root)."""
        if self.keeper is None or self.keeper.poll() is not None:
            return None
        if not self.formation.root_user:
            return self.keeper.pid
        kids = children_of(self.keeper.pid)
        return kids[0] if kids else None

    def processes(self):
        """The keeper (runuser, pg_autoctl and its services), PostgreSQL and its backends."""
        kids = _children()
        out = []
        todo = [p for p in (self.keeper and self.keeper.pid, self.postmaster_pid()) if p]
        while todo:
            p = todo.pop()
            if p not in out and alive(p):
                out.append(p)
                todo += kids.get(p, [])
        return out

    def __repr__(self):
        return f"{self.name} (127.0.0.1:{self.port})"


class Formation:
    """A monitor and two data nodes (node1 starts as the primary, node2 as its synchronous
    standby). .url: the libpq multi-host URL (read-write); .instance_env: what the fleet's
    instances get besides DATABASE_URL (the standby for reads, docs/scaling.md)."""

    def __init__(self, root, dir_):
        self.root = root
        self.dir = dir_
        self.root_user = os.geteuid() == 0
        self.pids_seen = set()
        self.keepers_seen = set()
        self.sock = None
        self.monitor = None
        self.nodes = []
        self.url = None
        self.instance_env = {}
        self.cli = None  # a pg_autoctl perform command running in the background

    # -- commands as the owner of the clusters

    def _cmd(self, argv):
        env = [f"XDG_CONFIG_HOME={self.dir}/xdg/config", f"XDG_DATA_HOME={self.dir}/xdg/share",
               f"XDG_RUNTIME_DIR={self.dir}/xdg/run", f"PGHOST={self.sock}",
               f"PATH={PG_BIN}:/usr/bin:/bin", f"PG_CONFIG={PG_BIN}/pg_config"]
        prefix = ["runuser", "-u", OWNER, "--"] if self.root_user else []
        return prefix + ["env"] + env + argv

    def _owned(self, cmd, timeout=120, check=True, log_path=None):
        p = subprocess.run(self._cmd(cmd), stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=timeout, cwd="/")
        if log_path:
            with open(log_path, "a") as f:
                f.write(p.stdout)
        if check and p.returncode != 0:
            fail(f"{shlex.join(cmd[:3])} exited {p.returncode}:\n{p.stdout.strip()[-3000:]}")
        return p.stdout

    def _chown(self, path):
        if self.root_user:
            pw = pwd.getpwnam(OWNER)
            os.chown(path, pw.pw_uid, pw.pw_gid)

    def _write(self, path, text, mode="w"):
        with open(path, mode) as f:
            f.write(text)
        self._chown(path)

    # -- start

    def init_and_start(self):
        t0 = time.monotonic()
        if not os.access(PG_AUTOCTL, os.X_OK):
            fail(f"pg_autoctl not found ({PG_AUTOCTL}; scripts/bootstrap installs "
                 "pg-auto-failover-cli and postgresql-15-auto-failover): the failover test "
                 "needs a real formation and does not skip")
        if self.root_user:
            try:
                pwd.getpwnam(OWNER)
            except KeyError:
                fail(f"no OS user {OWNER} to run pg_autoctl as (install postgresql-15)")
        os.makedirs(self.dir)
        if self.root_user:  # the postgres user must reach the directory (common.sh's helper)
            run(["bash", "-c", f"source {shlex.quote(self.root)}/scripts/lib/common.sh && "
                 f"rg_pg_make_traversable {shlex.quote(self.dir)}"])
        self._chown(self.dir)
        os.chmod(self.dir, 0o700)
        for d in ("xdg", "xdg/config", "xdg/share", "xdg/run"):
            os.makedirs(os.path.join(self.dir, d))
            self._chown(os.path.join(self.dir, d))
        self.sock = os.path.join(self.dir, "sock")
        if len(self.sock) + len("/.s.PGSQL.65535") >= 100:
            self.sock = tempfile.mkdtemp(prefix="rgpaf.", dir="/tmp")
        else:
            os.makedirs(self.sock)
        self._chown(self.sock)
        self._write(os.path.join(self.dir, "sockdir"), self.sock + "\n")
        ports = set()
        while len(ports) < 3:
            ports.add(free_port())
        mport, p1, p2 = sorted(ports)
        self.monitor = Node(self, "monitor", mport)
        self.nodes = [Node(self, "node1", p1), Node(self, "node2", p2)]

        # The standby (node2) is a pg_basebackup of node1: same files, same settings. Each
        # `pg_autoctl create ... --run` goes on as the node's keeper (no stop and restart).
        self._initdb([self.monitor, self.nodes[0]])
        self.start_keeper(self.monitor, [
            "create", "monitor", "--pgdata", self.monitor.data, "--pgport", str(mport),
            "--pgctl", f"{PG_BIN}/pg_ctl", "--hostname", "127.0.0.1", "--listen", "127.0.0.1",
            "--no-ssl", "--skip-pg-hba", "--run"])  # the HBA (trust, 127.0.0.1 only) is ours
        self._wait_sql(self.monitor, 60)
        self.psql(self.monitor, [f"alter system set {k} = {v}"
                                 for k, v in MONITOR_SETTINGS.items()]
                  + ["select pg_reload_conf()"])
        monitor_uri = (f"postgresql://autoctl_node@127.0.0.1:{mport}/pg_auto_failover"
                       "?sslmode=disable")
        for node, first in zip(self.nodes, ("single", "secondary")):
            self.start_keeper(node, [
                "create", "postgres", "--pgdata", node.data, "--pgport", str(node.port),
                "--pgctl", f"{PG_BIN}/pg_ctl", "--pghost", self.sock, "--hostname", "127.0.0.1",
                "--listen", "127.0.0.1", "--name", node.name, "--dbname", "recallgate",
                "--username", "postgres", "--no-ssl", "--skip-pg-hba", "--monitor", monitor_uri,
                "--run"])
            # node1 registers first, so that it is the one that starts as the primary
            self.wait_states({node.name: (first,)}, timeout=60)
        self.wait_roles(self.nodes[0], timeout=60)
        sync = self.psql(self.nodes[0], ["show synchronous_standby_names"])[0][0]
        if "pgautofailover_standby_" not in sync:
            fail(f"the primary's synchronous_standby_names is {sync!r}: no synchronous standby")
        n1, n2 = self.nodes
        self.url = (f"postgresql://postgres@127.0.0.1:{n1.port},127.0.0.1:{n2.port}/recallgate"
                    "?target_session_attrs=read-write")
        self.instance_env = {"RECALLGATE_READ_DATABASE_URL":
                             f"{n2.url}?target_session_attrs=standby"}
        self.remember_pids()
        log(f"pg_auto_failover formation in {time.monotonic() - t0:.1f} s: monitor "
            f"127.0.0.1:{mport}, {n1} primary, {n2} synchronous standby ({sync})")

    def _initdb(self, nodes):
        """initdb of these nodes at once (no fsync: a test cluster), our HBA and settings."""
        procs = [(n, subprocess.Popen(self._cmd(
            [f"{PG_BIN}/initdb", "-D", n.data, "-U", "postgres", "-E", "UTF8", "--no-locale",
             "--auth-local=trust", "--auth-host=trust", "--no-sync"]), cwd="/",
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)) for n in nodes]
        for node, p in procs:
            out = p.communicate(timeout=120)[0]
            if p.returncode != 0:
                fail(f"initdb of {node} exited {p.returncode}:\n{out[-3000:]}")
            self._write(os.path.join(node.data, "pg_hba.conf"), HBA)
            self._write(os.path.join(node.data, "postgresql.auto.conf"),
                        CLUSTER_CONF.format(sock=self.sock), "a")

    def start_keeper(self, node, args=None):
        """`pg_autoctl run` for the node, or `pg_autoctl <args>` that goes on as its keeper (it
        starts its PostgreSQL and follows the monitor)."""
        args = args or ["run", "--pgdata", node.data]
        node.keeper = spawn(self._cmd([PG_AUTOCTL] + args), node.log_path)
        node.killed = False
        # spawn() is a child of this process, so it dies with the test (PR_SET_PDEATHSIG;
        # runuser passes the SIGTERM on to pg_autoctl, which stops its PostgreSQL).
        deadline = time.monotonic() + 10
        while node.autoctl_pid() is None and time.monotonic() < deadline:
            if node.keeper.poll() is not None:
                fail(f"pg_autoctl {args[0]} for {node} exited {node.keeper.returncode}:\n"
                     f"{tail(node.log_path)}")
            time.sleep(0.02)
        self.remember_pids()

    def _wait_sql(self, node, timeout):
        deadline = time.monotonic() + timeout
        while True:
            p = run([f"{PG_BIN}/psql", "-X", "-tA", "-d", node.url, "-c", "select 1"],
                    check=False, timeout=30)
            if p.returncode == 0:
                return
            if time.monotonic() > deadline:
                fail(f"{node} does not accept connections after {timeout} s:\n"
                     f"{tail(node.log_path)}")
            time.sleep(0.1)

    # -- queries

    def psql(self, node, statements, timeout=30, check=True):
        """Rows (lists of strings) of the last statement, run on one node."""
        cmd = [f"{PG_BIN}/psql", "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1", "-d", node.url]
        for s in statements:
            cmd += ["-c", s]
        p = run(cmd, timeout=timeout, check=check)
        return [line.split("|") for line in p.stdout.splitlines() if line]

    def state(self):
        """{node name: (reported state, assigned state)} as the monitor has them."""
        rows = self.psql(self.monitor, [
            "select nodename, current_group_state, assigned_group_state "
            f"from pgautofailover.current_state('{FORMATION}') order by node_id"], check=False)
        return {r[0]: (r[1], r[2]) for r in rows if len(r) == 3}

    def node(self, name):
        return next(n for n in self.nodes if n.name == name)

    def other(self, node):
        return next(n for n in self.nodes if n is not node)

    def primary(self):
        st = self.state()
        for n in self.nodes:
            if st.get(n.name, ("",))[0] in ("primary", "wait_primary"):
                return n
        fail(f"no primary in the formation: {st}")

    def wait_roles(self, primary, timeout, sync=True):
        """Until `primary` is primary and the other node its secondary (sync: the monitor
        turned synchronous replication on, state primary; else wait_primary is enough, as
        right after a failover with the old primary down). Returns the seconds waited."""
        want = {primary.name: ("primary",) if sync else ("primary", "wait_primary")}
        if sync:
            want[self.other(primary).name] = ("secondary",)
        return self.wait_states(want, timeout)

    def wait_states(self, want, timeout):
        """Until each named node has reached (reported = assigned) one of its states."""
        t0 = time.monotonic()
        st = {}
        while time.monotonic() - t0 < timeout:
            st = self.state()
            if all(st.get(n, ("", ""))[0] in ok and st[n][0] == st[n][1]
                   for n, ok in want.items()):
                return time.monotonic() - t0
            for node in [self.monitor] + self.nodes:
                if not node.killed and node.keeper and node.keeper.poll() is not None:
                    fail(f"the keeper of {node} exited {node.keeper.returncode}:\n"
                         f"{tail(node.log_path)}")
            time.sleep(0.1)
        fail(f"the formation did not reach {want} within {timeout} s: {st}\n"
             + "\n".join(f"--- {n.name}\n{tail(n.log_path, 12)}"
                         for n in [self.monitor] + self.nodes))

    def switchover(self):
        """Starts `pg_autoctl perform switchover` (it returns once the new primary has its
        synchronous standby back); finish_switchover() waits for it and checks its status."""
        self.remember_pids()
        log_path = os.path.join(self.dir, "switchover.log")
        self.cli = spawn(self._cmd([PG_AUTOCTL, "perform", "switchover", "--pgdata",
                                    self.monitor.data, "--formation", FORMATION]), log_path)
        return self.cli

    def finish_switchover(self, proc, timeout=60):
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            rc = f"killed after {timeout} s"
        if rc != 0:
            fail(f"pg_autoctl perform switchover exited {rc}:\n"
                 f"{tail(os.path.join(self.dir, 'switchover.log'))}")

    # -- faults

    def kill9(self, node):
        """SIGKILL to the node's keeper (runuser, pg_autoctl and its services) and to its
        PostgreSQL (postmaster and every backend) at once: nothing is left to restart it or
        to write out WAL that was not yet written. Returns once they are all gone."""
        if node.postmaster_pid() is None or node.autoctl_pid() is None:
            fail(f"{node} is not running (keeper and PostgreSQL)")
        self.remember_pids()
        victims = node.processes()
        for pid in victims:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.monotonic() + 10
        while any(alive(p) for p in victims) and time.monotonic() < deadline:
            time.sleep(0.01)
        if any(alive(p) for p in victims):
            fail(f"{node}: processes survived SIGKILL: {[p for p in victims if alive(p)]}")
        node.keeper.wait(timeout=10)
        node.killed = True
        log(f"{node}: keeper and PostgreSQL killed with SIGKILL ({len(victims)} processes)")

    # -- pids and stop

    def remember_pids(self):
        for node in [self.monitor] + self.nodes:
            if node is None:
                continue
            ka = node.autoctl_pid()
            if ka:
                self.keepers_seen.add(identity(ka))
            self.pids_seen.update(identity(p) for p in node.processes())
        self.pids_seen = {i for i in self.pids_seen if i[1] is not None}
        self.keepers_seen = {i for i in self.keepers_seen if i[1] is not None}
        if os.path.isdir(self.dir):
            with open(os.path.join(self.dir, "pids"), "w") as f:
                for kind, ids in (("keeper", self.keepers_seen), ("proc", self.pids_seen)):
                    f.writelines(f"{kind} {p} {s}\n" for p, s in sorted(ids))

    def stop(self):
        """SIGTERM to every `pg_autoctl run` (each stops its PostgreSQL, fast mode), then
        pg_ctl stop for any PostgreSQL still up; the fleet's exit check SIGKILLs leftovers."""
        if self.cli is not None and self.cli.poll() is None:
            self.cli.kill()  # runuser, or pg_autoctl itself: a client of the monitor
            self.cli.wait()
        self.remember_pids()
        for node in self.nodes + [self.monitor]:
            if node is not None and node.autoctl_pid():
                os.kill(node.autoctl_pid(), signal.SIGTERM)
        for node in self.nodes + [self.monitor]:
            if node is not None and node.keeper is not None:
                try:
                    node.keeper.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    log(f"{node}: pg_autoctl did not stop within 60 s")
        _stop_clusters(self.dir, self._owned)
        if self.sock and self.sock.startswith("/tmp/rgpaf."):
            shutil.rmtree(self.sock, ignore_errors=True)

    @staticmethod
    def stop_stale(dir_, root):
        """Stops what a killed run left of a formation in dir_ (nothing when dir_ holds no
        formation): its keepers first (SIGTERM: they stop their PostgreSQL), then any
        PostgreSQL still up, then SIGKILL to any process of the formation still running."""
        pids_file = os.path.join(dir_, "pids")
        if not os.path.exists(pids_file):
            return
        with open(pids_file) as f:
            rows = [line.split() for line in f if len(line.split()) == 3]
        ids = [(kind, (int(p), int(s))) for kind, p, s in rows]
        keepers = [i for kind, i in ids if kind == "keeper" and still_running(i)]
        for pid, _ in keepers:
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + 60
        while any(still_running(i) for i in keepers) and time.monotonic() < deadline:
            time.sleep(0.1)
        f = Formation(root, dir_)
        f.root_user = os.geteuid() == 0
        try:
            with open(os.path.join(dir_, "sockdir")) as s:
                f.sock = s.read().strip()
        except OSError:
            f.sock = "/tmp"
        _stop_clusters(dir_, f._owned)
        for _, i in ids:
            if still_running(i):
                os.kill(i[0], signal.SIGKILL)
        if f.sock.startswith("/tmp/rgpaf."):
            shutil.rmtree(f.sock, ignore_errors=True)


def _children():
    """{pid: [child pids]} of every process, from one pass over /proc."""
    kids = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            kids.setdefault(ppid, []).append(int(d))
    return kids


def _stop_clusters(dir_, owned):
    for name in ("node1", "node2", "monitor"):
        data = os.path.join(dir_, name)
        if os.path.exists(os.path.join(data, "postmaster.pid")):
            owned([f"{PG_BIN}/pg_ctl", "-D", data, "-m", "fast", "-w", "-t", "60", "-s",
                   "stop"], timeout=90, check=False)
