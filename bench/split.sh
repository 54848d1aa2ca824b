#!/usr/bin/env bash
# bench/split.sh -- where the shim's time goes in the capture and update
# workloads (issue 17 point 4): each case under the shim with one cost
# source off at a time (memory samples, native backtrace, records below
# warn), ROUNDS rounds (default 5) interleaved with bare (the order
# rotating per round), pinned; prints
# the median over rounds of each process's median_ns, its ratio to bare's
# and the median of the per-round ratios.
# Not a bar: bench/run.py judges the bars. usage (GPU host, after
# bench/build.sh):
#   [ROUNDS=N] [CASES="capture 64 200;update-fresh 64 300"] [ORDER="bare shim bt0"] bash bench/split.sh [CORE]
set -u
cd "$(dirname "$0")/.."
B=${CGSHIM_GPU_BUILD:-build-gpu}; W=$B/bench-bin/workload; L=$PWD/$B/shim/libcgshim.so
CORE=${1:-4}; T=$(mktemp -d)
declare -A V=(
  [bare]=""
  [shim]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl"
  [mem0]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_MEMINFO=off"
  [bt0]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_BACKTRACE=0 CGSHIM_PYTHON_FRAMES=0"
  [mem0bt0]="LD_PRELOAD=$L CGSHIM_LOG=info CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_MEMINFO=off CGSHIM_BACKTRACE=0 CGSHIM_PYTHON_FRAMES=0"
  [warn]="LD_PRELOAD=$L CGSHIM_LOG=warn CGSHIM_LOG_FILE=$T/l-%p.jsonl CGSHIM_MEMINFO=off CGSHIM_BACKTRACE=0 CGSHIM_PYTHON_FRAMES=0"
  [disabled]="LD_PRELOAD=$L CGSHIM_DISABLE=1"
)
ORDER=${ORDER:-"bare shim bt0 mem0 mem0bt0 warn disabled"}
ROUNDS=${ROUNDS:-5}
IFS=';' read -r -a CS <<< "${CASES:-capture 64 200;update-same 64 1000;update-fresh 64 300}"
for c in "${CS[@]}"; do
  declare -A R=()
  VS=($ORDER)
  for r in $(seq "$ROUNDS"); do
    for i in "${!VS[@]}"; do
      v=${VS[$(( (i + r) % ${#VS[@]} ))]} # the order rotates per round
      x=$(env ${V[$v]} taskset -c $CORE $W $c 2>/dev/null | awk '/^result/{for(i=1;i<NF;i++) if($i=="median_ns") print $(i+1)}')
      R[$v]="${R[$v]:-} $x"; rm -f $T/l-*.jsonl
    done
  done
  for v in $ORDER; do echo "$c $v ${R[$v]}"; done | python3 -c '
import sys, statistics
rows = [l.split() for l in sys.stdin]
val = {r[3]: [float(x) for x in r[4:]] for r in rows}
for r in rows:
    v = val[r[3]]
    per = statistics.median(a / b for a, b in zip(v, val["bare"]))
    print("%-22s %-9s median_ns %9.0f  ratio %.3f  per-round %.3f" % (" ".join(r[:3]), r[3], statistics.median(v),
          statistics.median(v) / statistics.median(val["bare"]), per))'
  unset R
done
rm -rf $T
