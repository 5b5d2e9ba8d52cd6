#!/usr/bin/env python3
"""How a call enters the kernel, syscost against plain C: the `via=libc|raw` rows of
syscost set beside C loops that make the same calls the same two ways, on one CPU, in
the same minutes.

    scripts/via.py [--syscost target/release/syscost] [--rounds 3] [--cpu 0]
                   [--lat-syscall PATH] [--no-perf]
    scripts/via.py --sweep [--cpu 0]

Run it alone on the machine (`flock -x /tmp/syscost-machine.lock scripts/via.py`). In
each round, in alternating order, it runs:

1. The C loops, each a fresh process pinned to the CPU, each printing the median of 21
   batches (ns per operation): getpid, getppid, a one-byte write and read of a pipe,
   and open+close of a file on tmpfs, each through glibc's wrapper (`libc`) and through
   the `syscall` instruction written into the loop (`raw`); and two controls that keep
   the instruction but put a function around it: `fn`, a function of the program's own
   (`call`, `syscall`, `ret`, as glibc's getpid is), and `so`, the same function in a
   shared object the loader maps beside the C library (glibc's address range).
2. `syscost run syscall.getpid syscall.getppid ipc.pipe.self ctx.pipe file.open_close
   -p via=libc,raw --profile quick --cpu CPU` (the pipe and file rows with a pipe and a
   file of their own, as the C loops have).
3. lmbench's `lat_syscall null` when --lat-syscall names it, and `perf bench syscall
   basic` when perf is installed (both call glibc's getppid).

`--sweep` instead copies one machine-code loop (a pipe write and read, and a getpid,
each by the `syscall` instruction in the loop; and a function `mov; syscall; ret` called
from a loop) to each of 128 byte offsets of an executable mapping and prints the ns per
operation at each offset: whether the call site's placement changes the cost.

It prints every figure's median over the rounds, syscost's figure over the C loop's for
each pair (target: within 10%), the libc/raw ratio of each, and getppid against lmbench
and perf (target: within 10%), with PASS or FAIL. It exits 1 if a target failed. The C
programs are built with cc in a temporary directory, which is removed with the file the
open loop opens; nothing is left.
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile

C = r'''
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static inline long raw3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "0"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
__attribute__((noinline)) long fn_getpid(void) { return raw3(SYS_getpid, 0, 0, 0); }
__attribute__((noinline)) long fn_write(long f, long b, long n) { return raw3(SYS_write, f, b, n); }
__attribute__((noinline)) long fn_read(long f, long b, long n) { return raw3(SYS_read, f, b, n); }
extern long so_getpid(void);
extern long so_write(long, long, long);
extern long so_read(long, long, long);
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
static int p[2]; static char c = 'x'; static const char *path;
#define LOOP(body) for (long i = 0; i < n; i++) { body; }
static int run(const char *m, long n) {
  if (!strcmp(m, "getpid-libc")) LOOP(getpid())
  else if (!strcmp(m, "getpid-raw")) LOOP(raw3(SYS_getpid, 0, 0, 0))
  else if (!strcmp(m, "getpid-fn")) LOOP(fn_getpid())
  else if (!strcmp(m, "getpid-so")) LOOP(so_getpid())
  else if (!strcmp(m, "getppid-libc")) LOOP(getppid())
  else if (!strcmp(m, "getppid-raw")) LOOP(raw3(SYS_getppid, 0, 0, 0))
  else if (!strcmp(m, "pipe-libc")) LOOP(if (write(p[1], &c, 1) != 1 || read(p[0], &c, 1) != 1) return 1)
  else if (!strcmp(m, "pipe-raw")) LOOP(if (raw3(SYS_write, p[1], (long)&c, 1) != 1 || raw3(SYS_read, p[0], (long)&c, 1) != 1) return 1)
  else if (!strcmp(m, "pipe-fn")) LOOP(if (fn_write(p[1], (long)&c, 1) != 1 || fn_read(p[0], (long)&c, 1) != 1) return 1)
  else if (!strcmp(m, "pipe-so")) LOOP(if (so_write(p[1], (long)&c, 1) != 1 || so_read(p[0], (long)&c, 1) != 1) return 1)
  else if (!strcmp(m, "open-libc")) LOOP(int f = open(path, O_RDONLY | O_CLOEXEC); if (f < 0 || close(f)) return 1)
  else if (!strcmp(m, "open-raw")) LOOP(long f = raw3(SYS_openat, AT_FDCWD, (long)path, O_RDONLY | O_CLOEXEC); if (f < 0 || raw3(SYS_close, f, 0, 0)) return 1)
  else return 2;
  return 0;
}
int main(int argc, char **argv) {
  if (argc != 4 || pipe2(p, O_CLOEXEC)) return 2;
  path = argv[3];
  long n = atol(argv[2]);
  double b[21];
  if (run(argv[1], n)) return 1;  /* warm-up */
  for (int k = 0; k < 21; k++) { double t0 = now(); if (run(argv[1], n)) return 1; b[k] = (now() - t0) / n; }
  qsort(b, 21, sizeof b[0], cmp);
  printf("%.2f\n", b[10]);
  return 0;
}
'''

SO = r'''
#include <sys/syscall.h>
static inline long raw3(long n, long a, long b, long c) {
  long r;
  __asm__ volatile("syscall" : "=a"(r) : "0"(n), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
  return r;
}
long so_getpid(void) { return raw3(SYS_getpid, 0, 0, 0); }
long so_write(long f, long b, long n) { return raw3(SYS_write, f, b, n); }
long so_read(long f, long b, long n) { return raw3(SYS_read, f, b, n); }
'''

# C mode -> calls per batch (about 2 ms a batch).
MODES = {"getpid-libc": 20000, "getpid-raw": 20000, "getpid-fn": 20000, "getpid-so": 20000,
         "getppid-libc": 20000, "getppid-raw": 20000,
         "pipe-libc": 4000, "pipe-raw": 4000, "pipe-fn": 4000, "pipe-so": 4000,
         "open-libc": 1000, "open-raw": 1000}

# (syscost row, C mode): the targets of the pairing.
PAIRS = [("syscall.getpid via=libc", "getpid-libc"), ("syscall.getpid via=raw", "getpid-raw"),
         ("syscall.getppid via=libc", "getppid-libc"), ("syscall.getppid via=raw", "getppid-raw"),
         ("ipc.pipe.self via=libc", "pipe-libc"), ("ipc.pipe.self via=raw", "pipe-raw"),
         ("ctx.pipe via=libc", "pipe-libc"), ("ctx.pipe via=raw", "pipe-raw"),
         ("file.open_close via=libc", "open-libc"), ("file.open_close via=raw", "open-raw")]

SWEEP = r'''
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(const double*)a,y=*(const double*)b;return x<y?-1:x>y;}
/* pipe: push %r12; mov %rdi,%r12; L: mov $1,%eax; mov %r8,%rdi; syscall; xor %eax,%eax (mov $0);
   mov %r9,%rdi; syscall; dec %r12; jnz L; pop %r12; ret  (rsi = buffer, rdx = 1) */
static const unsigned char PIPE[] = {0x41,0x54, 0x49,0x89,0xfc, 0xb8,1,0,0,0, 0x4c,0x89,0xc7,
  0x0f,0x05, 0xb8,0,0,0,0, 0x4c,0x89,0xcf, 0x0f,0x05, 0x49,0xff,0xcc, 0x75,0xe7, 0x41,0x5c, 0xc3};
/* getpid: L: mov $39,%eax; syscall; dec %rdi; jnz L; ret */
static const unsigned char GETPID[] = {0xb8,0x27,0,0,0, 0x0f,0x05, 0x48,0xff,0xcf, 0x75,0xf4, 0xc3};
/* fn: mov $39,%eax; syscall; ret */
static const unsigned char FN[] = {0xb8,0x27,0,0,0, 0x0f,0x05, 0xc3};
int main(int argc, char **argv) {
  int p[2]; static char c = 'x';
  if (pipe(p)) return 1;
  unsigned char *m = mmap(0, 8192, PROT_READ|PROT_WRITE|PROT_EXEC, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 1;
  const char *which = argv[1];
  const unsigned char *code = !strcmp(which, "pipe") ? PIPE : !strcmp(which, "getpid") ? GETPID : FN;
  size_t len = !strcmp(which, "pipe") ? sizeof PIPE : !strcmp(which, "getpid") ? sizeof GETPID : sizeof FN;
  long n = !strcmp(which, "pipe") ? 4000 : 20000;
  for (long off = 0; off < 128; off++) {
    double b[9];
    memcpy(m + off, code, len);
    for (int k = -1; k < 9; k++) {
      double t0 = now();
      if (!strcmp(which, "pipe")) ((void (*)(long, char *, long, long, long, long))(m + off))(n, &c, 1, 0, p[1], p[0]);
      else if (!strcmp(which, "getpid")) ((void (*)(long))(m + off))(n);
      else for (long i = 0; i < n; i++) ((long (*)(void))(m + off))();
      if (k >= 0) b[k] = (now() - t0) / n;
    }
    memset(m + off, 0xcc, len);
    qsort(b, 9, sizeof b[0], cmp);
    printf("%ld %.1f\n", off, b[4]);
  }
  return 0;
}
'''

RUNS = [["syscall.getpid", "syscall.getppid", "ipc.pipe.self", "ctx.pipe", "share=pipe-per-copy"],
        ["file.open_close", "share=file-per-copy"]]


def pinned(cpu):
    return lambda: os.sched_setaffinity(0, {cpu})


def c_round(exe, path, cpu, out):
    for mode, n in MODES.items():
        r = subprocess.run([exe, mode, str(n), path], capture_output=True, text=True,
                           preexec_fn=pinned(cpu))
        if r.returncode != 0:
            sys.exit(f"via.py: the C loop {mode} failed ({r.returncode}): {r.stderr}")
        out.setdefault(mode, []).append(float(r.stdout))


def syscost_round(a, out):
    for sel in RUNS:
        cmd = [a.syscost, "run", *sel, "-p", "via=libc,raw", "--profile", "quick", "--cpu",
               str(a.cpu), "--format", "json", "--no-samples", "--no-save"]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode not in (0, 1) or not r.stdout.strip():
            sys.exit(f"via.py: {' '.join(cmd)} failed ({r.returncode}): {r.stderr[-2000:]}")
        for res in json.loads(r.stdout)["results"]:
            m = res.get("measured")
            if m is None:
                continue
            key = f"{res['name']} via={res['params'].get('via', '?')}"
            out.setdefault(key, []).append(m["median_ns"])


def others_round(a, out):
    if a.lat_syscall:
        r = subprocess.run([a.lat_syscall, "-N", "5", "null"], capture_output=True, text=True,
                           preexec_fn=pinned(a.cpu))
        m = re.search(r"Simple syscall: ([0-9.]+) microseconds", r.stderr + r.stdout)
        if m:
            out.setdefault("lmbench lat_syscall null", []).append(float(m.group(1)) * 1e3)
    if a.perf:
        r = subprocess.run(["perf", "bench", "syscall", "basic"], capture_output=True,
                           text=True, preexec_fn=pinned(a.cpu))
        m = re.search(r"([0-9.]+) usecs/op", r.stdout)
        if m:
            out.setdefault("perf bench syscall basic", []).append(float(m.group(1)) * 1e3)


def sweep(cpu, tmp):
    src, exe = os.path.join(tmp, "sweep.c"), os.path.join(tmp, "sweep")
    with open(src, "w") as f:
        f.write(SWEEP)
    subprocess.run(["cc", "-O2", "-o", exe, src], check=True)
    for which in ["pipe", "getpid", "fn"]:
        r = subprocess.run([exe, which], capture_output=True, text=True, check=True,
                           preexec_fn=pinned(cpu))
        xs = [float(line.split()[1]) for line in r.stdout.splitlines()]
        lo = min(xs)
        slow = [i for i, x in enumerate(xs) if x > 1.15 * lo]
        print(f"{which}: fastest {lo:.1f} ns, median {statistics.median(xs):.1f} ns; "
              f"{len(slow)} of 128 offsets more than 15% slower: {slow}")
        print("  " + " ".join(f"{i}:{x:.0f}" for i, x in enumerate(xs)))


def fmt(xs):
    return f"{statistics.median(xs):9.1f} ns  ({' '.join(f'{x:.1f}' for x in xs)})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=0)
    ap.add_argument("--lat-syscall", help="lmbench's lat_syscall binary")
    ap.add_argument("--no-perf", dest="perf", action="store_false")
    ap.add_argument("--sweep", action="store_true",
                    help="the same loop at 128 byte offsets instead")
    a = ap.parse_args()
    if a.sweep:
        tmp = tempfile.mkdtemp(prefix="syscost-via-")
        try:
            sweep(a.cpu, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        return
    if a.rounds < 1:
        ap.error("--rounds must be at least 1")
    if a.perf and shutil.which("perf") is None:
        a.perf = False
    tmp = tempfile.mkdtemp(prefix="syscost-via-")
    shm = tempfile.mkdtemp(prefix="syscost-via-", dir="/dev/shm" if os.path.isdir("/dev/shm") else None)
    try:
        src, so_src = os.path.join(tmp, "via.c"), os.path.join(tmp, "so.c")
        exe, so = os.path.join(tmp, "via"), os.path.join(tmp, "libviaso.so")
        with open(src, "w") as f:
            f.write(C)
        with open(so_src, "w") as f:
            f.write(SO)
        subprocess.run(["cc", "-O2", "-shared", "-fPIC", "-o", so, so_src], check=True)
        subprocess.run(["cc", "-O2", "-o", exe, src, f"-L{tmp}", "-lviaso",
                        f"-Wl,-rpath,{tmp}"], check=True)
        path = os.path.join(shm, "open-copy0")
        open(path, "w").close()
        c, s, o = {}, {}, {}
        for k in range(a.rounds):
            print(f"round {k + 1} of {a.rounds}", file=sys.stderr, flush=True)
            steps = [lambda: c_round(exe, path, a.cpu, c), lambda: syscost_round(a, s),
                     lambda: others_round(a, o)]
            for step in (steps if k % 2 == 0 else steps[::-1]):
                step()
        print(f"median over {a.rounds} rounds, each figure ns per operation, pinned to CPU {a.cpu}")
        print("\nplain C loops")
        for mode in MODES:
            print(f"  {mode:<14} {fmt(c[mode])}")
        print("\nsyscost rows")
        for key in sorted(s):
            print(f"  {key:<26} {fmt(s[key])}")
        for key in sorted(o):
            print(f"  {key:<26} {fmt(o[key])}")
        med = lambda d, k: statistics.median(d[k])
        failed = 0
        print("\nsyscost / C loop (target within 10%)")
        for row, mode in PAIRS:
            if row not in s:
                print(f"  {row:<26} not measured")
                failed += 1
                continue
            r = med(s, row) / med(c, mode)
            ok = abs(r - 1) <= 0.10
            failed += not ok
            print(f"  {row:<26} / {mode:<13} {r:6.3f}  {'PASS' if ok else 'FAIL'}")
        print("\nlibc / raw, per call")
        for name, lib, raw in [("getpid", "getpid-libc", "getpid-raw"),
                               ("getppid", "getppid-libc", "getppid-raw"),
                               ("pipe write+read", "pipe-libc", "pipe-raw"),
                               ("open+close", "open-libc", "open-raw")]:
            print(f"  C        {name:<16} {med(c, lib) / med(c, raw):6.3f}"
                  f"  (+{med(c, lib) - med(c, raw):.1f} ns)")
        for row in ["syscall.getpid", "syscall.getppid", "ipc.pipe.self", "ctx.pipe",
                    "file.open_close"]:
            lib, raw = f"{row} via=libc", f"{row} via=raw"
            if lib in s and raw in s:
                print(f"  syscost  {row:<16} {med(s, lib) / med(s, raw):6.3f}"
                      f"  (+{med(s, lib) - med(s, raw):.1f} ns)")
        print("\nthe function around the instruction (C): fn = own function, so = shared object")
        for base in ["getpid", "pipe"]:
            raw = med(c, f"{base}-raw")
            print(f"  {base:<7} " + "  ".join(
                f"{v}/raw {med(c, f'{base}-{v}') / raw:.3f}" for v in ["fn", "so", "libc"]))
        row = "syscall.getppid via=libc"
        for other in sorted(o):
            if row in s:
                r = med(s, row) / med(o, other)
                ok = abs(r - 1) <= 0.10
                failed += not ok
                print(f"\n{row} / {other}: {r:.3f}  {'PASS' if ok else 'FAIL'}")
        print(f"\n{'all targets met' if not failed else f'{failed} target(s) missed'}")
        sys.exit(1 if failed else 0)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(shm, ignore_errors=True)


if __name__ == "__main__":
    main()
