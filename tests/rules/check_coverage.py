#!/usr/bin/env python3
"""tests/rules/check_coverage.py -- graph coverage (issue 32) on the CPU
stand-in: runs graph_coverage under libcgshim.so and checks the exit summary's
eager_kernels and graph_kernels against the counts the program prints, the
share in per mille, and CGSHIM_EXPECT_GRAPHED: below it the summary says so
(graphed_below, written at error level so stderr shows it) and the tally
file counts an error; at a share it meets, neither.

usage: check_coverage.py --prog PATH --standin-dir DIR --shim LIBCGSHIM
One line per check; exit status non-zero when any failed."""
import os
import re
import sys
import tempfile

# cgtest: the tally, the run under the shim, and (on import) programs of
# another machine (the aarch64 cross build) through MESON_EXE_WRAPPER.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, check = cgtest.prog_checker()


def check(name, ok, detail=""):
    return T.check(ok, name, str(detail) if detail and not ok else "")


def run(d, tag, extra):
    """The program under the shim at info (its own log folder d/tag), with the
    tally file d/tag.tally: (CompletedProcess, summary record, tally words)."""
    tally = os.path.join(d, tag + ".tally")
    os.mkdir(os.path.join(d, tag))
    p, recs, _ = cgtest.run([a.prog], a.shim, logdir=os.path.join(d, tag), timeout=60,
                            extra=dict(extra, LD_LIBRARY_PATH=a.standin_dir, CGSHIM_TALLY_FILE=tally))
    summ = cgtest.ev(recs, "summary")
    lines = open(tally).read().split() if os.path.exists(tally) else []
    return p, (summ[0] if summ else {}), lines


with tempfile.TemporaryDirectory() as d:
    p, s, _ = run(d, "plain", {})
    check("program exits 0", p.returncode == 0, p.stdout + p.stderr)
    m = re.search(r"eager (\d+) graphed (\d+)", p.stdout)
    eager, graphed = (int(m.group(1)), int(m.group(2))) if m else (-1, -1)
    check("eager_kernels %s == the program's %d" % (s.get("eager_kernels"), eager), s.get("eager_kernels") == eager)
    check("graph_kernels %s == the program's %d" % (s.get("graph_kernels"), graphed), s.get("graph_kernels") == graphed)
    want = graphed * 1000 // (eager + graphed) if eager + graphed > 0 else None
    check("graphed_permille %s == %s" % (s.get("graphed_permille"), want), s.get("graphed_permille") == want)
    check("no expectation: no graphed_below", "graphed_below" not in s, s)

    p, s, tally = run(d, "below", {"CGSHIM_EXPECT_GRAPHED": "0.95"})
    check("below: program exits 0, output unchanged", p.returncode == 0 and m and m.group(0) in p.stdout)
    check("below: graphed_below true, expectation 950", s.get("graphed_below") is True and
          s.get("expect_graphed_permille") == 950, s)
    check("below: an error-level finding in the tally file", len(tally) >= 3 and int(tally[1]) >= 1, tally)

    p, s, tally = run(d, "met", {"CGSHIM_EXPECT_GRAPHED": "0.5"})
    check("met: graphed_below false", s.get("graphed_below") is False, s)
    check("met: no error-level finding", not tally or int(tally[1]) == 0, tally)
T.finish(exit=True)
