#!/usr/bin/env python3
"""Runs syscost's fault-injection test (tests/fault_injection.rs) at scale.

Each trial starts `syscost run` on one family (or `repro perez1976`), sends SIGINT,
SIGTERM, SIGHUP or SIGKILL at a random moment, and checks that nothing of the run
remains (processes, temporary files, POSIX and System V IPC objects, mounts), that the
-o document is valid, and that the exit code follows the shell's convention.

    scripts/faults.py [--trials N] [--seed S]
"""
import argparse
import os
import re
import subprocess
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=500)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, SYSCOST_FAULT_TRIALS=str(args.trials),
               SYSCOST_FAULT_SEED=str(args.seed))
    cmd = ["cargo", "test", "--release", "--test", "fault_injection", "--", "--nocapture"]
    print(f"seed {args.seed}, {args.trials} trials: {' '.join(cmd)}", flush=True)
    t0 = time.time()
    p = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True)
    summary = [l for l in p.stdout.splitlines() if l.startswith("faults:")]
    print(summary[0] if summary else "no summary line")
    print(f"{time.time() - t0:.0f} s (build included)")
    if p.returncode != 0 or not re.search(r"test result: ok", p.stdout):
        sys.stdout.write(p.stdout[-6000:])
        sys.stderr.write(p.stderr[-3000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
