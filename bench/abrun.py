"""bench/abrun.py -- the A/B harness the bench/*_ab.py scripts share.

A bare run gets the caller's environment without LD_PRELOAD or any CGSHIM_*
variable; a shim run adds what the script asks for. Pairs alternate their
order (bare first, then shim first) so drift hits both sides alike, and a
bar is judged on the median of the per-pair ratios: the two runs of a pair
are back to back and share the host's speed level, which on the lent VM
moves ~2x between runs (the ratio of the medians pools pairs from different
levels; the scripts print it too).

CGSHIM_BENCH_PIN="taskset -c 4": run both sides on the same core."""
import os
import shlex
import statistics

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
