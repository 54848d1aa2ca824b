"""tests/gpu/issue35.py BUILD -- issue 35's GPU rows (tests/gpu/issue35):
the text format, the aligned update picture and graph identity on the real
driver, with the demo (kernels/demo_capture.cu) and the handle_reuse
scenario (kernels/model/handle_reuse.cu) built by nvcc."""
import ctypes
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

B = os.path.abspath(sys.argv[1])
LIB = os.path.join(B, "shim", "libcgshim.so")
CGSHIM = os.path.join(B, "tools", "cgshim")
ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BIN = tempfile.mkdtemp(prefix="issue35-")
for name, src in (("demo", "kernels/demo_capture.cu"), ("reuse", "kernels/model/handle_reuse.cu")):
    subprocess.run(["nvcc", "-O2", "-Ikernels", "-o", os.path.join(BIN, name), src], check=True, cwd=ROOT)


def driver_has(sym):
    try:
        return hasattr(ctypes.CDLL("libcuda.so.1"), sym)
    except OSError:
        return False


@case("text: the violation's first line names cudaGraphExecUpdate")
def _():
    env = dict(os.environ, LD_PRELOAD=LIB)
    for k in list(env):
        if k.startswith("CGSHIM_"):
            env.pop(k)
    p = subprocess.run([os.path.join(BIN, "demo")], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-800:]
    first = [l for l in p.stderr.splitlines() if " violation CGS001 " in l]
    assert len(first) == 1 and first[0].endswith(" error violation CGS001 update-will-fail in cudaGraphExecUpdate"), \
        "header %r" % first
    block = p.stderr.split(first[0], 1)[1].splitlines()
    assert block[1].startswith("    ") and "site: " in p.stderr and "cuGraphExecUpdate_v2" not in first[0], block[:6]
    print("  " + first[0])


@case("update picture: the inserted kernel alone is marked")
def _():
    sh, recs, logs = gpucase.run([os.path.join(BIN, "demo")], LIB)
    assert sh.returncode == 0, sh.stderr[-800:]
    p = subprocess.run([CGSHIM, "report", "--dot", "update:1"] + logs, capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    marked = re.findall(r'^\s*([ab]\d+) \[label="#\d+ (\w+)[^\n]*fillcolor=', p.stdout, re.M)
    assert [m[0] for m in marked] == ["b3"], "marked %r:\n%s" % (marked, p.stdout)
    print("  marked %s" % marked)


@case("identity: 17 graphs, 34 execs, the driver's ids, --dot HANDLE draws each")
def _():
    sh, recs, logs = gpucase.run([os.path.join(BIN, "reuse")], LIB, level="debug")
    assert sh.returncode == 0, sh.stderr[-800:]
    caps = [r for r in recs if r.get("ev") == "capture"]
    inst = [r for r in recs if r.get("ev") == "call" and r.get("api", "").startswith("cuGraphInstantiate")]
    assert len({c.get("graph_id") for c in caps}) == 17 and None not in [c.get("graph_id") for c in caps]
    assert len({r.get("exec_id") for r in inst}) == 34
    has = driver_has("cuGraphGetId")
    cuda = [c.get("cuda_graph_id") for c in caps]
    assert (len(set(cuda)) == 17 and None not in cuda) if has else cuda == [None] * 17, \
        "driver cuGraphGetId %s, cuda_graph_id %s" % (has, cuda)
    handles = {}
    for c in caps:
        handles.setdefault(c["graph"], []).append(c["graph_id"])
    for h, ids in handles.items():
        p = subprocess.run([CGSHIM, "report", "--dot", h] + logs, capture_output=True, text=True, timeout=120)
        drawn = [int(x) for x in re.findall(r'label="graph \S+ #(\d+)', p.stdout)]
        edges = re.findall(r"^\s*(\w+ -> \w+);", p.stdout, re.M)
        assert p.returncode == 0 and drawn == ids and len(edges) == len(ids) == len(set(edges)), \
            "%s: drawn %s (want %s), %d edges" % (h, drawn, ids, len(edges))
    print("  %d handles for 17 graphs; driver ids: %s" % (len(handles), "yes" if has else "no (driver < 13.1)"))


gpucase.finish()
