#!/usr/bin/env python3
"""tests/gpu/issue15.py -- GPU checks of issue 15 (run by tests/gpu/issue15).

usage: issue15.py BUILD BIN
  1. update_refusals: the driver's answer to each single change (the table
     for docs/update-refusals.md), and under the shim the same run: every
     refusal predicted (CGS001), no mismatch record.
  2. stale_ptr realloc / pinned / pageable / vmm: each stale-pointer
     reproducer announced (CGS018 at the free, CGS019 before the launch or
     upload that would use the freed memory, CGS020 at instantiate), with
     the kernel's name; clean: no violation.
  3. PyTorch, backend:cudaMallocAsync, static input reassigned: CGS018 naming
     a kernel and CGS019 before the replay; native allocator: silent (the
     limit, docs/design.md "Stale pointers").
  4. 0 false alarms (no CGS018/14/15, no mismatch): torch_capture.py with both
     allocators, cupy_capture.py, torch_compile_ro.py.
One line per case, then "N passed, N failed".
"""
import os, subprocess, sys, tempfile

import gpucase
from gpucase import case

BUILD, BIN = sys.argv[1], sys.argv[2]
LIB = os.path.abspath(os.path.join(BUILD, "shim", "libcgshim.so"))
HERE = os.path.dirname(os.path.abspath(__file__))
STALE = {"CGS018", "CGS019", "CGS020"}


def run(cmd, shim=True, extra=None, timeout=180):
    p, recs, _ = gpucase.run(cmd, LIB if shim else None, extra=extra, timeout=timeout)
    return p, recs


def viols(recs, rules=None):
    return [r for r in recs if r.get("ev") == "violation" and (rules is None or r.get("rule") in rules)]


def before_call(recs, v, api_prefix):
    """v precedes the call record of api (same pid) that it announces."""
    return any(r.get("ev") == "call" and r.get("api", "").startswith(api_prefix) and r.get("pid") == v.get("pid")
               and r.get("seq", 0) > v.get("seq", 0) for r in recs)


@case("update-refusals table (docs/update-refusals.md)")
def _():
    p, _ = run([os.path.join(BIN, "update_refusals")], shim=False)
    print(p.stdout, end="", flush=True)
    assert p.returncode == 0 and p.stdout.count("\n") >= 15, "exit %d\n%s" % (p.returncode, p.stderr[-2000:])
    rows = [l for l in p.stdout.splitlines() if l.startswith("| ") and not l.startswith("| case")]
    off = []
    for l in rows:
        f = [x.strip() for x in l.strip("|").split("|")]
        measured = "%s %s" % (f[2], f[3].split(" ")[-1])
        if measured != f[5]:
            off.append("%s: measured %s, predicted %s" % (f[0], measured, f[5]))
    return "%d rows; predictions off: %s" % (len(rows), off or "none")


@case("update-refusals under the shim: refusals predicted, no mismatch")
def _():
    p, recs = run([os.path.join(BIN, "update_refusals")])
    mism = [r for r in recs if r.get("ev") == "mismatch"]
    v = viols(recs, {"CGS001"})
    assert p.returncode == 0, p.stderr[-2000:]
    assert not mism, "mismatch records: %s" % [(m.get("api"), m.get("rc"), m.get("result")) for m in mism]
    return "%d CGS001 (with kernel names: %d)" % (len(v), sum(1 for x in v if x.get("kernel")))


def stale_case(arg, want, launch_api="cuGraphLaunch"):
    p, recs = run([os.path.join(BIN, "stale_ptr"), arg])
    assert p.returncode == 0 and ("%s done" % arg) in p.stdout, "exit %d: %s %s" % (p.returncode, p.stdout, p.stderr[-1500:])
    got = {v["rule"] for v in viols(recs)}
    assert got == want, "violations %s, want %s" % (sorted(got), sorted(want))
    for v in viols(recs, {"CGS019"}):
        assert before_call(recs, v, launch_api), "CGS019 not before the %s call" % launch_api
    k = [v.get("kernel") for v in viols(recs, {"CGS018"}) if v.get("kernel")]
    return "%s; kernel %s" % (sorted(got), k[0] if k else "-")


@case("realloc + replay: CGS018 at cudaFree, CGS019 before the replay")
def _():
    p, _ = run([os.path.join(BIN, "stale_ptr"), "realloc"], shim=False)
    same = "same address again: yes" in p.stdout
    return stale_case("realloc", {"CGS018", "CGS019"} if same else {"CGS018"})


@case("pinned host buffer freed after capture: CGS018, CGS019 before the upload")
def _():
    return stale_case("pinned", {"CGS018", "CGS019"}, "cuGraphUpload")


@case("pageable copy: CGS020 at instantiate")
def _():
    return stale_case("pageable", {"CGS020"})


@case("VMM unmap + re-map + replay: CGS018, CGS019")
def _():
    return stale_case("vmm", {"CGS018", "CGS019"})


@case("static buffers kept alive: no violation")
def _():
    return stale_case("clean", set())


@case("PyTorch cudaMallocAsync, static input reassigned: CGS018 + CGS019 before the replay")
def _():
    p, recs = run([sys.executable, os.path.join(HERE, "torch_stale.py")],
                  extra={"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"})
    assert p.returncode == 0, p.stderr[-2000:]
    v13, v14 = viols(recs, {"CGS018"}), viols(recs, {"CGS019"})
    assert v13 and v14, "CGS018 %d, CGS019 %d" % (len(v13), len(v14))
    assert before_call(recs, v14[0], "cuGraphLaunch"), "CGS019 not before the replay"
    return "kernel %s param %s; %s" % (v13[0].get("kernel"), v13[0].get("param"), p.stdout.strip())


@case("PyTorch native allocator, same program: silent (the documented limit)")
def _():
    p, recs = run([sys.executable, os.path.join(HERE, "torch_stale.py")])
    assert p.returncode == 0, p.stderr[-2000:]
    return "violations %s; %s" % (sorted({v["rule"] for v in viols(recs)}), p.stdout.strip())


def no_false_alarm(cmd, extra=None):
    p, recs = run(cmd, extra=extra, timeout=240)
    assert p.returncode == 0, p.stderr[-2000:]
    bad = viols(recs, STALE)
    mism = [r for r in recs if r.get("ev") == "mismatch"]
    assert not bad, "false alarms: %s" % [(v["rule"], v.get("msg", "")[:160]) for v in bad]
    assert not mism, "mismatch records: %d" % len(mism)
    return "%d records, violations %s" % (len(recs), sorted({v["rule"] for v in viols(recs)}) or "none")


@case("0 false alarms: torch_capture.py, native allocator")
def _():
    return no_false_alarm([sys.executable, os.path.join(HERE, "torch_capture.py")])


@case("0 false alarms: torch_capture.py, cudaMallocAsync")
def _():
    return no_false_alarm([sys.executable, os.path.join(HERE, "torch_capture.py")],
                          {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"})


@case("0 false alarms: torch_capture.py, expandable segments (VMM)")
def _():
    return no_false_alarm([sys.executable, os.path.join(HERE, "torch_capture.py")],
                          {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"})


@case("0 false alarms: cupy_capture.py")
def _():
    return no_false_alarm([sys.executable, os.path.join(HERE, "cupy_capture.py")])


@case("0 false alarms: torch.compile(mode=reduce-overhead)")
def _():
    return no_false_alarm([sys.executable, os.path.join(HERE, "torch_compile_ro.py")])


gpucase.finish()
