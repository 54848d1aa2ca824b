#!/usr/bin/env python3
"""tests/gpu/issue30_crash.py -- issue 30.4 on a GPU (run by tests/gpu/issue30_crash).

usage: issue30_crash.py BUILD BIN
  crash_gpu raise / fault / handler at CGSHIM_LOG=debug: exit status and
  output as bare; the log holds seq 1..N with none missing, the last record
  `fatal` (signal, the open capture, the thread's last call).
  PyTorch with faulthandler on (as pytest runs): a graph replayed, then a
  NULL read through ctypes: faulthandler's traceback on stderr, status -11
  as bare, and the shim's `fatal` record.
One line per case, then "N passed, N failed".
"""
import os, sys

import gpucase
from gpucase import case

BUILD, BIN = sys.argv[1], sys.argv[2]
LIB = os.path.abspath(os.path.join(BUILD, "shim", "libcgshim.so"))


def check_log(recs, then):
    # per-thread buffers are written out in turn, so the file's order is not
    # seq order (the driver's own threads log too): complete means 1..N
    seqs = sorted(r["seq"] for r in recs)
    assert seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 3, "seq missing: %s" % seqs
    f = recs[-1]
    assert f["ev"] == "fatal" and f.get("signal") == "SIGSEGV", "last record: %s" % f
    assert f.get("then") == then, "then %s" % f.get("then")
    assert f.get("live_captures") == 1, "captures: %s" % f.get("captures")
    assert f.get("last_calls"), "no last calls"
    return f


for mode, status, then in (("raise", -11, "default_action"), ("fault", -11, "default_action"),
                           ("handler", 42, "program_handler")):
    @case("crash_gpu %s: status %d as bare, complete log, fatal record" % (mode, status))
    def _(mode=mode, status=status, then=then):
        exe = os.path.join(BIN, "crash_gpu")
        bare, _, _ = gpucase.run([exe, mode])
        p, recs, _ = gpucase.run([exe, mode], LIB, level="debug")
        assert bare.returncode == status == p.returncode and bare.stdout == p.stdout, \
            "bare %d %r, shim %d %r" % (bare.returncode, bare.stdout, p.returncode, p.stdout)
        f = check_log(recs, then)
        if mode == "fault":
            assert f.get("addr") == "0x0", "addr %s" % f.get("addr")


TORCH = r"""
import ctypes, faulthandler, torch
faulthandler.enable()
x = torch.zeros(1024, device="cuda"); s = torch.cuda.Stream()
g = torch.cuda.CUDAGraph()
with torch.cuda.stream(s):
    x += 1
    torch.cuda.synchronize()
    with torch.cuda.graph(g):
        x.mul_(2)
for _ in range(3):
    g.replay()
torch.cuda.synchronize()
print("about to crash", flush=True)
ctypes.string_at(0)
"""


@case("PyTorch + faulthandler: status -11 as bare, traceback printed, fatal record")
def _():
    try:
        import torch  # noqa: F401
    except ImportError:
        print("  (no torch: skipped)")
        return
    bare, _, _ = gpucase.run([sys.executable, "-c", TORCH])
    p, recs, _ = gpucase.run([sys.executable, "-c", TORCH], LIB, level="debug")
    assert bare.returncode == p.returncode == -11, "bare %d shim %d" % (bare.returncode, p.returncode)
    assert "Fatal Python error" in p.stderr and "Fatal Python error" in bare.stderr, p.stderr[-800:]
    fatal = [r for r in recs if r["ev"] == "fatal"]
    # faulthandler.enable() runs after the shim's handler is in place: it
    # dumps the traceback, puts the previous handler back and re-raises, so
    # the shim's handler runs second and hands the signal to the default
    # action (H200, 2026-11-28)
    assert len(fatal) == 1 and fatal[0].get("then") == "default_action", fatal
    seqs = sorted(r["seq"] for r in recs)
    assert seqs == list(range(1, len(seqs) + 1)), "seq missing"


gpucase.finish()
