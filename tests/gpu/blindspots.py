#!/usr/bin/env python3
"""GPU cases of issue 11 (blind spots): programs nobody designed the shim
around. Each runs bare and under the shim; output must be identical, with no
false alarm and no mismatch record. One line per case, then
'N passed, N failed'. Usage: blindspots.py BUILD BIN."""
import os, re, sys, tempfile

import gpucase
from gpucase import calls, case

BUILD, BIN = sys.argv[1], sys.argv[2]
LIB = os.path.abspath(os.path.join(BUILD, "shim", "libcgshim.so"))
HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, shim, level="info", extra=None, logdir=None):
    return gpucase.run(cmd, LIB if shim else None, level, extra, logdir)


def viol(recs, rule=None):
    return [r for r in recs if r.get("ev") == "violation" and (rule is None or r.get("rule") == rule)]


def same(bare, shim):
    assert bare.returncode == shim.returncode, "exit %d bare, %d shim: %s" % (bare.returncode, shim.returncode, shim.stderr[-300:])
    assert bare.stdout == shim.stdout, "output differs:\n%s\n--\n%s" % (bare.stdout, shim.stdout)


def no_mismatch(recs):
    m = [r for r in recs if r.get("ev") == "mismatch"]
    assert not m, "mismatch records: %s" % m[:2]


def lib_case(exe, early):
    extra = {"HANDLE_EARLY": "1" if early else "0"}
    bare, _, _ = run([exe], False, extra=extra)
    assert "update: 910" in bare.stdout, "bare run did not get 910: " + bare.stdout
    shim, recs, files = run([exe], True, extra=extra)
    same(bare, shim)
    no_mismatch(recs)
    upd = calls(recs, "cuGraphExecUpdate")
    v = viol(recs, "CGS001")
    assert files and recs, "no log written"
    assert upd and upd[0]["rc"] == 910 and v and v[0]["seq"] < upd[0]["seq"], \
        "CGS001 not before the 910: %d violations, updates %s" % (len(v), [u["rc"] for u in upd])
    others = [r["rule"] for r in viol(recs) if r["rule"] != "CGS001"]
    assert not others, "false alarms: %s" % others
    ab, recs_ab, _ = run([exe], True, extra=dict(extra, CGSHIM_ON_VIOLATION="abort"))
    assert ab.returncode in (-6, 134) and viol(recs_ab, "CGS001"), "abort: rc %d, %d violations" % (ab.returncode, len(viol(recs_ab)))
    rw, recs_rw, _ = run([exe], True, extra=dict(extra, CGSHIM_ON_UPDATE_FAILURE="reinstantiate"))
    assert "update: 0" in rw.stdout and [r for r in recs_rw if r.get("ev") == "rewrite"], "reinstantiate: " + rw.stdout
    s = [r for r in recs if r.get("ev") == "summary"]
    return "CGS001 before the 910; abort %d with the record; rewrite recorded; doors %s" % (
        ab.returncode, s[0].get("doors") if s else None)


for lib in ("cublas", "cusparse"):
    for early in (1, 0):
        @case("%s %s, handle %s main" % ("a" if lib == "cublas" else "b", lib, "before" if early else "inside"))
        def _(lib=lib, early=early):
            return lib_case(os.path.join(BIN, "libs_" + lib), early)


@case("c cudaDeviceSynchronize inside a global capture")
def _():
    exe = os.path.join(BIN, "devsync")
    bare, _, _ = run([exe], False)
    assert "sync inside capture: 900" in bare.stdout, bare.stdout
    shim, recs, _ = run([exe], True)
    same(bare, shim)
    no_mismatch(recs)
    sync = [r for r in calls(recs, "cuCtxSynchronize") if r["rc"] == 900]
    v = viol(recs, "CGS007")
    assert sync and v and v[0]["seq"] < sync[0]["seq"], "CGS007 %d, sync records %s" % (len(v), [(r["api"], r["rc"]) for r in calls(recs, "cuCtxSynchronize")])
    return "CGS007 before %s's 900" % sync[0]["api"]


