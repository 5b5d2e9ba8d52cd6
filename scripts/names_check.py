#!/usr/bin/env python3
"""No benchmark's name is matched outside its family's files.

A benchmark's facts live on its catalogue entry (src/bench/facts.rs); a table or a test
keyed by its name elsewhere compiles with a name typed wrong and silently gives the
benchmark another kind, entry path or rule. This check lists every string literal of
shipped code (unit tests and tests/ are not shipped) that is a benchmark name or a
family's prefix (`"syscall.getpid"`, `"ctx."`), and fails on one outside
src/bench/<family>.rs and src/bench/<family>/, the families being those of
`catalogue()` in src/bench/mod.rs, unless its file is in ALLOWED below, which says why.
Not matches, and not listed: a lookup, `bench::find("x.y")` (it fails loudly on a name
not in the catalogue), and an entry's own `name: "x.y"` in src/bench.

    scripts/names_check.py          the check (exit 1 on a name matched elsewhere)
    scripts/names_check.py --all    every name literal of shipped code, allowed or not
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import layers  # noqa: E402  (its list of test-only files)

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
SRC = os.path.join(ROOT, "src")

# Files that name benchmarks to select them, not to give them facts, and why.
ALLOWED = {
    "src/bench/peers.rs": "the peers' tests, keyed by the peer's test name, each naming "
    "the benchmark that measures it with its values; a unit test fails on a name not "
    "in the catalogue or a value it does not take, and docs/benchmarks.md mirrors it",
    "src/repro/": "each seed study runs and reads the rows of the benchmarks it "
    "reproduces (a selection: bench::find fails loudly on a name not in the catalogue)",
    "src/report/graphs/seeds.rs": "the seed studies' figures draw the rows of the "
    "benchmarks they plot (a selection)",
}


def families():
    """The family modules of `catalogue()`."""
    with open(os.path.join(SRC, "bench", "mod.rs")) as f:
        text = f.read()
    body = text[text.index("pub fn catalogue()"):]
    body = body[: body.index(".concat()")]
    return sorted(set(re.findall(r"(\w+)(?:::\w+)*::(?:BENCHES|MORE)", body)))


def lex(text):
    """The code with comments and string contents blanked (length kept), and the
    string literals' (start, content)."""
    code, strings, i, n = list(text), [], 0, len(text)
    while i < n:
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i) + 2
        elif text[i] == '"' or (text[i] == "r" and re.match(r'r#*"', text[i:i + 10])
                                and not re.match(r"\w", text[i - 1:i] or " ")):
            m = re.match(r'(r?)(#*)"', text[i:])
            j = i + len(m.group(0))
            if m.group(1):
                j = text.find('"' + m.group(2), j) + 1 + len(m.group(2))
            else:
                while text[j] != '"':
                    j += 2 if text[j] == "\\" else 1
                j += 1
            strings.append((i, text[i + len(m.group(0)):j - 1 - len(m.group(2))]))
            for k in range(i + len(m.group(0)), j - 1 - len(m.group(2))):
                code[k] = " "
            i = j
            continue
        elif text[i] == "'" and re.match(r"'(\\.|[^\\'])'", text[i:i + 4]):
            j = i + len(re.match(r"'(\\.|[^\\'])'", text[i:i + 4]).group(0))
        else:
            i += 1
            continue
        for k in range(i, j):
            if code[k] != "\n":
                code[k] = " "
        i = j
    return "".join(code), strings


def test_spans(code):
    """The spans of items under #[cfg(test)] in the blanked code."""
    spans = []
    for m in re.finditer(r"#\[cfg\(test\)\]", code):
        brace, semi = code.find("{", m.end()), code.find(";", m.end())
        if semi >= 0 and (brace < 0 or semi < brace):
            spans.append((m.start(), semi))
            continue
        depth, k = 0, brace
        while k < len(code):
            depth += {"{": 1, "}": -1}.get(code[k], 0)
            if depth == 0:
                break
            k += 1
        spans.append((m.start(), k))
    return spans


def found():
    """(path, line, literal) of every benchmark name in shipped code."""
    fams = families()
    name = re.compile(r"^(%s)(\.[a-z0-9_.]*)?$" % "|".join(fams))
    tests = layers.test_files()
    out = []
    for dirpath, _, files in os.walk(SRC):
        for file in sorted(files):
            path = os.path.join(dirpath, file)
            if not file.endswith(".rs") or file.endswith("tests.rs") or any(
                path == t or path.startswith(t + os.sep) for t in tests
            ):
                continue
            with open(path) as f:
                text = f.read()
            code, strings = lex(text)
            spans = test_spans(code)
            for at, s in strings:
                if "." not in s or not name.match(s):
                    continue
                if any(a <= at <= b for a, b in spans):
                    continue
                before = code[max(0, at - 40):at]
                # A lookup (`bench::find("x.y")` fails loudly on a name not in the
                # catalogue) and an entry's own name are not matches.
                if re.search(r"\bfind\(\s*$", before) or (
                    re.search(r"\bname:\s*$", before) and path.startswith(os.path.join(SRC, "bench"))
                ):
                    continue
                rel = os.path.relpath(path, ROOT)
                out.append((rel, text.count("\n", 0, at) + 1, s))
    return out, fams


def allowed(rel, fams):
    """Why `rel` may name benchmarks, or None."""
    for fam in fams:
        if rel == f"src/bench/{fam}.rs" or rel.startswith(f"src/bench/{fam}/"):
            return "its family's own file"
    for prefix, why in ALLOWED.items():
        if rel == prefix or (prefix.endswith("/") and rel.startswith(prefix)):
            return why
    return None


def main():
    hits, fams = found()
    bad = [h for h in hits if allowed(h[0], fams) is None]
    if "--all" in sys.argv:
        for rel, line, s in hits:
            print(f"{rel}:{line}: \"{s}\"  ({allowed(rel, fams) or 'NOT ALLOWED'})")
    for rel, line, s in bad:
        print(f"{rel}:{line}: \"{s}\": a benchmark's name matched outside its family; "
              "put the fact on its entry (src/bench/facts.rs)", file=sys.stderr)
    if bad:
        sys.exit(1)
    print(f"no benchmark name matched outside its family ({len(hits)} in its files and "
          f"the {len(ALLOWED)} allowed places)")


if __name__ == "__main__":
    main()
