#!/usr/bin/env python3
"""The soak's summary: reads each seed's report.json under the soak folder and writes
soak-report.json beside them (user-weeks covered, wall time, violations by invariant, the
longest drain, the faults injected by kind), and prints it."""
import json
import os
import sys

folder, first, seeds, wall = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
summary = {"seeds": seeds, "firstSeed": first, "wallSeconds": wall, "completed": 0, "failedSeeds": [],
           "userWeeks": 0, "violations": {}, "stuck": 0, "longestDrainHours": 0.0, "faultsInjected": {}}
faults = summary["faultsInjected"]


def add(key, value):
    faults[key] = faults.get(key, 0) + value


for seed in range(first, first + seeds):
    path = os.path.join(folder, f"seed-{seed}", "report.json")
    if not os.path.exists(path):
        summary["failedSeeds"].append(seed)
        continue
    with open(path) as handle:
        report = json.load(handle)
    summary["completed"] += 1
    summary["userWeeks"] += report["users"] * report["weeks"]
    broken = {name: count for name, count in report["invariantViolations"].items() if count}
    for name, count in broken.items():
        summary["violations"][name] = summary["violations"].get(name, 0) + count
    drain = report["drain"]
    summary["stuck"] += drain["stuck"]
    if broken or drain["stuck"]:
        summary["failedSeeds"].append(seed)
    summary["longestDrainHours"] = max(summary["longestDrainHours"], round(drain["virtualSeconds"] / 3600, 1))
    platform = report["platform"]
    add("appKilled", platform.get("appRelaunchesFromSnapshot", 0))
    add("upgradeSnapshots", platform.get("appUpgradesFromPreviousSnapshot", 0))
    add("commitFailures", platform.get("commitsFailedAndRetried", 0))
    add("schedulesRefused", platform.get("scheduleRejected", 0))
    add("deviceClockJumps", platform.get("deviceClockJumps", 0))
    add("releasedByClockJump", platform.get("releasedByClockJump", 0))
    add("backgroundTasksRun", platform.get("backgroundRuns", 0))
    for channel in report["channels"].values():
        for reason, count in channel["failed"].items():
            add("apns" + reason, count)
        add("apnsRetries", channel["retries"])
        add("tokensRetired", channel["tokensRetired"])
    for reason, count in report["droppedByAPNs"].items():
        add("offline:" + reason, count)
    add("uninstalls", report["uninstalls"])

with open(os.path.join(folder, "soak-report.json"), "w") as handle:
    json.dump(summary, handle, indent=2, sort_keys=True)
print(f"soak: {summary['completed']}/{seeds} seeds completed, {summary['userWeeks']} virtual user-weeks "
      f"in {wall} s; violations {sum(summary['violations'].values())} {summary['violations'] or ''}; "
      f"stuck {summary['stuck']}; longest drain {summary['longestDrainHours']} h")
print("faults injected: " + ", ".join(f"{key} {value}" for key, value in sorted(faults.items())))
print(f"summary: {os.path.join(folder, 'soak-report.json')}")
sys.exit(0 if summary["completed"] == seeds else 1)