@case("d torch.cuda.synchronize() inside torch.cuda.graph")
def _():
    script = os.path.join(HERE, "torch_sync_in_capture.py")
    line = [i + 1 for i, l in enumerate(open(script)) if "SYNC-LINE" in l][0]
    bare, _, _ = run([sys.executable, script], False)
    shim, recs, _ = run([sys.executable, script], True)
    same(bare, shim)
    no_mismatch(recs)
    v = viol(recs, "CGS007")
    assert v, "no CGS007: %s" % [r["rule"] for r in viol(recs)]
    sites = v[0].get("site", [])
    want = "torch_sync_in_capture.py:%d" % line
    assert any(want in f for f in sites), "script line %s not in the site %s" % (want, sites)
    sync = [r for r in calls(recs, "cuCtxSynchronize") if r["rc"] == 900]
    assert not sync or v[0]["seq"] < sync[0]["seq"], "CGS007 after the call"
    return "CGS007 at %s before the 900 (%s)" % (want, bare.stdout.strip().splitlines()[-1])


@case("e torch.compile(mode='reduce-overhead'), 3 batch sizes")
def _():
    script = os.path.join(HERE, "torch_compile_ro.py")
    bare, _, _ = run([sys.executable, script], False)
    assert bare.returncode == 0, bare.stderr[-600:]
    tmp = tempfile.mkdtemp(prefix="cgshim-bs-")
    shim, recs, files = run([sys.executable, script], True, logdir=tmp)
    same(bare, shim)
    assert bare.stdout.count(": ok") == 3, bare.stdout
    no_mismatch(recs)
    assert not viol(recs), "violations: %s" % [(r["rule"], r.get("msg", "")[:80]) for r in viol(recs)]
    empty = [f for f in files if os.path.getsize(f) == 0]
    assert not empty, "%d empty log files of %d" % (len(empty), len(files))
    with_calls = {r["pid"] for r in recs if r.get("ev") == "call"}
    no_start = [p for p in with_calls if not any(r["ev"] == "start" and r["pid"] == p for r in recs)]
    assert not no_start, "processes with calls but no start record: %s" % no_start
    beg = calls(recs, "cuStreamBeginCapture")
    assert beg, "no capture recorded"
    return "outputs equal eager; %d log file(s), none empty; %d captures, 0 violations" % (len(files), len(beg))


@case("f every version of every hooked name, both doors, all flags")
def _():
    out = []
    for exe, door in (("getproc_versions", "cuGetProcAddress"), ("getproc_versions_rt", "cudaGetDriverEntryPoint*")):
        path = os.path.join(BIN, exe)
        bare, _, _ = run([path], False)
        shim, _, _ = run([path], True)
        strip = lambda o: [re.sub(r" (shim|driver):", " ", l) for l in o.splitlines()]
        assert bare.returncode == 0 and strip(bare.stdout) == strip(shim.stdout), \
            "%s: answers differ bare/shim: %s" % (exe, [(a, b) for a, b in zip(bare.stdout.splitlines(), shim.stdout.splitlines()) if a != b][:3])
        chk, _, _ = run([path, "--check"], True)
        last = chk.stdout.strip().splitlines()[-1]
        misses = [l for l in chk.stdout.splitlines() if l.startswith("MISS")]
        assert chk.returncode == 0 and last.endswith(", 0 routing misses"), "%s: %s %s" % (door, last, misses[:5])
        # each query asked again at once (getproc.c's per-thread memo), and unhooked names
        chk, _, _ = run([path, "--check", "--twice"], True)
        again = chk.stdout.strip().splitlines()[-1]
        misses = [l for l in chk.stdout.splitlines() if l.startswith("MISS")]
        assert chk.returncode == 0 and again.endswith(", 0 routing misses"), "%s twice: %s %s" % (door, again, misses[:5])
        out.append("%s: %s (asked twice: 0 misses)" % (door, last))
    return "; ".join(out)


gpucase.finish()
