#!/usr/bin/env python3
"""The import graph among src/'s top-level modules, and whether it has a cycle.

An edge A -> B is a path `crate::B` written in a file of module A (src/A.rs or
src/A/...), outside comments, string literals and `#[cfg(test)]` items: unit tests may
reach anywhere, shipped code may not. Grouped imports (`use crate::{B, C::x}`) count
every module they name.

    scripts/layers.py            checks the graph (exit 1 on a fault) and prints the layers
    scripts/layers.py --edges    every edge, with one place that makes it
    scripts/layers.py --why A B  every place where A uses B

The check fails when the graph has a cycle, when a module is missing from LAYERS, when
a module uses one in its own layer or above, or when ARCHITECTURE.md's code map does not
name a module (as `src/NAME`). ARCHITECTURE.md gives the layers in words; `.ci/run`
runs this check.
"""

import argparse
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")

# Lowest first. A module may use only modules of lower layers (ARCHITECTURE.md).
LAYERS = [
    ("the method's constants", ["method"]),
    ("foundation", ["error", "stats", "host", "draw"]),
    ("system calls", ["os"]),
    ("measurement core", ["harness"]),
    ("what is measured and how it is recorded", ["bench", "trace", "explain"]),
    ("result model", ["results"]),
    ("after the measurement", ["derived", "spill"]),
    ("orchestration", ["session"]),
    ("comparison", ["compare"]),
    ("outputs", ["report", "store"]),
    ("fleet", ["fleet"]),
    ("seed studies", ["repro"]),
    ("command line", ["cli"]),
]


def modules():
    """The top-level modules named in src/lib.rs."""
    with open(os.path.join(SRC, "lib.rs")) as f:
        text = f.read()
    return re.findall(r"^pub mod (\w+);", text, re.M)


def strip(text):
    """The text with comments and string literals blanked, lines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c == "r" and re.match(r'r#*"', text[i:i + 10]) and not re.match(r"\w", text[i - 1:i] or " "):
            m = re.match(r'r(#*)"', text[i:])
            end = text.find('"' + m.group(1), i + len(m.group(0)))
            end = n if end < 0 else end + 1 + len(m.group(1))
            out.append("\n" * text.count("\n", i, end))
            i = end
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append("\n" * text.count("\n", i, j))
            i = j + 1
        elif c == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4] + " "):
            m = re.match(r"'(\\[^']*|[^\\'])'", text[i:])
            i += len(m.group(0)) if m else 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def drop_tests(text):
    """The stripped text without items under #[cfg(test)] (a mod, fn or use)."""
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        j = m.end()
        brace = text.find("{", j)
        semi = text.find(";", j)
        if semi >= 0 and (brace < 0 or semi < brace):
            end = semi + 1
        else:
            depth, k = 0, brace
            while k < len(text):
                if text[k] == "{":
                    depth += 1
                elif text[k] == "}":
                    depth -= 1
                    if depth == 0:
                        break
                k += 1
            end = k + 1
        out.append("\n" * text.count("\n", m.start(), end))
        i = end
    out.append(text[i:])
    return "".join(out)


def group_heads(body):
    """The first path segment of each item of a `{...}` import group."""
    heads, depth, item = [], 0, ""
    for c in body + ",":
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        if c == "," and depth == 0:
            word = re.match(r"\s*(\w+)", item)
            if word:
                heads.append(word.group(1))
            item = ""
        else:
            item += c
    return heads


def uses(text, names):
    """(module, line) for each `crate::module` in the text."""
    found = []
    for m in re.finditer(r"\bcrate\s*::\s*(\{|\w+)", text):
        line = text.count("\n", 0, m.start()) + 1
        if m.group(1) == "{":
            depth, k = 1, m.end()
            while k < len(text) and depth:
                depth += {"{": 1, "}": -1}.get(text[k], 0)
                k += 1
            for head in group_heads(text[m.end():k - 1]):
                if head in names:
                    found.append((head, line))
        elif m.group(1) in names:
            found.append((m.group(1), line))
    return found


