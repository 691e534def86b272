#!/usr/bin/env bash
# The size of the plan a phone pulls (GET /v1/users/{id}/plan): starts a release `engaged` on a
# manual clock, creates USERS users across zones and hydration settings, pulls each user's plan
# once with the API key and once more with If-None-Match (which must be 304), and prints the
# 200 answers' bytes (p50, p99, max) and requests per plan. ENGAGED=path runs that binary.
#   USERS=300 scripts/plan-bytes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
USERS=${USERS:-300}
source scripts/start-engaged.sh
start_engaged --manual-clock 2027-03-01T06:00:00Z
zones=(Europe/Berlin America/New_York Asia/Kathmandu Australia/Lord_Howe America/St_Johns Asia/Tokyo)
hydration=(null '"tri_daily"' '"bi_hourly"' '"hourly"')
auth="Authorization: Bearer $ENGAGED_API_KEY"
sizes=$(mktemp)
for ((i = 0; i < USERS; i++)); do
    body=$(printf '{"timeZone": "%s", "displayName": "User %d", "preferences": {"hydration": %s}}' \
        "${zones[$((i % ${#zones[@]}))]}" "$i" "${hydration[$((i % ${#hydration[@]}))]}")
    status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -H "$auth" -H 'Content-Type: application/json' \
        -d "$body" "$base/v1/users/u$i")
    [ "$status" = 201 ] || { echo "PUT u$i: $status"; exit 1; }
    curl -s -D "$sizes.h" -o "$sizes.b" -H "$auth" "$base/v1/users/u$i/plan"
    tag=$(grep -i '^etag:' "$sizes.h" | cut -d' ' -f2- | tr -d '\r')
    requests=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["requests"]))' "$sizes.b")
    echo "$(stat -c %s "$sizes.b") $requests" >>"$sizes"
    again=$(curl -s -o /dev/null -w '%{http_code}' -H "$auth" -H "If-None-Match: $tag" "$base/v1/users/u$i/plan")
    [ "$again" = 304 ] || { echo "If-None-Match $tag on u$i: $again, not 304"; exit 1; }
done
python3 - "$sizes" <<'PY'
import sys
rows = [tuple(map(int, line.split())) for line in open(sys.argv[1])]
sizes = sorted(b for b, _ in rows)
counts = sorted(r for _, r in rows)
def pick(values, q):
    return values[min(len(values) - 1, int(q * len(values)))]
print(f"plans={len(rows)} bytes p50={pick(sizes, .5)} p99={pick(sizes, .99)} max={sizes[-1]}"
      f" requests p50={pick(counts, .5)} p99={pick(counts, .99)} max={counts[-1]}")
PY
rm -f "$sizes" "$sizes.h" "$sizes.b"
kill -TERM "$pid"
wait "$pid"
