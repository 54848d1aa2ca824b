#!/usr/bin/env python3
"""tests/gpu/issue14.py BUILD BIN -- GPU checks of issue 14 (run by
tests/gpu/issue14). One line per case, then "N passed, N failed".

1. capture_parity (gcc, libcuda) bare: its rows against
   tests/integration/capture_parity.expected (the map, measured through the
   runtime API; this is the driver API: a differing row is printed).
2. capture_parity under the shim: same output, no mismatch, every failing
   row named before the call, every failed end linked to its breaking call
   (less the routes run.py's PARITY_NOT_NAMED lists).
3. Fidelity rows of CGS007 and CGS013-CGS016 (tests/gpu/fidelity.py on the
   reproducers in BIN) and the link of each capture-breaking one.
4. PyTorch: a background thread named pt_pin_memory allocates pinned memory
   inside a Global torch.cuda.graph capture (EngineCore): the culprit named
   with its thread name and Python line, the 901 linked to it; under
   CGSHIM_CAPTURE_MODE=thread_local the capture succeeds and the output is
   right.
5. .item(), torch.cuda.synchronize(), print(tensor) inside a capture: named
   with the script line.
6. No violation on valid PyTorch and CuPy captures.
"""
import os, re, subprocess, sys, tempfile

import gpucase

BUILD, BIN = sys.argv[1], sys.argv[2]
LIB = os.path.abspath(os.path.join(BUILD, "shim", "libcgshim.so"))
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TORCH = os.path.join(HERE, "issue14_torch.py")
results = gpucase.results
NOT_NAMED = {"cudaStreamIsCapturing(legacy) (blocking capture)"}


def run(cmd, shim, extra=None, timeout=120):
    p, recs, _ = gpucase.run(cmd, LIB if shim else None, extra=extra, timeout=timeout)
    recs.sort(key=lambda r: (r.get("pid", 0), r.get("seq", 0)))
    return p, recs


def case(name):
    def deco(fn):
        try:
            detail = fn()
            if detail is None:
                return
            results.append(True)
            print("PASS %s: %s" % (name, detail), flush=True)
        except AssertionError as e:
            results.append(False)
            print("FAIL %s: %s" % (name, e), flush=True)
        except Exception as e:
            results.append(False)
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
    return deco


def rows(text):
    return [[x.strip() for x in l.strip().strip("|").split("|")] for l in text.splitlines()
            if l.startswith("| ") and not l.startswith("| route")]


def line_of(mark):
    """The line holding "# MARK" (the code line, not the docstring's mention)."""
    return [i + 1 for i, l in enumerate(open(TORCH)) if "# " + mark in l][0]


def in_site(site, want):
    return any(want in f for f in (site or []))


def kind(recs, ev, **kw):
    return [r for r in recs if r.get("ev") == ev and all(r.get(k) == v for k, v in kw.items())]


PARITY = os.path.join(BIN, "capture_parity")
gold = rows(open(os.path.join(ROOT, "tests", "integration", "capture_parity.expected")).read())
gd = {tuple(r[:3]): r for r in gold}
state = {}


@case("1 the map again: capture_parity bare on the GPU vs the measured rows")
def _():
    p, _ = run([PARITY], False, timeout=200)
    assert p.returncode == 0, p.stdout[-400:] + p.stderr[-400:]
    got = rows(p.stdout)
    state["bare"] = p
    diff = [(r[:3], r[3:], gd[tuple(r[:3])][3:]) for r in got if tuple(r[:3]) in gd and r != gd[tuple(r[:3])]]
    for d in diff:
        print("  differs: %s driver API %s, map %s" % d)
    assert not diff, "%d of %d rows differ" % (len(diff), len(gd))
    return "%d rows as measured" % len(gd)


@case("2 capture_parity under the shim: named before the call, linked at the end")
def _():
    bare = state.get("bare")
    assert bare, "no bare run"
    p, recs = run([PARITY], True, timeout=200)
    assert p.stdout == bare.stdout, "output differs under the shim"
    got = rows(bare.stdout)
    mism = kind(recs, "mismatch")
    assert not mism, "mismatch: %s" % [(r.get("api"), r.get("rule"), r.get("rc")) for r in mism][:5]
    # 401: an end on a stream not capturing, CGS021 (issue 31)
    want = len([r for r in got if (r[3] in ("401", "900", "902", "906", "907", "908") or (r[3] == "0" and r[4] == "INVALIDATED"))
                and r[0] not in NOT_NAMED])
    v = [r for r in kind(recs, "violation") if r.get("rule") != "CGS008"]
    assert len(v) == want, "%d violations for %d failing rows" % (len(v), want)
    b = kind(recs, "broken")
    unlinked = [r for r in b if not r.get("by_api")]
    exp_unlinked = len([r for r in got if r[0] in NOT_NAMED and r[5] == "901"])
    assert len(unlinked) == exp_unlinked, "%d failed ends without a link (want %d): %s" % (
        len(unlinked), exp_unlinked, [r.get("msg") for r in unlinked][:3])
    return "%d violations, %d failed ends linked" % (len(v), len(b) - len(unlinked))


