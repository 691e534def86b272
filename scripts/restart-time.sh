#!/usr/bin/env bash
# Restart time of `engaged` with USERS users stored: creates them on a fresh data folder (release
# build, system clock), stops the server with SIGTERM, starts it again and prints how long it took
# to listen, then how long a GET schedule of every user took (each engine restored from its
# snapshot on first touch; sequential curl, so HTTP round trips are included).
#   USERS=10000 scripts/restart-time.sh
set -euo pipefail
# The build settings of the Makefile (Package.swift), so this reuses its release build.
export ENGAGEMENT_OPTIMIZE="${ENGAGEMENT_OPTIMIZE:-1}"
cd "$(dirname "$0")/.."
USERS=${USERS:-10000}
swift build -c release --product engaged 2>&1 | tail -n 1
bin="$(swift build -c release --show-bin-path)/engaged"
data=$(mktemp -d /tmp/engaged-restart.XXXXXX)
export ENGAGED_API_KEY="restart-key-$$-0123456789abcdef0123456789abcdef" \
    ENGAGED_USER_TOKEN_KEYS="k1:restart-user-token-key-$$-0123456789abcdef0123456789"
pid=""
trap 'if [ -n "$pid" ]; then kill -KILL $pid 2>/dev/null || true; fi; rm -rf "$data"' EXIT

start() {
    "$bin" serve --data-dir "$data" --port 0 --metrics-port 0 2>"$data/log.$1" &
    pid=$!
    local t0 t1
    t0=$(date +%s%N)
    port=$(scripts/engaged-port.sh "$data/log.$1")
    t1=$(date +%s%N)
    echo "start $1: listening after $(((t1 - t0) / 1000000)) ms"
}

# One curl for many requests: METHOD PATH_SUFFIX BODY (BODY may be empty).
requests() {
    for ((i = 0; i < USERS; i++)); do
        if ((i > 0)); then echo next; fi
        printf 'url = "http://127.0.0.1:%s/v1/users/r%d%s"\nrequest = "%s"\n' "$port" "$i" "$2" "$1"
        if [ -n "$3" ]; then printf 'data = "%s"\n' "$3"; fi
        printf 'header = "Authorization: Bearer %s"\noutput = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n' \
            "$ENGAGED_API_KEY"
    done | curl -s -K - | sort | uniq -c
}

start 1
requests PUT "" '{\"timeZone\": \"Europe/Berlin\"}'
kill -TERM $pid && wait $pid
echo "stored: $USERS users, $(du -h "$data/engaged.sqlite" | cut -f1) on disk"
start 2
t0=$(date +%s%N)
requests GET /schedule ""
t1=$(date +%s%N)
echo "GET schedule of all $USERS users after the restart: $(((t1 - t0) / 1000000)) ms"
kill -TERM $pid && wait $pid
pid=""
