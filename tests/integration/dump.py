#!/usr/bin/env python3
"""The dump (issue 33, docs/dump.md) on the CPU stand-in, whose synchronize
calls and synchronous copies wait (STANDIN_SYNC_UNTIL, STANDIN_SYNC_MS) and
whose NCCL teardown waits (STANDIN_NCCL_TEARDOWN_UNTIL):
tests/integration/dump_host.c and dump_more.c stuck in CUDA and NCCL calls,
asked for a dump by SIGUSR1, by a stall, at exit.
Usage: dump.py CASE. Env from meson: CGSHIM_LIB, STANDIN_DIR, INTEG_DIR."""
import glob, json, os, signal, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

LIB = os.environ["CGSHIM_LIB"]
STANDIN = os.environ["STANDIN_DIR"]
HOST = os.path.join(os.environ["INTEG_DIR"], "dump_host")
MORE = os.path.join(os.environ["INTEG_DIR"], "dump_more")
T = cgtest.Tally()


def check(cond, msg):
    if not T.check(cond, msg):
        raise AssertionError(msg)


class Host:
    """dump_host MODE under the shim (or not), its stdout and stderr read as
    they come (files polled), its JSONL log in a temporary directory."""

    def __init__(self, mode, extra=None, shim=True, args=(), level="warn", prog=HOST):
        self.tmp = tempfile.mkdtemp(prefix="cgshim-dump-")
        self.release = os.path.join(self.tmp, "release")
        env = cgtest.clean_env()
        env.update(LD_LIBRARY_PATH=STANDIN, STANDIN_SYNC_UNTIL=self.release,
                   STANDIN_NCCL_TEARDOWN_UNTIL=self.release, DUMP_RELEASE=os.path.join(self.tmp, "release-fork"))
        if shim:
            env = cgtest.shim_env(env, LIB, os.path.join(self.tmp, "log-%p.jsonl"), level)
        env.update(extra or {})
        env = {k: v for k, v in env.items() if v is not None}
        self.out = open(os.path.join(self.tmp, "out"), "w+")
        self.err = open(os.path.join(self.tmp, "err"), "w+")
        self.p = subprocess.Popen([prog, mode, *args], env=env, stdout=self.out, stderr=self.err)

    def text(self, which):
        f = self.out if which == "out" else self.err
        f.flush()
        with open(f.name) as g:
            return g.read()

    def wait_for(self, which, needle, timeout=10.0):
        """Seconds until needle appears in stdout/stderr; None on timeout."""
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if needle in self.text(which):
                return time.monotonic() - t0
            if self.p.poll() is not None and needle not in self.text(which):
                return None
            time.sleep(0.005)
        return None

    def finish(self, timeout=20):
        for f in (self.release, self.release + "-fork"):
            open(f, "w").close()
        try:
            self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        return self.p.returncode

    def records(self):
        recs = []
        for f in sorted(glob.glob(os.path.join(self.tmp, "log-*.jsonl"))):
            recs += [json.loads(l) for l in open(f) if l.strip()]
        return recs


def dumps(recs, reason=None):
    return [r for r in recs if r["ev"] == "dump" and (reason is None or r["reason"] == reason)]


def part(recs, name):
    return [r for r in recs if r["part"] == name]


