#!/usr/bin/env python3
"""perf bench and lmbench beside syscost: each mapped test run by its peer and by
`syscost run BENCH PARAMS --profile quick --no-save --format json`, alternating, back to
back, `--pairs` times; prints both medians per operation and their ratio against the
target (10%, 15% for cross-CPU and contended cases). A case's scale divides syscost's
figure where the peer prints a fraction of the same operation (lmbench's lat_sem and
lat_fcntl print half of their loop's operation); rows with rest_ms=100 (perf's 100 ms
sleep before each operation) run syscost's thorough profile, since one operation takes
100 ms.

lmbench is built from the fetched mirror (`fetch github:intel/lmbench`): its sources are
copied out with `git --git-dir=MIRROR archive` into a temporary directory and the
needed tests built with gcc and -ltirpc; its slow self-calibration is skipped with
ENOUGH, TIMING_O and LOOP_O in the environment. perf is Debian's linux-perf.

Run it alone on the machine if you can: it measures. Usage:
    scripts/peers_perf_lmbench.py [--pairs 3] [--only WORD ...] [--syscost PATH]
"""

import argparse
import glob
import json
import os
import re
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading

MIRROR = "/work/.mirror/intel+lmbench/repo"
LIBS = ["lib_timing", "lib_mem", "lib_stats", "lib_tcp", "lib_udp", "lib_unix",
        "lib_sched", "lib_debug", "getopt"]
LM_ENV = {"ENOUGH": "100000", "TIMING_O": "0", "LOOP_O": "0"}


def per_op_perf_usecs(out):
    m = re.search(r"([\d.]+) usecs/op", out)
    return float(m.group(1)) * 1e3 if m else None


def per_op_ops_sec(out):
    m = re.search(r"Averaged (\d+) operations/sec", out)
    return 1e9 / float(m.group(1)) if m else None


def per_op_ms(out):
    m = re.findall(r"in ([\d.]+) ms", out)
    return float(m[-1]) * 1e6 if m else None


def per_op_epoll_ctl(out):
    # Its worker sleeps (nanosleep of 250 ns, 50 µs and more with the timer slack)
    # after each pass over its fds' ADD, MOD and DEL: the wall-clock rate counts that
    # sleep, so the ops are divided into the threads' CPU time (run_peer's last line).
    ops = [float(x) for x in re.findall(r"Averaged (\d+) (?:ADD|MOD|DEL) operations", out)]
    m = re.search(r"^cpu-seconds ([\d.]+)$", out, re.M)
    return float(m.group(1)) * 1e9 / sum(ops) if ops and m else None


def per_round_messaging(loops):
    def parse(out):
        m = re.search(r"Total time: ([\d.]+)", out)
        return float(m.group(1)) * 1e9 / loops if m else None
    return parse


def lm_us(out):
    # "Simple syscall: 0.1815 microseconds", "Pipe latency: 4.5 microseconds",
    # "Fifo latency: ...", "Semaphore latency: ...", "select on 200 fd's: 3.1 ..."
    m = re.findall(r"([\d.]+) micro", out)
    return float(m[-1]) * 1e3 if m else None


def lm_fs(out):
    # "0k\t1000\t123456\t234567": size, files, creations/s, deletions/s
    m = re.search(r"^0k\s+\d+\s+(\d+)\s+(\d+)", out, re.M)
    return 1e9 / float(m.group(1)) if m else None


def lm_fs_delete(out):
    m = re.search(r"^0k\s+\d+\s+(\d+)\s+(\d+)", out, re.M)
    return 1e9 / float(m.group(2)) if m else None


def pin(cpus, cmd):
    return ["taskset", "-c", cpus] + cmd


