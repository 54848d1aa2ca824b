#!/usr/bin/env python3
"""A bar judged in lockstep: a bench run bare and under the shim at once,
taking turns per iteration on one core (bench/baton.h).

usage: lockstep.py NAME BAR LIBCGSHIM RUNS CORE BENCH_EXE [ARGS...]

The bench prints "iter I VALUE" per iteration in lockstep mode (capture_bench:
capture+instantiate+destroy ns; update_bench: update ns). The shim side logs
at info level, JSONL to a file. RUNS runs alternate which side starts; each
run prints its median values and the median of its per-iteration ratios
shim/bare; the bar is judged on the median of all per-iteration ratios.
Exit 1 when it exceeds BAR or a run fails."""
import os
import statistics
import sys
import tempfile

from abrun import env, iters, lockstep_pair

name, bar, lib, runs, core, exe = sys.argv[1], float(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5], \
    sys.argv[6]
args = sys.argv[7:]
tmp = tempfile.mkdtemp(prefix="lockstep-")
pooled = []
print("%s in lockstep: %d runs on core %s, %s %s" % (name, runs, core, os.path.basename(exe), " ".join(args)))
for k in range(runs):
    es = env(dict(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl",
                  CGSHIM_LOG_FILE=os.path.join(tmp, "run%d-%%p.jsonl" % k)))
    ob, os_ = lockstep_pair(["taskset", "-c", core, exe] + args, env(), es, k % 2 == 0)
    tb, ts = iters(ob), iters(os_)
    common = sorted(set(tb) & set(ts))
    if len(common) < 10:
        print("too few paired iterations (%d)" % len(common))
        sys.exit(1)
    ratios = [ts[i] / tb[i] for i in common]
    pooled += ratios
    print("run %d (%s first): bare %.0f, shim %.0f median; median of %d per-iteration ratios %.3f"
          % (k, "bare" if k % 2 == 0 else "shim", statistics.median(tb[i] for i in common),
             statistics.median(ts[i] for i in common), len(ratios), statistics.median(ratios)))
m = statistics.median(pooled)
q = statistics.quantiles(pooled, n=4)
print("%s pooled: %d iterations, median ratio %.3f (quartiles %.3f .. %.3f) (bar %.2f)"
      % (name, len(pooled), m, q[0], q[2], bar))
print("PASS" if m <= bar else "FAIL")
sys.exit(0 if m <= bar else 1)
