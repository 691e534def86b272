#!/usr/bin/env python3
"""Crash test of `engaged`: SIGKILL at seeded random points during a stream of events.

Two servers run the same stream of events (with Idempotency-Keys) against fresh data folders on a
manual clock: a reference that is never disturbed, and a victim that is killed with SIGKILL at
random moments (mid-request as often as not) and restarted on the same folder. After a kill, the
client sends the events that were not acknowledged again with the same keys, as a real client
would. At the end:

  - every event was acknowledged (2xx) exactly once from the client's point of view;
  - each user's engine snapshot in the victim's store equals the reference's byte for byte, so no
    acknowledged event was lost and none was applied twice;
  - the pending outbox and each user's schedule equal the reference's;
  - `PRAGMA integrity_check` of the victim's store says ok.

Usage: scripts/crash-test.py --engaged PATH [--rounds 8] [--seed 1] [--users 12] [--events 400]
       [--clients 4]
Exit status 0 when every check holds, 1 otherwise. Everything listens on 127.0.0.1.
"""

import argparse
import http.client
import json
import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

CLOCK = "2027-03-01T06:00:00Z"
API_KEY = "crash-test-key-0123456789abcdef0123456789"
ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kathmandu", "Australia/Lord_Howe", "America/St_Johns"]
BODIES = [
    {"type": "appOpened", "sessionSeconds": 90},
    {"type": "mealLogged", "meal": "lunch"},
    {"type": "moodLogged"},
    {"type": "workoutCompleted", "durationMinutes": 35},
    {"type": "coachChat"},
    {"type": "checkInCompleted"},
]


