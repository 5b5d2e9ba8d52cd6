#!/usr/bin/env python3
"""Measures `syscost trace reduce` on a large synthetic trace: MB/s and peak memory.

Builds the release binaries, writes a trace of --size MB (default 1024) with
trace/examples/synth.rs in the temporary directory, reduces it with culling, prints
the reduction's speed and maximum resident set size, and removes the file.

    scripts/trace_reduce_speed.py [--size MB] [--keep]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run(["cargo", "build", "--release", "-q"], cwd=root, check=True)
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "syscost-trace", "--example", "synth"],
                   cwd=root, check=True)
    path = os.path.join(tempfile.gettempdir(), f"syscost-reduce-speed-{os.getpid()}.trace")
    try:
        subprocess.run([os.path.join(root, "target/release/examples/synth"), str(args.size), path],
                       check=True)
        size = os.path.getsize(path)
        # Read once so that the timed pass reads the page cache, as a second look would.
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
        # The plain loop beside it: reading the same file from the page cache, nothing else.
        t0 = time.time()
        with open(path, "rb") as f:
            while f.read(1 << 24):
                pass
        plain = size / 1e6 / (time.time() - t0)
        cmd = [os.path.join(root, "target/release/syscost"), "trace", "reduce", path,
               "--spec", "interval call = begin -> end", "--format", "json"]
        t0 = time.time()
        out_path = path + ".json"
        with open(out_path, "w") as out:
            p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE)
            _, status, usage = os.wait4(p.pid, 0)
        took = time.time() - t0
        if status != 0:
            sys.stderr.write(p.stderr.read().decode())
            return 1
        rss = usage.ru_maxrss / 1024  # this child alone, KiB -> MiB
        import json
        with open(out_path) as f:
            r = json.load(f)
        os.remove(out_path)
        k = r["intervals"][0]
        print(f"{size / 1e6:.0f} MB, {r['user_events']} events, {k['all']['n']} intervals "
              f"({k['culled']} culled) reduced in {took:.2f} s: {size / 1e6 / took:.0f} MB/s, "
              f"peak RSS {rss:.0f} MiB; a plain read of the file: {plain:.0f} MB/s")
    finally:
        if not args.keep and os.path.exists(path):
            os.remove(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
