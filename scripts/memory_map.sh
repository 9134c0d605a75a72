#!/usr/bin/env bash
# Regenerates the README's memory map picture: runs examples/memory_map.rs, which prints
# the map as a table and writes it as SVG to docs/memory_map.svg, then renders
# docs/memory_map.png from it. Paste the printed table into README.md's memory map
# section, so its text and picture show the same run.
#
# Usage: scripts/memory_map.sh          (from anywhere inside the repository)
# Needs: rsvg-convert (Debian/Ubuntu: apt-get install librsvg2-bin).
set -euo pipefail

command -v rsvg-convert >/dev/null || {
    echo "memory_map.sh: needs rsvg-convert (apt-get install librsvg2-bin)" >&2
    exit 1
}

cd "$(dirname "$0")/.."
cargo run --quiet --example memory_map -- docs/memory_map.svg
rsvg-convert --background-color=white docs/memory_map.svg -o docs/memory_map.png
echo "wrote docs/memory_map.png"
