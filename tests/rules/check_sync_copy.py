#!/usr/bin/env python3
"""tests/rules/check_sync_copy.py -- synchronous copies and memsets during a
capture (CGS014 and CGS024 on the BLOCK rows of hooks.def), on the CPU
stand-in: runs sync_copy_routes bare (the stand-in answers as the H200 did,
2026-11-29) and under libcgshim.so, and checks that each call is named
before it reaches the driver: under a blocking capture CGS014 (error,
predicted_rc 906, the capture, its stream and mode, both threads, the
capture's failed end linked back), under a non-blocking one CGS024 (a hint,
route legacy_stream, or per_thread_stream for the _ptds forms) for the
capturing thread, nothing for another thread; and that nothing else fires
and the model reports no mismatch.

usage: check_sync_copy.py --prog PATH --standin-dir DIR --shim LIBCGSHIM
One line per check; exit status non-zero when any failed. The same checks
on a GPU host: tests/gpu/synccap (the program built by nvcc, the real
driver and runtime: whether cudaMemcpy's refusal reaches a hooked entry
point, cuMemcpyDtoH_v2, and case 35, inferred, is measured there)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, check = cgtest.prog_checker()


FORMS = ["cuMemcpy", "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2", "cuMemcpyDtoD_v2", "cuMemsetD8_v2", "cuMemsetD32_v2"]
MODES = ["global", "thread_local", "relaxed"]
# per case, in order: (rule or None, api, mode, other thread, route)
WANT = [("CGS014", f, m, False, None) for m in MODES for f in FORMS]
WANT += [("CGS014", "cuMemcpyDtoH_v2", m, True, None) for m in MODES]
WANT += [("CGS024", f, "global", False, "legacy_stream") for f in FORMS]
WANT += [(None, "cuMemcpyDtoH_v2", "global", True, None)]
WANT += [("CGS024", f + "_ptds", "global", False, "per_thread_stream") for f in FORMS]
WANT += [("CGS024", "cuMemcpyDtoH_v2_ptds", "global", False, "per_thread_stream")]

ld = os.environ.get("LD_LIBRARY_PATH")
env = {"LD_LIBRARY_PATH": a.standin_dir + (":" + ld if ld else "")}  # on a GPU host (tests/gpu/synccap): none there
bare, _, _ = cgtest.run([a.prog], extra=env, timeout=60)
check("bare: exits 0 (the stand-in answers as measured)", bare.returncode == 0, bare.stdout[-1500:])
p, recs, _ = cgtest.run([a.prog], a.shim, extra=env, timeout=60)
check("shim: exits 0, output as bare", p.returncode == 0 and p.stdout == bare.stdout, p.stdout[-800:] + p.stderr[-800:])
cases = re.findall(r"^case (\d+) .*call=(-?\d+) end=(-?\d+)", p.stdout, re.M)
check("%d cases ran (want %d)" % (len(cases), len(WANT)), len(cases) == len(WANT))

viol = cgtest.viol(recs)
named = [v for v in viol if v.get("rule") in ("CGS014", "CGS024")]
check("only CGS014 and CGS024 fire", len(named) == len(viol), sorted({v.get("rule") for v in viol}))
check("no mismatch", not [r for r in recs if r.get("ev") == "mismatch"],
      [r for r in recs if r.get("ev") == "mismatch"][:2])
want_named = [w for w in WANT if w[0]]
check("%d violations (want %d)" % (len(named), len(want_named)), len(named) == len(want_named),
      [(v.get("rule"), v.get("api")) for v in named])
calls = [r for r in recs if r.get("ev") == "call"]
broken = [r for r in recs if r.get("ev") == "broken"]
for i, (rule, api, mode, other, route) in enumerate(want_named):
    if i >= len(named):
        break
    v = named[i]
    tag = "%s %s (%s, %s thread)" % (rule, api, mode, "other" if other else "same")
    check(tag + ": rule, api", v.get("rule") == rule and v.get("api") == api, (v.get("rule"), v.get("api")))
    check(tag + ": the capture, its stream, mode, both threads, sites",
          all(k in v for k in ("capture", "stream", "capture_tid", "call_tid", "site", "begin_site")) and
          v.get("mode") == mode and (v.get("call_tid") != v.get("capture_tid")) == other, v)
    after = [c for c in calls if c.get("seq", 0) > v.get("seq", 0) and c.get("api") == api]
    if rule == "CGS014":
        check(tag + ": error, predicted_rc 906", v.get("severity") == "error" and v.get("predicted_rc") == 906, v)
        check(tag + ": named before the call, which returned 906", bool(after) and after[0].get("rc") == 906,
              after[:1])
        b = [r for r in broken if r.get("capture") == v.get("capture")]
        check(tag + ": the failed end links back to it", len(b) == 1 and b[0].get("by_api") == api and
              b[0].get("by_rule") == "CGS014" and b[0].get("rc") == 901, b)
    else:
        check(tag + ": hint, route " + route + ", its stream", v.get("severity") == "hint" and
              v.get("route") == route and "predicted_rc" not in v and
              v.get("launch_stream") == ("0x2" if api.endswith("_ptds") else "0x0"), v)
        check(tag + ": named before the call, its record at info (rc 0)", bool(after) and after[0].get("rc") == 0,
              after[:1])
T.finish(exit=True)
