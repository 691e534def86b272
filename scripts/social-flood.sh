#!/usr/bin/env bash
# One user flooded with social events: starts a release `engaged` (manual clock, so nothing is
# sent and every item waits; rate limits off) on a fresh data folder, creates one user, posts
# EVENTS kudos to it one after another on one keep-alive connection, and prints the latency of
# the first and last 1,000 requests and the size of the user's engine snapshot. Without the
# bound on waiting social items the snapshot grows with every event and each request rewrites
# it. ENGAGED=path runs another binary (the commit before, for a back-to-back figure).
#   EVENTS=10000 scripts/social-flood.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${EVENTS:-10000}
source scripts/start-engaged.sh
start_engaged --manual-clock 2027-03-01T06:00:00Z \
    --rate-limit-api-key 0 --rate-limit-user 0 --rate-limit-address 0
curl -s -o /dev/null -w '%{http_code} PUT user\n' -X PUT -H "Authorization: Bearer $ENGAGED_API_KEY" \
    -H 'Content-Type: application/json' "$base/v1/users/ana" -d '{"timeZone": "Europe/Berlin"}'
PORT=$port EVENTS=$EVENTS python3 - <<'PY'
import http.client, json, os, time
port, events, key = int(os.environ["PORT"]), int(os.environ["EVENTS"]), os.environ["ENGAGED_API_KEY"]
connection = http.client.HTTPConnection("127.0.0.1", port)
headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
latencies, statuses = [], {}
for n in range(events):
    body = json.dumps({"type": "socialEvent", "id": f"kudos-{n}", "kind": "workoutKudos",
                       "actorName": f"Friend {n}", "topic": "morning run", "isMutualFriend": n % 2 == 0})
    started = time.perf_counter()
    connection.request("POST", "/v1/users/ana/events", body, headers)
    answer = connection.getresponse()
    answer.read()
    latencies.append(time.perf_counter() - started)
    statuses[answer.status] = statuses.get(answer.status, 0) + 1
def quantile(values, q):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000
for name, part in (("first 1,000", latencies[:1000]), ("last 1,000", latencies[-1000:])):
    print(f"{name}: p50 {quantile(part, 0.5):.2f} ms, p99 {quantile(part, 0.99):.2f} ms")
print("statuses:", statuses)
PY
kill -TERM $pid
wait $pid || true
echo "snapshot bytes: $(sqlite3 "$data"/*.sqlite "SELECT length(bytes) FROM engineSnapshot WHERE userID = 'ana'")"
