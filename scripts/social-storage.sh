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
# Posts kudos to ana with distinct ids and prints the answers' statuses: `flood`, EVENTS of them
# with the clock a quarter of an hour on after each hundred; `days`, ten a day for DAYS days.
post_kudos() {
    PORT=$port PHASE=$1 EVENTS=$EVENTS DAYS=$DAYS python3 - <<'PY'
import http.client, json, os
port, key, phase = int(os.environ["PORT"]), os.environ["ENGAGED_API_KEY"], os.environ["PHASE"]
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
if phase == "flood":
    for n in range(int(os.environ["EVENTS"])):
        kudos(f"kudos-{n}")
        if n % 100 == 99:
            post("/v1/admin/clock", {"advanceSeconds": 900})
    print("statuses after the flood:", statuses, flush=True)
else:
    for day in range(int(os.environ["DAYS"])):
        for n in range(10):
            kudos(f"later-{day}-{n}")
            post("/v1/admin/clock", {"advanceSeconds": 8640})
    print("statuses of the days after:", statuses, flush=True)
PY
}
post_kudos flood
footprint "after $EVENTS social events"
post_kudos days
footprint "$DAYS days later"
kill -TERM "$pid"
wait "$pid" || true
