#!/usr/bin/env python3
"""tests/rules/check_escape.py -- CGS024 (work that escapes a capture) and
CGS025 (empty graph), issue 32, on the CPU stand-in: runs escape_routes
under libcgshim.so and checks that each escape route is named before its
call, with the route, the kernel, the stream, the device, the site and the
capture it escaped; that the empty graph is named at its end with the
kernel; and that nothing else is named (joined streams, the per-thread
stream's own capture, another thread's launches on its own stream).

usage: check_escape.py --prog PATH --standin-dir DIR --shim LIBCGSHIM
One line per check; exit status non-zero when any failed."""
import os
import sys

# cgtest: the tally, the run under the shim, and (on import) programs of
# another machine (the aarch64 cross build) through MESON_EXE_WRAPPER.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, check = cgtest.prog_checker()


def check(name, ok, detail=""):
    return T.check(ok, name, str(detail) if detail and not ok else "")


KERNEL = "_Z6k_fillPfld"
# (route, api, kernel) per CGS024 record, in order
WANT = [("other_stream", "cuLaunchKernel", KERNEL), ("legacy_stream", "cuLaunchKernel", KERNEL),
        ("per_thread_stream", "cuLaunchKernel", KERNEL), ("other_stream", "cuMemsetD8Async", None),
        ("other_stream", "cuMemcpyDtoDAsync_v2", None)]

p, recs, _ = cgtest.run([a.prog], a.shim, extra={"LD_LIBRARY_PATH": a.standin_dir}, timeout=60)
check("program exits 0", p.returncode == 0, p.stdout + p.stderr)

viol = cgtest.viol(recs)
esc = cgtest.viol(recs, "CGS024")
empty = cgtest.viol(recs, "CGS025")
check("only CGS024 and CGS025 fire", all(r.get("rule") in ("CGS024", "CGS025") for r in viol),
      sorted({r.get("rule") for r in viol}))
check("%d CGS024 records (want %d)" % (len(esc), len(WANT)), len(esc) == len(WANT),
      [(r.get("route"), r.get("api")) for r in esc])
main_tid = esc[0].get("call_tid") if esc else None
for i, (route, api, kernel) in enumerate(WANT):
    if i >= len(esc):
        break
    v = esc[i]
    tag = "escape %d (%s, %s)" % (i + 1, route, api)
    check(tag + ": route", v.get("route") == route, v.get("route"))
    check(tag + ": api", (v.get("api") or "").replace("_ptsz", "") == api, v.get("api"))
    check(tag + ": severity warn", v.get("severity") == "warn", v.get("severity"))
    check(tag + ": kernel", v.get("kernel") == kernel, v.get("kernel"))
    check(tag + ": stream, device, site, the capture it escaped",
          all(k in v for k in ("launch_stream", "device", "site", "capture", "stream", "begin_site")) and
          v.get("launch_stream") != v.get("stream"), v)
    check(tag + ": the capturing thread's own", v.get("call_tid") == v.get("capture_tid") == main_tid, v)
    after = [r for r in recs if r.get("ev") == "call" and r.get("seq", 0) > v.get("seq", 0) and
             (r.get("api") or "").replace("_ptsz", "") == api]
    check(tag + ": named before the call", bool(after) and after[0].get("rc") == 0, after[:1])
check("escape 1 and 2 in different captures", len(esc) >= 2 and esc[0].get("capture") != esc[1].get("capture"))
check("one CGS025 (got %d)" % len(empty), len(empty) == 1, empty)
if empty and len(esc) >= 3:
    e = empty[0]
    check("CGS025: the capture of the per-thread escape", e.get("capture") == esc[2].get("capture"), e)
    check("CGS025: names the escaped kernel", e.get("kernels") == KERNEL and e.get("escaped_kernels") == 1, e)
    end = [r for r in recs if r.get("ev") == "call" and r.get("api") == "cuStreamEndCapture" and
           r.get("capture") == e.get("capture")]
    check("CGS025: at the end of the capture", bool(end) and end[0].get("seq", 0) > e.get("seq", 0), end[:1])
check("0 escape records for another thread's launches on its own stream",
      not [r for r in esc if r.get("call_tid") != main_tid])
T.finish(exit=True)
