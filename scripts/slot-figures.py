#!/usr/bin/env python3
"""Timing figures of a simulator run, from its events.jsonl and population.json alone.

An audit independent of the engine and of the simulator's invariant checker: it rebuilds each
delivery's slot and window from the request identifier and the user's traits, with Python's
zoneinfo for the local time.

    simulate --scenario default --events --out /tmp/run
    scripts/slot-figures.py /tmp/run

Prints, per kind: deliveries, deliveries outside their slot's window, same-instant duplicates
(a second delivery of one kind to one user at the same instant) and the response rate (acted /
delivered: any action but dismiss and snooze); then the re-engagement nudges per absence (more
than the campaign's cap, an attempt twice) and the nudges delivered in the user's local night.

The windows are those documented on `SlotWindow` (Modules/Scheduling/SlotWindow.swift).
"""

import collections
import datetime
import json
import sys
from zoneinfo import ZoneInfo

# kind -> (earliest, latest) minutes around the slot's nominal local time; [earliest, latest).
WINDOWS = {
    "morningGreeting": (-60, 180),
    "mealReminder": (-60, 90),
    "hydration": (-30, 30),
    "workoutReminder": (-30, 10),
    "preWorkout": (-30, 10),
    "postWorkoutCheckIn": (-60, 180),
    "weeklyReview": (-120, 300),
    "streakReminder": (-60, 300),
    "checkInReminder": (-30, 180),
}
MEALS = {"breakfast": 8 * 60, "lunch": 12 * 60 + 30, "snack": 15 * 60, "dinner": 18 * 60 + 30}
# Action identifiers (`NotificationActionID` raw values) that are not acting on a notification.
NOT_ACTED = {"com.apple.UNNotificationDismissActionIdentifier", "SNOOZE", "SNOOZE_30", "SNOOZE_REMINDER"}
CAPS = {"light_nudge": 1, "check_in_on_me": 3, "give_me_space": 0}


def minutes(text):
    hours, mins = text.split(":")
    return int(hours) * 60 + int(mins)


def instant_of(zone, day, minute):
    """The instant the wall clock in `zone` reads `day` + `minute` minutes: the first of a
    repeated time, the end of the gap for a skipped one (as `ZoneRules.resolve`)."""
    local = datetime.datetime.combine(day, datetime.time()) + datetime.timedelta(minutes=minute)
    first = local.replace(tzinfo=zone, fold=0)
    utc = first.astimezone(datetime.timezone.utc)
    if utc.astimezone(zone).replace(tzinfo=None) == local:
        return utc
    # In a gap: the transition, which lies between the readings under the two offsets.
    later = local.replace(tzinfo=zone, fold=1).astimezone(datetime.timezone.utc)
    low, high = min(utc, later), max(utc, later)
    while (high - low).total_seconds() > 1:
        middle = low + (high - low) / 2
        if middle.astimezone(zone).replace(tzinfo=None) >= local:
            high = middle
        else:
            low = middle
    return high


def nominal(kind, request_id, user, delivered_local):
    """(day, minute) of the slot's nominal local time, or None for kinds without a window."""
    parts = request_id.split(".")
    if parts[-1].startswith("snooze"):
        return None  # a snoozed copy fires when the user asked
    if parts[1] == "daily":
        day = delivered_local.date()
    else:
        day = datetime.date.fromisoformat(parts[1])
    slot = parts[2] if len(parts) > 2 else None
    clock = (lambda text: int(text[:2]) * 60 + int(text[2:])) if slot else None
    if kind == "morningGreeting":
        return day, user["morningMinute"]
    if kind == "mealReminder":
        return day, MEALS[slot]
    if kind == "hydration":
        return day, clock(slot)
    if kind == "workoutReminder":
        return day, clock(slot) - 15
    if kind == "preWorkout":
        return day, clock(slot) - 45
    if kind == "postWorkoutCheckIn":
        return day, clock(slot) + 120
    if kind == "weeklyReview":
        return day, 19 * 60
    if kind == "streakReminder":
        return day, 18 * 60
    if kind == "checkInReminder" and slot and slot.startswith("r"):
        return day, clock(slot.split("-")[1])
    return None


