"""A hot standby of the fleet's cluster (docs/scaling.md): pg_basebackup -R from the primary,
streaming replication, started as the postgres OS user when run as root (initdb's rule), on a
port of its own, TCP on 127.0.0.1 only. Real PostgreSQL, nothing simulated: the tests pause
its replay, delay it (recovery_min_apply_delay) or stop it.

    sb = Standby(root, dir_, primary)   # primary: fleet.Postgres, running
    sb.start(apply_delay_ms=50)
    sb.url("recallgate")                # postgresql://postgres@127.0.0.1:PORT/recallgate
    sb.psql("select pg_wal_replay_pause()")
    sb.stop(); sb.start()
"""
import os
import shlex
import time

from fleet_proc import alive, children_of, fail, free_port, identity, log, run, tail

PG_BIN = os.environ.get("RG_PG_BIN", "/usr/lib/postgresql/15/bin")


class Standby:
    def __init__(self, root, dir_, primary):
        self.common = os.path.join(root, "scripts/lib/common.sh")
        self.dir = dir_
        self.data = os.path.join(dir_, "data")
        self.primary = primary
        self.port = None
        self.pids_seen = set()

    def _as_owner(self, script, timeout=120):
        return run(["bash", "-c", f"source {shlex.quote(self.common)} && {script}"],
                   timeout=timeout)

    def start(self, apply_delay_ms=None):
        """Takes the base backup on the first start; starts the standby and waits until it
        streams from the primary."""
        q = shlex.quote
        if not os.path.isdir(self.data):
            os.makedirs(self.dir, exist_ok=True)
            if os.getuid() == 0:
                self._as_owner(f"chown \"$RG_PG_OS_USER\": {q(self.dir)} && chmod 700 {q(self.dir)}")
            self._as_owner(f"rg_pg_as_owner {q(PG_BIN)}/pg_basebackup -h 127.0.0.1 "
                           f"-p {self.primary.port} -U postgres -D {q(self.data)} -R -X stream "
                           "-c fast")
            self.port = free_port()
        # The primary's settings (max_connections must not be lower), no Unix socket.
        opts = (f"{os.environ.get('RG_FLEET_PG_OPTS', '')} -c max_connections=100 "
                f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                "-c unix_socket_directories= -c hot_standby=on")
        if apply_delay_ms is not None:  # else the cluster's own (ALTER SYSTEM's) setting
            opts += f" -c recovery_min_apply_delay={apply_delay_ms}ms"
        self._as_owner(f"rg_pg_as_owner {q(PG_BIN)}/pg_ctl -D {q(self.data)} "
                       f"-l {q(os.path.join(self.dir, 'log'))} -w -t 60 -s "
                       f"-o {q(opts)} start")
        self.remember_pids()
        deadline = time.monotonic() + 30
        while self.psql("select status from pg_stat_wal_receiver") != [["streaming"]]:
            if time.monotonic() > deadline:
                fail(f"the standby does not stream:\n{tail(os.path.join(self.dir, 'log'))}")
            time.sleep(0.1)
        log(f"hot standby on 127.0.0.1:{self.port}")

    def url(self, dbname):
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def psql(self, sql, dbname="postgres"):
        p = run([os.path.join(PG_BIN, "psql"), "-X", "-q", "-tA", "-v", "ON_ERROR_STOP=1",
                 "-d", self.url(dbname), "-c", sql], timeout=30)
        return [line.split("|") for line in p.stdout.splitlines() if line]

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

    def stop(self):
        if self.postmaster_pid() is None:
            return
        self.remember_pids()
        self._as_owner(f"rg_pg_as_owner {shlex.quote(PG_BIN)}/pg_ctl -D "
                       f"{shlex.quote(self.data)} -m immediate -w -s stop", timeout=60)
