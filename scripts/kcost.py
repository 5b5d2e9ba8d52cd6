#!/usr/bin/env python3
"""A real kernel-side cost on every system call of a process tree, at a chosen size, and
plain C loops that measure it: to test whether `syscost compare` sees a change.

    scripts/kcost.py --calibrate [--sizes 0,25,50,...] [--pairs 7] [--quartets 15]
                      [--cache DIR]

Take every figure you quote under the machine lock, and keep each hold short:
`flock -x /tmp/syscost-machine.lock scripts/kcost.py --calibrate`.

As a module (stdlib only; needs `cc`):

    import sys; sys.path.insert(0, "scripts"); import kcost
    paths = kcost.build(cache_dir)        # {"wrap": ..., "loops": ...}, built once per dir
    subprocess.run([paths["wrap"], "400", "target/release/syscost", "run", ...])
    kcost.c_loops(paths, 400)             # {"getppid": ns, "pingpong": ns}
    kcost.paired_ratio(paths, 400)        # {"getppid": [with/without, ...], ...}

The two C programs (sources below, built with `cc -O2` into the cache directory; rebuilt
when their source text changes):

- `wrap N CMD [ARGS...]` sets PR_SET_NO_NEW_PRIVS (for N = 0 too, so that both arms
  take the same exec path), and for N > 0 installs ceil(N / 4094) seccomp filters
  (SECCOMP_SET_MODE_FILTER, with SECCOMP_FILTER_FLAG_SPEC_ALLOW so that no filter turns
  on the speculative-store-bypass mitigation, which would slow user code too), then
  execvp(CMD). Each filter is: load the low word of args[0] (so the kernel's per-syscall
  constant-action cache cannot skip it: the filter runs on every call), up to 4094
  `JEQ #k` instructions that jump to the next instruction whether or not they match (k
  positive, so each stays one compare and one branch after the classic-to-eBPF
  conversion), `RET ALLOW`. Filters of one task are all run on each system call, and
  are inherited across fork and exec, so everything CMD starts pays the cost. N = 0:
  no filter at all. The kernel refuses filters whose total length (plus 4 per filter)
  is over 32768 instructions: N up to about 32,000. Any failure: a message on stderr
  and exit status 127.
- `loops [CALLS [TRIPS [BATCHES]]]` (defaults 200000, 10000, 9), pinned to CPU 0, with
  a forked child also pinned to CPU 0: BATCHES batches of CALLS glibc getppid() calls,
  then BATCHES batches of TRIPS pipe round trips with the child (one byte each way, a
  pipe each way: four system calls and two context switches per round trip); each
  after a warm-up, each the median batch's ns per call / per round trip. It prints
  `# seccomp M filters F` (from its own /proc/self/status, checked against N by the
  Python side), `getppid NS`, `pingpong NS`. `loops serve` prints the same first line,
  then runs one batch per line read on stdin (`getppid K`, `pingpong K`) and prints its
  ns per call or round trip, until EOF.

c_loops(paths, n) runs `wrap n loops` once. paired_ratio(paths, n, pairs) starts, pair
after pair, two `loops serve` processes, one under `wrap 0` and one under `wrap n`
(which starts first alternating pair by pair), and makes them take turns batch by batch
in quartets without / with / with / without, so the two arms of a pair are never more
than a few milliseconds apart: on this VM the speed moves in spells of about a second
(a one-shot getppid loop read 460-530 ns for ten runs, then 620-690 for nine, 16:48),
and whole runs of `wrap 0 loops` and `wrap N loops` in turn read pairs 20% apart at
N = 0. A pair's ratio is the median of its quartets' ratios with / without.

Even N = 1 pays seccomp's entry path (the system-call slow path and a call into each
filter), so a filter cannot add less than that: on a call as cheap as getppid that is
a floor well above a few percent; see the calibration.

--calibrate prints, per size, the number of filters and the median (min–max) of the
pairs' ratios for getppid and pingpong, the control's ns, the seconds the size took and
the CPU seconds everything else on the machine used meanwhile (from /proc/stat, less
this script's children: a size during which others used several CPU seconds was
measured beside a build): pick a size for a small change and one for a large one from
it. Every figure here is a time on a machine shared with others: say what else ran
when you quote it.
"""
import argparse, os, resource, statistics, subprocess, sys, tempfile, time

