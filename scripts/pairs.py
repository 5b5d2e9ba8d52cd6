#!/usr/bin/env python3
"""Compares two syscost binaries on the same benchmarks, for a change that must not move
a measured figure (a refactor, a new crate under a benchmark).

    scripts/pairs.py --before OLD/syscost --after NEW/syscost [-n 30] [--profile quick]
                     BENCH [name=value ...] [BENCH ...]

Each pair is one invocation of each binary, back to back, with the order alternated
from pair to pair, so a machine that changes speed over the minutes weighs on both
sides alike. For every result measured by both it prints how many pairs the new binary
was slower in, with the one-sided sign-test probability of that many or more if there
were no difference, and the median and quartiles of the pairwise ratio new/old.

On a machine whose speed wanders by 10-20%, a difference of a few percent shows only
over many pairs: read the count, not one ratio. Runs are not saved (--no-save).
"""
import argparse, json, math, statistics, subprocess, sys


def run(binary, benches, profile):
    """The median of every measured result of one invocation, by name and parameters."""
    out = subprocess.run(
        [binary, "run", *benches, "--profile", profile, "--no-save", "--format", "json"],
        capture_output=True,
        text=True,
    )
    if out.returncode not in (0, 1):
        sys.exit(f"{binary} exited with {out.returncode}: {out.stderr.strip()[-400:]}")
    doc = json.loads(out.stdout)
    got = {}
    for r in doc["results"]:
        if r["measured"]:
            label = " ".join(f"{k}={v}" for k, v in sorted(r["params"].items()))
            got[f"{r['name']} {label}".strip()] = r["measured"]["median_ns"]
    return got


def sign_p(k, n):
    """P(X >= k) for X ~ Binomial(n, 1/2)."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--before", required=True, help="the old binary")
    ap.add_argument("--after", required=True, help="the new binary")
    ap.add_argument("-n", type=int, default=30, help="pairs (default 30)")
    ap.add_argument("--profile", default="quick")
    ap.add_argument("benches", nargs="+", help="benchmarks and name=value parameters")
    a = ap.parse_args()
    if a.n < 2:
        sys.exit("-n: at least 2 pairs")
    ratios = {}
    for i in range(a.n):
        order = [("before", a.before), ("after", a.after)]
        if i % 2:
            order.reverse()
        got = {who: run(b, a.benches, a.profile) for who, b in order}
        for k, old in got["before"].items():
            if k in got["after"] and old > 0:
                ratios.setdefault(k, []).append(got["after"][k] / old)
    if not ratios:
        sys.exit("no result was measured by both binaries")
    for k, r in ratios.items():
        slower = sum(x > 1 for x in r)
        q = statistics.quantiles(r, n=4)
        print(
            f"{k}: {len(r)} pairs, new slower in {slower} (p {sign_p(slower, len(r)):.3f}), "
            f"ratio new/old median {statistics.median(r):.3f} [{q[0]:.3f}, {q[2]:.3f}]"
        )


if __name__ == "__main__":
    main()
