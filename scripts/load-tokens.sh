#!/usr/bin/env bash
# What a user token costs a request: wrk against GET /v1/users/{id}/inbox on a release `engaged`
# (fresh data folder, manual clock), first with the API key, then with a minted user token
# (JWT verification and the revocation read), DURATION each over CONNECTIONS connections. The
# difference of the two latency distributions is the token's cost. Server and wrk share the
# machine's cores: say so with the figures. Rate limits are off for both runs.
#   CONNECTIONS=4 DURATION=10s scripts/load-tokens.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CONNECTIONS=${CONNECTIONS:-4}
DURATION=${DURATION:-10s}
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)"; exit 1; }
source scripts/start-engaged.sh
start_engaged --manual-clock 2027-03-01T06:00:00Z \
    --rate-limit-api-key 0 --rate-limit-user 0 --rate-limit-address 0
curl -s -o /dev/null -X PUT -H "Authorization: Bearer $ENGAGED_API_KEY" -H 'Content-Type: application/json' \
    "$base/v1/users/ana" -d '{"timeZone": "Europe/Berlin"}'
token=$(curl -s -X POST -H "Authorization: Bearer $ENGAGED_API_KEY" -H 'Content-Type: application/json' \
    "$base/v1/users/ana/tokens" -d '{"ttlSeconds": 86400}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["token"])')
for credential in "API key:$ENGAGED_API_KEY" "user token:$token"; do
    echo "== GET /v1/users/ana/inbox?limit=1 with the ${credential%%:*}: $CONNECTIONS connections, $DURATION (server and wrk share $(nproc) cores)"
    wrk -t 1 -c "$CONNECTIONS" -d "$DURATION" --latency -H "Authorization: Bearer ${credential#*:}" \
        "$base/v1/users/ana/inbox?limit=1"
done
kill -TERM $pid
wait $pid
echo "engaged stopped with exit $?"
