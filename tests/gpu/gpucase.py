"""tests/gpu/gpucase.py -- the GPU check scripts' face of the one test
harness (tests/harness/cgtest.py): a program run bare or under the shim (its
JSONL records read back), one PASS/FAIL line per case, and the closing
'N passed, N failed' line with the exit status. The interface the scripts
use is kept: run, case, calls, finish, results, only."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

tally = cgtest.Tally()
results = tally.results  # a script may append its own case results (issue14.py)
only = ""  # run only the cases whose name starts with this


def run(cmd, lib=None, level="info", extra=None, logdir=None, timeout=400, cwd=None):
    """Run cmd with the caller's environment less LD_PRELOAD and CGSHIM_*;
    under the shim (lib given) at `level`, JSONL to a fresh folder. Returns
    (CompletedProcess, records, log files)."""
    return cgtest.run(cmd, lib, level, extra, logdir=logdir, timeout=timeout, cwd=cwd)


def case(name):
    """Decorator: run the case now; an AssertionError is its failure, any
    other exception a failure of the harness (counted the same)."""
    def deco(fn):
        if name.startswith(only):
            tally.case(name, fn)
        return fn
    return deco


calls = cgtest.calls


def finish():
    tally.finish(exit=True)
