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

from fleet_proc import (PG_BIN, cluster_identities, fail, free_port, log, postmaster_pid,
                        psql_rows, run, tail)


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
        return psql_rows(self.url(dbname), sql, timeout=30)

    def remember_pids(self):
        self.pids_seen |= cluster_identities(self.data)

    def stop(self):
        if postmaster_pid(self.data) is None:
            return
        self.remember_pids()
        self._as_owner(f"rg_pg_as_owner {shlex.quote(PG_BIN)}/pg_ctl -D "
                       f"{shlex.quote(self.data)} -m immediate -w -s stop", timeout=60)
