#!/usr/bin/env bash
# Counts the instructions and conditional branches of one small allocation on each
# allocator's hot path (benches/examples/hot_path.rs), deterministically, with callgrind.
#
# Usage (from anywhere inside the repository):
#   scripts/hot_path.sh            the table of counts, then each function's fast path (objdump)
#   scripts/hot_path.sh --check    the table, then a comparison with the ceilings in
#                                  scripts/hot_path_ceilings.txt: exits 1 naming every
#                                  function of ours over its ceiling or missing (CI runs it)
#   scripts/hot_path.sh --update   rewrites scripts/hot_path_ceilings.txt from this run
#                                  (after a change that makes a hot path faster, or a new
#                                  compiler; say why in the commit)
# Needs: valgrind (callgrind_annotate comes with it); objdump (binutils) for the default
# mode only. Honours CARGO_TARGET_DIR; the build is
# `cargo build --release -p benches --example hot_path`.
#
# The counts are exact and repeat to the instruction for one binary; a different rustc
# or a change in the library may move them, which is what the check is for. Only our
# own functions (`ours_*`, `pool_pair`, `pool_mut_pair`) have ceilings; the peers are for comparison.
set -euo pipefail

mode=table
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    --update) mode=update ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "hot_path.sh: unknown argument '$1' (try --help)" >&2; exit 2 ;;
esac

tools="valgrind callgrind_annotate"
[ "$mode" = table ] && tools="$tools objdump"
for tool in $tools; do
    command -v "$tool" >/dev/null || { echo "hot_path.sh: needs $tool" >&2; exit 1; }
done

cd "$(dirname "$0")/.."
ceilings_file=scripts/hot_path_ceilings.txt
target_dir="${CARGO_TARGET_DIR:-target}"
# HOT_PATH_FEATURES=scope-stack/tracy measures a build with crate features on (the
# table only: the ceilings are for the default build).
cargo build --quiet --release -p benches --example hot_path ${HOT_PATH_FEATURES:+--features "$HOT_PATH_FEATURES"}
bin="$target_dir/release/examples/hot_path"

out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT

# --branch-sim=yes adds Bc (conditional branches executed) and Bi (indirect branches).
valgrind --tool=callgrind --branch-sim=yes --callgrind-out-file="$out/callgrind.out" \
    "$bin" >"$out/stdout" 2>"$out/valgrind.log"
calls="$(sed -n 's/^calls per function: //p' "$out/stdout")"
# The `alloc_iter` functions collect 256 items a call and run fewer times.
iter_calls="$(sed -n 's/^calls per iter function: //p' "$out/stdout")"

# Inclusive cost of each measured function: its body plus anything it calls (the
# allocation functions call nothing on their fast path; `ours_scope` calls the scope's
# out-of-line `Drop`). The caller's loop is excluded.
callgrind_annotate --inclusive=yes --threshold=100 --show=Ir,Bc,Bi "$out/callgrind.out" >"$out/annotate.txt"

functions="ours_u8 ours_u32 ours_u64 ours_place_u64 ours_local_u64 ours_shared_u64 bumpalo_u8 bumpalo_u32 bumpalo_u64 bump_scope_u8 bump_scope_u32 bump_scope_u64 ours_scope ours_slot ours_task_slot bump_scope_scoped ours_child ours_scratch ours_string bump_scope_string ours_vec_push pool_pair pool_mut_pair box_pair ours_heap_alloc_free rlsf_alloc_free ours_iter256 ours_local_iter256 bumpalo_iter256"

echo "calls per function: $calls"
echo
echo "Executed per call (callgrind inclusive cost / calls; includes the function's ret):"
printf '%-20s %8s %8s %8s\n' function instrs cond_br indir_br
for f in $functions; do
    # Lines look like: "4,000,000 (1.2%)  1,000,000 (..)  0  ???:hot_path::ours_u32 [...]".
    line="$(grep -E "[: ]hot_path::${f}( |$)" "$out/annotate.txt" | head -n1 || true)"
    if [ -z "$line" ]; then
        printf '%-20s %8s\n' "$f" "missing (inlined?)"
        echo "$f missing" >>"$out/measured.txt"
        continue
    fi
    read -r ir bc bi <<<"$(echo "$line" | sed -E 's/\([^)]*\)//g' | awk '{print $1, $2, $3}' | tr -d ,)"
    n="$calls"
    case "$f" in *iter256) n="$iter_calls" ;; esac
    awk -v f="$f" -v ir="$ir" -v bc="$bc" -v bi="$bi" -v n="$n" \
        'BEGIN { printf "%-20s %8.2f %8.2f %8.2f\n", f, ir / n, bc / n, bi / n }'
    awk -v f="$f" -v ir="$ir" -v n="$n" 'BEGIN { printf "%s %.2f\n", f, ir / n }' >>"$out/measured.txt"