PER_FILTER = 4094   # cheap instructions per filter: the 4096 maximum less the load and the return

C_WRAP = r'''
#define _GNU_SOURCE
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef SECCOMP_FILTER_FLAG_SPEC_ALLOW
#define SECCOMP_FILTER_FLAG_SPEC_ALLOW (1UL << 2)
#endif
#define PER 4094
static struct sock_filter prog_buf[PER + 2];
static int fail(const char *what) {
  fprintf(stderr, "wrap: %s: %s\n", what, strerror(errno));
  return 127;
}
int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: wrap N CMD [ARGS...]  (N: cheap BPF instructions per system "
                    "call, 0 = no filter)\n");
    return 127;
  }
  char *end;
  errno = 0;
  long n = strtol(argv[1], &end, 10);
  if (errno || end == argv[1] || *end || n < 0 || n > 1000000) {
    fprintf(stderr, "wrap: N must be a whole number from 0, got '%s'\n", argv[1]);
    return 127;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return fail("prctl(PR_SET_NO_NEW_PRIVS)");
  int filters = 0;
  for (long left = n; left > 0; filters++) {
    int k = left > PER ? PER : (int)left, j = 0;
    left -= k;
    prog_buf[j++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
                                                 offsetof(struct seccomp_data, args[0]));
    for (int i = 0; i < k; i++)   /* true and false both go to the next instruction */
      prog_buf[j++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
                                                   0x5ecc0000u + (unsigned)i, 0, 0);
    prog_buf[j++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog = {.len = (unsigned short)j, .filter = prog_buf};
    long r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_SPEC_ALLOW, &prog);
    if (r && errno == EINVAL)     /* a kernel without the flag */
      r = syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
    if (r) {
      char what[160];
      snprintf(what, sizeof what, "seccomp(SET_MODE_FILTER) filter %d of %ld instructions "
               "(N=%ld; the kernel allows about 32,000 in all)", filters + 1, (long)j, n);
      return fail(what);
    }
  }
  execvp(argv[2], argv + 2);
  char what[300];
  snprintf(what, sizeof what, "exec %s", argv[2]);
  return fail(what);
}
'''

