#!/usr/bin/env python3
"""Does `syscost compare` see a real change? Trials of labelled sides, K runs a side,
against a kernel-side cost measured by plain C loops in the same minutes (issue 75).

    flock -x /tmp/syscost-machine.lock scripts/change_trials.py \
        [--syscost target/release/syscost] [--trials 10] [-k 3] [--sizes 25,400] \
        [--threshold 5] [--profile standard] [--out DIR]

The change is a seccomp filter every system call of syscost and its workers pays
(scripts/kcost.py's `wrap N`, its size N in instructions): with no filter the side is
`off`, with one of N instructions the side is `N`. Each trial makes, into one history,
runs of `syscall.getppid` and `ctx.pingpong mechanism=pipe placement=same-cpu` in turn
(off, each size, off2; K times over), each labelled with its trial and side, then:

- compares, for each size, the trial's `off` runs with its N runs (`compare
  label:tI,off label:tI,N --format json`), and reads each row's verdict, ratio, smallest
  visible change and the runs a side the tool asks for;
- measures the true change with kcost.paired_ratio (two C processes, with and without
  the filter, taking turns in quartets a few milliseconds apart), in the same minutes;
- compares the trial's `off` runs with its `off2` runs, a second unchanged side made in
  the same turns (A against A: two sets of K unchanged runs, interleaved as A and B are).

It prints one line per trial and size, then per size and row: the verdicts counted, the
median of syscost's ratio over the C loops' ratio (pair by pair), how often the smallest
visible change lay above the true one when the verdict was not "slower", and the K asked
for; and the A-against-A verdicts. Targets (issue 75): a large change (15-40%) slower in
>= 9 of 10 at K = 3; a small one (3-8%) never faster, "no change" at most 1 of 10;
A against A a change in <= 1 of 20 row-pairs; the ratio within 5% of the C loops'.
Every figure is a time: say what else ran on the machine when you quote it.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kcost  # noqa: E402

ROWS = ["syscall.getppid", "ctx.pingpong"]
PARAMS = ["-p", "mechanism=pipe", "-p", "placement=same-cpu", "-p", "via=libc"]
C_NAME = {"syscall.getppid": "getppid", "ctx.pingpong": "pingpong"}


def run(args, paths, db, n, labels):
    cmd = [paths["wrap"], str(n), args.syscost, "run", *ROWS, *PARAMS,
           "--profile", args.profile, "--no-samples", "--db", db]
    for label in labels:
        cmd += ["--label", label]
    r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"run failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")


def compare(args, db, a, b):
    cmd = [args.syscost, "compare", a, b, "--db", db, "--format", "json",
           "--threshold", str(args.threshold)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"compare failed ({r.returncode}): {' '.join(cmd)}\n{r.stderr}")
    return {row["name"]: row for row in json.loads(r.stdout)["rows"]}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--syscost", default="target/release/syscost")
    p.add_argument("--trials", type=int, default=10)
    p.add_argument("-k", type=int, default=3, help="runs a side")
    p.add_argument("--sizes", default="25,400", help="filter sizes, instructions")
    p.add_argument("--threshold", type=float, default=5.0)
    p.add_argument("--profile", default="standard")
    p.add_argument("--out", help="keep the history and the JSON here")
    p.add_argument("--no-aa", action="store_true",
                   help="no second unchanged side (A against A) in the turns")
    args = p.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    work = args.out or tempfile.mkdtemp(prefix="syscost-trials-")
    os.makedirs(work, exist_ok=True)
    paths = kcost.build(os.path.join(work, "cache"))
    db = os.path.join(work, "history.db")
    found = {n: [] for n in sizes}  # per size: (trial, rows, C ratios)
    same = []
    print(f"# {time.strftime('%Y-%m-%d %H:%M:%S')} trials={args.trials} K={args.k} "
          f"sizes={sizes} threshold={args.threshold}% profile={args.profile}; work in {work}")
    for t in range(1, args.trials + 1):
        t0 = time.time()
        for _ in range(args.k):
            # A second unchanged side, interleaved as the changed ones are: A against A.
            again = [] if args.no_aa else [(0, "off2")]
            for n, side in [(0, "off")] + [(n, str(n)) for n in sizes] + again:
                run(args, paths, db, n, [f"t{t}", side])
        true = {n: kcost.paired_ratio(paths, n, pairs=2) for n in sizes}
        for n in sizes:
            rows = compare(args, db, f"label:t{t},off", f"label:t{t},{n}")
            c = {name: statistics.median(v) for name, v in true[n].items()}
            found[n].append((t, rows, c))
            cells = "  ".join(
                f"{name} {r['verdict']:<11} x{r['ratio']:.3f} "
                f"[{r['ci_low']:.3f}-{r['ci_high']:.3f}] C x{c[C_NAME[name]]:.3f} "
                f"sees {100 * (r.get('smallest_visible') or float('inf')):.1f}% "
                f"K={r.get('runs_asked')}"
                for name, r in rows.items())
            print(f"trial {t:2d} N={n:<5d} {cells}", flush=True)
        if not args.no_aa:
            rows = compare(args, db, f"label:t{t},off", f"label:t{t},off2")
            same.extend((t, name, r) for name, r in rows.items())
            print(f"trial {t:2d} A/A     " + "  ".join(
                f"{name} {r['verdict']} x{r['ratio']:.3f}" for name, r in rows.items()),
                flush=True)
        print(f"# trial {t} took {time.time() - t0:.0f} s", flush=True)
    summary(found, same, args)


def summary(found, same, args):
    print("\n# per size and row: verdicts, syscost/C (median, range), the C loops' "
          "change, sees above the true change when not slower, K asked (median)")
    for n, trials in found.items():
        for name in ROWS:
            verdicts, over, trues, above, asked = {}, [], [], [], []
            for _, rows, c in trials:
                r = rows.get(name)
                if r is None:
                    continue
                verdicts[r["verdict"]] = verdicts.get(r["verdict"], 0) + 1
                truth = c[C_NAME[name]]
                trues.append(truth)
                over.append(r["ratio"] / truth)
                if r["verdict"] != "slower":
                    sees = r.get("smallest_visible")
                    above.append(sees is not None and 1 + sees > truth)
                if r.get("runs_asked"):
                    asked.append(r["runs_asked"])
            print(f"N={n:<5d} {name:<16s} {verdicts}  syscost/C "
                  f"{statistics.median(over):.3f} ({min(over):.3f}-{max(over):.3f})  "
                  f"C change {100 * (statistics.median(trues) - 1):+.1f}%  "
                  f"sees above truth {sum(above)}/{len(above)}  "
                  f"K asked {statistics.median(asked) if asked else '-'}")
    counts = {}
    for _, _, r in same:
        counts[r["verdict"]] = counts.get(r["verdict"], 0) + 1
    changed = sum(v for k, v in counts.items() if k in ("slower", "faster"))
    print(f"A against A: {len(same)} row-pairs {counts}; called a change in {changed}")


if __name__ == "__main__":
    main()
