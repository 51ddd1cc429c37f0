# shellcheck shell=bash
# Shared helpers for scripts/run, scripts/test and scripts/bench. Source it; do not run it.
#
#   rg_bootstrap          install missing Debian packages (scripts/bootstrap)
#   rg_pg_start DIR       start (initdb first if needed) a private PostgreSQL 15 cluster
#                         under DIR and export DATABASE_URL, RG_PG_STOP_CMD, RG_PG_START_CMD
#   rg_pg_stop DIR        stop that cluster (fast shutdown); leaves DIR in place
#   rg_free_port          print a free TCP port on 127.0.0.1
#   rg_clean_clone DEST   clone this checkout's HEAD into DEST with the working tree's
#                         uncommitted changes laid over it (what is about to be committed)
#
# Layout of a cluster directory DIR (owned by the postgres OS user when run as root):
#   DIR/data      the cluster (initdb -E UTF8 --no-locale, superuser "postgres", trust auth
#                 for the Unix socket and 127.0.0.1 only)
#   DIR/socket    the Unix socket directory (or a short mktemp -d one if DIR is too deep)
#   DIR/log       the server log (appended to on every start)
# The server listens on 127.0.0.1 at a free port chosen at every start and on that socket,
# nowhere else.

RG_ROOT=${RG_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
RG_PG_BIN=${RG_PG_BIN:-/usr/lib/postgresql/15/bin}
RG_PG_OS_USER=${RG_PG_OS_USER:-postgres}
# Extra server settings ("-c name=value ..."), e.g. fsync=off for throw-away clusters.
RG_PG_EXTRA_OPTS=${RG_PG_EXTRA_OPTS:-}

rg_log() { printf '%s: %s\n' "${RG_SCRIPT_NAME:-${0##*/}}" "$*" >&2; }
rg_die() { rg_log "error: $*"; exit 1; }

rg_bootstrap() { "$RG_ROOT/scripts/bootstrap"; }

# Single-quote one word for /bin/sh (and bash): abc'd -> 'abc'\''d'.
rg_shquote() { printf "'%s'" "${1//\'/\'\\\'\'}"; }

# rg_shjoin WORD... -> the words quoted and joined by spaces.
rg_shjoin() {
  local out="" w
  for w in "$@"; do out+="${out:+ }$(rg_shquote "$w")"; done
  printf '%s' "$out"
}

# Run a command as the OS user that owns the clusters. Root switches with runuser; any other
# user runs PostgreSQL as itself. The working directory is / so that a cwd the postgres user
# cannot enter does not matter.
rg_pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u "$RG_PG_OS_USER" -- "$@")
  else
    (cd / && "$@")
  fi
}

# The prefix (as words) that rg_pg_as_owner uses, for the exported command strings.
rg_pg_owner_prefix() {
  if [ "$(id -u)" -eq 0 ]; then
    printf '%s' "cd / && runuser -u $(rg_shquote "$RG_PG_OS_USER") --"
  else
    printf '%s' "cd / &&"
  fi
}

# Is TCP port $1 on 127.0.0.1 taken? Any socket counts, not only listeners: a client
# connection (or its TIME_WAIT) on that local port makes PostgreSQL's bind fail too.
rg_port_in_use() {
  local port=$1
  if command -v ss >/dev/null 2>&1; then
    ss -Htan "sport = :$port" 2>/dev/null | grep -q . && return 0
  fi
  # Fall back to (and double-check with) a connect attempt.
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && return 0
  return 1
}

# Print a free TCP port on 127.0.0.1, below the kernel's ephemeral range (where outgoing
# connections take their local ports): 20000..(first ephemeral port - 1), or 20000..32767.
rg_free_port() {
  local tries port lo=20000 hi=32767 eph
  if read -r eph _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null &&
     [ "$eph" -gt $((lo + 1000)) ] 2>/dev/null; then
    hi=$((eph - 1))
  fi
  for ((tries = 0; tries < 200; tries++)); do
    port=$((lo + (RANDOM * 32768 + RANDOM) % (hi - lo + 1)))
    if ! rg_port_in_use "$port"; then
      printf '%s\n' "$port"
      return 0
    fi
  done
  rg_log "error: no free TCP port found"
  return 1
}

# rg_clean_clone DEST: a clone of $RG_ROOT's HEAD in DEST (which must not exist), with the
# working tree's tracked changes, deletions and new files that git does not ignore laid over
# it. On a CI checkout that is exactly HEAD; nothing ignored (.data/, build*/) comes along.
rg_clean_clone() {
  local dest=${1:?rg_clean_clone DEST}
  git clone -q --no-hardlinks "$RG_ROOT" "$dest" || return 1
  (cd "$RG_ROOT" && git ls-files -z -m -o --exclude-standard | tar --null -T - -cf -) |
    tar -C "$dest" -xf - || return 1
  (cd "$RG_ROOT" && git ls-files -z -d) | (cd "$dest" && xargs -0 -r rm -f --)
}

# Make every ancestor of $1 traversable by the postgres OS user (o+x), only where it is
# not already; needed when the checkout lives under a root-only directory (mktemp -d, /root).
rg_pg_make_traversable() {
  local target=$1 path="" part
  [ "$(id -u)" -eq 0 ] || return 0
  local IFS=/
  for part in $target; do
    [ -n "$part" ] || continue
    path+="/$part"
    if ! runuser -u "$RG_PG_OS_USER" -- test -x "$path" 2>/dev/null; then
      rg_log "note: chmod o+x $path (so that the $RG_PG_OS_USER user can reach the cluster)"
      chmod o+x "$path"
    fi
  done
}

