#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for tests and the scale test.
#   scripts/pg-local.sh start DIR   initdb DIR/data when new, start on a free port, print its URL
#   scripts/pg-local.sh stop DIR    stop the server started in DIR (fast shutdown)
#   scripts/pg-local.sh restart DIR fast|immediate
#                                   restart it with that shutdown, on the same port; returns once
#                                   it accepts connections again
#   scripts/pg-local.sh url DIR     print the URL of the server running in DIR
# Installs Debian's postgresql when no server binaries are found. Runs the server as the
# `postgres` user when called as root (initdb refuses root). Listens on 127.0.0.1 only.
set -euo pipefail
command=${1:-}; dir=${2:-}
[ -n "$command" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop|restart|url DIR" >&2; exit 64; }

bindir() {
    local found
    found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    if [ -z "$found" ] && command -v apt-get >/dev/null; then
        echo "installing postgresql (Debian's package)" >&2
        (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql) >/dev/null
        found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
    fi
    [ -n "$found" ] || { echo "no PostgreSQL server binaries (apt-get install postgresql)" >&2; exit 69; }
    echo "$found"
}

as_owner() {
    if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

case "$command" in
start)
    bin=$(bindir)
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    if [ "$(id -u)" = 0 ]; then
        chown postgres "$dir"
        runuser -u postgres -- test -w "$dir" \
            || { echo "the postgres user cannot reach $dir: use a folder whose parents others may enter" >&2; exit 73; }
    fi
    if [ ! -f "$dir/data/PG_VERSION" ]; then
        as_owner "$bin/initdb" -D "$dir/data" -U engaged --auth=trust --no-sync -E UTF8 >"$dir/initdb.log" 2>&1 \
            || { cat "$dir/initdb.log" >&2; exit 1; }
    fi
    if [ -f "$dir/port" ] && as_owner "$bin/pg_ctl" -D "$dir/data" status >/dev/null 2>&1; then
        echo "postgres://engaged@127.0.0.1:$(cat "$dir/port")/postgres"; exit 0
    fi
    # The port of an earlier start when there was one: a stopped server comes back at its URL.
    port=$(cat "$dir/port" 2>/dev/null || free_port)
    # fsync off: a test server's data does not outlive the machine. synchronous_commit off: a crash
    # of the server (the scale test's `restart immediate`) forgets the commits it last acknowledged,
    # as a production server tuned that way does, unless a transaction asks for a durable commit.
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start -o \
        "-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir -c fsync=off \
         -c synchronous_commit=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=256MB" \
        >/dev/null || { cat "$dir/server.log" >&2; exit 1; }
    echo "$port" > "$dir/port"
    echo "postgres://engaged@127.0.0.1:$port/postgres"
    ;;
stop)
    bin=$(bindir)
    if [ -f "$dir/data/postmaster.pid" ]; then as_owner "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null || true; fi
    ;;
restart)
    bin=$(bindir); mode=${3:-fast}; dir=$(cd "$dir" && pwd)
    case "$mode" in fast|immediate) ;; *) echo "restart mode must be fast or immediate" >&2; exit 64 ;; esac
    as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -m "$mode" -w -t 60 restart >/dev/null \
        || { tail -n 20 "$dir/server.log" >&2; exit 1; }
    ;;
url)
    [ -f "$dir/port" ] || { echo "no server started in $dir" >&2; exit 1; }
    echo "postgres://engaged@127.0.0.1:$(cat "$dir/port")/postgres"
    ;;
*) echo "usage: $0 start|stop|restart|url DIR" >&2; exit 64 ;;
esac
