#!/usr/bin/env bash
# Swarm soak (make soak SEEDS=N): runs N swarm seeds of Simulation/Scenarios/swarm.json, each
# drawing its own faults, personas, zones and preferences (simulate --swarm), and judges them all.
# Settings (environment): SEEDS (20), FIRST_SEED (1), USERS (150), WEEKS (2).
# Prints SEED= and the command that reproduces each failing seed; the summary is written to
# .simulate/soak/soak-report.json.
# Exit status: 0 every seed held; 2 a correctness failure (an invariant violated); 3 a liveness
# failure (something stuck after the drain) and no correctness failure; 1 any other failure
# (a budget breached, a run that did not complete).
set -u
seeds=${SEEDS:-20}
first=${FIRST_SEED:-1}
users=${USERS:-150}
weeks=${WEEKS:-2}
for value in "$seeds" "$first" "$users" "$weeks"; do
    case $value in '' | *[!0-9]*) echo "soak: SEEDS, FIRST_SEED, USERS and WEEKS must be whole numbers, got '$value'" >&2; exit 64 ;; esac
done
# Leading zeros are decimal here (bash would read 010 as octal).
seeds=$((10#$seeds)) first=$((10#$first)) users=$((10#$users)) weeks=$((10#$weeks))
simulate=./.build/release/simulate
out=.simulate/soak
[ -x "$simulate" ] || { echo "soak: $simulate is missing: run 'swift build -c release --product simulate'" >&2; exit 64; }
mkdir -p "$out"
rm -rf "$out"/seed-*
started=$(date +%s)
correctness=0 liveness=0 other=0
for ((seed = first; seed < first + seeds; seed++)); do
    log="$out/seed-$seed.log"
    "$simulate" --scenario swarm --swarm --seed "$seed" --users "$users" --weeks "$weeks" --no-events \
        --out "$out/seed-$seed" >"$log" 2>&1
    status=$?
    case $status in
        0) continue ;;
        2) correctness=$((correctness + 1)); kind="correctness (an invariant violated)" ;;
        3) liveness=$((liveness + 1)); kind="liveness (something stuck after the drain)" ;;
        *) other=$((other + 1)); kind="exit status $status" ;;
    esac
    echo "SEED=$seed failed: $kind"
    grep -E '^  [A-Za-z]+: user|^drain:|stuck' "$log" | head -4
    echo "  reproduce: $simulate --scenario swarm --swarm --seed $seed --users $users --weeks $weeks --no-events"
done
python3 scripts/soak_summary.py "$out" "$first" "$seeds" "$(($(date +%s) - started))" || other=$((other + 1))
if [ "$correctness" -gt 0 ]; then exit 2; fi
if [ "$liveness" -gt 0 ]; then exit 3; fi
if [ "$other" -gt 0 ]; then exit 1; fi
exit 0
