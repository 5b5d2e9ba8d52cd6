#!/usr/bin/env python3
"""Runs syscost's generated-input tests (src/fuzz_tests.rs) at scale.

Every parser and reader of the tool (benchmark filters and --param, byte sizes, run
references, results documents, host facts, trace files) gets generated inputs; none
may panic or hang. The test binary is built in release mode; the count per target is
chosen so that the total reaches --total (default one million), and the script sums
the counts the targets print and fails if any target failed.

    scripts/fuzz.py [--total N] [--seed S]
"""
import argparse
import os
import re
import tempfile
import subprocess
import sys
import time

TARGETS_EQUIVALENT = 8.2  # eight targets at N inputs, one at N/5


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--total", type=int, default=1_000_000)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    args = ap.parse_args()
    per = int(args.total / TARGETS_EQUIVALENT) + 1
    env = dict(os.environ, SYSCOST_FUZZ_INPUTS=str(per), SYSCOST_FUZZ_SEED=str(args.seed))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    cmd = ["cargo", "test", "--release", "--lib", "fuzz_tests", "--", "--nocapture",
           "--test-threads", "2"]
    print(f"seed {args.seed}, {per} inputs per target: {' '.join(cmd)}", flush=True)
    # Build first, so that the memory and time measured are the tests', not the build's.
    subprocess.run(cmd[:5] + ["--no-run"], cwd=root, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        child = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(child.pid, 0)
        took = time.time() - t0
        out.seek(0)
        err.seek(0)
        p = subprocess.CompletedProcess(cmd, os.waitstatus_to_exitcode(status), out.read(), err.read())
    total = 0
    for line in p.stdout.splitlines():
        m = re.match(r"fuzz (.*): (\d+) inputs in (.*)", line)
        if m:
            total += int(m.group(2))
            print(f"  {m.group(1)}: {m.group(2)} inputs in {m.group(3)}")
    # The largest resident set of the test run (cargo and the test binary), KiB → MiB.
    rss = usage.ru_maxrss / 1024
    ok = p.returncode == 0 and re.search(r"test result: ok\. 6 passed", p.stdout)
    print(f"{total} inputs in all, {took:.0f} s, peak RSS {rss:.0f} MiB: "
          f"{'no panic, no hang' if ok else 'FAILED'}")
    if not ok:
        sys.stdout.write(p.stdout[-4000:])
        sys.stderr.write(p.stderr[-4000:])
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