# rg_pg_start DIR
rg_pg_start() {
  local dir=${1:?rg_pg_start DIR}
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  local data="$dir/data" log="$dir/log" sock="$dir/socket"
  local pg_ctl="$RG_PG_BIN/pg_ctl"
  [ -x "$pg_ctl" ] || rg_die "$pg_ctl not found (is postgresql-15 installed? run scripts/bootstrap)"

  if [ "$(id -u)" -eq 0 ]; then
    id -u "$RG_PG_OS_USER" >/dev/null 2>&1 || rg_die "no OS user $RG_PG_OS_USER (install postgresql-15)"
    rg_pg_make_traversable "$dir"
    chown "$RG_PG_OS_USER": "$dir"
    chmod 700 "$dir"
  fi

  if [ ! -s "$data/PG_VERSION" ]; then
    rg_log "creating PostgreSQL cluster in $data"
    rm -rf "$data"
    rg_pg_as_owner "$RG_PG_BIN/initdb" -D "$data" -U postgres -E UTF8 --no-locale \
      --auth-local=trust --auth-host=trust >"$dir/initdb.log" 2>&1 ||
      { cat "$dir/initdb.log" >&2; rg_die "initdb failed"; }
    # Trust only the Unix socket and 127.0.0.1; nothing else may connect.
    # shellcheck disable=SC2016 # $1 is expanded by the inner sh
    rg_pg_as_owner sh -c 'cat > "$1"' sh "$data/pg_hba.conf" <<'HBA'
# recallgate private cluster: local development and tests only.
local   all          all                 trust
host    all          all   127.0.0.1/32  trust
local   replication  all                 trust
host    replication  all   127.0.0.1/32  trust
HBA
  fi

  local port
  if rg_pg_as_owner "$pg_ctl" -D "$data" status >/dev/null 2>&1; then
    # Left running by an earlier run that was killed: adopt it (and stop it like our own).
    port=$(sed -n 4p "$data/postmaster.pid")
    sock=$(sed -n 5p "$data/postmaster.pid")
    rg_log "adopting the PostgreSQL cluster already running in $data (port $port)"
  else
    # A socket path must fit in sun_path (108 bytes): keep it under 100, and plain enough
    # to go through pg_ctl's -o (a shell word) and unix_socket_directories (a list).
    local sockname="/.s.PGSQL.65535"
    if [ $(( ${#sock} + ${#sockname} )) -ge 100 ] || [[ "$sock" =~ [^A-Za-z0-9._/+-] ]]; then
      sock=$(mktemp -d /tmp/rgpg.XXXXXX)
      [ "$(id -u)" -ne 0 ] || chown "$RG_PG_OS_USER": "$sock"
      rg_log "note: using the short socket directory $sock (the path of $dir is too long or unusual)"
    else
      rg_pg_as_owner mkdir -p "$sock"
    fi
    local attempt ok=0
    for attempt in 1 2 3 4 5 6; do
      port=$(rg_free_port) || return 1
      local opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$sock"
      [ -z "$RG_PG_EXTRA_OPTS" ] || opts+=" $RG_PG_EXTRA_OPTS"
      if rg_pg_as_owner "$pg_ctl" -D "$data" -l "$log" -w -t 60 -s -o "$opts" start; then
        ok=1
        break
      fi
      rg_log "PostgreSQL did not start (attempt $attempt); last log lines:"
      tail -n 5 "$log" >&2 || true
    done
    [ "$ok" -eq 1 ] || rg_die "could not start PostgreSQL in $data (see $log)"
  fi

  local start_opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$sock"
  [ -z "$RG_PG_EXTRA_OPTS" ] || start_opts+=" $RG_PG_EXTRA_OPTS"
  RG_PG_START_CMD="$(rg_pg_owner_prefix) $(rg_shjoin "$pg_ctl" -D "$data" -l "$log" -w -t 60 -s -o "$start_opts" start)"
  RG_PG_STOP_CMD="$(rg_pg_owner_prefix) $(rg_shjoin "$pg_ctl" -D "$data" -m fast -w -t 60 -s stop)"
  RG_PG_PORT=$port
  RG_PG_SOCKET_DIR=$sock
  RG_PG_DATA=$data
  export RG_PG_START_CMD RG_PG_STOP_CMD RG_PG_PORT RG_PG_SOCKET_DIR RG_PG_DATA

  local psql=("$RG_PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$port" -U postgres)
  if [ "$("${psql[@]}" -d postgres -tAc "select 1 from pg_database where datname = 'recallgate'")" != 1 ]; then
    "${psql[@]}" -d postgres -c 'create database recallgate' >/dev/null ||
      rg_die "could not create database recallgate"
  fi
  export DATABASE_URL="postgresql://postgres@127.0.0.1:$port/recallgate"
}

# rg_pg_stop DIR: fast shutdown if running; removes a fallback socket directory.
rg_pg_stop() {
  local dir=${1:?rg_pg_stop DIR}
  [ -d "$dir" ] || return 0
  dir=$(cd "$dir" && pwd)
  local data="$dir/data" sock=""
  [ -f "$data/postmaster.pid" ] && sock=$(sed -n 5p "$data/postmaster.pid" 2>/dev/null || true)
  if [ -f "$data/PG_VERSION" ] &&
     rg_pg_as_owner "$RG_PG_BIN/pg_ctl" -D "$data" status >/dev/null 2>&1; then
    rg_pg_as_owner "$RG_PG_BIN/pg_ctl" -D "$data" -m fast -w -t 60 -s stop ||
      rg_log "warning: could not stop PostgreSQL in $data"
  fi
  case "$sock" in
    /tmp/rgpg.*) rm -rf -- "$sock" ;;
  esac
}
