#!/usr/bin/env python3
"""bench/run.py -- the cost-per-call-type benchmark of libcgshim.so (issue 17):
every speed bar, one driver, one table of bars (bench/bars.tsv).

usage: python3 bench/run.py [--quick] [--rounds N] [--cases A,B,...] [--core N|none]
                            [--bin DIR] [--lib PATH] [--json FILE] [--processes] [--keep-logs]
       python3 bench/run.py --dry ...     the same with a fake workload (bench/fake_workload.py)
       python3 bench/run.py --selftest    checks of the statistics and the driver, on this machine
Build first: bash bench/build.sh (the workloads into build-gpu/bench-bin, the
shim into build-gpu). Exit status 1 when a bar fails or a run goes wrong.

Modes (the environment of a run; every run starts from the caller's
environment without LD_PRELOAD and any CGSHIM_* variable):
  bare      nothing added
  shim      LD_PRELOAD=<lib> CGSHIM_LOG=info CGSHIM_LOG_FORMAT=jsonl
            CGSHIM_LOG_FILE=<tmp>/<run>-r<round>-%p.jsonl, every rule on
            (the rewrite runs add CGSHIM_ON_UPDATE_FAILURE=reinstantiate);
            the run must leave a log file (else the shim did not load)
  disabled  the shim's environment plus CGSHIM_DISABLE=1; the run must leave
            no log file (the pass-through promise)
  before    (only with --before LIB) the shim's environment with another
            build of the library, e.g. the one before a change: its ratios to
            bare come out beside shim's, interleaved in the same rounds, with
            no bar (issue 13's before/after comparison); with --before-env
            K=V,... also those variables (--before alone: the same library),
            e.g. CGSHIM_LOG=warn to see in lockstep what the records cost

Cases (the run that measures them, and the ratio taken per round):
  launch             workload launch: cudaGraphLaunch of a 1-node graph, ns per
                     launch, median of batches of 1000 (each batch synchronized)
  eager              workload eager: cudaLaunchKernel of an empty kernel, the same
  capture-64/-1000   workload capture: capture (cudaMallocAsync, kernels,
                     cudaFreeAsync) + instantiate (AutoFreeOnLaunch) + destroy,
                     median per iteration
  update-same-64/-1000   workload update-same: cudaGraphExecUpdate from an
                     identical graph captured once and reused
  update-fresh-64/-1000  workload update-fresh: the update from a graph
                     captured anew every iteration (the capture not timed)
  update-alt-64/-1000    workload update-alt: one exec updated in turn from
                     two graphs of its topology with other kernel arguments,
                     both captured once and kept (issue 36)
  update-capture-64  workload update-capture: per step a fresh capture, the
                     update from it and the graph's destroy, all timed (the
                     vLLM/SGLang shape, issue 36)
  rewrite-warm       rewrite_bench: shim rewrite_ns (an update the driver refuses,
                     served by a cached executable) / bare instantiate_ns
  rewrite-launch     rewrite_bench: launch_ns of the rewritten exec / bare launch_ns
  rewrite-cold       bench/rewrite_lockstep.py one(): a new topology every update,
                     the shim's re-instantiation / the bare application's
                     instantiate, in LOCKSTEP (a bare and a shim process take
                     turns per iteration on one core, bench/baton.h); the round's
                     value is the median of its per-iteration ratios. Lockstep
                     because the two sides time different calls of ~140 us
                     whose cost follows the host's speed of the moment.
The workload cases (launch, eager, capture, update) run in LOCKSTEP too:
per round, one process per mode, the three in a ring on one core passing a
baton per iteration (launch, eager: per batch of 1000) in the round's mode
order (rotating: bare/shim/disabled, shim/disabled/bare, disabled/bare/shim);
the round's value is the median of its per-iteration ratios. Lockstep
because the lent hosts' speed moves in phases of seconds: on the H200 of
2026-11-28 the bare 64-node capture cycle of processes a second apart
measured 100-200 us, and the bare launch 1.4-1.8 us with the GPU's clocks,
so a ratio of two processes' medians was mostly which phase each met (95%
intervals +-4%, and a disabled shim, a pure pass-through, "failed" its
1.005), where iterations a fraction of a millisecond apart meet the same one
(+-1%). Each iteration then runs with the caches a partner process left
behind: the shim's code and data come back cold every time, the harder
measure of the two. --processes runs them the old way: separate processes,
one per mode, INTERLEAVED, a round running every selected run once in each
mode in the rotating order, all pinned to one core (taskset -c CORE), each
process reporting the median of many iterations timed inside it around the
calls only (no start-up). The rewrite-warm and rewrite-launch cases always
run that way (rewrite_bench).

Statistics per (case, mode): the median over rounds of the per-round ratio
mode/bare with a bootstrap 95% interval (random.Random(17), 2000 resamples of
the rounds), and the ratio of the medians. Verdict: issue 17's rule, the
upper end of the interval <= bar + margin (bench/bars.tsv); the older bar,
where it differs, by the older rule (median <= bar). Closing line
"N passed, N failed" (issue-17 bars). --json FILE: every raw number.

Default: 30 rounds, full iteration counts, the cases in DEFAULT (the
workload cases of issues 17 and 36; --cases all adds update-same-1000 and
the rewrite cases): about 1.2 s a case a round on an H200, the three
processes' CUDA start-up on one core dominating (the 8-case table took ~5
minutes at 30 rounds on 2026-11-28), so ~6.5 minutes; --quick: 10 rounds,
fewer iterations. The harness prints the elapsed time and a projection
after the first round."""
import argparse
import glob
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from baton import env, iters as iters_of, lockstep_ring  # noqa: E402