C_LOOPS = r'''
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}
static void pin(void) {
  cpu_set_t s;
  CPU_ZERO(&s);
  CPU_SET(0, &s);
  if (sched_setaffinity(0, sizeof s, &s)) { perror("loops: sched_setaffinity CPU 0"); exit(1); }
}
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}
static double median(double *v, int k) {
  qsort(v, k, sizeof *v, cmp);
  return k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}
static volatile long sink;
static double getppid_batch(long k) {     /* ns per call */
  double t = now();
  for (long i = 0; i < k; i++) sink += getppid();
  return (now() - t) / k;
}
static int to_child[2], to_parent[2];
static pid_t kid;
static double pingpong_batch(long k) {    /* ns per round trip */
  char c = 1;
  double t = now();
  for (long i = 0; i < k; i++)
    if (write(to_child[1], &c, 1) != 1 || read(to_parent[0], &c, 1) != 1) {
      perror("loops: pipe round trip");
      exit(1);
    }
  return (now() - t) / k;
}
static void partner(void) {               /* the forked child, also on CPU 0 */
  if (pipe(to_child) || pipe(to_parent)) { perror("loops: pipe"); exit(1); }
  kid = fork();
  if (kid < 0) { perror("loops: fork"); exit(1); }
  if (kid == 0) {
    pin();
    close(to_child[1]);
    close(to_parent[0]);
    char c;
    while (read(to_child[0], &c, 1) == 1)
      if (write(to_parent[1], &c, 1) != 1) _exit(1);
    _exit(0);
  }
  close(to_child[0]);
  close(to_parent[1]);
}
static int finish(void) {
  close(to_child[1]);
  int st;
  if (waitpid(kid, &st, 0) != kid || !WIFEXITED(st) || WEXITSTATUS(st)) {
    fprintf(stderr, "loops: the ping-pong child did not exit cleanly\n");
    return 1;
  }
  return 0;
}
int main(int argc, char **argv) {
  int serve = argc > 1 && strcmp(argv[1], "serve") == 0;
  long calls = !serve && argc > 1 ? atol(argv[1]) : 200000;
  long ntrips = !serve && argc > 2 ? atol(argv[2]) : 10000;
  int batches = !serve && argc > 3 ? atoi(argv[3]) : 9;
  if (calls < 1 || ntrips < 1 || batches < 1 || batches > 1000) {
    fprintf(stderr, "usage: loops [CALLS [TRIPS [BATCHES]]] | loops serve\n");
    return 2;
  }
  pin();
  setvbuf(stdout, NULL, _IOLBF, 0);
  int mode = -1, filters = -1;
  char line[256];
  FILE *f = fopen("/proc/self/status", "r");
  while (f && fgets(line, sizeof line, f)) {
    sscanf(line, "Seccomp: %d", &mode);
    sscanf(line, "Seccomp_filters: %d", &filters);
  }
  if (f) fclose(f);
  printf("# seccomp %d filters %d\n", mode, filters);
  partner();
  if (serve) {   /* one batch per line on stdin: "getppid K" or "pingpong K"; EOF ends */
    char name[32];
    long k;
    while (fgets(line, sizeof line, stdin)) {
      if (sscanf(line, "%31s %ld", name, &k) != 2 || k < 1) {
        fprintf(stderr, "loops serve: bad line: %s", line);
        return 2;
      }
      if (strcmp(name, "getppid") == 0) printf("%.3f\n", getppid_batch(k));
      else if (strcmp(name, "pingpong") == 0) printf("%.3f\n", pingpong_batch(k));
      else { fprintf(stderr, "loops serve: no such loop: %s\n", name); return 2; }
    }
    return finish();
  }
  double *v = malloc(batches * sizeof *v);
  getppid_batch(calls);
  for (int b = 0; b < batches; b++) v[b] = getppid_batch(calls);
  printf("getppid %.2f\n", median(v, batches));
  pingpong_batch(ntrips / 4 + 1);
  for (int b = 0; b < batches; b++) v[b] = pingpong_batch(ntrips);
  printf("pingpong %.2f\n", median(v, batches));
  return finish();
}
'''

SOURCES = {"wrap": C_WRAP, "loops": C_LOOPS}


