#!/usr/bin/env python3
"""The PostgreSQL history and `syscost fleet` targets of issue 25, rerunnable.

Makes a PostgreSQL cluster of its own in a temporary directory (initdb as the postgres
user when run as root; a private unix socket and a free loopback port), then:

  writers  8 concurrent writers x 25 runs each (one `syscost history import` process per
           run, as hosts save, each a new connection) into one history: counts lost,
           duplicated and failed saves, by a unique (host, start time) per run.
  save     the time of one save of a whole catalogue document (the save alone, as
           `history import` reports it, and the whole import command), median of N, and
           the database size per run (tables and indexes, after N + 1 saves), PostgreSQL
           beside SQLite.
  fleet    20 quick getpid runs of this machine imported under 20 host names: `syscost
           fleet` flags none; the same with one host's figures made 30% slower: it flags
           that host and no other.

The cluster is stopped and its directory removed at the end, on an error or Ctrl-C.

usage: scripts/pg_fleet.py [--syscost PATH] [--catalogue DOC.json] [--saves N]
                           [--fleet-runs DIR] [--only writers,save,fleet]
  --catalogue  a whole-catalogue results document (default: measured now with
               `syscost run --profile quick --no-save --format json`)
  --fleet-runs a directory of 20 getpid documents to reuse (default: measured now)
"""

import argparse
import concurrent.futures
import glob
import json
import os
import pwd
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pg_bin():
    for d in sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2])):
        last = d
    try:
        return last
    except NameError:
        sys.exit("no PostgreSQL server in /usr/lib/postgresql/*/bin: apt-get install postgresql")


class Cluster:
    def __init__(self):
        self.bin = pg_bin()
        self.root = os.geteuid() == 0
        self.dir = tempfile.mkdtemp(prefix="syscost-pgfleet")
        self.data = os.path.join(self.dir, "data")
        self.started = False
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        if self.root:
            pw = pwd.getpwnam("postgres")
            os.chown(self.dir, pw.pw_uid, pw.pw_gid)

    def pg(self, *args):
        cmd = [os.path.join(self.bin, args[0]), *args[1:]]
        if self.root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        subprocess.run(cmd, check=True, cwd=self.dir, stdout=subprocess.DEVNULL)

    def start(self):
        self.pg("initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8",
                "--no-instructions")
        opts = (f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 "
                "-c max_connections=100")
        self.started = True
        self.pg("pg_ctl", "-D", self.data, "-l", os.path.join(self.dir, "log"), "-o", opts,
                "-w", "-t", "60", "start")

    def url(self, db):
        return f"postgres://postgres@127.0.0.1:{self.port}/{db}"

    def psql(self, db, sql):
        out = subprocess.run(["psql", "-h", self.dir, "-p", str(self.port), "-U", "postgres",
                              "-d", db, "-At", "-c", sql], check=True, capture_output=True,
                             text=True)
        return out.stdout.strip()

    def create_db(self, db):
        self.psql("postgres", f"CREATE DATABASE {db}")

    def stop(self):
        if self.started and os.path.exists(os.path.join(self.data, "postmaster.pid")):
            try:
                self.pg("pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop")
            except subprocess.CalledProcessError:
                pass
        shutil.rmtree(self.dir, ignore_errors=True)


def syscost(exe, *args, env=None, check=True):
    e = dict(os.environ, SYSCOST_NO_SAVE="", **(env or {}))
    e.pop("SYSCOST_DB", None)
    return subprocess.run([exe, *args], capture_output=True, text=True, env=e, check=check)


def writers(exe, cluster, work, doc):
    cluster.create_db("writers")
    url = cluster.url("writers")
    base = json.load(open(doc))
    files = []
    for w in range(8):
        for j in range(25):
            d = dict(base, host=dict(base["host"], hostname=f"writer-{w}"),
                     started_unix_s=1.8e9 + w * 1000 + j)
            path = os.path.join(work, f"w{w}-{j}.json")
            json.dump(d, open(path, "w"))
            files.append((w, path))
    # Make the history first, as a fleet's first run would.
    syscost(exe, "history", "import", "--db", url, files[0][1])

    def writer(w):
        errors = 0
        for _, path in [f for f in files if f[0] == w and f[1] != files[0][1]]:
            r = syscost(exe, "history", "import", "--db", url, path, check=False)
            if r.returncode != 0:
                errors += 1
                print(f"  writer {w}: {r.stderr.strip()}")
        return errors

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(8) as ex:
        errors = sum(ex.map(writer, range(8)))
    wall = time.monotonic() - t0
    rows = json.loads(syscost(exe, "history", "--db", url, "--format", "json").stdout)
    seen = [(e["hostname"], e["started_unix_s"]) for e in rows]
    expected = {(f"writer-{w}", 1.8e9 + w * 1000 + j) for w in range(8) for j in range(25)}
    lost = len(expected - set(seen))
    dup = len(seen) - len(set(seen))
    print(f"writers: 8 x 25 saves in {wall:.1f} s wall: {len(rows)} runs in the history, "
          f"{lost} lost, {dup} duplicated, {errors} errors")
    return lost == 0 and dup == 0 and errors == 0 and len(rows) == 200


