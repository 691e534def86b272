# shellcheck shell=bash
# Sourced by the load scripts (not run); defines `start_engaged FLAGS...`, which starts a release
# `engaged serve` on a fresh data folder under throw-away secrets, with the serve flags given,
# and kills it on exit. ENGAGED=path runs that binary instead of building (the commit before,
# for back-to-back figures). It sets `engaged`, `data`, `log`, `pid`, `port` and `base`, and
# exports ENGAGED_API_KEY and ENGAGED_USER_TOKEN_KEYS.
#   source scripts/start-engaged.sh
#   start_engaged --manual-clock 2027-03-01T06:00:00Z
start_engaged() {
    # The build settings of the Makefile (Package.swift), so this reuses its release build.
    export ENGAGEMENT_OPTIMIZE="${ENGAGEMENT_OPTIMIZE:-1}"
    if [ -n "${ENGAGED:-}" ]; then
        engaged=$ENGAGED
    else
        make engaged-release 2>&1 | tail -n 1
        engaged=./.build/release/engaged
    fi
    data=$(mktemp -d /tmp/engaged-load.XXXXXX)
    log="$data/engaged.log"
    export ENGAGED_API_KEY="load-key-$$-0123456789abcdef0123456789abcdef" \
        ENGAGED_USER_TOKEN_KEYS="k1:load-user-token-key-$$-0123456789abcdef0123456789"
    "$engaged" serve --data-dir "$data" --port 0 --metrics-port 0 "$@" 2>"$log" &
    pid=$!
    trap 'kill -KILL $pid 2>/dev/null || true; rm -rf "$data"' EXIT
    port=$(scripts/engaged-port.sh "$log")
    # shellcheck disable=SC2034  # read by the scripts that source this
    base="http://127.0.0.1:$port"
}
