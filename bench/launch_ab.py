#!/usr/bin/env python3
"""A/B interleaved launch benchmark: bare vs under the shim (info-level
JSONL to a file). Usage: launch_ab.py BENCH_EXE LIBCGSHIM [PAIRS] [ITERS]
Prints each pair, the medians, the median of the per-pair ratios (the bar) and
the ratio of the medians; exit 1 if the median pair ratio > 1.02."""
import os, statistics, subprocess, sys, tempfile

from abrun import PIN, env, interleave, pair_median

exe, lib = sys.argv[1], sys.argv[2]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
iters = sys.argv[4] if len(sys.argv) > 4 else "20000"
log = os.path.join(tempfile.mkdtemp(), "bench-%p.jsonl")


def run(shim):
    e = env(dict(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log) if shim else None)
    out = subprocess.run(PIN + [exe, iters], env=e, capture_output=True, text=True, check=True).stdout
    return float(out.split()[1])


bare, shim = interleave(pairs, run, lambda i, b, s: print("pair %d: bare %.1f ns  shim %.1f ns" % (i, b, s)))
mb, ms = statistics.median(bare), statistics.median(shim)
ratio = pair_median(shim, bare)
print("median bare %.1f ns/launch, shim %.1f ns/launch; median pair ratio %.3f, ratio of medians %.3f (bar 1.02)"
      % (mb, ms, ratio, ms / mb))
sys.exit(0 if ratio <= 1.02 else 1)
