#!/usr/bin/env python3
"""Screens a change to the no-history interval on documents already measured: each row's
interval is rebuilt from what its JSON keeps (the rounds' own interval, `own_ci_*`, and
what the machine allows its kind, `floor_pct`) with another term for the machine's
movement in place of the printed one, and the coverage the issue-54 targets count is
read again.

    scripts/isolation_bounds.py DIR [DIR ...]

A DIR kept by `scripts/isolation.py --keep DIR` (whole.json and alone-*.json): how many
rows of the whole run lie within their family's alone interval. A DIR kept by
`scripts/drift.py --keep DIR` (SERIES-NN.json): per row, how many of the runs' intervals
hold the median of their medians, and the median half-width beside the medians' spread.

The terms, each combined with the rounds' own as `sqrt(own^2 + term^2)`, and only for rows
whose printed interval had the machine's term (`interval_source` "machine"):
- printed: as the run printed it (the kind's probes, docs/method.md section 6);
- own: none, the rounds' own interval alone;
- canary: the run's getpid canary readings before every kept round, drawn as
  `stats::rounds::floor` draws the probes (one figure for every kind);
- pooled: every row of the kind's round figures in the document, each relative to its
  row's median, drawn the same way (a single row's document: its own rounds);
- between: the kind's movement between the machine's recent runs alone, where the
  history had it (`machine.floors[].between_pct`; else as printed);
- bound: the printed term scaled by the row's rounds' spread over its kind's probe
  readings' (p10-p90 each, at most 1): a row whose rounds did not move as its probe did
  moves with it by no more than that ratio;
- rowfloor: the row's own round figures drawn as the probes are, at most the printed term.
A screen, not the live effect: a row held to another target stops after another number
of rounds. Nothing is measured; nothing is written.
"""
import collections
import glob
import json
import math
import os
import random
import statistics
import sys

VARIANTS = ("printed", "own", "canary", "pooled", "between", "bound", "rowfloor")


def key(r):
    return r["name"] + " " + " ".join(f"{k}={v}" for k, v in sorted(r.get("params", {}).items()))


def measured(doc):
    for r in doc.get("results", []):
        m = r.get("measured")
        if m and m.get("rounds"):
            yield r, m


def floor(readings, rounds, least=10):
    """`stats::rounds::floor`: sqrt(2) x half the 95% range of the 20% trimmed mean of
    `rounds` draws, relative to the readings' median (0 below `least` readings)."""
    xs = sorted(x for x in readings if x and x > 0)
    if len(xs) < least:
        return 0.0
    med = statistics.median(xs)
    rng, g = random.Random(1), int(0.2 * rounds)
    centers = sorted(
        statistics.fmean(sorted(rng.choice(xs) for _ in range(rounds))[g:rounds - g]) / med
        for _ in range(400))
    q = lambda p: centers[min(len(centers) - 1, int(p / 100 * len(centers)))]
    return math.sqrt(2) * (q(97.5) - q(2.5)) / 2


def intervals(doc):
    """{row: (figure, {variant: (low, high)})} for one document."""
    rounds = max(5, doc.get("harness", {}).get("min_rounds", 8))
    canary, pooled = [], collections.defaultdict(list)
    for _, m in measured(doc):
        canary += [x for x in (m.get("canary") or {}).get("rounds_ns") or [] if x]
        xs = [rf["median_ns"] for rf in m["rounds"] if rf.get("median_ns")]
        if len(xs) >= 3:
            med = statistics.median(xs)
            pooled[m.get("work")] += [x / med for x in xs]
    terms = {"canary": floor(canary, rounds)}
    between = {f["kind"]: f.get("between_pct") for f in doc.get("machine", {}).get("floors", [])}
    probe_spread = {f["kind"]: f.get("spread_pct") for f in doc.get("machine", {}).get("floors", [])}
    by_kind = {k: floor(v, rounds) for k, v in pooled.items()}
    out = {}
    for r, m in measured(doc):
        f, lo, hi = m["median_ns"], m["ci_low_ns"], m["ci_high_ns"]
        added = m.get("interval_source") == "machine"
        ol = (f - (m.get("own_ci_low_ns") or lo)) / f
        oh = ((m.get("own_ci_high_ns") or hi) - f) / f
        b = between.get(m.get("work"))
        allows = (m.get("floor_pct") or 0) / 100
        xs = sorted(rf["median_ns"] for rf in m["rounds"] if rf.get("median_ns"))
        ps = probe_spread.get(m.get("work")) or 0
        own_spread = (pct(xs, 90) - pct(xs, 10)) / statistics.median(xs) * 100 if len(xs) >= 3 else ps
        term = {"bound": allows * min(1.0, own_spread / ps) if ps > 0 else allows,
                "rowfloor": min(allows, floor(xs, rounds, least=5)),
                "own": 0.0, "canary": terms["canary"], "pooled": by_kind.get(m.get("work"), 0.0),
                "between": b / 100 if b is not None else (m.get("floor_pct") or 0) / 100}
        ivs = {"printed": (lo, hi)}
        for v, t in term.items():
            t = t if added else 0.0
            ivs[v] = (f * (1 - math.hypot(ol, t)), f * (1 + math.hypot(oh, t)))
        out[key(r)] = (f, ivs)
    return out


def pct(xs, p):
    """The p-th percentile of sorted `xs`, interpolated."""
    i = (len(xs) - 1) * p / 100
    lo = int(i)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (i - lo)


def half(iv, f):
    return (iv[1] - iv[0]) / 2 / f * 100


def isolation(d):
    whole = intervals(json.load(open(f"{d}/whole.json")))
    inside, total, widths = collections.Counter(), 0, collections.defaultdict(list)
    for path in sorted(glob.glob(f"{d}/alone-*.json")):
        for k, (f, ivs) in intervals(json.load(open(path))).items():
            if k not in whole:
                continue
            total += 1
            for v in VARIANTS:
                inside[v] += ivs[v][0] <= whole[k][0] <= ivs[v][1]
                widths[v].append(half(ivs[v], f))
    print(f"{d}: {total} rows of the whole run beside their family alone")
    for v in VARIANTS:
        print(f"  {v:8s} within {inside[v]}/{total} ({inside[v] / max(1, total) * 100:.1f}%), "
              f"alone rows' median half-width ±{statistics.median(widths[v] or [0]):.2f}%")


def drift(d):
    series = collections.defaultdict(list)
    for path in sorted(glob.glob(f"{d}/*-[0-9][0-9].json")):
        for k, row in intervals(json.load(open(path))).items():
            series[k].append(row)
    print(f"{d}: drift series")
    for k, runs in series.items():
        meds = [f for f, _ in runs]
        mid = statistics.median(meds)
        print(f"  {k}: {len(runs)} runs, medians' spread {(max(meds) - min(meds)) / mid * 100:.2f}%")
        for v in VARIANTS:
            hold = sum(1 for _, ivs in runs if ivs[v][0] <= mid <= ivs[v][1])
            w = statistics.median(half(ivs[v], f) for f, ivs in runs)
            print(f"    {v:8s} hold {hold}/{len(runs)}, median half-width ±{w:.2f}%")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        if os.path.exists(f"{d}/whole.json"):
            isolation(d)
        elif glob.glob(f"{d}/*-[0-9][0-9].json"):
            drift(d)
        else:
            print(f"{d}: neither isolation.py's nor drift.py's kept documents")


if __name__ == "__main__":
    main()
