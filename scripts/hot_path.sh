#!/usr/bin/env bash
# Counts the instructions and conditional branches of one small allocation on each
# allocator's hot path (benches/examples/hot_path.rs), deterministically, with callgrind.
#
# Usage: scripts/hot_path.sh            (from anywhere inside the repository)
# Needs: valgrind (callgrind_annotate comes with it) and objdump (binutils).
# Honours CARGO_TARGET_DIR; the build is `cargo build --release -p benches --example hot_path`.
set -euo pipefail

for tool in valgrind callgrind_annotate objdump; do
    command -v "$tool" >/dev/null || { echo "hot_path.sh: needs $tool" >&2; exit 1; }
done

cd "$(dirname "$0")/.."
target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --quiet --release -p benches --example hot_path
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

functions="ours_u8 ours_u32 ours_u64 ours_place_u64 ours_local_u64 ours_shared_u64 bumpalo_u8 bumpalo_u32 bumpalo_u64 bump_scope_u8 bump_scope_u32 bump_scope_u64 ours_scope ours_slot bump_scope_scoped ours_child ours_scratch ours_string bump_scope_string pool_pair box_pair ours_iter256 ours_local_iter256 bumpalo_iter256"

echo "calls per function: $calls"
echo
echo "Executed per call (callgrind inclusive cost / calls; includes the function's ret):"
printf '%-16s %8s %8s %8s\n' function instrs cond_br indir_br
for f in $functions; do
    # Lines look like: "4,000,000 (1.2%)  1,000,000 (..)  0  ???:hot_path::ours_u32 [...]".
    line="$(grep -E "[: ]hot_path::${f}( |$)" "$out/annotate.txt" | head -n1 || true)"
    if [ -z "$line" ]; then
        printf '%-16s %8s\n' "$f" "missing (inlined?)"
        continue
    fi
    read -r ir bc bi <<<"$(echo "$line" | sed -E 's/\([^)]*\)//g' | awk '{print $1, $2, $3}' | tr -d ,)"
    n="$calls"
    case "$f" in *iter256) n="$iter_calls" ;; esac
    awk -v f="$f" -v ir="$ir" -v bc="$bc" -v bi="$bi" -v n="$n" \
        'BEGIN { printf "%-16s %8.2f %8.2f %8.2f\n", f, ir / n, bc / n, bi / n }'
done

echo
echo "Static fast path (objdump, from the entry to the first ret; the slow path is out of line;"
echo "calls into other functions are not followed):"
printf '%-16s %8s %8s\n' function instrs branches
objdump -d --no-show-raw-insn -C "$bin" >"$out/disasm.txt"
for f in $functions; do
    awk -v sym="<hot_path::${f}>:" '
        index($0, sym) { on = 1; next }
        on && /^$/ { exit }
        on && NF >= 2 {
            n++
            if ($2 ~ /^j/) b++
            if ($2 ~ /^ret/) { printf "%-16s %8d %8d\n", name, n, b; exit }
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
