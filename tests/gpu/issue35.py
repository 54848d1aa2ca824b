"""tests/gpu/issue35.py -- issue 35's GPU rows (tests/gpu/issue35):
the text format, the aligned update picture and graph identity on the real
driver, with the demo (kernels/demo_capture.cu) and the handle_reuse
scenario (kernels/model/handle_reuse.cu) built by nvcc (static cudart).

usage:
  issue35.py BUILD [--out DIR]     the GPU part: runs the programs, checks
      the text header (stderr), leaves the logs in ONE file
      DIR/issue35-logs.tgz (demo/, reuse/, meta.json); where BUILD's cgshim
      has a report, the report checks follow here too
  issue35.py --judge DIR BUILD     the report checks (update picture,
      identity) on DIR/issue35-logs.tgz (or DIR with demo/ and reuse/), run
      on a host whose BUILD has the report (jansson, libdw)
  issue35.py --standin BUILD [--out DIR]   the GPU part on the CPU stand-in
      (BUILD's tests/programs/demo_capture and tests/model/model_handle_reuse):
      to test the judge without a GPU
One line per case, closing "N passed, N failed"."""
import argparse
import ctypes
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TGZ = "issue35-logs.tgz"


def driver_has(sym):
    try:
        return hasattr(ctypes.CDLL("libcuda.so.1"), sym)
    except OSError:
        return False


def has_report(cgshim):
    p = subprocess.run([cgshim, "report", "--json", os.devnull], capture_output=True, text=True, timeout=60)
    return "has no report" not in p.stderr


def programs(b, standin):
    """The demo and the reuse scenario: nvcc-built (GPU) or the stand-in's."""
    if standin:
        sd = os.path.join(b, "tests", "standin")
        os.environ["LD_LIBRARY_PATH"] = sd + (":" + os.environ["LD_LIBRARY_PATH"] if os.environ.get("LD_LIBRARY_PATH") else "")
        return (os.path.join(b, "tests", "programs", "demo_capture"), os.path.join(b, "tests", "model", "model_handle_reuse"))
    d = tempfile.mkdtemp(prefix="issue35-")
    for name, src in (("demo", "kernels/demo_capture.cu"), ("reuse", "kernels/model/handle_reuse.cu")):
        subprocess.run(["nvcc", "-O2", "-Ikernels", "-o", os.path.join(d, name), src], check=True, cwd=ROOT)
    return os.path.join(d, "demo"), os.path.join(d, "reuse")


def gpu_part(a):
    """Run the programs; the text case; the logs into one tgz. Returns the
    folder holding demo/ and reuse/ logs."""
    lib = os.path.join(a.build, "shim", "libcgshim.so")
    demo, reuse = programs(a.build, a.standin)
    logs = tempfile.mkdtemp(prefix="issue35-logs-")

    @case("text: the violation's first line names cudaGraphExecUpdate")
    def _():
        env = dict(os.environ, LD_PRELOAD=lib)
        for k in list(env):
            if k.startswith("CGSHIM_"):
                env.pop(k)
        p = subprocess.run([demo], env=env, capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-800:]
        first = [ln for ln in p.stderr.splitlines() if " violation CGS001 " in ln]
        assert len(first) == 1 and first[0].endswith(" error violation CGS001 update-will-fail in cudaGraphExecUpdate"), \
            "header %r" % first
        block = p.stderr.split(first[0], 1)[1].splitlines()
        assert block[1].startswith("    ") and "site: " in p.stderr and "cuGraphExecUpdate_v2" not in first[0], block[:6]
        print("  " + first[0])

    @case("runs: the demo and the reuse scenario write their logs")
    def _():
        bad = []
        with open(os.path.join(logs, "meta.json"), "w") as f:
            json.dump({"cuGraphGetId": driver_has("cuGraphGetId") if not a.standin else None, "standin": a.standin}, f)
        for name, exe, level in (("demo", demo, "info"), ("reuse", reuse, "debug")):
            d = os.path.join(logs, name)
            os.makedirs(d)
            sh, recs, files = gpucase.run([exe], lib, level=level, logdir=d)
            with open(os.path.join(d, "stderr.txt"), "w") as f:
                f.write(sh.stderr)
            if sh.returncode != 0 or not files or not recs:
                bad.append("%s: rc %d, %d logs: %s" % (name, sh.returncode, len(files), sh.stderr[-800:]))
        if a.out:  # what there is, failed or not: the judge says what is missing
            with tarfile.open(os.path.join(a.out, TGZ), "w:gz") as t:
                for n in ("demo", "reuse", "meta.json"):
                    t.add(os.path.join(logs, n), arcname=n)
            print("  logs: %s" % os.path.join(a.out, TGZ))
        assert not bad, "; ".join(bad)
    return logs


