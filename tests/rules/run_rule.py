#!/usr/bin/env python3
"""tests/rules/run_rule.py -- check one rule reproducer (kernels/rules/*.cu)
built against the CPU stand-in runtime, bare and under libcgshim.so.

usage: run_rule.py --prog PATH --standin-dir DIR --shim LIBCGSHIM [--abort]
                   [--levels] [--stdout-has LINE]

The expectation is taken from the program's name: cgsNNN_<slug> must make
rule CGSNNN fire (and nothing else), valid_* must stay silent. One line per
check is printed; the exit status is non-zero when any check failed.
"""
import argparse
import os
import re
import signal
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

# rule -> (api of the violation and of the call it precedes, predicted_rc or
# None for warn rules that predict no failure).  The api is the driver entry
# point the stand-in runtime reaches (docs/log-format.md, "call" records).
EXPECT = {
    "CGS001": ("cuGraphExecUpdate_v2", 910),
    "CGS002": ("cuGraphExecUpdate_v2", 801),
    "CGS003": ("cuGraphExecUpdate_v2", None),
    "CGS004": ("cuGraphInstantiateWithFlags", 801),
    "CGS005": ("cuGraphLaunch", 1),
    "CGS006": ("cuMemAllocFromPoolAsync", 801),
    "CGS007": ("cuMemAlloc_v2", 900),
    "CGS008": ("cuStreamEndCapture", 904),
    "CGS009": ("cuMemFreeAsync", None),
    "CGS010": ("cuGraphClone", None),
    "CGS011": ("cuGraphExecDestroy", None),
    "CGS012": ("cuGraphExecUpdate_v2", None),
    "CGS013": ("cuEventQuery", 907),
    "CGS014": ("cuStreamQuery", 906),
    "CGS015": ("cuStreamWaitEvent", 902),
    "CGS016": ("cuStreamEndCapture", 908),
    "CGS018": ("cuMemFree_v2", None),
    "CGS019": ("cuGraphUpload", None),
    "CGS020": ("cuGraphInstantiateWithFlags", None),
    "CGS021": ("cuStreamEndCapture", 401),
    "CGS022": ("cuStreamEndCapture", 903),
    "CGS023": ("cuStreamBeginCapture_v2", 401),
    "CGS024": ("cuLaunchKernel", None),
    "CGS025": ("cuStreamEndCapture", None),
    "CGS026": ("cuStreamEndCapture", None),
    "CGS027": ("ncclCommDestroy", None),
    "CGS028": ("cuMemMap", None),
}

# A reproducer whose call is not its rule's usual one: program -> (api,
# predicted_rc), in place of EXPECT[rule] (expect()).
EXPECT_PROG = {
    "cgs014_sync-copy-in-capture": ("cuMemcpyDtoH_v2", 906),
}


def expect(name, rule):
    """The api and predicted_rc a reproducer (its program name) is judged by."""
    return EXPECT_PROG.get(os.path.basename(name), EXPECT[rule])


# Capture-breaking rules (issue 14): the violation names both threads, and
# the capture's failed end ("broken") links back to it.
CAPTURE_RULES = {"CGS007", "CGS013", "CGS014", "CGS015", "CGS016", "CGS022", "CGS023", "CGS024"}
LINKED = {"CGS007", "CGS013", "CGS014", "CGS015", "CGS022"}

# Rules that cannot happen alone: a pool change always moves the allocation
# too (different node address), so CGS012 comes with CGS003.
COMPANIONS = {
    "CGS012": {"CGS003"},
    "CGS019": {"CGS018"},
    # the 908 ends the capture: the reproducer's own end then finds none (401)
    "CGS016": {"CGS021"},
    # the empty graph's kernels escaped: each named when it went
    "CGS025": {"CGS024"},
    # the unmap under the live exec comes first (a hint), then the map again
    "CGS028": {"CGS018"},
}

# rule -> severity, from shim/rules.def (the one list): a record's severity
# must be its rule's (issue 31: error, warn or hint).
SEVERITY = dict(re.findall(r'^RULE\(\w+,\s*"(CGS\d+)",\s*"[^"]*",\s*"(\w+)"', open(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "shim", "rules.def")).read(), re.M))


def faults(viols):
    """Violation records that say a correct program is wrong: warn or error
    (a hint is no fault, docs/rules/README.md)."""
    return [v for v in viols if v.get("severity") in ("warn", "error")]


T = cgtest.Tally()
failures = 0  # this runner's failed checks (run_model, run_policy and tests/gpu/model.py read theirs)


def check(ok, what):
    global failures
    if not T.check(ok, what):
        failures += 1
    return ok


def base_api(api):
    return re.sub(r"_ptsz$", "", api or "")


# One reader of the shim's JSONL for every runner (run_model and run_policy
# import it from here).
read_log = cgtest.read_log