def save_time(exe, cluster, work, doc, n):
    results = len(json.load(open(doc))["results"])
    size_kb = os.path.getsize(doc) / 1024
    print(f"save: document {doc}: {results} results, {size_kb:.0f} KiB of JSON")
    cluster.create_db("saves")
    stores = [("postgres", cluster.url("saves")), ("sqlite", os.path.join(work, "h.db"))]
    for name, db in stores:
        syscost(exe, "history", "import", "--db", db, doc)  # makes the history
        times, saves, txs = [], [], []
        for _ in range(n):
            t0 = time.monotonic()
            out = syscost(exe, "history", "import", "--db", db, doc).stdout
            times.append(time.monotonic() - t0)
            # "imported F as run N (saved in T ms, X ms of it the transaction)"
            saves.append(float(out.rsplit("saved in ", 1)[1].split()[0]) / 1000)
            txs.append(float(out.rsplit("ms, ", 1)[1].split()[0]) / 1000)
        if name == "postgres":
            size = int(cluster.psql("saves", "SELECT pg_total_relation_size('runs') + "
                                    "pg_total_relation_size('documents') + "
                                    "pg_total_relation_size('results')"))
        else:
            size = os.path.getsize(db) + sum(os.path.getsize(p) for p in glob.glob(db + "-*"))
        ms = lambda xs: (f"median {statistics.median(xs) * 1000:.0f} ms (min "
                         f"{min(xs) * 1000:.0f}, max {max(xs) * 1000:.0f})")
        print(f"save [{name}]: one save (compress + one transaction) {ms(saves)}; the whole "
              f"`history import` (start, read and parse the file, connect, save, exit) "
              f"{ms(times)}; over {n} saves")
        print(f"save [{name}]: of a save, the transaction (rows written and committed) "
              f"{ms(txs)}")
        print(f"size [{name}]: {size / 1024:.0f} KiB for {n + 1} runs = "
              f"{size / 1024 / (n + 1):.0f} KiB per run (tables and indexes)")


def fleet(exe, cluster, work, runs_dir):
    if runs_dir is None:
        runs_dir = os.path.join(work, "getpid")
        os.makedirs(runs_dir)
        print("fleet: measuring 20 quick getpid runs of this machine ...")
        for i in range(20):
            syscost(exe, "run", "--profile", "quick", "syscall.getpid", "--no-save",
                    "--format", "json", "-o", os.path.join(runs_dir, f"run{i:02}.json"))
    runs = sorted(glob.glob(os.path.join(runs_dir, "*.json")))[:20]
    ok = True
    for case, doctored in [("unchanged", None), ("one_slower", 7)]:
        cluster.create_db(case)
        url = cluster.url(case)
        paths = []
        for i, path in enumerate(runs):
            d = json.load(open(path))
            d["host"]["hostname"] = f"node-{i:02}"
            if i == doctored:
                for r in d["results"]:
                    m = r.get("measured")
                    if r["name"] == "syscall.getpid" and m:
                        for k in ("median_ns", "ci_low_ns", "ci_high_ns"):
                            m[k] *= 1.3
            p = os.path.join(work, f"{case}-{i}.json")
            json.dump(d, open(p, "w"))
            paths.append(p)
        syscost(exe, "history", "import", "--db", url, *paths)
        f = json.loads(syscost(exe, "fleet", "syscall.getpid", "--db", url,
                               "--format", "json").stdout)
        cell = f["rows"][0]["cells"][0]
        odd = [h["host"] for h in cell["hosts"] if h["odd"]]
        s = cell["spread"]
        print(f"fleet [{case}]: {len(f['groups'])} group(s), {len(cell['hosts'])} hosts, "
              f"median {s['median_ns']:.1f} ns, spread {s['spread_ns']:.2f} ns, band "
              f"±{s['band_ns']:.1f} ns; odd: {odd or 'none'}")
        want = [] if doctored is None else [f"node-{doctored:02}"]
        ok &= odd == want
        if case == "one_slower":
            print(syscost(exe, "fleet", "syscall.getpid", "--db", url).stdout)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--syscost", default=None)
    ap.add_argument("--catalogue", default=None)
    ap.add_argument("--saves", type=int, default=10)
    ap.add_argument("--fleet-runs", default=None)
    ap.add_argument("--only", default="writers,save,fleet")
    a = ap.parse_args()
    exe = a.syscost or next((p for p in (os.path.join(ROOT, "target/release/syscost"),
                                          os.path.join(ROOT, "target/debug/syscost"))
                             if os.path.exists(p)), None)
    if exe is None:
        sys.exit("build syscost first (cargo build --release), or give --syscost PATH")
    print(f"syscost: {exe}")
    only = a.only.split(",")
    cluster = Cluster()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    work = tempfile.mkdtemp(prefix="syscost-pgfleet-work")
    good = True
    try:
        cluster.start()
        fixture = os.path.join(ROOT, "tests/fixtures/report-smoke.json")
        if "writers" in only:
            good &= writers(exe, cluster, work, fixture)
        if "save" in only:
            doc = a.catalogue
            if doc is None:
                doc = os.path.join(work, "catalogue.json")
                print("save: measuring the whole catalogue with --profile quick ...")
                syscost(exe, "run", "--profile", "quick", "--no-save", "--format", "json",
                        "-o", doc)
            save_time(exe, cluster, work, doc, a.saves)
        if "fleet" in only:
            good &= fleet(exe, cluster, work, a.fleet_runs)
    finally:
        cluster.stop()
        shutil.rmtree(work, ignore_errors=True)
    print("targets met" if good else "TARGETS NOT MET")
    sys.exit(0 if good else 1)


if __name__ == "__main__":
    main()
