#!/usr/bin/env python3
"""tests/gpu/policy.py -- GPU checks of CGSHIM_ON_UPDATE_FAILURE=reinstantiate
(issue 5): the scenario programs kernels/policy/*.cu built with nvcc, run
bare (they must fail: the driver refuses the topology-changing update) and
under libcgshim.so with the policy (they must run to completion and compute
the right numbers, which they check themselves), plus the JSONL assertions
of tests/policy/run_policy.py, and the A/B benchmark bench/run.py --cases rewrite-warm,rewrite-launch.

usage: policy.py BUILD BIN [--no-bench]
  BUILD  meson build dir holding shim/libcgshim.so
  BIN    dir of the nvcc-built binaries:

    BIN=/tmp/policy-bin; mkdir -p $BIN
    for p in topology_change memnodes solver_loop per_node; do
      nvcc -O2 -arch=sm_90 -Ikernels -o $BIN/$p kernels/policy/$p.cu || exit 1
    done
    nvcc -O2 -arch=sm_90 -Ikernels -o $BIN/threads kernels/policy/threads.cu -lpthread
    nvcc -O2 -arch=sm_90 -Ikernels -o $BIN/rewrite_bench bench/rewrite_bench.cu
    python3 tests/gpu/policy.py build $BIN

Prints one line per case, "PASS name: detail" or "FAIL name: detail", and a
closing "N passed, N failed"; exit status 1 when any case failed.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "policy"))
from run_policy import EXPECT  # noqa: E402  (the same expectations as on the CPU stand-in)
sys.path.insert(0, os.path.join(ROOT, "tests", "rules"))
from run_rule import read_log  # noqa: E402  (the one JSONL reader of the test drivers)

# case -> (binary, arguments)
CASES = [
    ("topology_change", "topology_change", []),
    ("memnodes", "memnodes", []),
    ("solver_loop", "solver_loop", ["5"]),
    ("solver_loop_thrash", "solver_loop", ["1"]),
    ("threads", "threads", []),
    ("per_node", "per_node", []),
]

passed = failed = 0


def report(ok, name, detail):
    global passed, failed
    print("%s %s: %s" % ("PASS" if ok else "FAIL", name, detail))
    sys.stdout.flush()
    if ok:
        passed += 1
    else:
        failed += 1


def base_env():
    return {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}


def run_case(name, exe, args, lib):
    exp = EXPECT[name]
    cmd = [exe] + args
    bare = subprocess.run(cmd, env=base_env(), capture_output=True, text=True, timeout=300)
    problems = []
    if bare.returncode == 0:
        problems.append("bare run exited 0 (want non-zero)")
    elif "cudaErrorGraphExecUpdateFailure" not in bare.stdout:
        problems.append("bare run failed without 910: " + bare.stdout.strip().splitlines()[-1:][0]
                        if bare.stdout.strip() else "bare run failed with no output (rc %d)" % bare.returncode)
    with tempfile.TemporaryDirectory(prefix="cgs-gpu-policy-") as tmp:
        log = os.path.join(tmp, "log.jsonl")
        env = dict(base_env(), LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log,
                   CGSHIM_ON_UPDATE_FAILURE="reinstantiate")
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
        recs = read_log(log)
    if p.returncode != 0:
        tail = [l for l in p.stdout.splitlines() if "UNEXPECTED" in l or "ABORT" in l or "MISMATCH" in l][:3]
        problems.append("shim run exit %d %s" % (p.returncode, tail))
    for s in exp.get("stdout", []):
        # the driver's own error code for a node without counterpart may differ from the stand-in's
        if s.startswith("set params on node without counterpart"):
            if "set params on node without counterpart: rc=0" in p.stdout or \
               "set params on node without counterpart" not in p.stdout:
                problems.append("node without counterpart was not refused")
            continue
        if s not in p.stdout:
            problems.append("output lacks %r" % s)
    rw = [r for r in recs if r.get("ev") == "rewrite" and "rc_instantiate" not in r]
    bad = [r for r in recs if r.get("ev") == "rewrite" and "rc_instantiate" in r]
    pred = sum(1 for r in rw if r.get("reason") == "predicted")
    fail = sum(1 for r in rw if r.get("reason") == "failed")
    # on the GPU the fork case may be predicted or failed: compare the total
    if pred + fail != exp["predicted"] + exp["failed"]:
        problems.append("%d rewrites (%d predicted, %d failed), want %d" % (pred + fail, pred, fail,
                                                                            exp["predicted"] + exp["failed"]))
    if bad:
        problems.append("re-instantiation failed: %s" % [r.get("rc_instantiate") for r in bad])
    summ = [r for r in recs if r.get("ev") == "summary"]
    if not summ or summ[0].get("rewrites") != len(rw):
        problems.append("summary rewrites %s, rewrite records %d" % (summ[0].get("rewrites") if summ else None, len(rw)))
    if "launches" in exp and summ and summ[0].get("launches") != exp["launches"]:
        problems.append("summary launches %s (want %d)" % (summ[0].get("launches"), exp["launches"]))
    mism = [r for r in recs if r.get("ev") == "mismatch"]
    if mism:
        problems.append("mismatch records: %s" % [(m.get("api"), m.get("rule"), m.get("rc")) for m in mism][:4])
    thrash = [w for w in recs if w.get("ev") == "warning" and "thrashing" in w.get("msg", "")]
    if exp.get("thrash") is True and len(thrash) != 1:
        problems.append("%d thrashing warnings (want 1)" % len(thrash))
    if exp.get("thrash") is False and thrash:
        problems.append("unexpected thrashing warning")
    if exp.get("no_leak"):
        leaks = [r for r in recs if r.get("ev") == "leak" or (r.get("ev") == "violation" and r.get("rule") == "CGS011")]
        if leaks:
            problems.append("%d leak record(s)/CGS011" % len(leaks))
    if exp.get("no_counterpart"):
        nc = [w for w in recs if w.get("ev") == "warning" and "no counterpart" in w.get("msg", "")]
        if len(nc) != 1:
            problems.append("%d no-counterpart warnings (want 1)" % len(nc))
    report(not problems, name, "; ".join(problems) if problems else
           "bare exit %d, shim exit 0, %d rewrites (%d predicted, %d failed), numbers checked"
           % (bare.returncode, len(rw), pred, fail))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    build, bindir = sys.argv[1], sys.argv[2]
    lib = os.path.abspath(os.path.join(build, "shim", "libcgshim.so"))
    if not os.path.exists(lib):
        print("FAIL setup: no %s" % lib)
        return 1
    for name, binary, args in CASES:
        exe = os.path.join(bindir, binary)
        if not os.path.exists(exe):
            report(False, name, "no binary %s (see the nvcc commands in this file's docstring)" % exe)
            continue
        try:
            run_case(name, exe, args, lib)
        except subprocess.TimeoutExpired:
            report(False, name, "timeout")
    bench = os.path.join(bindir, "rewrite_bench")
    if "--no-bench" not in sys.argv and os.path.exists(bench):
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "run.py"), "--cases",
                            "rewrite-warm,rewrite-launch", "--bin", bindir, "--lib", lib],
                           capture_output=True, text=True, timeout=1800)
        sys.stdout.write(p.stdout)
        lines = [l for l in p.stdout.splitlines() if "rewrite" in l]
        report(p.returncode == 0, "rewrite_bench", " | ".join(lines) if lines else p.stderr[-500:])
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
