"""tests/gpu/issue32.py BUILD -- issue 32's GPU rows (tests/gpu/issue32):
work that escapes a capture (CGS024) and the empty graph (CGS025), in a C++
program and in PyTorch; re-capture churn (CGS026, a hint: one site capturing
one graph again and again, vLLM-shaped batch sizes, torch.compile
reduce-overhead re-recording) and coverage of a silent eager fallback. Every case: the output under the shim equals the
bare run's, and the rule fires exactly as listed (route included), nothing
else warns."""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

B = os.path.abspath(sys.argv[1])
gpucase.only = sys.argv[2] if len(sys.argv) > 2 else ""  # a case-name prefix
LIB = os.path.join(B, "shim", "libcgshim.so")
HERE = os.path.dirname(os.path.abspath(__file__))
BIN = tempfile.mkdtemp(prefix="issue32-")
EXE = os.path.join(BIN, "escape")
subprocess.run(["nvcc", "-O2", "-o", EXE, os.path.join(HERE, "issue32_escape.cu")], check=True)


def both(cmd, timeout=400):
    bare, _, _ = gpucase.run(cmd, None, timeout=timeout)
    shim, recs, _ = gpucase.run(cmd, LIB, timeout=timeout)
    assert bare.returncode == 0, "bare exit %d: %s" % (bare.returncode, bare.stdout[-800:] + bare.stderr[-800:])
    assert shim.returncode == 0, "shim exit %d: %s" % (shim.returncode, shim.stderr[-800:])
    assert shim.stdout == bare.stdout, "output differs: %r vs %r" % (shim.stdout, bare.stdout)
    print("  " + bare.stdout.strip().splitlines()[-1])
    return [r for r in recs if r.get("ev") == "violation" and r.get("severity") in ("error", "warn")], bare.stdout


def expect(viols, routes, empty=0):
    esc = [v for v in viols if v.get("rule") == "CGS024"]
    other = sorted({v.get("rule") for v in viols if v.get("rule") not in ("CGS024", "CGS025")})
    assert not other, "other rules fired: %s" % other
    assert [v.get("route") for v in esc] == routes, "CGS024 routes %r (want %r): %s" % (
        [v.get("route") for v in esc], routes, [v.get("msg") for v in esc])
    n25 = len([v for v in viols if v.get("rule") == "CGS025"])
    assert n25 == empty, "CGS025 %d (want %d)" % (n25, empty)
    for v in esc:
        assert v.get("site") and v.get("capture") and "device" in v, v


for mode, routes, empty, out in (("cached", ["other_stream"], 0, "b 10 "), ("legacy", ["legacy_stream"], 0, "b 10 "),
                                 ("ptds", ["per_thread_stream"], 0, "b 10 "), ("empty", ["other_stream"], 1, "nodes 0"),
                                 ("joined", [], 0, "b 30 "), ("thread", [], 0, "b 10 ")):
    @case("escape-" + mode)
    def _(mode=mode, routes=routes, empty=empty, out=out):
        v, stdout = both([EXE, mode])
        assert out in stdout, "want %r in %r" % (out, stdout)
        expect(v, routes, empty)

for mode, routes in (("op", ["other_stream"]), ("custom", ["other_stream"]), ("right", [])):
    @case("torch-" + mode)
    def _(mode=mode, routes=routes):
        v, stdout = both([sys.executable, os.path.join(HERE, "issue32_torch.py"), mode], timeout=500)
        assert stdout.startswith("y "), stdout
        expect([x for x in v if x.get("rule") in ("CGS024", "CGS025")], routes)

# Coverage: graph launches x kernel nodes against eager launches, and
# CGSHIM_EXPECT_GRAPHED (the summary's graphed_below).
for mode, eager, graphed, below in (("joined", 0, 6, False), ("cached", 1, 3, True)):
    @case("coverage-" + mode)
    def _(mode=mode, eager=eager, graphed=graphed, below=below):
        p, recs, _ = gpucase.run([EXE, mode], LIB, extra={"CGSHIM_EXPECT_GRAPHED": "0.95"})
        assert p.returncode == 0, p.stderr[-800:]
        s = [r for r in recs if r.get("ev") == "summary"]
        assert s, "no summary record"
        s = s[0]
        print("  eager %s graph %s permille %s below %s" % (s.get("eager_kernels"), s.get("graph_kernels"),
                                                           s.get("graphed_permille"), s.get("graphed_below")))
        assert s.get("eager_kernels") == eager and s.get("graph_kernels") == graphed, s
        assert s.get("graphed_below") is below, s

# Re-capture churn (CGS026, a hint) and eager fallback.
CHURN = os.path.join(BIN, "churn")
subprocess.run(["nvcc", "-O2", "-o", CHURN, os.path.join(HERE, "issue32_churn.cu")], check=True)


