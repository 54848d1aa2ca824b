#!/usr/bin/env python3
"""The hot data section of libcgshim.so (shim/hot.h, CG_HOT_DATA): the
read-mostly flags and real entries a steady capture, update or launch loop
reads every iteration lie together, in at most MAX_LINES cache lines from a
line's start (issue 36: scattered, each was a line, a miss a cycle in
lockstep). Fails when the section is gone, grows past its lines (an array
put there), or one of the loop's variables left it.
Usage: hot_data_check.py LIBCGSHIM_SO"""
import re, subprocess, sys

MAX_LINES = 4
# each hook's entry (cg_call_begin, CG_REAL), the capture loop's model flags,
# the real entries of the capture cycle's hooks, and the churn threshold (a capture's end, an instantiation)
WANT = ("cg_state", "cg_driver_resolved", "cg_warm_pending", "cg_log_level", "one_device", "pool_gen",
        "stream_gen", "sites_waiting", "real_cuStreamBeginCapture_v2", "real_cuMemAllocAsync",
        "real_cuMemFreeAsync", "real_cuLaunchKernel", "real_cuStreamEndCapture",
        "real_cuGraphInstantiateWithFlags", "real_cuGraphExecDestroy", "real_cuGraphDestroy",
        "real_cuStreamGetCaptureInfo_v3", "drv_cuGraphGetNodes", "cg_churn_threshold")

lib = sys.argv[1]
fails = passes = 0


def check(ok, what):
    global fails, passes
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok
    passes += bool(ok)


def readelf(*args):
    p = subprocess.run(["readelf", "-W"] + list(args) + [lib], capture_output=True, text=True)
    check(p.returncode == 0, "readelf %s %s" % (" ".join(args), p.stderr.strip()[-200:]))
    return p.stdout


sec = None
for line in readelf("-S").splitlines():
    m = re.match(r"\s*\[\s*(\d+)\]\s+cg_hot_data\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
    if m:
        sec = (int(m.group(1)), int(m.group(2), 16), int(m.group(3), 16))
check(sec is not None, "libcgshim.so has a cg_hot_data section")
if sec:
    idx, addr, size = sec
    check(addr % 64 == 0, "it starts a cache line (0x%x)" % addr)
    check(size <= MAX_LINES * 64, "%d bytes: at most %d lines" % (size, MAX_LINES))
    inside = set()
    for line in readelf("-s").splitlines():
        f = line.split()
        if len(f) >= 8 and f[3] == "OBJECT" and f[6] == str(idx):
            inside.add(f[7].split("@")[0])
    for name in WANT:
        check(name in inside, "%s is in it" % name)
print("%d passed, %d failed" % (passes, fails))
sys.exit(1 if fails else 0)
