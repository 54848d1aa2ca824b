"""tests/gpu/gpucase.py -- what the GPU check scripts share: a program run
bare or under the shim (its JSONL records read back), one PASS/FAIL line per
case, and the closing 'N passed, N failed' line with the exit status."""
import glob, json, os, subprocess, sys, tempfile

results = []
only = ""  # run only the cases whose name starts with this


def run(cmd, lib=None, level="info", extra=None, logdir=None, timeout=400, cwd=None):
    """Run cmd with the caller's environment less LD_PRELOAD and CGSHIM_*;
    under the shim (lib given) at `level`, JSONL to a fresh folder. Returns
    (CompletedProcess, records, log files)."""
    tmp = logdir or tempfile.mkdtemp(prefix="cgshim-gpu-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    if lib:
        env.update(LD_PRELOAD=lib, CGSHIM_LOG=level, CGSHIM_LOG_FORMAT="jsonl",
                   CGSHIM_LOG_FILE=os.path.join(tmp, "log-%p.jsonl"))
    env.update(extra or {})
    p = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    files = sorted(glob.glob(os.path.join(tmp, "log-*.jsonl")))
    recs = []
    for f in files:
        for line in open(f, errors="replace"):
            try:
                recs.append(json.loads(line))
            except ValueError:
                pass
    return p, recs, files


def case(name):
    """Decorator: run the case now; an AssertionError is its failure, any
    other exception a failure of the harness (counted the same)."""
    def deco(fn):
        if not name.startswith(only):
            return fn
        try:
            detail = fn()
            results.append(True)
            print("PASS %s: %s" % (name, detail), flush=True)
        except AssertionError as e:
            results.append(False)
            print("FAIL %s: %s" % (name, e), flush=True)
        except Exception as e:
            results.append(False)
            print("FAIL %s: %s: %s" % (name, type(e).__name__, e), flush=True)
        return fn
    return deco


def calls(recs, prefix=None, **kw):
    return [r for r in recs if r.get("ev") == "call" and (not prefix or r.get("api", "").startswith(prefix))
            and all(r.get(k) == v for k, v in kw.items())]


def finish():
    ok = sum(results)
    print("%d passed, %d failed" % (ok, len(results) - ok))
    sys.exit(0 if ok == len(results) else 1)