def parse_at(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))


def main(folder):
    population = json.load(open(f"{folder}/population.json"))["users"]
    users = {}
    for entry in population:
        # Runs before population.json named the times: the personas' defaults.
        night_shift = entry["persona"] == "nightShift"
        morning = entry.get("morningTime") or ("16:30" if night_shift else "07:00")
        wake = entry.get("wakeTime") or ("17:00" if night_shift else "07:00")
        sleep = entry.get("sleepTime") or ("23:30" if night_shift else "22:00")
        users[entry["id"]] = {
            "zone": ZoneInfo(entry["timeZone"]),
            "morningMinute": minutes(morning),
            "waking": (minutes(wake), minutes(sleep)),
            "cap": CAPS[entry["absenceResponse"]],
        }
    delivered = collections.Counter()
    outside = collections.Counter()
    outside_examples = []
    acted = collections.Counter()
    duplicates = collections.Counter()
    seen_instants = {}
    nudges = {}  # user -> attempts delivered since the last activity
    over_cap = 0
    attempt_twice = 0
    night_nudges = 0
    for line in open(f"{folder}/events.jsonl"):
        event = json.loads(line)
        user = users[event["user"]]
        name = event["event"]
        if name == "travel":
            user["zone"] = ZoneInfo(event["timeZone"])
        elif name == "activity":
            nudges.pop(event["user"], None)
        elif name == "response":
            action = event["action"]
            if action not in NOT_ACTED:
                acted[event["kind"]] += 1
                nudges.pop(event["user"], None)
        elif name == "delivered":
            kind = event["kind"]
            delivered[kind] += 1
            at = parse_at(event["at"])
            key = (event["user"], kind, event["at"])
            if key in seen_instants:
                duplicates[kind] += 1
            seen_instants[key] = True
            local = at.astimezone(user["zone"]).replace(tzinfo=None)
            slot = nominal(kind, event["id"], user, local)
            if slot and kind in WINDOWS:
                day, minute = slot
                start, end = WINDOWS[kind]
                base = instant_of(user["zone"], day, minute)
                if not (base + datetime.timedelta(minutes=start) <= at < base + datetime.timedelta(minutes=end)):
                    outside[kind] += 1
                    if len(outside_examples) < 10:
                        outside_examples.append(f"{event['user']} {event['id']} at {local:%Y-%m-%d %H:%M} local")
            if kind == "reEngagement":
                attempt = event["id"].split(".")[2]
                sent = nudges.setdefault(event["user"], [])
                if attempt in sent:
                    attempt_twice += 1
                sent.append(attempt)
                if len(sent) > user["cap"]:
                    over_cap += 1
                minute = local.hour * 60 + local.minute
                if not user["waking"][0] <= minute < user["waking"][1]:
                    night_nudges += 1
        if len(seen_instants) > 4_000_000:
            seen_instants.clear()  # instants only repeat within one user's lines, which are adjacent
    print(f"{'kind':22} {'delivered':>10} {'outside':>8} {'sameInstant':>12} {'responseRate':>13}")
    for kind in sorted(delivered):
        rate = acted[kind] / delivered[kind] if delivered[kind] else 0
        print(f"{kind:22} {delivered[kind]:>10} {outside[kind]:>8} {duplicates[kind]:>12} {rate:>13.3f}")
    print(
        f"{'total':22} {sum(delivered.values()):>10} {sum(outside.values()):>8} {sum(duplicates.values()):>12}"
        f" {sum(acted.values()) / max(1, sum(delivered.values())):>13.3f}"
    )
    print(f"nudges beyond the campaign's cap: {over_cap}; an attempt delivered twice in one absence: {attempt_twice}")
    print(f"nudges delivered in the local night (outside the user's waking hours): {night_nudges}")
    for example in outside_examples:
        print("  outside:", example)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".simulate/default")