def filters_for(n):
    """How many filters `wrap n` installs."""
    return 0 if n <= 0 else -(-n // PER_FILTER)


def build(cache_dir):
    """Compiles wrap and loops into cache_dir (once: again only if a source changed).
    Returns {"wrap": path, "loops": path}."""
    os.makedirs(cache_dir, exist_ok=True)
    paths = {}
    for name, text in SOURCES.items():
        src, exe = os.path.join(cache_dir, name + ".c"), os.path.join(cache_dir, name)
        try:
            with open(src) as f:
                same = f.read() == text
        except OSError:
            same = False
        if not same or not os.access(exe, os.X_OK):
            with open(src + ".tmp", "w") as f:
                f.write(text)
            os.replace(src + ".tmp", src)
            subprocess.run(["cc", "-O2", "-o", exe + ".tmp", src], check=True)
            os.replace(exe + ".tmp", exe)
        paths[name] = exe
    return paths


def c_loops(paths, n, calls=200000, trips=10000, batches=9):
    """Runs `wrap n loops`; returns {"getppid": ns per call, "pingpong": ns per round
    trip}. Fails if loops did not see the filters wrap should have installed."""
    cmd = [paths["wrap"], str(n), paths["loops"], str(calls), str(trips), str(batches)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stderr.strip()}")
    out, seen = {}, None
    for line in r.stdout.splitlines():
        w = line.split()
        if w[:2] == ["#", "seccomp"]:
            seen = (int(w[2]), int(w[4]))
        elif len(w) == 2:
            out[w[0]] = float(w[1])
    want = filters_for(n)
    if seen is None or seen[0] != (2 if want else 0) or seen[1] not in (want, -1):
        raise RuntimeError(f"{' '.join(cmd)}: loops saw seccomp mode/filters {seen}, "
                           f"expected {(2 if want else 0, want)}")
    return out


def counts_for(n):
    """Batch sizes for paired_ratio at size n: about 5 ms a batch on this VM in a slow
    state (getppid 600 ns, a round trip 10 us), shrinking as the filters grow."""
    return {"calls": max(500, int(10000 / (1 + n / 1000))),
            "trips": max(50, int(500 / (1 + n / 4000)))}


class Server:
    """`wrap n loops serve`: one process (and its ping-pong child) with n's filters,
    that runs a batch when asked and waits on its stdin otherwise."""

    def __init__(self, paths, n):
        self.cmd = [paths["wrap"], str(n), paths["loops"], "serve"]
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True, bufsize=1)
        head = self.p.stdout.readline().split()
        want = filters_for(n)
        if head[:2] != ["#", "seccomp"] or int(head[2]) != (2 if want else 0) \
                or int(head[4]) not in (want, -1):
            self.close()
            raise RuntimeError(f"{' '.join(self.cmd)}: saw {' '.join(head) or 'nothing'} "
                               f"({self.p.stderr.read().strip()}), expected seccomp "
                               f"{2 if want else 0} filters {want}")

    def batch(self, name, k):
        self.p.stdin.write(f"{name} {k}\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            raise RuntimeError(f"{' '.join(self.cmd)}: ended: {self.p.stderr.read().strip()}")
        return float(line)

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        if self.p.wait(timeout=30):
            raise RuntimeError(f"{' '.join(self.cmd)}: exit {self.p.returncode}: "
                               f"{self.p.stderr.read().strip()}")


def paired_ratio(paths, n, pairs=5, raw=None, quartets=15, calls=None, trips=None):
    """`pairs` pairs of processes, `wrap 0 loops serve` and `wrap n loops serve`,
    started one pair after another (which of the two starts first alternates pair by
    pair). Within a pair the two take turns batch by batch, in quartets without, with,
    with, without (a batch is a few milliseconds, so the machine's spells of speed,
    which last about a second here, fall on both alike), `quartets` quartets for
    getppid and then for pingpong after two warm-up quartets each. A pair's ratio is
    the median of its quartets' (with + with) / (without + without). Returns {name:
    [one ratio per pair]}. Batch sizes: counts_for(n) unless given. If raw is a list,
    each pair's ({name: median ns without}, {name: median ns with}) is appended."""
    k = {**counts_for(n), **{x: v for x, v in (("calls", calls), ("trips", trips)) if v}}
    sizes = {"getppid": k["calls"], "pingpong": k["trips"]}
    ratios = {name: [] for name in sizes}
    for i in range(pairs):
        servers = []
        try:
            for m in ((0, n) if i % 2 == 0 else (n, 0)):
                servers.append(Server(paths, m))
            base, cost = servers if i % 2 == 0 else servers[::-1]
            got = ({}, {})
            for name, size in sizes.items():
                qs, xs, ys = [], [], []
                for q in range(quartets + 2):
                    x1 = base.batch(name, size)
                    y1, y2 = cost.batch(name, size), cost.batch(name, size)
                    x2 = base.batch(name, size)
                    if q >= 2:
                        qs.append((y1 + y2) / (x1 + x2))
                        xs += [x1, x2]
                        ys += [y1, y2]
                ratios[name].append(statistics.median(qs))
                got[0][name], got[1][name] = statistics.median(xs), statistics.median(ys)
            if raw is not None:
                raw.append(got)
        finally:
            for s in servers:
                s.close()
    return ratios


def read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError as e:
        return f"? ({e.strerror})"


def cpu_seconds():
    """(busy CPU seconds of the whole machine from /proc/stat, CPU seconds of this
    process and its waited-for children): their difference over a stretch is what
    everything else on the machine used meanwhile."""
    with open("/proc/stat") as f:
        w = f.readline().split()
    busy = sum(int(x) for x in w[1:4] + w[6:9]) / os.sysconf("SC_CLK_TCK")
    mine = sum(r.ru_utime + r.ru_stime for r in (
        resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)))
    return busy, mine


