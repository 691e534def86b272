#!/usr/bin/env python3
"""Writes Tests/Fixtures/zone_vectors.json: local-time test vectors computed with
Python's zoneinfo, an implementation independent of the engine's ZoneRules.

For every zone and every UTC-offset change from 2026 through 2028 it records:
- the offset just before and just after the change (UTC instant -> offset),
- a wall time inside a spring-forward gap -> the first instant after the gap,
- a wall time inside a fall-back repeat -> its first occurrence,
plus a few ordinary wall times per zone -> their one instant.

Run: python3 scripts/make_zone_fixtures.py   (the tests read the committed JSON)
"""
import json
import os
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

ZONES = [
    "America/New_York", "America/Chicago", "America/Denver", "America/Los_Angeles", "America/Anchorage",
    "America/Phoenix", "America/St_Johns", "America/Halifax", "America/Havana", "America/Mexico_City",
    "America/Sao_Paulo", "America/Santiago", "America/Asuncion", "America/Bogota", "America/Scoresbysund",
    "Europe/London", "Europe/Dublin", "Europe/Lisbon", "Europe/Paris", "Europe/Berlin", "Europe/Athens",
    "Europe/Helsinki", "Europe/Moscow", "Europe/Istanbul", "Africa/Cairo", "Africa/Casablanca",
    "Africa/Johannesburg", "Asia/Tehran", "Asia/Dubai", "Asia/Kolkata", "Asia/Kathmandu", "Asia/Dhaka",
    "Asia/Yangon", "Asia/Bangkok", "Asia/Shanghai", "Asia/Tokyo", "Asia/Seoul", "Asia/Jerusalem",
    "Australia/Adelaide", "Australia/Darwin", "Australia/Brisbane", "Australia/Sydney", "Australia/Lord_Howe",
    "Australia/Eucla", "Pacific/Auckland", "Pacific/Chatham", "Pacific/Apia", "Pacific/Tongatapu",
    "Pacific/Kiritimati", "Pacific/Norfolk", "Pacific/Honolulu", "Pacific/Marquesas", "UTC",
]
START = datetime(2026, 1, 1, tzinfo=timezone.utc)
END = datetime(2029, 1, 1, tzinfo=timezone.utc)


def offset(zone, instant):
    return int(instant.astimezone(zone).utcoffset().total_seconds())


def transitions(zone):
    """UTC instants (whole seconds) where the offset changes, found hourly then bisected."""
    found = []
    step = timedelta(hours=1)
    t = START
    previous = offset(zone, t)
    while t < END:
        nxt = t + step
        current = offset(zone, nxt)
        if current != previous:
            low, high = int(t.timestamp()), int(nxt.timestamp())
            while high - low > 1:
                middle = (low + high) // 2
                if offset(zone, datetime.fromtimestamp(middle, timezone.utc)) == previous:
                    low = middle
                else:
                    high = middle
            found.append((high, previous, current))
            previous = current
        t = nxt
    return found


def wall(seconds_local):
    """Local wall time (seconds since local 1970-01-01) as YYYY-MM-DDTHH:MM:SS."""
    return datetime.fromtimestamp(seconds_local, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def vectors(name):
    zone = ZoneInfo(name)
    offsets, locals_ = [], []
    for instant, before, after in transitions(zone):
        for delta in (-3600, -1, 0, 1, 3600):
            t = instant + delta
            offsets.append({"utc": t, "offset": offset(zone, datetime.fromtimestamp(t, timezone.utc))})
        shift = after - before
        if shift > 0:  # a gap: wall times [instant + before, instant + after) do not exist
            local = instant + before + shift // 2
            locals_.append({"local": wall(local), "utc": instant, "resolution": "skippedGap"})
            # Check with zoneinfo: the wall time is indeed missing (fold 0 and 1 give different instants).
            naive = datetime.fromtimestamp(local, timezone.utc).replace(tzinfo=None)
            a = naive.replace(tzinfo=zone, fold=0).timestamp()
            b = naive.replace(tzinfo=zone, fold=1).timestamp()
            assert a != b and datetime.fromtimestamp(a, zone).replace(tzinfo=None) != naive
        else:  # a repeat: wall times [instant + after, instant + before) occur twice
            local = instant + after + (-shift) // 2
            naive = datetime.fromtimestamp(local, timezone.utc).replace(tzinfo=None)
            first = int(naive.replace(tzinfo=zone, fold=0).timestamp())
            second = int(naive.replace(tzinfo=zone, fold=1).timestamp())
            assert first < second
            locals_.append({"local": wall(local), "utc": first, "resolution": "firstOfRepeated"})
    for month in (1, 4, 7, 10):
        naive = datetime(2027, month, 15, 9, 30)
        locals_.append(
            {"local": naive.strftime("%Y-%m-%dT%H:%M:%S"), "utc": int(naive.replace(tzinfo=zone).timestamp()),
             "resolution": "exact"})
    return {"zone": name, "offsets": offsets, "locals": locals_}


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    path = os.path.join(root, "Tests", "Fixtures", "zone_vectors.json")
    data = {"generator": "scripts/make_zone_fixtures.py (Python zoneinfo)", "zones": [vectors(z) for z in ZONES]}
    with open(path, "w") as out:
        json.dump(data, out, indent=1, sort_keys=True)
        out.write("\n")
    count = sum(len(z["offsets"]) + len(z["locals"]) for z in data["zones"])
    print(f"wrote {path}: {len(ZONES)} zones, {count} vectors")


if __name__ == "__main__":
    main()
