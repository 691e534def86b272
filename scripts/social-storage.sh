#!/usr/bin/env bash
# One user's store under social events: starts `engaged` (manual clock, rate limits off) on a
# fresh data folder, creates one user, posts EVENTS kudos with distinct ids (a hundred, then the
# clock a quarter of an hour on, so batches go out as they fall due), then lives DAYS more days
# of ten kudos a day, and prints the store's bytes in use (pages in use times the page size,
# free pages aside) and its rows per table: when the user was created, after the flood, and at
# the end. ENGAGED=path runs another binary (the commit before, for a back-to-back figure).
#   EVENTS=10000 DAYS=41 scripts/social-storage.sh
set -euo pipefail
cd "$(dirname "$0")/.."
EVENTS=${EVENTS:-10000}
DAYS=${DAYS:-41}
source scripts/start-engaged.sh
start_engaged --manual-clock 2027-03-29T06:00:00Z \
    --rate-limit-api-key 0 --rate-limit-user 0 --rate-limit-address 0
curl -s -o /dev/null -w '%{http_code} PUT user\n' -X PUT -H "Authorization: Bearer $ENGAGED_API_KEY" \
    -H 'Content-Type: application/json' "$base/v1/users/ana" -d '{"timeZone": "Europe/Berlin"}'
footprint() {
    local file
    file=$(ls "$data"/*.sqlite)
    sqlite3 "$file" "PRAGMA wal_checkpoint(TRUNCATE)" >/dev/null
    local used tables
    used=$(sqlite3 "$file" "SELECT (page_count - freelist_count) * page_size
        FROM pragma_page_count, pragma_freelist_count, pragma_page_size")
    tables=$(sqlite3 "$file" "SELECT name FROM sqlite_master
            WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name" \
        | while read -r table; do
            echo -n "$table $(sqlite3 "$file" "SELECT COUNT(*) FROM \"$table\""), "
        done)
    echo "$1: $used bytes in use; rows: ${tables%, }"
}
footprint "created"
PORT=$port EVENTS=$EVENTS python3 - <<'PY'
import http.client, json, os
port, events = int(os.environ["PORT"]), int(os.environ["EVENTS"])
key = os.environ["ENGAGED_API_KEY"]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
statuses = {}
def post(path, body):
    connection.request("POST", path, json.dumps(body), headers)
    answer = connection.getresponse()
    answer.read()
    statuses[answer.status] = statuses.get(answer.status, 0) + 1
def kudos(identifier):
    post("/v1/users/ana/events", {"type": "socialEvent", "id": identifier, "kind": "workoutKudos",
                                  "actorName": "Friend", "topic": "morning run", "isMutualFriend": True})
for n in range(events):
    kudos(f"kudos-{n}")
    if n % 100 == 99:
        post("/v1/admin/clock", {"advanceSeconds": 900})
print("statuses after the flood:", statuses, flush=True)
PY
footprint "after $EVENTS social events"
PORT=$port DAYS=$DAYS python3 - <<'PY'
import http.client, json, os
port, days, key = int(os.environ["PORT"]), int(os.environ["DAYS"]), os.environ["ENGAGED_API_KEY"]
connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
headers = {"Authorization": "Bearer " + key, "Content-Type": "application/json"}
statuses = {}
def post(path, body):
    connection.request("POST", path, json.dumps(body), headers)
    answer = connection.getresponse()
    answer.read()
    statuses[answer.status] = statuses.get(answer.status, 0) + 1
for day in range(days):
    for n in range(10):
        post("/v1/users/ana/events", {"type": "socialEvent", "id": f"later-{day}-{n}", "kind": "workoutKudos",
                                      "actorName": "Friend", "topic": "morning run", "isMutualFriend": True})
        post("/v1/admin/clock", {"advanceSeconds": 8640})
print("statuses of the days after:", statuses, flush=True)
PY
footprint "$DAYS days later"
kill -TERM "$pid"
wait "$pid" || true
