#!/usr/bin/env python3
"""Tests of what cgshim gives a CI job (issue 34; meson suite 'tools'):
exit codes and the ERROR SUMMARY line, baselines, SARIF and JUnit, labels
(NVTX and cgshim/label.h) and the pytest plugin.

usage: test_ci.py CASE --cgshim EXE --lib LIBCGSHIM --standin-dir DIR --app CI_APP
                       [--schema SARIF_SCHEMA] [--python-dir DIR]

Every case runs tests/tools/ci_app.c under the real shim and the stand-in
driver. Exit 77 means SKIP.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
A = None
TMP = None


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def clean_env(extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CGSHIM_", "NVTX_")) and k != "LD_PRELOAD"}
    env["CGSHIM_LIB"] = A.lib
    env["LD_LIBRARY_PATH"] = A.standin_dir + ((":" + os.environ["LD_LIBRARY_PATH"])
                                              if os.environ.get("LD_LIBRARY_PATH") else "")
    opts = env.get("ASAN_OPTIONS", "")
    env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "verify_asan_link_order=0"
    if extra:
        env.update(extra)
    return env


def run(argv, env=None, cwd=None, timeout=120):
    p = subprocess.run(argv, env=env or clean_env(), cwd=cwd, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


def launch(mode, *opts, cwd=None, env=None):
    """ci_app MODE under the launcher; returns rc, stderr, the logs written."""
    d = cwd or tempfile.mkdtemp(dir=TMP)
    before = set(os.listdir(d))
    rc, out, err = run([A.cgshim] + list(opts) + ["--", A.app, mode], cwd=d, env=env)
    logs = sorted(os.path.join(d, f) for f in set(os.listdir(d)) - before if f.endswith(".jsonl"))
    return rc, err, logs


def records(paths, ev=None):
    out = []
    for p in paths:
        for line in open(p, errors="replace"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            if isinstance(r, dict) and (ev is None or r.get("ev") == ev):
                out.append(r)
    return out


def summary_line(err):
    lines = [l for l in err.splitlines() if l.strip()]
    check(lines and lines[-1].startswith("cgshim: ERROR SUMMARY: "),
          "the last line on stderr is not the ERROR SUMMARY: %r" % lines[-3:])
    return lines[-1]


# ---------------------------------------------------------------- exit code

def case_exit_code():
    rc, err, logs = launch("cgs001", "--error-exitcode=3")
    check(rc == 3, "a CGS001 run with --error-exitcode=3 exited %d: %s" % (rc, err[-600:]))
    line = summary_line(err)
    check(re.search(r"ERROR SUMMARY: 1 error, 0 warnings in 1 process; see them: cgshim report \S+\.jsonl$", line),
          "summary line: %r" % line)
    rc, err, _ = launch("clean", "--error-exitcode=3")
    check(rc == 0, "a clean run with --error-exitcode=3 exited %d: %s" % (rc, err[-600:]))
    check(summary_line(err).endswith("ERROR SUMMARY: 0 errors, 0 warnings"), "clean summary: %r" % err[-200:])
    # Without the option the program's own status, findings or not.
    rc, err, _ = launch("cgs001")
    check(rc == 0, "a CGS001 run without --error-exitcode exited %d" % rc)
    # The variable does the same as the option; the tree counts: a shell
    # running the program twice (two processes, one error each).
    env = clean_env({"CGSHIM_ERROR_EXITCODE": "7"})
    d = tempfile.mkdtemp(dir=TMP)
    rc, out, err = run([A.cgshim, "--stderr", "--", "sh", "-c", '"$0" cgs001 && "$0" cgs001 && exit 5', A.app],
                       cwd=d, env=env)
    check(rc == 7, "CGSHIM_ERROR_EXITCODE=7 on a tree of two violating processes exited %d: %s" % (rc, err[-600:]))
    check("ERROR SUMMARY: 2 errors, 0 warnings in 2 processes; see them above" in summary_line(err),
          "tree summary: %r" % err[-300:])
    # The program's own failure stays its own when nothing was found.
    rc, out, err = run([A.cgshim, "--error-exitcode=3", "--", "sh", "-c", '"$0" clean; exit 5', A.app], cwd=d)
    check(rc == 5, "clean program exiting 5 under --error-exitcode=3 gave %d" % rc)
    # Nested launchers: the inner one counts its own tree, the outer the whole.
    rc, out, err = run([A.cgshim, "--error-exitcode=4", "--", A.cgshim, "--", A.app, "cgs001"], cwd=d)
    check(rc == 4, "nested launchers exited %d" % rc)
    check(err.count("ERROR SUMMARY: 1 error") == 2, "nested summaries: %r" % err[-400:])
    # The report: --fail-on.
    _, _, logs = launch("cgs001")
    rc, out, err = run([A.cgshim, "report", "--fail-on=error"] + logs)
    check(rc == 3, "report --fail-on=error on a CGS001 log exited %d: %s" % (rc, err))
    rc, out, err = run([A.cgshim, "report", "--fail-on=warn"] + logs)
    check(rc == 3, "report --fail-on=warn on a CGS001 log exited %d: %s" % (rc, err))
    rc, out, err = run([A.cgshim, "report"] + logs)
    check(rc == 0, "report without --fail-on exited %d" % rc)
    _, _, clean_logs = launch("clean")
    rc, out, err = run([A.cgshim, "report", "--fail-on=error"] + clean_logs)
    check(rc == 0, "report --fail-on=error on a clean log exited %d: %s" % (rc, err))
    rc, out, err = run([A.cgshim, "report", "--fail-on=never"] + clean_logs)
    check(rc == 1, "report --fail-on=never is a usage error, gave %d" % rc)
    print("exit code: 3 with a CGS001, 0 without; tree of 2 processes counted; report --fail-on")


# ---------------------------------------------------------------- baseline

def case_baseline():
    d = tempfile.mkdtemp(dir=TMP)
    b = os.path.join(d, "b.json")
    _, _, logs1 = launch("cgs001")
    rc, out, err = run([A.cgshim, "report", "--write-baseline", b] + logs1)
    check(rc == 0, "--write-baseline exited %d: %s" % (rc, err))
    base = json.load(open(b))
    sup = base.get("suppressions")
    check(isinstance(sup, list) and len(sup) == 1, "baseline of one CGS001: %r" % base)
    e = sup[0]
    check(e.get("rule") == "CGS001" and e.get("function") == "update_a" and
          e.get("file", "").endswith("ci_app.c") and e.get("kind") == "exec,graph",
          "fingerprint fields: %r" % e)
    check(not any(re.search(r"0x[0-9a-f]{6,}", str(e.get(k, ""))) for k in ("function", "file", "kind")),
          "an address in the fingerprint: %r" % e)
    # A second identical run: nothing new, exit 0 under --fail-on.
    _, _, logs2 = launch("cgs001")
    rc, out, err = run([A.cgshim, "report", "--baseline", b, "--fail-on=error"] + logs2)
    check(rc == 0, "an identical run against its baseline exited %d: %s" % (rc, err))
    check("== Baseline %s: 1 finding(s) known, 0 new" % b in out and "== Violations" not in out,
          "identical run: %s" % out[-1500:])
    # One new violation (another function): reported, and fails.
    _, _, logs3 = launch("new")
    rc, out, err = run([A.cgshim, "report", "--baseline", b, "--fail-on=error", "--json"] + logs3)
    check(rc == 3, "a run with one new violation exited %d under --fail-on" % rc)
    doc = json.loads(out)
    new = [f for f in doc["findings"] if f["baseline"] == "new"]
    check(len(new) == 1 and new[0]["function"] == "update_b", "new findings: %r" % new)
    check(len(doc["violations"]) == 1 and doc["violations"][0]["site"].startswith("update_b"),
          "the violations table keeps only the new one: %r" % doc["violations"])
    check(doc["baseline"]["stale"] == [], "nothing stale: %r" % doc["baseline"])
    # A suppression that matched nothing is listed as stale; an edited
    # entry with a wildcard matches; a malformed file is an error.
    sup.append({"rule": "CGS004", "function": "gone", "file": "*"})
    json.dump({"suppressions": sup}, open(b, "w"))
    rc, out, err = run([A.cgshim, "report", "--baseline", b] + logs2)
    check(rc == 0 and "stale (matched nothing): CGS004 at gone (*)" in out, "stale entry: %s" % out[-800:])
    json.dump({"suppressions": [{"rule": "CGS001", "function": "*"}]}, open(b, "w"))
    rc, out, err = run([A.cgshim, "report", "--baseline", b, "--fail-on=error"] + logs3)
    check(rc == 0, "a wildcard entry should cover both: %d" % rc)
    open(b, "w").write("{not json")
    rc, out, err = run([A.cgshim, "report", "--baseline", b] + logs3)
    check(rc == 1 and "baseline" in err, "malformed baseline gave %d: %s" % (rc, err))
    print("baseline: identical run nothing new; one new violation reported and fails; stale listed")


def case_suppress():
    """CGSHIM_SUPPRESS: the shim applies a baseline at run time."""
    d = tempfile.mkdtemp(dir=TMP)
    b = os.path.join(d, "s.json")

    def with_sup(entries, mode="cgs001"):
        json.dump({"cgshim_baseline": 1, "suppressions": entries}, open(b, "w"))
        return launch(mode, "--error-exitcode=3", env=clean_env({"CGSHIM_SUPPRESS": b}))

    # ci_app's frames are not exported symbols: the shim names the module.
    rc, err, logs = with_sup([{"rule": "CGS001", "function": "*", "file": "ci_app", "kind": "exec,graph"}])
    check(rc == 0 and not records(logs, "violation"), "suppressed CGS001 still written or counted: rc %d %r" %
          (rc, records(logs, "violation")))
    check("ERROR SUMMARY: 0 errors" in summary_line(err), "suppressed finding counted: %r" % err[-300:])
    # A new finding (other kind) is written and counted; the stale entry named at exit.
    rc, err, logs = with_sup([{"rule": "CGS001", "kind": "exec"}, {"rule": "CGS004", "function": "gone"}])
    check(rc == 3 and len(records(logs, "violation")) == 1, "unmatched entries suppressed: rc %d" % rc)
    warns = [r.get("msg", "") for r in records(logs, "warning")]
    check(sum("stale suppression (matched nothing): CGS004 at gone" in w for w in warns) == 1 and
          sum("stale suppression (matched nothing): CGS001 at * (*) kind exec" in w for w in warns) == 1,
          "stale entries at exit: %r" % warns)
    # A Python-style entry for a file path matches at a '/' only; a malformed file: one warning, nothing hidden.
    open(b, "w").write('{"suppressions": [{"function": "x"}]}')
    rc, err, logs = launch("cgs001", "--error-exitcode=3", env=clean_env({"CGSHIM_SUPPRESS": b}))
    check(rc == 3 and records(logs, "violation"), "a malformed suppression file hid the finding")
    check(any("malformed" in r.get("msg", "") for r in records(logs, "warning")), "no warning for the malformed file")
    print("suppress: matched finding neither written nor counted; new one reported; stale named; malformed warned")


# ---------------------------------------------------------------- SARIF, JUnit

def case_sarif():
    try:
        import jsonschema
    except ImportError:
        print("SKIP: python3-jsonschema is not installed")
        sys.exit(SKIP)
    schema = json.load(open(A.schema))
    d = tempfile.mkdtemp(dir=TMP)
    _, _, logs = launch("new")
    _, _, clean = launch("clean")
    b = os.path.join(d, "b.json")
    run([A.cgshim, "report", "--write-baseline", b] + launch("cgs001")[2])
    for name, argv in (("new", logs), ("clean", clean), ("baseline", ["--baseline", b] + logs)):
        out = os.path.join(d, name + ".sarif")
        rc, _, err = run([A.cgshim, "report", "--sarif", out] + argv)
        check(rc == 0, "--sarif exited %d: %s" % (rc, err))
        doc = json.load(open(out))
        errs = sorted(jsonschema.Draft4Validator(schema).iter_errors(doc), key=str)
        check(not errs, "%s.sarif is not valid SARIF 2.1.0: %s" % (name, "; ".join(e.message for e in errs[:5])))
        res = doc["runs"][0]["results"]
        rules = doc["runs"][0]["tool"]["driver"]["rules"]
        check(any(r["id"] == "CGS001" and r["defaultConfiguration"]["level"] == "error" for r in rules),
              "rule metadata lacks CGS001")
        if name == "clean":
            check(res == [], "clean run has results: %r" % res)
            continue
        check(len(res) == 2, "two fingerprints, got %d results" % len(res))
        for r in res:
            loc = r["locations"][0]
            check(loc["physicalLocation"]["artifactLocation"]["uri"].endswith("ci_app.c")
                  and loc["physicalLocation"]["region"]["startLine"] > 0, "location: %r" % loc)
            check(rules[r["ruleIndex"]]["id"] == r["ruleId"] == "CGS001", "ruleIndex")
            check(len(r["partialFingerprints"]["cgshim/v1"]) == 16, "fingerprint: %r" % r["partialFingerprints"])
        states = sorted(r["baselineState"] for r in res)
        check(states == (["new", "unchanged"] if name == "baseline" else ["new", "new"]), "states %r" % states)
    # A document that breaks the schema is caught (the check can fail).
    doc["runs"][0]["results"][0]["level"] = "fatal"
    check(list(jsonschema.Draft4Validator(schema).iter_errors(doc)), "the schema accepted level 'fatal'")
    print("sarif: 3 documents valid against %s" % os.path.basename(A.schema))


def case_junit():
    import xml.etree.ElementTree as ET
    d = tempfile.mkdtemp(dir=TMP)
    b = os.path.join(d, "b.json")
    run([A.cgshim, "report", "--write-baseline", b] + launch("cgs001")[2])
    out = os.path.join(d, "j.xml")
    rc, _, err = run([A.cgshim, "report", "--junit", out, "--baseline", b] + launch("new")[2])
    check(rc == 0, "--junit exited %d: %s" % (rc, err))
    suite = ET.parse(out).getroot().find("testsuite")
    cases = suite.findall("testcase")
    check(suite.get("tests") == "2" and suite.get("failures") == "1" and suite.get("skipped") == "1",
          "counts: %r" % suite.attrib)
    failed = [c for c in cases if c.find("failure") is not None]
    check(len(failed) == 1 and "update_b" in failed[0].get("name") and
          failed[0].find("failure").get("type") == "error" and "TopologyChanged" in failed[0].find("failure").get("message"),
          "failing case: %r" % [(c.attrib, c.find("failure").attrib) for c in failed])
    rc, _, err = run([A.cgshim, "report", "--junit", out] + launch("clean")[2])
    suite = ET.parse(out).getroot().find("testsuite")
    check(rc == 0 and suite.get("failures") == "0" and len(suite.findall("testcase")) == 1, "clean junit")
    print("junit: one failure for the new finding, the known one skipped")


# ---------------------------------------------------------------- labels

def case_labels():
    # NVTX (nvtx3 from the toolkit headers): the launcher makes the shim the
    # injection library; the violation inside "outer" > "decode" carries both.
    rc, err, logs = launch("nvtx")
    check(rc == 0, "ci_app nvtx exited %d: %s" % (rc, err[-500:]))
    viol = records(logs, "violation")
    check(len(viol) == 1, "one violation, got %d" % len(viol))
    check(viol[0].get("labels") == ["outer", "decode"], "NVTX stack on the violation: %r" % viol[0].get("labels"))
    calls = [r for r in records(logs) if r.get("labels")]
    check(calls and all(r["labels"][:1] == ["outer"] for r in calls), "labelled records: %r" % calls[:2])
    after = [r for r in records(logs, "capture")]
    check(after and "labels" in after[1] and "labels" not in after[-1],
          "the capture inside the ranges labelled, the one after the pops not: %r" %
          [r.get("labels") for r in after])
    # The report groups by label.
    rc, out, err = run([A.cgshim, "report"] + logs)
    check("== Findings by label" in out and "outer > decode: CGS001 update-will-fail [error] at update_a" in out,
          "report by label: %s" % out[-800:])
    # An injection another tool set is left alone: then no labels.
    rc, err, logs = launch("nvtx", env=clean_env({"NVTX_INJECTION64_PATH": "/nonexistent/libother.so"}))
    check(rc == 0 and not any(r.get("labels") for r in records(logs)), "a foreign NVTX injection was replaced")
    # The public API, weakly resolved: under the shim it labels ...
    rc, err, logs = launch("label")
    viol = records(logs, "violation")
    check(len(viol) == 1 and viol[0].get("labels") == ["phase-a"], "cgshim_push label: %r" % viol)
    # ... and the same binary runs without the shim (the calls answer -1).
    rc, out, err = run([A.app, "label"])
    check(rc == 0 and "push depth -1" in out and "pop depth -1" in out, "without the shim: %d %r" % (rc, out[-300:]))
    rc, out, err = run([A.app, "nvtx"])
    check(rc == 0, "nvtx mode without the shim exited %d" % rc)
    # CGSHIM_LABEL: the process's label under the stack.
    rc, err, logs = launch("nvtx", env=clean_env({"CGSHIM_LABEL": "test_x[1]"}))
    viol = records(logs, "violation")
    check(viol[0].get("labels") == ["test_x[1]", "outer", "decode"], "CGSHIM_LABEL: %r" % viol[0].get("labels"))
    start = records(logs, "start")
    check(start and start[0].get("labels") == ["test_x[1]"], "the start record carries the process label")
    # The process label (issue 34): a thread that never pushed carries it, a
    # thread with its own stack does not; cleared, nothing.
    rc, err, logs = launch("thread")
    viol = records(logs, "violation")
    check(rc == 0 and [v.get("labels") for v in viol] == [["t.py::test_p"], ["own"], None],
          "cgshim_process_label: the loader thread's, the main thread's own, none after the clear: %r" % (
              [(v.get("tid"), v.get("labels")) for v in viol]))
    check(len({v.get("tid") for v in viol}) == 3 and viol and viol[0].get("tid") != viol[1].get("tid"),
          "three threads: two loaders and main (%r)" % [v.get("tid") for v in viol])
    rc, out, err = run([A.app, "thread"])
    check(rc == 0 and "process label -1" in out, "without the shim the call answers -1: %r" % out[-200:])
    # Long labels (issue 34, a pytest id of 200 bytes): kept whole; one longer
    # than a label keeps (511 bytes) is cut at a character boundary, ends in
    # U+2026 and the record says labels_truncated.
    rc, err, logs = launch("long")
    viol = records(logs, "violation")
    tid = "test_long.py::test_x[" + "p" * 178 + "]"
    check(rc == 0 and len(viol) == 2, "ci_app long: rc %d, %d violations" % (rc, len(viol)))
    if len(viol) == 2:
        check(viol[0].get("labels") == [tid] and "labels_truncated" not in viol[0],
              "the 200-byte label whole: %r" % viol[0].get("labels"))
        l2 = viol[1].get("labels") or ["", ""]
        cut = l2[-1]
        check(len(l2) == 2 and l2[0] == tid and cut.endswith("\u2026") and len(cut.encode()) <= 511
              and cut[:-1] == "\u00e9" * len(cut[:-1]) and len(cut[:-1]) == 254 and viol[1].get("labels_truncated") is True,
              "the 600-byte label cut at a character and marked: %d bytes %r..., truncated %r" % (
                  len(cut.encode()), cut[-6:], viol[1].get("labels_truncated")))
    rc, err, logs = launch("clean", env=clean_env({"CGSHIM_LABEL": "t" * 600}))
    start = records(logs, "start")
    check(start and start[0].get("labels") == ["t" * 508 + "\u2026"] and start[0].get("labels_truncated") is True,
          "CGSHIM_LABEL of 600 bytes cut and marked: %r" % (start and start[0].get("labels")))
    # The pytest plugin attributes a cut label by its prefix only when no
    # other test id starts with it.
    sys.path.insert(0, A.python_dir)
    from cgshim.labels import joined_names, label_names
    ids = ["t.py::test_a[x-1]", "t.py::test_a[x-10]", "t.py::test_b[long]"]
    check(label_names("t.py::test_b[lo\u2026", ids[2], ids) and not label_names("t.py::test_b[lo", ids[2], ids)
          and not label_names("t.py::test_a[x-1\u2026", ids[0], ids) and label_names(ids[0], ids[0], ids)
          and joined_names("t.py::test_b\u2026 > decode", ids[2], ids) and not joined_names("t.py::test_a\u2026", ids[0], ids),
          "plugin: a cut label names a test only when unambiguous")
    # Disabled: NVTX stays a no-op and nothing is written.
    rc, err, logs = launch("nvtx", "--disable", env=clean_env())
    check(rc == 0 and not logs, "CGSHIM_DISABLE=1 wrote %r" % logs)
    print("labels: NVTX outer > decode on the violation, cgshim_push, CGSHIM_LABEL, no shim, foreign injection")


# ---------------------------------------------------------------- pytest

TWO_TESTS = """
import os
import subprocess

