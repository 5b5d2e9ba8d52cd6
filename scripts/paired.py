#!/usr/bin/env python3
"""Checks issue 55's targets for paired alternatives (`syscost run ... --reference`) on this
machine as it is.

    scripts/paired.py [--syscost target/release/syscost] [-n 10] [--profile standard]
                      [--series pipe,pingpong]

For each series, N invocations of syscost (runs not saved), each followed by a plain C
program that measures the same ratio in pairs the same way (one process, batches of the
reference and the alternative in quartets A B B A, the median of the quartets' ratios),
pinned to CPU 0:

- pipe: `syscost run ipc.pipe.self -p via=libc,raw -p share=one-fifo --reference
  via=libc`; C: glibc write/read of one byte on a pipe against the same two calls through
  an inline `syscall` instruction.
- pingpong: `syscost run ctx.pingpong -p mechanism=pipe,futex,eventfd,unix -p
  placement=same-cpu --reference mechanism=pipe`; C: a forked partner per mechanism, all
  on CPU 0, round trips through a pipe each way against a futex word each way, an
  eventfd each way, a Unix socket pair.

Per non-reference row it prints the N paired ratios, how many of the N ratio intervals
hold the median of the N ratios (target >= 9 of 10), the median relative half-width
beside max(1.5 x the ratios' spread (max - min) / median, 0.5%) and beside the median of
sqrt(a^2 + b^2) of the two rows' own relative half-widths in the same runs (target: no
wider than either), the rows' own figures' spread (to show what the pairs cancelled),
and the median ratio over the C programs' median ratio (target within 5%).
Every figure here is a time: say what else ran on the machine when you quote it.
"""
import argparse, json, math, os, statistics, subprocess, sys, tempfile

C_PIPE = r'''
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static inline long sys3(long n,long a,long b,long c){long r;
  __asm__ volatile("syscall":"=a"(r):"a"(n),"D"(a),"S"(b),"d"(c):"rcx","r11","memory");return r;}
static int fd[2]; static char c;
static double libc_batch(int k){double t=now();for(int i=0;i<k;i++){
  if(write(fd[1],&c,1)!=1||read(fd[0],&c,1)!=1)exit(1);}return (now()-t)/k;}
static double raw_batch(int k){double t=now();for(int i=0;i<k;i++){
  if(sys3(SYS_write,fd[1],(long)&c,1)!=1||sys3(SYS_read,fd[0],(long)&c,1)!=1)exit(1);}return (now()-t)/k;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
int main(void){cpu_set_t s;CPU_ZERO(&s);CPU_SET(0,&s);sched_setaffinity(0,sizeof s,&s);
  if(pipe(fd))return 1; enum{Q=401,K=200}; double r[Q];
  for(int i=0;i<50;i++){libc_batch(K);raw_batch(K);}
  for(int q=0;q<Q;q++){double a=libc_batch(K),b=raw_batch(K),b2=raw_batch(K),a2=libc_batch(K);r[q]=(b+b2)/(a+a2);}
  qsort(r,Q,sizeof r[0],cmp);printf("raw %.5f\n",r[Q/2]);return 0;}
'''

C_PINGPONG = r'''
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static void pin(void){cpu_set_t s;CPU_ZERO(&s);CPU_SET(0,&s);sched_setaffinity(0,sizeof s,&s);}
static long fx(int*w,int op,int v){return syscall(SYS_futex,w,op,v,0,0,0);}
enum{PIPE,FUTEX,EVENTFD,UNIX,M};
static const char*names[M]={"pipe","futex","eventfd","unix"};
struct side{int to,from; int*w;} S[M]; static pid_t kids[M];
static void child(int m){char c;unsigned long long v;int last=0;for(;;){switch(m){
  case PIPE:case UNIX: if(read(S[m].from,&c,1)!=1)_exit(0); if(write(S[m].to,&c,1)!=1)_exit(0); break;
  case EVENTFD: if(read(S[m].from,&v,8)!=8)_exit(0); v=1; if(write(S[m].to,&v,8)!=8)_exit(0); break;
  case FUTEX: while(__atomic_load_n(&S[m].w[0],__ATOMIC_ACQUIRE)==last)fx(&S[m].w[0],FUTEX_WAIT,last);
    last=S[m].w[0]; __atomic_add_fetch(&S[m].w[1],1,__ATOMIC_RELEASE); fx(&S[m].w[1],FUTEX_WAKE,1); break;}}}
static void trip(int m){char c=1;unsigned long long v=1;switch(m){
  case PIPE:case UNIX: if(write(S[m].to,&c,1)!=1||read(S[m].from,&c,1)!=1)exit(1); break;
  case EVENTFD: if(write(S[m].to,&v,8)!=8||read(S[m].from,&v,8)!=8)exit(1); break;
  case FUTEX:{int b=S[m].w[1]; __atomic_add_fetch(&S[m].w[0],1,__ATOMIC_RELEASE); fx(&S[m].w[0],FUTEX_WAKE,1);
    while(__atomic_load_n(&S[m].w[1],__ATOMIC_ACQUIRE)==b)fx(&S[m].w[1],FUTEX_WAIT,b);} break;}}
static double batch(int m,int k){double t=now();for(int i=0;i<k;i++)trip(m);return (now()-t)/k;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return (x>y)-(x<y);}
int main(void){pin();
  for(int m=0;m<M;m++){int p[2],q[2];
    if(m==PIPE){if(pipe(p)||pipe(q))return 1;S[m]=(struct side){p[1],q[0],0};}
    else if(m==UNIX){int sv[2];if(socketpair(AF_UNIX,SOCK_STREAM,0,sv))return 1;S[m]=(struct side){sv[0],sv[0],0};p[0]=sv[1];}
    else if(m==EVENTFD){S[m]=(struct side){eventfd(0,0),eventfd(0,0),0};}
    else {S[m].w=mmap(0,4096,PROT_READ|PROT_WRITE,MAP_SHARED|MAP_ANONYMOUS,-1,0);}
    pid_t k=fork(); if(k==0){pin();
      if(m==PIPE){S[m]=(struct side){q[1],p[0],0};}
      else if(m==UNIX){S[m]=(struct side){p[0],p[0],0};}
      else if(m==EVENTFD){int a=S[m].to,b=S[m].from;S[m].to=b;S[m].from=a;}
      child(m);} kids[m]=k;}
  enum{Q=301,K=20}; double r[M][Q];
  for(int i=0;i<30;i++)for(int m=0;m<M;m++)batch(m,K);
  for(int q=0;q<Q;q++)for(int m=1;m<M;m++){double a=batch(PIPE,K),b=batch(m,K),b2=batch(m,K),a2=batch(PIPE,K);r[m][q]=(b+b2)/(a+a2);}
  for(int m=1;m<M;m++){qsort(r[m],Q,sizeof r[m][0],cmp);printf("%s %.5f\n",names[m],r[m][Q/2]);}
  for(int m=0;m<M;m++){kill(kids[m],SIGKILL);waitpid(kids[m],0,0);}return 0;}
'''

