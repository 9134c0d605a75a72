#!/usr/bin/env bash
# Checks the crate's layering: each source file imports only from its own layer or the
# layers below it, and no files import each other in a circle.
#
# Usage: scripts/layers.sh        (from anywhere inside the repository; exit 1 on a breach)
#
# The layers, lowest first (DESIGN.md, "The layers"):
#   0 ground   src/sync.rs, src/thread_index.rs, src/limits.rs, src/error.rs,
#              src/profiler/ (the profiler seam, feature `tracy`)
#   1 block    src/block/        one fixed block and its bump cursor; knows no scopes
#   2 scope    src/scope/        scopes, finalizer chains, placement, Allocator
#   3 carved   src/pool/, src/dense/, src/store/, src/concurrent/, src/slots/, src/heap/
#                                                            carved from a scope
#   4 above    src/report/, src/scratch/, src/carve/, src/tracy/ (docs and event tests),
#              src/serde/, src/inplace/ (levels in place, feature `rkyv`)
# src/lib.rs (the crate root: declarations and re-exports) and src/rules.rs (prose and
# doctests) stand outside the layers and are not checked.
#
# Folders of one layer may import each other one way only (no folder circle).
#
# What counts as an import: every `crate::a::b` path, every `super::` path and every
# path into a child module the file declares (`mod free_list;` then `free_list::Head`),
# in code (comments and doc comments are skipped), in `use` lines and inline alike. A path is
# resolved to the file of the longest module prefix that exists (`crate::block::cursor::
# Cursor` -> src/block/cursor.rs); a name re-exported at the crate root
# (`crate::LinearAllocator`) is resolved through src/lib.rs's `pub use` lines. `mod`
# declarations are not imports. Circles are looked for between files: a folder's
# mod.rs that uses a child file while the child uses the mod.rs is a circle too, so
# shared items live in a file of their own.
set -euo pipefail
cd "$(dirname "$0")/.."

exec python3 - "$@" <<'PY'
import os, re, sys

SRC = "src"

def layer_of(path):
    rel = os.path.relpath(path, SRC).replace(os.sep, "/")
    # The crate root, and the soundness rules with their compile-time cases (docs and
    # doctests only), sit outside the layers.
    if rel in ("lib.rs", "rules.rs") or rel.startswith("rules/"):
        return None
    top = rel.split("/")[0]
    if "/" not in rel:
        top = top[:-3]  # strip .rs
    table = {
        "sync": 0, "thread_index": 0, "limits": 0, "error": 0, "profiler": 0,
        "block": 1,
        "scope": 2,
        "pool": 3, "dense": 3, "store": 3, "concurrent": 3, "slots": 3, "heap": 3,
        "report": 4, "scratch": 4, "carve": 4, "tracy": 4, "serde": 4, "inplace": 4,
    }
    return table.get(top, "unknown")

NAMES = {0: "ground", 1: "block", 2: "scope", 3: "carved", 4: "above"}

files = []
for root, _, names in os.walk(SRC):
    for n in names:
        if n.endswith(".rs"):
            files.append(os.path.join(root, n))
files.sort()

def module_of(path):
    rel = os.path.relpath(path, SRC)[:-3].replace(os.sep, "/")
    parts = rel.split("/")
    if parts[-1] in ("mod", "lib"):
        parts = parts[:-1]
    return parts

def file_of(parts):
    """The file of the longest existing module prefix of `parts`."""
    for n in range(len(parts), 0, -1):
        base = os.path.join(SRC, *parts[:n])
        for cand in (base + ".rs", os.path.join(base, "mod.rs")):
            if os.path.isfile(cand):
                return cand
    return None

def code_lines(path):
    out = []
    in_block = False
    for line in open(path, encoding="utf-8"):
        s = line.strip()
        if in_block:
            if "*/" in s:
                in_block = False
            continue
        if s.startswith("/*"):
            in_block = "*/" not in s
            continue
        if s.startswith("//"):
            continue
        out.append(line.split("//")[0])
    return out

# Names re-exported at the crate root: `pub use a::b::{X, Y};` and `pub use a::X;`.
root_exports = {}
lib = os.path.join(SRC, "lib.rs")
text = " ".join(code_lines(lib))
for m in re.finditer(r"pub\s+use\s+([\w:]+?)::(\{[^}]*\}|\w+)\s*;", text):
    prefix = m.group(1).split("::")
    if prefix and prefix[0] == "crate":
        prefix = prefix[1:]
    items = m.group(2).strip("{}").split(",")
    for it in items:
        it = it.strip().split(" as ")[-1].strip()
        if it:
            root_exports[it] = prefix