def test_files():
    """The files and directories of modules declared under #[cfg(test)] (`mod tests;`)."""
    out = set()
    for dirpath, _, files in os.walk(SRC):
        for file in files:
            if not file.endswith(".rs"):
                continue
            path = os.path.join(dirpath, file)
            with open(path) as f:
                text = f.read()
            pattern = r"#\[cfg\(test\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([\w:]+\))?\s+)?mod\s+(\w+)\s*;"
            for name in re.findall(pattern, text):
                if file in ("mod.rs", "lib.rs", "main.rs"):
                    base = dirpath
                else:
                    base = os.path.join(dirpath, file[:-3])
                out.add(os.path.join(base, name + ".rs"))
                out.add(os.path.join(base, name))
    return out


def graph():
    """{module: {used module: [(file, line), ...]}} over shipped code."""
    names = set(modules())
    edges = {name: {} for name in names}
    tests = test_files()
    for dirpath, _, files in os.walk(SRC):
        for file in sorted(files):
            if not file.endswith(".rs"):
                continue
            path = os.path.join(dirpath, file)
            if any(path == t or path.startswith(t + os.sep) for t in tests):
                continue
            rel = os.path.relpath(path, SRC)
            top = rel.split(os.sep)[0].removesuffix(".rs")
            if top not in names:
                continue
            with open(path) as f:
                text = drop_tests(strip(f.read()))
            for used, line in uses(text, names):
                if used != top:
                    edges[top].setdefault(used, []).append((os.path.join("src", rel), line))
    return edges


def cycles(edges):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

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
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def faults(edges):
    """What breaks the declared layers, one line each."""
    out = []
    layer = {m: i for i, (_, ms) in enumerate(LAYERS) for m in ms}
    for m in sorted(edges):
        if m not in layer:
            out.append(f"{m} is in no layer of LAYERS")
    for m in sorted(layer):
        if m not in edges:
            out.append(f"{m} is in LAYERS but not a module of src/lib.rs")
    for a in sorted(edges):
        for b in sorted(edges[a]):
            if a in layer and b in layer and layer[b] >= layer[a]:
                file, line = edges[a][b][0]
                where = "its own layer" if layer[b] == layer[a] else "a higher layer"
                out.append(f"{a} uses {b}, of {where} ({file}:{line})")
    try:
        with open(os.path.join(ROOT, "ARCHITECTURE.md")) as f:
            doc = f.read()
    except OSError:
        return out + ["ARCHITECTURE.md is missing"]
    for m in sorted(edges):
        if f"src/{m}" not in doc:
            out.append(f"ARCHITECTURE.md's code map does not name src/{m}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--edges", action="store_true", help="print every edge")
    ap.add_argument("--why", nargs=2, metavar=("A", "B"), help="where A uses B")
    args = ap.parse_args()
    edges = graph()
    if args.why:
        a, b = args.why
        for file, line in edges.get(a, {}).get(b, []):
            print(f"{file}:{line}")
        return 0
    if args.edges:
        for a in sorted(edges):
            for b in sorted(edges[a]):
                file, line = edges[a][b][0]
                print(f"{a} -> {b}  ({len(edges[a][b])}, e.g. {file}:{line})")
    found = cycles(edges)
    if found:
        for comp in found:
            inner = sum(1 for a in comp for b in edges[a] if b in comp)
            print(f"cycle among {len(comp)} modules ({inner} edges): {', '.join(comp)}")
        print("scripts/layers.py --edges lists the edges; --why A B says where", file=sys.stderr)
        return 1
    broken = faults(edges)
    for line in broken:
        print(line)
    if broken:
        return 1
    for i, (name, ms) in enumerate(LAYERS):
        print(f"layer {i} ({name}): {', '.join(ms)}")
    n = sum(len(e) for e in edges.values())
    print(f"no cycle among {len(edges)} top-level modules; all {n} edges go down a layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
