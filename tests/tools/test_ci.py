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
