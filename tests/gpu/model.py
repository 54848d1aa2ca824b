#!/usr/bin/env python3
"""GPU checks of the model's ledgers (issue 3). Usage: model.py BUILD BIN [PREFIX]
  BUILD  meson build dir of the shim (BUILD/shim/libcgshim.so)
  BIN    dir with the nvcc-built programs:
    for p in $(python3 scripts/scenarios.py model --except multi_device); do
      nvcc -O2 -arch=sm_90 -Ikernels -o $BIN/$p kernels/model/$p.cu; done
    nvcc -O2 -arch=sm_90 -Ikernels -x cu -o $BIN/node_memory bench/node_memory.c
  PREFIX run only the cases whose name starts with it
Cases:
  seed001        tests/gpu/seed001.py (SEED_MAX_BS, default 128) under the shim: per
                 capture, the bytes the shim attributes (capture record delta =
                 malloc_bytes + unattributed, plus the instantiate record's delta)
                 against the script's mem_get_info change, within 2 MiB; prints the
                 per-capture table.
  seed001_async  the same script with PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync
                 (8 batch sizes): every alloc record is attributed to the device's
                 default pool; the instantiate flags are printed.
  every kernels/model scenario but multi_device (scripts/scenarios.py):
                 the CPU checks of tests/model/run_model.py against the real driver.
  node_memory    shim heap bytes per tracked node (bar 256).
One line per case PASS/FAIL, then 'N passed, N failed'."""
import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

BUILD, BIN = sys.argv[1], sys.argv[2]
gpucase.only = sys.argv[3] if len(sys.argv) > 3 else ""
LIB = os.path.abspath(os.path.join(BUILD, "shim", "libcgshim.so"))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests", "model"))
import run_model as rm  # noqa: E402

MiB = 1 << 20
GRAN = 2 * MiB




def base_env():
    env = dict(os.environ)
    for k in list(env):
        if k.startswith("CGSHIM_") or k == "LD_PRELOAD":
            del env[k]
    return env


