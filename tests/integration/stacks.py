#!/usr/bin/env python3
"""tests/integration/stacks.py -- CUDA graph work from unusual stacks, bare
and under the shim (issue 30): the call-site walk reads only the thread's
known stack, or a copy that cannot fault. Usage: stacks.py STACKATTACK MODE...
(modes of stackattack.c; 'fiber-warm' is 'fiber' with FIBER_WARM=1). Env
from meson: CGSHIM_LIB, STANDIN_DIR."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

LIB = os.environ["CGSHIM_LIB"]
STANDIN = os.environ["STANDIN_DIR"]


def case(exe, mode):
    extra = {"LD_LIBRARY_PATH": STANDIN}
    if mode == "fiber-warm":
        mode, extra["FIBER_WARM"] = "fiber", "1"
    # altstack/altmain run the CUDA work (printf among it) in a signal
    # handler on purpose; TSan calls that a signal-unsafe call, bare too
    if mode in ("altstack", "altmain") and os.environ.get("TSAN_OPTIONS"):
        extra["TSAN_OPTIONS"] = os.environ["TSAN_OPTIONS"] + ":report_signal_unsafe=0"
    bare, _, _ = cgtest.run([exe, mode], extra=extra, timeout=120)
    if bare.returncode == 77:
        raise cgtest.Skip("the runtime refused the thread's stack, bare: %s" % bare.stdout.strip())
    assert bare.returncode == 0, "bare: rc %d: %s" % (bare.returncode, bare.stderr[-400:])
    shim, recs, _ = cgtest.run([exe, mode], lib=LIB, level="debug", extra=extra, timeout=120)
    assert shim.returncode == 0, "under the shim: rc %d (bare 0): %s" % (shim.returncode, shim.stderr[-400:])
    assert shim.stdout == bare.stdout, "output differs: bare %r, shim %r" % (bare.stdout, shim.stdout)
    inst = cgtest.calls(recs, "cuGraphInstantiate")
    assert inst, "the shim recorded no instantiate (%d records)" % len(recs)
    # qemu-user has no process_vm_readv: a walk off the thread's stack gets
    # no copy there, and no frame of the program's
    if not os.environ.get("MESON_EXE_WRAPPER") or mode in ("tiny", "setstack"):
        assert all(r.get("site") for r in inst), "an instantiate without a call site: %s" % inst
    return "rc 0 both, same output, %d records" % len(recs)


def main():
    exe, modes = sys.argv[1], sys.argv[2:]
    t = cgtest.Tally()
    for m in modes:
        t.case(m, case, exe, m)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
