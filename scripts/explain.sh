#!/usr/bin/env bash
# Checks the targets of `syscost explain` (issue 27) on this machine. Run it ALONE (no
# builds or other benchmarks beside it), as root or with CAP_PERFMON, from the
# repository: it builds the release binary, explains syscall.getpid and
# ctx.pingpong mechanism=pipe placement=same-cpu, prints both, runs the skid check, and
# prints PASS or FAIL for each target:
#   1. getpid: at least 90% of samples attributed to named functions;
#   2. getpid: the per-function self times (shares of the sampled rounds' median)
#      add up to the measured median (all rounds) within 5%; the sampled running time
#      per call (samples × period / calls) is printed beside it;
#   3. getpid: the mitigation group shown;
#   4. pingpong: __schedule, the switch (finish_task_switch, and switch_mm/__switch_to
#      named), the pipe's read and write and the wake-up each shown with ns per round
#      trip.
# Exit status: 0 when every target passes.
set -u
cd "$(dirname "$0")/.."
cargo build --release --quiet || exit 2
bin=target/release/syscost
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

echo "== syscost explain syscall.getpid"
$bin explain syscall.getpid --no-save --format json -o "$out/getpid.json" 2>"$out/getpid.err"
$bin report "$out/getpid.json" -o "$out/getpid.html" >/dev/null 2>&1
# The text of the same run, from its document.
python3 - "$out/getpid.json" <<'EOF' || exit 2
import json, sys
d = json.load(open(sys.argv[1]))
r = [x for x in d["results"] if x["name"] == "syscall.getpid"][0]
e = r.get("explain")
if e is None:
    print("no explanation:", r.get("reason")); sys.exit(0)
print(f"median {e['median_ns']:.1f} ns (sampled rounds), unsampled rounds {e['unsampled_median_ns']}")
print(f"{e['event']} at {e['hz']} Hz; {e['samples']} samples; named {e['named']*100:.1f}%; "
      f"sampled {e['sampled_ns_per_op']:.1f} ns/call; notes: {e['notes']}")
for g in e["groups"]:
    print(f"  {g['name']:<24} {g['self_ns']:8.2f} ns ({g['self_low_ns']:.2f}–{g['self_high_ns']:.2f})")
for f in e["functions"][:12]:
    k = " [k]" if f["kernel"] else ""
    print(f"  {(f['name']+k)[:48]:<48} self {f['self_ns']:7.2f} ns  incl {f['total_ns']:7.2f} ns")
EOF

echo
echo "== syscost explain ctx.pingpong mechanism=pipe placement=same-cpu"
$bin explain ctx.pingpong mechanism=pipe placement=same-cpu --no-save -o "$out/pp.txt" 2>"$out/pp.err"
sed -n '/^explain /,$p' "$out/pp.txt"

echo
echo "== syscost explain --skid"
$bin explain --skid --cpu 0

echo
echo "== targets"
python3 - "$out/getpid.json" "$out/pp.txt" <<'EOF'
import json, re, sys
fails = 0
def verdict(ok, what):
    global fails
    fails += 0 if ok else 1
    print(("PASS " if ok else "FAIL ") + what)
d = json.load(open(sys.argv[1]))
r = [x for x in d["results"] if x["name"] == "syscall.getpid"][0]
e = r.get("explain") or {}
named = e.get("named", 0)
verdict(named >= 0.90, f"getpid: {named*100:.1f}% of samples attributed to named functions (>= 90%)")
s, m = e.get("sampled_ns_per_op") or 0, e.get("median_ns") or 1
headline = r["measured"]["median_ns"]
selfsum = sum(f["self_ns"] for f in e.get("functions", []))
verdict(abs(selfsum / headline - 1) <= 0.05,
        f"getpid: per-function self times add up to {selfsum:.1f} ns vs the measured median "
        f"{headline:.1f} ns ({100*(selfsum/headline-1):+.1f}%, within 5%)")
u = e.get("unsampled_median_ns")
print(f"     (sampled rounds' median {m:.1f} ns, unsampled rounds' {u} ns; sampled running "
      f"time {s:.1f} ns per call, {100*(s/m-1):+.1f}% of the sampled median: the samples' "
      f"own interrupts and the batches the median leaves out)")
mit = [g for g in e.get("groups", []) if g.get("group") == "mitigations"]
thunks = [f["name"] for f in e.get("functions", []) if f.get("group") == "mitigations"]
verdict(bool(mit), f"getpid: mitigation group shown ({mit[0]['self_ns']:.2f} ns; sampled: {thunks or 'none'})"
        if mit else "getpid: mitigation group shown")
text = open(sys.argv[2]).read()
want = {
    "__schedule": r"__schedule\s+[\d.]+ ns",
    "the switch (finish_task_switch)": r"finish_task_switch\S*\s+[\d.]+ ns",
    "switch_mm/__switch_to named": r"(switch_mm\S*|__switch_to\S*)\s+(?:[\d.]+ ns|no sample)",
    "the pipe's read": r"(anon_)?pipe_read\s+[\d.]+ ns",
    "the pipe's write": r"(anon_)?pipe_write\s+[\d.]+ ns",
    "the wake-up": r"(__wake_up\S*|try_to_wake_up)\s+[\d.]+ ns",
}
for what, pat in want.items():
    verdict(re.search(pat, text) is not None, f"pingpong: {what} shown with ns per round trip")
print(f"{6 + 3 - fails} passed, {fails} failed")
sys.exit(1 if fails else 0)
EOF
