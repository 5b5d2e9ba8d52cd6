#!/usr/bin/env python3
"""Checks issue 22's targets for a syscost binary: isolation (a benchmark's figure in the
whole catalogue against its family measured alone), memory, speed and exit status.

    scripts/isolation.py [BINARY] [--profile standard] [--families a,b] [--skip-speed]
                         [--skip-memory] [--repeat-exit N] [--keep DIR] [--quick]
                         [--history N]

BINARY defaults to ./target/release/syscost. In order, in the same minutes:

1. The whole catalogue (or --families), `syscost run --profile P --format json -o A.json
   --no-save`, under `/usr/bin/time -f %M`: its wall time, exit status, the peak resident
   size that time reports (ru_maxrss of wait4: the largest single process of the tree,
   parent or any descendant), and the syscost parent's own peak (VmHWM in
   /proc/PID/status, read every 0.1 s while it runs: the last reading, so growth in its
   final 0.1 s is missed).
2. Each family present in A alone (`syscost run FAMILY ...`), wall time each.
3. For every result measured in both (matched by name and parameters): the ratio
   whole/alone, and whether the whole run's median lies within the alone run's 95%
   interval as printed (with --widen F, widened to at least +-F of the alone median, as
   issue 22 had it with 0.10). Target: at least 95% of the rows, and every row of proc.*, mem.*, syscall.* and ctx.* whose placement is not
   `free` (each listed with its verdict). Beside each miss, the ratio of the getpid
   canary read before the result's rounds, whole/alone: a miss whose canary moved as
   much is the machine changing speed, not the run's neighbours. The same count with
   the whole run's figure brought to the alone run's machine speed (times the ratio of
   the two rows' canaries, alone/whole) says how many misses that speed explains; it is
   not a figure syscost prints. Then
   `syscost run proc.fork svc` and
   `syscost run proc.fork`: proc.fork within 15%. Beside each miss, the round states
   (levels of the round medians, with their shares) of the two runs.
3b. The control, unless --no-control: each family with a miss is measured alone once
   more, and each miss says whether the second alone run lies within the first's
   widened interval. A miss that also misses between two alone runs of its family is
   a figure that moves from run to run (the machine's state, or the run's own, such as
   where its scratch file landed), not one that its neighbours move. The control
   changes no verdict: it says which kind of miss each one is. Over every row of those
   families it also counts how often the second alone run falls outside the first
   (the family against itself, minutes later) beside how often the whole run does.
4. Unless --skip-speed: the whole catalogue's wall time with --profile quick (<= 20 s)
   and standard (<= 120 s; the run of step 1 when P is standard). Unless --skip-memory:
   `/usr/bin/time -f %M syscost run svc` (<= 60 MB). `syscost run trace.event --load 1`
   must exit 0, and with --repeat-exit N the README's main command (`syscost run`, saved
   to a fresh history in a temporary directory) N more times, each must exit 0.

--reanalyse DIR measures nothing and prints step 3 (and 3b, if its documents are there)
again from the documents that --keep DIR kept. --quick tests the script itself: quick profile, families syscall,proc, no speed runs,
the svc memory run on svc.ef only; its verdicts are marked as a subset. Runs are never
saved to the user's history. With --history N, steps 1-3b are saved to a fresh history
in the work directory, seeded first with N runs of syscall.getpid: the intervals of a
user whose machine has a history, where what the machine allows each kind of work
counts its movement between runs (docs/method.md section 6). The machine should be
quiet: every figure here is a time.
"""
import argparse
import datetime
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TIME = "/usr/bin/time"
WIDEN = 0.0  # the interval as printed (--widen F widens it to at least +-F of the median)
ISOLATION_SHARE = 0.95
PAIR_TOLERANCE = 0.15
STRICT_FAMILIES = ("proc", "mem", "syscall", "ctx")
QUICK_WALL_S, STANDARD_WALL_S = 20.0, 120.0
PARENT_MB, SVC_MB = 30.0, 60.0


