"""bench/abrun.py -- the A/B harness the bench/*_ab.py scripts share.

A bare run gets the caller's environment without LD_PRELOAD or any CGSHIM_*
variable; a shim run adds what the script asks for. Pairs alternate their
order (bare first, then shim first) so drift hits both sides alike, and a
bar is judged on the median of the per-pair ratios: the two runs of a pair
are back to back and share the host's speed level, which on the lent VM
moves ~2x between runs (the ratio of the medians pools pairs from different
levels; the scripts print it too).

CGSHIM_BENCH_PIN="taskset -c 4": run both sides on the same core.

Lockstep (lockstep_pair): both sides run at once on one core and take turns
per iteration (bench/baton.h), so each pair of iterations shares the speed
of the moment; bench/lockstep.py and bench/rewrite_lockstep.py judge bars on
the median of the per-iteration ratios."""
import json
import os
import shlex
import statistics
import subprocess
import sys

PIN = shlex.split(os.environ.get("CGSHIM_BENCH_PIN", ""))


def env(extra=None):
    """The environment of a run: bare when extra is None."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    if extra:
        e.update(extra)
    return e


def interleave(pairs, run, show=None):
    """Run run(False) and run(True) PAIRS times, alternating which goes first;
    show(i, bare, shim) after each pair. Returns the lists (bare, shim)."""
    bare, shim = [], []
    for i in range(pairs):
        if i % 2 == 0:
            b = run(False)
            s = run(True)
        else:
            s = run(True)
            b = run(False)
        bare.append(b)
        shim.append(s)
        if show:
            show(i, b, s)
    return bare, shim


def pair_median(shim, bare):
    """Median over pairs of shim / bare."""
    return statistics.median(s / b for s, b in zip(shim, bare))


def lockstep_pair(cmd, env_bare, env_shim, bare_first, timeout=600):
    """Run cmd bare and under the shim at once, in lockstep (bench/baton.h):
    the two processes pass a baton after every iteration. Pin both to one
    core in cmd. Returns the two stdouts, bare first; a failing side ends
    the script with both sides' output."""
    a_r, b_w = os.pipe()  # shim -> bare
    b_r, a_w = os.pipe()  # bare -> shim
    eb, es = dict(env_bare), dict(env_shim)
    eb["BENCH_BATON"] = "%d,%d,%d" % (a_r, a_w, 1 if bare_first else 0)
    es["BENCH_BATON"] = "%d,%d,%d" % (b_r, b_w, 0 if bare_first else 1)
    pb = subprocess.Popen(cmd, env=eb, pass_fds=(a_r, a_w), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    ps = subprocess.Popen(cmd, env=es, pass_fds=(b_r, b_w), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    for fd in (a_r, a_w, b_r, b_w):
        os.close(fd)  # a side whose partner exits then reads EOF and goes on alone
    ob, erb = pb.communicate(timeout=timeout)
    os_, ers = ps.communicate(timeout=timeout)
    if pb.returncode or ps.returncode:
        print("lockstep run failed: rc %d %s | rc %d %s"
              % (pb.returncode, (ob + erb)[-800:], ps.returncode, (os_ + ers)[-800:]))
        sys.exit(1)
    return ob, os_


def rewrite_records(paths):
    """From the shim's JSONL logs: (every "rewrite" record, and for each fresh
    re-instantiation in order the pair (instantiate_ns of the driver's
    instantiation, dur_ns of the update call around it))."""
    recs, pairs = [], []
    for f in paths:
        pending = {}
        for line in open(f):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            key = (r.get("tid"), r.get("exec"))
            if r.get("ev") == "rewrite":
                recs.append(r)
                if "instantiate_ns" in r:
                    pending[key] = r["instantiate_ns"]
            elif r.get("ev") == "call" and str(r.get("api", "")).startswith("cuGraphExecUpdate") \
                    and r.get("rewritten") and "dur_ns" in r and key in pending:
                pairs.append((pending.pop(key), r["dur_ns"]))
    return recs, pairs


def iters(out, col=2):
    """{i: value} from the "iter I VALUE [START]" lines of a lockstep run
    (col=3: the iteration's start, where the bench prints it)."""
    t = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) > col and f[0] == "iter":
            t[int(f[1])] = float(f[col])
    return t
