#!/usr/bin/env python3
"""What a seccomp filter costs, syscost against plain C (issue 55): the `seccomp=`
rows of `syscall.getppid via=raw` beside a C loop of raw getppid under the same filters,
on one CPU, in the same minutes.

    scripts/hardening.py [--syscost target/release/syscost] [--rounds 3] [--cpu 0]
                         [--profile quick] [--procs 7] [--calls 5000]

Run it alone on the machine if you can (`flock -x /tmp/syscost-machine.lock
scripts/hardening.py`). Each round, in alternating order (C first, then syscost; the
next round syscost first), it runs:

1. The C loop (written below, built with cc in a temporary directory that is removed),
   in --procs fresh processes per filter (default 7, the filters interleaved; the
   median of their figures, since a process can keep a slow or fast state for its life:
   docs/measurements/rounds.md, "Workers and hand-overs"), each pinned to the CPU: it
   sets no-new-privs and installs the same allow-all filter syscost's worker installs
   (none; one `allow` instruction, which reads nothing and is cached: the entry path; N
   instructions of which N-1 load an argument word: run on every call), warms, then
   times 7 chunks of --calls raw `syscall` getppid calls and prints the best chunk's ns
   per call. The chunks are short (5000 calls, about half a millisecond) so that one of
   seven meets no preemption on a machine shared with builds: with 200,000 calls (20
   ms) every chunk met some, and the C loop read 98–314 ns where syscost read 78–184.
2. `syscost run syscall.getppid via=raw seccomp=0,2,256,1024` and `... seccomp=1
   seccomp_kind=nr`, `--profile PROFILE --cpu CPU --no-save --format json`.

It prints each figure's median over the rounds for both tools and three derived
figures, each computed within a round and then its median over the rounds, with their
targets:
- the ratio seccomp=256 / seccomp=0 (syscost's within 10% of the C loop's);
- the entry path, seccomp=1 nr-only minus none (within 15%);
- the cost per added instruction, (seccomp=1024 - seccomp=2) / 1022 (within 15%).
It exits 1 if a target failed. The filters are set in the C processes and in syscost's
workers only; this script's process and syscost's parent carry none.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

C = r'''
#define _GNU_SOURCE
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static inline long raw0(long n) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "0"(n) : "rcx", "r11", "memory");
  return r;
}
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(int argc, char **argv) {
  int n = atoi(argv[1]);            /* instructions, 0: no filter */
  int nr = strcmp(argv[2], "nr") == 0;
  int cpu = atoi(argv[3]);
  long calls = atol(argv[4]);
  cpu_set_t set; CPU_ZERO(&set); CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set)) { perror("affinity"); return 1; }
  if (n > 0) {
    struct sock_filter *p = calloc(n, sizeof *p);
    for (int i = 0; i < n - 1; i++) {
      if (nr) p[i] = (struct sock_filter)BPF_STMT(BPF_LD|BPF_W|BPF_ABS, 0);
      else p[i] = (struct sock_filter)BPF_STMT(BPF_LD|BPF_W|BPF_ABS,
                    offsetof(struct seccomp_data, args) + 4 * (i % 12));
    }
    p[n - 1] = (struct sock_filter)BPF_STMT(BPF_RET|BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = { .len = n, .filter = p };
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) { perror("nnp"); return 1; }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) { perror("seccomp"); return 1; }
  }
  for (long i = 0; i < calls; i++) raw0(SYS_getppid);       /* warm */
  double best = 1e30;
  for (int c = 0; c < 7; c++) {
    double t0 = now();
    for (long i = 0; i < calls; i++) raw0(SYS_getppid);
    double ns = (now() - t0) / calls;
    if (ns < best) best = ns;
  }
  printf("%.3f\n", best);
  return 0;
}
'''

# (label, instructions, kind) of each figure: the C loop's arguments, and syscost's
# parameters for the same filter.
FILTERS = [
    ("none", 0, "args"),
    ("nr1", 1, "nr"),
    ("args2", 2, "args"),
    ("args256", 256, "args"),
    ("args1024", 1024, "args"),
]


def build(tmp):
    src = os.path.join(tmp, "seccomp_loop.c")
    exe = os.path.join(tmp, "seccomp_loop")
    with open(src, "w") as f:
        f.write(C)
    subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
    return exe


def c_round(exe, cpu, calls, procs):
    """Each filter in `procs` fresh processes, the filters interleaved; the median of
    the processes' best chunks (a process can keep a slow or a fast state for its life,
    as syscost's workers do: one process would read either)."""
    got = {label: [] for label, _, _ in FILTERS}
    for _ in range(procs):
        for label, n, kind in FILTERS:
            r = subprocess.run([exe, str(n), kind, str(cpu), str(calls)],
                               capture_output=True, text=True, check=True)
            got[label].append(float(r.stdout.strip()))
    return {k: statistics.median(v) for k, v in got.items()}