# label, peer command (lmbench tests as "lm:NAME args"), parse, syscost bench, params,
# syscost per-op scale (its figure divided by this), tolerance.
CASES = [
    ("perf syscall basic", pin("0", ["perf", "bench", "syscall", "basic", "-l", "2000000"]),
     per_op_perf_usecs, "syscall.getppid", ["via=libc"], 1, 0.10),
    ("perf sched pipe (same cpu)", pin("0", ["perf", "bench", "sched", "pipe", "-l", "200000"]),
     per_op_perf_usecs, "ctx.pingpong", ["mechanism=pipe", "placement=same-cpu"], 1, 0.10),
    ("perf sched messaging -t", ["perf", "bench", "sched", "messaging", "-t", "-g", "1",
                                  "-l", "2000"],
     # perf streams its -l rounds (the threads never stop between them); so does a
     # batch of as many rounds. A shorter batch pays a start and a drain each: on
     # 2026-11-28, batches of 50 read 496-504 us, of 500 444-445, of 2000 405-407
     # against perf's 418-434 at -l 500 and 2000.
     per_round_messaging(2000), "ctx.messaging", ["groups=1", "--batch", "2000"], 1, 0.15),
    ("perf futex hash", pin("0", ["perf", "bench", "futex", "hash", "-t", "1", "-r", "2", "-s"]),
     per_op_ops_sec, "sync.futex.hash", [], 1, 0.10),
    # perf's futex wake, requeue and wake-parallel time one cold pass after a 100 ms
    # sleep (rest_ms=100), on waiters it spreads over every CPU (placement=free). Its
    # woken waiters exit: at -t 2 on two CPUs one wakes on the waker's own CPU and runs
    # to its exit inside perf's figure, which syscost does not time; so wake and
    # wake-parallel are compared at -t 1 with perf's waker on CPU 1 (its waiter goes to
    # CPU 0), syscost's waiter on the other CPU (placement=cross-cpu).
    ("perf futex wake -t 1, waker cpu 1", pin("1", ["perf", "bench", "-r", "30", "futex",
                                                    "wake", "-t", "1", "-s"]),
     per_op_ms, "sync.futex.wake", ["waiters=1", "placement=cross-cpu", "rest_ms=100"],
     1, 0.15),
    ("perf futex requeue -t 2", ["perf", "bench", "-r", "30", "futex", "requeue", "-t", "2",
                                 "-s"],
     per_op_ms, "sync.futex.requeue", ["waiters=2", "placement=free", "rest_ms=100"], 1, 0.15),
    ("perf futex requeue -t 64", ["perf", "bench", "-r", "30", "futex", "requeue", "-t", "64",
                                  "-s"],
     per_op_ms, "sync.futex.requeue", ["waiters=64", "placement=free", "rest_ms=100"], 1,
     0.15),
    ("perf futex wake-parallel -t 1 -w 1", pin("1", ["perf", "bench", "-r", "30", "futex",
                                                     "wake-parallel", "-t", "1", "-w", "1",
                                                     "-s"]),
     per_op_ms, "sync.futex.wake_parallel",
     ["waiters=1", "wakers=1", "placement=cross-cpu", "rest_ms=100"], 1, 0.15),
    ("perf futex lock-pi", ["perf", "bench", "futex", "lock-pi", "-t", "2", "-r", "2", "-s"],
     per_op_ops_sec, "sync.futex.lock_pi", ["threads=2", "hold_us=1"], 1, 0.15),
    # perf's worker sleeps after each pass over its fds; at -f 64 (a pass of 192 calls)
    # the sleep's own CPU time adds 70-80 ns a call (585 ns against 503 at -f 1024 on
    # 2026-11-28, where syscost reads the same at fds=64 and 1024), so the pass is
    # 3072 calls. perf's main thread waits beside the worker: the kernel takes a
    # reference on each descriptor looked up (process=multi-threaded).
    ("perf epoll ctl -f 1024", pin("0", ["perf", "bench", "epoll", "ctl", "-t", "1", "-r",
                                         "2", "-f", "1024"]),
     per_op_epoll_ctl, "svc.epoll.ctl", ["fds=1024", "process=multi-threaded"], 1, 0.10),
    ("lat_syscall null", pin("0", ["lm:lat_syscall", "null"]), lm_us,
     "syscall.getppid", ["via=libc"], 1, 0.10),
    # lat_proc fork times lmbench's own process: linked with -ltirpc (eleven libraries) a
    # fork read 261-279 us on 2026-11-29, with libc alone 157-168, a C fork/_exit/waitpid
    # loop 110-112 (docs/measurements/peers.md, "lmbench's lat_proc fork is its binary's").
    ("lat_proc fork", pin("0", ["lm:lat_proc", "fork"]), lm_us, "proc.fork", [], 1, 0.10),
    ("lat_pipe (same cpu)", pin("0", ["lm:lat_pipe"]), lm_us,
     "ipc.rtt", ["transport=pipe", "size=1", "placement=same-cpu"], 1, 0.10),
    ("lat_fifo (same cpu)", pin("0", ["lm:lat_fifo"]), lm_us,
     "ipc.fifo", ["placement=same-cpu"], 1, 0.10),
    # lat_sem prints its loop's time over 2n (half a round trip), lat_fcntl over 2n
    # (half of procA): syscost's figure, one round trip and one procA, is halved.
    ("lat_sem (same cpu)", pin("0", ["lm:lat_sem"]), lm_us,
     "ipc.sem", ["placement=same-cpu"], 2, 0.10),
    ("lat_fcntl (same cpu)", pin("0", ["lm:lat_fcntl"]), lm_us,
     "ipc.fcntl", ["placement=same-cpu"], 2, 0.10),
    ("lat_select -n 200 file", pin("0", ["lm:lat_select", "-n", "200", "file"]), lm_us,
     "syscall.select", ["n=200"], 1, 0.10),
    # lat_unix_connect's server is a process of its own that reads each connection to
    # its end of file, left unpinned: on two CPUs it runs on the other one (server on
    # CPU 1: 6.7-7.0 us, unpinned 7.3, on the client's CPU 11.6-11.9 on 2026-11-28), so
    # its server is pinned to CPU 1 and compared with the accepting thread on another CPU.
    ("lat_unix_connect, server cpu 1", pin("0", ["lm:lat_unix_connect"]), lm_us,
     "ipc.connect", ["transport=unix", "placement=cross-cpu"], 1, 0.15),
    # lat_connect's client closes first and never waits for its server: a server on the
    # client's CPU runs only when the client is preempted, its listen queue of 100
    # overflows and the dropped SYNs come back after 1 s (3.75-3.9 ms a connection, 121-174
    # overflows a run, on 2026-11-28; 29.5-29.8 us with the server on CPU 1). So its
    # server is pinned to CPU 1. syscost's client waits for the server's close (not the
    # same operation: docs/benchmarks.md).
    ("lat_connect, server cpu 1", pin("0", ["lm:lat_connect", "127.0.0.1"]), lm_us,
     "ipc.connect", ["transport=tcp", "placement=same-cpu"], 1, 0.10),
    ("lat_usleep -u usleep 10", pin("0", ["lm:lat_usleep", "-u", "usleep", "10"]), lm_us,
     "svc.usleep", ["method=usleep", "us=10"], 1, 0.10),
    ("lat_usleep -u select 10", pin("0", ["lm:lat_usleep", "-u", "select", "10"]), lm_us,
     "svc.usleep", ["method=select", "us=10"], 1, 0.10),
    # lat_usleep's itimer loop is a periodic timer that its handler re-arms while the
    # process waits in a long nanosleep, timed from signal to signal (itimer-periodic);
    # method=itimer is one one-shot timer waited for in sigsuspend.
    ("lat_usleep -u itimer 10", pin("0", ["lm:lat_usleep", "-u", "itimer", "10"]), lm_us,
     "svc.usleep", ["method=itimer-periodic", "us=10"], 1, 0.10),
    # On tmpfs: on this VM's ext4 a creation costs 6 µs to 200 µs by the block group
    # its directory lands in (the inode allocator's search), from one run to the next.
    # lat_fs makes and deletes its whole pass at once (its N files, printed beside the
    # size, in directories of 100, the last made first): files=N, N the peer's pass.
    ("lat_fs 0k create (tmpfs)", pin("0", ["lm:lat_fs", "-s", "0", "SHMDIR"]), lm_fs,
     "file.create", ["size=0", "files=PEER_N", "--dir", "/dev/shm"], 1, 0.10),
    ("lat_fs 0k delete (tmpfs)", pin("0", ["lm:lat_fs", "-s", "0", "SHMDIR"]), lm_fs_delete,
     "file.delete", ["size=0", "files=PEER_N", "--dir", "/dev/shm"], 1, 0.10),
]

