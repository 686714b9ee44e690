#!/usr/bin/env python3
"""Import cycles between the top-level modules of each crate.

For every crate under crates/, each file belongs to a top-level module
(`src/proxy/tee.rs` -> `proxy`; `src/lib.rs` / `src/main.rs` -> the crate
root, ignored). A file that names `crate::other::…` (in a `use` or a path,
also inside `crate::{…}` groups) makes an edge `module -> other`. A name the
crate root re-exports (`pub use routes::Provider;` in lib.rs, then
`crate::Provider` or `crate::{Provider, …}`) counts as the module it comes
from, so a re-export cannot hide an edge.

What counts as a cycle, and why:
- Only edges between different top-level modules count. A child module that
  imports its parent's items (`proxy/tee.rs` using `super::…` or
  `crate::proxy::…`) is one module talking to itself, not a cycle: a
  top-level module with its children is the unit that must stand in one
  place of the graph.
- Tests are left out: `tests.rs`, `*_tests.rs`, `proptests.rs`, files under `tests/` folders,
  inline `#[cfg(test)] mod … { … }` blocks and modules the crate root
  declares under `#[cfg(test)]` (wire's `testutil`). Test code may reach anywhere
  (a test of `bulk` may open a `Store`); it is not part of the graph the
  library builds on.
- Everything else counts, also a single path in a function body
  (`crate::cloud::strip_prefix(…)`): a dependency is a dependency however it
  is spelt. (Paths that climb out of a top-level module with
  `super::super::…` are not followed: the crates name other modules by
  `crate::`.)
The strongly connected components with more than one module are the cycles;
the script prints them and exits 1 when there are any. CI runs it
(`.ci/test`, before the cargo tests), so a cycle cannot come back.

    python3 scripts/module_cycles.py            # all crates
    python3 scripts/module_cycles.py gateway    # one crate
    python3 scripts/module_cycles.py --why gateway   # also each edge's file:line
    ROOT=/some/checkout python3 scripts/module_cycles.py   # another tree
"""

import os
import pathlib
import re
import sys

ROOT = pathlib.Path(os.environ.get("ROOT") or pathlib.Path(__file__).resolve().parent.parent)
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
        or rel.stem == "proptests"
    )


def strip_comments(text):
    """Comments blanked, line numbers kept."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return "\n".join(line.split("//", 1)[0] for line in text.splitlines())


TEST_MOD = re.compile(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*\{")


def strip_test_mods(text):
    """Inline `#[cfg(test)] mod x { … }` blocks blanked, line numbers kept."""
    while True:
        m = TEST_MOD.search(text)
        if not m:
            return text
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        block = text[m.start():i]
        text = text[: m.start()] + "\n" * block.count("\n") + text[i:]


def reexports(src):
    """Names the crate root re-exports, mapped to their top-level module."""
    out = {}
    for root in ("lib.rs", "main.rs"):
        path = src / root
        if not path.is_file():
            continue
        text = strip_comments(path.read_text())
        for m in re.finditer(r"\bpub(?:\([a-z]+\))?\s+use\s+([a-z_][a-z0-9_]*)::([^;]*);", text):
            module, rest = m.group(1), m.group(2)
            for name in re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\b", rest.split("::")[-1] if "{" not in rest else rest):
                if name not in ("self", "as"):
                    out.setdefault(name, module)
    return out


ROOT_NAME = re.compile(r"\bcrate::([A-Za-z_][A-Za-z0-9_]*)")


def test_modules(src):
    """Top-level modules the crate root declares under `#[cfg(test)]`."""
    out = set()
    for root in ("lib.rs", "main.rs"):
        path = src / root
        if path.is_file():
            text = strip_comments(path.read_text())
            out |= set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)\s*;", text))
    return out


def uses(src):
    """(module, target, file, line) for every reference to another module."""
    roots = reexports(src)
    tests = test_modules(src)
    modules = {p.name.removesuffix(".rs") for p in src.iterdir() if p.suffix == ".rs" or p.is_dir()}
    for file in sorted(src.rglob("*.rs")):
        rel = file.relative_to(src)
        if is_test(rel) or rel.parts[0] in ("lib.rs", "main.rs", "bin"):
            continue
        module = rel.parts[0].removesuffix(".rs")
        if module in tests:
            continue
        text = strip_test_mods(strip_comments(file.read_text()))
        found = [(m.group(1), m.start()) for m in ROOT_NAME.finditer(text)]
        for m in GROUP_START.finditer(text):
            found += [(n, m.start()) for n in next(groups(text[m.start():]))]
        for name, at in found:
            target = name if name in modules else roots.get(name)
            if target and target != module:
                yield module, target, rel, text.count("\n", 0, at) + 1


def graph(src):
    edges = {}
    for module, target, _, _ in uses(src):
        edges.setdefault(module, set()).add(target)
    for file in src.rglob("*.rs"):
        rel = file.relative_to(src)
        if not (is_test(rel) or rel.parts[0] in ("lib.rs", "main.rs", "bin")) and rel.parts[0].removesuffix(".rs") not in test_modules(src):
            edges.setdefault(rel.parts[0].removesuffix(".rs"), set())
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
    args = sys.argv[1:]
    why = "--why" in args
    args = [a for a in args if a != "--why"]
    crates = args or sorted(p.name for p in (ROOT / "crates").iterdir())
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
            if why:
                for a, b, rel, line in sorted(set(uses(src))):
                    if a in comp and b in comp:
                        print(f"    {a}->{b}: {rel}:{line}")
    print(f"{total} cycle(s)")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
