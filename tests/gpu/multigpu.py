#!/usr/bin/env python3
"""GPU checks of issue 18 (multi-GPU, multi-rank) on a host with 2 GPUs.
Usage: multigpu.py BUILD BIN [CASE-PREFIX]   (tests/gpu/multigpu builds both)
  BUILD  meson build dir of the shim (BUILD/shim/libcgshim.so, BUILD/tools/cgshim)
  BIN    dir with multi_device (kernels/model/multi_device.cu),
         cross_device_capture (tests/gpu/cross_device_capture.cu) and
         workload (bench/workload.cu), built by nvcc
Cases (one line each, then 'N passed, N failed'):
  per_device      multi_device bare and under the shim: same output; the CPU
                  checks of tests/model (case multi_device) against the real
                  driver: a memory node on each device with peer access, the
                  shim's per-device graph memory = cudaDeviceGetGraphMemAttribute
                  on each device, per-device default/current pools, the first
                  launch from the other device's context attributed by node.
  two_process     two processes (RANK=0/1, a leak on rank 1 only) merged by
                  `cgshim report`: a table per rank, graph memory per rank and
                  device, CGS011 flagged as divergence (tests/model multi_rank).
                  Without a report on this host (no jansson), the logs are
                  checked here and left under $OUT/ranks for a report elsewhere.
  nccl_allreduce  tests/gpu/multigpu_nccl_cases.py MODE=loop REPLAYS=10 (every
                  replay checked), 2 ranks (NCCL), bare and under the
                  shim (trace level): output unchanged, no violation or
                  mismatch, the capture's NCCL kernels (node records) and its
                  event record/wait calls recorded, graph memory of each rank's
                  exec attributed to that rank's device only; the two logs
                  merged by the report without divergence.
  launch_loop     bench/workload.cu's launch case (bench/run.py's "launch":
                  batches of 1000 cudaGraphLaunch) on each GPU
                  (CUDA_VISIBLE_DEVICES), bare and under the shim in
                  lockstep (bench/baton.py: the two processes, pinned to
                  one core, take turns per batch), 20 rounds, the order
                  alternating: per round the median of the per-batch
                  ratios, then bench/run.py's bootstrap interval and bar
                  (bars.tsv launch/shim: 1.02, upper end <= 1.02 + 0.03),
                  judged on each device.
  nccl_graph_loop tests/gpu/multigpu_nccl_cases.py MODE=loop (issue 33): 2
                  ranks, one graph holding an all-reduce replayed 200 times,
                  bare and under the shim: output unchanged, no warn or
                  error (the graph goes before the process group), each
                  rank's capture walked with its NCCL kernels counted (end
                  of capture: nccl, fp; instantiate: nccl), the
                  fingerprints equal across ranks; the report (here, or on
                  the logs brought back: tests/gpu/multigpu_report.py)
                  finds no divergence.
  nccl_teardown   MODE=teardown: dist.destroy_process_group() with the
                  graph alive, under the shim, each rank given 90 s and
                  then killed with its process group (never hangs the
                  run): CGS027 is written on each rank before the call
                  (warn records go to the log at once), naming the exec
                  and the script's capture line; the detail says whether
                  the teardown blocked (NCCL >= 2.26) or returned.
  nccl_skip       MODE=skip: rank 1 skips capture size 4 and runs it
                  eagerly (every collective still matches): rank 0's
                  fingerprints are rank 1's with its #2 added, and the
                  cross-rank view names rank 1's skip at capture #2.
  cross_device_capture  tests/gpu/cross_device_capture.cu (issue 31.3), bare
                  and under the shim: a capture forked onto another device's
                  stream, a launch into the capturing stream with the other
                  device current, another device's event recorded into it.
                  A measurement: the driver's answers are printed (NVIDIA
                  documents no refusal, so the shim predicts none); passes
                  when the output is the same under the shim and no mismatch
                  or violation is logged. Put the answers in
                  docs/update-refusals.md.
"""
import contextlib
import io
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import types

BUILD, BIN = sys.argv[1], sys.argv[2]
LIB = os.path.abspath(os.path.join(BUILD, "shim", "libcgshim.so"))
# CGSHIM_TOOL: a cgshim built elsewhere, for a GPU host without jansson/libdw
# (e.g. a wrapper that sets LD_LIBRARY_PATH for the libraries carried with it)
CGSHIM = os.environ.get("CGSHIM_TOOL") or os.path.abspath(os.path.join(BUILD, "tools", "cgshim"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.environ.get("OUT")
sys.path.insert(0, os.path.join(ROOT, "tests", "model"))
import run_model as rm  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "bench"))
import run as bench  # noqa: E402  (the statistics and the bar rule of bench/run.py)
import baton  # noqa: E402  (lockstep)

