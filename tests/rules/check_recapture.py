#!/usr/bin/env python3
"""tests/rules/check_recapture.py -- re-capture churn (issue 32, CGS026) on the
CPU stand-in: runs recapture (tests/rules/recapture.c) bare and under
libcgshim.so and checks, per capture site (the function named in its begin
site): the rule fires exactly once where one site captured one graph 10
times, with the count, and never for a site's distinct graphs (one per batch
size) or below the threshold; the exit's recapture records count captures,
instantiations, launches, fingerprints per site and buffer sets; the
threshold follows CGSHIM_CHURN_THRESHOLD (0: off); outputs equal bare.

usage: check_recapture.py --prog PATH --standin-dir DIR --shim LIBCGSHIM
One line per check; exit status non-zero when any failed."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, check = cgtest.prog_checker("the launcher: its report's \"Captures made again\" table is checked too")
SITES = ("cap_same", "cap_batch", "cap_buffers", "cap_nine", "cap_forked")


def check(name, ok, detail=""):
    return T.check(ok, name, str(detail) if detail and not ok else "")


def site_of(r, key):
    frames = r.get(key) or []
    for f in frames if isinstance(frames, list) else [frames]:
        for s in SITES:
            if ":%s+" % s in f:
                return s
    return None


def run(d, tag, extra):
    os.mkdir(os.path.join(d, tag))
    p, recs, _ = cgtest.run([a.prog], a.shim, logdir=os.path.join(d, tag), timeout=60,
                            extra=dict(extra, LD_LIBRARY_PATH=a.standin_dir))
    v = {}
    for r in cgtest.viol(recs, "CGS026"):
        v.setdefault(site_of(r, "begin_site"), []).append(r)
    rc = {}
    for r in cgtest.ev(recs, "recapture"):
        rc.setdefault(site_of(r, "site"), []).append(r)
    return p, recs, v, rc


env = cgtest.clean_env()
env["LD_LIBRARY_PATH"] = a.standin_dir
bare = subprocess.run([a.prog], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=60)
check("bare: exits 0", bare.returncode == 0, bare.stdout[-400:])

with tempfile.TemporaryDirectory() as d:
    p, recs, v, rc = run(d, "default", {})
    logs = [os.path.join(d, "default", f) for f in os.listdir(os.path.join(d, "default"))]
    check("shim: exits 0, output equal to bare", p.returncode == 0 and p.stdout == bare.stdout, p.stdout[-300:])
    for s in ("cap_same", "cap_batch", "cap_buffers", "cap_forked"):
        mine = v.get(s, [])
        check("%s: CGS026 exactly once (%d)" % (s, len(mine)), len(mine) == 1, [r.get("msg") for r in mine])
        if mine:
            r = mine[0]
            check("%s: named at the 10th capture, with the count (captures %s)" % (s, r.get("captures")),
                  r.get("captures") == 10 and "10 times" in r.get("msg", "") and r.get("severity") == "hint", r)
            check("%s: the cost so far (instantiations %s, capture_ns %s, wasted_ns %s)" % (
                s, r.get("instantiations"), r.get("capture_ns"), r.get("wasted_ns")),
                r.get("instantiations") == 9 and r.get("capture_ns", 0) > 0 and "wasted_ns" in r
                and "graph_mem_bytes" in r, r)
    check("cap_nine: no CGS026 below the threshold", "cap_nine" not in v, v.get("cap_nine"))
    check("every CGS026 has a site (%s)" % sorted(k or "-" for k in v), None not in v)

    def one(s):
        rows = rc.get(s, [])
        check("%s: one recapture record (%d)" % (s, len(rows)), len(rows) == 1, rows)
        return rows[0] if rows else {}
    r = one("cap_same")
    check("cap_same: 15 captures, 15 instantiations, 15 launches, 1 buffer set (%s %s %s %s)" % (
        r.get("captures"), r.get("instantiations"), r.get("launches"), r.get("buffer_sets")),
        (r.get("captures"), r.get("instantiations"), r.get("launches"), r.get("buffer_sets")) == (15, 15, 15, 1))
    check("cap_same: wasted_ns below capture_ns + instantiate_ns, above 0",
          0 < r.get("wasted_ns", 0) < r.get("capture_ns", 0) + r.get("instantiate_ns", 0) + 1, r)
    r = one("cap_batch")
    check("cap_batch: batch size 4 captured 13 times, its site has 12 fingerprints (%s, %s)" % (
        r.get("captures"), r.get("fingerprints_at_site")),
        r.get("captures") == 13 and r.get("fingerprints_at_site") == 12)
    check("cap_batch: 13 launches, 1 of them by an executable alive at exit (%s)" % r.get("launches"),
          r.get("launches") == 13)
    r = one("cap_buffers")
    check("cap_buffers: the same graph over 3 buffer sets (%s)" % r.get("buffer_sets"), r.get("buffer_sets") == 3)
    r = one("cap_nine")
    check("cap_nine: 9 captures recorded at exit (%s)" % r.get("captures"), r.get("captures") == 9)
    r = one("cap_forked")
    check("cap_forked: 10 captures over two streams (%s, %s nodes)" % (r.get("captures"), r.get("nodes")),
          r.get("captures") == 10 and r.get("nodes", 0) >= 2)
    check("no warn or error record", not [x for x in cgtest.viol(recs) if x.get("severity") in ("warn", "error")],
          [x.get("rule") for x in cgtest.viol(recs)])

    if a.cgshim:
        rep = subprocess.run([a.cgshim, "report"] + logs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        tab = rep.stdout.split("== Captures made again")[1].split("\n==")[0] if "== Captures made again" in rep.stdout else ""
        rows = [l.split() for l in tab.splitlines()[2:] if l.strip() and not l.strip().startswith("(")]
        same = [r for r in rows if "cap_same" in " ".join(r)]
        check("report: a Captures made again table, one row per site and graph (%d rows)" % len(rows), len(rows) == 5,
              rep.stdout[-600:])
        check("report: cap_same's row: 1 graph, 15 captures, 15 instantiations (%s)" % (same[:1]),
              bool(same) and same[0][1:4] == ["1", "15", "15"])
        js = subprocess.run([a.cgshim, "report", "--json"] + logs, stdout=subprocess.PIPE, text=True)
        try:
            doc = json.loads(js.stdout)
        except ValueError:
            doc = {}
        check("report --json: recaptures, the most wasted first (%d)" % len(doc.get("recaptures", [])),
              len(doc.get("recaptures", [])) == 5 and all(
                  x["wasted_ns"] >= y["wasted_ns"] for x, y in zip(doc["recaptures"], doc["recaptures"][1:])))
    p, recs, v, rc = run(d, "three", {"CGSHIM_CHURN_THRESHOLD": "3"})
    r = (v.get("cap_same") or [{}])[0]
    check("CGSHIM_CHURN_THRESHOLD=3: cap_same named once, at 3 captures (%s)" % r.get("captures"),
          len(v.get("cap_same", [])) == 1 and r.get("captures") == 3)
    check("CGSHIM_CHURN_THRESHOLD=3: cap_nine named too", len(v.get("cap_nine", [])) == 1)

    p, recs, v, rc = run(d, "off", {"CGSHIM_CHURN_THRESHOLD": "0"})
    check("CGSHIM_CHURN_THRESHOLD=0: no CGS026, no recapture record, output equal",
          not v and not rc and p.stdout == bare.stdout, (list(v), list(rc)))
T.finish(exit=True)
