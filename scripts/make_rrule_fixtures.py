#!/usr/bin/env python3
"""Writes Tests/Fixtures/rrule_vectors.json: occurrences of RRULEs computed with python-dateutil,
an implementation independent of the engine's RecurrenceRule.

Run: python3 scripts/make_rrule_fixtures.py   (the tests read the committed JSON)
"""
import json
import os
from datetime import datetime

from dateutil.rrule import rrulestr

RULES = [
    "FREQ=DAILY",
    "FREQ=DAILY;INTERVAL=3",
    "FREQ=DAILY;BYHOUR=8,12,18;BYMINUTE=0,30",
    "FREQ=DAILY;BYDAY=MO,WE,FR",
    "FREQ=DAILY;BYMONTHDAY=1,15,31",
    "FREQ=DAILY;COUNT=10",
    "FREQ=DAILY;UNTIL=20270320T090000",
    "FREQ=WEEKLY",
    "FREQ=WEEKLY;INTERVAL=2",
    "FREQ=WEEKLY;BYDAY=MO,TH",
    "FREQ=WEEKLY;INTERVAL=2;BYDAY=TU,SA;COUNT=9",
    "FREQ=WEEKLY;BYDAY=SU;BYHOUR=19;BYMINUTE=0",
    "FREQ=WEEKLY;INTERVAL=3;BYDAY=MO,SU",
    "FREQ=MONTHLY",
    "FREQ=MONTHLY;BYMONTHDAY=31",
    "FREQ=MONTHLY;BYMONTHDAY=29,30,31",
    "FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=1,15",
    "FREQ=MONTHLY;BYDAY=FR",
    "FREQ=MONTHLY;BYDAY=MO;BYMONTHDAY=1,2,3,4,5,6,7",
    "FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR",
    "FREQ=MONTHLY;COUNT=14;BYMONTHDAY=30",
    "FREQ=MONTHLY;UNTIL=20281231T235959;BYMONTHDAY=29",
    "FREQ=DAILY;INTERVAL=2;BYHOUR=7;BYMINUTE=15;COUNT=20",
    "FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYHOUR=9;BYMINUTE=0;UNTIL=20270415T090000",
]
STARTS = ["2027-01-31T09:30:00", "2027-03-14T02:30:00", "2027-02-28T23:45:00", "2028-02-29T07:00:00"]


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    path = os.path.join(root, "Tests", "Fixtures", "rrule_vectors.json")
    cases = []
    for rule in RULES:
        for start in STARTS:
            dtstart = datetime.fromisoformat(start)
            occurrences = []
            for occurrence in rrulestr(rule, dtstart=dtstart):
                occurrences.append(occurrence.strftime("%Y-%m-%dT%H:%M:%S"))
                if len(occurrences) == 40:
                    break
            cases.append({"rule": rule, "start": start, "occurrences": occurrences})
    with open(path, "w") as out:
        json.dump({"generator": "scripts/make_rrule_fixtures.py (python-dateutil rrule)", "cases": cases}, out,
                  indent=1)
        out.write("\n")
    print(f"wrote {path}: {len(cases)} cases")


if __name__ == "__main__":
    main()