class Server:
    """One `engaged serve` process on a data folder, on a port chosen at start."""

    def __init__(self, binary, folder):
        self.binary, self.folder, self.process, self.port = binary, folder, None, None

    def start(self):
        log = open(os.path.join(self.folder, "engaged.log"), "ab")
        env = dict(os.environ, ENGAGED_API_KEY=API_KEY, ENGAGED_USER_TOKEN_KEYS="k1:crash-test-user-token-key-0123456789abcdef")
        self.process = subprocess.Popen(
            [self.binary, "serve", "--data-dir", self.folder, "--port", "0", "--metrics-port", "0", "--manual-clock", CLOCK],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            line = self.process.stderr.readline()
            if not line:
                raise RuntimeError(f"engaged exited with {self.process.wait()} before listening")
            log.write(line)
            match = re.search(rb"listening on 127\.0\.0\.1:(\d+)", line)
            if match:
                self.port = int(match.group(1))
                # Keep reading its log so the pipe never fills.
                threading.Thread(target=self._drain, args=(log,), daemon=True).start()
                return
        raise RuntimeError("engaged did not start within 60 s")

    def _drain(self, log):
        for line in self.process.stderr:
            log.write(line)

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        status = self.process.wait(timeout=30)
        if status != 0:
            raise RuntimeError(f"engaged exited {status} after SIGTERM")

    def request(self, method, path, body=None, key=None, timeout=10):
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
        if key:
            headers["Idempotency-Key"] = key
        try:
            connection.request(method, path, body=json.dumps(body) if body is not None else None, headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()


def stream(seed, users, events):
    """The events: (user, body, key), each user's in order."""
    rng = random.Random(seed)
    return [(f"c{rng.randrange(users)}", rng.choice(BODIES), f"event-{index}") for index in range(events)]


def send_all(server, items, on_failure=None):
    """Sends each event until it is acknowledged; returns the acknowledged count per key."""
    acknowledged = {}
    index = 0
    while index < len(items):
        user, body, key = items[index]
        try:
            status, answer = server.request("POST", f"/v1/users/{user}/events", body, key)
        except (OSError, http.client.HTTPException):
            if on_failure is None:
                raise
            on_failure()  # the server died: restart it, then send the same event again
            continue
        if status != 202:
            raise RuntimeError(f"{key} for {user}: {status} {answer[:200]!r}")
        acknowledged[key] = acknowledged.get(key, 0) + 1
        index += 1
    return acknowledged


def table(path, sql):
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute(sql).fetchall()
    finally:
        connection.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--engaged", required=True)
    parser.add_argument("--rounds", type=int, default=8, help="SIGKILLs during the stream")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--users", type=int, default=12)
    parser.add_argument("--events", type=int, default=400)
    parser.add_argument("--clients", type=int, default=4, help="concurrent clients, each with its own users")
    arguments = parser.parse_args()
    if min(arguments.rounds, arguments.users, arguments.clients) < 1 or arguments.events < arguments.rounds:
        parser.error("--rounds, --users and --clients must be at least 1 and --events at least --rounds")

    rng = random.Random(arguments.seed)
    items = stream(arguments.seed, arguments.users, arguments.events)
    with tempfile.TemporaryDirectory(prefix="engaged-crash-") as root:
        reference = Server(arguments.engaged, os.path.join(root, "reference"))
        victim = Server(arguments.engaged, os.path.join(root, "victim"))
        for server in (reference, victim):
            os.makedirs(server.folder)
            server.start()
            for index in range(arguments.users):
                status, answer = server.request(
                    "PUT", f"/v1/users/c{index}", {"timeZone": ZONES[index % len(ZONES)]})
                assert status == 201, (status, answer)

        send_all(reference, items)

        # The victim: a killer thread fires SIGKILL after a seeded delay at each kill point,
        # while the client keeps streaming; a failed request restarts the server.
        kills = {"done": 0}
        lock = threading.Lock()
        points = sorted(rng.sample(range(len(items)), arguments.rounds))
        delays = [rng.uniform(0, 0.02) for _ in points]

        def restart():
            with lock:
                if victim.process.poll() is None:
                    return
                victim.start()

        def killer(position, delay):
            time.sleep(delay)
            with lock:
                victim.kill()
                kills["done"] += 1

        progress = {"sent": 0}
        original_request = victim.request

        def request_with_kills(method, path, body=None, key=None, timeout=10):
            with lock:
                if method == "POST" and points and progress["sent"] >= points[0]:
                    points.pop(0)
                    threading.Thread(target=killer, args=(progress["sent"], delays.pop(0)), daemon=True).start()
                progress["sent"] += 1
            return original_request(method, path, body, key, timeout)

        # Several clients at once (so kills land in the middle of grouped commits), each with its
        # own users, so each user's events still go in order.
        victim.request = request_with_kills
        lanes = [[item for item in items if int(item[0][1:]) % arguments.clients == lane]
                 for lane in range(arguments.clients)]
        results, errors = [], []

        def client(lane):
            try:
                results.append(send_all(victim, lane, on_failure=lambda: (time.sleep(0.05), restart())))
            except Exception as error:  # reported below
                errors.append(error)

        threads = [threading.Thread(target=client, args=(lane,)) for lane in lanes]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        victim.request = original_request
        if errors:
            raise errors[0]
        acknowledged = {}
        for result in results:
            acknowledged.update(result)
        time.sleep(0.1)
        restart()

        failures = []
        if kills["done"] != arguments.rounds:
            failures.append(f"{kills['done']} kills happened, {arguments.rounds} planned")
        if sorted(acknowledged) != sorted(key for _, _, key in items) or set(acknowledged.values()) != {1}:
            failures.append("not every event was acknowledged exactly once")
        for user in (f"c{index}" for index in range(arguments.users)):
            a = reference.request("GET", f"/v1/users/{user}/schedule")
            b = victim.request("GET", f"/v1/users/{user}/schedule")
            if a != b:
                failures.append(f"schedule of {user} differs from the run that never crashed")
        for server in (reference, victim):
            server.stop()
        ref_db = os.path.join(reference.folder, "engaged.sqlite")
        victim_db = os.path.join(victim.folder, "engaged.sqlite")
        if table(ref_db, "SELECT userID, bytes FROM engineSnapshot ORDER BY userID") != table(
                victim_db, "SELECT userID, bytes FROM engineSnapshot ORDER BY userID"):
            failures.append("engine snapshots differ: an acknowledged event was lost or applied twice")
        outbox = "SELECT userID, requestID, channel, key, dueAt, payload FROM outbox ORDER BY key"
        if table(ref_db, outbox) != table(victim_db, outbox):
            failures.append("the pending outbox differs from the run that never crashed")
        integrity = table(victim_db, "PRAGMA integrity_check")
        if integrity != [("ok",)]:
            failures.append(f"integrity_check: {integrity}")

        print(f"crash test: {kills['done']} SIGKILLs during {len(items)} events to {arguments.users} users "
              f"from {arguments.clients} clients (seed {arguments.seed}); {len(acknowledged)} acknowledged")
        for failure in failures:
            print("FAILED:", failure)
        if not failures:
            print("ok: snapshots, outbox and schedules equal the run that never crashed; integrity_check ok")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
