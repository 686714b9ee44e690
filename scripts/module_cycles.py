#!/usr/bin/env python3
"""Import cycles between the top-level modules of each crate.

For every crate under crates/, each file belongs to a top-level module
(`src/proxy/tee.rs` -> `proxy`; `src/lib.rs` -> the crate root, ignored).
A file that names `crate::other::…` (in a `use` or a path) makes an edge
`module -> other`. Tests (`tests.rs`, `*_tests.rs`, `tests/` folders) are left
out. The strongly connected components with more than one module are the
cycles; the script prints them and exits 1 when there are any.

    python3 scripts/module_cycles.py            # all crates
    python3 scripts/module_cycles.py gateway    # one crate
    ROOT=/some/checkout python3 scripts/module_cycles.py   # another tree
"""

import os
import pathlib
import re
import sys

ROOT = pathlib.Path(os.environ.get("ROOT") or pathlib.Path(__file__).resolve().parent.parent)
PATH = re.compile(r"\bcrate::([a-z_][a-z0-9_]*)")
GROUP_START = re.compile(r"\bcrate::\{")


def groups(text):
    """The top-level names of each `crate::{a, b::{c, d}, e}` group."""
    for m in GROUP_START.finditer(text):
        depth, name, names, i = 1, "", [], m.end()
        while i < len(text) and depth:
            c = text[i]
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            elif c == "," and depth == 1:
                names.append(name)
                name = ""
            elif depth == 1:
                name += c
            i += 1
        names.append(name)
        yield [n.strip().split("::")[0] for n in names if n.strip()]


def is_test(rel):
    parts = rel.parts
    return (
        "tests" in parts[:-1]
        or rel.name == "tests.rs"
        or rel.stem.endswith("_tests")
    )


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


def graph(src):
    edges = {}
    for file in sorted(src.rglob("*.rs")):
        rel = file.relative_to(src)
        if is_test(rel) or rel.parts[0] in ("lib.rs", "main.rs", "bin"):
            continue
        module = rel.parts[0].removesuffix(".rs")
        text = strip_comments(file.read_text())
        names = set(PATH.findall(text))
        for group in groups(text):
            names |= {n for n in group if n[0].islower()}
        targets = {n for n in names if n != module and n not in ("self", "super")}
        edges.setdefault(module, set()).update(targets)
    for targets in list(edges.values()):
        for t in targets:
            edges.setdefault(t, set())
    return edges


def components(edges):
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [c for c in out if len(c) > 1]


def main():
    crates = sys.argv[1:] or sorted(p.name for p in (ROOT / "crates").iterdir())
    total = 0
    for crate in crates:
        src = ROOT / "crates" / crate / "src"
        if not src.is_dir():
            continue
        edges = graph(src)
        for comp in components(edges):
            total += 1
            inner = [
                f"{a}->{b}" for a in comp for b in sorted(edges[a]) if b in comp
            ]
            print(f"{crate}: cycle of {len(comp)}: {' '.join(comp)}")
            print(f"    edges: {', '.join(inner)}")
    print(f"{total} cycle(s)")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
