#!/usr/bin/env python3
"""Cold-rewrite bar of issue 5 in lockstep (bench/rewrite_bench.cu, BENCH_BATON mode).

usage: rewrite_lockstep.py BENCH_EXE LIBCGSHIM [RUNS=4] [ITERS=200] [NODES=64] [CORE=6] [--no-bar] [--state]

A cold rewrite (a new topology every update) costs one instantiation, about
140 us, and the lent VM's speed moves by up to 2x between levels within a
fraction of a second (bench/drvstate_probe.cu: consecutive rounds of 0.15 s
flip between ~80 and ~140 us). Runs seconds apart, as separate processes
are paired, then disagree by more than the 10% the bar allows. Here one bare
process and one under the shim (info-level JSONL to a file, reinstantiate)
run at once on one core and pass a baton through pipes after every
iteration: iteration i of one side runs right after iteration i of the
other, and the bar is judged on the median of the per-iteration ratios
    shim update (a re-instantiation behind the handle) / bare instantiate
(the bare side destroys its exec first, untimed, as its fallback would).
RUNS runs alternate which side goes first. The shim's records are checked:
every timed update was a fresh re-instantiation (no cached executable).
Exit 1 when the pooled median ratio exceeds the bar of case rewrite-cold in
bench/bars.tsv or a run fails; with
--no-bar (the CPU test against the stand-in, whose timings mean nothing)
only the lockstep itself and the records are checked. With --state, RUNS
more runs pair two bare processes: the application's destroy + instantiate
against an instantiate made while the exec being replaced and the first one
are alive (BENCH_KEEP), the driver state a transparent rewrite keeps
(information: how much of the ratio is the driver's, not the shim's).
bench/run.py measures the same as its case rewrite-cold (one() per round)."""
import glob
import os
import statistics
import sys
import tempfile

from baton import env, lockstep_pair, rewrite_records
from baton import iters as iters_of


def rewritten(out):
    for line in out.splitlines():
        if line.endswith("lockstep_done"):
            return line.split()[1] == "1"
    return False


class LockstepError(Exception):
    """A run that did not measure what it should (said why)."""


def one(exe, lib, core, iters, nodes, tmp, run_no, bare_first):
    """One lockstep run of ITERS cold rewrites: returns (ratios, tb, ts, own,
    drv, split) -- the per-iteration ratios shim/bare, both sides' {i: ns},
    the medians of the hook's own work and of the driver's instantiation
    from the shim's records, and the per-iteration split of the ratio.
    Raises LockstepError when the run did not measure a cold rewrite against
    a bare instantiate, iteration for iteration. core None: not pinned."""
    log = os.path.join(tmp, "run%d-%%p.jsonl" % run_no)
    es = env(dict(LD_PRELOAD=lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log,
                  CGSHIM_ON_UPDATE_FAILURE="reinstantiate"))
    cmd = (["taskset", "-c", str(core)] if core is not None else []) + [exe, str(iters), "1", str(nodes)]
    ob, os_ = lockstep_pair(cmd, env(), es, bare_first)
    tb, rb = iters_of(ob), rewritten(ob)
    ts, rs = iters_of(os_), rewritten(os_)
    if rb or not rs:
        raise LockstepError("expected the bare side to refuse the update and the shim side to rewrite it: %s / %s"
                            % (rb, rs))
    # every timed update a fresh re-instantiation: one rewrite record with
    # instantiate_ns, and its update call record, per iteration plus the
    # untimed first one; none reused
    recs, pairs = rewrite_records(glob.glob(log.replace("%p", "*")))
    fresh = [r for r in recs if "instantiate_ns" in r and not r.get("reused")]
    if len(fresh) != iters + 1 or len(pairs) != iters + 1 or any(r.get("reused") for r in recs):
        raise LockstepError("expected %d fresh re-instantiations in the shim's records, found %d (%d with their "
                            "call record, %d reused)" % (iters + 1, len(fresh), len(pairs),
                                                         sum(1 for r in recs if r.get("reused"))))
    drv = [t for t, d in pairs]
    own = [d - t for t, d in pairs]  # the update hook's own time around the instantiation
    # Where a pair's difference goes, per iteration i (the shim's fresh
    # re-instantiation i+1; the first was the untimed probe): the driver's
    # instantiation inside the rewrite against the bare one (the driver
    # state), the hook's own work, and the time outside the hook's window.
    split = {"driver": [], "own": [], "outside": []}
    for i in range(iters):
        if i in tb and i in ts:
            split["driver"].append(drv[i + 1] / tb[i])
            split["own"].append(own[i + 1] / tb[i])
            split["outside"].append((ts[i] - pairs[i + 1][1]) / tb[i])
    own, drv = statistics.median(own), statistics.median(drv)
    ratios = [ts[i] / tb[i] for i in range(iters) if i in tb and i in ts]
    # the iterations alternated: each side's iteration i started after the
    # other side's iteration i (or i-1) and before its next one
    sb, ss = iters_of(ob, 3), iters_of(os_, 3)
    first, second = (sb, ss) if bare_first else (ss, sb)
    order = all(first[i] < second[i] and (i + 1 not in first or second[i] < first[i + 1]) for i in range(iters)
                if i in first and i in second)
    if not order or len(sb) != iters or len(ss) != iters:
        raise LockstepError("the two processes did not take turns per iteration")
    if len(ratios) != iters:
        raise LockstepError("expected %d paired iterations, found %d (bare %d, shim %d)"
                            % (iters, len(ratios), len(tb), len(ts)))
    return ratios, tb, ts, own, drv, split


