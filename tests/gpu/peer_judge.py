#!/usr/bin/env python3
"""peer_judge.py -- the verdict of tests/gpu/peer, one line per suite.

  peer_judge.py --peer PEERDIR --allow ALLOWFILE [--min-run N] [--json FILE]
                [--expect SUITE ...] [--versions FILE] GROUPDIR...

Each GROUPDIR is laid out as run_peer.sh writes its OUTDIR:
SUITE/{bare,shim}/{timing.jsonl,junit.xml,run.json}, SUITE/not_run.json for a
suite that did not run, logs/SUITE-PID.jsonl (the shim's records). The
outcomes, the test windows and the records' attribution are read with
PEERDIR/compare.py's own functions, so the verdict and compare.txt agree.

A suite PASSes when, under the shim: no test's outcome differs from bare, the
run neither crashed nor timed out (nor did bare), no `mismatch` record was
written, and every warn/error `violation` record falls in a test that
provokes errors on purpose (ALLOWFILE) or in a test that did not pass in both
runs (listed, not judged: nothing to compare against). A violation in a test
that passes both ways, or outside any test, is a false alarm.
The closing lines: the tests run (not skipped) under the shim against
--min-run, then `N passed, N failed`. Exit status 0 only when all passed.
"""
import argparse
import collections
import fnmatch
import glob
import json
import os
import sys

RAN = ("pass", "fail", "error", "xfail", "xpass")
PYTEST_OK = (0, 1, 5)      # all passed, some failed, nothing collected


def load_allow(path):
    """-> {suite: [(pattern, why)]}; a malformed line is an error, not a skip."""
    allow = collections.defaultdict(list)
    with open(path) as f:
        for n, line in enumerate(f, 1):
            s = line.strip()
            if not s or s.startswith("#"):
                continue
            parts = s.split(None, 2)
            if len(parts) < 3:
                sys.exit(f"{path}:{n}: want 'SUITE PATTERN why', got {s!r}")
            allow[parts[0]].append((parts[1], parts[2]))
    return allow


def allowed(allow, suite, test):
    last = test.rsplit("::", 1)[-1]
    for pat, why in allow.get(suite, ()):
        if fnmatch.fnmatchcase(last, pat) or fnmatch.fnmatchcase(test, pat):
            return why
    return None


def bad_run(info):
    """-> why a run cannot be trusted ('' if it can)."""
    if not info:
        return "no run.json (never started?)"
    if info.get("timed_out"):
        return f"timed out after {info.get('timeout_s')}s"
    rc = info.get("rc")
    if rc not in PYTEST_OK:
        return f"rc={rc}" + (" (signal %d)" % (rc - 128) if isinstance(rc, int) and rc > 128 else "")
    return ""


def judge_suite(cmp, gdir, suite, allow):
    """-> dict with the suite's verdict and the evidence for it."""
    sd = os.path.join(gdir, suite)
    v = {"suite": suite, "group": os.path.basename(gdir), "reasons": [], "notes": []}
    nr = os.path.join(sd, "not_run.json")
    if os.path.exists(nr):
        v["reasons"].append("not run: " + open(nr).read().strip())
        v["ran"], v["counts"] = 0, {}
        return v
    bo, _, binfo = cmp.load_run(os.path.join(sd, "bare"))
    so, sint, sinfo = cmp.load_run(os.path.join(sd, "shim"))
    v["bare_run"], v["shim_run"] = binfo, sinfo
    v["counts"] = dict(collections.Counter(so.values()))
    v["bare_counts"] = dict(collections.Counter(bo.values()))
    v["ran"] = sum(1 for o in so.values() if o in RAN)
    crashes = []
    why_b, why_s = bad_run(binfo), bad_run(sinfo)
    if why_b:
        v["reasons"].append(f"bare run {why_b}: nothing to compare against")
    if why_s and not why_b:
        crashes.append(f"shim run {why_s} (bare rc={binfo.get('rc')})")
    elif binfo and sinfo and binfo.get("rc") != sinfo.get("rc") and not why_s:
        v["reasons"].append(f"exit status bare {binfo.get('rc')} != shim {sinfo.get('rc')}")
    died_in = [t for t, o in so.items() if o == "unfinished"]
    if died_in and not why_b:
        crashes.append("shim run ended inside " + ", ".join(died_in[:3]))
    if not so and not why_b:
        crashes.append("no test ran under the shim")
    v["crashes"] = crashes
    names = sorted(set(bo) | set(so))
    diffs = [(n, bo.get(n, "absent"), so.get(n, "absent")) for n in names
             if bo.get(n, "absent") != so.get(n, "absent")]
    v["diffs"] = diffs
    # the shim's records
    mism = collections.Counter()
    false_alarm = collections.defaultdict(collections.Counter)
    expected = collections.defaultdict(collections.Counter)
    unjudged = collections.defaultdict(collections.Counter)
    other = collections.Counter()
    nrec = 0
    for lf in sorted(glob.glob(os.path.join(gdir, "logs", f"{suite}-*.jsonl"))):
        for r in cmp.read_jsonl(lf):
            nrec += 1
            ev = r.get("ev")
            if ev not in ("violation", "mismatch") and ev not in cmp.OTHER_KINDS:
                continue
            t = cmp.attribute(r.get("ts", -1), sint)
            key = f"{r.get('rule') or '-'}:{r.get('api', '')}"
            if ev == "mismatch":
                mism[f"{t} {key}"] += 1
            elif ev == "violation":
                if r.get("severity", "warn") not in ("warn", "error"):
                    continue
                if allowed(allow, suite, t):
                    expected[t][key] += 1
                elif t in so and not (bo.get(t) == "pass" and so.get(t) == "pass"):
                    unjudged[t][key] += 1
                else:
                    false_alarm[t][key] += 1
            else:
                other[ev] += 1
    v["records"] = nrec
    v["mismatch"] = dict(mism)
    v["false_alarms"] = {t: dict(c) for t, c in false_alarm.items()}
    v["expected_violations"] = {t: dict(c) for t, c in expected.items()}
    v["unjudged_violations"] = {t: dict(c) for t, c in unjudged.items()}
    v["other_records"] = dict(other)
    if crashes:
        v["reasons"].append("crash: " + "; ".join(crashes))
    if diffs:
        v["reasons"].append(f"{len(diffs)} difference(s)")
    if mism:
        v["reasons"].append(f"{sum(mism.values())} mismatch record(s)")
    if false_alarm:
        v["reasons"].append(f"false alarm(s) in {len(false_alarm)} test(s)")
    if not binfo and not sinfo and not v["reasons"]:
        v["reasons"].append("no runs found")
    return v