def check_blocked_dump(h, recs, reason):
    """The dump names both blocked threads, their calls, arguments and
    sites, the open capture and the stream's last work."""
    th = {r["thread_name"]: r for r in part(recs, "thread")}
    check(set(th) == {"syncer", "evsync"}, "%s dump: the two blocked threads named (%s)" % (reason, sorted(th)))
    s, e = th["syncer"], th["evsync"]
    check(s["call"] == "cuStreamSynchronize" and "stream" in s and e["call"] == "cuEventSynchronize"
          and "event" in e, "each with its call and argument: %s(%s), %s(%s)"
          % (s["call"], s.get("stream"), e["call"], e.get("event")))
    check(all(any("dump_host" in f for f in r.get("site", [])) for r in (s, e)),
          "each with its native call site in the program: %s" % s.get("site"))
    check(all(r["blocked_ms"] >= 0 for r in (s, e)), "and how long it has been blocked (%d ms)" % s["blocked_ms"])
    caps = part(recs, "capture")
    check(len(caps) == 1 and caps[0]["nodes"] == 1 and caps[0]["mode"] == "relaxed" and caps[0].get("begin_site"),
          "the open capture: stream, mode, begin site, nodes so far: %s" % caps)
    st = [r for r in part(recs, "stream") if r["stream"] == s["stream"]]
    check(len(st) == 1 and len(st[0]["graph_launches"]) == 2 and "launch=2" in st[0]["graph_launches"][0]
          and len(st[0]["kernels"]) == 1 and st[0]["state"] == "busy" and st[0]["completed"] == "not_all",
          "the blocked stream's last work (2 graph launches, newest first, 1 kernel; busy): %s" % st)
    check(len(part(recs, "stream")) == 1, "only that stream: the one destroyed is not named (%d streams)"
          % len(part(recs, "stream")))
    end = part(recs, "end")
    check(len(end) == 1 and end[0]["dump_us"] < 1000000, "the dump took %d us (< 1 s)" % end[0]["dump_us"])
    err = h.text("err")
    check("blocked" in err and "syncer" in err and "evsync" in err and "cuStreamSynchronize(stream=" in err,
          "the human-readable block on stderr names them")


def signal_case(mode, settle=0.0, handler=False):
    h = Host(mode)
    try:
        check(h.wait_for("out", "ready") is not None, "%s: the host is stuck" % mode)
        time.sleep(settle)
        h.p.send_signal(signal.SIGUSR1)
        check(h.wait_for("err", "end of dump 1") is not None, "SIGUSR1: a dump on stderr")
    finally:
        rc = h.finish()
    recs = h.records()
    check(rc == 0 and "done" in h.text("out"), "the program ends as it would (exit %s)" % rc)
    check({r["reason"] for r in dumps(recs)} >= {"signal"}, "a dump record with reason signal")
    check_blocked_dump(h, [r for r in dumps(recs) if r["dump"] == 1], "signal")
    if handler:
        check(h.text("out").count("app handler ran") == 1, "the program's own SIGUSR1 handler ran once: %r"
              % h.text("out"))


def case_signal():
    """SIGUSR1: every blocked thread, call, argument, site; the capture; the
    stream's last work; under a second."""
    signal_case("blocked")


def case_handler_before():
    """The program's SIGUSR1 handler, installed before the shim's, still
    runs (chained)."""
    signal_case("handler", handler=True)


def case_handler_late():
    """A handler installed after the shim's: within a second the shim takes
    the signal back and chains to it; both run."""
    signal_case("late", settle=1.5, handler=True)


def case_stall():
    """CGSHIM_STALL_S=0.5: a stall dump arrives within 0.5 + 2 s of the
    call's start, once per stuck call."""
    h = Host("blocked", {"CGSHIM_STALL_S": "0.5", "CGSHIM_DUMP_SIGNAL": "0"})
    try:
        check(h.wait_for("out", "ready") is not None, "the host is stuck")
        t = h.wait_for("err", "end of dump 1", timeout=5)
        check(t is not None, "a stall dump on stderr with no signal")
        time.sleep(1.0)
    finally:
        rc = h.finish()
    recs = h.records()
    st = dumps(recs, "stall")
    th = part(st, "thread")
    # the oldest call past the threshold; a call stuck with it names itself
    # in the same dump once blocked for half the threshold (dump.c's stall
    # merge), so the other may be at 250..500 ms (seen: [501, 499])
    ms = [r["blocked_ms"] for r in th]
    check(rc == 0 and th and 500 <= max(ms) <= 2500 and all(250 <= m <= 2500 for m in ms),
          "reason stall, when the oldest call had been blocked 0.5..2.5 s, the others 0.25..2.5 s: %s" % ms)
    check(len(part(st, "head")) == 1, "one stall dump for the two calls stuck together (%d)" % len(part(st, "head")))
    check_blocked_dump(h, st, "stall")