MODES = ("bare", "shim", "disabled")  # plus "before" with --before (use_before)
BOOT_N, BOOT_SEED, LEVEL = 2000, 17, 0.95


# ---- the runs (processes) and the cases (ratios) -------------------------

class Run:
    """One kind of process: exe in --bin, its arguments (full, quick), the
    extra shim environment, and whether its capture/update loop can run in
    lockstep (the default; --processes runs it as processes)."""

    def __init__(self, exe, full, quick, extra=None, ring=False):
        self.exe, self.full, self.quick, self.extra, self.ring = exe, full, quick, extra or {}, ring


# workload CASE NODES ITERS [BATCH]. Iteration counts: enough for a stable
# in-process median, small next to the ~0.3 s start-up of a CUDA process.
RUNS = {
    "launch": Run("workload", ["launch", "1", "30000", "1000"], ["launch", "1", "10000", "1000"], ring=True),
    "eager": Run("workload", ["eager", "1", "30000", "1000"], ["eager", "1", "10000", "1000"], ring=True),
    "capture-64": Run("workload", ["capture", "64", "200"], ["capture", "64", "100"], ring=True),
    "capture-1000": Run("workload", ["capture", "1000", "30"], ["capture", "1000", "15"], ring=True),
    "update-same-64": Run("workload", ["update-same", "64", "1000"], ["update-same", "64", "400"], ring=True),
    "update-same-1000": Run("workload", ["update-same", "1000", "100"], ["update-same", "1000", "40"], ring=True),
    "update-fresh-64": Run("workload", ["update-fresh", "64", "300"], ["update-fresh", "64", "150"], ring=True),
    "update-fresh-1000": Run("workload", ["update-fresh", "1000", "40"], ["update-fresh", "1000", "20"], ring=True),
    "update-alt-64": Run("workload", ["update-alt", "64", "600"], ["update-alt", "64", "300"], ring=True),
    "update-alt-1000": Run("workload", ["update-alt", "1000", "60"], ["update-alt", "1000", "30"], ring=True),
    "update-capture-64": Run("workload", ["update-capture", "64", "300"], ["update-capture", "64", "150"], ring=True),
    # rewrite_bench REPS ITERS NODES
    "rewrite": Run("rewrite_bench", ["100", "5000", "64"], ["40", "2000", "64"],
                   {"CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"}),
}
# rewrite-cold: rewrite_lockstep.one(ITERS, NODES) per round
COLD = {"full": (100, 64), "quick": (60, 64)}


class Case:
    """A bar's ratio: run's value num (mode) over run's value den (bare of
    the same round); "lockstep-rewrite": bench/rewrite_lockstep.py."""

    def __init__(self, name, run, num="median_ns", den="median_ns", modes=("shim", "disabled")):
        self.name, self.run, self.num, self.den, self.modes = name, run, num, den, modes


CASES = [Case(n, n) for n in ("launch", "eager", "capture-64", "capture-1000", "update-same-64",
                              "update-same-1000", "update-fresh-64", "update-fresh-1000", "update-alt-64",
                              "update-alt-1000", "update-capture-64")] + [
    Case("rewrite-warm", "rewrite", "rewrite_ns", "instantiate_ns", modes=("shim",)),  # disabled: no rewrite
    Case("rewrite-launch", "rewrite", "launch_ns", "launch_ns"),
    Case("rewrite-cold", "lockstep-rewrite", modes=("shim",)),
]


