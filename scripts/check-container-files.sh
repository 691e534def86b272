#!/usr/bin/env bash
# Holds the container files to what CI exercises. No container engine is needed (CI has none),
# so the image is never built in CI; instead:
#  - every `make TARGET` a Dockerfile RUN runs is a Makefile target that .ci/run runs too, and
#    no RUN calls `swift build` itself (every build step goes through make, as in CI);
#  - the image's ENTRYPOINT is engaged, and its CMD and every engaged service of compose.yaml
#    run a subcommand engaged has.
# Exit 0 when they agree, 1 with a message naming the line otherwise. Run by .ci/run after lint.
#   scripts/check-container-files.sh [ROOT]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

# engaged's subcommands (Apps/Engaged/EngagedCommand.swift): update with a new one.
subcommands="serve worker migrate backup"

failures=0
fail() {
    echo "check-container-files: $*" >&2
    failures=$((failures + 1))
}

for file in Dockerfile Makefile .ci/run compose.yaml; do
    [ -f "$file" ] || { echo "check-container-files: $file is missing" >&2; exit 1; }
done

# Prints each logical line of stdin as "LINE<TAB>TEXT": lines ending in a backslash (shell and
# Dockerfile continuations) joined, numbered by their first line.
logical_lines() {
    awk '
        { if (pending == "") start = NR; line = $0 }
        line ~ /\\$/ { sub(/\\$/, " ", line); pending = pending line; next }
        { print start "\t" pending line; pending = "" }
        END { if (pending != "") print start "\t" pending }
    '
}