# lmbench tests with a server to start first (-s) and stop after (-S or -HOST), and the
# CPUs its server is pinned to (None: unpinned).
SERVERS = {"lat_connect": (["-s"], ["-S", "127.0.0.1"], "1"),
           "lat_unix_connect": (["-s"], ["-S"], "1")}


def build_lmbench(work):
    src = os.path.join(work, "lmbench")
    os.makedirs(src, exist_ok=True)
    if not os.path.isdir(MIRROR):
        sys.exit(f"no lmbench mirror at {MIRROR}: fetch github:intel/lmbench first")
    arch = subprocess.run(["git", "--git-dir", MIRROR, "archive", "HEAD", "src"],
                          check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", src], input=arch, check=True)
    s = os.path.join(src, "src")
    names = {c[1][c[1].index(next(x for x in c[1] if x.startswith("lm:")))][3:]
             for c in CASES if any(x.startswith("lm:") for x in c[1])}
    bins = {}
    for n in sorted(names):
        out = os.path.join(work, n)
        cmd = ["gcc", "-O", "-w", "-DHAVE_uint=1", "-DHAVE_int64_t=1", "-DHAVE_DRAND48",
               "-I/usr/include/tirpc", "-o", out, os.path.join(s, n + ".c")]
        cmd += [os.path.join(s, lib + ".c") for lib in LIBS] + ["-ltirpc", "-lm"]
        subprocess.run(cmd, check=True, capture_output=True)
        bins[n] = out
    return bins


def run_peer(cmd, bins, work):
    env = dict(os.environ, **LM_ENV)
    real, server, shm = [], None, []
    for x in cmd:
        if x.startswith("lm:"):
            server = x[3:]
            x = bins[server]
        if x == "SHMDIR":
            x = tempfile.mkdtemp(prefix="syscost-peers-", dir="/dev/shm")
            shm.append(x)
        real.append(work if x == "DIR" else x)
    started = None
    if server in SERVERS:
        up, _, cpus = SERVERS[server]
        start = [bins[server]] + up
        started = subprocess.Popen(pin(cpus, start) if cpus else start, env=env, cwd=work)
        subprocess.run(["sleep", "0.3"])
    # Its own session: whatever it forks and leaves behind (lat_fifo's children, on a
    # timeout) is killed with the group we made.
    p = subprocess.Popen(real, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         env=env, cwd=work, start_new_session=True)
    try:
        return communicate(p, server)
    finally:
        for d in shm:
            shutil.rmtree(d, ignore_errors=True)
        stop_server(server, started, bins, env, work)


def communicate(p, server):
    """The peer's output, with its CPU time (its threads' and reaped children's) as a
    last line `cpu-seconds S`; "" when it ran past its time."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    fifos = set(glob.glob("/tmp/lmbench_f[12].*"))
    try:
        if server == "lat_fifo":
            out = until_exit(p, 120)
        else:
            out, _ = p.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        return ""
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait()
        # What lmbench made in /tmp and did not remove (a run stopped before its
        # cleanup): FIFOs named after a process that is gone, never another's.
        for f in set(glob.glob("/tmp/lmbench_f[12].*")) - fifos:
            if not os.path.exists(f"/proc/{f.rsplit('.', 1)[1]}"):
                try:
                    os.unlink(f)
                except FileNotFoundError:
                    pass
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return f"{out}\ncpu-seconds {cpu:.6f}\n"


def until_exit(p, timeout):
    """lat_fifo's output once its own process has exited. Its writer child never ends:
    at cleanup it gets SIGTERM, which the handler it inherits from lmbench's benchmp only
    notes, and it loops on the closed FIFO printing "(w) read/write on pipe" with the
    output still open, so the output never reaches its end; lmbench's parent prints the
    figure when it exits (after a 5 s alarm ends the child that waits for the writer),
    about 20 s in on 2026-11-29. The error lines are read and dropped as they come (a
    full pipe would stop the parent's last line); the caller kills the writer."""
    kept = []

    def read():
        for line in p.stdout:
            if not line.startswith("(w) read/write on pipe"):
                kept.append(line)
    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    p.wait(timeout=timeout)
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass  # the writer ended with its parent: nothing left in the group
    reader.join(timeout=10)
    return "".join(kept)


def stop_server(server, started, bins, env, work):
    if started is not None:
        _, down, _ = SERVERS[server]
        subprocess.run([bins[server]] + down, env=env, cwd=work, capture_output=True,
                       timeout=30)
        try:
            started.wait(timeout=5)
        except subprocess.TimeoutExpired:
            started.kill()
            started.wait()


def run_syscost(exe, bench, params):
    # One operation per 100 ms: the quick profile's rounds would hold one sample each.
    profile = "thorough" if "rest_ms=100" in params else "quick"
    p = subprocess.run([exe, "run", bench] + params + ["--profile", profile, "--no-save",
                                                       "--format", "json"],
                       capture_output=True, text=True, timeout=600)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return None
    for r in doc.get("results", []):
        if r.get("measured"):
            return r["measured"]["median_ns"]
    return None


def fmt(ns):
    if ns is None:
        return "—"
    if ns >= 1e6:
        return f"{ns / 1e6:.3f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pairs", type=int, default=3)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--syscost", default=os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "target", "release", "syscost"))
    a = ap.parse_args()
    cases = [c for c in CASES if not a.only or any(w in c[0] for w in a.only)]
    work = tempfile.mkdtemp(prefix="syscost-peers-")
    try:
        bins = build_lmbench(work)
        print(f"{'peer test':32} {'peer':>11} {'syscost':>11} {'ratio':>7}  target  within")
        for label, cmd, parse, bench, params, scale, tol in cases:
            peer, ours = [], []
            for _ in range(a.pairs):
                out = run_peer(cmd, bins, work)
                v = parse(out)
                if v is not None:
                    peer.append(v)
                # PEER_N: the files of the peer's pass (lat_fs prints them after the size).
                n = re.search(r"^0k\s+(\d+)", out, re.M)
                if any("PEER_N" in x for x in params) and not n:
                    continue
                s = run_syscost(a.syscost, bench,
                                [x.replace("PEER_N", n.group(1)) if n else x for x in params])
                if s is not None:
                    ours.append(s / scale)
            pm = statistics.median(peer) if peer else None
            sm = statistics.median(ours) if ours else None
            ratio = sm / pm if pm and sm else None
            ok = "yes" if ratio and abs(ratio - 1) <= tol else ("—" if ratio is None else "no")
            rs = f"{ratio:.2f}" if ratio else "—"
            print(f"{label:32} {fmt(pm):>11} {fmt(sm):>11} {rs:>7}  ±{tol:.0%}    {ok}",
                  flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
