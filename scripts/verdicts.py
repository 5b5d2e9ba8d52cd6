#!/usr/bin/env python3
"""Checks that every row's verdict describes the interval it prints (issue 54): no row
is converged with its interval wider than its target, and none is unconverged inside
its target without a reason of its own (a reason that is not about the width).

    scripts/verdicts.py DOC.json [DOC.json ...]
    syscost run --profile quick --format json | scripts/verdicts.py -

Each DOC is a syscost JSON document (`run --format json`, `history export`). Prints
one line per document and every row that breaks the rule; exits 1 if any does.
"""
import json
import sys

WIDTH = {"budget", "clock_step", "wide", "runs_spread"}


def check(doc):
    """(rows checked, [lines about rows that break the rule])"""
    bad, n = [], 0
    for r in doc["results"]:
        m = r.get("measured")
        if not m or m.get("target_pct") is None:
            continue
        n += 1
        half = (m["ci_high_ns"] - m["ci_low_ns"]) / 2 / m["median_ns"] * 100
        target = m["target_pct"]
        inside = half <= target * (1 + 1e-9)
        why = [w["why"] for w in m.get("why", [])]
        name = r["name"] + " " + " ".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
        if m["converged"] and not inside:
            bad.append(f"  converged at ±{half:.2f}%, wider than its target ±{target:.2f}%: {name}")
        if not m["converged"] and inside and not [w for w in why if w not in WIDTH]:
            bad.append(f"  not converged at ±{half:.2f}% within ±{target:.2f}%, reasons {why}: {name}")
        if not m["converged"] and not why:
            bad.append(f"  not converged with no reason recorded: {name}")
    return n, bad


def main():
    ok = True
    for path in sys.argv[1:] or ["-"]:
        doc = json.load(sys.stdin if path == "-" else open(path))
        n, bad = check(doc)
        ok &= not bad
        print(f"{'PASS' if not bad else 'FAIL'} {path}: {n} rows, {len(bad)} whose verdict "
              "does not describe the interval printed")
        for line in bad:
            print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
