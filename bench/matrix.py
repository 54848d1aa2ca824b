#!/usr/bin/env python3
"""Attribute the shim's overhead on a benchmark to its features: runs EXE
bare and under the shim with each configuration, interleaved, ROUNDS times,
and prints the median of each (information, no bar).
Usage: matrix.py EXE LIB ROUNDS ARGS...
  e.g. matrix.py build-gpu/bench-bin/workload build-gpu/shim/libcgshim.so 9 capture 64 200
The value of a run: the median_ns of bench/workload.cu's result line, else
the second word of its output (launch_bench: "ns_per_launch V")."""
import os, statistics, subprocess, sys, tempfile

from baton import env as bare_env

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
        env = bare_env()
        if extra is not None:
            env.update(base)
            env.update(extra)
        out = subprocess.run([exe, *args], env=env, capture_output=True, text=True, check=True).stdout.split()
        res[name].append(float(out[out.index("median_ns") + 1] if "median_ns" in out else out[1]))
b = statistics.median(res["bare"])
for name, v in res.items():
    m = statistics.median(v)
    print("%-28s %12.1f  x%.3f" % (name, m, m / b))
