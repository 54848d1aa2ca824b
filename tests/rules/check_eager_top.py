#!/usr/bin/env python3
"""tests/rules/check_eager_top.py -- the top eager kernels by call site
(issue 32, coverage) on the CPU stand-in: runs eager_top under libcgshim.so
and checks the exit's eager_top records against the counts the program
prints (site, kernel, launches):
- CGSHIM_EAGER_SAMPLE=1: one row per site, launches equal to the program's
  (the worker thread's launches from site_a and site_c merged into the main
  thread's rows), exact, in order; samples == eager_kernels;
- the default period (256): the same three rows in the same order, each
  estimate within 35% of the count (the draws are seeded the same in every
  run and every thread, so a run repeats: ~270 samples, the smallest row
  ~43 of them, 35% is over 2 sigma), the estimates summing to the exact
  eager total within 1 per row (rounding);
- below CGSHIM_EXPECT_GRAPHED, logging to stderr at the default level: the
  rows are written at error with the summary;
- CGSHIM_EAGER_SAMPLE=0: no eager_top record, no eager_sample field;
- fork: the child's summary counts only its own launches (its row of
  site_b: FORKED, exact), the parent's are unchanged;
- with --cgshim: the report's Coverage section lists both processes and
  the rows, and --json's coverage.top_eager equals the records.
Sites are cut to their first frame (CGSHIM_BACKTRACE=1), which the two
threads share.

usage: check_eager_top.py --prog PATH --standin-dir DIR --shim LIBCGSHIM [--cgshim LAUNCHER]
One line per check; exit status non-zero when any failed."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--prog", required=True)
ap.add_argument("--standin-dir", required=True)
ap.add_argument("--shim", required=True)
ap.add_argument("--cgshim", help="the launcher: its report's Coverage section is checked too")
a = ap.parse_args()
T = cgtest.Tally()


def check(name, ok, detail=""):
    return T.check(ok, name, str(detail) if detail and not ok else "")


def run(d, tag, extra, args=()):
    os.mkdir(os.path.join(d, tag))
    env = {"LD_LIBRARY_PATH": a.standin_dir, "CGSHIM_BACKTRACE": "1", "CGSHIM_PYTHON_FRAMES": "0"}
    env.update(extra)
    p, recs, _ = cgtest.run([a.prog] + list(args), a.shim, logdir=os.path.join(d, tag), timeout=300, extra=env)
    return p, recs


def want_of(out):
    """[(site, kernel, launches)] as the program printed them, most first."""
    rows = [(m.group(1), m.group(2), int(m.group(3)))
            for m in re.finditer(r"^(site_\w) (\S+) (\d+)$", out, re.M)]
    return sorted(rows, key=lambda r: -r[2])


def rows_of(recs, pid):
    return sorted([r for r in cgtest.ev(recs, "eager_top") if r.get("pid") == pid], key=lambda r: r.get("rank"))


def site_fn(r):
    """The program's function named by the row's first frame, or None."""
    m = re.search(r"site_\w", (r.get("site") or [""])[0])
    return m.group(0) if m else None


def summary_of(recs, pid):
    s = [r for r in cgtest.ev(recs, "summary") if r.get("pid") == pid]
    return s[0] if s else {}


with tempfile.TemporaryDirectory() as d:
    # every launch a sample: the counts themselves
    p, recs = run(d, "exact", {"CGSHIM_EAGER_SAMPLE": "1"}, ["fork"])
    check("exact: program exits 0", p.returncode == 0, p.stdout[-2000:] + p.stderr[-2000:])
    want = want_of(p.stdout)
    check("exact: the program printed its three sites", len(want) == 3, p.stdout[-500:])
    pids = {r.get("pid") for r in cgtest.ev(recs, "summary")}
    m = re.search(r"^child (\d+) site_b (\S+) (\d+)$", p.stdout, re.M)
    child = int(m.group(1)) if m else None
    parent = next(iter(pids - {child}), None) if len(pids) == 2 else None
    check("exact: two summaries, the parent's and the child's", parent is not None and child in pids, pids)
    rows, s = rows_of(recs, parent), summary_of(recs, parent)
    got = [(site_fn(r), r.get("kernel"), r.get("launches")) for r in rows]
    check("exact: rows %s == the program's %s" % (got, want), got == want)
    check("exact: every row exact, samples == launches", rows and all(r.get("exact") is True and
                                                                    r.get("samples") == r.get("launches")
                                                                    for r in rows), rows)
    eager = sum(w[2] for w in want)
    check("exact: eager_kernels %s == %d, eager_samples == it, eager_sites 3, eager_sample 1" %
          (s.get("eager_kernels"), eager),
          s.get("eager_kernels") == eager and s.get("eager_samples") == eager and s.get("eager_sites") == 3 and
          s.get("eager_sample") == 1, s)
    check("exact: graph_kernels %s == 20 (the graph's kernels are not eager)" % s.get("graph_kernels"),
          s.get("graph_kernels") == 20)
    check("exact: every row names its function", rows and all(r.get("function", "0x0") != "0x0" for r in rows), rows)
    # fork: the child starts fresh
    crow, cs = rows_of(recs, child), summary_of(recs, child)
    cgot = [(site_fn(r), r.get("kernel"), r.get("launches")) for r in crow]
    cwant = [("site_b", m.group(2), int(m.group(3)))] if m else None
    check("fork: the child's rows %s == its own launches %s" % (cgot, cwant), cgot == cwant)
    check("fork: the child's eager_kernels %s == %s" % (cs.get("eager_kernels"), cwant and cwant[0][2]),
          cwant and cs.get("eager_kernels") == cwant[0][2] and cs.get("eager_samples") == cwant[0][2], cs)

    if a.cgshim:
        logs = sorted(glob.glob(os.path.join(d, "exact", "log-*.jsonl")))
        rep = subprocess.run([a.cgshim, "report"] + logs, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        sec = rep.stdout.split("== Coverage", 1)[1].split("\n== ", 1)[0] if "== Coverage" in rep.stdout else ""
        lines = [ln.split() for ln in sec.splitlines()]
        top = [ln for ln in lines if len(ln) >= 6 and ln[0] in (str(parent), str(child)) and ln[1].isdigit() and
               ln[2].isdigit() and len(ln[1]) < 4]
        check("report: a Coverage section with both processes (%s)" % sec[:60].strip(),
              rep.returncode == 0 and all(any(ln and ln[0] == str(p) and len(ln) >= 3 and ln[1] == str(e) for ln in
                                              lines) for p, e in ((parent, eager), (child, cwant and cwant[0][2]))),
              rep.stdout[-3000:] + rep.stderr[-1000:])
        check("report: the top eager rows, exact counts: %s" % [t[:5] for t in top],
              sorted((int(t[0]), t[2], t[4]) for t in top) ==
              sorted([(parent, str(w[2]), w[1]) for w in want_of(p.stdout)] + [(child, str(cwant[0][2]), cwant[0][1])]))
        js = subprocess.run([a.cgshim, "report", "--json"] + logs, stdout=subprocess.PIPE, text=True)
        doc = json.loads(js.stdout) if js.returncode == 0 else {}
        jt = [(r.get("pid"), r.get("launches"), r.get("kernel")) for r in doc.get("coverage", {}).get("top_eager", [])]
        check("report --json: coverage.top_eager equals the records",
              sorted(jt, key=str) == sorted([(r.get("pid"), r.get("launches"), r.get("kernel"))
                                             for r in cgtest.ev(recs, "eager_top")], key=str), jt)

    # the default period: estimates
    p, recs = run(d, "sampled", {})
    check("sampled: program exits 0", p.returncode == 0, p.stderr[-2000:])
    want = want_of(p.stdout)
    s = summary_of(recs, next(iter({r.get("pid") for r in cgtest.ev(recs, "summary")}), None))
    rows = sorted(cgtest.ev(recs, "eager_top"), key=lambda r: r.get("rank"))
    got = [(site_fn(r), r.get("kernel"), r.get("launches")) for r in rows]
    check("sampled: eager_sample 256, eager_kernels exact",
          s.get("eager_sample") == 256 and s.get("eager_kernels") == sum(w[2] for w in want), s)
    check("sampled: the rows' sites and kernels in the program's order: %s" % got,
          [g[:2] for g in got] == [w[:2] for w in want])
    check("sampled: each estimate within 35%%: %s against %s" % ([g[2] for g in got], [w[2] for w in want]),
          len(got) == len(want) and all(abs(g[2] - w[2]) <= 0.35 * w[2] for g, w in zip(got, want)))
    check("sampled: not exact, and sampled: %d samples for %d launches" %
          (s.get("eager_samples", 0), s.get("eager_kernels", 0)),
          rows and all(r.get("exact") is False for r in rows) and
          0 < s.get("eager_samples", 0) < s.get("eager_kernels", 0) // 64)
    check("sampled: the estimates sum to the exact total",
          abs(sum(g[2] or 0 for g in got) - s.get("eager_kernels", -9)) <= len(got))
    check("sampled: samples of the rows == eager_samples",
          sum(r.get("samples", 0) for r in rows) == s.get("eager_samples"))

    # below CGSHIM_EXPECT_GRAPHED, the log on stderr at its default level: the
    # summary and the rows at error, so stderr names the kernels
    p, _ = run(d, "below", {"CGSHIM_EXPECT_GRAPHED": "0.95", "CGSHIM_LOG_FILE": "", "CGSHIM_LOG": "auto",
                            "CGSHIM_LOG_FORMAT": "auto"})
    # a record's header line (the text format writes a warn or error
    # record as a block: the header, then indented lines) or a single line
    errs = [ln for ln in p.stderr.splitlines() if re.search(r" error eager_top( |$)", ln)]
    check("below: stderr has the summary and the 3 rows at error (%d rows)" % len(errs),
          len(errs) == 3 and any(re.search(r" error summary( |$)", ln) for ln in p.stderr.splitlines()) and
          "site_a" in p.stderr.split(errs[0], 1)[-1], p.stderr[-1500:])

    # off
    p, recs = run(d, "off", {"CGSHIM_EAGER_SAMPLE": "0"})
    s = cgtest.ev(recs, "summary")
    check("off: no eager_top, no eager_sample; eager_kernels still counted",
          not cgtest.ev(recs, "eager_top") and s and "eager_sample" not in s[0] and s[0].get("eager_kernels", 0) > 0,
          s)
T.finish(exit=True)
