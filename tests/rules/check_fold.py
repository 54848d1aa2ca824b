#!/usr/bin/env python3
"""tests/rules/check_fold.py -- repeats folded and the stderr print limit
(issue 31) on the CPU stand-in, with tests/rules/fold_updates.c:

- 1,000 failing updates of one exec from one call site: one CGS001 record,
  then (exit) one "repeat" record whose count is 1,000, the summary's
  rules.CGS001 1,000; on stderr (the default sink) 2 lines: the record and
  the closing "folded" line.
- 1,000 execs each updated once (1,000 keys): in a log file every record;
  on stderr at most CGSHIM_PRINT_LIMIT + 1 lines (default and 5), the last
  saying how many were not printed; CGSHIM_PRINT_LIMIT=0 prints them all.

usage: check_fold.py --prog PATH --standin-dir DIR --shim LIBCGSHIM"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, _ = cgtest.prog_checker("the cgshim launcher: its report's totals are checked too")
N = 1000
DEFAULT_LIMIT = 20  # shim/config.def


def run(mode, extra, log=None):
    env = cgtest.clean_env()
    env["LD_LIBRARY_PATH"] = a.standin_dir
    env["LD_PRELOAD"] = a.shim
    if log:
        env.update(CGSHIM_LOG_FILE=log, CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG="info")
    env.update(extra)
    p = subprocess.run([a.prog, mode, str(N)], env=env, capture_output=True, text=True, timeout=120)
    T.check(p.returncode == 0 and p.stdout.strip().splitlines()[-1:] == ["failed %d" % N],
            "%s %s: every update failed with 910 TopologyChanged (%r, exit %d)" % (mode, extra, p.stdout.strip(),
                                                                                 p.returncode))
    return p


def lines(text):
    """The records, one string each: a violation or another warning (the
    closing "folded" one) in the text format is a header line followed by
    indented lines (shim/log-text.c), joined here."""
    out = []
    for l in text.splitlines():
        if not l.strip():
            continue
        if l[0].isspace() and out:
            out[-1] += "\n" + l
        else:
            out.append(l)
    return out


with tempfile.TemporaryDirectory(prefix="cgs-fold-") as tmp:
    # one key: folded
    log = os.path.join(tmp, "same.jsonl")
    run("same", {}, log)
    recs = cgtest.read_log(log)
    v = [r for r in recs if r.get("ev") == "violation"]
    T.check(len(v) == 1 and v[0].get("rule") == "CGS001",
            "same: one CGS001 record for %d failing updates of one exec at one site (got %d)" % (N, len(v)))
    rep = [r for r in recs if r.get("ev") == "repeat"]
    T.check(len(rep) == 1 and rep[0].get("count") == N and rep[0].get("repeats") == N - 1
            and rep[0].get("rule") == "CGS001" and rep[0].get("exec") == (v[0].get("exec") if v else None)
            and rep[0].get("site") == (v[0].get("site") if v else None),
            "same: one repeat record, count %d, the violation's exec and site (%s)" % (
                N, [(r.get("rule"), r.get("count")) for r in rep]))
    summ = [r for r in recs if r.get("ev") == "summary"]
    T.check(summ and summ[-1].get("rules", {}).get("CGS001") == N and summ[-1].get("repeats_folded") == N - 1,
            "same: the exit summary counts CGS001 %d, repeats_folded %d (%s)" % (
                N, N - 1, summ and (summ[-1].get("rules"), summ[-1].get("repeats_folded"))))
    fo = [r for r in recs if r.get("ev") == "folded"]
    T.check(len(fo) == 1 and fo[0].get("repeats") == N - 1 and fo[0].get("unprinted") == 0
            and fo[0].get("rules", {}).get("CGS001") == N,
            "same: one folded record, %d repeats, 0 unprinted (a log file has no limit)" % (N - 1))
    nodes = [r for r in recs if r.get("ev") == "node"]
    T.check(0 < len(nodes) <= 3, "same: the nodes of the failing update written once, not per repeat (%d)" % len(nodes))
    if a.cgshim:
        rp = subprocess.run([a.cgshim, "report", "--json", log], capture_output=True, text=True, timeout=60)
        doc = json.loads(rp.stdout) if rp.returncode == 0 else {}
        rows = [r for r in doc.get("violations", []) if r.get("rule") == "CGS001"]
        T.check(len(rows) == 1 and rows[0].get("count") == N and rows[0].get("repeats") == N - 1
                and doc.get("summary", {}).get("violations_by_severity", {}).get("error") == N,
                "same: the report's CGS001 row says x%d (%d repeats), %d errors by severity (%s)" % (
                    N, N - 1, N, [(r.get("count"), r.get("repeats")) for r in rows]))
    p = run("same", {})
    err = lines(p.stderr)
    T.check(len(err) == 2 and " error violation " in err[0] and "CGS001" in err[0] and " folded " in err[1]
            and "999 repeats" in err[1] and "not printed" not in err[1],
            "same on stderr: the record and the closing line (%d lines: %s)" % (len(err), [l[:90] for l in err[:3]]))

    # 1,000 keys: every record in a file, the limit on stderr
    log = os.path.join(tmp, "many.jsonl")
    run("many", {}, log)
    recs = cgtest.read_log(log)
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    T.check(len(v) == N, "many: a log file gets all %d CGS001 records (got %d)" % (N, len(v)))
    T.check(not [r for r in recs if r.get("ev") == "repeat"], "many: no repeat record (no key seen twice)")
    for extra, limit in (({}, DEFAULT_LIMIT), ({"CGSHIM_PRINT_LIMIT": "5"}, 5)):
        p = run("many", extra)
        err = lines(p.stderr)
        viol = [l for l in err if " violation CGS" in l]
        T.check(len(err) <= limit + 1 and len(viol) == limit,
                "many %s on stderr: %d lines (at most %d), %d violation records (want %d)" % (
                    extra, len(err), limit + 1, len(viol), limit))
        T.check(bool(err) and " folded" in err[-1].split("\n")[0] and ("%d violation records not printed" % (N - limit)) in err[-1]
                and ("CGSHIM_PRINT_LIMIT=%d" % limit) in err[-1],
                "many %s: the last line says %d were not printed (%s)" % (extra, N - limit, err and err[-1][:160]))
    # 1,000 execs one after the other: a destroyed exec's handle comes back,
    # and the next exec at it is another object, not a repeat (its exec_id)
    log = os.path.join(tmp, "reuse.jsonl")
    p = run("reuse", {}, log)
    handles = int(p.stdout.split("handles ")[1].split()[0]) if "handles " in p.stdout else -1
    recs = cgtest.read_log(log)
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    # ASan's quarantine gives no freed block back soon: there the case only
    # shows 1,000 records for 1,000 handles
    if os.environ.get("CGSHIM_TEST_SANITIZED", "none") in ("", "none"):
        T.check(0 < handles < N, "reuse: the driver gave handles again (%d handles for %d execs)" % (handles, N))
    else:
        print("reuse: %d handles for %d execs (a sanitizer's allocator: reuse not judged)" % (handles, N))
    T.check(len(v) == N and len({r.get("exec_id") for r in v}) == N,
            "reuse: %d CGS001 records, one per exec, each its own exec_id (got %d, %d ids)"
            % (N, len(v), len({r.get("exec_id") for r in v})))
    T.check(not [r for r in recs if r.get("ev") == "repeat"], "reuse: no repeat record (no exec seen twice)")
    p = run("many", {"CGSHIM_PRINT_LIMIT": "0"})
    viol = [l for l in lines(p.stderr) if " violation CGS" in l]
    T.check(len(viol) == N, "many, CGSHIM_PRINT_LIMIT=0: all %d printed (got %d)" % (N, len(viol)))

sys.exit(T.finish())