ROUNDS = 20  # launch_loop: lockstep rounds per device
from gpucase import case  # noqa: E402
gpucase.only = sys.argv[3] if len(sys.argv) > 3 else ""  # run only the cases named so


def base_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("CGSHIM_") or k in ("LD_PRELOAD", "RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK",
                                            "SLURM_PROCID", "MULTI_DEVICE_LEAK", "WORLD_SIZE"):
            del env[k]
    return env


def shim_env(log, level="info"):
    env = base_env()
    env.update(LD_PRELOAD=LIB, CGSHIM_LOG=level, CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
    return env


def have_report():
    """The report is built only where jansson and libdw were found."""
    if not os.path.exists(CGSHIM):
        return False
    p = subprocess.run([CGSHIM, "report", "--json", "/dev/null"], capture_output=True, text=True)
    return "has no report" not in p.stderr


def rm_checks(fn):
    """Run a tests/model check function; its 'FAIL' lines become the assertion."""
    before = rm.failures
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        fn()
    lines = buf.getvalue().splitlines()
    fails = [ln for ln in lines if ln.startswith("FAIL")]
    assert rm.failures == before and not fails, "; ".join(fails)
    return len(lines)


def bare_and_shim(name, prefix):
    """Program BIN/name bare, then under the shim (its log in a new temporary
    directory): both must exit 0. (bare, shim, tmp, log)."""
    prog = os.path.join(BIN, name)
    tmp = tempfile.mkdtemp(prefix=prefix)
    log = os.path.join(tmp, "log.jsonl")
    bare = subprocess.run([prog], env=base_env(), capture_output=True, text=True, timeout=120)
    assert bare.returncode == 0, "bare exit %d: %s" % (bare.returncode, bare.stdout[-600:])
    sh = subprocess.run([prog], env=shim_env(log), capture_output=True, text=True, timeout=120)
    assert sh.returncode == 0, "shim exit %d: %s" % (sh.returncode, sh.stdout[-600:])
    return bare, sh, tmp, log


@case("per_device")
def per_device():
    bare, sh, tmp, log = bare_and_shim("multi_device", "cgshim-mgpu-")
    assert sh.stdout == bare.stdout, "program output differs under the shim"
    recs = rm.read_log(log)
    assert not rm.ev(recs, "mismatch"), "mismatch records: %s" % rm.ev(recs, "mismatch")
    rm.STDERR, rm.STDOUT = sh.stderr, sh.stdout
    n = rm_checks(lambda: rm.case_multi_device(recs, rm.pools_from_stderr(sh.stderr)))
    gm = rm.graphmem_from_stderr(sh.stderr)
    rep = "no report on this host"
    if have_report():  # the report's per-device graph memory = the driver's
        rj = subprocess.run([CGSHIM, "report", "--json", log], capture_output=True, text=True, timeout=120)
        assert rj.returncode == 0, "report exit %d: %s" % (rj.returncode, rj.stderr[-300:])
        ex = {g["dev"]: g for g in json.loads(rj.stdout).get("graphmem", []) if g.get("when") == "exit"}
        assert sorted(ex) == sorted(gm) == [0, 1], "report devices %s, driver devices %s" % (sorted(ex), sorted(gm))
        for d, v in gm.items():
            for k in ("used", "used_high", "reserved", "reserved_high"):
                assert ex[d][k] == v[k], "dev %d %s: report %s, cudaDeviceGetGraphMemAttribute %s" % (
                    d, k, ex[d][k], v[k])
        rep = "report = driver on both devices"
    if OUT:
        shutil.copytree(tmp, os.path.join(OUT, "per_device"), dirs_exist_ok=True)
    return "%d checks; driver graph memory per device %s; %s; %s" % (
        n, {d: (v["reserved_high"], v["used_high"]) for d, v in gm.items()},
        [ln for ln in sh.stdout.splitlines() if "context" in ln], rep)


@case("two_process")
def two_process():
    prog = os.path.join(BIN, "multi_device")
    tmp = tempfile.mkdtemp(prefix="cgshim-ranks-")
    if have_report():
        a = types.SimpleNamespace(prog=prog, shim=LIB, cgshim=CGSHIM)
        n = rm_checks(lambda: rm.multi_rank(a, base_env(), tmp))
        rt = subprocess.run([CGSHIM, "report", os.path.join(tmp, "log-0.jsonl"), os.path.join(tmp, "log-1.jsonl")],
                            capture_output=True, text=True)
        print("\n".join(ln for ln in rt.stdout.splitlines() if "DIVERGENCE" in ln or ln.startswith("  rank")))
        detail = "%d checks with the report" % n
    else:
        tmpl = os.path.join(tmp, "log-%r.jsonl")
        for rank in ("0", "1"):
            env = shim_env(tmpl)
            env.update(RANK=rank, MULTI_DEVICE_LEAK=rank)
            p = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=120)
            assert p.returncode == 0, "rank %s exit %d" % (rank, p.returncode)
        rules = {}
        for rank in ("0", "1"):
            recs = rm.read_log(os.path.join(tmp, "log-%s.jsonl" % rank))
            assert recs and all(r.get("rank") == rank for r in recs), "rank %s: records without the rank" % rank
            rules[rank] = sorted({v.get("rule") for v in rm.ev(recs, "violation")})
            devs = sorted(g.get("dev") for g in rm.ev(recs, "graphmem") if g.get("when") == "exit")
            assert devs == [0, 1], "rank %s: exit graph memory per device %s" % (rank, devs)
        assert rules == {"0": [], "1": ["CGS011"]}, "violations per rank %s" % rules
        detail = "no report on this host: logs checked (rules per rank %s)" % rules
    if OUT:
        shutil.copytree(tmp, os.path.join(OUT, "ranks"), dirs_exist_ok=True)
        detail += "; logs under $OUT/ranks"
    return detail


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_ranks(shim, tmp):
    port = free_port()
    procs = []
    for rank in (0, 1):
        env = shim_env(os.path.join(tmp, "nccl-%r.jsonl"), "trace") if shim else base_env()
        env.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), NCCL_DEBUG="WARN")
        env.update(MODE="loop", REPLAYS="10")
        procs.append(subprocess.Popen([sys.executable, os.path.join(ROOT, "tests", "gpu", "multigpu_nccl_cases.py")],
                                      env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = []
    for p in procs:
        o, e = p.communicate(timeout=300)
        outs.append((p.returncode, o, e))
    return outs


def nccl_checks(tmp):
    bare = run_ranks(False, tmp)
    for r, (rc, o, e) in enumerate(bare):
        assert rc == 0 and "ok" in o, "bare rank %d: exit %d %s %s" % (r, rc, o[-300:], e[-600:])
    sh = run_ranks(True, tmp)
    for r, (rc, o, e) in enumerate(sh):
        assert rc == 0, "shim rank %d: exit %d %s %s" % (r, rc, o[-300:], e[-600:])
        assert o == bare[r][1], "rank %d: output differs under the shim: %r vs %r" % (r, o, bare[r][1])
    notes = []
    for rank in (0, 1):
        recs = rm.read_log(os.path.join(tmp, "nccl-%d.jsonl" % rank))
        assert recs and all(x.get("rank") == str(rank) for x in recs), "rank %d: records without the rank" % rank
        assert not rm.ev(recs, "violation"), "rank %d: false alarms %s" % (
            rank, [(v.get("rule"), v.get("msg")) for v in rm.ev(recs, "violation")])
        assert not rm.ev(recs, "mismatch"), "rank %d: mismatch records %s" % (rank, rm.ev(recs, "mismatch"))
        caps = [c for c in rm.ev(recs, "capture") if c.get("rc") == 0]
        assert caps, "rank %d: no successful capture record" % rank
        cap = caps[-1]
        begin = [c for c in rm.ev(recs, "call") if c.get("api", "").startswith("cuStreamBeginCapture")
                 and c.get("capture") == cap.get("capture")]
        assert begin, "rank %d: no begin record for capture %s" % (rank, cap.get("capture"))
        t0, t1 = begin[0]["ts"], cap["ts"]
        evs = [c.get("api") for c in rm.ev(recs, "call") if t0 <= c.get("ts", 0) <= t1
               and (c.get("api", "").startswith("cuEventRecord") or c.get("api", "").startswith("cuStreamWaitEvent"))]
        assert evs, "rank %d: no event record/wait call recorded during the capture" % rank
        g = cap.get("graph")
        types_ = [n.get("type") for n in rm.ev(recs, "node") if n.get("graph") == g and not n.get("side")]
        kernels = types_.count("kernel")
        assert kernels >= 2, "rank %d: captured graph %s has %d kernel nodes recorded (%s)" % (rank, g, kernels, types_)
        inst = [c for c in rm.ev(recs, "call") if c.get("api", "").startswith("cuGraphInstantiate")
                and c.get("graph") == g and c.get("rc") == 0]
        assert inst and inst[0].get("dev") == rank, "rank %d: exec instantiated on device %s" % (
            rank, inst and inst[0].get("dev"))
        ex = inst[0].get("exec")
        gm_first = [x for x in rm.ev(recs, "graphmem") if x.get("when") == "first_launch" and x.get("exec") == ex]
        assert gm_first and all(x.get("dev") == rank for x in gm_first), \
            "rank %d: first-launch graph memory attributed to devices %s" % (rank, [x.get("dev") for x in gm_first])
        gm_exit = [x for x in rm.ev(recs, "graphmem") if x.get("when") == "exit"]
        assert rank in [x.get("dev") for x in gm_exit], "rank %d: no exit graph memory of device %d" % (rank, rank)
        notes.append("rank %d: %d nodes (%d kernels), %d event calls in the capture, graph memory dev %d "
                     "reserved_high %s" % (rank, len(types_), kernels, len(evs), rank,
                                           [x.get("reserved_high") for x in gm_exit if x.get("dev") == rank]))
    if have_report():
        rj = subprocess.run([CGSHIM, "report", "--json", os.path.join(tmp, "nccl-0.jsonl"),
                             os.path.join(tmp, "nccl-1.jsonl")], capture_output=True, text=True, timeout=120)
        assert rj.returncode == 0, "report exit %d" % rj.returncode
        rk = json.loads(rj.stdout).get("ranks") or {}
        assert sorted(r.get("rank") for r in rk.get("ranks", [])) == ["0", "1"], "report: ranks %s" % rk
        assert not rk.get("divergence"), "report: divergence %s" % rk.get("divergence")
        notes.append("report: 2 ranks, no divergence")
    return "; ".join(notes)


@case("nccl_allreduce")
def nccl_allreduce():
    tmp = tempfile.mkdtemp(prefix="cgshim-nccl-")
    try:
        return nccl_checks(tmp)
    finally:  # the logs come back, failed or not
        if OUT:
            shutil.copytree(tmp, os.path.join(OUT, "nccl"), dirs_exist_ok=True)


@case("launch_loop")
def launch_loop():
    prog = os.path.join(BIN, "workload")
    tmp = tempfile.mkdtemp(prefix="cgshim-loop-")
    out, bad = [], []
    bar = bench.load_bars()[("launch", "shim")]
    cpu = "4" if 4 in os.sched_getaffinity(0) else str(max(os.sched_getaffinity(0)))  # one core, bench/run.py's
    cmd = ["taskset", "-c", cpu, prog] + bench.RUNS["launch"].quick  # launch 1 10000 1000
    for d in (0, 1):
        ratios, ns = [], {"bare": [], "shim": []}
        for i in range(ROUNDS):  # a round: bare and shim in lockstep, who starts alternating
            eb = dict(base_env(), CUDA_VISIBLE_DEVICES=str(d))
            es = dict(shim_env(os.path.join(tmp, "l-%d-%d.jsonl" % (d, i))), CUDA_VISIBLE_DEVICES=str(d))
            try:
                ob, osh = baton.lockstep_pair(cmd, eb, es, i % 2 == 0, timeout=300)
            except SystemExit:  # lockstep_ring's way of saying a process failed (printed above)
                raise AssertionError("dev %d round %d: a lockstep process failed" % (d, i))
            tb, ts = baton.iters(ob), baton.iters(osh)
            common = [k for k in ts if k in tb]
            assert common, "dev %d round %d: no iterations (%s | %s)" % (d, i, ob[-300:], osh[-300:])
            ratios.append(statistics.median(ts[k] / tb[k] for k in common))
            ns["bare"].append(statistics.median(tb.values()))
            ns["shim"].append(statistics.median(ts.values()))
        med, lo, hi = bench.bootstrap_median(ratios)
        out.append("dev %d bare %.0f ns/batch shim %.0f, median of %d lockstep rounds' ratios %.3f [%.3f, %.3f]"
                   % (d, statistics.median(ns["bare"]), statistics.median(ns["shim"]), ROUNDS, med, lo, hi))
        if not bench.verdict(hi, bar):
            bad.append(d)
    assert not bad, "; ".join(out) + " (bar %.2f: the interval's upper end <= %.2f)" % (bar["bar"], bar["bar"] +
                                                                                          bar["margin"])
    return "; ".join(out)


# ---- collectives inside graphs (issue 33) ---------------------------------

NCCL_CASES = os.path.join(ROOT, "tests", "gpu", "multigpu_nccl_cases.py")


def nccl_ranks(mode, tmp, shim, level="info", extra1=None, timeout=300):
    """Both ranks of multigpu_nccl_cases.py MODE=mode, each in its own process
    group (killed whole when timeout passes: nothing outlives the case).
    Returns [(rc, stdout, stderr, timed_out)] per rank."""
    import signal
    port = free_port()
    procs = []
    for rank in (0, 1):
        env = shim_env(os.path.join(tmp, "%s-%%r.jsonl" % mode), level) if shim else base_env()
        env.update(RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE="2", MASTER_ADDR="127.0.0.1",
                   MASTER_PORT=str(port), NCCL_DEBUG="WARN", MODE=mode)
        if rank == 1 and extra1:
            env.update(extra1)
        procs.append(subprocess.Popen([sys.executable, NCCL_CASES], env=env, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True, start_new_session=True))
    outs = []
    for p in procs:
        try:
            o, e = p.communicate(timeout=timeout)
            outs.append((p.returncode, o, e, False))
        except subprocess.TimeoutExpired:
            for q in procs:
                try:
                    os.killpg(q.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            o, e = p.communicate()
            outs.append((p.returncode, o, e, True))
    return outs


def nccl_logs(tmp, mode):
    return [os.path.join(tmp, "%s-%d.jsonl" % (mode, r)) for r in (0, 1)]


def end_captures(recs):
    return [c for c in rm.ev(recs, "call") if c.get("api", "").startswith("cuStreamEndCapture") and c.get("rc") == 0
            and c.get("graph") not in (None, "0x0")]


def keep(tmp, name):
    if OUT:
        shutil.copytree(tmp, os.path.join(OUT, name), dirs_exist_ok=True)


def where(logs):
    """The report's cross-rank view over logs, or None without a report here."""
    if not have_report():
        return None
    rj = subprocess.run([CGSHIM, "report", "--json"] + logs, capture_output=True, text=True, timeout=300)
    assert rj.returncode == 0, "report exit %d: %s" % (rj.returncode, rj.stderr[-300:])
    return (json.loads(rj.stdout).get("ranks") or {}).get("where") or {}


@case("nccl_graph_loop")
def nccl_graph_loop():
    tmp = tempfile.mkdtemp(prefix="cgshim-ncclloop-")
    try:
        bare = nccl_ranks("loop", tmp, False)
        for r, (rc, o, e, to) in enumerate(bare):
            assert rc == 0 and " ok " in o, "bare rank %d: exit %s %s %s" % (r, rc, o[-300:], e[-600:])
        sh = nccl_ranks("loop", tmp, True)
        fps, notes = [], []
        for r, (rc, o, e, to) in enumerate(sh):
            assert rc == 0, "shim rank %d: exit %s %s %s" % (r, rc, o[-300:], e[-600:])
            assert o == bare[r][1], "rank %d: output differs under the shim: %r vs %r" % (r, o, bare[r][1])
            recs = rm.read_log(nccl_logs(tmp, "loop")[r])
            bad = [(v.get("rule"), v.get("msg")) for v in rm.ev(recs, "violation") if v.get("severity") != "hint"]
            assert not bad, "rank %d: false alarms %s" % (r, bad)
            ends = [c for c in end_captures(recs) if c.get("nccl")]
            assert ends and all(c.get("fp") for c in ends), "rank %d: no end of capture with NCCL kernels (%s)" % (
                r, [(c.get("nodes"), c.get("nccl"), c.get("fp")) for c in end_captures(recs)])
            inst = [c for c in rm.ev(recs, "call") if c.get("api", "").startswith("cuGraphInstantiate")
                    and c.get("nccl")]
            assert inst, "rank %d: no instantiation marked as holding NCCL work" % r
            fps.append([c.get("fp") for c in ends])
            notes.append("rank %d: %d NCCL kernel(s), fp %s" % (r, ends[-1].get("nccl"), ends[-1].get("fp")))
        assert fps[0] == fps[1], "the same graph has different fingerprints on the two ranks: %s" % fps
        w = where(nccl_logs(tmp, "loop"))
        if w is not None:
            assert len(w.get("ranks", [])) == 2 and not w.get("first_divergence"), "report: %s" % w
            notes.append("report: no divergence")
        else:
            notes.append("no report here: logs under $OUT/nccl_loop (tests/gpu/multigpu_report.py)")
        return "; ".join(notes)
    finally:
        keep(tmp, "nccl_loop")


@case("nccl_teardown")
def nccl_teardown():
    tmp = tempfile.mkdtemp(prefix="cgshim-nccltd-")
    try:
        sh = nccl_ranks("teardown", tmp, True, timeout=90)
        notes = []
        for r, (rc, o, e, to) in enumerate(sh):
            assert "destroying with the graph alive" in o, "rank %d never reached the teardown: rc %s %s %s" % (
                r, rc, o[-300:], e[-600:])
            recs = rm.read_log(nccl_logs(tmp, "teardown")[r])
            v = [x for x in rm.ev(recs, "violation") if x.get("rule") == "CGS027"]
            assert v, "rank %d: no CGS027 before the teardown (rules %s)" % (
                r, [x.get("rule") for x in rm.ev(recs, "violation")])
            site = json.dumps(v[0].get("capture_site"))
            assert "multigpu_nccl_cases.py" in site, "rank %d: the capture site is not the script's: %s" % (r, site)
            assert v[0].get("execs_live", 0) >= 1 and v[0].get("nccl_kernels", 0) >= 1, "rank %d: %s" % (r, v[0])
            others = [x.get("rule") for x in rm.ev(recs, "violation") if x.get("rule") != "CGS027"
                      and x.get("severity") != "hint"]
            assert not others, "rank %d: other warnings %s" % (r, others)
            after = [c for c in rm.ev(recs, "call") if c.get("api", "").startswith("ncclComm")
                     and c.get("seq", 0) > v[0]["seq"]]
            notes.append("rank %d: CGS027 before %s (%s), teardown %s" % (
                r, v[0].get("api"), [ln for ln in o.splitlines() if " nccl " in ln][:1],
                "blocked until killed at 90 s" if to else "returned (%s)" % [c.get("api") for c in after]))
        return "; ".join(notes)
    finally:
        keep(tmp, "nccl_teardown")


@case("nccl_skip")
def nccl_skip():
    tmp = tempfile.mkdtemp(prefix="cgshim-ncclskip-")
    try:
        sh = nccl_ranks("skip", tmp, True, "trace", {"SKIP_SIZE": "4"})
        for r, (rc, o, e, to) in enumerate(sh):
            assert rc == 0 and " ok " in o, "shim rank %d: exit %s %s %s" % (r, rc, o[-300:], e[-600:])
        fps = [[c.get("fp") for c in end_captures(rm.read_log(p)) if c.get("nccl")] for p in nccl_logs(tmp, "skip")]
        assert len(fps[0]) == 4 and len(fps[1]) == 3 and fps[1] == fps[0][:2] + fps[0][3:], \
            "fingerprints per rank (rank 1 skips #2): %s" % fps
        detail = "rank 0 %d captures, rank 1 %d, fingerprints equal but rank 0's #2" % (len(fps[0]), len(fps[1]))
        w = where(nccl_logs(tmp, "skip"))
        if w is not None:
            d = w.get("first_divergence") or {}
            assert d.get("what") == "skipped" and d.get("index") == 2 and "rank 1 skipped it" in d.get("text", ""), \
                "report: %s" % d
            detail += "; report: " + d.get("text", "")
        else:
            detail += "; no report here: logs under $OUT/nccl_skip (tests/gpu/multigpu_report.py)"
        return detail
    finally:
        keep(tmp, "nccl_skip")


@case("cross_device_capture")
def cross_device_capture():
    bare, sh, tmp, log = bare_and_shim("cross_device_capture", "cgshim-xdev-")
    recs = rm.read_log(log)
    if OUT:
        shutil.copytree(tmp, os.path.join(OUT, "cross_device_capture"), dirs_exist_ok=True)
        with open(os.path.join(OUT, "cross_device_capture.txt"), "w") as f:
            f.write(bare.stdout)
    assert sh.stdout == bare.stdout, "program output differs under the shim:\n%s\n---\n%s" % (bare.stdout,
                                                                                          sh.stdout)
    bad = [(r.get("ev"), r.get("rule") or r.get("api")) for r in recs
           if r.get("ev") in ("mismatch", "violation")]
    assert not bad, "records %s; driver: %s" % (bad, " | ".join(bare.stdout.splitlines()))
    return "driver: " + " | ".join(bare.stdout.splitlines())


gpucase.finish()