def run(cmd, shim=True, extra=None, timeout=300, meminfo="on"):
    tmp = tempfile.mkdtemp(prefix="cgshim-model-")
    log = os.path.join(tmp, "log.jsonl")
    env = base_env()
    if shim:
        # An exact per-capture table: every capture and instantiation
        # sampled (the default, auto, stops sampling tight capture loops).
        env.update(LD_PRELOAD=LIB, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
        if meminfo:
            env["CGSHIM_MEMINFO"] = meminfo
    if extra:
        env.update(extra)
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return p, rm.read_log(log)


def used_lines(out):
    """[(label, used bytes)] from the script's report_memory lines."""
    res = []
    for m in re.finditer(r"^(Before capture|After capture batchsize (\d+)): Used: ([0-9.]+) MB", out, re.M):
        res.append((int(m.group(2)) if m.group(2) else 0, round(float(m.group(3)) * MiB)))
    return res


SEED = [sys.executable, os.path.join(ROOT, "tests", "gpu", "seed001.py")]


SEED_TOTALS = {}


def seed001_table(meminfo):
    """Per capture i: the script's used-memory change between its reports
    i-1 and i against what the shim attributes to capture i: the capture
    window's delta (free_before - free_after: malloc_bytes + unattributed)
    plus the delta of the instantiation of the captured graph (instantiate
    call record). pre = taken between the previous report and the capture's
    begin (e.g. released by torch's empty_cache), post = after the
    instantiation up to the report."""
    nbs = int(os.environ.get("SEED_MAX_BS", "128"))
    p, recs = run(SEED + [str(nbs)], meminfo=meminfo)
    assert p.returncode == 0, "seed script exit %d: %s" % (p.returncode, p.stderr[-800:])
    used = used_lines(p.stdout)
    free = [round(float(m.group(1)) * MiB) for m in re.finditer(r": Used: [0-9.]+ MB, Free: ([0-9.]+) MB", p.stdout)]
    assert len(used) == nbs + 1 and len(free) == nbs + 1, "expected %d report lines, got %d" % (nbs + 1, len(used))
    caps = [c for c in rm.ev(recs, "capture") if c.get("rc") == 0]
    assert len(caps) == nbs, "expected %d capture records, got %d" % (nbs, len(caps))
    inst = {}
    for c in rm.ev(recs, "call"):
        if "Instantiate" in c.get("api", "") and c.get("rc") == 0 and "delta" in c and c.get("capture"):
            inst[c["capture"]] = c
    print("  %4s %10s %10s %10s %10s %10s %10s %8s %8s" % ("bs", "script_d", "attrib", "cap_delta", "malloc",
                                                         "unattrib", "inst_d", "pre", "post"))
    bad, tot_script, tot_attr, tot_malloc, tot_inst, tot_unat = [], 0, 0, 0, 0, 0
    for i, c in enumerate(caps):
        assert "delta" in c, "capture %d has no free_before/free_after (a capture was live?)" % (i + 1)
        assert c["delta"] == c["malloc_bytes"] + c["unattributed"], "capture %d: delta != malloc + unattributed" % (i + 1)
        ins = inst.get(c["capture"])
        assert ins is not None, "no instantiate record with a memory delta for capture %s" % c["capture"]
        d_script = used[i + 1][1] - used[i][1]
        attrib = c["delta"] + ins["delta"]
        pre = free[i] - c["free_before"]
        post = ins["free_after"] - free[i + 1]
        tot_script += d_script
        tot_attr += attrib
        tot_malloc += c["malloc_bytes"]
        tot_unat += c["unattributed"]
        tot_inst += ins["delta"]
        if abs(d_script - attrib) > GRAN:
            bad.append(i + 1)
        if d_script or attrib or i < 3 or abs(d_script - attrib) > GRAN:
            print("  %4d %10d %10d %10d %10d %10d %10d %8d %8d" % (i + 1, d_script, attrib, c["delta"],
                  c["malloc_bytes"], c["unattributed"], ins["delta"], pre, post))
    print("  total: script %d = attributed %d (capture malloc %d + capture unattributed %d + instantiate %d)"
          " + outside %d" % (tot_script, tot_attr, tot_malloc, tot_unat, tot_inst, tot_script - tot_attr), flush=True)
    SEED_TOTALS[meminfo] = (tot_script, tot_attr)
    assert abs(tot_script - tot_attr) <= GRAN, "total growth %d vs attributed %d differs by more than 2 MiB" % (
        tot_script, tot_attr)
    assert not bad, "captures whose attributed bytes differ from mem_get_info by > 2 MiB: %s" % bad
    mism = rm.ev(recs, "mismatch")
    assert not mism, "mismatch records: %s" % [(m.get("api"), m.get("rule")) for m in mism[:5]]
    return "%d captures, growth %.1f MiB attributed: malloc %.1f + unattributed %.1f + instantiate %.1f MiB" % (
        nbs, tot_script / MiB, tot_malloc / MiB, tot_unat / MiB, tot_inst / MiB)


@case("seed001")
def seed001():
    return seed001_table("on")


@case("seed001 under the default CGSHIM_MEMINFO (auto): the table complete, the totals of on")
def seed001_default():
    r = seed001_table(None)
    on, auto = SEED_TOTALS.get("on"), SEED_TOTALS.get(None)
    assert on and auto, "no totals to compare (on %s, auto %s)" % (on, auto)
    assert abs(on[0] - auto[0]) <= GRAN and abs(on[1] - auto[1]) <= GRAN, (
        "totals differ: script/attributed on %s, auto %s" % (on, auto))
    return r + "; totals as with meminfo on"


@case("seed001_async")
def seed001_async():
    p, recs = run(SEED + ["8"], extra={"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"})
    assert p.returncode == 0, "seed script exit %d: %s" % (p.returncode, p.stderr[-800:])
    allocs = rm.ev(recs, "alloc")
    assert allocs, "no alloc records (cudaMallocAsync backend should capture allocation nodes)"
    notdef = [a for a in allocs if a.get("pool_default") is not True]
    assert not notdef, "%d/%d alloc records not attributed to the default pool: %s" % (
        len(notdef), len(allocs), [(a.get("pool"), a.get("api")) for a in notdef[:3]])
    pools = {a.get("pool") for a in allocs}
    assert len(pools) == 1, "allocations attributed to several pools: %s" % pools
    prec = [x for x in rm.ev(recs, "pool") if x.get("pool") in pools]
    assert prec and prec[0].get("default") is True, "pool record of %s not default" % pools
    inst = [c for c in rm.ev(recs, "call") if "Instantiate" in c.get("api", "") and c.get("rc") == 0]
    assert inst, "no instantiate call records"
    flags = sorted({(c.get("api"), c.get("via"), c.get("flags")) for c in inst}, key=str)
    caps = [c for c in rm.ev(recs, "capture") if c.get("rc") == 0]
    return "%d alloc nodes in %d captures, all from default pool %s; instantiate %s" % (
        len(allocs), len(caps), pools.pop(), ", ".join("%s(via %s) flags=%s" % f for f in flags))


def c_case(name):
    @case(name)
    def fn():
        prog = os.path.join(BIN, name)
        assert os.path.exists(prog), "%s not built" % prog
        bare, _ = run([prog], shim=False)
        # condensed is about the default memory samples (auto): steady
        # captures, and their records condensed
        sh, recs = run([prog], meminfo=None if name == "condensed" else "on")
        assert bare.returncode == 0, "bare exit %d: %s" % (bare.returncode, bare.stdout[-400:])
        assert sh.returncode == 0, "shim exit %d: %s" % (sh.returncode, sh.stdout[-400:])
        assert bare.stdout == sh.stdout, "program output differs bare vs shim"
        buf = io.StringIO()
        before = rm.failures
        with contextlib.redirect_stdout(buf):
            assert not rm.ev(recs, "mismatch"), "mismatch records"
            rm.CASES[name](recs, rm.pools_from_stderr(sh.stderr))
        fails = [l for l in buf.getvalue().splitlines() if l.startswith("FAIL")]
        assert rm.failures == before and not fails, "; ".join(fails)
        n = len([l for l in buf.getvalue().splitlines() if l.startswith("ok")])
        extra = ""
        if name == "destroy_outstanding":
            l = rm.ev(recs, "leak")[0]
            extra = "; leak %s %d bytes at %s" % (l["dptr"], l["size"], l["site"][:2])
        if name == "three_pools":
            extra = "; " + ", ".join("%s->%s" % (a["size"] // MiB, a["pool"]) for a in rm.ev(recs, "alloc"))
        if name == "chain_joins":  # its other joins and the plain chain (the default run: the wait)
            for mode in ("update", "adddeps", "chain"):
                p, mrecs = run([prog, mode])
                assert p.returncode == 0, "%s exit %d: %s" % (mode, p.returncode, p.stdout[-400:])
                with contextlib.redirect_stdout(io.StringIO()):
                    ok, what = rm.chain_verdict(mrecs, mode)
                assert ok, what
                extra += "; " + what
        return "%d checks%s" % (n, extra)
    return fn


sys.path.insert(0, os.path.join(ROOT, "scripts"))
import scenarios  # noqa: E402

for _n in scenarios.scenarios(ROOT, "model", ["multi_device"]):
    c_case(_n)


@case("condensed_meminfo_off")
def condensed_meminfo_off():
    """CGSHIM_MEMINFO=off (run_model.condensed_off_checks): before, off wrote
    every call of the loop at info, records_condensed 0."""
    prog = os.path.join(BIN, "condensed")
    assert os.path.exists(prog), "%s not built" % prog
    bare, _ = run([prog], shim=False)
    sh, recs = run([prog], meminfo="off")
    assert bare.returncode == 0 and sh.returncode == 0, "exit bare %d shim %d" % (bare.returncode, sh.returncode)
    assert bare.stdout == sh.stdout, "program output differs bare vs shim"
    buf = io.StringIO()
    before = rm.failures
    with contextlib.redirect_stdout(buf):
        rm.condensed_off_checks(recs)
    fails = [l for l in buf.getvalue().splitlines() if l.startswith("FAIL")]
    assert rm.failures == before and not fails, "; ".join(fails)
    cond = rm.one(recs, "summary").get("records_condensed")
    return "%s records condensed, %d capture records written" % (cond, len(rm.ev(recs, "capture")))


@case("node_memory")
def node_memory():
    prog = os.path.join(BIN, "node_memory")
    assert os.path.exists(prog), "%s not built" % prog
    buf = io.StringIO()
    before = rm.failures
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(buf):
        rm.node_memory(types.SimpleNamespace(prog=prog, shim=LIB), base_env(), tmp)
    lines = buf.getvalue().splitlines()
    fails = [l for l in lines if l.startswith("FAIL")]
    figs = [l.split(": ", 1)[1] for l in lines if "per tracked node" in l]
    assert rm.failures == before and not fails, "; ".join(fails + figs)
    return "; ".join(figs)


gpucase.finish()