def calibrate(sizes, pairs, quartets, cache):
    print(f"{time.strftime('%Y-%m-%d %H:%M:%S')}  kernel {os.uname().release}  "
          f"bpf_jit_enable {read('/proc/sys/net/core/bpf_jit_enable')}  "
          f"bpf_jit_harden {read('/proc/sys/net/core/bpf_jit_harden')}  "
          f"load {read('/proc/loadavg')}", flush=True)
    paths = build(cache)
    out = subprocess.run([paths["wrap"], "100", "grep", "^Seccomp", "/proc/self/status"],
                         capture_output=True, text=True, check=True).stdout.split()
    print(f"check: wrap 100 grep Seccomp /proc/self/status: {' '.join(out)}")
    print(f"{pairs} pairs of processes per size, {quartets} quartets each; ratio "
          f"with/without: median (min-max) of the pairs' ratios; the control's median ns; "
          f"s taken; CPU s others used meanwhile")
    print(f"{'N':>6} {'filt':>4}  {'getppid ratio':<24} {'pingpong ratio':<24} "
          f"{'ns getppid':>10} {'ns pingpong':>11} {'s':>5} {'others':>6}", flush=True)
    t_all, c_all = time.time(), cpu_seconds()
    for n in sizes:
        t0, raw, c0 = time.time(), [], cpu_seconds()
        r = paired_ratio(paths, n, pairs, raw, quartets)
        cells = []
        for k in ("getppid", "pingpong"):
            v = r[k]
            cells.append(f"{statistics.median(v):.4f} ({min(v):.4f}-{max(v):.4f})")
        b = {k: statistics.median(x[0][k] for x in raw) for k in ("getppid", "pingpong")}
        print(f"{n:>6} {filters_for(n):>4}  {cells[0]:<24} {cells[1]:<24} "
              f"{b['getppid']:>10.1f} {b['pingpong']:>11.1f} {time.time() - t0:>5.1f} "
              f"{others(c0, cpu_seconds()):>6.1f}", flush=True)
    print(f"{time.strftime('%H:%M:%S')}  {time.time() - t_all:.0f} s, others used "
          f"{others(c_all, cpu_seconds()):.1f} CPU s, load {read('/proc/loadavg')}")


def others(before, after):
    """CPU seconds used by everything but this process and its children between two
    cpu_seconds() readings."""
    return max(0.0, (after[0] - before[0]) - (after[1] - before[1]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calibrate", action="store_true", help="print paired ratios per size")
    ap.add_argument("--sizes", default="0,25,50,100,200,400,800,1600,4094,8188,16376",
                    help="comma-separated N values (cheap instructions per system call)")
    ap.add_argument("--pairs", type=int, default=7, help="pairs of processes per size")
    ap.add_argument("--quartets", type=int, default=15, help="quartets per pair and loop")
    ap.add_argument("--cache", help="build directory (default: a temporary one, removed)")
    a = ap.parse_args()
    if not a.calibrate:
        ap.error("nothing to do: pass --calibrate (or import this file as a module)")
    sizes = [int(s) for s in a.sizes.split(",") if s.strip()]
    if a.cache:
        calibrate(sizes, a.pairs, a.quartets, a.cache)
    else:
        with tempfile.TemporaryDirectory(prefix="syscost-kcost-") as tmp:
            calibrate(sizes, a.pairs, a.quartets, tmp)


if __name__ == "__main__":
    main()