def case_locks():
    """The dump while another thread holds every lock of the shim (a fork's
    prepare handler that waits, registered before the shim's, so run after
    it): under a second, the parts whose lock stayed held said so. At info
    level, so that the log is open before (a log not yet open while its
    lock is held: the block on stderr only, case locks_unopened)."""
    h = Host("locks", level="info")
    try:
        check(h.wait_for("out", "locks held") is not None, "a thread holds the shim's locks")
        t0 = time.monotonic()
        h.p.send_signal(signal.SIGUSR1)
        t = h.wait_for("err", "end of dump 1", timeout=10)
        check(t is not None and t < 1.0, "the dump ended %.3f s after the signal (< 1 s)" % (t or -1))
    finally:
        rc = h.finish()
    recs = dumps(h.records())
    check(rc == 0, "the program ends as it would (exit %s)" % rc)
    check(part(recs, "captures_unread") and part(recs, "end")[0].get("sites_unread"),
          "the captures and sites, whose locks stayed held, are named unread")
    th = {r["thread_name"]: r for r in part(recs, "thread")}
    check(set(th) == {"syncer", "evsync"} and part(recs, "end")[0]["dump_us"] < 1000000,
          "the blocked threads are still named, in %d us" % part(recs, "end")[0]["dump_us"])


def case_locks_unopened():
    """The same with the log not yet open: its lock held, the dump's records
    are left out (the block on stderr says so), the dump still under 1 s."""
    h = Host("locks")
    try:
        check(h.wait_for("out", "locks held") is not None, "a thread holds the shim's locks")
        h.p.send_signal(signal.SIGUSR1)
        t = h.wait_for("err", "end of dump 1", timeout=10)
        check(t is not None and t < 1.0, "the dump ended %.3f s after the signal (< 1 s)" % (t or -1))
    finally:
        rc = h.finish()
    err = h.text("err")
    check(rc == 0 and "no records: the log's lock stayed held" in err and "site unread" in err
          and "live captures: unread" in err, "the block says what it could not read or write")
    check(not [r for r in dumps(h.records()) if r["dump"] == 1], "no record of that dump")


def case_under():
    """0 false stall dumps: 100 synchronize calls of 0.25 s each (two threads,
    50 each, in one process: each call is judged on its own, as in 100
    runs) against CGSHIM_STALL_S=0.3. A call that really lasted longer (an
    overloaded host) may be dumped; no other."""
    h = Host("under", {"CGSHIM_STALL_S": "0.3", "STANDIN_SYNC_MS": "250", "STALL_MS": "300",
                       "STANDIN_SYNC_UNTIL": None}, args=("100",))
    rc = h.finish(timeout=60)
    out = h.text("out")
    over = int(out.split("over ")[1]) if "over " in out else -1
    n = len(part(dumps(h.records(), "stall"), "head"))
    check(rc == 0 and over >= 0, "100 calls of 0.25 s ran (exit %s), %d really over 0.3 s" % (rc, over))
    check(n <= over, "stall dumps: %d, calls over the threshold: %d (false dumps: %d)" % (n, over, max(0, n - over)))


def case_exit_open():
    """A capture still open at exit: one dump, reason exit, naming it."""
    h = Host("exit", {"CGSHIM_DUMP_SIGNAL": "0", "CGSHIM_STALL_S": "30"})
    rc = h.finish()
    recs = dumps(h.records())
    check(rc == 0 and {r["reason"] for r in recs} == {"exit"}, "one dump at exit: %s" % {r["reason"] for r in recs})
    caps = part(recs, "capture")
    check(len(caps) == 1 and caps[0]["mode"] == "relaxed", "naming the open capture: %s" % caps)
    check("capture" in h.text("err") and "dump 1 (exit)" in h.text("err"), "on stderr too")


def tasks(pid):
    names = []
    for t in glob.glob("/proc/%d/task/*/comm" % pid):
        try:
            names.append(open(t).read().strip())
        except OSError:
            pass
    return names


def case_disabled():
    """CGSHIM_DISABLE=1 starts no thread and takes no signal: SIGUSR1 ends
    the process as bare; with the shim on, one watchdog thread."""
    h = Host("blocked", {"CGSHIM_DISABLE": "1"})
    try:
        check(h.wait_for("out", "ready") is not None, "disabled: the host is stuck")
        check("cgshim-watch" not in tasks(h.p.pid), "no watchdog thread: %s" % tasks(h.p.pid))
        h.p.send_signal(signal.SIGUSR1)
        h.p.wait(timeout=10)
    finally:
        rc = h.finish()
    check(rc == -signal.SIGUSR1 and "dump" not in h.text("err"), "SIGUSR1 ends it as bare (%s)" % rc)
    h = Host("blocked")
    try:
        check(h.wait_for("out", "ready") is not None, "on: the host is stuck")
        check(tasks(h.p.pid).count("cgshim-watch") == 1, "one watchdog thread: %s" % tasks(h.p.pid))
    finally:
        h.finish()