SERIES = {
    "pipe": (["ipc.pipe.self", "-p", "via=libc,raw", "-p", "share=one-fifo",
              "--reference", "via=libc"], "via", C_PIPE),
    "pingpong": (["ctx.pingpong", "-p", "mechanism=pipe,futex,eventfd,unix", "-p",
                  "placement=same-cpu", "--reference", "mechanism=pipe"], "mechanism",
                 C_PINGPONG),
}


def half(m):
    """A row's own relative half-width."""
    return (m["ci_high_ns"] - m["ci_low_ns"]) / 2 / m["median_ns"]


def one_run(syscost, args, profile, key):
    out = subprocess.run([syscost, "run", *args, "--profile", profile, "--no-save",
                          "--format", "json"], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit(f"syscost exited with {out.returncode}: {out.stderr.strip()[-400:]}")
    rows = {r["params"][key]: r["measured"] for r in json.loads(out.stdout)["results"]
            if r.get("measured")}
    return rows


def c_ratios(exe):
    out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    return {w.split()[0]: float(w.split()[1]) for w in out.strip().splitlines()}


def report(name, runs, cs, ref):
    others = sorted({v for rows in runs for v, m in rows.items() if m.get("paired")})
    for v in others:
        ps = [(rows[v]["paired"], rows[v], rows[ref]) for rows in runs
              if v in rows and rows[v].get("paired") and ref in rows]
        ratios = [p["ratio"] for p, _, _ in ps]
        med = statistics.median(ratios)
        covered = sum(p["ratio_low"] <= med <= p["ratio_high"] for p, _, _ in ps)
        hw = statistics.median((p["ratio_high"] - p["ratio_low"]) / 2 / p["ratio"]
                               for p, _, _ in ps)
        spread = (max(ratios) - min(ratios)) / med
        allowed = max(1.5 * spread, 0.005)
        rows_hw = statistics.median(math.hypot(half(a), half(b)) for _, a, b in ps)
        own = [a["median_ns"] for _, a, _ in ps]
        own_ref = [b["median_ns"] for _, _, b in ps]
        c = statistics.median(x[v] for x in cs if v in x)
        print(f"{name} {v} vs {ref}: ratios " + " ".join(f"{r:.4f}" for r in ratios))
        print(f"  covered {covered}/{len(ps)} (target >= 9/10); median half-width "
              f"±{100 * hw:.2f}% vs max(1.5x spread {100 * spread:.2f}%, 0.5%) = "
              f"{100 * allowed:.2f}% [{'ok' if hw <= allowed else 'WIDER'}], vs rows' "
              f"sqrt(a²+b²) ±{100 * rows_hw:.2f}% [{'ok' if hw <= rows_hw else 'WIDER'}]")
        print(f"  rows' own figures over the runs: {v} spread "
              f"{100 * (max(own) - min(own)) / statistics.median(own):.1f}%, {ref} "
              f"{100 * (max(own_ref) - min(own_ref)) / statistics.median(own_ref):.1f}%;"
              f" rows' own half-width median ±{100 * statistics.median(half(a) for _, a, _ in ps):.2f}%")
        cr = [x[v] for x in cs if v in x]
        print(f"  C ratios " + " ".join(f"{r:.4f}" for r in cr) + f" (spread "
              f"{100 * (max(cr) - min(cr)) / c:.2f}%)")
        print(f"  C paired ratio (median of {len(cs)}) {c:.4f}; syscost/C "
              f"{med / c:.4f} [{'ok' if abs(med / c - 1) <= 0.05 else 'OFF'}]")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("-n", type=int, default=10)
    ap.add_argument("--profile", default="standard")
    ap.add_argument("--series", default="pipe,pingpong")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.series.split(","):
            args, key, csrc = SERIES[name]
            src, exe = os.path.join(tmp, name + ".c"), os.path.join(tmp, name)
            open(src, "w").write(csrc)
            subprocess.run(["gcc", "-O2", "-o", exe, src], check=True)
            ref = args[-1].split("=", 1)[1]
            runs, cs = [], []
            for _ in range(a.n):
                runs.append(one_run(a.syscost, args, a.profile, key))
                cs.append(c_ratios(exe))
            report(name, runs, cs, ref)


if __name__ == "__main__":
    main()
