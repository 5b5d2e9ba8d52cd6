#!/usr/bin/env python3
"""Which headline covers a rerun: reads the documents that `scripts/drift.py --keep DIR`
kept (N invocations of the same benchmarks) and, from each run's round figures alone,
recomputes the headline and its 95% interval several ways. For each way and each row:
how many of the N intervals hold the median of the N headlines, the median half-width,
and the headlines' spread (max - min) / median. The way syscost uses is the one that
covers a rerun (>= 9 of 10) with the narrowest intervals; docs/method.md quotes it.

    scripts/headline.py DIR

The ways:
- trimmed: the 20% trimmed mean of every round with Yuen's interval (syscost before
  its machine floors);
- dominant: when one state (round figures split where neighbours differ by more than
  3%) holds at least 2/3 of the rounds (and 3 rounds), that state's trimmed mean and
  Yuen's interval over its rounds; else as trimmed (syscost's headline);
- median: the median of the rounds with the order-statistic (binomial) interval;
- printed: what syscost printed (its headline, widened by the spread between earlier
  runs in the history from a row's third run on);
- history: trimmed, widened as syscost's history does (tau by moments: the variance of
  the runs' figures less the mean of their squared standard errors);
- robust: the same with tau from the median absolute deviation of the figures and the
  median of the squared standard errors (one rough run with a wide interval neither
  cancels the spread of the others nor inflates it).
"""
import glob, json, math, os, statistics, sys

T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
     2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
     2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    return math.inf if df <= 0 else T[df - 1] if df <= 30 else 1.96 + 2.4 / df


def yuen(xs):
    xs = sorted(xs)
    r = len(xs)
    g = int(0.2 * r + 1e-9)
    kept = xs[g:r - g]
    h = len(kept)
    c = sum(kept) / h
    if h < 2:
        return c, abs(c)
    w = [min(max(x, kept[0]), kept[-1]) for x in xs]
    return c, t975(h - 1) * statistics.stdev(w) * math.sqrt((r - 1) / (h * (h - 1)))


def groups(xs, gap=0.03):
    xs = sorted(xs)
    gs = [[xs[0]]]
    for a, b in zip(xs, xs[1:]):
        if b - a > gap * abs(a):
            gs.append([b])
        else:
            gs[-1].append(b)
    while len(gs) > 1:
        j = next((i for i, g in enumerate(gs) if len(g) == 1), None)
        if j is None:
            break
        left = gs[j][0] - gs[j - 1][-1] if j > 0 else None
        right = gs[j + 1][0] - gs[j][0] if j + 1 < len(gs) else None
        into = j - 1 if (left is not None and (right is None or left <= right)) else j + 1
        a, b = min(j, into), max(j, into)
        gs[a] = sorted(gs[a] + gs[b])
        del gs[b]
    return gs


def dominant(xs):
    gs = groups(xs)
    top = max(gs, key=len)
    if len(gs) > 1 and len(top) >= 3 and len(top) >= 2 / 3 * len(xs) - 1e-9:
        return yuen(top)
    return yuen(xs)


def median_ci(xs):
    xs = sorted(xs)
    n = len(xs)
    c = statistics.median(xs)
    # The widest symmetric order statistics whose binomial coverage is >= 95%.
    best = (xs[0], xs[-1])
    for k in range(n // 2):
        cov = 1 - 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
        if cov >= 0.95:
            best = (xs[k], xs[n - 1 - k])
        else:
            break
    return c, max(c - best[0], best[1] - c)


WAYS = {
    "trimmed": yuen,
    "dominant": dominant,
    "median": median_ci,
}


def df(r):
    g = int(0.2 * r + 1e-9)
    return max(r - 2 * g - 1, 1)


def tau(runs, robust):
    """The spread between runs their own intervals leave unexplained, from (figure, se)
    pairs: by moments (mean of se^2, variance of figures) or robustly (median of se^2,
    1.4826 MAD of figures)."""
    figs = [f for f, _ in runs]
    se2 = [s * s for _, s in runs]
    if robust:
        m = statistics.median(figs)
        s = 1.4826 * statistics.median(abs(f - m) for f in figs)
        v = s * s - statistics.median(se2)
    else:
        v = statistics.variance(figs) - statistics.mean(se2)
    return math.sqrt(max(v, 0.0))


def with_history(own, rounds, robust):
    """Each run's own (center, half) widened as syscost's history does from its third
    run on: by t(k-1) * tau over the earlier runs and this one."""
    out = []
    for i, (c, h) in enumerate(own):
        if i < 2:
            out.append((c, h))
            continue
        runs = [(cc, hh / t975(df(r))) for (cc, hh), r in zip(own[:i + 1], rounds[:i + 1])]
        t = tau(runs, robust)
        out.append((c, math.hypot(h, t975(len(runs) - 1) * t)))
    return out


def main():
    d = sys.argv[1]
    docs = {}
    for path in sorted(glob.glob(os.path.join(d, "*.json"))):
        series = os.path.basename(path).rsplit("-", 1)[0]
        for r in json.load(open(path))["results"]:
            m = r.get("measured")
            if not m:
                continue
            key = (series, r["name"] + " " + " ".join(f"{k}={v}" for k, v in sorted(r["params"].items())))
            docs.setdefault(key, []).append(m)
    for (series, row), ms in docs.items():
        print(f"{row.strip()} ({len(ms)} runs, rounds {min(len(m['rounds']) for m in ms)}-"
              f"{max(len(m['rounds']) for m in ms)})")
        table = {}
        for way, f in WAYS.items():
            table[way] = []
            for m in ms:
                xs = [x["median_ns"] for x in m["rounds"] if x.get("median_ns")]
                table[way].append(f(xs))
        table["printed"] = [(m["median_ns"], (m["ci_high_ns"] - m["ci_low_ns"]) / 2) for m in ms]
        rounds = [len([x for x in m["rounds"] if x.get("median_ns")]) for m in ms]
        table["history"] = with_history(table["trimmed"], rounds, False)
        table["robust"] = with_history(table["trimmed"], rounds, True)
        for way, got in table.items():
            cs = [c for c, _ in got]
            mm = statistics.median(cs)
            inside = sum(abs(c - mm) <= h for c, h in got)
            spread = (max(cs) - min(cs)) / mm
            halfw = statistics.median(h / c for c, h in got)
            print(f"  {way:9} holds the median of medians in {inside:2}/{len(got)}; median "
                  f"half-width ±{halfw * 100:5.2f}%, medians' spread {spread * 100:5.2f}%")


if __name__ == "__main__":
    main()