def main(argv):
    no_bar = "--no-bar" in argv
    state = "--state" in argv
    argv = [a for a in argv if a not in ("--no-bar", "--state")]
    exe, lib = argv[1], argv[2]
    runs = int(argv[3]) if len(argv) > 3 else 4
    iters = int(argv[4]) if len(argv) > 4 else 200
    nodes = argv[5] if len(argv) > 5 else "64"
    core = argv[6] if len(argv) > 6 else "6"
    tmp = tempfile.mkdtemp(prefix="rewrite-lockstep-")
    pooled = []
    splits = {"driver": [], "own": [], "outside": []}
    print("lockstep cold rewrite, %d runs x %d iterations, %s-node chains+, one core (%s)" % (runs, iters, nodes, core))
    for k in range(runs):
        try:
            ratios, tb, ts, own, drv, split = one(exe, lib, core, iters, nodes, tmp, k, k % 2 == 0)
        except LockstepError as e:
            print(e)
            return 1
        pooled += ratios
        for key in split:
            splits[key] += split[key]
        print("run %d (%s first): bare instantiate %.0f ns, shim rewrite %.0f ns median; median of %d per-iteration "
              "ratios %.3f; shim's own work per rewrite (records: update call dur_ns - instantiate_ns) %.0f ns of %.0f ns"
              % (k, "bare" if k % 2 == 0 else "shim", statistics.median(tb.values()), statistics.median(ts.values()),
                 len(ratios), statistics.median(ratios), own, drv))
    q = statistics.quantiles(pooled, n=4)
    m = statistics.median(pooled)
    print("pooled: %d iterations, median ratio %.3f (quartiles %.3f .. %.3f)" % (len(pooled), m, q[0], q[2]))
    if splits["driver"]:
        print("per iteration, relative to the bare instantiate (medians): the driver's instantiation inside the rewrite "
              "%.3f, the update hook's own work %.3f, outside the hook's window %.3f (information)"
              % tuple(statistics.median(splits[k]) for k in ("driver", "own", "outside")))
    if state:
        st = []
        for k in range(runs):
            ek = env()
            ek["BENCH_KEEP"] = "1"
            cmd = ["taskset", "-c", core, exe, str(iters), "1", nodes]
            ob, ok = lockstep_pair(cmd, env(), ek, k % 2 == 0)
            tb, tk = iters_of(ob), iters_of(ok)
            st += [tk[i] / tb[i] for i in tb if i in tk]
        print("driver state alone, bare (information): instantiate with the replaced and the original exec alive / "
              "after destroy: median of %d per-iteration ratios %.3f" % (len(st), statistics.median(st)))
    if no_bar:
        print("lockstep and records checked (--no-bar: the ratio is not judged)")
        return 0
    from run import load_bars  # the one table of bars
    bar = load_bars()[("rewrite-cold", "shim")]["bar"]
    print("bar %.3f (pooled median; bench/run.py judges the same case on per-run medians)" % bar)
    print("PASS" if m <= bar else "FAIL")
    return 0 if m <= bar else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
