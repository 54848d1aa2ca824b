#!/usr/bin/env python3
"""A captured graph's summary from the launches the shim saw equals the one
its node walk gives (issue 36), over every CPU scenario program.

Each program runs under the shim at debug level (every capture's end
summarises its graph, so every capture the hooks saw whole is described
from its launches) with CGSHIM_SUMMARY_CHECK=1: the shim walks each such
graph through the driver's queries as well and compares the two node by
node (function, grid, block, shared memory, cooperative, name, module,
context, parameter count, hash and kept values). Fails on any difference
(the summary's launch_summary_diffs, the check's warning), on a program
without an exit summary, and when fewer than --min graphs (over all
programs) or fewer than 12 in (model_)update_capture were described from
launches at all (the check would then compare nothing). A graph described
from launches whose capture changed no dependency without a node is taken
for a chain (no edges query): the check asks the edges as well and
compares each node's dependencies (the same counter and warning); in
(model_)update_capture and `workload update-capture` every graph from
launches must have been one (launch_chains, else the chain went unchecked).

usage: summary_check.py --lib LIBCGSHIM [--standin-dir DIR] [--min N] PROGRAM...
  PROGRAM  a path, or a path and its arguments in one word ("workload
           update-capture 64 100"); --standin-dir: the CPU stand-in's
           libraries (none on a GPU host: tests/gpu/issue36)
Ends with "N passed, N failed".
"""
import argparse
import glob
import os
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--lib", required=True)
ap.add_argument("--standin-dir", default="")
ap.add_argument("--min", type=int, default=40)
ap.add_argument("programs", nargs="+")
A = ap.parse_args()
lib, standin = os.path.abspath(A.lib), os.path.abspath(A.standin_dir) if A.standin_dir else ""

fails = total = 0
base = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
for word in A.programs:
    argv = shlex.split(word)
    argv[0] = os.path.abspath(argv[0])
    name = " ".join([os.path.basename(argv[0])] + argv[1:])
    with tempfile.TemporaryDirectory(prefix="cgshim-sumcheck-") as d:
        env = cgtest.shim_env(dict(base, LD_LIBRARY_PATH=standin) if standin else base, lib, os.path.join(d, "log-%p.jsonl"), "debug",
                              {"CGSHIM_SUMMARY_CHECK": "1"})
        try:
            subprocess.run(argv, env=env, cwd=d, capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            print("FAIL %s: timed out" % name)
            fails += 1
            continue
        recs = cgtest.read_log(sorted(glob.glob(os.path.join(d, "log-*.jsonl"))))
    sums = [r for r in recs if r.get("ev") == "summary"]
    warns = [r.get("msg") for r in recs if r.get("ev") == "warning" and "SUMMARY_CHECK" in (r.get("msg") or "")]
    # the shim's note on the first graph it walked rather than described
    # from its launches, and why (shown, not judged: a first capture is walked)
    notes = [r.get("msg") for r in recs if r.get("ev") == "warning" and "summary check note" in (r.get("msg") or "")]
    taken = sum(r.get("launch_summaries", 0) for r in sums)
    diffs = sum(r.get("launch_summary_diffs", 0) for r in sums)
    chains = sum(r.get("launch_chains", 0) for r in sums)
    total += taken
    chainy = name.split()[0] in ("model_update_capture", "update_capture") or name.startswith("workload update-capture")
    bad = not sums or diffs or warns or (chainy and (taken < 12 or chains != taken))
    print("%s %s: %d graphs from launches (%d as chains), %d nodes differed%s" % (
        "FAIL" if bad else "ok  ", name, taken, chains, diffs,
        "" if sums else " (no exit summary)") + ("; " + warns[0] if warns else "") +
        ("; " + notes[0] if notes and not taken else ""))
    fails += bool(bad)
print("%s %d graphs described from launches over %d programs (at least %d)" % (
    "ok  " if total >= A.min else "FAIL", total, len(A.programs), A.min))
fails += total < A.min
print("%d passed, %d failed" % (len(A.programs) + 1 - fails, fails))
sys.exit(1 if fails else 0)
