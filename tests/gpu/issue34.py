"""tests/gpu/issue34.py BUILD PEER_DIR -- issue 34's GPU rows (tests/gpu/issue34)."""
import glob
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpucase  # noqa: E402
from gpucase import case  # noqa: E402

B, PEER = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
HERE = os.path.dirname(os.path.abspath(__file__))
CGSHIM = os.path.join(B, "tools", "cgshim")
PYDIR = os.path.join(B, "python")


def env(**kw):
    e = {k: v for k, v in os.environ.items() if not k.startswith(("CGSHIM_", "NVTX_")) and k != "LD_PRELOAD"}
    e.update(kw)
    return e


def records(paths):
    out = []
    for p in paths:
        for line in open(p, errors="replace"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


@case("nvtx-decode")
def nvtx_decode():
    d = tempfile.mkdtemp(prefix="issue34-nvtx-")
    p = subprocess.run([CGSHIM, "--log-file=%s/t-%%p.jsonl" % d, "--", sys.executable,
                        os.path.join(HERE, "issue34_torch.py")], env=env(), capture_output=True, text=True,
                       timeout=300)
    assert p.returncode == 0 and "ok" in p.stdout, "exit %d: %s" % (p.returncode, p.stderr[-1500:])
    caps = [r for r in records(glob.glob(d + "/t-*.jsonl")) if r.get("ev") == "capture"]
    print("  capture records' labels:", [r.get("labels") for r in caps])
    assert len(caps) >= 2, "two captures, got %d records" % len(caps)
    assert any(r.get("labels") == ["decode"] for r in caps), "no capture record carries ['decode']"
    assert caps[-1].get("labels") is None, "the capture after range_pop still labelled: %r" % caps[-1].get("labels")


@case("plugin-peer")
def plugin_peer():
    suite = os.path.join(PEER, "torch", "test_cuda_graphs.py")
    assert os.path.exists(suite), "no %s (PEER_DIR)" % suite
    out = tempfile.mkdtemp(prefix="issue34-peer-")
    wd = os.path.join(out, "work")
    os.makedirs(wd)
    subprocess.run(["cp", suite, wd], check=True)
    deps = os.path.join(out, "pydeps")
    subprocess.run([sys.executable, os.path.join(PEER, "tools", "peer_setup.py"), "deps",
                    os.path.join(PEER, "wheels", "pydeps-debian-sid.tar.xz"), deps], check=True)
    pp = ":".join([PYDIR, deps, os.path.join(PEER, "tools")])
    base = [sys.executable, "-m", "pytest", "-c", os.path.join(PEER, "tools", "pytest-peer.ini"), "--rootdir", wd,
            "-p", "peer_timing", "-p", "no:cacheprovider", "-rA", "test_cuda_graphs.py"]
    res = {}
    for mode, extra in (("bare", []), ("plugin", ["-p", "cgshim", "--cgshim=mark"])):
        timing = os.path.join(out, mode + "-timing.jsonl")
        e = env(PYTHONPATH=pp, PEER_TIMING_FILE=timing, PYTHONDONTWRITEBYTECODE="1",
                CGSHIM_LOG_FILE=os.path.join(out, "logs", "t-%p.jsonl"), CGSHIM_LOG="info")
        os.makedirs(os.path.join(out, "logs"), exist_ok=True)
        if mode == "bare":
            e.pop("CGSHIM_LOG_FILE")
            e.pop("CGSHIM_LOG")
        p = subprocess.run(base + extra, cwd=wd, env=e, capture_output=True, text=True, timeout=450)
        res[mode] = {r["name"]: r["outcome"] for r in records([timing]) if r.get("ev") == "test_end"}
        print("  %s: exit %d, %d tests, %s" % (mode, p.returncode, len(res[mode]),
                                                 p.stdout.strip().splitlines()[-1:] if p.stdout else ""))
    assert res["bare"] and res["bare"] == res["plugin"], "outcomes differ: %r" % {
        k: (res["bare"].get(k), res["plugin"].get(k)) for k in set(res["bare"]) | set(res["plugin"])
        if res["bare"].get(k) != res["plugin"].get(k)}
    # Attribution: the harness gives a record to the test whose window holds
    # its ts; the plugin labels it. Both must name the same test.
    win = {}
    for r in records([os.path.join(out, "plugin-timing.jsonl")]):
        if r.get("ev") in ("test_start", "test_end"):
            win.setdefault(r["name"], {})[r["ev"]] = r["ts"]
    recs = records(glob.glob(os.path.join(out, "logs", "t-*.jsonl")))
    checked = differ = 0
    for r in recs:
        by_ts = [n for n, w in win.items() if w.get("test_start", 1 << 62) <= r.get("ts", 0) <= w.get("test_end", 0)]
        label = (r.get("labels") or [None])[0]
        if not by_ts and label is None:
            continue
        checked += 1
        if by_ts[:1] != [label]:
            differ += 1
            if differ <= 5:
                print("  differ: %s %s ts-window %s label %s" % (r.get("ev"), r.get("api"), by_ts, label))
    viol = [r for r in recs if r.get("ev") in ("violation", "mismatch")]
    print("  %d records compared, %d differ; %d violation/mismatch records" % (checked, differ, len(viol)))
    assert checked > 0 and differ == 0, "%d of %d records attributed differently" % (differ, checked)


gpucase.finish()
