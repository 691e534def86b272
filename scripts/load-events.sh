#!/usr/bin/env bash
# Load test of POST /v1/users/{id}/events with wrk on loopback: starts a release `engaged` on a
# fresh data folder, on the system clock (the due-work loop runs as in production; MANUAL_CLOCK=1
# holds the clock still, so only the write path is measured), creates USERS users, runs wrk for
# DURATION with CONNECTIONS connections, stops the server with SIGTERM. Server and load share the
# machine's cores: say so with the figures.
#   USERS=1000 CONNECTIONS=16 DURATION=20s THREADS=1 KEYED=1 scripts/load-events.sh
# KEYED=1 gives every request its own Idempotency-Key (each key is stored with its event).
# LIMITS=off runs without rate limits; LIMITS="--rate-limit-api-key 1000000/1000000" (any serve
# flags) sets them; by default the server's own defaults apply.
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-1000}
CONNECTIONS=${CONNECTIONS:-16}
DURATION=${DURATION:-20s}
THREADS=${THREADS:-1}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }
clock_flag=()
if [ "${MANUAL_CLOCK:-0}" = 1 ]; then clock_flag=(--manual-clock 2027-03-01T06:00:00Z); fi
limit_flags=()
case "${LIMITS:-}" in
    "") ;;
    off) limit_flags=(--rate-limit-api-key 0 --rate-limit-user 0 --rate-limit-address 0) ;;
    *) read -r -a limit_flags <<<"$LIMITS" ;;
esac
source scripts/start-engaged.sh
start_engaged "${clock_flag[@]}" "${limit_flags[@]}"
zones=(Europe/Berlin America/New_York Asia/Kathmandu Australia/Lord_Howe America/St_Johns Asia/Tokyo)
for ((i = 0; i < USERS; i++)); do
    if ((i > 0)); then echo next; fi
    printf 'url = "http://127.0.0.1:%s/v1/users/load%d"\nrequest = "PUT"\ndata = "{\\"timeZone\\": \\"%s\\"}"\n' \
        "$port" "$i" "${zones[$((i % ${#zones[@]}))]}"
    printf 'header = "Authorization: Bearer %s"\nheader = "Content-Type: application/json"\n' "$ENGAGED_API_KEY"
    printf 'output = "/dev/null"\nwrite-out = "%%{http_code}\\n"\n'
done | curl -s -K - | sort | uniq -c
echo "== wrk: $CONNECTIONS connections, $THREADS thread(s), $DURATION, $USERS users (server and wrk share $(nproc) cores)"
USERS=$USERS KEYED=${KEYED:-0} wrk -t "$THREADS" -c "$CONNECTIONS" -d "$DURATION" --latency -s scripts/load-events.lua \
    "http://127.0.0.1:$port"
kill -TERM $pid
wait $pid
echo "engaged stopped with exit $?"