def logs_of(d):
    """DIR/issue35-logs.tgz unpacked, or DIR itself when it holds demo/."""
    if os.path.isdir(os.path.join(d, "demo")):
        return d
    t = os.path.join(d, TGZ) if os.path.isdir(d) else d
    x = tempfile.mkdtemp(prefix="issue35-judge-")
    with tarfile.open(t) as f:
        if hasattr(tarfile, "data_filter"):
            f.extractall(x, filter="data")
        else:
            f.extractall(x)
    return x


def judge(d, cgshim):
    """The report checks on the logs in d (demo/, reuse/, meta.json)."""
    def files(name):
        p = os.path.join(d, name)
        return sorted(os.path.join(p, f) for f in os.listdir(p) if f.endswith(".jsonl")) if os.path.isdir(p) else []

    @case("update picture: the inserted kernel alone is marked")
    def _():
        logs = files("demo")
        assert logs, "no demo logs in %s" % d
        p = subprocess.run([cgshim, "report", "--dot", "update:1"] + logs, capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        marked = re.findall(r'^\s*([ab]\d+) \[label="#\d+ (\w+)[^\n]*fillcolor=', p.stdout, re.M)
        assert [m[0] for m in marked] == ["b3"], "marked %r:\n%s" % (marked, p.stdout)
        print("  marked %s" % marked)

    @case("identity: 17 graphs, 34 execs, the driver's ids, --dot HANDLE draws each")
    def _():
        logs = files("reuse")
        assert logs, "no reuse logs in %s" % d
        meta = json.load(open(os.path.join(d, "meta.json")))
        recs = [json.loads(ln) for f in logs for ln in open(f) if ln.strip()]
        caps = [r for r in recs if r.get("ev") == "capture"]
        inst = [r for r in recs if r.get("ev") == "call" and r.get("api", "").startswith("cuGraphInstantiate")]
        ids = [c.get("graph_id") for c in caps]
        assert len(set(ids)) == 17 and None not in ids, "graph_ids %s" % ids
        assert len({r.get("exec_id") for r in inst}) == 34, "exec_ids %s" % [r.get("exec_id") for r in inst]
        has = meta.get("cuGraphGetId")
        cuda = [c.get("cuda_graph_id") for c in caps]
        if has is not None:  # on the stand-in the driver's ids are the model tests' (handle_reuse)
            assert (len(set(cuda)) == 17 and None not in cuda) if has else cuda == [None] * 17, \
                "driver cuGraphGetId %s, cuda_graph_id %s" % (has, cuda)
        handles = {}
        for c in caps:
            handles.setdefault(c["graph"], []).append(c["graph_id"])
        for h, want in handles.items():
            p = subprocess.run([cgshim, "report", "--dot", h] + logs, capture_output=True, text=True, timeout=120)
            drawn = [int(x) for x in re.findall(r'label="graph \S+ #(\d+)', p.stdout)]
            edges = re.findall(r"^\s*(\w+ -> \w+);", p.stdout, re.M)
            assert p.returncode == 0 and drawn == want and len(edges) == len(want) == len(set(edges)), \
                "%s: drawn %s (want %s), %d edges: %s" % (h, drawn, want, len(edges), p.stderr[-300:])
        print("  %d handles for 17 graphs; driver ids: %s" % (
            len(handles), {None: "stand-in", True: "yes", False: "no (driver < 13.1)"}[has]))


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("--judge", metavar="DIR")
    ap.add_argument("--standin", action="store_true")
    ap.add_argument("--out")
    ap.add_argument("build")
    a = ap.parse_args()
    a.build = os.path.abspath(a.build)
    cgshim = os.path.join(a.build, "tools", "cgshim")
    if a.judge:
        if not has_report(cgshim):
            sys.exit("issue35.py --judge: %s has no report (jansson, libdw); judge on a host with the full build" % cgshim)
        try:
            d = logs_of(a.judge)
        except (OSError, tarfile.TarError) as e:
            d = None

            @case("judge: the logs of the GPU part (%s or demo/, reuse/)" % TGZ)
            def _():
                raise AssertionError("%s: %s" % (a.judge, e))
        if d:
            judge(d, cgshim)
    else:
        d = gpu_part(a)
        if has_report(cgshim):
            judge(d, cgshim)
        else:
            print("report checks: this build has no report; fetch %s and run here:\n"
                  "  python3 tests/gpu/issue35.py --judge FETCHED_DIR build" % (os.path.join(a.out, TGZ) if a.out else "(no --out: logs in %s)" % d))
    gpucase.finish()


main()
