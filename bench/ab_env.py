#!/usr/bin/env python3
"""Generic A/B of one benchmark value: runs EXE ARGS... alternately with
environment A (bare: no LD_PRELOAD, no CGSHIM_*) and B (the KEY=VALUE pairs
in CGSHIM_AB_ENV, typically LD_PRELOAD=... CGSHIM_...=...), PAIRS times, and
prints the median of the per-pair ratios B/A of the output value NAME (a line
"NAME <number>").  Used to attribute an A/B difference (e.g. B = the shim
loaded but CGSHIM_DISABLE=1: what merely loading it costs).
usage: ab_env.py PAIRS NAME EXE [ARGS...]"""
import os, shlex, statistics, subprocess, sys

from abrun import PIN, env, interleave, pair_median

pairs, name, cmd = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
benv = dict(kv.split("=", 1) for kv in shlex.split(os.environ.get("CGSHIM_AB_ENV", "")))


def run(b):
    out = subprocess.run(PIN + cmd, env=env(benv if b else None), capture_output=True, text=True, check=True).stdout
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 2 and f[0] == name:
            return float(f[1])
    raise SystemExit("no %s in output" % name)


a, b = interleave(pairs, run)
print("%s: A median %.0f, B median %.0f; median pair ratio B/A %.3f, ratio of medians %.3f (%d pairs; B = %s)"
      % (name, statistics.median(a), statistics.median(b), pair_median(b, a),
         statistics.median(b) / statistics.median(a), pairs, os.environ.get("CGSHIM_AB_ENV", "")))
