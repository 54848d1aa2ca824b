#!/usr/bin/env python3
"""tests/policy/run_policy.py -- check one CGSHIM_ON_UPDATE_FAILURE=reinstantiate
scenario (kernels/policy/*.cu) built against the CPU stand-in runtime.

usage: run_policy.py --case NAME --prog PATH --standin-dir DIR --shim LIBCGSHIM [--arg A]...

The program runs bare (it must fail: an update with a changed topology is
refused by the driver and the program aborts on any failure) and under
libcgshim.so with the policy (it must run to completion and compute the
right numbers, which it checks itself). Then the JSONL log is checked: the
"rewrite" records (count, reason), the summary's "rewrites", no "mismatch",
no leak, and the case's own expectations (EXPECT below). One line per check;
exit status non-zero when any check failed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

read_log = cgtest.read_log

# case -> expectations
#   predicted / failed: rewrite records by reason
#   thrash: whether the thrashing warning must (True) or must not (False) appear
#   stdout: strings the program's output must contain
#   launches: the summary's launch count
#   free_at_next_launch: rewrites that carry AutoFreeOnLaunch allocations
#   no_counterpart: a warning naming a node without counterpart
#   reuses: at least this many rewrites served by a cached executable (the
#           topology returns to one seen before: updated, not instantiated)
EXPECT = {
    # the edges-only change is predicted since issue 31 (CGS001 compares edges)
    "topology_change": dict(predicted=8, failed=0, thrash=None,
                            stdout=["topology changes: 7 by node count, 1 by edges", "topology_change: OK"]),
    "memnodes": dict(predicted=6, failed=0, thrash=False, free_at_next_launch=3, no_leak=True,
                     stdout=["part AutoFreeOnLaunch", "memnodes: OK"]),
    "solver_loop": dict(predicted=11, failed=0, thrash=False, reuses=9,
                        stdout=["topology switches=11", "solver_loop: OK"]),
    "solver_loop_thrash": dict(predicted=59, failed=0, thrash=True, reuses=57,
                               stdout=["topology switches=59", "solver_loop: OK"]),
    "threads": dict(predicted=1, failed=0, thrash=False, launches=802,
                    stdout=["launches counted: 802 (want 802)", "threads: OK"]),
    "per_node": dict(predicted=1, failed=0, thrash=False, no_counterpart=True,
                     stdout=["counterpart set to 10: 11 (want 11)",
                             "set params on node without counterpart: rc=1 (cudaErrorInvalidValue)",
                             "unchanged: 11 (want 11)", "per_node: OK"]),
}

T = cgtest.Tally()
failures = 0


def check(ok, what):
    global failures
    if not T.check(ok, what):
        failures += 1
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True, choices=sorted(EXPECT))
    ap.add_argument("--prog", required=True)
    ap.add_argument("--standin-dir", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--arg", action="append", default=[])
    a = ap.parse_args()
    exp = EXPECT[a.case]
    name = a.case
    cmd = [a.prog] + a.arg

    base = cgtest.clean_env()
    ld = base.get("LD_LIBRARY_PATH")
    base["LD_LIBRARY_PATH"] = a.standin_dir + (":" + ld if ld else "")

    bare = subprocess.run(cmd, env=base, capture_output=True, text=True, timeout=120)
    check(bare.returncode != 0, "%s bare: exit %d (want non-zero: the driver refuses the update)" % (name, bare.returncode))
    check("cudaErrorGraphExecUpdateFailure" in bare.stdout,
          "%s bare: the program saw 910 cudaErrorGraphExecUpdateFailure" % name)

    with tempfile.TemporaryDirectory(prefix="cgs-policy-") as tmp:
        log = os.path.join(tmp, "log.jsonl")
        env = cgtest.shim_env(base, a.shim, log, "info", {"CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"})
        p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
        ok = check(p.returncode == 0, "%s shim: exit %d (want 0)" % (name, p.returncode))
        check("UNEXPECTED" not in p.stdout and "MISMATCH" not in p.stdout and "ABORT" not in p.stdout,
              "%s shim: no unexpected return code, the numbers are right" % name)
        if not ok:
            sys.stdout.write(p.stdout[-3000:])
            sys.stdout.write(p.stderr[-2000:])
        for s in exp.get("stdout", []):
            check(s in p.stdout, "%s shim: output has %r" % (name, s))
        check("cudaErrorGraphExecUpdateFailure" not in p.stdout, "%s shim: the program never saw 910" % name)

        recs = read_log(log)
        check(any(r.get("ev") == "start" for r in recs), "%s: log has a start record (%d records)" % (name, len(recs)))
        rw = [r for r in recs if r.get("ev") == "rewrite"]
        ok_rw = [r for r in rw if "rc_instantiate" not in r]
        bad_rw = [r for r in rw if "rc_instantiate" in r]
        pred = [r for r in ok_rw if r.get("reason") == "predicted"]
        fail = [r for r in ok_rw if r.get("reason") == "failed"]
        check(not bad_rw, "%s: no failed re-instantiation (got %s)" % (name, [r.get("rc_instantiate") for r in bad_rw]))
        check(len(pred) == exp["predicted"], "%s: %d rewrite(s) of predicted failures (want %d)" % (name, len(pred), exp["predicted"]))
        check(len(fail) == exp["failed"], "%s: %d rewrite(s) of failed updates (want %d)" % (name, len(fail), exp["failed"]))
        check(all(r.get("rc_update") == 910 for r in ok_rw), "%s: every rewrite record says rc_update 910" % name)
        check(all(r.get("exec") and r.get("new_real") and (r.get("new_real") != r.get("exec") or r.get("reused"))
                  for r in ok_rw),
              "%s: every rewrite names the application's exec and the real exec now behind it "
              "(the application's own only when reused)" % name)
        reused = [r for r in ok_rw if r.get("reused")]
        if exp.get("reuses") is not None:
            check(len(reused) >= exp["reuses"], "%s: %d rewrite(s) served by a cached executable (want >= %d)"
                  % (name, len(reused), exp["reuses"]))
        # each exec handle counts its rewrites from 1; a handle the driver
        # hands out again (a new instantiation at a recycled address)
        # starts over
        want = {}
        for i, r in enumerate(x for x in recs if x in ok_rw or (
                x.get("ev") == "call" and x.get("api", "").startswith("cuGraphInstantiate") and x.get("rc") == 0)):
            if r.get("ev") == "call":
                want[r.get("exec")] = 0
                continue
            want[r.get("exec")] = want.get(r.get("exec"), 0) + 1
            if r.get("rewrites") != want[r.get("exec")]:
                check(False, "%s: rewrite record of exec %s counts %s (want %d)" % (
                    name, r.get("exec"), r.get("rewrites"), want[r.get("exec")]))
                break
        summ = [r for r in recs if r.get("ev") == "summary"]
        if check(len(summ) == 1, "%s: one summary record" % name):
            s = summ[0]
            check(s.get("rewrites") == len(ok_rw), "%s: summary rewrites %s (want %d)" % (name, s.get("rewrites"), len(ok_rw)))
            if "launches" in exp:
                check(s.get("launches") == exp["launches"], "%s: summary launches %s (want %d)" % (name, s.get("launches"), exp["launches"]))
            nf = 1 if exp.get("no_counterpart") else 0  # the refused set-params call
            check(s.get("failures") == nf, "%s: summary failures %s (want %d)" % (name, s.get("failures"), nf))
        mism = [r for r in recs if r.get("ev") == "mismatch"]
        check(not mism, "%s: no mismatch records (got %s)" % (name, [(m.get("api"), m.get("rule")) for m in mism]))
        calls_failed = [r for r in recs if r.get("ev") == "call" and r.get("rc") not in (0, None)
                        and not r.get("api", "").startswith("cuGraphExecKernelNodeSetParams")]
        check(not calls_failed, "%s: no failed driver call seen by the application (got %s)" % (
            name, [(c.get("api"), c.get("rc")) for c in calls_failed][:5]))
        warns = [r for r in recs if r.get("ev") == "warning"]
        thrash = [w for w in warns if "thrashing" in w.get("msg", "")]
        if exp.get("thrash") is True:
            check(len(thrash) == 1, "%s: one thrashing warning (got %d)" % (name, len(thrash)))
        elif exp.get("thrash") is False:
            check(not thrash, "%s: no thrashing warning (got %d)" % (name, len(thrash)))
        if exp.get("no_leak"):
            leaks = [r for r in recs if r.get("ev") == "leak"]
            c11 = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS011"]
            check(not leaks, "%s: no leak records (got %d)" % (name, len(leaks)))
            check(not c11, "%s: no CGS011 violation (got %d)" % (name, len(c11)))
            if summ:
                check(summ[0].get("leaks") == 0, "%s: summary leaks %s (want 0)" % (name, summ[0].get("leaks")))
        if "free_at_next_launch" in exp:
            fan = [r for r in ok_rw if r.get("free_at_next_launch")]
            check(len(fan) == exp["free_at_next_launch"],
                  "%s: %d rewrite(s) free the replaced AutoFreeOnLaunch exec's allocations at the next launch (want %d)"
                  % (name, len(fan), exp["free_at_next_launch"]))
            check(all(r.get("flags") == 1 for r in fan), "%s: those rewrites kept flags AutoFreeOnLaunch" % name)
        if exp.get("no_counterpart"):
            nc = [w for w in warns if "no counterpart" in w.get("msg", "")]
            check(len(nc) == 1 and "node 0x" in nc[0].get("msg", ""),
                  "%s: one warning naming the node without counterpart (got %s)" % (name, [w.get("msg") for w in nc]))
            sp = [r for r in recs if r.get("ev") == "call" and r.get("api", "").startswith("cuGraphExecKernelNodeSetParams")]
            check(len(sp) == 1 and sp[0].get("rc") == 1,
                  "%s: one failed set-params call record, rc 1 (got %s)" % (name, [r.get("rc") for r in sp]))

    print("%s: %s" % (name, "PASS" if not failures else "%d check(s) FAILED" % failures))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
