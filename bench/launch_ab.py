#!/usr/bin/env python3
"""A/B interleaved launch benchmark: bare vs under the shim (info-level
JSONL to a file). Usage: launch_ab.py BENCH_EXE LIBCGSHIM [PAIRS] [ITERS]
Prints each pair, the medians, the median of the per-pair ratios (the bar) and
the ratio of the medians; exit 1 if the median pair ratio > 1.02."""
import shlex, os, statistics, subprocess, sys, tempfile

# CGSHIM_BENCH_PIN="taskset -c 4": run both sides on the same core (less
# variance on hosts whose cores run at different speeds).
PIN = shlex.split(os.environ.get("CGSHIM_BENCH_PIN", ""))

exe, lib = sys.argv[1], sys.argv[2]
pairs = int(sys.argv[3]) if len(sys.argv) > 3 else 7
iters = sys.argv[4] if len(sys.argv) > 4 else "20000"
log = os.path.join(tempfile.mkdtemp(), "bench-%p.jsonl")

def run(shim):
    env = dict(os.environ)
    if shim:
        env.update(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
    out = subprocess.run(PIN + [exe, iters], env=env, capture_output=True, text=True, check=True).stdout
    return float(out.split()[1])

bare, shim = [], []
for i in range(pairs):
    # alternate the order inside each pair so drift hits both sides alike
    if i % 2 == 0:
        b = run(False); s = run(True)
    else:
        s = run(True); b = run(False)
    bare.append(b); shim.append(s)
    print("pair %d: bare %.1f ns  shim %.1f ns" % (i, b, s))
mb, ms = statistics.median(bare), statistics.median(shim)
# the bar on the median of per-pair ratios (a pair shares the host's speed level)
ratio = statistics.median(s / b for s, b in zip(shim, bare))
print("median bare %.1f ns/launch, shim %.1f ns/launch; median pair ratio %.3f, ratio of medians %.3f (bar 1.02)"
      % (mb, ms, ratio, ms / mb))
sys.exit(0 if ratio <= 1.02 else 1)
