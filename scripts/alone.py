#!/usr/bin/env python3
"""Does a benchmark run alone get an answer? Runs a sample of benchmarks one at a time,
each with its defaults, as a user who read `syscost list` or typed a peer's test name
would (issue 78):

    syscost run NAME --no-save --format json [--budget D]

and prints, for each, its wall time, its rows, how many converged, the budget the run
stated, and why the others stopped; then the totals the issue asks for: the share of
rows converged, the median time for one row (a run's wall time over its rows), the
longest run beside its stated cap, and how steady the machine was, from the canary
(its base state's share of the readings, the runs flagged unsteady, and the median
getpid canary).

    scripts/alone.py [--syscost target/release/syscost] [--budget 30s] [--passes 1]
                     [--only NAME,NAME] [--json FILE]

Take the machine lock (flock -x /tmp/syscost-machine.lock) around it when anything
else runs. Nothing is written but --json's file.
"""
import argparse, json, os, statistics, subprocess, sys, time

# Twenty-four benchmarks across the families: the ones a user runs alone most often,
# the peers' tests that ended unconverged when run alone (futex wake and requeue,
# tlb_flush, lat_fs's create, lat_fcntl's lock), and work of every kind (system call,
# user, memory, cross-CPU).
SAMPLE = [
    "syscall.getpid", "syscall.getppid", "syscall.dup_close", "syscall.poll",
    "syscall.getrandom", "clock.monotonic", "call.empty",
    "ctx.pingpong", "ctx.pipe", "ipc.rtt", "ipc.fcntl", "ipc.sem",
    "proc.fork", "signal.catch", "signal.install",
    "mem.fault.zero", "mem.mmap", "mem.tlb_flush",
    "file.read", "file.create", "file.lock",
    "sync.futex.wake", "sync.futex.requeue", "svc.epoll.wait",
]


def one(exe, name, budget):
    cmd = [exe, "run", name, "--no-save", "--format", "json"]
    if budget:
        cmd += ["--budget", budget]
    t = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        return {"name": name, "wall": wall, "error": p.stderr.strip().splitlines()[-1:]}
    d = json.loads(p.stdout)
    rows = [r for r in d["results"] if r["status"] == "ok"]
    conv = [r for r in rows if r["measured"].get("converged")]
    why = {}
    for r in rows:
        if not r["measured"].get("converged"):
            for w in r["measured"].get("why") or [{"why": "?"}]:
                why[w["why"]] = why.get(w["why"], 0) + 1
    m = d.get("machine", {})
    base = max((s["share"] for s in m.get("states", [])), default=None)
    getpid = min((s["median_ns"] for s in m.get("states", [])), default=None)
    return {
        "name": name, "wall": wall, "rows": len(rows), "converged": len(conv),
        "skipped": sum(r["status"] == "skipped" for r in d["results"]),
        "cap": (d["harness"].get("budget_ns") or 0) / 1e9,
        "rounds": [len(r["measured"].get("rounds", [])) for r in rows],
        "why": why, "base_share": base, "canary_ns": getpid,
        "unsteady": m.get("unsteady", False),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("--budget")
    ap.add_argument("--passes", type=int, default=1)
    ap.add_argument("--only")
    ap.add_argument("--json")
    a = ap.parse_args()
    exe = os.path.abspath(a.syscost)
    names = a.only.split(",") if a.only else SAMPLE
    out = []
    print(f"{'benchmark':24} {'wall':>6} {'cap':>5} {'conv':>6} {'rounds':>10} "
          f"{'base':>5} {'canary':>8}  why not")
    for p in range(a.passes):
        for n in names:
            r = one(exe, n, a.budget)
            r["pass"] = p
            out.append(r)
            if "error" in r:
                print(f"{n:24} {r['wall']:6.1f}  FAILED {r['error']}")
                continue
            rounds = ",".join(map(str, r["rounds"]))[:10]
            base = f"{r['base_share']*100:.0f}%" if r["base_share"] is not None else "-"
            can = f"{r['canary_ns']:.0f}ns" if r["canary_ns"] else "-"
            why = "; ".join(f"{k} ×{v}" for k, v in r["why"].items())
            print(f"{n:24} {r['wall']:6.1f} {r['cap']:5.0f} {r['converged']:>3}/{r['rows']:<2} "
                  f"{rounds:>10} {base:>5} {can:>8}{' U' if r['unsteady'] else '  '} {why}",
                  flush=True)
    ok = [r for r in out if "error" not in r and r["rows"]]
    rows = sum(r["rows"] for r in ok)
    conv = sum(r["converged"] for r in ok)
    per_row = [r["wall"] / r["rows"] for r in ok]
    # The wall time holds the process's start and the clock's characterisation, which
    # come before the budget's start: a second is allowed for them.
    over = [r for r in ok if r["cap"] and r["wall"] > r["cap"] + 1]
    shares = [r["base_share"] for r in ok if r["base_share"] is not None]
    canary = [r["canary_ns"] for r in ok if r["canary_ns"]]
    print()
    print(f"runs {len(out)} ({len(out) - len(ok)} failed or empty), rows {rows}, "
          f"converged {conv} ({100 * conv / max(rows, 1):.0f}%)")
    print(f"time for one row: median {statistics.median(per_row):.1f} s, "
          f"max {max(per_row):.1f} s; longest run {max(r['wall'] for r in ok):.1f} s; "
          f"runs past their stated cap (+1 s for the start): {len(over)}")
    print(f"machine: canary base state {100 * statistics.median(shares):.0f}% of readings "
          f"(median of runs), {sum(r['unsteady'] for r in ok)} of {len(ok)} runs unsteady, "
          f"getpid canary median {statistics.median(canary):.0f} ns")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