def churn_run(cmd, timeout=400, extra=None):
    """cmd bare and shimmed (outputs equal, no warn/error record): the CGS026
    records and the recapture records of the shimmed run."""
    bare, _, _ = gpucase.run(cmd, None, timeout=timeout)
    shim, recs, _ = gpucase.run(cmd, LIB, timeout=timeout, extra=extra)
    assert bare.returncode == 0 and shim.returncode == 0, (bare.stdout[-600:], shim.stderr[-600:])
    assert shim.stdout == bare.stdout, "output differs: %r vs %r" % (shim.stdout[-300:], bare.stdout[-300:])
    bad = [r.get("rule") for r in recs if r.get("ev") == "violation" and r.get("severity") in ("error", "warn")]
    assert not bad, "warn/error records: %s" % bad
    print("  " + bare.stdout.strip().splitlines()[-1])
    return ([r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS026"],
            [r for r in recs if r.get("ev") == "recapture"], recs)


@case("churn-same")
def _():
    v, rc, _ = churn_run([CHURN, "same"])
    assert len(v) == 1 and v[0].get("captures") == 10 and v[0].get("severity") == "hint", v
    assert len(rc) == 1 and rc[0].get("captures") == 12 and rc[0].get("launches") == 12, rc
    print("  CGS026 at %s captures, %.3f ms wasted so far; exit: %s captures, %.3f ms wasted" % (
        v[0].get("captures"), v[0].get("wasted_ns", 0) / 1e6, rc[0].get("captures"), rc[0].get("wasted_ns", 0) / 1e6))


@case("churn-vllm-batches")
def _():
    v, rc, _ = churn_run([CHURN, "batches"])
    assert len(v) == 1 and v[0].get("captures") == 10, [x.get("msg") for x in v]
    assert len(rc) == 1 and rc[0].get("captures") == 13 and rc[0].get("fingerprints_at_site") == 6, rc
    print("  one CGS026 (batch 8: %s captures at exit, %s graphs at the site)" % (
        rc[0].get("captures"), rc[0].get("fingerprints_at_site")))


for mode, below in (("fallback", True), ("graphed", False)):
    @case("coverage-" + mode)
    def _(mode=mode, below=below):
        _, _, recs = churn_run([CHURN, mode], extra={"CGSHIM_EXPECT_GRAPHED": "0.95", "CGSHIM_EAGER_SAMPLE": "1"})
        s = [r for r in recs if r.get("ev") == "summary"]
        assert s, "no summary record"
        s = s[0]
        print("  eager %s graph %s permille %s below %s" % (s.get("eager_kernels"), s.get("graph_kernels"),
                                                           s.get("graphed_permille"), s.get("graphed_below")))
        assert s.get("graphed_below") is below, s
        assert (s.get("eager_kernels"), s.get("graph_kernels")) == ((80, 0) if below else (0, 80)), s
        # the top eager kernels by call site, exact at CGSHIM_EAGER_SAMPLE=1
        top = [r for r in recs if r.get("ev") == "eager_top"]
        print("  top eager: %s" % [(r.get("kernel"), r.get("launches"), (r.get("site") or ["-"])[0]) for r in top])
        n_top = sum(r.get("launches", 0) for r in top)
        assert n_top == s.get("eager_kernels") if len(top) < 10 else n_top <= s.get("eager_kernels"), top
        assert all(r.get("exact") is True and r.get("kernel") and r.get("site") for r in top), top


@case("torch-vllm-batches")
def _():
    v, rc, _ = churn_run([sys.executable, os.path.join(HERE, "issue32_churn_torch.py"), "vllm"], timeout=500)
    assert len(v) == 1, [x.get("msg") for x in v]
    mine = [r for r in rc if r.get("captures") == 13]
    # 1, 2 and 4 share a launch shape (one block; only the element count
    # differs, a scalar the shape hash leaves out): 4 shapes at the site
    assert mine and mine[0].get("fingerprints_at_site") >= 4, rc
    print("  one CGS026: batch 8 captured %s times, %s graphs at the site" % (
        mine[0].get("captures"), mine[0].get("fingerprints_at_site")))


@case("torch-compile-rerecord")
def _():
    v, rc, _ = churn_run([sys.executable, os.path.join(HERE, "issue32_churn_torch.py"), "compile"], timeout=900)
    assert len(v) == 1 and v[0].get("severity") == "hint", "CGS026 %s: recapture records %s" % (
        [x.get("captures") for x in v], [(r.get("captures"), r.get("buffer_sets")) for r in rc])
    assert [r.get("captures") for r in rc] == [16], [(r.get("captures"), r.get("buffer_sets")) for r in rc]
    print("  CGS026 x%d; recaptured: %s" % (len(v), [(r.get("captures"), r.get("buffer_sets")) for r in rc]))


gpucase.finish()
