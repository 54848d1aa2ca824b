"""tests/gpu/hang.py BUILD BIN [CASE] -- issue 33's single-GPU hang cases
(tests/gpu/hang says what each is). Each case runs RUNS (10) times, under
the shim with its JSONL log at warn; a run passes when its dump names the
blocked thread, the call, the site (Python line, or the waiter's native
frame found with addr2line) and the stream's last work. A case passes at
>= 9 of 10.

The C cases run tests/gpu/hang_c.py: Python calls libhang_gpu.so's
hang_wait() through ctypes, so their dumps name a Python line too.
Self-test on a CPU host (the harness itself, no GPU): HANG_SELFTEST=1 with
STANDIN_DIR and HANG_LIB (tests/integration/libhang_lib.so: the same
interface on the stand-in) runs the spin case's logic under a CPython 3.12
(HANG_PYTHON, else found; whose frames are read without the GIL)."""
import glob
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

B, BIN = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
gpucase.only = sys.argv[3] if len(sys.argv) > 3 else ""
HERE = os.path.dirname(os.path.abspath(__file__))
LIB = os.path.join(B, "shim", "libcgshim.so")
SELFTEST = os.environ.get("HANG_SELFTEST") == "1"
RUNS = int(os.environ.get("HANG_RUNS", "10"))
# The dump asks the driver (a stream's state, a kernel's name) only within
# its first DUMP_DRIVER_NS (shim/dump.c): on a loaded host a dump that
# reaches its streams later says "unasked", as it promises.
DUMP_C = os.path.join(HERE, "..", "..", "shim", "dump.c")
DRIVER_BUDGET_US = [int(l.split()[2].rstrip("ul")) // 1000 for l in open(DUMP_C)
                    if l.startswith("#define DUMP_DRIVER_NS ")][0]
TORCH = os.path.join(HERE, "hang_torch.py")
STUCK_LINE = [i for i, l in enumerate(open(TORCH), 1) if "# STUCK-LINE" in l][0]


