#!/usr/bin/env python3
"""Runs one syscost benchmark N times as separate invocations, interleaved with a plain
C loop of the same operation, and checks issue 14's targets: how many runs' 95% CI
contain the median of the N medians, and the spread (max - min) / median of the
medians, beside the C loop's spread over the same minutes.

    scripts/repeat.py [-n 10] [--syscost target/release/syscost] [--db PATH] getpid|pipe|fault

Each invocation saves its run in a history: by default a new one in a temporary
directory, so the series starts with no earlier runs and the first two invocations
have only their own rounds; later ones widen their interval by the spread between the
earlier runs (`between_runs` in the JSON). Coverage is printed for the reported interval
and for each run's own interval. The C loops are compiled here with cc into a temporary
directory; nothing is left. For fault, a second C loop (the touches inline in main) runs
beside the reference one and is printed with its own ratio: see the note at C["fault"].
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile

C = {
    "getpid": r'''
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){long n=3000000;for(long i=0;i<100000;i++)syscall(SYS_getpid);
double t0=now();for(long i=0;i<n;i++)syscall(SYS_getpid);printf("%.3f\n",(now()-t0)/n);return 0;}
''',
    "pipe": r'''
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){int n=30000,a[2],b[2];char c[4]={0};if(pipe(a)||pipe(b))return 1;
cpu_set_t s;CPU_ZERO(&s);CPU_SET(0,&s);sched_setaffinity(0,sizeof s,&s);
pid_t p=fork();if(p==0){close(a[1]);for(;;){if(read(a[0],c,4)!=4)_exit(0);if(write(b[1],c,4)!=4)_exit(1);}}
for(int i=0;i<1000;i++){if(write(a[1],c,4)!=4||read(b[0],c,4)!=4)return 1;}
double t0=now();for(int i=0;i<n;i++){if(write(a[1],c,4)!=4||read(b[0],c,4)!=4)return 1;}
printf("%.3f\n",(now()-t0)/n);kill(p,SIGKILL);waitpid(p,0,0);return 0;}
''',
    # The touches run in a function of their own, as syscost's run in its benchmark's
    # body: the same loop written inline in main can take fewer ns per fault
    # (docs/measurements/rounds.md, "Where a C loop stands"). The loop in main still
    # runs beside it and is printed (INLINE below).
    "fault": r'''
#include <stdio.h>
#include <time.h>
#include <sys/mman.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
__attribute__((noinline)) static void touch(char*m,size_t size){for(size_t i=0;i<size;i+=4096)((volatile char*)m)[i]=1;}
int main(void){size_t size=8<<20,pages=size/4096;double sum=0;int reps=40;
for(int r=0;r<reps;r++){char*m=mmap(0,size,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);if(m==MAP_FAILED)return 1;
madvise(m,size,MADV_NOHUGEPAGE);double t0=now();touch(m,size);sum+=(now()-t0)/pages;munmap(m,size);}
printf("%.3f\n",sum/reps);return 0;}
''',
}
# A second plain C loop run beside the first, printed but not the reference: the same
# touches written inline in main (the form of this script before 2026-11-26).
INLINE = {
    "fault": r'''
#include <stdio.h>
#include <time.h>
#include <sys/mman.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
int main(void){size_t size=8<<20,pages=size/4096;double sum=0;int reps=40;
for(int r=0;r<reps;r++){char*m=mmap(0,size,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);if(m==MAP_FAILED)return 1;
madvise(m,size,MADV_NOHUGEPAGE);double t0=now();for(size_t i=0;i<size;i+=4096)m[i]=1;sum+=(now()-t0)/pages;munmap(m,size);}
printf("%.3f\n",sum/reps);return 0;}
''',
}
ARGS = {
    "getpid": ["syscall.getpid"],
    "pipe": ["ctx.pingpong", "-p", "mechanism=pipe", "-p", "placement=same-cpu"],
    "fault": ["mem.fault.zero"],
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=sorted(C))
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("--db", help="history file to use (default: a new one)")
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="syscost-repeat-")
    try:
        src, exe = os.path.join(tmp, "loop.c"), os.path.join(tmp, "loop")
        with open(src, "w") as f:
            f.write(C[a.which])
        subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
        inline_exe = None
        if a.which in INLINE:
            inline_src, inline_exe = os.path.join(tmp, "inline.c"), os.path.join(tmp, "inline")
            with open(inline_src, "w") as f:
                f.write(INLINE[a.which])
            subprocess.run(["cc", "-O2", "-o", inline_exe, inline_src], check=True)
        env = dict(os.environ, SYSCOST_DB=a.db or os.path.join(tmp, "history.db"))
        env.pop("SYSCOST_NO_SAVE", None)
        runs, plain, inline = [], [], []
        for i in range(a.n):
            out = subprocess.run([a.syscost, "run", *ARGS[a.which], "--format", "json", "--no-samples"],
                                 check=True, capture_output=True, text=True, env=env).stdout
            r = json.loads(out)["results"][0]
            m = r["measured"]
            runs.append(m)
            plain.append(float(subprocess.run([exe], check=True, capture_output=True, text=True).stdout))
            if inline_exe:
                inline.append(float(subprocess.run([inline_exe], check=True, capture_output=True,
                                                   text=True).stdout))
            states = ", ".join(f"{s['median_ns']:.1f} ({s['share']*100:.0f}%)" for s in m["states"])
            b = m.get("between_runs")
            own = f"  own ±{(b['run_ci_high_ns']-b['run_ci_low_ns'])/2/m['median_ns']*100:.1f}% (+{b['runs']} runs)" if b else ""
            print(f"run {i+1:2}: {m['median_ns']:10.1f} ns  CI {m['ci_low_ns']:.1f}-{m['ci_high_ns']:.1f} "
                  f"(±{(m['ci_high_ns']-m['ci_low_ns'])/2/m['median_ns']*100:.1f}%)  rounds {len(m['rounds'])}  "
                  f"conv {m['converged']}{own}  states [{states}]   plain C {plain[-1]:.1f} ns"
                  + (f" (inline in main {inline[-1]:.1f} ns)" if inline else ""), flush=True)
        meds = [m["median_ns"] for m in runs]
        mm = statistics.median(meds)
        inside = sum(m["ci_low_ns"] <= mm <= m["ci_high_ns"] for m in runs)
        spread = (max(meds) - min(meds)) / mm
        cspread = (max(plain) - min(plain)) / statistics.median(plain)
        def own(m):
            b = m.get("between_runs")
            return (b["run_ci_low_ns"], b["run_ci_high_ns"]) if b else (m["ci_low_ns"], m["ci_high_ns"])
        inside_own = sum(own(m)[0] <= mm <= own(m)[1] for m in runs)
        print(f"median of medians {mm:.1f} ns; CI contains it in {inside}/{len(runs)} runs "
              f"(each run's own interval alone: {inside_own}/{len(runs)})")
        print(f"spread of the medians {spread*100:.1f}%; plain C loop spread {cspread*100:.1f}% "
              f"(median {statistics.median(plain):.1f} ns); ratio syscost/C {mm/statistics.median(plain):.3f}")
        if inline:
            print(f"the C loop inline in main: median {statistics.median(inline):.1f} ns, "
                  f"spread {(max(inline)-min(inline))/statistics.median(inline)*100:.1f}%; "
                  f"ratio syscost/that {mm/statistics.median(inline):.3f}")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
