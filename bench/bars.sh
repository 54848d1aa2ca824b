#!/usr/bin/env bash
# bench/bars.sh -- the speed bars of issues 2-5 on a GPU host, A/B interleaved
# (bare vs under the shim at info level, JSONL to a file), each bar judged on
# the median of per-pair ratios (the scripts also print the ratio of medians).
#   launch of an exec            <= 1.02  bench/launch_ab.py
#   update, 64 and 1000 nodes    <= 1.25  bench/update_ab.py
#   capture+instantiate, 64 nodes <= 1.10 bench/capture_ab.py
#   rewrite (warm), launch of a rewritten exec  <= 1.10, 1.02  bench/rewrite_ab.py
#   rewrite (cold: a new topology every update) <= 1.10   bench/rewrite_lockstep.py
#     (per-iteration pairs of a bare and a shim process passing a baton on one core)
# The capture and update bars are also measured in lockstep (bench/lockstep.py):
# the host's speed moves within a fraction of a second on the lent VM, which
# per-iteration pairs cancel and per-run pairs do not.
# Usage: bash bench/bars.sh [SCALE]  (SCALE multiplies the pair counts; default 1)
# Builds what it needs into build-gpu (tests/gpu/build.sh).
set -u -o pipefail
cd "$(dirname "$0")/.."
if ! nvidia-smi -L >/dev/null 2>&1; then echo "no GPU: skipped"; exit 77; fi
bash tests/gpu/build.sh || exit 1
S=${1:-1}
B=build-gpu; L=$B/shim/libcgshim.so; G=$B/bench-bin
mkdir -p $G
nvcc -O2 -arch=sm_90 -o $G/launch_bench bench/launch_bench.cu &
nvcc -O2 -arch=sm_90 -o $G/update_bench bench/update_bench.cu &
nvcc -O2 -arch=sm_90 -Ikernels -o $G/capture_bench bench/capture_bench.cu &
nvcc -O2 -arch=sm_90 -Ikernels -o $G/rewrite_bench bench/rewrite_bench.cu &
wait
rc=0
step() { echo; echo "=== $*"; "$@" | grep -v '^pair ' || rc=1; }
step python3 bench/launch_ab.py $G/launch_bench $L $((11 * S)) 20000
step python3 bench/update_ab.py $G/update_bench $L 64 $((11 * S)) 300
step python3 bench/update_ab.py $G/update_bench $L 1000 $((7 * S)) 60
step python3 bench/capture_ab.py $G/capture_bench $L $((15 * S)) 150
step python3 bench/rewrite_ab.py $G/rewrite_bench $L $((9 * S))
# Pinned to one core: less variance on the lent VM (bare and shim alike).
export CGSHIM_BENCH_PIN="taskset -c 6"
step python3 bench/launch_ab.py $G/launch_bench $L $((11 * S)) 20000
step python3 bench/capture_ab.py $G/capture_bench $L $((21 * S)) 150
step python3 bench/rewrite_ab.py $G/rewrite_bench $L $((9 * S))
unset CGSHIM_BENCH_PIN
step python3 bench/rewrite_lockstep.py $G/rewrite_bench $L $((4 * S)) 400 64 6
step python3 bench/rewrite_lockstep.py $G/rewrite_bench $L $((4 * S)) 400 64 9
step python3 bench/lockstep.py capture-64 1.10 $L $((4 * S)) 6 $G/capture_bench 300
step python3 bench/lockstep.py update-64 1.25 $L $((4 * S)) 6 $G/update_bench 64 300
step python3 bench/lockstep.py update-1000 1.25 $L $((4 * S)) 6 $G/update_bench 1000 60
exit $rc
