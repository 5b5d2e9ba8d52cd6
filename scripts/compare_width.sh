#!/usr/bin/env bash
# Does `syscost compare` fit a real terminal as one table? Makes two runs of the whole
# catalogue with the smoke profile in a temporary history (about 20 s each), then runs
#   syscost compare last~1 last
# in a detached tmux pane 100 and then 80 columns wide, captures the pane (joining any
# wrapped line back together) and checks:
#   - no line is wider than the pane (nothing wrapped);
#   - one table: the header line (`benchmark ... A B change ...`) appears once, so no
#     column went into a further block;
#   - no benchmark's name or parameters were cut (no `…` in the table).
# Prints each pane's table, then PASS or FAIL per width; exits 1 on any FAIL.
# Usage: scripts/compare_width.sh [path/to/syscost]   (default: target/release/syscost)
set -u
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/syscost}")
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --release first"; exit 2; }
command -v tmux >/dev/null || { echo "tmux is not installed"; exit 2; }

dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export SYSCOST_DB="$dir/history.db"
for i in 1 2; do
    "$bin" run --profile smoke >/dev/null 2>"$dir/run$i.err" \
        || { echo "run $i failed:"; cat "$dir/run$i.err"; exit 2; }
done

status=0
for width in 100 80; do
    session="syscost-compare-width-$$-$width"
    out="$dir/pane-$width"
    tmux new-session -d -s "$session" -x "$width" -y 50 -e "SYSCOST_DB=$SYSCOST_DB" \
        "$bin compare last~1 last; tmux wait-for -S $session; sleep 600"
    tmux set-option -t "$session" history-limit 20000 >/dev/null
    timeout 120 tmux wait-for "$session"
    tmux capture-pane -t "$session" -p -J -S - -E - >"$out"
    tmux kill-session -t "$session"
    python3 - "$out" "$width" <<'PY' || status=1
import sys
path, width = sys.argv[1], int(sys.argv[2])
lines = open(path, encoding="utf-8").read().rstrip("\n").split("\n")
wide = [l for l in lines if len(l) > width]
heads = [l for l in lines if l.split()[:1] == ["benchmark"]]
whole = [l for l in lines if all(w in l.split() for w in ("A", "B", "change", "verdict", "K"))]
footer = next((i for i, l in enumerate(lines) if " compared: " in l), len(lines))
cut = [l for l in lines[:footer] if "…" in l]
print(f"--- {width} columns: {len(lines)} lines, {len(heads)} benchmark header(s), "
      f"{len(wide)} wider than {width}, {len(cut)} cut")
for l in lines:
    print(l)
# One `benchmark` header, and one line with every figure's header (the same line when
# the names have a column; the next when every name has a line of its own): a column
# in a further block would repeat the first and split the second.
ok = not wide and not cut and len(heads) == 1 and len(whole) == 1 and footer < len(lines)
print(("PASS" if ok else "FAIL") + f" {width} columns")
for l in wide:
    print("too wide:", l)
for l in cut:
    print("cut:", l)
sys.exit(0 if ok else 1)
PY
done
exit $status