def fmt_counts(c):
    return "/".join(str(c.get(k, 0)) for k in ("pass", "fail", "skip")) + \
        "".join(f" {k}={c[k]}" for k in ("error", "xfail", "xpass", "unfinished") if c.get(k))


def print_suite(v):
    ok = not v["reasons"]
    head = (f"{v['suite']}: {v['ran']} run under the shim "
            f"(pass/fail/skip {fmt_counts(v.get('counts', {}))}")
    if v.get("bare_counts") is not None:
        head += f"; bare {fmt_counts(v['bare_counts'])}"
    head += ")"
    if ok:
        ne = sum(sum(c.values()) for c in v["expected_violations"].values())
        print(f"PASS {head}, 0 differences, 0 crashes, 0 mismatch, violations only in "
              f"tests that provoke errors on purpose ({ne} in "
              f"{len(v['expected_violations'])} test(s))")
    else:
        print(f"FAIL {head}: " + "; ".join(v["reasons"]))
    for tag in ("bare_run", "shim_run"):
        i = v.get(tag) or {}
        if i:
            print(f"    {tag[:4]}: rc={i.get('rc')} wall {i.get('wall_ms', 0) / 1000:.1f}s"
                  f" (limit {i.get('timeout_s')}s){' TIMED OUT' if i.get('timed_out') else ''}")
    for n, b, s in v.get("diffs", [])[:15]:
        print(f"    DIFF {n}: bare={b} shim={s}")
    if len(v.get("diffs", [])) > 15:
        print(f"    ... {len(v['diffs']) - 15} more differences (see the json)")
    for k, c in sorted(v.get("mismatch", {}).items()):
        print(f"    MISMATCH {k} x{c}")
    for label, key in (("FALSE ALARM", "false_alarms"), ("expected", "expected_violations"),
                       ("not judged (test not passing both ways)", "unjudged_violations")):
        for t, c in sorted(v.get(key, {}).items()):
            print(f"    {label}: {t}: " + ", ".join(f"{k} x{n}" for k, n in sorted(c.items())))
    if v.get("other_records"):
        print("    for reading: " + ", ".join(f"{k}={n}" for k, n in sorted(v["other_records"].items())))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", required=True)
    ap.add_argument("--allow", required=True)
    ap.add_argument("--min-run", type=int, default=400)
    ap.add_argument("--json")
    ap.add_argument("--versions", help="a file of version lines, copied into the json")
    ap.add_argument("--expect", action="append", default=[],
                    help="a suite that must appear in some group (FAIL if absent)")
    ap.add_argument("groups", nargs="+")
    a = ap.parse_args(argv)
    sys.path.insert(0, os.path.abspath(a.peer))
    import compare as cmp      # PEERDIR/compare.py
    allow = load_allow(a.allow)
    verdicts = []
    for g in a.groups:
        for suite in sorted(os.listdir(g)):
            if os.path.isdir(os.path.join(g, suite)) and suite not in ("logs", "work", "pydeps"):
                verdicts.append(judge_suite(cmp, g, suite, allow))
    seen = {v["suite"] for v in verdicts}
    for s in a.expect:
        if s not in seen:
            verdicts.append({"suite": s, "group": "-", "ran": 0, "counts": {},
                             "reasons": ["no output at all (group never ran?)"]})
    passed = failed = 0
    for v in verdicts:
        print_suite(v)
        if v["reasons"]:
            failed += 1
        else:
            passed += 1
    total = sum(v["ran"] for v in verdicts)
    ok = total >= a.min_run
    print(f"{'PASS' if ok else 'FAIL'} total: {total} tests run (not skipped) under the shim "
          f"over {len(verdicts)} suites (bar >= {a.min_run})")
    passed, failed = passed + ok, failed + (not ok)
    print(f"{passed} passed, {failed} failed")
    if a.json:
        with open(a.json, "w") as f:
            vers = open(a.versions).read().splitlines() if a.versions else []
            json.dump({"versions": vers, "suites": verdicts, "total_run_under_shim": total,
                       "min_run": a.min_run, "passed": passed, "failed": failed},
                      f, indent=1, default=str)
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