def case_fork():
    """A child forked after the shim's set-up: its own watchdog starts at its
    first blocking call; its dump names its own pid and call."""
    h = Host("fork")
    try:
        check(h.wait_for("out", "child ") is not None, "the child is stuck")
        time.sleep(0.3)
        child = int(h.text("out").split("child ")[1].split()[0])
        os.kill(child, signal.SIGUSR1)
        check(h.wait_for("err", "pid %d" % child) is not None, "a dump of the child (pid %d)" % child)
        time.sleep(0.2)
    finally:
        rc = h.finish()
    recs = [r for r in dumps(h.records()) if r["pid"] == child]
    th = part(recs, "thread")
    check(rc == 0 and len(th) == 1 and th[0]["call"] == "cuStreamSynchronize",
          "the child's dump names its blocked call: %s" % th)
    check(not [r for r in dumps(h.records()) if r["pid"] != child], "the parent wrote no dump")


PY_STUCK = """import ctypes, os, sys, threading, time
""" + cgtest.PY_CUDA_STREAM + """def wait_for_gpu():
    cu.cuCtxSetCurrent(ctx)
    cu.cuStreamSynchronize(s)  # SYNC-LINE
t = threading.Thread(target=wait_for_gpu)
t.start()
time.sleep(0.3)
print("ready", flush=True)
while not os.path.exists(sys.argv[1]):  # this thread keeps the GIL busy
    sum(range(10000))
t.join()
print("done", flush=True)
"""


