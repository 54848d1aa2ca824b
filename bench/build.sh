#!/usr/bin/env bash
# bench/build.sh -- build what bench/run.py runs, on a GPU host: the shim
# (tests/gpu/build.sh, into build-gpu) and, with nvcc, into build-gpu/bench-bin:
#   workload, rewrite_bench   the harness's workloads
#   drvstate_probe, walk_cost, query_cost, query_warm  probes run by hand (not bars)
# usage: bash bench/build.sh
#   CGSHIM_GPU_BUILD  the build directory (default build-gpu; then pass
#                     --bin DIR/bench-bin --lib DIR/shim/libcgshim.so to run.py)
#   NVCC_ARCH         default sm_90 (H100)
set -u -o pipefail
cd "$(dirname "$0")/.."
bash tests/gpu/build.sh || exit 1
B=${CGSHIM_GPU_BUILD:-build-gpu}
G=$B/bench-bin
A=${NVCC_ARCH:-sm_90}
mkdir -p "$G"
pids=()
nvcc -O2 -arch="$A" -Ikernels -Ibench -o "$G/workload" bench/workload.cu & pids+=($!)
nvcc -O2 -arch="$A" -Ikernels -Ibench -o "$G/rewrite_bench" bench/rewrite_bench.cu & pids+=($!)
nvcc -O2 -arch="$A" -Ikernels -Ibench -o "$G/drvstate_probe" bench/drvstate_probe.cu & pids+=($!)
nvcc -O2 -arch="$A" -Ikernels -o "$G/walk_cost" bench/walk_cost.cu -lcuda & pids+=($!)
nvcc -O2 -arch="$A" -Ikernels -Ibench -o "$G/query_cost" bench/query_cost.cu -lcuda & pids+=($!)
nvcc -O2 -arch="$A" -Ikernels -Ibench -o "$G/query_warm" bench/query_warm.cu -lcuda & pids+=($!)
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
[ $rc = 0 ] && echo "built $G/{workload,rewrite_bench,drvstate_probe,walk_cost,query_cost,query_warm} and $B/shim/libcgshim.so"
exit $rc