def syscost_round(binary, cpu, profile):
    runs = [
        ["seccomp=0,2,256,1024"],
        ["seccomp=1", "seccomp_kind=nr"],
    ]
    out = {}
    for extra in runs:
        cmd = [binary, "run", "syscall.getppid", "via=raw", *extra, "--profile", profile,
               "--cpu", str(cpu), "--no-save", "--format", "json"]
        r = subprocess.run(cmd, capture_output=True, text=True, check=True)
        doc = json.loads(r.stdout)
        for res in doc["results"]:
            p = res.get("params", {})
            m = res.get("measured") or {}
            if res.get("status") != "ok" or "median_ns" not in m:
                sys.exit(f"syscost: {p}: {res.get('status')} {res.get('reason')}")
            n = int(p.get("seccomp", "0"))
            if n == 0:
                label = "none"
            elif p.get("seccomp_kind") == "nr":
                label = f"nr{n}"
            else:
                label = f"args{n}"
            filters = {f["name"]: f["value"] for f in res.get("facts", [])}
            if n > 0 and filters.get("harden_seccomp_filters") != 1:
                sys.exit(f"syscost: {p}: the worker did not report its filter: {filters}")
            out[label] = m["median_ns"]
    return out


def derived(f):
    return {
        "ratio 256/none": f["args256"] / f["none"],
        "entry path ns (nr1 - none)": f["nr1"] - f["none"],
        "ns per added instruction": (f["args1024"] - f["args2"]) / 1022,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--profile", default="quick")
    ap.add_argument("--calls", type=int, default=5000)
    ap.add_argument("--procs", type=int, default=7)
    a = ap.parse_args()
    with open("/proc/self/status") as s:
        mine = [l for l in s if l.startswith("Seccomp:")]
    with tempfile.TemporaryDirectory(prefix="syscost-hardening-") as tmp:
        exe = build(tmp)
        cs, ss = [], []
        for i in range(a.rounds):
            order = [("c", None), ("s", None)] if i % 2 == 0 else [("s", None), ("c", None)]
            for tool, _ in order:
                if tool == "c":
                    cs.append(c_round(exe, a.cpu, a.calls, a.procs))
                else:
                    ss.append(syscost_round(a.syscost, a.cpu, a.profile))
            print(f"round {i + 1}: C {fmt(cs[-1])}", flush=True)
            print(f"         syscost {fmt(ss[-1])}", flush=True)
    med = lambda rs: {k: statistics.median(r[k] for r in rs) for k in rs[0]}
    c, s = med(cs), med(ss)
    print(f"\nmedians over {a.rounds} rounds, CPU {a.cpu}, ns per getppid (raw):")
    print(f"  {'filter':<10} {'C loop':>9} {'syscost':>9} {'syscost/C':>9}")
    for label, _, _ in FILTERS:
        print(f"  {label:<10} {c[label]:9.1f} {s[label]:9.1f} {s[label] / c[label]:9.3f}")
    # Each derived figure is taken within a round (its two or three filters measured
    # in the same minute, interleaved for C) and then its median over the rounds: a
    # difference of two medians taken over different rounds would add the rounds'
    # drift to a 7 ns entry path.
    dc = {k: statistics.median(derived(r)[k] for r in cs) for k in derived(cs[0])}
    ds = {k: statistics.median(derived(r)[k] for r in ss) for k in derived(ss[0])}
    targets = {"ratio 256/none": 0.10, "entry path ns (nr1 - none)": 0.15,
               "ns per added instruction": 0.15}
    failed = False
    print()
    for k, tol in targets.items():
        off = abs(ds[k] / dc[k] - 1) if dc[k] else float("inf")
        ok = off <= tol
        failed |= not ok
        print(f"  {k:<28} C {dc[k]:8.3f}  syscost {ds[k]:8.3f}  off {off * 100:5.1f}% "
              f"(target ≤{tol * 100:.0f}%) {'PASS' if ok else 'FAIL'}")
    with open("/proc/self/status") as st:
        after = [l for l in st if l.startswith("Seccomp:")]
    print(f"\nthis script's own {mine[0].strip()} before, {after[0].strip()} after")
    sys.exit(1 if failed else 0)


def fmt(r):
    return " ".join(f"{k}={v:.1f}" for k, v in r.items())


if __name__ == "__main__":
    main()
