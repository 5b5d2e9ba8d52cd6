#!/usr/bin/env python3
"""Sets two or more syscost builds side by side on the same rows in the same minutes:
their invocations alternate (A B C, A B C, ...), so a machine that drifts meets each
build alike. For each build and row: how many of its N intervals hold the median of
its N medians, the median half-width against the medians' spread, and how many rows
converged.

    scripts/ab.py BIN [BIN ...] [-n 8] [--history] -- SELECTION...

Without --history every invocation is `--no-save` (intervals from the run alone); with
it, each build saves into a fresh history of its own, so from the third invocation its
intervals come from the spread between runs. Nothing is left behind. Run it with the
machine otherwise quiet: every figure here is a time.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bins", nargs="+")
    ap.add_argument("-n", type=int, default=8)
    ap.add_argument("--history", action="store_true")
    ap.add_argument("--keep", metavar="DIR")
    a, sel = ap.parse_known_args()
    sel = [s for s in sel if s != "--"]
    tmp = tempfile.mkdtemp(prefix="syscost-ab-")
    rows = {b: {} for b in a.bins}
    walls = {b: [] for b in a.bins}
    try:
        print(f"{time.strftime('%Y-%m-%d %H:%M:%S')} {' '.join(sel)} "
              f"({'with a history' if a.history else 'no history'})", flush=True)
        for i in range(a.n):
            for k, b in enumerate(a.bins):
                env = dict(os.environ)
                env.pop("SYSCOST_NO_SAVE", None)
                args = [b, "run", *sel, "--format", "json", "--no-samples"]
                if a.history:
                    env["SYSCOST_DB"] = os.path.join(tmp, f"{k}.db")
                else:
                    args.append("--no-save")
                t0 = time.monotonic()
                out = subprocess.run(args, check=True, capture_output=True, text=True,
                                     env=env).stdout
                walls[b].append(time.monotonic() - t0)
                if a.keep:
                    os.makedirs(a.keep, exist_ok=True)
                    with open(os.path.join(a.keep, f"{k}-{i + 1:02}.json"), "w") as f:
                        f.write(out)
                for r in json.loads(out)["results"]:
                    m = r.get("measured")
                    if m:
                        key = r["name"] + " " + " ".join(
                            f"{x}={y}" for x, y in sorted(r["params"].items()))
                        rows[b].setdefault(key.strip(), []).append(m)
        for k, b in enumerate(a.bins):
            w = sorted(walls[b])
            print(f"[{k}] {b}: wall median {statistics.median(w):.2f} s, max {w[-1]:.2f} s "
                  f"({' '.join(f'{x:.1f}' for x in walls[b])})")
            for name, ms in rows[b].items():
                meds = [m["median_ns"] for m in ms]
                mm = statistics.median(meds)
                inside = sum(m["ci_low_ns"] <= mm <= m["ci_high_ns"] for m in ms)
                spread = (max(meds) - min(meds)) / mm
                half = statistics.median(
                    (m["ci_high_ns"] - m["ci_low_ns"]) / 2 / m["median_ns"] for m in ms)
                conv = sum(m["converged"] for m in ms)
                print(f"    {name}: cover {inside}/{len(ms)}, median half-width "
                      f"±{half * 100:.2f}%, medians' spread {spread * 100:.2f}% "
                      f"(median {mm:.1f} ns), converged {conv}/{len(ms)}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