# Without --cases: the workload cases of issues 17 and 36, one harness run
# of all of them (30 rounds in about 7 minutes on an H200, start-up of the
# three processes a round dominating). --cases all: every case.
DEFAULT = ("launch", "eager", "capture-64", "capture-1000", "update-same-64", "update-fresh-64", "update-fresh-1000",
           "update-alt-64", "update-alt-1000", "update-capture-64")


def load_bars(path=os.path.join(HERE, "bars.tsv")):
    """{(case, mode): {"bar", "margin", "old_bar" (None where none)}}."""
    bars = {}
    for line in open(path):
        if not line.strip() or line.startswith("#"):
            continue
        case, mode, bar, margin, old = line.rstrip("\n").split("\t")
        bars[(case, mode)] = {"bar": float(bar), "margin": float(margin),
                              "old_bar": None if old == "-" else float(old)}
    return bars


# ---- statistics ----------------------------------------------------------

def quantile(sorted_xs, q):
    """Linear interpolation between the closest ranks of a sorted list."""
    pos = q * (len(sorted_xs) - 1)
    i = int(pos)
    j = min(i + 1, len(sorted_xs) - 1)
    return sorted_xs[i] + (sorted_xs[j] - sorted_xs[i]) * (pos - i)


def bootstrap_median(xs, n=BOOT_N, seed=BOOT_SEED, level=LEVEL):
    """(median, low, high): the median of xs and the percentile bootstrap
    interval of it (n resamples with replacement, fixed seed: reproducible)."""
    rng = random.Random(seed)
    k = len(xs)
    meds = sorted(statistics.median(rng.choices(xs, k=k)) for _ in range(n))
    a = (1 - level) / 2
    return statistics.median(xs), quantile(meds, a), quantile(meds, 1 - a)


def verdict(high, bar):
    """Issue 17's rule."""
    return high <= bar["bar"] + bar["margin"] + 1e-12


def old_verdict(med, bar):
    """The rule before issue 17: the median ratio <= the bar."""
    return med <= bar["old_bar"] + 1e-12


def mode_order(rnd):
    """The modes in round rnd's order: rotated by one per round."""
    k = rnd % len(MODES)
    return MODES[k:] + MODES[:k]


# ---- environments and runs -----------------------------------------------

def use_before():
    """Add the "before" mode: to the rotation and to every case shim has."""
    global MODES
    if "before" not in MODES:
        MODES = MODES + ("before",)
        for c in CASES:
            if "shim" in c.modes:
                c.modes = tuple(c.modes) + ("before",)


BEFORE_ENV = {}  # --before-env


