#!/usr/bin/env bash
# Prints the port `engaged serve --port 0` listens on, read from its log (stderr) once it says
# "listening on 127.0.0.1:PORT"; waits at most SECONDS (default 20). Exits 1 with the log when it
# does not start in time. Used by .ci/run, .ci/schemathesis.sh and the load and restart scripts.
#   port=$(scripts/engaged-port.sh LOG [SECONDS])
set -euo pipefail
log=$1
deadline=$((SECONDS + ${2:-20}))
while ((SECONDS < deadline)); do
    port=$(grep -o 'listening on 127.0.0.1:[0-9]*' "$log" 2>/dev/null | head -n 1 | cut -d: -f2 || true)
    if [ -n "$port" ]; then
        echo "$port"
        exit 0
    fi
    sleep 0.02
done
echo "engaged did not start within ${2:-20} s; its log:" >&2
cat "$log" >&2
exit 1