def run(prog, env):
    return subprocess.run([prog], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


def shim_env(base, shim, log, extra=None):
    env = cgtest.shim_env(base, shim, log, "info", {"CGSHIM_RULES_OFF": ""})  # every rule on, whatever the defaults
    env.pop("CGSHIM_ON_VIOLATION", None)
    if extra:
        env.update(extra)
    return env


LEVELS = ["off", "error", "warn", "hint", "info", "debug", "trace"]  # shim/config.def, most severe first


def check_levels(a, base, name, rule, tmp):
    """The rule's record at each level: text on stderr (the default sink:
    its level word after pid:tid) and JSONL in a file."""
    sev = SEVERITY[rule]
    for lv in ["auto"] + LEVELS:
        # auto: warn on stderr, info with a log file (shim/config.def)
        want = LEVELS.index(sev) <= LEVELS.index("warn" if lv == "auto" else lv)
        want_file = LEVELS.index(sev) <= LEVELS.index("info" if lv == "auto" else lv)
        env = cgtest.clean_env(base)
        env.update(LD_PRELOAD=a.shim, CGSHIM_LOG=lv, CGSHIM_RULES_OFF="")
        p = run(a.prog, env)
        # the text format's header line of a violation (shim/log-text.c):
        # severity, rule, name and the call as the program made it
        lines = [l for l in p.stderr.decode(errors="replace").splitlines() if ' violation %s ' % rule in l]
        ok = p.returncode == 0 and (bool(lines) == want) and all(
            re.match(r'^cgshim \S+ \d+:\d+ %s violation %s [a-z0-9-]+ in \w+$' % (sev, rule), l) for l in lines)
        check(ok, "%s at CGSHIM_LOG=%s, text on stderr: %s record %s (%s)" % (
            name, lv, sev, "written, level word '%s'" % sev if want else "not written",
            lines[0][:110] if lines else "no line"))
        log = os.path.join(tmp, "level-%s.jsonl" % lv)
        run(a.prog, shim_env(base, a.shim, log, {"CGSHIM_LOG": lv}))
        recs = [r for r in read_log(log) if r.get("ev") == "violation" and r.get("rule") == rule]
        check(bool(recs) == want_file and all(r.get("severity") == sev for r in recs),
              "%s at CGSHIM_LOG=%s, JSONL: %s record %s" % (name, lv, sev, "written" if want_file else "not written"))
    # the launcher's tally (docs/ci.md): an error or warn is a finding, a hint never
    tally = os.path.join(tmp, "tally")
    env = cgtest.clean_env(base)
    env.update(LD_PRELOAD=a.shim, CGSHIM_LOG="off", CGSHIM_RULES_OFF="", CGSHIM_TALLY_FILE=tally)
    run(a.prog, env)
    rows = [l.split() for l in open(tally)] if os.path.exists(tally) else []
    errs = sum(int(r[1]) for r in rows if len(r) == 3)
    warns = sum(int(r[2]) for r in rows if len(r) == 3)
    check((errs > 0, warns > 0) == (sev == "error", sev == "warn"),
          "%s: the tally counts a %s as %s (errors %d, warnings %d)" % (
              name, sev, {"error": "an error", "warn": "a warning", "hint": "nothing"}[sev], errs, warns))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--prog", required=True)
    ap.add_argument("--standin-dir", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--levels", action="store_true",
                    help="also run at every CGSHIM_LOG level, text on stderr and JSONL in a file: the rule's "
                         "record is written exactly at the levels at or below its severity")
    ap.add_argument("--abort", action="store_true",
                    help="also run with CGSHIM_ON_VIOLATION=abort and expect SIGABRT before the failing call")
    ap.add_argument("--stdout-has", metavar="LINE",
                    help="the bare run must print this line (a variant's proof that it took its path, e.g. "
                         "'nccl ranks: 2' under STANDIN_DEVICES=2)")
    a = ap.parse_args()

    name = os.path.basename(a.prog)
    m = re.match(r"(cgs\d{3})_", name)
    valid = name.startswith("valid_")
    if not m and not valid:
        check(False, "%s: name is neither cgsNNN_<slug> nor valid_*" % name)
        return 1
    rule = m.group(1).upper() if m else None

    base = cgtest.clean_env()
    ld = base.get("LD_LIBRARY_PATH")
    base["LD_LIBRARY_PATH"] = a.standin_dir + (":" + ld if ld else "")

    bare = run(a.prog, base)
    check(bare.returncode == 0, "%s bare: exit %d (want 0)" % (name, bare.returncode))
    if bare.returncode != 0:
        sys.stdout.write(bare.stdout.decode(errors="replace"))
    if a.stdout_has:
        check(a.stdout_has in bare.stdout.decode(errors="replace").splitlines(),
              "%s bare: printed the line %r" % (name, a.stdout_has))

    with tempfile.TemporaryDirectory(prefix="cgs-rule-") as tmp:
        log = os.path.join(tmp, "log.jsonl")
        shim = run(a.prog, shim_env(base, a.shim, log))
        check(shim.returncode == 0, "%s shim: exit %d (want 0)" % (name, shim.returncode))
        check(shim.stdout == bare.stdout, "%s shim: program output identical to the bare run" % name)
        recs = read_log(log)
        check(any(r.get("ev") == "start" for r in recs), "%s shim: log has a start record (%d records)" % (name, len(recs)))
        viols = [r for r in recs if r.get("ev") == "violation"]
        mism = [r for r in recs if r.get("ev") == "mismatch"]
        calls = [r for r in recs if r.get("ev") == "call"]

        if valid:
            check(not faults(viols), "%s: no warn or error record (got %s; hints %s)" % (
                name, [v.get("rule") for v in faults(viols)],
                [v.get("rule") for v in viols if v.get("severity") == "hint"]))
            check(not mism, "%s: no mismatch records (got %d)" % (name, len(mism)))
        else:
            api, prc = expect(name, rule)
            mine = [v for v in viols if v.get("rule") == rule]
            others = sorted({v.get("rule") for v in viols
                             if v.get("rule") != rule and v.get("rule") not in COMPANIONS.get(rule, ())})
            check(bool(mine), "%s: violation %s present" % (name, rule))
            check(not others, "%s: no other rule fired%s (got %s)" % (
                name, " besides " + "/".join(sorted(COMPANIONS[rule])) if rule in COMPANIONS else "", others))
            check(not mism, "%s: no mismatch records (got %s)" % (name, [(x.get("api"), x.get("rule")) for x in mism]))
            if mine:
                v = mine[0]
                check(base_api(v.get("api")) == api, "%s: violation api %s (want %s)" % (name, v.get("api"), api))
                check(v.get("name") and v.get("severity") == SEVERITY.get(rule) and v.get("msg"),
                      "%s: violation has name, severity %s (rules.def: %s), msg" % (
                          name, v.get("severity"), SEVERITY.get(rule)))
                if prc is not None:
                    check(v.get("predicted_rc") == prc,
                          "%s: predicted_rc %s (want %d)" % (name, v.get("predicted_rc"), prc))
                if rule in CAPTURE_RULES:
                    check(all(k in v for k in ("capture", "capture_tid", "capture_thread", "call_tid", "call_thread",
                                               "site", "begin_site")),
                          "%s: violation names the capture and both threads (%s)" % (
                              name, {k: v.get(k) for k in ("capture", "capture_thread", "call_thread")}))
                if rule in LINKED:
                    br = [r for r in recs if r.get("ev") == "broken" and r.get("by_rule") == rule]
                    check(bool(br) and br[0].get("by_api") == v.get("api") and br[0].get("capture") == v.get("capture")
                          and br[0].get("rc") == 901,
                          "%s: the capture's failed end links back to it (%s)" % (name, br and br[0].get("msg")))
                after = [c for c in calls if c.get("seq", 0) > v.get("seq", 0) and base_api(c.get("api")) == base_api(v.get("api"))]
                if check(bool(after), "%s: a %s call record follows the violation (seq %s)" % (name, v.get("api"), v.get("seq"))):
                    c = after[0]
                    check(c["seq"] > v["seq"], "%s: violation seq %d < call seq %d" % (name, v["seq"], c["seq"]))
                    if prc is not None:
                        check(c.get("rc") == prc, "%s: the call returned %s (want %d)" % (name, c.get("rc"), prc))

        if a.levels and rule:
            check_levels(a, base, name, rule, tmp)

        if a.abort and rule:
            api, prc = expect(name, rule)
            log2 = os.path.join(tmp, "abort.jsonl")
            ab = run(a.prog, shim_env(base, a.shim, log2, {"CGSHIM_ON_VIOLATION": "abort"}))
            check(ab.returncode == -signal.SIGABRT, "%s abort: returncode %d (want %d)" % (name, ab.returncode, -signal.SIGABRT))
            recs2 = read_log(log2)
            v2 = [r for r in recs2 if r.get("ev") == "violation" and r.get("rule") == rule]
            if check(bool(v2), "%s abort: violation %s written before dying" % (name, rule)):
                late = [r for r in recs2 if r.get("ev") == "call" and base_api(r.get("api")) == api and r.get("seq", 0) > v2[0].get("seq", 0)]
                check(not late, "%s abort: no %s call record after the violation" % (name, api))
            if prc is not None:
                failed = [r for r in recs2 if r.get("ev") == "call" and base_api(r.get("api")) == api and r.get("rc") == prc]
                check(not failed, "%s abort: the refused %s call never reached the driver" % (name, api))

    print("%s: %s" % (name, "PASS" if not failures else "%d check(s) FAILED" % failures))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