def mode_env(mode, lib, log, extra=None, before=None):
    """The environment of a run in mode (log: the shim's log file path)."""
    if mode == "bare":
        return env()
    e = dict(LD_PRELOAD=before if mode == "before" else lib, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
    e.update(extra or {})
    if mode == "before":
        e.update(BEFORE_ENV)
    if mode == "disabled":
        e["CGSHIM_DISABLE"] = "1"
    return env(e)


class RunError(Exception):
    pass


def parse(out):
    """{key: float} from a run's output: "result ... median_ns X ..." lines
    (workload) and "key value" lines (rewrite_bench; "nan" kept as nan)."""
    vals = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "result":
            for k, v in zip(f[2::2], f[3::2]):
                vals[k] = float(v)
        elif len(f) == 2:
            try:
                vals[f[0]] = float(f[1])
            except ValueError:
                pass
        if f[:1] == ["rewritten"]:
            vals["rewritten"] = float(f[1])
    return vals


def check_log(mode, log):
    """The shim loaded (shim: a log file) or passed through (disabled: none)."""
    files = glob.glob(log.replace("%p", "*"))
    if (mode == "shim" or (mode == "before" and not BEFORE_ENV)) and not files:
        raise RunError("the shim run wrote no log (%s): is --lib the shim, does it load?" % log)
    if mode == "disabled" and files:
        raise RunError("CGSHIM_DISABLE=1 run wrote %s" % files[0])
    return files


class Bench:
    def __init__(self, a, tmp):
        self.a, self.tmp = a, tmp
        self.pin = [] if a.core == "none" else ["taskset", "-c", a.core]
        self.size = "quick" if a.quick else "full"

    def cmd(self, run):
        r = RUNS[run]
        return self.pin + [os.path.join(self.a.bin, r.exe)] + (r.quick if self.a.quick else r.full)

    def logpath(self, run, rnd, mode):
        return os.path.join(self.tmp, "%s-r%d-%s-%%p.jsonl" % (run, rnd, mode))

    def clean(self, files):
        if not self.a.keep_logs:
            for f in files:
                os.unlink(f)

    def one(self, run, rnd, mode):
        """One process; its parsed values."""
        log = self.logpath(run, rnd, mode)
        p = subprocess.run(self.cmd(run), env=mode_env(mode, self.a.lib, log, RUNS[run].extra, self.a.before),
                           capture_output=True, text=True, timeout=300)
        if p.returncode:
            raise RunError("%s (%s) failed, rc %d: %s" % (run, mode, p.returncode, (p.stdout + p.stderr)[-1500:]))
        v = parse(p.stdout)
        self.clean(check_log(mode, log))
        shimmed = mode in ("shim", "before")
        if run == "rewrite" and v.get("rewritten") != (1.0 if shimmed else 0.0):
            raise RunError("rewrite_bench (%s): expected %s, got: %s"
                           % (mode, "a rewrite" if shimmed else "the driver's refusal", p.stdout[-800:]))
        if run != "rewrite" and "median_ns" not in v:
            raise RunError("%s (%s): no result line in %s" % (run, mode, p.stdout[-800:]))
        return v

    def ring(self, run, rnd):
        """The three modes of run in lockstep, in round rnd's order; per mode
        {"iter": {i: ns}, "median_ns": median of them}."""
        order = mode_order(rnd)
        logs = [self.logpath(run, rnd, m) for m in order]
        outs = lockstep_ring(self.cmd(run), [mode_env(m, self.a.lib, lg, None, self.a.before) for m, lg in zip(order, logs)],
                             timeout=300)
        res = {}
        for m, lg, out in zip(order, logs, outs):
            self.clean(check_log(m, lg))
            t = iters_of(out)
            if not t:
                raise RunError("%s (%s) in lockstep: no iterations in %s" % (run, m, out[-800:]))
            res[m] = {"iter": t, "median_ns": statistics.median(t.values())}
        return res

    def cold(self, rnd):
        """One lockstep run of rewrite_lockstep.one(): {"ratios", "bare", "shim"}."""
        import rewrite_lockstep
        n, nodes = COLD[self.size]
        core = None if self.a.core == "none" else self.a.core
        try:
            ratios, tb, ts, own, drv, split = rewrite_lockstep.one(
                os.path.join(self.a.bin, "rewrite_bench"), self.a.lib, core, n, nodes, self.tmp, rnd, rnd % 2 == 0)
        except rewrite_lockstep.LockstepError as e:
            raise RunError("rewrite-cold: %s" % e)
        self.clean(glob.glob(os.path.join(self.tmp, "run%d-*.jsonl" % rnd)))
        return {"ratios": ratios, "bare": statistics.median(tb.values()), "shim": statistics.median(ts.values()),
                "own_ns": own, "driver_ns": drv}


def select(spec):
    """The cases named in spec (comma-separated names or prefixes; "all"
    every case); none: DEFAULT."""
    if not spec:
        return [c for c in CASES if c.name in DEFAULT]
    if spec.strip() == "all":
        return list(CASES)
    want = [w.strip() for w in spec.split(",") if w.strip()]
    sel = [c for c in CASES if any(c.name == w or c.name.startswith(w) for w in want)]
    unknown = [w for w in want if not any(c.name == w or c.name.startswith(w) for c in CASES)]
    if unknown:
        raise SystemExit("unknown case(s) %s; cases: %s" % (", ".join(unknown), ", ".join(c.name for c in CASES)))
    return sel


def measure(a, cases, tmp, say=print):
    """Every round of every selected run: {"procs": {run: {mode: [values per
    round]}}, "ring": {run: [per round {mode: ...}]}, "cold": [per round]}."""
    b = Bench(a, tmp)
    runs = []
    for c in cases:
        if c.run not in runs:
            runs.append(c.run)
    raw = {"procs": {}, "ring": {}, "cold": []}
    t0 = time.monotonic()
    for rnd in range(a.rounds):
        for run in runs:
            if run == "lockstep-rewrite":
                raw["cold"].append(b.cold(rnd))
            elif a.lockstep and RUNS[run].ring:
                raw["ring"].setdefault(run, []).append(b.ring(run, rnd))
            else:
                d = raw["procs"].setdefault(run, {m: [] for m in MODES})
                for m in mode_order(rnd):
                    d[m].append(b.one(run, rnd, m))
        el = time.monotonic() - t0
        if rnd == 0 or rnd + 1 == a.rounds or (rnd + 1) % 5 == 0:
            say("round %d/%d done, %.0f s elapsed, about %.0f s in all" % (rnd + 1, a.rounds, el,
                                                                         el / (rnd + 1) * a.rounds))
    return raw


def analyse(cases, raw, bars):
    """One result per (case, mode)."""
    res = []
    for c in cases:
        for m in c.modes:
            if c.run == "lockstep-rewrite":
                ratios = [statistics.median(r["ratios"]) for r in raw["cold"]]
                num = [r["shim"] for r in raw["cold"]]
                den = [r["bare"] for r in raw["cold"]]
                how = "lockstep"
            elif c.run in raw["ring"]:
                rounds = raw["ring"][c.run]
                ratios = [statistics.median(r[m]["iter"][i] / r["bare"]["iter"][i]
                                            for i in r[m]["iter"] if i in r["bare"]["iter"]) for r in rounds]
                num = [r[m]["median_ns"] for r in rounds]
                den = [r["bare"]["median_ns"] for r in rounds]
                how = "lockstep"
            else:
                d = raw["procs"][c.run]
                num = [v[c.num] for v in d[m]]
                den = [v[c.den] for v in d["bare"]]
                ratios = [x / y for x, y in zip(num, den)]
                how = "procs"
            med, lo, hi = bootstrap_median(ratios)
            bar = bars.get((c.name, m))
            r = {"case": c.name, "mode": m, "how": how, "rounds": len(ratios), "ratios": ratios,
                 "median": med, "low": lo, "high": hi,
                 "ratio_of_medians": statistics.median(num) / statistics.median(den),
                 "mode_ns": statistics.median(num), "bare_ns": statistics.median(den),
                 "bar": bar["bar"] if bar else None, "margin": bar["margin"] if bar else None,
                 "pass": verdict(hi, bar) if bar else None,
                 "old_bar": bar["old_bar"] if bar and bar["old_bar"] != bar["bar"] else None}
            r["old_pass"] = old_verdict(med, bar) if r["old_bar"] is not None else None
            res.append(r)
    return res


def table(res, say=print):
    """The table; returns (passed, failed)."""
    say("%-18s %-8s %-8s %3s %7s %17s %9s %11s %11s %6s %-4s %-13s"
        % ("case", "mode", "how", "n", "median", "95% interval", "ratio-med", "bare ns", "mode ns", "bar", "",
           "old bar"))
    passed = failed = 0
    for r in res:
        if r["bar"] is None:
            v, b = "----", "  -"
        else:
            v, b = ("PASS" if r["pass"] else "FAIL"), "%.3f" % r["bar"]
            passed, failed = passed + bool(r["pass"]), failed + (not r["pass"])
        old = "" if r["old_bar"] is None else "%.2f %s" % (r["old_bar"], "pass" if r["old_pass"] else "fail")
        say("%-18s %-8s %-8s %3d %7.3f   [%6.3f, %6.3f] %9.3f %11.1f %11.1f %6s %-4s %-13s"
            % (r["case"], r["mode"], r["how"], r["rounds"], r["median"], r["low"], r["high"], r["ratio_of_medians"],
               r["bare_ns"], r["mode_ns"], b, v, old))
    say("(median: of per-round ratios mode/bare; interval: bootstrap %d%%, %d resamples, seed %d; a bar passes when "
        "the interval's upper end <= bar + margin; old bar: the median <= it)" % (LEVEL * 100, BOOT_N, BOOT_SEED))
    say("%d passed, %d failed" % (passed, failed))
    return passed, failed


def parser():
    p = argparse.ArgumentParser(prog="bench/run.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="10 rounds, fewer iterations (sized for under 3 min on an H100)")
    p.add_argument("--rounds", type=int, help="rounds (default 30; --quick 10)")
    p.add_argument("--cases", help="comma-separated case names or prefixes, or all (default: %s)" % ",".join(DEFAULT))
    p.add_argument("--core", default="4", help="the core every run is pinned to (taskset -c), or none")
    p.add_argument("--bin", default=os.path.join(ROOT, "build-gpu", "bench-bin"), help="the workloads (bench/build.sh)")
    p.add_argument("--lib", default=os.path.join(ROOT, "build-gpu", "shim", "libcgshim.so"), help="libcgshim.so")
    p.add_argument("--json", help="write every raw number and the results to this file")
    p.add_argument("--processes", action="store_true",
                   help="the workload cases as interleaved processes (default: in lockstep)")
    p.add_argument("--lockstep", action="store_true", help=argparse.SUPPRESS)  # the default now; kept for old callers
    p.add_argument("--before", help="another libcgshim.so (e.g. before a change): a fourth mode, 'before', "
                   "interleaved with the others, reported beside shim (no bar)")
    p.add_argument("--before-env", help="K=V,...: variables added to the 'before' mode (with no --before, "
                   "the 'before' mode runs --lib), e.g. CGSHIM_LOG=warn")
    p.add_argument("--keep-logs", action="store_true", help="keep the shim's logs (their directory is printed)")
    p.add_argument("--dry", action="store_true", help="the fake workload (bench/fake_workload.py), no GPU")
    p.add_argument("--selftest", action="store_true", help="check the statistics and the driver on the fake workload")
    return p


def strict(x):
    """x for strict JSON: nan (a refused update's rewrite_ns) as null, keys as strings."""
    if isinstance(x, dict):
        return {str(k): strict(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [strict(v) for v in x]
    if isinstance(x, float) and x != x:
        return None
    return x


def fake_bin(tmp):
    """A --bin of wrappers running bench/fake_workload.py as each program."""
    d = os.path.join(tmp, "fake-bin")
    os.makedirs(d, exist_ok=True)
    for exe in sorted({r.exe for r in RUNS.values()}):
        path = os.path.join(d, exe)
        with open(path, "w") as f:
            f.write('#!/bin/sh\nexec "%s" -S "%s" %s "$@"\n' % (sys.executable, os.path.join(HERE, "fake_workload.py"),
                                                          exe))
        os.chmod(path, 0o755)
    return d


def main(argv=None, say=print):
    a = parser().parse_args(argv)
    a.lockstep = not a.processes
    if a.selftest:
        import selftest
        return selftest.main()
    if a.rounds is None:
        a.rounds = 10 if a.quick else 30
    if a.rounds < 3:
        raise SystemExit("--rounds: at least 3 (one of each mode order)")
    if a.before_env:
        BEFORE_ENV.update(kv.split("=", 1) for kv in a.before_env.split(","))
        a.before = a.before or a.lib
    if a.before:
        use_before()
    cases = select(a.cases)
    tmp = tempfile.mkdtemp(prefix="cgshim-bench-")
    if a.dry:
        a.bin, a.lib = fake_bin(tmp), "libm.so.6"  # a library every host has: preloading it changes nothing
    else:
        need = [a.lib] + [os.path.join(a.bin, RUNS[c.run].exe if c.run in RUNS else "rewrite_bench") for c in cases]
        missing = [p for p in need if not os.path.exists(p)]
        if missing:
            raise SystemExit("missing %s: run bash bench/build.sh" % ", ".join(missing))
    if a.core != "none":
        if not shutil.which("taskset"):
            raise SystemExit("taskset not found (util-linux); --core none runs unpinned")
        if not a.core.isdigit() or int(a.core) not in os.sched_getaffinity(0):
            raise SystemExit("--core %s: not one of this process's cores %s" % (a.core, sorted(os.sched_getaffinity(0))))
    say("cgshim bench: %d rounds, %s, cases %s, core %s, %s%s; logs in %s"
        % (a.rounds, "quick" if a.quick else "full", ",".join(c.name for c in cases), a.core,
           "lockstep workloads" if a.lockstep else "interleaved processes", " (DRY: fake workload)" if a.dry
           else "", tmp))
    try:
        raw = measure(a, cases, tmp, say)
    except RunError as e:
        say("ERROR %s" % e)
        return 2
    res = analyse(cases, raw, load_bars())
    passed, failed = table(res, say)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(strict({"argv": sys.argv if argv is None else argv, "rounds": a.rounds, "quick": a.quick,
                       "core": a.core, "lib": a.lib, "bin": a.bin, "lockstep": a.lockstep, "dry": a.dry,
                       "raw": raw, "results": res}), f, indent=1)
    if not a.keep_logs:
        shutil.rmtree(tmp, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