path_re = re.compile(r"\b(crate|super)((?:::\w+)+)")
group_re = re.compile(r"\b(crate|super)((?:::\w+)*)::\{([^}]*)\}")

edges = {}
problems = []
for f in files:
    if os.path.basename(f) == "lib.rs" and os.path.dirname(f) == SRC:
        continue
    mod = module_of(f)
    is_mod_file = os.path.basename(f) == "mod.rs"
    text = " ".join(code_lines(f))
    targets = set()
    paths = []
    for m in group_re.finditer(text):
        for item in m.group(3).split(","):
            item = item.strip().split(" as ")[0].strip()
            if item and item != "self":
                paths.append((m.group(1), m.group(2) + "::" + item.split("::")[0]))
            elif item == "self":
                paths.append((m.group(1), m.group(2)))
    for m in path_re.finditer(text):
        paths.append((m.group(1), m.group(2)))
    # Paths into this module's own children (`mod free_list;` ... `free_list::Head`).
    for child_mod in re.findall(r"\bmod\s+(\w+)\s*;", text):
        for m in re.finditer(r"(?<![:\w])" + child_mod + r"((?:::\w+)+|::\{)", text):
            paths.append(("self", "::" + child_mod))
    for kind, rest in paths:
        parts = [p for p in rest.split("::") if p]
        if kind == "crate":
            full = parts
        elif kind == "self":
            full = mod + parts
        else:
            # `super` of a mod.rs/lib.rs is its folder's parent; of a plain file, its folder.
            base = mod[:-1] if True else mod
            ups = 1
            while parts and parts[0] == "super":
                parts = parts[1:]
                ups += 1
            base = mod[: len(mod) - ups] if len(mod) >= ups else []
            full = base + parts
        if not full:
            continue
        if len(full) >= 1 and full[0] in root_exports and file_of(full[:1]) is None:
            full = root_exports[full[0]] + full[1:]
        target = file_of(full)
        if target is None or target == f:
            continue
        if os.path.relpath(target, SRC) in ("lib.rs",):
            continue
        targets.add(target)
    edges[f] = targets
    lf = layer_of(f)
    if lf == "unknown":
        problems.append(f"{f}: not in any layer (add it to scripts/layers.sh)")
        continue
    if lf is None:
        continue
    for t in sorted(targets):
        lt = layer_of(t)
        if lt is None or lt == "unknown":
            continue
        if lt > lf:
            problems.append(f"{f} ({NAMES[lf]}) imports {t} ({NAMES[lt]}), a higher layer")

# Circles: depth-first search over file edges.
WHITE, GREY, BLACK = 0, 1, 2
color = {f: WHITE for f in edges}
stack = []
seen_cycles = set()
def visit(f):
    color[f] = GREY
    stack.append(f)
    for t in sorted(edges.get(f, ())):
        if t not in color:
            continue
        if color[t] == GREY:
            cyc = stack[stack.index(t):] + [t]
            key = frozenset(cyc)
            if key not in seen_cycles:
                seen_cycles.add(key)
                problems.append("import circle: " + " -> ".join(cyc))
        elif color[t] == WHITE:
            visit(t)
    stack.pop()
    color[f] = BLACK
sys.setrecursionlimit(10000)
for f in sorted(edges):
    if color[f] == WHITE:
        visit(f)

# Circles between folders of one layer (`concurrent/` importing `slots/` while
# `slots/` imports `concurrent/`): within a layer the folders must still form an
# order, so that each could be read (and moved) without the one above it.
def folder_of(path):
    rel = os.path.relpath(path, SRC).replace(os.sep, "/")
    return rel.split("/")[0] if "/" in rel else None
folder_edges = {}
for f, targets in edges.items():
    a = folder_of(f)
    if a is None:
        continue
    for t in targets:
        b = folder_of(t)
        if b is None or b == a or layer_of(f) != layer_of(t):
            continue
        folder_edges.setdefault(a, set()).add(b)
for a in sorted(folder_edges):
    for b in sorted(folder_edges[a]):
        if a < b and a in folder_edges.get(b, set()):
            problems.append(f"folder circle: src/{a}/ and src/{b}/ import each other")

n_edges = sum(len(v) for v in edges.values())
if problems:
    for p in problems:
        print("layers.sh: " + p, file=sys.stderr)
    print(f"layers.sh: {len(problems)} problem(s) in {len(files)} files, {n_edges} imports", file=sys.stderr)
    sys.exit(1)
print(f"layers.sh: {len(files)} files, {n_edges} imports between files, no circle, none upward")
PY
