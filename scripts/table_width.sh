#!/usr/bin/env bash
# Does `syscost run`'s table line up in a real terminal? Runs
#   syscost run syscall ctx.pingpong --profile quick --no-save
# in a detached tmux pane 100 and then 80 columns wide, captures the pane (joining any
# wrapped line back together) and checks:
#   - no line is wider than the pane (nothing wrapped, rows, notes and summary alike);
#   - the `±` of every row (a line before the footer ending in the converged column,
#     yes or no) stands at one column.
# Prints each pane's text, then PASS or FAIL per width; exits 1 on any FAIL.
# Usage: scripts/table_width.sh [path/to/syscost]   (default: target/release/syscost)
set -u
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/syscost}")
[ -x "$bin" ] || { echo "no binary at $bin: cargo build --release first"; exit 2; }
command -v tmux >/dev/null || { echo "tmux is not installed"; exit 2; }

status=0
for width in 100 80; do
    session="syscost-width-$$-$width"
    out=$(mktemp)
    tmux new-session -d -s "$session" -x "$width" -y 50 \
        "$bin run syscall ctx.pingpong --profile quick --no-save; tmux wait-for -S $session; sleep 600"
    tmux set-option -t "$session" history-limit 10000 >/dev/null
    timeout 900 tmux wait-for "$session"
    tmux capture-pane -t "$session" -p -J -S - -E - >"$out"
    tmux kill-session -t "$session"
    python3 - "$out" "$width" <<'PY' || status=1
import re, sys
path, width = sys.argv[1], int(sys.argv[2])
lines = open(path, encoding="utf-8").read().rstrip("\n").split("\n")
wide = [l for l in lines if len(l) > width]
# The rows: lines before the footer ("N results: ...") that end in the converged column
# (the summary's may too, once it wraps).
footer = next((i for i, l in enumerate(lines) if " results: " in l), len(lines))
rows = [l for l in lines[:footer] if re.search(r" (yes|no)$", l)]
columns = sorted({l.index("±") for l in rows if "±" in l})
print(f"--- {width} columns: {len(rows)} rows, ± at column(s) {columns}, "
      f"{len(wide)} line(s) wider than {width}")
for l in lines:
    print(l)
ok = not wide and rows and len(columns) == 1 and all("±" in l for l in rows)
print(("PASS" if ok else "FAIL") + f" {width} columns")
for l in wide:
    print("too wide:", l)
sys.exit(0 if ok else 1)
PY
    rm -f "$out"
done
exit $status