@case("3 fidelity rows CGS007, CGS013-CGS016 (+ valid)")
def _():
    p = subprocess.run([sys.executable, os.path.join(HERE, "fidelity.py"), BUILD, BIN], capture_output=True,
                       text=True, timeout=200)
    print("\n".join("  " + l for l in p.stdout.splitlines()))
    assert p.returncode == 0, "fidelity rc %d" % p.returncode
    linked = []
    for n in ("cgs007_capture-unsafe-call", "cgs013_captured-event-sync", "cgs014_legacy-stream-in-capture",
              "cgs015_capture-merge"):
        _, recs = run([os.path.join(BIN, n)], True)
        rule = "CGS" + n[3:6]
        b = [r for r in kind(recs, "broken") if r.get("by_rule") == rule]
        if not b:
            linked.append("%s: no failed end linked to %s (broken: %s; violations: %s)" % (
                n, rule, [r.get("msg") for r in kind(recs, "broken")],
                [(r.get("rule"), r.get("api"), r.get("capture")) for r in kind(recs, "violation")]))
            continue
        linked.append(rule)
    bad = [l for l in linked if l.startswith("cgs")]
    assert not bad, "; ".join(bad)
    return "all rows pass; linked: %s" % ",".join(linked)


@case("4a PyTorch: pinned allocation on thread pt_pin_memory during a Global capture")
def _():
    bare, _ = run([sys.executable, TORCH, "pin"], False)
    shim, recs = run([sys.executable, TORCH, "pin"], True)
    assert bare.returncode == 0 and shim.stdout == bare.stdout, "bare rc %d, out %r / %r %s" % (
        bare.returncode, bare.stdout, shim.stdout, bare.stderr[-300:])
    assert "capture: raised" in bare.stdout, "the capture did not fail bare: %r" % bare.stdout
    pin = "issue14_torch.py:%d" % line_of("PIN-LINE")
    v = [r for r in kind(recs, "violation", rule="CGS007") if r.get("call_thread") == "pt_pin_memory"]
    assert v, "no CGS007 naming thread pt_pin_memory: %s" % [(r.get("api"), r.get("call_thread")) for r in kind(recs, "violation")]
    assert v[0].get("capture_thread") == "EngineCore", "capture thread %r" % v[0].get("capture_thread")
    assert in_site(v[0].get("site"), pin), "%s not in the site %s" % (pin, v[0].get("site"))
    b = [r for r in kind(recs, "broken") if r.get("by_thread") == "pt_pin_memory"]
    assert b and in_site(b[0].get("by_site"), pin), "the 901 is not linked to it: %s" % [r.get("msg") for r in kind(recs, "broken")]
    return b[0].get("msg")


@case("4b PyTorch: the same with CGSHIM_CAPTURE_MODE=thread_local")
def _():
    p, recs = run([sys.executable, TORCH, "pin"], True, extra={"CGSHIM_CAPTURE_MODE": "thread_local"})
    assert p.returncode == 0, p.stderr[-400:]
    assert "capture: ok" in p.stdout and "output: right" in p.stdout and "background allocation: ok" in p.stdout, p.stdout
    cm = kind(recs, "capture_mode")
    assert cm and all(r.get("mode") == "thread_local" for r in cm), "capture_mode records %s" % cm
    v = kind(recs, "violation")
    assert not v, "violations: %s" % [(r.get("rule"), r.get("api")) for r in v]
    return "capture ok, output right, %d capture_mode record(s)" % len(cm)


def in_capture(what, mark):
    bare, _ = run([sys.executable, TORCH, what], False)
    shim, recs = run([sys.executable, TORCH, what], True)
    assert shim.stdout == bare.stdout, "output differs: %r / %r" % (bare.stdout, shim.stdout)
    want = "issue14_torch.py:%d" % line_of(mark)
    v = [r for r in kind(recs, "violation") if in_site(r.get("site"), want)]
    b = kind(recs, "broken")
    if not v:
        lk = [r.get("msg") for r in b if in_site(r.get("by_site"), want)]
        assert False, "no violation at %s%s: %s" % (
            want, " (the end is linked to it, not named before: %s)" % lk[0] if lk else "",
            [(r.get("rule"), r.get("api"), (r.get("site") or [])[:3]) for r in kind(recs, "violation")])
    linked = [r for r in b if in_site(r.get("by_site"), want)]
    assert not b or linked, "the failed end is not linked to %s: %s" % (want, [r.get("msg") for r in b])
    return "%s %s at %s%s" % (v[0]["rule"], v[0]["api"], want, "; end linked" if linked else "")


@case("5a .item() inside a capture")
def _():
    return in_capture("item", "ITEM-LINE")


@case("5b torch.cuda.synchronize() inside a capture")
def _():
    return in_capture("sync", "SYNC-LINE")


@case("5c print(tensor) inside a capture")
def _():
    return in_capture("print", "PRINT-LINE")


def valid(script):
    path = os.path.join(HERE, script)
    bare, _ = run([sys.executable, path], False)
    if bare.returncode != 0 and "No module named" in bare.stderr:
        print("SKIP 6 %s: %s" % (script, bare.stderr.strip().splitlines()[-1]))
        return None
    shim, recs = run([sys.executable, path], True)
    assert bare.returncode == 0 and shim.stdout == bare.stdout, "rc %d, output differs %s" % (bare.returncode, bare.stderr[-300:])
    v = kind(recs, "violation") + kind(recs, "mismatch") + kind(recs, "broken")
    assert not v, "false alarms: %s" % [(r.get("ev"), r.get("rule"), r.get("api")) for r in v]
    graphs = [r for r in kind(recs, "call") if "Instantiate" in r.get("api", "") or "EndCapture" in r.get("api", "")]
    assert graphs, "no capture or instantiate seen: the check would be empty"
    return "silent; %d capture ends/instantiates seen" % len(graphs)


@case("6a valid: torch_capture.py")
def _():
    return valid("torch_capture.py")


@case("6b valid: cupy_capture.py")
def _():
    return valid("cupy_capture.py")


@case("6c valid: jax_capture.py (XLA command buffers)")
def _():
    return valid("jax_capture.py")


@case("6d valid: torch_compile_ro.py (torch.compile reduce-overhead)")
def _():
    return valid("torch_compile_ro.py")


gpucase.finish()