def case_python():
    """A Python thread stuck in cuStreamSynchronize (ctypes released the
    GIL; CPython 3.12's frames are read without it) while the main thread
    keeps the GIL busy: the dump names the thread, the call and the Python
    line, from the site taken at the call's entry."""
    import shutil
    cands = [shutil.which("python3.12")] + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    py = next((c for c in cands if c and subprocess.run([c, "-c", "0"], capture_output=True).returncode == 0), None)
    if not py:
        print("skip: no python3.12 here")
        sys.exit(77)
    tmp = tempfile.mkdtemp(prefix="cgshim-dump-py-")
    script, rel = os.path.join(tmp, "stuck.py"), os.path.join(tmp, "release")
    open(script, "w").write(PY_STUCK)
    line = [i for i, l in enumerate(PY_STUCK.splitlines(), 1) if "SYNC-LINE" in l][0]
    env = cgtest.shim_env(cgtest.clean_env(), cgtest.preload(LIB), os.path.join(tmp, "log.jsonl"), "warn")
    env.update(LD_LIBRARY_PATH=STANDIN, STANDIN_SYNC_UNTIL=rel)
    p = subprocess.Popen([py, script, rel], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        check(p.stdout.readline().strip() == "ready", "the Python host is stuck")
        p.send_signal(signal.SIGUSR1)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 5 and not part(dumps(cgtest.read_log(os.path.join(tmp, "log.jsonl"))), "end"):
            time.sleep(0.01)
    finally:
        open(rel, "w").close()
        out, err = p.communicate(timeout=30)
    recs = dumps(cgtest.read_log(os.path.join(tmp, "log.jsonl")))
    th = part(recs, "thread")
    want = "py:%s:%d:wait_for_gpu" % (script, line)
    check(p.returncode == 0 and "done" in out, "the program ends (exit %s)" % p.returncode)
    check(len(th) == 1 and th[0]["call"] == "cuStreamSynchronize" and th[0]["site"][0] == want,
          "the dump names the thread, the call and its Python line %s: %s" % (want, th))
    check(want in err, "the stderr block names the Python line")


# ---- dump_more: blocking calls other than a stream synchronize ------------
# Under qemu-user (10x slower) and load, nothing here is bounded by the
# clock but the waits for the program (60 s each, then it is killed): a
# dump is asked again (a signal every 0.5 s) until one names every thread
# the program started, since "ready" cannot say that a thread is already
# inside its call (nor that the stand-in, entered after the shim noted the
# call, already counts it as waiting); each dump is whole, so the first one
# that names them all is judged. A thread never returns before the release
# file exists, so no dump can come too late to see it. The log is read
# while the program writes it: a torn last line is skipped (read_log).
PATIENCE = 60.0


def dump_until(h, want, ask=True, also=lambda one: True):
    """Dumps (their records by number) until one names every thread of
    want and passes also; returns that dump's records, or None after
    PATIENCE seconds."""
    t0, seen = time.monotonic(), 0
    while time.monotonic() - t0 < PATIENCE and h.p.poll() is None:
        if ask:
            h.p.send_signal(signal.SIGUSR1)
        h.wait_for("err", "end of dump %d" % (seen + 1), timeout=0.5 if ask else 2.0)
        recs = dumps(cgtest.read_log(os.path.join(h.tmp, "log-*.jsonl")))
        for n in sorted({r["dump"] for r in part(recs, "end")}):
            one = [r for r in recs if r["dump"] == n]
            if {r.get("thread_name") for r in part(one, "thread")} >= set(want) and also(one):
                return one
            seen = max(seen, n)
    return None


def stream_busy(one):
    """The stream given the kernel is busy in this dump (the stand-in's
    query answers not ready once a waiter has entered it)."""
    return any(r["state"] == "busy" and r["kernels"] for r in part(one, "stream"))


def more_hex(out, key):
    """The 0x.. value after key in the program's stdout, as an int."""
    return int(out.split(key + " ")[1].split()[0], 16)


def check_copy_dump(h, one, busy=True):
    """A dump of dump_more copy: the four threads, each with its call,
    arguments and native site in the program; the streams (busy: the one
    given the kernel is busy, else busy or idle)."""
    out = h.text("out")
    hostp, dev = more_hex(out, "host"), more_hex(out, "dev")
    th = {r["thread_name"]: r for r in part(one, "thread")}
    c, s, d, e = th["copier"], th["setter"], th["devsync"], th["evsync"]
    check(c["call"] == "cuMemcpyDtoH_v2" and c.get("direction") == "dtoh" and c.get("bytes") == 4096
          and int(c["dst"], 16) == hostp and int(c["src"], 16) == dev and int(c["stream"], 16) == 0,
          "cudaMemcpy D2H: cuMemcpyDtoH_v2, dtoh, 4096 bytes, dst the host buffer, src the device one, "
          "the legacy stream: %s" % c)
    check(s["call"] == "cuMemsetD32_v2_ptds" and s.get("bytes") == 4096 and int(s["dst"], 16) == dev
          and int(s["stream"], 16) == 2 and "src" not in s and "direction" not in s,
          "cuMemsetD32_v2_ptds: 1024 elements (4096 bytes) at the device buffer, the per-thread stream: %s" % s)
    check(d["call"] in ("cuCtxSynchronize", "cuCtxSynchronize_v2") and e["call"] == "cuEventSynchronize"
          and "event" in e, "cudaDeviceSynchronize and cudaEventSynchronize: %s(%s), %s(%s)"
          % (d["call"], d.get("ctx", ""), e["call"], e.get("event")))
    check(all(any("dump_more" in f for f in r.get("site", [])) for r in (c, s, d, e)),
          "each with its native call site in the program: %s" % {k: v.get("site", [])[:3] for k, v in th.items()})
    st = {int(r["stream"], 16): r for r in part(one, "stream")}
    check(0 in st and st[0]["state"] == "default"
          and any(r["state"] in (("busy",) if busy else ("busy", "idle")) and r["kernels"] for r in st.values()),
          "the streams: the legacy one the copy waits on (default, not asked) and the busy one given the "
          "kernel: %s" % [(hex(k), v["state"], v["kernels"]) for k, v in st.items()])
    err = h.text("err")
    want = "cuMemcpyDtoH_v2(dst=0x%x, src=0x%x, bytes=4096; dtoh, stream=legacy)" % (hostp, dev)
    check(want in err and "cuMemsetD32_v2_ptds(dst=0x%x, value=0x5a5a5a5a, count=1024; bytes=4096, "
          "stream=per-thread)" % dev in err, "the block on stderr names the copy and the memset: %s" % want)


def more_dump(mode, want, extra=None, **kw):
    """dump_more MODE stuck, its first dump that names every thread of want
    (dump_until's kw), then released: returns the host and that dump."""
    h = Host(mode, extra, prog=MORE)
    try:
        check(h.wait_for("out", "ready", timeout=PATIENCE) is not None, "the %s host is stuck" % mode)
        one = dump_until(h, want, **kw)
        check(one is not None, "a dump names %s within %d s" % (", ".join(want), PATIENCE))
    finally:
        rc = h.finish(timeout=PATIENCE)
    check(rc == 0 and "done" in h.text("out"), "released, the program ends as it would (exit %s): %r"
          % (rc, h.text("out")[-200:]))
    return h, one


COPIERS = ("copier", "setter", "devsync", "evsync")


def case_copy():
    """SIGUSR1: threads blocked in a synchronous copy (the runtime's
    cudaMemcpy), a memset (the driver's per-thread form), a device and an
    event synchronize are named with their calls, arguments and sites."""
    h, one = more_dump("copy", COPIERS, also=stream_busy)
    check_copy_dump(h, one)
    # no bound on dump_us here: the 1 s bar is dump-signal's and dump-locks'
    check(one[0]["reason"] == "signal" and part(one, "end"), "reason signal, the dump ended")


def case_copy_stall():
    """CGSHIM_STALL_S=0.5 and no signal: the blocked copy is dumped as a
    stall. The calls never return before the release, so a slow host can
    neither miss the dump (waited for up to 60 s) nor make a false one
    (every call named is really blocked; no bound on how long)."""
    h, one = more_dump("copy", COPIERS, {"CGSHIM_STALL_S": "0.5", "CGSHIM_DUMP_SIGNAL": "0"}, ask=False)
    check_copy_dump(h, one, busy=False)
    st = dumps(h.records())
    check({r["reason"] for r in st} == {"stall"}, "every dump is a stall dump: %s" % {r["reason"] for r in st})
    check(all(max(r["blocked_ms"] for r in part([x for x in st if x["dump"] == n], "thread")) >= 500
              for n in {r["dump"] for r in part(st, "head")}),
          "each stall dump names a call blocked past the 0.5 s threshold")


def case_teardown():
    """A thread blocked in ncclCommDestroy with a live executable holding
    NCCL work (NCCL >= 2.26 waits for it; the stand-in waits for the
    release): CGS027 before the call, then the dump names the thread, the
    call, the communicator, the executable it waits for, and its site."""
    h, one = more_dump("teardown", ("teardown",))
    out, recs = h.text("out"), h.records()
    comm, ex = more_hex(out, "comm"), more_hex(out, "exec")
    t = part(one, "thread")[0]
    check(t["call"] == "ncclCommDestroy" and int(t["comm"], 16) == comm
          and [int(x, 16) for x in t.get("waits_for", [])] == [ex],
          "the thread, in ncclCommDestroy(comm 0x%x), waits for exec 0x%x: %s" % (comm, ex, t))
    check(any("dump_more" in f for f in t.get("site", [])), "with its native site: %s" % t.get("site"))
    nx = part(one, "nccl_exec")
    check(len(nx) == 1 and int(nx[0]["exec"], 16) == ex and nx[0]["nccl_kernels"] == 1,
          "the dump's NCCL part lists the live executable: %s" % nx)
    idx = [i for i, r in enumerate(recs) if r.get("ev") == "violation" and r.get("rule") == "CGS027"]
    first = min(i for i, r in enumerate(recs) if r.get("ev") == "dump" and r["dump"] == one[0]["dump"])
    check(len(idx) == 1 and idx[0] < first, "CGS027 once, before the call and so before the dump (%s, dump at %d)"
          % (idx, first))
    err = h.text("err")
    check("in ncclCommDestroy(comm=0x%x)" % comm in err and "exec 0x%x" % ex in err,
          "the block on stderr names the call, the communicator and the executable")


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}
if __name__ == "__main__":
    T.case(sys.argv[1], CASES[sys.argv[1]])
    sys.exit(T.finish())
