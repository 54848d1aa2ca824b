#!/usr/bin/env python3
"""GPU check for the interception foundation (run by tests/gpu/run on the
device). Each case runs a program bare and under LD_PRELOAD=libcgshim.so,
requires identical program output, and asserts on the shim's JSONL records.
One line per case, then 'N passed, N failed'."""
import glob, json, os, subprocess, sys, tempfile
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

BUILD = sys.argv[1]          # meson build dir of the shim
BIN = sys.argv[2]            # dir with the GPU test programs
LIB = os.path.join(BUILD, "shim", "libcgshim.so")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def run(cmd, shim, level="info", extra=None, cwd=None):
    p, recs, _ = gpucase.run(cmd, LIB if shim else None, level, extra, cwd=cwd, timeout=300)
    return p, recs


def same_output(bare, shim):
    assert bare.returncode == shim.returncode, "exit %d bare vs %d shim; stderr: %s" % (
        bare.returncode, shim.returncode, shim.stderr[-400:])
    assert bare.stdout == shim.stdout, "program output differs:\n--bare\n%s\n--shim\n%s" % (bare.stdout, shim.stdout)


calls = gpucase.calls


def launches(recs):
    return sum(r["count"] for r in recs if r.get("ev") == "launches" and r.get("reason") in ("destroy", "exit"))


@case("a static-cudart nvcc program (demo_capture)")
def _():
    exe = os.path.join(BIN, "demo_capture")
    bare, _ = run([exe], False)
    assert bare.returncode == 0, "bare run failed: " + bare.stdout[-500:]
    shim, recs = run([exe], True, level="trace")
    same_output(bare, shim)
    assert any(r["ev"] == "start" for r in recs), "no start record"
    gp = calls(recs, "cuGetProcAddress", sym="cuGetProcAddress")
    assert any(r.get("ver") == 12000 and r.get("routed") for r in gp), "self-lookup at 12000 not routed: %s" % gp
    assert any(r.get("ver") == 11030 and r.get("routed") for r in gp), "self-lookup at 11030 not routed"
    beg = calls(recs, "cuStreamBeginCapture", rc=0)
    assert len(beg) == 3, "expected 3 capture begins, got %d" % len(beg)
    inst = calls(recs, "cuGraphInstantiate", rc=0)
    assert len(inst) == 1 and inst[0]["exec"] != "0x0", "instantiate records: %s" % inst
    upd = calls(recs, "cuGraphExecUpdate")
    assert [u["rc"] for u in upd] == [0, 910], "update rcs %s" % [u["rc"] for u in upd]
    assert upd[1]["result"] == 2, "910 result %s" % upd[1].get("result")
    viol = [r for r in recs if r["ev"] == "violation" and r["rule"] == "CGS001"]
    assert viol and viol[0]["seq"] < upd[1]["seq"], "CGS001 not announced before the failing update"
    allocs = [r for r in recs if r["ev"] == "alloc"]
    assert len(allocs) == 3 and all(a["pool"] != "0x0" and a["pool_default"] for a in allocs), \
        "captured allocations not attributed to the default pool: %s" % allocs
    lc = calls(recs, "cuGraphLaunch")
    assert len(lc) == 5 and all(r["rc"] == 0 for r in lc), "launch records %d" % len(lc)
    return "output identical; %d records; api %s/%s; update 0 then 910 (CGS001 first); 3 allocs in default pool %s; 5 launches" % (
        len(recs), beg[0]["api"], inst[0]["api"], allocs[0]["pool"])


@case("b PyTorch capture + replay")
def _():
    cmd = [sys.executable, os.path.join(ROOT, "tests", "gpu", "torch_capture.py")]
    bare, _ = run(cmd, False)
    assert bare.returncode == 0, bare.stderr[-800:]
    shim, recs = run(cmd, True)
    same_output(bare, shim)
    beg = calls(recs, "cuStreamBeginCapture", rc=0)
    assert beg and beg[0].get("via") == "cudaStreamBeginCapture", "begin: %s" % beg
    inst = calls(recs, "cuGraphInstantiate", rc=0)
    assert len(inst) == 1, "instantiate records %s" % inst
    assert inst[0].get("flags") == 9, "PyTorch flags %s (expected AutoFreeOnLaunch|UseNodePriority = 9)" % inst[0].get("flags")
    n = launches(recs)
    assert n == 3, "launch count %d" % n
    bad = [r for r in recs if r["ev"] in ("violation", "mismatch")]
    assert not bad, "a valid PyTorch program got %s" % bad[:2]
    return "output identical, no violation; %s via %s, %s flags=%d via %s; launches=%d" % (
        beg[0]["api"], beg[0]["via"], inst[0]["api"], inst[0]["flags"], inst[0].get("via"), n)


