"""tests/gpu/hang.py BUILD BIN [CASE] -- issue 33's single-GPU hang cases
(tests/gpu/hang says what each is). Each case runs RUNS (10) times, under
the shim with its JSONL log at warn; a run passes when its dump names the
blocked thread, the call, the site (Python line, or the waiter's native
frame found with addr2line) and the stream's last work. A case passes at
>= 9 of 10.

Self-test on a CPU host (the harness itself, no GPU): HANG_SELFTEST=1 with
STANDIN_DIR and DUMP_HOST (tests/integration/dump_host, mode "hang": the
same protocol on the stand-in) runs the spin case's logic."""
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
TORCH = os.path.join(HERE, "hang_torch.py")
STUCK_LINE = [i for i, l in enumerate(open(TORCH), 1) if "STUCK-LINE" in l][0]


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
    env.update(LD_PRELOAD=LIB, CGSHIM_LOG="warn", CGSHIM_LOG_FORMAT="jsonl",
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
    streams = [r for r in dump if r["part"] == "stream" and r["state"] == "busy"
               and (r["graph_launches"] or r["kernels"])]
    if not streams:
        return "no busy stream with its last work: %s" % [r for r in dump if r["part"] == "stream"]
    end = [r for r in dump if r["part"] == "end"][0]
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


def c_site(exe):
    def check(th):
        fns = [frame_function(exe, f) for f in th.get("site", [])]
        if not any(f and "waiter" in f for f in fns):
            return "no waiter frame in the site %s (functions %s)" % (th.get("site"), fns)
        if th.get("thread_name") != "waiter":
            return "thread named %r, not waiter" % th.get("thread_name")
        return None
    return check


SYNC = ("cuStreamSynchronize", "cuStreamSynchronize_ptsz")

if SELFTEST:
    exe = os.environ["DUMP_HOST"]

    @case("selftest-spin")
    def selftest_spin():
        return runs("selftest", [exe, "hang"], SYNC, c_site(exe), True,
                    {"LD_LIBRARY_PATH": os.environ["STANDIN_DIR"]})
else:
    exe = os.path.join(BIN, "hang_gpu")

    @case("spin")
    def spin():
        return runs("spin", [exe, "spin"], SYNC, c_site(exe), True)

    @case("waitevent")
    def waitevent():
        return runs("waitevent", [exe, "waitevent"], SYNC, c_site(exe), True)

    @case("torch")
    def torch_case():
        def check(th):
            want = "py:%s:%d:" % (TORCH, STUCK_LINE)
            if not any(f.startswith(want) for f in th.get("site", [])):
                return "no %s in the site %s" % (want, th.get("site"))
            return None
        return runs("torch", [sys.executable, TORCH], ("cuCtxSynchronize", "cuCtxSynchronize_v2"), check, False)

gpucase.finish()
