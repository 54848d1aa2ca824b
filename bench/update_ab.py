#!/usr/bin/env python3
"""A/B interleaved update benchmark: bare vs under the shim (info-level JSONL
to a file). Usage: update_ab.py BENCH_EXE LIBCGSHIM NODES [PAIRS] [REPS]
Bar (issue 4): update including the prediction <= 1.25x the bare update."""
import os, statistics, subprocess, sys, tempfile

from abrun import PIN, env, interleave, pair_median

exe, lib, nodes = sys.argv[1], sys.argv[2], sys.argv[3]
pairs = int(sys.argv[4]) if len(sys.argv) > 4 else 5
reps = sys.argv[5] if len(sys.argv) > 5 else "200"
log = os.path.join(tempfile.mkdtemp(), "upd-%p.jsonl")


def run(shim):
    """(update us, capture us)"""
    e = env(dict(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log) if shim else None)
    out = subprocess.run(PIN + [exe, nodes, reps], env=e, capture_output=True, text=True, check=True).stdout.split()
    return float(out[3]), float(out[5])


bare, shim = interleave(pairs, run, lambda i, b, s: print(
    "pair %d: update bare %.2f us shim %.2f us | capture bare %.2f us shim %.2f us" % (i, b[0], s[0], b[1], s[1])))
bu, su = [b[0] for b in bare], [s[0] for s in shim]
ru = pair_median(su, bu)
rc = pair_median([s[1] for s in shim], [b[1] for b in bare])
print("nodes %s: median update bare %.2f us, shim %.2f us; median pair ratio %.3f, ratio of medians %.3f (bar 1.25); "
      "capture pair ratio %.3f" % (nodes, statistics.median(bu), statistics.median(su), ru,
                                  statistics.median(su) / statistics.median(bu), rc))
sys.exit(0 if ru <= 1.25 else 1)
