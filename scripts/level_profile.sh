#!/usr/bin/env bash
# Counts, with callgrind, the instructions of one load of the level_load benchmark's
# 1 MB level and its canada-like level (JSON and postcard) into heap types and into a scope with DeserializeIn,
# and how many of them are spent in the format's own parsing (serde_json's and
# postcard's functions, and the float and integer parsers they call): deterministic,
# so the ratio does not depend on a shared machine's noise.
#
# Usage: scripts/level_profile.sh   (needs valgrind; builds the bench in release)
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "level_profile.sh: needs valgrind" >&2; exit 1; }
target_dir="${CARGO_TARGET_DIR:-target}"
cargo bench -p benches --profile release --bench level_load --no-run 2>/dev/null
bin=$(ls -t "$target_dir"/release/deps/level_load-* | grep -v '\.d$' | head -1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
printf '%-34s %14s %14s %8s\n' "load" "instructions" "parse" "share"
for level in 1MB canada; do
for format in json postcard; do
for f in profiled_heap_load profiled_scope_load; do
    LEVEL_LOAD_LEVEL=$level LEVEL_LOAD_PROFILE=$format valgrind --tool=callgrind --callgrind-out-file="$out/$format.$f.%p" \
        --toggle-collect="*$f*" --separate-recs=1 "$bin" >/dev/null 2>&1
    file=$(ls "$out/$format.$f".* | head -1)
    total=$(callgrind_annotate --inclusive=no "$file" 2>/dev/null |
        awk '/PROGRAM TOTALS/ { gsub(",", "", $1); print $1 }')
    # Self cost of the parsers: serde_json's and postcard's code, lexical/float parsing,
    # memchr (serde_json's string scan).
    parse=$(callgrind_annotate --inclusive=no --threshold=100 "$file" 2>/dev/null |
        awk '/(serde_json::|postcard::|core::num::dec2flt|lexical|memchr|zerocopy)/ {
            gsub(",", "", $1); s += $1 } END { print s + 0 }')
    printf '%-34s %14s %14s %7.1f%%\n' "$level $format ${f#profiled_}" "$total" "$parse" \
        "$(awk -v p="$parse" -v t="$total" 'BEGIN { print 100 * p / t }')"
    rm -f "$out/$format.$f".*
done
done
done