APP = os.environ["CI_APP"]


def test_clean():
    subprocess.run([APP, "clean"], check=True, stdout=subprocess.DEVNULL)


def test_violates():
    subprocess.run([APP, "cgs001"], check=True, stdout=subprocess.DEVNULL)
"""


def pytest_python():
    for py in (sys.executable, "/usr/bin/python3"):
        if os.path.exists(py) and subprocess.run([py, "-c", "import pytest"], capture_output=True).returncode == 0:
            return py
    print("SKIP: no python3 with pytest (Debian: python3-pytest)")
    sys.exit(SKIP)


def outcomes(out):
    return dict((m.group(2), m.group(1)) for m in re.finditer(r"^(PASSED|FAILED|ERROR) (\S+)", out, re.M))


def case_pytest():
    py = pytest_python()
    d = tempfile.mkdtemp(dir=TMP)
    open(os.path.join(d, "test_two.py"), "w").write(TWO_TESTS)
    env = clean_env({"PYTHONPATH": A.python_dir, "CI_APP": A.app})
    base = [py, "-m", "pytest", "-p", "cgshim", "-rA", "-p", "no:cacheprovider", "test_two.py"]
    # The plugin alone (it starts pytest again with the shim preloaded):
    # exactly the violating test fails, with the finding in its report.
    rc, out, err = run(base + ["--cgshim-junit", "j.xml", "--cgshim-sarif", "s.sarif"], cwd=d, env=env)
    got = outcomes(out)
    check(got == {"test_two.py::test_clean": "PASSED", "test_two.py::test_violates": "FAILED"} and rc == 1,
          "pytest -p cgshim: rc %d, %r\n%s\n%s" % (rc, got, out[-2500:], err[-1500:]))
    check("CGS001 update-will-fail at update_a" in out, "the finding is not in the test report: %s" % out[-2000:])
    logs = sorted(os.path.join(d, "cgshim-logs", f) for f in os.listdir(os.path.join(d, "cgshim-logs")))
    viol = records(logs, "violation")
    check(len(viol) == 1 and viol[0].get("labels") == ["test_two.py::test_violates"],
          "the child's violation is labelled with its test: %r" % [v.get("labels") for v in viol])
    sarif = json.load(open(os.path.join(d, "s.sarif")))
    res = sarif["runs"][0]["results"]
    check(len(res) == 1 and res[0]["properties"]["labels"] == ["test_two.py::test_violates"], "sarif: %r" % res)
    import xml.etree.ElementTree as ET
    check(ET.parse(os.path.join(d, "j.xml")).getroot().find("testsuite").get("failures") == "1", "junit")
    # A baseline from that run: nothing new, both pass.
    b = os.path.join(d, "b.json")
    rc, _, err = run([A.cgshim, "report", "--write-baseline", b] + logs)
    check(rc == 0, "write-baseline: %s" % err)
    shutil.rmtree(os.path.join(d, "cgshim-logs"))
    rc, out, err = run(base + ["--cgshim-baseline", b], cwd=d, env=env)
    check(rc == 0 and set(outcomes(out).values()) == {"PASSED"}, "with the baseline: rc %d %s" % (rc, out[-1500:]))
    # Mark instead of fail: passes, the finding still in the report.
    rc, out, err = run(base + ["--cgshim=mark"], cwd=d, env=env)
    check(rc == 0 and "cgshim findings" in out and "CGS001" in out, "--cgshim=mark: rc %d %s" % (rc, out[-1500:]))
    # Under the launcher (pytest preloaded from the start), and as python -m cgshim.
    for launcher in ([A.cgshim], [py, "-m", "cgshim"]):
        rc, out, err = run(launcher + ["--error-exitcode=9", "--"] + base, cwd=d, env=env)
        got = outcomes(out)
        check(got.get("test_two.py::test_violates") == "FAILED" and got.get("test_two.py::test_clean") == "PASSED"
              and rc == 9, "%s -- pytest: rc %d %r %s" % (launcher[-1], rc, got, err[-800:]))
    print("pytest: exactly the violating test fails (plugin, launcher, python -m cgshim); baseline; mark; junit/sarif")


CASES = {n[5:].replace("_", "-"): f for n, f in list(globals().items()) if n.startswith("case_")}


def main():
    global A, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--cgshim", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--standin-dir", required=True)
    ap.add_argument("--app", required=True)
    ap.add_argument("--schema")
    ap.add_argument("--python-dir")
    A = ap.parse_args()
    for k in ("cgshim", "lib", "standin_dir", "app", "schema", "python_dir"):
        if getattr(A, k):
            setattr(A, k, os.path.abspath(getattr(A, k)))
    with tempfile.TemporaryDirectory(prefix="cgshim-ci-") as TMP:
        try:
            CASES[A.case]()
        except Fail as e:
            print("FAIL:", e)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
