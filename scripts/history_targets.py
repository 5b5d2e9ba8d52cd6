#!/usr/bin/env python3
"""Checks issue 12's speed and size targets with the release build:

- `history` lists 1,000 saved runs in < 200 ms (the runs are imported copies of one
  full run's document without its samples, into a new history in a temporary
  directory);
- `compare` of two full runs in < 1 s;
- `report` of one full run in < 3 s, and an HTML file < 5 MB (when `report` exists).

    scripts/history_targets.py [--syscost target/release/syscost] [--db PATH]

`--db` names a history holding at least two full catalogue runs (`syscost run` with the
standard profile); without it, two are measured first (about three minutes) into a
temporary history. Every time is the median of five invocations. Nothing is left behind.
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time


def timed(cmd, env, reps=5):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--syscost", default="target/release/syscost")
    ap.add_argument("--db")
    a = ap.parse_args()
    exe = os.path.abspath(a.syscost)
    tmp = tempfile.mkdtemp(prefix="syscost-targets-")
    try:
        env = dict(os.environ)
        env.pop("SYSCOST_NO_SAVE", None)
        db = a.db or os.path.join(tmp, "full.db")
        if not a.db:
            for _ in range(2):
                subprocess.run([exe, "run", "--db", db], check=True, stdout=subprocess.DEVNULL)
        listed = json.loads(subprocess.run([exe, "history", "--db", db, "list", "--format", "json"],
                                           check=True, capture_output=True, text=True).stdout)
        if len(listed) < 2:
            sys.exit(f"{db} holds {len(listed)} run(s); two full runs are needed")
        b, a_id = str(listed[0]["id"]), str(listed[1]["id"])
        results = listed[0]["ok"] + listed[0]["skipped"] + listed[0]["failed"]
        t = timed([exe, "compare", a_id, b, "--db", db], env)
        print(f"compare of runs {a_id} and {b} ({results} results each): {t*1000:.0f} ms (target < 1000 ms)")

        help_text = subprocess.run([exe, "--help"], capture_output=True, text=True).stdout
        if "report" in help_text.split():
            html = os.path.join(tmp, "report.html")
            t = timed([exe, "report", b, "--db", db, "-o", html], env)
            size = os.path.getsize(html)
            print(f"report of run {b}: {t:.2f} s (target < 3 s), {size/1e6:.2f} MB (target < 5 MB)")

        one = os.path.join(tmp, "one.json")
        subprocess.run([exe, "history", "--db", db, "export", b, "-o", one], check=True)
        # The listing never reads documents; copies without samples keep the file small.
        doc = json.load(open(one))
        for r in doc["results"]:
            if r.get("measured"):
                r["measured"]["samples"] = None
        json.dump(doc, open(one, "w"))
        many = os.path.join(tmp, "many.db")
        for _ in range(10):
            subprocess.run([exe, "history", "--db", many, "import"] + [one] * 100, check=True,
                           stdout=subprocess.DEVNULL)
        t = timed([exe, "history", "--db", many], env)
        count = len(json.loads(subprocess.run([exe, "history", "--db", many, "list", "--format", "json"],
                                              check=True, capture_output=True, text=True).stdout))
        print(f"history of {count} runs: {t*1000:.0f} ms (target < 200 ms); "
              f"file {os.path.getsize(many)/1e6:.0f} MB")
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
