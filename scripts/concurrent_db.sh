#!/usr/bin/env bash
# Issue 23's target: N syscost runs at once into a history file that does not exist yet
# all save, in T trials. Usage: scripts/concurrent_db.sh [BINARY] [N] [T]
set -u
bin=${1:-target/release/syscost}
n=${2:-6}
trials=${3:-20}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
good=0
for t in $(seq 1 "$trials"); do
    db="$dir/trial-$t/new.db"
    pids=()
    for i in $(seq 1 "$n"); do
        "$bin" run syscall.getpid --profile smoke --db "$db" >"$dir/out-$t-$i" 2>&1 &
        pids+=($!)
    done
    failed=0
    for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
    saved=$(grep -l "saved as run" "$dir"/out-"$t"-* | wc -l)
    runs=$("$bin" history --db "$db" list --format json 2>/dev/null \
        | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))' 2>/dev/null || echo 0)
    if [ "$saved" -eq "$n" ] && [ "$runs" -eq "$n" ] && [ "$failed" -eq 0 ]; then
        good=$((good + 1))
    else
        echo "trial $t: $saved of $n said saved, $runs runs in the history, $failed exited non-zero"
        grep -h -v "^warning" "$dir"/out-"$t"-* | grep -iv "saved as" | head -3
    fi
done
echo "concurrent creation: $good of $trials trials had all $n runs saved"
