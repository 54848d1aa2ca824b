#!/usr/bin/env python3
"""Attribute the shim's overhead on a benchmark to its features: runs EXE
bare and under the shim with each configuration, interleaved, ROUNDS times,
and prints the median of each. Usage: matrix.py EXE LIB ROUNDS ARGS..."""
import os, statistics, subprocess, sys, tempfile

exe, lib, rounds, args = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
log = os.path.join(tempfile.mkdtemp(), "m-%p.jsonl")
base = dict(LD_PRELOAD=lib, CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
configs = {
    "bare": None,
    "info": dict(CGSHIM_LOG="info"),
    "info,meminfo=off": dict(CGSHIM_LOG="info", CGSHIM_MEMINFO="off"),
    "info,no sites": dict(CGSHIM_LOG="info", CGSHIM_BACKTRACE="0", CGSHIM_PYTHON_FRAMES="0"),
    "warn": dict(CGSHIM_LOG="warn"),
    "off,no sites,meminfo=off": dict(CGSHIM_LOG="off", CGSHIM_BACKTRACE="0", CGSHIM_PYTHON_FRAMES="0", CGSHIM_MEMINFO="off"),
}
res = {k: [] for k in configs}
for r in range(rounds):
    for name, extra in configs.items():
        env = dict(os.environ)
        if extra is not None:
            env.update(base)
            env.update(extra)
        out = subprocess.run([exe, *args], env=env, capture_output=True, text=True, check=True).stdout.split()
        res[name].append(float(out[1]))
b = statistics.median(res["bare"])
for name, v in res.items():
    m = statistics.median(v)
    print("%-28s %12.1f  x%.3f" % (name, m, m / b))
