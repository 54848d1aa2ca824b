#!/usr/bin/env python3
"""A/B interleaved capture benchmark: capture + instantiate + destroy of a
64-node graph with a memory node (bench/capture_bench.cu), bare vs under the
shim (CGSHIM_LOG=info, JSONL to a file).

Usage: capture_ab.py CAPTURE_BENCH_EXE LIBCGSHIM [PAIRS] [REPS]
Each run prints its median ns per rep; PAIRS (>= 5, default 9) pairs are run
alternating the order inside each pair. Prints each pair, the medians, the
median of the per-pair ratios (the bar) and the ratio of the medians; exit 1
if the median pair ratio > 1.10.
CGSHIM_BENCH_ENV="K=V K=V": extra shim environment (to attribute the cost)."""
import os, statistics, subprocess, sys, tempfile

from abrun import PIN, env, interleave, pair_median

BAR = 1.10
exe, lib = sys.argv[1], sys.argv[2]
pairs = max(5, int(sys.argv[3]) if len(sys.argv) > 3 else 9)
reps = sys.argv[4] if len(sys.argv) > 4 else "300"
log = os.path.join(tempfile.mkdtemp(prefix="cgshim-capab-"), "bench-%p.jsonl")


def run(shim):
    extra = None
    if shim:
        extra = dict(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
        extra.update(kv.split("=", 1) for kv in os.environ.get("CGSHIM_BENCH_ENV", "").split())
    out = subprocess.run(PIN + [exe, reps], env=env(extra), capture_output=True, text=True, check=True).stdout.split()
    assert out[0] == "capture_instantiate_ns" and out[3] == "64", "unexpected output %s" % out
    return float(out[1])


bare, shim = interleave(pairs, run, lambda i, b, s: print(
    "pair %d: bare %.0f ns  shim %.0f ns  (%.3f)" % (i, b, s, s / b), flush=True))
mb, ms = statistics.median(bare), statistics.median(shim)
ratio = pair_median(shim, bare)
print("median bare %.0f ns, shim %.0f ns per capture+instantiate+destroy of 64 nodes; "
      "median of pair ratios %.3f, ratio of medians %.3f (bar %.2f)"
      % (mb, ms, ratio, ms / mb, BAR))
sys.exit(0 if ratio <= BAR else 1)
