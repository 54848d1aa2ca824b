#!/usr/bin/env python3
"""bench/phases.py -- where a workload's shim time goes, call by call, in
lockstep: runs bench/workload.cu's capture or update-capture case with
BENCH_PHASES=1 bare and under the shim (bench/run.py's shim environment), in
a ring on one core (bench/baton.py), ROUNDS times with the order
alternating, and prints per phase (the calls between two clock stamps) the
median over rounds of bare's and the shim's per-phase medians and of their
difference. Information, no bar: the bars are bench/run.py's.

usage: phases.py [--bin DIR] [--lib PATH] [--core N] [--rounds R]
                 [--env K=V,...] [--before LIB] [--before-env K=V,...]
                 CASE [NODES [ITERS]]
  CASE     capture or update-capture
  --env    variables added to the shim's environment
  --before another build of the library (e.g. before a change): a third
           process in the same ring, its columns beside the shim's
  --before-env  variables added to the before side's environment (e.g.
           --before /lib/x86_64-linux-gnu/libm.so.6 --before-env BENCH_MIMIC=1:
           bare plus the driver queries the shim makes, bench/workload.cu)
"""
import argparse, os, statistics, sys, tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from baton import env, lockstep_ring  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def phases(out):
    """{phase: median_ns} and the result's median_ns from one run's stdout."""
    ph, total = {}, None
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "phase":
            ph[f[1]] = float(f[3])
        elif f and f[0] == "result":
            total = float(f[f.index("median_ns") + 1])
    return ph, total


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--bin", default=os.path.join(ROOT, "build-gpu", "bench-bin"))
    p.add_argument("--lib", default=os.path.join(ROOT, "build-gpu", "shim", "libcgshim.so"))
    p.add_argument("--core", default="4")
    p.add_argument("--rounds", type=int, default=8)
    p.add_argument("--env", default="")
    p.add_argument("--before")
    p.add_argument("--before-env", default="")
    p.add_argument("case")
    p.add_argument("args", nargs="*")
    a = p.parse_args()
    nodes = a.args[0] if a.args else "64"
    iters = a.args[1] if len(a.args) > 1 else "300"
    cmd = ([] if a.core == "none" else ["taskset", "-c", a.core]) + [os.path.join(a.bin, "workload"), a.case, nodes,
                                                                    iters]
    tmp = tempfile.mkdtemp(prefix="cgshim-phases-")
    shim = dict(LD_PRELOAD=a.lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl",
                CGSHIM_LOG_FILE=os.path.join(tmp, "p-%p.jsonl"), BENCH_PHASES="1")
    shim.update(kv.split("=", 1) for kv in a.env.split(",") if kv)
    bare = env(dict(BENCH_PHASES="1"))
    sides = [("bare", bare), ("shim", env(shim))]
    if a.before:
        b = dict(shim, LD_PRELOAD=a.before, CGSHIM_LOG_FILE=os.path.join(tmp, "b-%p.jsonl"))
        b.update(kv.split("=", 1) for kv in a.before_env.split(",") if kv)
        sides.append(("before", env(b)))
    rows = {}  # phase -> [tuple of the sides' ns]
    for r in range(a.rounds):
        order = [(k + r) % len(sides) for k in range(len(sides))]  # rotating
        outs = lockstep_ring(cmd, [sides[k][1] for k in order], timeout=600)
        got = [None] * len(sides)
        for k, o in zip(order, outs):
            got[k] = phases(o)
        for k in got[0][0]:
            rows.setdefault(k, []).append(tuple(g[0].get(k, float("nan")) for g in got))
        rows.setdefault("(whole)", []).append(tuple(g[1] for g in got))
    head = "%-14s %12s %12s %10s %7s" % ("phase", "bare_ns", "shim_ns", "diff_ns", "ratio")
    print(head + ("  %10s %7s" % ("before_d", "ratio") if a.before else ""))
    for k, v in rows.items():
        b = statistics.median(x[0] for x in v)
        line = "%-14s %12.0f" % (k, b)
        for j in range(1, len(sides)):
            s = statistics.median(x[j] for x in v)
            d = statistics.median(x[j] - x[0] for x in v)
            line += (" %12.0f" % s if j == 1 else "") + " %10.0f %7.3f" % (d, s / b if b else float("nan"))
        print(line)


if __name__ == "__main__":
    main()
