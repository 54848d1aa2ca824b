#!/usr/bin/env python3
"""The report's counts equal the shim's exit summary for the same processes,
over every CPU scenario program (tests/rules, tests/model, tests/policy):
each runs under the shim at the default level (a log file: info, JSONL),
with CGSHIM_ON_UPDATE_FAILURE=log and =reinstantiate; `cgshim report --json`
must give the summed exit summaries' graphs, execs, launches, updates,
update_failures, violations, captures, captures_invalidated and rewrites,
and the text report the same graphs/launches/rewrites lines.

usage: counts_check.py --cgshim EXE --lib LIBCGSHIM --standin-dir DIR PROGRAM...
"""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

KEYS = [("graphs", "graphs"), ("execs", "execs"), ("launches", "launches"), ("updates", "updates"),
        ("updates_failed", "update_failures"), ("violations", "violations"), ("captures", "captures"),
        ("captures_invalidated", "captures_invalidated"), ("rewrites", "rewrites")]

ap = argparse.ArgumentParser()
ap.add_argument("--cgshim", required=True)
ap.add_argument("--lib", required=True)
ap.add_argument("--standin-dir", required=True)
ap.add_argument("programs", nargs="+")
A = ap.parse_args()
A.cgshim, A.lib, A.standin_dir = map(os.path.abspath, (A.cgshim, A.lib, A.standin_dir))
A.programs = [os.path.abspath(p) for p in A.programs]

fails = runs = 0
base = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
for prog in A.programs:
    for policy in ("log", "reinstantiate"):
        tmp = tempfile.TemporaryDirectory(prefix="cgshim-counts-")  # removed when the next run replaces it
        d = tmp.name
        env = dict(base, LD_LIBRARY_PATH=A.standin_dir, LD_PRELOAD=A.lib, CGSHIM_ON_UPDATE_FAILURE=policy,
                   CGSHIM_LOG_FILE=os.path.join(d, "log-%p.jsonl"))
        try:
            subprocess.run([prog], env=env, cwd=d, capture_output=True, timeout=60)
        except subprocess.TimeoutExpired:
            print("FAIL %s (%s): timed out" % (os.path.basename(prog), policy))
            fails += 1
            continue
        logs = sorted(glob.glob(os.path.join(d, "log-*.jsonl")))
        shim = {}
        for p in logs:
            for line in open(p):
                r = json.loads(line)
                if r.get("ev") == "summary":
                    for _, k in KEYS:
                        shim[k] = shim.get(k, 0) + r.get(k, 0)
        name = "%s (%s)" % (os.path.basename(prog), policy)
        if not shim:
            print("FAIL %s: no exit summary written" % name)
            fails += 1
            continue
        runs += 1
        p = subprocess.run([A.cgshim, "report", "--json"] + logs, capture_output=True, text=True)
        s = json.loads(p.stdout)["summary"]
        diff = ["%s: report %s, shim %s" % (mine, s.get(mine), shim[theirs]) for mine, theirs in KEYS
                if s.get(mine) != shim[theirs]]
        text = subprocess.run([A.cgshim, "report"] + logs, capture_output=True, text=True).stdout
        for label, k in (("graphs", "graphs"), ("launches", "launches"), ("rewrites", "rewrites"),
                         ("executables", "execs")):
            if not re.search(r"^  %s\s+%d\b" % (label, shim[k]), text, re.M):
                diff.append("text line %r lacks %d" % (label, shim[k]))
        print("%s %s: %s" % ("ok  " if not diff else "FAIL", name,
                             "; ".join(diff) if diff else " ".join("%s=%d" % (k, shim[k]) for _, k in KEYS)))
        fails += bool(diff)
print("%d runs, %d failed" % (runs, fails))
sys.exit(1 if fails or not runs else 0)