def records(d):
    out = []
    for p in glob.glob(os.path.join(d, "log-*.jsonl")):
        for line in open(p, errors="replace"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def frame_function(exe, frame):
    """The function of a native frame "module+0xOFF" (raw) or
    "module:fn+0x.." (symbolised), or None."""
    if ":" in frame.split("+")[0]:
        return frame.split(":", 1)[1].split("+")[0]
    mod, _, off = frame.partition("+")
    if mod != os.path.basename(exe) or not off.startswith("0x"):
        return None
    p = subprocess.run(["addr2line", "-f", "-C", "-e", exe, hex(int(off, 16) - 1)], capture_output=True, text=True)
    return p.stdout.splitlines()[0] if p.returncode == 0 and p.stdout else None


def one_run(cmd, how, want_call, check_site, release, env_extra=None):
    """One run: returns None (the dump was right) or why not."""
    d = tempfile.mkdtemp(prefix="hang-")
    rel = os.path.join(d, "release")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    # under meson's tsan setup a Python host must load the TSan runtime first
    first = os.environ.get("CGSHIM_TEST_PRELOAD_FIRST", "")
    env.update(LD_PRELOAD=(first + ":" + LIB) if first else LIB, CGSHIM_LOG="warn", CGSHIM_LOG_FORMAT="jsonl",
               CGSHIM_LOG_FILE=os.path.join(d, "log-%p.jsonl"), HANG_RELEASE=rel,
               STANDIN_SYNC_UNTIL=rel)  # the self-test's stand-in: its synchronize waits for the release
    if how == "stall":
        env["CGSHIM_STALL_S"] = "1"
    env.update(env_extra or {})
    out, err = open(os.path.join(d, "out"), "w+"), open(os.path.join(d, "err"), "w+")
    p = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
    t0, why, dump, t_ready = time.monotonic(), None, None, None
    try:
        while time.monotonic() - t0 < 60 and p.poll() is None and "ready" not in open(out.name).read():
            time.sleep(0.02)
        if "ready" not in open(out.name).read():
            return "not ready (exit %s): %s" % (p.poll(), open(err.name).read()[-600:])
        t_ready = time.monotonic()
        if how == "signal":
            time.sleep(0.5)
            p.send_signal(signal.SIGUSR1)
        while time.monotonic() - t_ready < 8 and p.poll() is None:
            recs = [r for r in records(d) if r.get("ev") == "dump"]
            ends = [r["dump"] for r in recs if r["part"] == "end"]
            hits = [r for r in recs if r["part"] == "thread" and r["dump"] in ends and r["call"] in want_call]
            if hits:
                dump = [r for r in recs if r["dump"] == hits[0]["dump"] and r["pid"] == hits[0]["pid"]]
                break
            time.sleep(0.05)
        t_dump = time.monotonic() - t_ready
    finally:
        if release:
            open(rel, "w").close()
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                why = "not released within 20 s"
        if p.poll() is None:
            p.kill()
            p.wait()
    if dump is None:
        return "no dump naming %s within 8 s (%s); stderr: %s" % (want_call, how, open(err.name).read()[-800:])
    th = [r for r in dump if r["part"] == "thread" and r["call"] in want_call][0]
    if how == "stall" and not 1000 <= th["blocked_ms"] <= 3000:
        return "stall dump at %d ms blocked (want 1000..3000)" % th["blocked_ms"]
    site_why = check_site(th)
    if site_why:
        return site_why
    end = [r for r in dump if r["part"] == "end"][0]
    # busy, or not asked because the dump's driver budget was spent (the
    # end record's dump_us says so; "unasked" sooner is a fault)
    spent = end["dump_us"] >= DRIVER_BUDGET_US
    streams = [r for r in dump if r["part"] == "stream"
               and (r["state"] == "busy" or spent and r["state"] == "unasked")
               and (r["graph_launches"] or r["kernels"])]
    if not streams:
        return "no busy stream with its last work: %s; %s" % ([r for r in dump if r["part"] == "stream"], end)
    # the last kernel by name: the runtime launches by a CUkernel, which
    # cuFuncGetName refuses (docs/measurements.md, launch handles). Not in
    # the self-test: its C build registers no kernel with the stand-in, so
    # its launches have no name to give
    nameless = [k for r in streams for k in r["kernels"] if str(k).startswith("?")]
    if nameless and not SELFTEST:
        return "a stream's last kernels without a name: %s" % nameless
    if end["dump_us"] >= 1000000:
        return "the dump took %d us" % end["dump_us"]
    if release and why is None and "released" not in open(out.name).read():
        why = "released but no 'released' line (exit %s)" % p.returncode
    if why:
        return why
    print("    %s: %s %s(%s) %d ms, site %s; stream %s %s last %s; dump %d us, %.2f s after ready" % (
        how, th.get("thread_name"), th["call"], th.get("stream", ""), th["blocked_ms"], th.get("site", [])[:2],
        streams[0]["stream"], streams[0]["state"], (streams[0]["kernels"] or streams[0]["graph_launches"])[:1],
        end["dump_us"], t_dump), flush=True)
    return None


def runs(name, cmd, want_call, check_site, release, env_extra=None):
    ok, whys = 0, []
    for i in range(RUNS):
        why = one_run(cmd, "signal" if i % 2 == 0 else "stall", want_call, check_site, release, env_extra)
        if why:
            whys.append(why)
            print("    run %d failed: %s" % (i, why), flush=True)
        else:
            ok += 1
    assert ok >= RUNS - RUNS // 10, "%d/%d runs dumped right: %s" % (ok, RUNS, whys[:2])
    return "%d/%d runs dumped right" % (ok, RUNS)


HANG_C = os.path.join(HERE, "hang_c.py")
WAIT_LINE = [i for i, l in enumerate(open(HANG_C), 1) if "# WAIT-LINE" in l][0]
PY = os.environ.get("HANG_PYTHON") or sys.executable
if SELFTEST and not os.environ.get("HANG_PYTHON"):
    # a CPython 3.12 that runs (a pyenv shim may not), else skip (77)
    import shutil
    cands = [shutil.which("python3.12")] + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    PY = next((c for c in cands if c and subprocess.run([c, "-c", "0"], capture_output=True).returncode == 0), None)
    if not PY:
        print("skip: no python3.12 here")
        sys.exit(77)


def c_site(lib):
    """The site of the ctypes call: hang_c.py's WAIT-LINE, then the
    library's frame (hang_wait or waiter, found with addr2line)."""
    def check(th):
        want = "py:%s:%d:waiter" % (HANG_C, WAIT_LINE)
        site = th.get("site", [])
        if want not in site:
            return "no %s in the site %s" % (want, site)
        fns = [frame_function(lib, f) for f in site if not f.startswith(("py:", "pylib:"))]
        if not any(f and ("hang_wait" in f or "waiter" in f) for f in fns):
            return "no hang_wait/waiter frame of %s in the site %s (functions %s)" % (lib, site, fns)
        if th.get("thread_name") != "waiter":
            return "thread named %r, not waiter" % th.get("thread_name")
        return None
    return check


SYNC = ("cuStreamSynchronize", "cuStreamSynchronize_ptsz")
# cudaMemcpy device to host: the driver entry points a runtime may use for it
# (hooks.def's BLOCK rows); the dump must name one with its arguments.
COPY = ("cuMemcpyDtoH_v2", "cuMemcpyDtoH_v2_ptds", "cuMemcpy", "cuMemcpy_ptds")


def copy_site(lib, nbytes):
    """c_site, and the copy's arguments: bytes, a device-to-host (or
    unified) direction, the legacy or per-thread stream."""
    site = c_site(lib)

    def check(th):
        why = site(th)
        if why:
            return why
        if th.get("bytes") != nbytes or th.get("direction") not in ("dtoh", "any") or th.get("stream") not in (
                "0x0", "0x2"):
            return "the copy's arguments: bytes %s direction %s stream %s (want %d, dtoh, 0x0/0x2)" % (
                th.get("bytes"), th.get("direction"), th.get("stream"), nbytes)
        return None
    return check

if SELFTEST:
    lib = os.environ["HANG_LIB"]

    @case("selftest-spin")
    def selftest_spin():
        return runs("selftest", [PY, HANG_C, lib, "spin"], SYNC, c_site(lib), True,
                    {"LD_LIBRARY_PATH": os.environ["STANDIN_DIR"]})

    @case("selftest-copy")
    def selftest_copy():
        return runs("selftest", [PY, HANG_C, lib, "copy"], COPY, copy_site(lib, 1024), True,
                    {"LD_LIBRARY_PATH": os.environ["STANDIN_DIR"]})
else:
    lib = os.path.join(BIN, "libhang_gpu.so")

    @case("spin")
    def spin():
        return runs("spin", [PY, HANG_C, lib, "spin"], SYNC, c_site(lib), True)

    @case("copy")
    def copy():
        return runs("copy", [PY, HANG_C, lib, "copy"], COPY, copy_site(lib, 1024), True)

    @case("waitevent")
    def waitevent():
        return runs("waitevent", [PY, HANG_C, lib, "waitevent"], SYNC, c_site(lib), True)

    @case("torch")
    def torch_case():
        def check(th):
            want = "py:%s:%d:" % (TORCH, STUCK_LINE)
            if not any(f.startswith(want) for f in th.get("site", [])):
                return "no %s in the site %s" % (want, th.get("site"))
            return None
        return runs("torch", [PY, TORCH], ("cuCtxSynchronize", "cuCtxSynchronize_v2"), check, False)

gpucase.finish()
