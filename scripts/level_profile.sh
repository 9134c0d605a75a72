#!/usr/bin/env bash
# Counts, with callgrind, the instructions of one load of the level_load benchmark's
# 1 MB level and its canada-like level (JSON and postcard) into heap types and into a scope with DeserializeIn,
# and how many of them are spent in the format's own parsing (serde_json's and
# postcard's functions, and the float and integer parsers they call): deterministic,
# so the ratio does not depend on a shared machine's noise.
#
# With LEVEL_LOAD_DATA set to a folder holding serde-rs/json-benchmark's canada.json,
# citm_catalog.json and twitter.json, it then counts the same for those files (the
# level_real benchmark; docs/PERFORMANCE.md says how to get them), with each file's
# scope / heap ratio.
#
# Usage: scripts/level_profile.sh   (needs valgrind; builds the benches in release)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "level_profile.sh: needs valgrind" >&2; exit 1; }
target_dir="${CARGO_TARGET_DIR:-target}"
cargo bench -p benches --profile release --bench level_load --bench level_real --no-run 2>/dev/null
bin_of() { ls -t "$target_dir"/release/deps/"$1"-* | grep -v '\.d$' | head -1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# One callgrind run of bench $1 with level $2, format $3, counting function $4:
# prints its total instructions and the parser's self cost.
count() {
    LEVEL_LOAD_LEVEL=$2 LEVEL_LOAD_PROFILE=$3 valgrind --tool=callgrind --callgrind-out-file="$out/$3.$4.%p" \
        --toggle-collect="*$4*" --separate-recs=1 "$(bin_of "$1")" >/dev/null 2>&1
    file=$(ls "$out/$3.$4".* | head -1)
    total=$(callgrind_annotate --inclusive=no "$file" 2>/dev/null |
        awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    # Self cost of the parsers: serde_json's and postcard's code, lexical/float parsing,
    # memchr (serde_json's string scan).
    parse=$(callgrind_annotate --inclusive=no --threshold=100 "$file" 2>/dev/null |
        awk '/(serde_json::|postcard::|core::num::dec2flt|lexical|memchr|zerocopy)/ {
            gsub(",", "", $1); s += $1 } END { print s + 0 }')
    if [ -n "${LEVEL_PROFILE_KEEP:-}" ]; then
        mkdir -p "$LEVEL_PROFILE_KEEP" && cp "$file" "$LEVEL_PROFILE_KEEP/$2.$3.${4#profiled_}.out"
    fi
    rm -f "$out/$3.$4".*
    echo "$total $parse"
}
printf '%-34s %14s %14s %8s\n' "load" "instructions" "parse" "share"
for level in 1MB canada; do
for format in json postcard; do
for f in profiled_heap_load profiled_scope_load; do
    read -r total parse < <(count level_load "$level" "$format" "$f")
    printf '%-34s %14s %14s %7.1f%%\n' "$level $format ${f#profiled_}" "$total" "$parse" \
        "$(awk -v p="$parse" -v t="$total" 'BEGIN { print 100 * p / t }')"
done
done
done
[ -n "${LEVEL_LOAD_DATA:-}" ] || { echo "(LEVEL_LOAD_DATA not set: json-benchmark's files skipped)"; exit 0; }
echo
printf '%-34s %14s %14s %8s %12s\n' "json-benchmark load" "instructions" "parse" "share" "scope/heap"
for level in canada citm_catalog twitter; do
for format in json postcard; do
    read -r heap heap_parse < <(count level_real "$level" "$format" profiled_heap_load)
    read -r scope scope_parse < <(count level_real "$level" "$format" profiled_scope_load)
    printf '%-34s %14s %14s %7.1f%%\n' "$level $format heap" "$heap" "$heap_parse" \
        "$(awk -v p="$heap_parse" -v t="$heap" 'BEGIN { print 100 * p / t }')"
    printf '%-34s %14s %14s %7.1f%% %12.3f\n' "$level $format scope" "$scope" "$scope_parse" \
        "$(awk -v p="$scope_parse" -v t="$scope" 'BEGIN { print 100 * p / t }')" \
        "$(awk -v s="$scope" -v h="$heap" 'BEGIN { print s / h }')"
done
done