done

# Ours: the functions that must have a ceiling (the peers are for comparison only).
ours() { case "$1" in ours_* | pool_pair | pool_mut_pair) return 0 ;; *) return 1 ;; esac; }

if [ "$mode" = update ]; then
    rev="$(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
    git diff --quiet HEAD -- src benches 2>/dev/null || rev="$rev+changes"
    {
        echo "# Instruction ceilings for \`scripts/hot_path.sh --check\` (CI runs it)."
        echo "#"
        echo "# One line per function of ours: its name, then the most instructions per call it may"
        echo "# execute (callgrind's inclusive count over the calls, as the table prints it), then"
        echo "# where the number came from. --check fails for a function above its ceiling, or"
        echo "# missing from the run. Numbers are exact for one binary: a new rustc may move them."
        echo "# Lower a ceiling when a change makes its path faster; raise one only with a reason"
        echo "# in the commit. \`scripts/hot_path.sh --update\` rewrites this file from a run."
        echo "#"
        echo "# Measured by scripts/hot_path.sh (callgrind, $(valgrind --version), $(rustc -V | cut -d' ' -f1-2), $(uname -m))"
        echo "# at $rev on $(date -u +%Y-%m-%d)."
        echo "rustc: $(rustc -V | cut -d' ' -f2)"
        echo "#"
        printf '# %-19s %12s   %s\n' function "instrs/call" "source"
        while read -r f v; do
            ours "$f" || continue
            [ "$v" = missing ] && { echo "hot_path.sh: $f is missing from the run; not written" >&2; exit 1; }
            printf '%-21s %12s   # %s %s\n' "$f" "$v" "$rev" "$(date -u +%Y-%m-%d)"
        done <"$out/measured.txt"
    } >"$out/ceilings.txt"
    cp "$out/ceilings.txt" "$ceilings_file"
    echo
    echo "wrote $ceilings_file"
    exit 0
fi

if [ "$mode" = check ]; then
    [ -f "$ceilings_file" ] || { echo "hot_path.sh: no $ceilings_file" >&2; exit 1; }
    echo
    echo "Check against $ceilings_file:"
    failed=0
    # Every function of ours that the run measures needs a ceiling.
    while read -r f _; do
        if ours "$f" && ! grep -qE "^${f}[[:space:]]" "$ceilings_file"; then
            echo "FAIL $f: no ceiling in $ceilings_file"
            failed=1
        fi
    done <"$out/measured.txt"
    while read -r f ceiling _; do
        case "$f" in "" | "#"* | rustc:) continue ;; esac
        measured="$(awk -v f="$f" '$1 == f { print $2 }' "$out/measured.txt")"
        if [ -z "$measured" ] || [ "$measured" = missing ]; then
            echo "FAIL $f: missing from the run (renamed, or inlined into its caller?)"
            failed=1
        elif awk -v m="$measured" -v c="$ceiling" 'BEGIN { exit !(m > c) }'; then
            echo "FAIL $f: $measured instructions per call, over its ceiling of $ceiling"
            failed=1
        elif awk -v m="$measured" -v c="$ceiling" 'BEGIN { exit !(m < c) }'; then
            echo "ok   $f: $measured (ceiling $ceiling: lower it, --update)"
        else
            echo "ok   $f: $measured"
        fi
    done <"$ceilings_file"
    if [ "$failed" != 0 ]; then
        pinned="$(sed -n 's/^rustc: //p' "$ceilings_file")"
        now="$(rustc -V | cut -d' ' -f2)"
        if [ -n "$pinned" ] && [ "$pinned" != "$now" ]; then
            echo "note: the ceilings were measured with rustc $pinned, this is rustc $now"
        fi
        echo "hot_path.sh: the hot-path check failed (see FAIL above)" >&2
        exit 1
    fi
    echo "every hot path is within its ceiling"
    exit 0
fi

echo
echo "Static fast path (objdump, from the entry to the first ret; the slow path is out of line;"
echo "calls into other functions are not followed):"
printf '%-20s %8s %8s\n' function instrs branches
objdump -d --no-show-raw-insn -C "$bin" >"$out/disasm.txt"
for f in $functions; do
    awk -v sym="<hot_path::${f}>:" '
        index($0, sym) { on = 1; next }
        on && /^$/ { exit }
        on && NF >= 2 {
            n++
            if ($2 ~ /^j/) b++
            if ($2 ~ /^ret/) { printf "%-20s %8d %8d\n", name, n, b; exit }
        }
    ' name="$f" "$out/disasm.txt"
done

if [ "${SHOW_ASM:-0}" = 1 ]; then
    echo
    for f in $functions; do
        awk -v sym="<hot_path::${f}>:" 'index($0, sym) { on = 1 } on && /^$/ { exit } on' "$out/disasm.txt"
        echo
    done
fi
