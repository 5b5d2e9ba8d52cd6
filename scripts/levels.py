#!/usr/bin/env python3
"""Is the spread between a benchmark's rounds the machine's or syscost's? Each round of
syscost is measured by a fresh worker process; this script measures the same system call
in fresh plain C processes made the same way and sets the two side by side.

    scripts/levels.py [--syscost target/release/syscost] [-n 150] [--live 200] [--mib 8]
                      getppid|getpid|kill

In order, in the same minutes:

1. n plain C processes, one after another, 30 ms apart. Each is a fresh program (fork
   and exec, as syscost starts a worker), touches MIB MiB of its own memory (a worker's
   size), warms up, then times 41 batches of 2000 calls and reports their median: one
   figure per process, as a syscost round is one median per worker. Each then waits, so
   that up to LIVE of them are alive at once, as a whole catalogue's idle workers are
   (`--live 0`: each ends before the next starts). They die with their parent
   (PR_SET_PDEATHSIG), on Ctrl-C too; the script kills and reaps the rest.
2. `syscost run syscall.OP --profile thorough` (10 to 45 rounds): its round medians.
3. The C series again, for the machine's drift across the minutes.

For each series: the figures' median, their standard deviation in percent of it, the
share of figures more than 3% from the median, and their levels: the sorted figures split where two neighbours are more than 1.5% of the
median apart, each level with its median and share. On a machine where a fresh
process's cost of the call depends on the process (where the kernel placed its
objects), plain C processes show the levels too; then rounds that disagree are the
machine's, and no setting of syscost would make them agree. The C programs are compiled
here with cc into a temporary directory; nothing is left.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile

C = r'''
#define _GNU_SOURCE
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
static pid_t me;
static long op(int which){
  switch(which){case 0:return syscall(SYS_getppid);case 1:return syscall(SYS_getpid);default:return syscall(SYS_kill,me,0);}}
int main(int argc,char**argv){
  if(argc==4&&!strcmp(argv[1],"child")){
    if(prctl(PR_SET_PDEATHSIG,SIGKILL))return 1;
    if(getppid()==1)return 1;
    int which=atoi(argv[2]);size_t mib=(size_t)atol(argv[3]);me=getpid();
    char*m=malloc(mib<<20);if(mib&&!m)return 1;if(mib)memset(m,1,mib<<20);
    for(int i=0;i<20000;i++)if(op(which)<0)return 1;
    double b[41];
    for(int k=0;k<41;k++){double t0=now();for(int i=0;i<2000;i++)if(op(which)<0)return 1;b[k]=(now()-t0)/2000;}
    qsort(b,41,sizeof b[0],cmp);printf("%.3f\n",b[20]);fflush(stdout);
    for(;;)pause();
  }
  if(argc!=5)return 2;
  int n=atoi(argv[1]),live=atoi(argv[4]);
  pid_t*alive=calloc((size_t)live+1,sizeof(pid_t));int na=0;
  for(int r=0;r<n;r++){
    pid_t p=fork();
    if(p<0)return 1;
    if(p==0){execl("/proc/self/exe","levels","child",argv[2],argv[3],(char*)0);_exit(127);}
    alive[na++]=p;
    struct timespec d={0,30000000};nanosleep(&d,0);
    while(na>live){kill(alive[0],SIGKILL);waitpid(alive[0],0,0);memmove(alive,alive+1,(size_t)(--na)*sizeof(pid_t));}
  }
  for(int i=0;i<na;i++){kill(alive[i],SIGKILL);waitpid(alive[i],0,0);}
  return 0;
}
'''
OPS = {"getppid": 0, "getpid": 1, "kill": 2}


def levels(values, gap=0.015):
    """The sorted values split where neighbours are more than `gap` of the median apart."""
    v = sorted(values)
    med = statistics.median(v)
    groups = [[v[0]]]
    for x in v[1:]:
        if x - groups[-1][-1] > gap * med:
            groups.append([])
        groups[-1].append(x)
    return [(statistics.median(g), len(g) / len(v)) for g in groups]


def describe(name, values):
    med = statistics.median(values)
    sd = statistics.stdev(values) / med * 100 if len(values) > 1 else 0.0
    off = sum(abs(x - med) > 0.03 * med for x in values) / len(values)
    lv = ", ".join(f"{m:.1f} ns ({s*100:.0f}%)" for m, s in levels(values))
    print(f"{name:<24} {len(values):3} figures  median {med:7.1f} ns  sd {sd:4.1f}%  "
          f"{off*100:3.0f}% off it by >3%  levels: {lv}", flush=True)
    return sd


def c_series(exe, a):
    out = subprocess.run([exe, str(a.n), str(OPS[a.op]), str(a.mib), str(a.live)],
                         check=True, capture_output=True, text=True).stdout
    vals = [float(x) for x in out.split()]
    if len(vals) != a.n:
        sys.exit(f"levels.py: {a.n - len(vals)} of the {a.n} C processes failed")
    return vals


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("op", choices=sorted(OPS))
    ap.add_argument("-n", type=int, default=150, help="C processes per series (default 150)")
    ap.add_argument("--live", type=int, default=200,
                    help="C processes kept alive at once (default 200)")
    ap.add_argument("--mib", type=int, default=8, help="memory each C process touches (MiB)")
    ap.add_argument("--syscost", default="target/release/syscost")
    a = ap.parse_args()
    if a.n < 2 or a.live < 0 or a.mib < 0:
        ap.error("-n must be at least 2, --live and --mib at least 0")
    tmp = tempfile.mkdtemp(prefix="syscost-levels-")
    try:
        src, exe = os.path.join(tmp, "levels.c"), os.path.join(tmp, "levels")
        with open(src, "w") as f:
            f.write(C)
        subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
        before = c_series(exe, a)
        out = subprocess.run([a.syscost, "run", f"syscall.{a.op}", "--profile", "thorough",
                              "--format", "json", "--no-samples", "--no-save"],
                             check=True, capture_output=True, text=True).stdout
        r = json.loads(out)["results"][0]
        if r.get("measured") is None:
            sys.exit(f"levels.py: syscall.{a.op} was not measured: {r.get('reason')}")
        rounds = [x["median_ns"] for x in r["measured"]["rounds"] if x["median_ns"] is not None]
        after = c_series(exe, a)
        print(f"syscall.{a.op}: a figure per fresh process (C: {a.mib} MiB touched, "
              f"up to {a.live} alive at once)")
        c1 = describe("plain C, before", before)
        s = describe("syscost round medians", rounds)
        c2 = describe("plain C, after", after)
        print(f"sd of the syscost rounds / sd of the C processes: {s / max(statistics.median([c1, c2]), 1e-9):.2f}"
              f"; syscost's figure / C's: "
              f"{r['measured']['median_ns'] / statistics.median(before + after):.3f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
