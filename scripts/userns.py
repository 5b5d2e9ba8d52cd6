#!/usr/bin/env python3
"""What a user and pid namespace costs, syscost's paired ratio against plain C (issues
55): `syscost run BENCH userns=0,1 --reference userns=0` (the two sides in processes
of their own, forked for each round and taking turns) beside a C loop of the same
operation run plain and under `unshare --user --map-root-user --pid --fork`, on one
CPU, in the same minutes.

    scripts/userns.py [--syscost target/release/syscost] [--rounds 5] [--cpu 0]
                      [--profile quick]

Run it alone on the machine if you can (`flock -x /tmp/syscost-machine.lock
scripts/userns.py`). Each round, in alternating order (C first, then syscost; the next
round syscost first), for fork+exit+wait (`proc.fork`) and getppid
(`syscall.getppid via=libc`):

1. The C program (below, built with cc in a temporary directory that is removed),
   pinned with taskset, in a fresh process plain and one in the namespaces, the order
   alternating: it warms, then times 15 chunks and prints the median chunk's ns per
   operation. Their ratio is the round's C ratio.
2. syscost's paired ratio from `--format json` (`measured.paired.ratio`).

It prints each round's two ratios and the medians over the rounds, and exits 1 when
the medians differ by more than 10%.
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

C = r'''
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
static void op_fork(int n){for(int i=0;i<n;i++){pid_t p=fork();if(p<0)exit(3);if(!p)_exit(0);waitpid(p,0,0);}}
static volatile long sink;
static void op_getppid(int n){for(int i=0;i<n;i++)sink+=getppid();}
int main(int argc,char**argv){
  int fork_=argc>1&&!strcmp(argv[1],"fork");int n=fork_?200:100000;enum{B=15};double r[B];
  void(*op)(int)=fork_?op_fork:op_getppid;
  op(n);
  for(int b=0;b<B;b++){double t=now();op(n);r[b]=(now()-t)/n;}
  qsort(r,B,sizeof r[0],cmp);printf("%.3f\n",r[B/2]);return 0;}
'''

CASES = [("fork", ["proc.fork"]), ("getppid", ["syscall.getppid", "via=libc"])]
UNSHARE = ["unshare", "--user", "--map-root-user", "--pid", "--fork"]


def c_ratio(exe, what, cpu, ns_first):
    pin = ["taskset", "-c", str(cpu)]
    runs = [("plain", pin + [exe, what]), ("ns", pin + UNSHARE + [exe, what])]
    if ns_first:
        runs.reverse()
    got = {}
    for name, cmd in runs:
        got[name] = float(subprocess.run(cmd, capture_output=True, text=True,
                                         check=True).stdout)
    return got["ns"] / got["plain"]


def syscost_ratio(binary, bench, profile, cpu):
    out = subprocess.run([binary, "run", *bench, "userns=0,1", "--reference", "userns=0",
                          "--profile", profile, "--cpu", str(cpu), "--no-save",
                          "--format", "json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"syscost exited with {out.returncode}: {out.stderr.strip()[-400:]}")
    for r in json.loads(out.stdout)["results"]:
        p = (r.get("measured") or {}).get("paired")
        if p:
            return p["ratio"], p["ratio_low"], p["ratio_high"], p["sides"]
    sys.exit(f"no paired row: {out.stderr.strip()[-400:]}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--profile", default="quick")
    a = ap.parse_args()
    ok = True
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "ns.c"), os.path.join(d, "ns")
        open(src, "w").write(C)
        subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
        for what, bench in CASES:
            cs, ss = [], []
            for i in range(a.rounds):
                order = ["c", "s"] if i % 2 == 0 else ["s", "c"]
                for who in order:
                    if who == "c":
                        cs.append(c_ratio(exe, what, a.cpu, i % 2 == 1))
                    else:
                        ss.append(syscost_ratio(a.syscost, bench, a.profile, a.cpu))
                r, lo, hi, sides = ss[-1]
                print(f"{what} round {i + 1}: C {cs[-1]:.4f}, syscost {r:.4f} "
                      f"[{lo:.4f}-{hi:.4f}] ({sides})", flush=True)
            c, s = statistics.median(cs), statistics.median(x[0] for x in ss)
            good = abs(s / c - 1) <= 0.10
            ok &= good
            print(f"{what}: userns=1 / userns=0, median of {a.rounds}: C {c:.4f}, "
                  f"syscost {s:.4f}, syscost/C {s / c:.4f} "
                  f"[{'ok' if good else 'FAIL'}: within 10%]")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