@case("b2 PyTorch cudaMallocAsync backend: captured allocations attributed to the default pool")
def _():
    cmd = [sys.executable, os.path.join(ROOT, "tests", "gpu", "torch_capture.py")]
    env = {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"}
    bare, _ = run(cmd, False, extra=env)
    shim, recs = run(cmd, True, extra=env)
    same_output(bare, shim)
    allocs = [r for r in recs if r["ev"] == "alloc"]
    assert allocs, "no captured allocation records"
    assert all(a["pool_default"] and a["pool"] != "0x0" for a in allocs), allocs
    py = [a for a in allocs if any(f.startswith("py:") and "torch_capture.py" in f for f in a.get("site", []))]
    assert py, "no Python frame of the script in the allocation sites: %s" % allocs[0].get("site")
    inst = calls(recs, "cuGraphInstantiate", rc=0)
    return "%d allocation node(s) in default pool %s; site %s; instantiate flags %s" % (
        len(allocs), allocs[0]["pool"], [f for f in py[0]["site"] if f.startswith("py:")][:1], inst[0].get("flags") if inst else None)


@case("c dlsym-by-name program (XLA's way)")
def _():
    exe = os.path.join(BIN, "dlsym_gpu")
    bare, _ = run([exe], False)
    assert bare.returncode == 0, bare.stdout[-500:]
    shim, recs = run([exe], True, level="trace")
    same_output(bare, shim)
    for api in ("cuGraphCreate", "cuGraphAddMemAllocNode", "cuGraphAddNode_v2", "cuGraphAddMemFreeNode",
                "cuGraphInstantiateWithFlags", "cuGraphExecDestroy", "cuMemAlloc_v2"):
        assert calls(recs, api, rc=0), "no record for " + api
    lc = [r for r in calls(recs, "cuGraphLaunch", rc=0) if r["api"] == "cuGraphLaunch"]
    assert len(lc) == 3, "launch records %d" % len(lc)
    inst = calls(recs, "cuGraphInstantiateWithFlags")[0]
    assert inst["alloc_nodes"] == 1 and inst["free_nodes"] == 1, inst
    return "output identical; graph/alloc/memset/free/instantiate/3 launches recorded; nodes=%d" % inst["nodes"]


@case("d CuPy capture")
def _():
    cmd = [sys.executable, os.path.join(ROOT, "tests", "gpu", "cupy_capture.py")]
    bare, _ = run(cmd, False)
    assert bare.returncode == 0, bare.stderr[-800:]
    shim, recs = run(cmd, True)
    same_output(bare, shim)
    beg = calls(recs, "cuStreamBeginCapture", rc=0)
    end = calls(recs, "cuStreamEndCapture", rc=0)
    inst = calls(recs, "cuGraphInstantiate", rc=0)
    assert beg and end and inst, "begin %d end %d inst %d" % (len(beg), len(end), len(inst))
    n = launches(recs)
    assert n == 2, "launch count %d" % n
    return "output identical; %s, %s, %s; launches=%d" % (beg[0]["api"], end[0]["api"], inst[0]["api"], n)


@case("e cuGetProcAddress parity: real driver vs stand-in table")
def _():
    exe = os.path.join(BIN, "getproc_table")
    bare, _ = run([exe], False)
    assert bare.returncode == 0, bare.stdout[-500:]
    expected = open(os.path.join(ROOT, "tests", "standin", "getproc_table.expected")).read()
    diff = [(a, b) for a, b in zip(bare.stdout.splitlines(), expected.splitlines()) if a != b]
    assert not diff and len(bare.stdout.splitlines()) == len(expected.splitlines()), \
        "real driver differs from the stand-in table: %s" % diff[:6]
    shim, _ = run([exe], True)
    same_output(bare, shim)
    return "%d queries identical on the real driver, the stand-in, and under the shim" % len(expected.splitlines())


@case("f CGSHIM_DISABLE=1 is a pure pass-through")
def _():
    exe = os.path.join(BIN, "demo_capture")
    bare, _ = run([exe], False)
    shim, recs = run([exe], True, extra={"CGSHIM_DISABLE": "1"})
    same_output(bare, shim)
    assert not recs, "%d records written while disabled" % len(recs)
    return "output identical, no records"


gpucase.finish()
