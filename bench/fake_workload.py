#!/usr/bin/env python3
"""bench/fake_workload.py -- a stand-in for the GPU workloads, for
bench/run.py --dry and --selftest on a machine without a GPU.

usage: fake_workload.py workload CASE NODES ITERS [BATCH]
       fake_workload.py rewrite_bench REPS ITERS NODES

Prints what bench/workload.cu or bench/rewrite_bench.cu print, with timings
made up so that the true ratio mode/bare of every case is FACTOR (the
selftest checks that the harness reports it). The mode is read from the
environment as the harness sets it (LD_PRELOAD and CGSHIM_DISABLE). Every
timing is multiplied by the host's "speed of the moment", a slow wave shared
by all processes through CLOCK_MONOTONIC (as on the lent VM, where it moves
~2x), and by per-process noise: pairing within a round has to cancel the
wave. Under "shim" it writes a JSONL record to CGSHIM_LOG_FILE (the harness
checks that the shim loaded) and, for cold rewrites in lockstep, the rewrite
and update-call records bench/rewrite_lockstep.py checks. Lockstep
(BENCH_BATON) follows bench/baton.h."""
import json
import math
import os
import random
import sys
import time

# the true ratio mode/bare per (case, mode); absent: 1.0
FACTOR = {
    ("launch", "shim"): 1.010,  # the others pass their bars
    ("eager", "shim"): 1.000,
    ("capture-64", "shim"): 1.150,  # above its bar: the selftest expects FAIL
    ("capture-1000", "shim"): 1.030,
    ("update-same-64", "shim"): 1.060,
    ("update-same-1000", "shim"): 1.040,
    ("update-fresh-64", "shim"): 1.200,  # FAIL
    ("update-fresh-1000", "shim"): 1.020,
    ("update-alt-64", "shim"): 1.030,
    ("update-alt-1000", "shim"): 1.010,
    ("update-capture-64", "shim"): 1.040,
    ("rewrite-warm", "shim"): 1.070,
    ("rewrite-launch", "shim"): 1.010,
    ("rewrite-cold", "shim"): 1.300,  # FAIL
    ("capture-1000", "disabled"): 1.060,  # FAIL (disabled bar 1.005)
}
BASE = {"launch": 2400.0, "eager": 2100.0, "capture": 180e3, "update-same": 30e3, "update-fresh": 45e3,
        "update-alt": 40e3, "update-capture": 120e3, "instantiate": 140e3, "rewrite_launch": 2500.0}
NOISE = 0.005  # per-process lognormal sigma


def factor(case, mode):
    return FACTOR.get((case, mode), 1.0)


def mode():
    if not os.environ.get("LD_PRELOAD"):
        return "bare"
    return "disabled" if os.environ.get("CGSHIM_DISABLE") == "1" else "shim"


def speed():
    """The host's speed of the moment: a 20 s wave of +-30% (a round of
    processes sees ~1% of it, the rounds of a run all of it)."""
    return 1.0 + 0.3 * math.sin(2 * math.pi * time.monotonic() / 20.0)


rng = random.Random(os.getpid() * 7919 + time.monotonic_ns())


def noise(sigma=NOISE):
    return rng.lognormvariate(0.0, sigma)


def log(rec):
    path = os.environ.get("CGSHIM_LOG_FILE")
    if path and mode() == "shim":
        with open(path.replace("%p", str(os.getpid())), "a") as f:
            f.write(json.dumps(rec) + "\n")


class Baton:
    """bench/baton.h in Python."""

    def __init__(self):
        spec = os.environ.get("BENCH_BATON")
        self.r = self.w = None
        if spec:
            r, w, first = (int(x) for x in spec.split(","))
            self.r, self.w = r, w
            if not first:
                self.wait()

    def wait(self):
        if self.r is not None and os.read(self.r, 1) != b"\0":
            os.close(self.r)
            self.r = None

    def give(self):
        if self.w is not None:
            try:
                os.write(self.w, b"\0")
            except OSError:
                os.close(self.w)
                self.w = None

    def turn(self):
        self.give()
        self.wait()


def workload(c, nodes, iters):
    name = c if c in ("launch", "eager") else "%s-%d" % (c, nodes)
    f = factor(name, mode())
    b = Baton()
    if b.r is not None:
        for r in range(-5, iters):
            t = BASE[c] * f * speed() * noise(0.02)
            if r >= 0:
                print("iter %d %.0f" % (r, t), flush=True)
            b.turn()
        b.give()
    t = BASE[c] * f * speed() * noise()
    print("result %s nodes %d iters %d median_ns %.1f p25_ns %.1f p75_ns %.1f" % (c, nodes, iters, t, t * 0.98,
                                                                                 t * 1.02))


def rewrite_bench(reps, nodes):
    m = mode()
    b = Baton()
    rewrites = m == "shim"
    if b.r is not None:  # cold rewrites in lockstep
        for r in range(reps + 1):  # the first: the untimed probe
            start = time.monotonic_ns()
            t = BASE["instantiate"] * (factor("rewrite-cold", m) if rewrites else 1.0) * speed() * noise(0.02)
            if rewrites:
                inst = t / 1.05
                log({"ev": "rewrite", "tid": 1, "exec": "0x1", "instantiate_ns": int(inst)})
                log({"ev": "call", "api": "cuGraphExecUpdate", "tid": 1, "exec": "0x1", "rewritten": True,
                     "dur_ns": int(t)})
            if r == 0:
                continue
            print("iter %d %.0f %d" % (r - 1, t, start), flush=True)
            b.turn()
        print("rewritten %d lockstep_done" % rewrites, flush=True)
        b.give()
        return
    log({"ev": "start"})
    s = speed()
    inst = BASE["instantiate"] * s * noise()
    print("instantiate_ns %.0f" % inst)
    print("destroy_instantiate_ns %.0f" % (inst * 1.1))
    print("rewrite_ns %s" % ("%.0f" % (BASE["instantiate"] * factor("rewrite-warm", m) * s * noise())
                             if rewrites else "nan"))
    print("cold_ns %.0f" % (inst * 1.1))
    print("launch_ns %.1f" % (BASE["rewrite_launch"] * factor("rewrite-launch", m) * s * noise()))
    print("rewritten %d nodes %d reps %d iters 1" % (rewrites, nodes, reps))


def main(argv):
    if argv[1] == "workload":
        log({"ev": "start"})
        iters = int(argv[4])
        if argv[2] in ("launch", "eager") and len(argv) > 5:
            iters = max(1, iters // int(argv[5]))  # one iteration per batch, as workload.cu times them
        workload(argv[2], int(argv[3]), iters)
    elif argv[1] == "rewrite_bench":
        rewrite_bench(int(argv[2]), int(argv[4]))
    else:
        print("unknown program %s" % argv[1])
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
