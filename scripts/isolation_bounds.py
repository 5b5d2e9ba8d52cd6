#!/usr/bin/env python3
"""Recomputes, from the documents `scripts/isolation.py --keep DIR` kept, how many rows of
the whole run lay within their family's alone run's interval as printed, and as they
would with each alone row's interval at least its kind's reach (`reach_pct` each side of
the headline, as `harness::at_least_what_the_machine_allows` now bounds it). Runs kept
before the documents had `reach_pct` count the same both ways.

    scripts/isolation_bounds.py DIR [DIR ...]

Nothing is measured; nothing is written.
"""
import glob
import json
import sys


def key(r):
    return r["name"] + " " + " ".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))


def main():
    for d in sys.argv[1:]:
        try:
            whole = json.load(open(f"{d}/whole.json"))
        except (OSError, ValueError):
            print(f"{d}: no whole.json")
            continue
        alone = {}
        for f in glob.glob(f"{d}/alone-*.json"):
            if "again" in f:
                continue
            try:
                doc = json.load(open(f))
            except ValueError:
                continue
            for r in doc["results"]:
                if r.get("measured"):
                    alone.setdefault(key(r), r["measured"])
        n = printed = reached = 0
        for r in whole["results"]:
            m = r.get("measured")
            if not m or key(r) not in alone:
                continue
            a = alone[key(r)]
            n += 1
            w, lo, hi, med = m["median_ns"], a["ci_low_ns"], a["ci_high_ns"], a["median_ns"]
            printed += lo <= w <= hi
            reach = (a.get("reach_pct") or 0.0) / 100.0
            reached += min(lo, med * (1 - reach)) <= w <= max(hi, med * (1 + reach))
        if n:
            print(f"{d}: {n} rows; within as printed {printed} ({printed / n * 100:.1f}%), "
                  f"with the reach {reached} ({reached / n * 100:.1f}%)")


if __name__ == "__main__":
    main()
