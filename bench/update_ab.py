#!/usr/bin/env python3
"""A/B interleaved update benchmark: bare vs under the shim (info-level JSONL
to a file). Usage: update_ab.py BENCH_EXE LIBCGSHIM NODES [PAIRS] [REPS]
Bar (issue 4): update including the prediction <= 1.25x the bare update."""
import shlex, os, statistics, subprocess, sys, tempfile

# CGSHIM_BENCH_PIN="taskset -c 4": run both sides on the same core (less
# variance on hosts whose cores run at different speeds).
PIN = shlex.split(os.environ.get("CGSHIM_BENCH_PIN", ""))

exe, lib, nodes = sys.argv[1], sys.argv[2], sys.argv[3]
pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
reps = sys.argv[5] if len(sys.argv) > 5 else "200"
log = os.path.join(tempfile.mkdtemp(), "upd-%p.jsonl")


def run(shim):
    env = dict(os.environ)
    if shim:
        env.update(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
    out = subprocess.run(PIN + [exe, nodes, reps], env=env, capture_output=True, text=True, check=True).stdout.split()
    return float(out[3]), float(out[5])


bu, su, bc, sc = [], [], [], []
for i in range(pairs):
    order = (False, True) if i % 2 == 0 else (True, False)
    for shim in order:
        u, c = run(shim)
        (su if shim else bu).append(u)
        (sc if shim else bc).append(c)
    print("pair %d: update bare %.2f us shim %.2f us | capture bare %.2f us shim %.2f us" % (i, bu[-1], su[-1], bc[-1], sc[-1]))
# the bar on the median of per-pair ratios (a pair shares the host's speed level)
ru = statistics.median(s / b for s, b in zip(su, bu))
rc = statistics.median(s / b for s, b in zip(sc, bc))
print("nodes %s: median update bare %.2f us, shim %.2f us; median pair ratio %.3f, ratio of medians %.3f (bar 1.25); "
      "capture pair ratio %.3f" % (nodes, statistics.median(bu), statistics.median(su), ru,
                                  statistics.median(su) / statistics.median(bu), rc))
sys.exit(0 if ru <= 1.25 else 1)
