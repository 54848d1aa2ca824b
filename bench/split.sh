#!/usr/bin/env bash
# bench/split.sh -- where the shim's time goes in the capture and update
# workloads (issue 17 point 4): each case under the shim with one cost
# source off at a time (memory samples, native backtrace, records below
# warn), 5 rounds interleaved with bare, pinned; prints the median over
# rounds of each process's median_ns and the ratio to bare. Not a bar:
# bench/run.py judges the bars. usage (GPU host, after bench/build.sh):
#   bash bench/split.sh [CORE]
set -u
cd "$(dirname "$0")/.."
B=${CGSHIM_GPU_BUILD:-build-gpu}; W=$B/bench-bin/workload; L=$PWD/$B/shim/libcgshim.so
CORE=${1:-4}; T=$(mktemp -d)
declare -A V=(
  [bare]=""
  [shim]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl"
  [mem0]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_MEMINFO=off"
  [mem0bt0]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_MEMINFO=off CGSHIM_BACKTRACE=0 CGSHIM_PYTHON_FRAMES=0"
  [warn]="LD_PRELOAD=$L CGSHIM_LOG=warn CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_MEMINFO=off CGSHIM_BACKTRACE=0 CGSHIM_PYTHON_FRAMES=0"
  [disabled]="LD_PRELOAD=$L CGSHIM_DISABLE=1"
)
ORDER="bare shim mem0 mem0bt0 warn disabled"
for c in "capture 64 200" "update-same 64 1000" "update-fresh 64 300"; do
  declare -A R=()
  for r in 1 2 3 4 5; do
    for v in $ORDER; do
      x=$(env ${V[$v]} taskset -c $CORE $W $c 2>/dev/null | awk '/^result/{for(i=1;i<NF;i++) if($i=="median_ns") print $(i+1)}')
      R[$v]="${R[$v]:-} $x"; rm -f $T/l-*.jsonl
    done
  done
  for v in $ORDER; do echo "$c $v ${R[$v]}"; done | python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin]
med = {r[3]: statistics.median(float(x) for x in r[4:]) for r in rows}
for r in rows:
    print("%-22s %-9s median_ns %9.0f  ratio %.3f" % (" ".join(r[:3]), r[3], med[r[3]], med[r[3]] / med["bare"]))'
  unset R
done
rm -rf $T
