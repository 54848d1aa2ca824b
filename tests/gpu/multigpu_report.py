#!/usr/bin/env python3
"""tests/gpu/multigpu_report.py -- `cgshim report` on the logs that
tests/gpu/multigpu brought back from a 2-GPU host without a report (no
jansson there), run here (issue 33): the per-rank and per-device views
and the cross-rank view on real two-GPU logs.

usage: python3 tests/gpu/multigpu_report.py DIR [CGSHIM]
  DIR     the run's $OUT as fetched (files_at): ranks/, nccl/, nccl_loop/,
          nccl_teardown/, nccl_skip/ (a folder that is missing is a failure)
  CGSHIM  the report tool (default build/tools/cgshim)
One line per check, closing "N passed, N failed"; the report's rank
sections are printed.
"""
import glob
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

T = cgtest.Tally()


def report(cgshim, files):
    rj = subprocess.run([cgshim, "report", "--json"] + files, capture_output=True, text=True, timeout=300)
    rt = subprocess.run([cgshim, "report"] + files, capture_output=True, text=True, timeout=300)
    doc = json.loads(rj.stdout) if rj.returncode == 0 and rj.stdout else {}
    show = False
    for ln in rt.stdout.splitlines():
        show = show or ln.startswith("== Ranks")
        if show:
            print("    " + ln)
    return doc.get("ranks") or {}, rt.stdout


def logs(d, pattern):
    return sorted(glob.glob(os.path.join(d, pattern)))


def main():
    d = sys.argv[1]
    cgshim = sys.argv[2] if len(sys.argv) > 2 else os.path.join("build", "tools", "cgshim")

    f = logs(os.path.join(d, "ranks"), "log-*.jsonl")
    if T.check(len(f) == 2, "two_process: 2 logs (%s)" % f):
        rk, _ = report(cgshim, f)
        div = [(x.get("rule"), x.get("ranks_with")) for x in rk.get("divergence", []) if x.get("what") == "violation"]
        T.check(sorted(r.get("rank") for r in rk.get("ranks", [])) == ["0", "1"], "two_process: a table per rank")
        T.check(div == [("CGS011", ["1"])], "two_process: CGS011 on rank 1 only (%s)" % div)
        gm = sorted((g.get("rank"), g.get("dev")) for g in rk.get("graphmem", []))
        T.check(("0", 0) in gm and ("1", 0) in gm, "two_process: graph memory per rank and device (%s)" % gm)

    f = logs(os.path.join(d, "nccl"), "nccl-*.jsonl")
    if T.check(len(f) == 2, "nccl_allreduce: 2 logs"):
        rk, _ = report(cgshim, f)
        w = rk.get("where") or {}
        T.check(not rk.get("divergence") and w and not w.get("first_divergence"),
                "nccl_allreduce: no divergence (%s / %s)" % (rk.get("divergence"), w.get("first_divergence")))
        T.check(all((r.get("last_launch") or {}).get("nccl") for r in w.get("ranks", [])),
                "nccl_allreduce: each rank's last launch (trace) holds NCCL kernels")

    f = logs(os.path.join(d, "nccl_loop"), "loop-*.jsonl")
    if T.check(len(f) == 2, "nccl_graph_loop: 2 logs"):
        rk, _ = report(cgshim, f)
        w = rk.get("where") or {}
        T.check(len(w.get("ranks", [])) == 2 and not w.get("first_divergence"),
                "nccl_graph_loop: no divergence (%s)" % w.get("first_divergence"))

    f = logs(os.path.join(d, "nccl_skip"), "skip-*.jsonl")
    if T.check(len(f) == 2, "nccl_skip: 2 logs"):
        rk, text = report(cgshim, f)
        fd = (rk.get("where") or {}).get("first_divergence") or {}
        T.check(fd.get("what") == "skipped" and fd.get("index") == 2 and "rank 1 skipped it" in fd.get("text", ""),
                "nccl_skip: the view names rank 1's skipped capture #2 (%s)" % fd.get("text"))

    f = logs(os.path.join(d, "nccl_teardown"), "teardown-*.jsonl")
    if T.check(len(f) == 2, "nccl_teardown: 2 logs"):
        rk, text = report(cgshim, f)
        rows = {r.get("rank"): r for r in rk.get("ranks", [])}
        T.check(all(r.get("rules", {}).get("CGS027") for r in rows.values()) and len(rows) == 2,
                "nccl_teardown: CGS027 on both ranks (%s)" % {k: r.get("rules") for k, r in rows.items()})
        T.check("CGS027" in text, "nccl_teardown: the text report names CGS027")
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
