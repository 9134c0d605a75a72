#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for FUZZ_SECONDS seconds each (default 30),
# one after another. Installs what it needs: a nightly toolchain and cargo-fuzz.
#
#   FUZZ_SECONDS=600 scripts/fuzz.sh          # ten minutes per target
#   FUZZ_SECONDS=3600 scripts/fuzz.sh store   # one target for an hour
#
# Each target starts from its seeds in fuzz/corpus/<target>/ (files named seed-*; what
# the fuzzer adds there is ignored by git). A failure stops the script; the input that
# failed is saved in fuzz/artifacts/<target>/ and can be replayed with
# `cargo +nightly fuzz run <target> fuzz/artifacts/<target>/<file>`.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-30}"
targets=("$@")
if [ "${#targets[@]}" -eq 0 ]; then
    targets=(scopes pool dense store scratch concurrent serde_levels heap inplace_levels)
fi

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

for t in "${targets[@]}"; do
    printf '\n==> fuzz %s for %s s\n' "$t" "$seconds"
    mkdir -p "fuzz/corpus/$t"
    cargo +nightly fuzz run -O "$t" -- -max_total_time="$seconds"
done