# Prints "LINE TARGET" for each target of a `make` command in a command position on the
# logical lines of stdin (quoted strings and comments dropped; options and VAR=value arguments
# skipped). With `dockerfile`, only RUN instructions count, `RUN [--flag ...]` being a command
# position.
make_targets() {
    logical_lines | awk -F'\t' -v dockerfile="${1:-}" '
        {
            lineno = $1; text = substr($0, length($1) + 2)
            gsub(/"[^"]*"/, "\"\"", text)
            gsub(/\047[^\047]*\047/, "\"\"", text)
            sub(/(^|[ \t])#.*/, "", text)
            if (dockerfile != "") {
                if (text !~ /^[ \t]*RUN[ \t]/) next
                sub(/^[ \t]*RUN([ \t]+--[^ \t]+)*/, "", text)
            }
            n = split(text, w, /[ \t]+/)
            cmd = 1; inmake = 0
            for (i = 1; i <= n; i++) {
                word = w[i]
                if (word == "") continue
                if (word ~ /^(&&|\|\||\||;|\(|\{|then|do|else|!)$/) { cmd = 1; inmake = 0; continue }
                if (word ~ /^[0-9]*[<>]/) { inmake = 0; cmd = 0; continue }
                ends = (word ~ /;$/)
                sub(/;$/, "", word)
                if (cmd && word == "make") { inmake = 1; cmd = 0 }
                else if (cmd && word ~ /^[A-Za-z_][A-Za-z0-9_]*=/) { }
                else if (inmake && word !~ /=/ && word !~ /^-/) print lineno, word
                else if (!inmake) cmd = 0
                if (ends) { cmd = 1; inmake = 0 }
            }
        }
    '
}

# The Dockerfile's make targets: in the Makefile, and run by CI.
dockerfile_targets=$(make_targets dockerfile < Dockerfile)
ci_targets=$(make_targets < .ci/run | awk '{print $2}' | sort -u)
if [ -z "$dockerfile_targets" ]; then
    fail "Dockerfile: no RUN make TARGET line; the image must build through the Makefile, as CI does"
fi
while read -r lineno target; do
    [ -n "$target" ] || continue
    if ! grep -qE "^${target}[[:space:]]*:([^=]|$)" Makefile; then
        fail "Dockerfile:$lineno: RUN make $target: the Makefile has no target $target"
    fi
    if ! grep -qxF -- "$target" <<< "$ci_targets"; then
        fail "Dockerfile:$lineno: RUN make $target: .ci/run never runs make $target, so CI does not build what the image does"
    fi
done <<< "$dockerfile_targets"

# No build step outside make (resolving packages, or asking for the bin path, is not a build).
while IFS=$'\t' read -r lineno _; do
    fail "Dockerfile:$lineno: RUN calls swift build directly; build through a make target CI runs"
done < <(logical_lines < Dockerfile | sed -E 's/swift build --show-bin-path//g' \
    | grep -E $'^[0-9]+\t[[:space:]]*RUN[[:space:]].*(^|[[:space:];&|(])swift[[:space:]]+build([[:space:]]|$)' || true)

# The image runs engaged, by default one of its subcommands.
if ! grep -qE '^ENTRYPOINT[[:space:]]+\["engaged"\]' Dockerfile; then
    fail "Dockerfile: the ENTRYPOINT must be [\"engaged\"] (compose.yaml's commands are engaged subcommands)"
fi
while IFS=: read -r lineno text; do
    sub=$(sed -nE 's/^CMD[[:space:]]*\[[[:space:]]*"([^"]*)".*/\1/p' <<< "$text")
    if [ -z "$sub" ]; then
        fail "Dockerfile:$lineno: CMD is not an exec-form list [\"SUBCOMMAND\", ...]: $text"
    elif ! grep -qw -- "$sub" <<< "$subcommands"; then
        fail "Dockerfile:$lineno: CMD runs engaged $sub; engaged has: $subcommands"
    fi
done < <(grep -nE '^CMD\b' Dockerfile || true)

# compose.yaml: the command of each service built from, or running, the engaged image. A service
# is one at two spaces under `services:`; it is engaged's when its block merges *engaged, builds
# or names an engaged image. Its command must be a flow list on one line, ["SUBCOMMAND", ...].
while IFS=$'\t' read -r lineno service problem; do
    fail "compose.yaml:$lineno: service $service: $problem"
done < <(awk -v subcommands=" $subcommands " -v known="$subcommands" '
    /^[^ #]/ { section = $0; service = ""; next }
    section ~ /^services:/ && /^  [A-Za-z0-9._-]+:/ {
        service = $1; sub(/:$/, "", service); next
    }
    service == "" { next }
    /^    (<<: \*engaged|build:|image:[ \t]*"?engaged)/ { engaged[service] = 1 }
    /^    entrypoint:/ { problems[service] = problems[service] NR "\t" service "\tsets its own entrypoint; the check cannot follow it\n" }
    /^    command:/ {
        line = $0
        if (match(line, /command:[ \t]*\[[ \t]*"[^"]*"/)) {
            sub_ = substr(line, RSTART, RLENGTH); sub(/^command:[ \t]*\[[ \t]*"/, "", sub_); sub(/"$/, "", sub_)
            if (index(subcommands, " " sub_ " ") == 0) {
                problems[service] = problems[service] NR "\t" service "\truns engaged " sub_ "; engaged has: " known "\n"
            }
        } else {
            problems[service] = problems[service] NR "\t" service "\tcommand is not a one-line list [\"SUBCOMMAND\", ...]\n"
        }
    }
    END { for (s in engaged) printf "%s", problems[s] }
' compose.yaml)
if ! grep -qE '^  [A-Za-z0-9._-]+:' compose.yaml; then
    fail "compose.yaml: no services found"
fi

if [ "$failures" -gt 0 ]; then
    echo "check-container-files: $failures problem(s): the Dockerfile, compose.yaml, the Makefile and .ci/run disagree" >&2
    exit 1
fi
echo "container files agree: Dockerfile make targets ($(awk '{print $2}' <<< "$dockerfile_targets" | sort -u | paste -sd ' ')) are Makefile targets CI runs; engaged subcommands ok"