class Outcome:
    """One invocation: wall time, exit status, peak sizes (KiB) and its document."""

    def __init__(self, cmd):
        self.cmd = cmd
        self.wall_s = math.nan
        self.exit = None
        self.tree_kib = None  # time's %M: the largest process of the tree
        self.parent_kib = None  # the syscost process's own VmHWM, polled
        self.doc = None
        self.stderr_tail = ""

    def why(self):
        """Its failed results with their reasons, else the last line of its standard
        error that names a failure, else that error's last line."""
        failed = [f"{r['name']} failed: {r.get('reason')}"
                  for r in (self.doc or {}).get("results", []) if r.get("status") == "failed"]
        if failed:
            return "; ".join(failed)[:300]
        lines = self.stderr_tail.splitlines()
        named = [x for x in lines if "FAILED" in x or "error" in x.lower()]
        return (named or lines or [""])[-1].strip()[:200]


def vm_hwm_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def child_of(pid):
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            kids = f.read().split()
        return int(kids[0]) if kids else None
    except (OSError, ValueError):
        return None


def invoke(binary, args, workdir, tag, json_out=True, env=None):
    """Runs `binary args` under /usr/bin/time (when present) and measures it."""
    out = Outcome([os.path.basename(binary), *args])
    doc_path = os.path.join(workdir, f"{tag}.json")
    cmd = [binary, *args]
    if json_out:
        cmd += ["--format", "json", "-o", doc_path]
    time_path = os.path.join(workdir, f"{tag}.time")
    timed = os.access(TIME, os.X_OK)
    full = [TIME, "-f", "%M", "-o", time_path, *cmd] if timed else cmd
    err_path = os.path.join(workdir, f"{tag}.err")
    peak = [None]
    with open(err_path, "w") as err:
        t0 = time.monotonic()
        p = subprocess.Popen(full, stdout=subprocess.DEVNULL, stderr=err, env=env)
        done = threading.Event()

        def poll():
            target = None
            while not done.is_set():
                if target is None:
                    target = child_of(p.pid) if timed else p.pid
                if target is not None:
                    v = vm_hwm_kib(target)
                    if v is not None:
                        peak[0] = v
                done.wait(0.1 if target is not None else 0.005)

        poller = threading.Thread(target=poll, daemon=True)
        poller.start()
        _, status, usage = os.wait4(p.pid, 0)
        out.wall_s = time.monotonic() - t0
        done.set()
        poller.join()
        p.returncode = os.waitstatus_to_exitcode(status)
    out.exit = p.returncode
    out.parent_kib = peak[0]
    out.tree_kib = usage.ru_maxrss
    if timed:
        try:
            lines = open(time_path).read().split()
            out.tree_kib = int(lines[-1])
        except (OSError, ValueError, IndexError):
            pass
    out.stderr_tail = open(err_path, errors="replace").read().strip()[-4000:]
    if json_out:
        try:
            with open(doc_path) as f:
                out.doc = json.load(f)
        except (OSError, ValueError) as e:
            out.stderr_tail += f" [no document: {e}]"
    return out


def key(r):
    params = " ".join(f"{k}={v}" for k, v in sorted((r.get("params") or {}).items()))
    return f"{r['name']} {params}".strip()


def measured(doc):
    """name+params -> the result, for every result measured (status ok)."""
    got = {}
    for r in (doc or {}).get("results", []):
        m = r.get("measured") or {}
        if r.get("status") == "ok" and m.get("median_ns") is not None:
            got[key(r)] = r
    return got


def statuses(doc):
    return {key(r): (r.get("status"), r.get("reason")) for r in (doc or {}).get("results", [])}


def within(whole_r, alone_r):
    """(ratio whole/alone, within the widened interval, the interval)."""
    w = whole_r["measured"]["median_ns"]
    m = alone_r["measured"]
    a = m["median_ns"]
    lo = min(x for x in (m.get("ci_low_ns"), a * (1 - WIDEN)) if x is not None)
    hi = max(x for x in (m.get("ci_high_ns"), a * (1 + WIDEN)) if x is not None)
    return (w / a if a else math.inf), lo <= w <= hi, (lo, hi)


def within_scaled(r, alone_r, factor):
    """Whether r's median times `factor` lies within alone_r's interval as printed."""
    m, a = r["measured"], alone_r["measured"]
    return a["ci_low_ns"] <= m["median_ns"] * factor <= a["ci_high_ns"]


