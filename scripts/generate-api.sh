#!/usr/bin/env bash
# Generates the API's Swift code from Modules/EngagedAPI/openapi.yaml with swift-openapi-generator
# (Tools/GenerateAPI, a package of its own so no other build compiles the generator): the types,
# once, into Modules/EngagedAPI/Generated; the client into Modules/EngagedClient/Generated and the
# server's routing into Apps/Engaged/Generated, both on those types; each folder's
# openapi-generator-config.yaml says what. The output
# is committed; `--check` regenerates into a temporary folder and fails (exit 1) when the
# committed files differ, naming them. Run by `make generate` and `make generate-check` (CI).
set -euo pipefail
cd "$(dirname "$0")/.."

check=false
case "${1:-}" in
    "") ;;
    --check) check=true ;;
    *) echo "usage: $0 [--check]" >&2; exit 64 ;;
esac

spec=Modules/EngagedAPI/openapi.yaml
targets="Modules/EngagedAPI Modules/EngagedClient Apps/Engaged"
scratch=$(mktemp -d /tmp/engaged-generate.XXXXXX)
trap 'rm -rf "$scratch"' EXIT

# Tools/GenerateAPI/Package.resolved pins the generator's own dependencies, so the same document
# generates the same code on every machine.
if ! swift build --package-path Tools/GenerateAPI --product swift-openapi-generator > "$scratch/build.log" 2>&1; then
    cat "$scratch/build.log"; exit 1
fi
generator="$(swift build --package-path Tools/GenerateAPI --show-bin-path)/swift-openapi-generator"

# Every target first, so that a failure replaces nothing.
for target in $targets; do
    out="$scratch/$(basename "$target")"
    log="$out.log"
    "$generator" generate --config "$target/openapi-generator-config.yaml" --output-directory "$out" \
        "$spec" > "$log" 2>&1 || { cat "$log"; exit 1; }
    # A warning means the generator skipped part of the document: the code would not say what it says.
    if grep -i "warning" "$log"; then
        echo "swift-openapi-generator skipped part of $spec (above); fix the document" >&2
        exit 1
    fi
    # Every file imports every module `public`, which Swift 6.3 reports as unused in most of them;
    # without an access level (these targets are built without InternalImportsByDefault) an
    # import is public where it is used and silent where it is not.
    perl -pi -e 's/^(\@_spi\(Generated\) )?public import /$1import /' "$out"/*.swift
done

status=0
for target in $targets; do
    out="$scratch/$(basename "$target")"
    committed="$target/Generated"
    if $check; then
        if ! diff -r "$out" "$committed" > "$out.diff" 2>&1; then
            echo "$committed is not what $spec generates:" >&2
            head -n 40 "$out.diff" >&2
            status=1
        fi
    else
        rm -rf "$committed" && mkdir -p "$committed" && cp "$out"/*.swift "$committed"/
        echo "generated $committed ($(cat "$committed"/*.swift | wc -l) lines)"
    fi
done
if $check && [ $status -ne 0 ]; then echo "run make generate and commit the result" >&2; fi
exit $status
