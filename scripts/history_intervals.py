#!/usr/bin/env python3
"""Recomputes, from the series `scripts/drift.py --keep DIR` kept, the interval each run
of a row would have had from the history of the runs before it in its series, under
several ways of taking the spread between runs, and counts what drift.py counts: how
many of a row's intervals hold the median of its figures (target: at least 9 of 10), and
whether the median half-width is within the figures' own spread ((max - min) / median).

    scripts/history_intervals.py DIR [DIR ...]

Each run's own interval is recomputed from its rounds (Yuen's, sized for a rerun, as
syscost's `stats::rounds::estimate` makes it before any floor); the first two runs of a
series have no history and count with the interval they printed. The ways:

- printed:    the interval syscost printed (the floor, or the history in builds that
              have it);
- q*s:        syscost's way: q(K) times the plain sd of the K figures, q(K) the
              multiple that holds where the runs centre 95% of the time when the sd
              counts the figure itself (`stats::rounds::centre_quantile`), each side at
              least 1.96 standard errors of the run's own interval (`Z975 * se`);
- t*s:        the way before it: t(0.975, K-1) in place of q(K);
- t*mad:      the same with 1.4826 * the median absolute deviation for the sd;
- hypot:      the way before those: hypot(own, t(K-1)*tau), tau the spread the runs' own
              intervals leave unexplained (from the 20% winsorized sd below six runs,
              1.4826 * MAD from six), each side at least t(K-1) times that spread.

It also counts how often a run's interval held the next run's figure.

Nothing is measured; nothing is written.
"""
import glob
import json
import math
import statistics as st
import sys

T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
     2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
     2.060, 2.056, 2.052, 2.048, 2.045, 2.042]
RERUN = math.sqrt(2)


def t975(df):
    return T[df - 1] if df <= 30 else 1.96 + 2.4 / df


def trim(n):
    return int(0.2 * n + 1e-9) if n >= 5 else 0


def winsorized_sd(xs):
    xs = sorted(xs)
    g = trim(len(xs))
    lo, hi = xs[g], xs[len(xs) - 1 - g]
    return st.stdev([min(max(x, lo), hi) for x in xs])


def own(rounds):
    """(figure, own half-width, se) of one run's rounds, as syscost's estimate."""
    xs = sorted(rounds)
    r = len(xs)
    g = trim(r)
    kept = xs[g:r - g]
    h = len(kept)
    c = sum(kept) / h
    if h < 2:
        return c, 0.0, 0.0
    se = winsorized_sd(xs) * math.sqrt((r - 1) / (h * (h - 1)))
    return c, t975(h - 1) * RERUN * se, se


def runs_spread(figures):
    xs = [f for f, _ in figures]
    if len(xs) >= 6:
        m = st.median(xs)
        return 1.4826 * st.median(abs(x - m) for x in xs)
    return winsorized_sd(xs)


def tau(figures):
    s = runs_spread(figures)
    se2 = st.median(se * se for _, se in figures)
    return math.sqrt(max(0.0, s * s - se2))


# stats::rounds::centre_quantile, K = 3..21 (scripts/centre_quantile.py).
Q = [2.81370, 2.17862, 2.01975, 1.96755, 1.94796, 1.94011, 1.93701, 1.93602, 1.93601,
     1.93649, 1.93719, 1.93800, 1.93883, 1.93965, 1.94045, 1.94121, 1.94194, 1.94262,
     1.94326]


def centre_quantile(k):
    return Q[k - 3] if 3 <= k <= 21 else 1.959964


WAYS = ["printed", "q*s", "t*s", "t*mad", "hypot"]


def half(way, runs, i):
    """The half-width of run i's interval under `way`, from the runs up to it."""
    c, printed, h, se = runs[i]
    if way == "printed" or i < 2:
        return printed
    history = [(f, s) for f, _, _, s in runs[:i + 1]]
    k = len(history)
    figs = [f for f, _ in history]
    if way == "q*s":
        return max(centre_quantile(k) * st.stdev(figs), 1.959964 * se)
    if way == "t*s":
        return max(t975(k - 1) * st.stdev(figs), 1.959964 * se)
    if way == "t*mad":
        m = st.median(figs)
        return max(t975(k - 1) * 1.4826 * st.median(abs(f - m) for f in figs), 1.959964 * se)
    return max(math.hypot(h, t975(k - 1) * tau(history)), t975(k - 1) * runs_spread(history))


def main():
    totals = {w: [0, 0, 0] for w in WAYS}
    nexts = {w: [0, 0] for w in WAYS}
    n = 0
    for d in sys.argv[1:]:
        rows = {}
        for f in sorted(glob.glob(f"{d}/*-[0-9][0-9].json")):
            for r in json.load(open(f))["results"]:
                m = r.get("measured")
                if not m:
                    continue
                xs = [x["median_ns"] for x in m["rounds"] if x["median_ns"] is not None]
                _, h, se = own(xs) if len(xs) > 1 else (0, 0.0, 0.0)
                printed = (m["ci_high_ns"] - m["ci_low_ns"]) / 2
                rows.setdefault(r["name"], []).append((m["median_ns"], printed, h, se))
        for name, runs in rows.items():
            figs = [c for c, *_ in runs]
            mm = st.median(figs)
            spread = (max(figs) - min(figs)) / mm
            line = f"{d} {name[:24]:24} spread {spread * 100:5.2f}%"
            n += 1
            for way in WAYS:
                halves = [half(way, runs, i) for i in range(len(runs))]
                for i in range(2, len(runs) - 1):
                    nexts[way][0] += 1
                    nexts[way][1] += abs(runs[i + 1][0] - runs[i][0]) <= halves[i]
                cover = sum(abs(c - mm) <= hw for (c, *_), hw in zip(runs, halves))
                width = st.median(hw / c for (c, *_), hw in zip(runs, halves))
                ok_cover, ok_width = cover >= 0.9 * len(runs), width <= spread
                t = totals[way]
                t[0] += ok_cover
                t[1] += ok_width
                t[2] += ok_cover and ok_width
                line += f" | {way} {cover}/{len(runs)} ±{width * 100:.2f}%"
            print(line)
    print(f"over {n} row-series: way, coverage >= 9 of 10, width within the spread, both")
    for way, (c, w, b) in totals.items():
        held, pairs = nexts[way][1], nexts[way][0]
        print(f"  {way:10} {c:3}/{n} {w:3}/{n} {b:3}/{n}   next run held {held}/{pairs}")


if __name__ == "__main__":
    main()