def canary_ns(r):
    """The mean of the getpid canary read before each of the result's rounds: the
    machine's speed while it was measured, averaged as the headline averages rounds."""
    rounds = ((r.get("measured") or {}).get("canary") or {}).get("rounds_ns") or []
    rounds = [x for x in rounds if x]
    return sum(rounds) / len(rounds) if rounds else None


def family_canaries(rows):
    """Per family: the median over its rows of the canary in the whole run and alone,
    as (family, whole, alone), for the families with both."""
    by = {}
    for k, wr, ar, *_ in rows:
        cw, ca = canary_ns(wr), canary_ns(ar)
        if cw and ca:
            fam = wr["name"].split(".", 1)[0]
            by.setdefault(fam, ([], []))
            by[fam][0].append(cw)
            by[fam][1].append(ca)
    return [(f, sorted(w)[len(w) // 2], sorted(a)[len(a) // 2])
            for f, (w, a) in sorted(by.items())]


def states_text(r):
    """The result's round states as `646 ns 88%, 504 ns 12%` (the largest shares first,
    at most three), or '' when the document has none."""
    st = (r.get("measured") or {}).get("states") or []
    st = sorted(st, key=lambda x: -(x.get("share") or 0))[:3]
    return ", ".join(f"{ns(x['median_ns'])} {100 * (x.get('share') or 0):.0f}%"
                     for x in st if x.get("median_ns") is not None)


def strict(r):
    family = r["name"].split(".", 1)[0]
    return family in STRICT_FAMILIES and (r.get("params") or {}).get("placement") != "free"


def ns(x):
    for unit, div in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(x) >= div:
            return f"{x / div:.3g} {unit}"
    return f"{x:.3g} ns"


def mb(kib):
    return "?" if kib is None else f"{kib / 1024:.1f} MB"


def verdict(ok):
    return "PASS" if ok else "FAIL"


def compare_rows(whole_doc, alone, alone_status, say, control=None):
    """Step 3: every row of the whole run against the same row alone, printed; with
    `control` (the rows of the missing families measured alone once more), step 3b
    beside each miss. Returns the misses' keys."""
    w_ok = measured(whole_doc)
    w_status = statuses(whole_doc)
    rows, misses, unmatched = [], [], []
    for k, wr in w_ok.items():
        ar = alone.get(k)
        if ar is None:
            st = alone_status.get(k, ("absent", None))
            unmatched.append(f"{k}: whole ok, alone {st[0]}")
            continue
        ratio, ok, (lo, hi) = within(wr, ar)
        rows.append((k, wr, ar, ratio, ok, lo, hi))
        if not ok:
            misses.append((k, wr, ar, ratio, lo, hi))
    for k, st in w_status.items():
        if k not in w_ok:
            unmatched.append(f"{k}: whole {st[0]}" + (f" ({st[1][:80]})" if st[1] else ""))
    drifted = [r for r in rows if canary_ns(r[1]) and canary_ns(r[2])
               and abs(canary_ns(r[1]) / canary_ns(r[2]) - 1) > 0.05]
    n_in = sum(r[4] for r in rows)
    share = n_in / len(rows) if rows else 0.0
    say()
    if rows:
        mid = sorted(r[3] for r in rows)[len(rows) // 2]
        say(f"{verdict(share >= ISOLATION_SHARE)} isolation: {n_in}/{len(rows)} rows within "
            f"({100 * share:.1f}%; target >= {100 * ISOLATION_SHARE:.0f}%); ratio "
            f"whole/alone: median {mid:.3f}, {len(misses)} misses")
        say(f"  the machine: in {len(drifted)} of {len(rows)} rows the getpid canary (mean "
            "over the result's rounds) differed by more than 5% between the two runs; "
            "'canary ×' beside a miss is that ratio, whole/alone")
        # The machine's speed as the canary read it before each round: the whole run's
        # figure brought to the alone run's speed (×alone/whole canary). Not a figure
        # syscost prints; it says how much of the misses the machine's speed explains.
        scaled = [r for r in rows if canary_ns(r[1]) and canary_ns(r[2])]
        s_in = sum(within_scaled(r[1], r[2], canary_ns(r[2]) / canary_ns(r[1]))
                   for r in scaled)
        if scaled:
            say(f"  at the alone run's machine speed (the whole figure ×canary "
                f"alone/whole): {s_in}/{len(scaled)} rows within "
                f"({100 * s_in / len(scaled):.1f}%)")
        for fam, cw, ca in family_canaries(rows):
            if abs(cw / ca - 1) > 0.05:
                say(f"  the machine while {fam} was measured alone: canary {ns(ca)} against "
                    f"{ns(cw)} in the whole run (×{cw / ca:.2f}; the median over the "
                    "family's rows of their rounds' mean canary)")
    else:
        say("FAIL isolation: no row measured in both runs")

    def distance(ratio):
        return abs(math.log(ratio)) if 0 < ratio < math.inf else math.inf

    moved = 0
    for k, wr, ar, ratio, lo, hi in sorted(misses, key=lambda m: -distance(m[3])):
        cw, ca = canary_ns(wr), canary_ns(ar)
        machine = f" (canary ×{cw / ca:.2f})" if cw and ca else ""
        say(f"  miss {k}: whole {ns(wr['measured']['median_ns'])}, alone "
            f"{ns(ar['measured']['median_ns'])} [{ns(lo)}–{ns(hi)}], ratio {ratio:.3f}"
            + machine)
        sw, sa = states_text(wr), states_text(ar)
        if sw or sa:
            say(f"       round states: whole {sw or '-'}; alone {sa or '-'}")
        if control is not None:
            cr = control.get(k)
            if cr is None:
                say("       control: not measured in the second alone run")
                continue
            c_ratio, c_ok, _ = within(cr, ar)
            moved += not c_ok
            sc = states_text(cr)
            say(f"       control: alone again {ns(cr['measured']['median_ns'])}, ratio "
                f"{c_ratio:.3f} to the first alone run: "
                + ("within its interval" if c_ok else "OUTSIDE it too (moves from run "
                   "to run)") + (f"; states {sc}" if sc else ""))
    if control is not None and misses:
        say(f"  control: {moved} of {len(misses)} misses also missed between two alone "
            "runs of their family")
        # Over every row of the families measured again, not only the misses: how often
        # a family disagrees with itself minutes later, beside how often the whole run
        # disagrees with it. The first is what the machine allows the second to reach.
        again = [(r, control[r[0]]) for r in rows if r[0] in control]
        if again:
            self_out = sum(not within(c, r[2])[1] for r, c in again)
            whole_out = sum(not r[4] for r, _ in again)
            say(f"  control, every row of those families: alone again outside the first "
                f"alone run in {self_out} of {len(again)} rows "
                f"({100 * self_out / len(again):.1f}%), the whole run in {whole_out} "
                f"({100 * whole_out / len(again):.1f}%)")
            both = [(r, c) for r, c in again if canary_ns(c) and canary_ns(r[2])]
            s_out = sum(not within_scaled(c, r[2], canary_ns(r[2]) / canary_ns(c))
                        for r, c in both)
            if both:
                say(f"  control at the first alone run's machine speed (×canary): alone "
                    f"again outside in {s_out} of {len(both)} rows "
                    f"({100 * s_out / len(both):.1f}%)")
    for u in unmatched:
        say(f"  not compared: {u}")
    strict_rows = [r for r in rows if strict(r[1])]
    strict_in = sum(r[4] for r in strict_rows)
    say(f"{verdict(strict_rows and strict_in == len(strict_rows))} fixed placement "
        f"({', '.join(f + '.*' for f in STRICT_FAMILIES)}): {strict_in}/{len(strict_rows)} "
        "within (target: all)")
    for k, wr, ar, ratio, ok, lo, hi in strict_rows:
        say(f"  {'ok  ' if ok else 'MISS'} {k}: ratio {ratio:.3f}")
    return [m[0] for m in misses]


def reanalyse(workdir):
    """Step 3 again, on whole.json and alone-*.json kept in `workdir` (and step 3b with
    control-*.json, when the control was measured)."""
    with open(os.path.join(workdir, "whole.json")) as f:
        whole_doc = json.load(f)
    alone, alone_status, control = {}, {}, {}
    for name in sorted(os.listdir(workdir)):
        if name.startswith("alone-") and name.endswith(".json"):
            with open(os.path.join(workdir, name)) as f:
                doc = json.load(f)
            alone.update(measured(doc))
            alone_status.update(statuses(doc))
        elif name.startswith("control-") and name.endswith(".json"):
            with open(os.path.join(workdir, name)) as f:
                control.update(measured(json.load(f)))
    print(f"rows of the documents in {workdir} (nothing measured now)")
    compare_rows(whole_doc, alone, alone_status, print, control or None)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("binary", nargs="?", default="./target/release/syscost")
    ap.add_argument("--profile", default=None, help="the profile (default standard)")
    ap.add_argument("--families", help="comma-separated families instead of all")
    ap.add_argument("--widen", type=float, default=0.0, metavar="F",
                    help="widen each alone interval to at least +-F of its median (default 0)")
    ap.add_argument("--skip-speed", action="store_true", help="no wall-time runs")
    ap.add_argument("--skip-memory", action="store_true", help="no svc memory run")
    ap.add_argument("--repeat-exit", type=int, default=0, metavar="N",
                    help="run the README's main command N more times for its exit status")
    ap.add_argument("--no-control", action="store_true",
                    help="do not measure the missing families alone a second time")
    ap.add_argument("--history", type=int, default=0, metavar="N",
                    help="save every run of steps 1-3b to a fresh history in the work "
                         "directory, first seeded with N runs of syscall.getpid, as a "
                         "user's machine has one (default: no history, --no-save)")
    ap.add_argument("--keep", metavar="DIR", help="keep every document in DIR")
    ap.add_argument("--quick", action="store_true",
                    help="test the script: quick profile, syscall,proc, no speed runs")
    ap.add_argument("--reanalyse", metavar="DIR",
                    help="measure nothing: compare the rows of documents kept by --keep")
    a = ap.parse_args()
    global WIDEN
    WIDEN = a.widen
    if a.reanalyse:
        return reanalyse(a.reanalyse)
    if a.quick:
        a.profile = a.profile or "quick"
        a.families = a.families or "syscall,proc"
        a.skip_speed = True
    profile = a.profile or "standard"
    binary = os.path.abspath(a.binary)
    if not os.access(binary, os.X_OK):
        sys.exit(f"{a.binary}: not an executable (build it: cargo build --release)")
    families = [f for f in (a.families or "").split(",") if f]
    subset = bool(families) or profile != "standard"
    workdir = a.keep or tempfile.mkdtemp(prefix="syscost-isolation-")
    os.makedirs(workdir, exist_ok=True)
    env = dict(os.environ, SYSCOST_NO_SAVE="1")
    common = ["--profile", profile, "--no-save"]
    if a.history:
        db = os.path.join(workdir, "history.db")
        if os.path.exists(db):
            os.remove(db)
        env = {k: v for k, v in os.environ.items()
               if k not in ("SYSCOST_NO_SAVE", "SYSCOST_DB")}
        common = ["--profile", profile, "--db", db]
        for i in range(a.history):
            print(f"  .. seeding the history: run {i + 1} of {a.history}",
                  file=sys.stderr, flush=True)
            invoke(binary, ["run", "syscall.getpid", *common], workdir, f"seed-{i + 1}",
                   env=env)
    lines = []

    def say(s=""):
        print(s, flush=True)
        lines.append(s)

    def progress(s):
        print(f"  .. {s}", file=sys.stderr, flush=True)

    started = datetime.datetime.now(datetime.timezone.utc)
    load = os.getloadavg()[0]
    say(f"syscost targets (issue 22) · {binary} · profile {profile} · "
        f"{started:%Y-%m-%d %H:%M} UTC · load {load:.2f} · {os.cpu_count()} CPUs")
    if a.history:
        say(f"with a history: every run saved to {common[-1]}, seeded with "
            f"{a.history} runs of syscall.getpid")
    if subset:
        say(f"SUBSET: families {','.join(families) or 'all'}, profile {profile}: "
            "verdicts are about this subset, not the issue's targets")

    # 1. The whole catalogue.
    progress(f"whole run ({','.join(families) or 'all'})")
    whole = invoke(binary, ["run", *families, *common], workdir, "whole", env=env)
    say(f"whole: `{' '.join(whole.cmd)}`: {whole.wall_s:.1f} s, exit {whole.exit}, "
        f"largest process {mb(whole.tree_kib)} (time %M), "
        f"syscost parent {mb(whole.parent_kib)} (VmHWM, polled)")
    if whole.doc is None:
        say(f"  no document: {whole.stderr_tail}")
        return 2
    all_w = whole.doc.get("results", [])
    present = []
    for r in all_w:
        f = r["name"].split(".", 1)[0]
        if f not in present:
            present.append(f)

    # 2. Each family alone.
    alone, alone_status, walls = {}, {}, []
    for f in present:
        progress(f"{f} alone")
        o = invoke(binary, ["run", f, *common], workdir, f"alone-{f}", env=env)
        walls.append(f"{f} {o.wall_s:.1f} s" + ("" if o.exit == 0 else f" (exit {o.exit})"))
        alone.update(measured(o.doc))
        alone_status.update(statuses(o.doc))
    say(f"alone: {', '.join(walls)}; {sum(float(w.split()[1]) for w in walls):.1f} s in all")

    # 3. Rows, first without the control, so that what the control measures is only
    # the families with a miss.
    quiet = []
    missed = compare_rows(whole.doc, alone, alone_status,
                          lambda s="": quiet.append(s))
    if missed and not a.no_control:
        control, cwalls = {}, []
        for f in [f for f in present if any(k.split(".", 1)[0] == f for k in missed)]:
            progress(f"{f} alone again (control)")
            o = invoke(binary, ["run", f, *common], workdir, f"control-{f}", env=env)
            cwalls.append(f"{f} {o.wall_s:.1f} s" + ("" if o.exit == 0 else f" (exit {o.exit})"))
            control.update(measured(o.doc))
        say(f"control (the families with a miss, alone once more): {', '.join(cwalls)}")
        compare_rows(whole.doc, alone, alone_status, say, control)
    else:
        for line in quiet:
            say(line)

    # proc.fork beside svc, and alone.
    progress("proc.fork svc / proc.fork")
    pair = invoke(binary, ["run", "proc.fork", "svc", *common], workdir, "fork-svc", env=env)
    solo = invoke(binary, ["run", "proc.fork", *common], workdir, "fork-alone", env=env)
    pw, ps = measured(pair.doc), measured(solo.doc)
    forks = [k for k in ps if k.split(" ")[0] == "proc.fork" and k in pw]
    if forks:
        for k in forks:
            r = pw[k]["measured"]["median_ns"] / (ps[k]["measured"]["median_ns"] or math.nan)
            say(f"{verdict(abs(r - 1) <= PAIR_TOLERANCE)} {k} in `run proc.fork svc` "
                f"{ns(pw[k]['measured']['median_ns'])}, alone "
                f"{ns(ps[k]['measured']['median_ns'])}: ratio {r:.3f} (target within "
                f"{100 * PAIR_TOLERANCE:.0f}%; {pair.wall_s:.0f} s, {solo.wall_s:.0f} s)")
    else:
        say(f"FAIL proc.fork not measured in both (exit {pair.exit}, {solo.exit})")

    # 4. Memory.
    parent_ok = whole.parent_kib is not None and whole.parent_kib <= PARENT_MB * 1024
    say(f"{verdict(parent_ok)} memory: syscost parent peak {mb(whole.parent_kib)} over the "
        f"whole run (target <= {PARENT_MB:.0f} MB); largest process of the tree "
        f"{mb(whole.tree_kib)}"
        + (" (a descendant: a worker or a child)" if (whole.tree_kib or 0) > (whole.parent_kib or 0) * 1.05 else ""))
    workers = sorted(((r["measured"].get("worker_peak_kib"), k, r)
                      for k, r in measured(whole.doc).items()
                      if r["measured"].get("worker_peak_kib")), key=lambda x: -x[0])
    if workers:
        base = sorted(w[0] for w in workers)[len(workers) // 2]

        def own_buffers_kib(r):
            # The buffers a benchmark is asked for: its size and rss parameters, bytes,
            # and for file.* the test file (file=0: the profile's default), which a
            # mapping method holds resident.
            p = r.get("params") or {}
            total = 0
            if r["name"].startswith("file."):
                default = {"standard": 128, "thorough": 128, "quick": 16}.get(profile, 2)
                try:
                    total += int(p.get("file", "0")) or default << 20
                except ValueError:
                    pass
            for name in ("size", "rss"):
                try:
                    total += int(p.get(name, "0"))
                except ValueError:
                    pass
            return total / 1024

        over = [(kib - base - own_buffers_kib(r), kib, k) for kib, k, r in workers]
        worst = max(over)
        say(f"{verdict(worst[0] <= 30 * 1024)} memory: workers' peak resident size "
            f"(VmHWM): median {mb(base)}, largest {mb(workers[0][0])} ({workers[0][1]}); "
            f"most beyond the median and the benchmark's own size/rss buffers: "
            f"{mb(worst[0])} ({worst[2]}) (target <= 30 MB)")
        for kib, k, _ in workers[:5]:
            say(f"     {mb(kib):>9}  {k}")
    else:
        say("FAIL memory: no worker peak in the whole run's document (worker_peak_kib)")
    if not a.skip_memory:
        svc_filter = "svc.ef" if a.quick else "svc"
        progress(f"{svc_filter} under time")
        svc = invoke(binary, ["run", svc_filter, *common], workdir, "svc", env=env)
        say(f"{verdict(svc.tree_kib is not None and svc.tree_kib <= SVC_MB * 1024)} memory: "
            f"`syscost run {svc_filter}` {mb(svc.tree_kib)} (time %M, target <= "
            f"{SVC_MB:.0f} MB); parent {mb(svc.parent_kib)}; {svc.wall_s:.1f} s, exit {svc.exit}")

    # Speed.
    if not a.skip_speed:
        walls = {}
        for p in ("quick", "standard"):
            if p == profile and not families:
                walls[p] = whole.wall_s
                continue
            progress(f"whole catalogue, {p}, for its wall time")
            o = invoke(binary, ["run", "--profile", p, "--no-save"], workdir, f"speed-{p}",
                       env=env)
            walls[p] = o.wall_s
        say(f"{verdict(walls['quick'] <= QUICK_WALL_S)} speed: --profile quick "
            f"{walls['quick']:.1f} s (target <= {QUICK_WALL_S:.0f} s)")
        say(f"{verdict(walls['standard'] <= STANDARD_WALL_S)} speed: --profile standard "
            f"{walls['standard']:.1f} s (target <= {STANDARD_WALL_S:.0f} s)")

    # Exit status.
    progress("trace.event --load 1")
    tr = invoke(binary, ["run", "trace.event", "--load", "1", "--profile", profile,
                         "--no-save"], workdir, "trace", env=env)
    exits = [whole.exit]
    db_dir = tempfile.mkdtemp(prefix="syscost-isolation-db-")
    try:
        for i in range(a.repeat_exit):
            progress(f"main command {i + 1}/{a.repeat_exit}")
            o = invoke(binary, ["run", "--db", os.path.join(db_dir, "history.db")],
                       workdir, f"main-{i}", json_out=False,
                       env={k: v for k, v in os.environ.items() if k != "SYSCOST_NO_SAVE"})
            exits.append(o.exit)
    finally:
        shutil.rmtree(db_dir, ignore_errors=True)
    ok_exits = sum(e == 0 for e in exits)
    say(f"{verdict(ok_exits == len(exits) and tr.exit == 0)} exit: {ok_exits}/{len(exits)} "
        f"whole runs exited 0 ({', '.join(map(str, exits))}); `run trace.event --load 1` "
        f"exit {tr.exit}" + ("" if tr.exit == 0 else f": {tr.why()}"))
    say(f"(every figure a time on this machine; load {os.getloadavg()[0]:.2f} at the end; "
        f"documents in {workdir}" + (")" if a.keep else ", deleted)"))
    if not a.keep:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
