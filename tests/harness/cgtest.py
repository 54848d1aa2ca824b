"""tests/harness/cgtest.py -- the one test harness of the CPU and GPU runners.

What every runner needs: a program run bare or under the shim with an
environment (its JSONL log read back as records), record filters, one line
per check ("ok   what" / "FAIL what") or per case ("PASS name: detail" /
"FAIL name: why") and the closing "N passed, N failed" line with the exit
status (0 only when none failed). Used by the CPU runners (tests/rules,
tests/model, tests/policy, tests/integration), tests/lists_check.py and,
through tests/gpu/gpucase.py, every GPU script.

Runners import it as

    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "harness"))
    import cgtest

Contract: a case fails by raising AssertionError (its message is the
reason); any other exception is a failure of the harness, counted the same.
Nothing here asserts on records: the assertions stay in the runners.
"""
import argparse
import glob
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile


# ---- a cross build ----------------------------------------------------------
# In a cross build (cross/aarch64-linux-gnu.txt) meson runs each test with
# MESON_EXE_WRAPPER set (qemu-aarch64-static). The runners start their
# programs through subprocess: a program that is an ELF file for another
# machine than this interpreter's goes through the wrapper too (the
# interpreter, shells and native tools run as they are). Natively the
# variable is unset and nothing changes.

def _elf_machine(path):
    try:
        with open(path, "rb") as f:
            head = f.read(20)
    except OSError:
        return None
    return head[18:20] if head[:4] == b"\x7fELF" and len(head) == 20 else None


def _cross_wrap():
    wrapper = shlex.split(os.environ.get("MESON_EXE_WRAPPER", ""))
    host = _elf_machine(os.path.realpath(sys.executable))
    if not wrapper or not host:
        return
    init = subprocess.Popen.__init__

    def wrapped(self, args, *a, **kw):
        if not kw.get("shell") and isinstance(args, (list, tuple)) and args:
            exe = os.fsdecode(args[0])
            if os.sep not in exe:
                exe = shutil.which(exe) or exe
            elif not os.path.isabs(exe) and kw.get("cwd"):
                exe = os.path.join(str(kw["cwd"]), exe)
            m = _elf_machine(exe)
            if m and m != host:
                args = [os.fsencode(x) for x in wrapper] + [os.fsencode(x) for x in args]
        init(self, args, *a, **kw)

    subprocess.Popen.__init__ = wrapped


_cross_wrap()


# ---- running a program ------------------------------------------------------

def clean_env(base=None):
    """base (default os.environ) less LD_PRELOAD and every CGSHIM_*: a case
    starts from the shim's defaults."""
    base = os.environ if base is None else base
    return {k: v for k, v in base.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}


def preload(lib):
    """LD_PRELOAD value for lib in an uninstrumented host (a Python
    interpreter): under the tsan setup the TSan runtime must come first
    (meson.build: CGSHIM_TEST_PRELOAD_FIRST). Instrumented programs link
    the runtime themselves and take lib alone."""
    first = os.environ.get("CGSHIM_TEST_PRELOAD_FIRST", "")
    return (first + ":" + lib) if first and lib else lib


def shim_env(base, lib, log, level="info", extra=None):
    """base plus what runs a program under the shim at level, its JSONL log
    to the file log (a %p in it: one per process), then extra on top."""
    env = dict(base)
    env.update({"LD_PRELOAD": lib, "CGSHIM_LOG_FORMAT": "jsonl", "CGSHIM_LOG_FILE": log, "CGSHIM_LOG": level})
    env.update(extra or {})
    return env


def read_log(paths):
    """Records of JSONL files (a path, a glob pattern or a list), in file
    order; lines that are not a JSON object (a torn last line, a text line)
    are skipped, a missing file reads as empty."""
    if isinstance(paths, str):
        paths = sorted(glob.glob(paths)) if any(c in paths for c in "*?[") else [paths]
    recs = []
    for f in paths:
        try:
            with open(f, encoding="utf-8", errors="replace") as fh:
                for line in fh:
                    line = line.strip()
                    if not line.startswith("{"):
                        continue
                    try:
                        obj = json.loads(line)
                    except ValueError:
                        continue
                    if isinstance(obj, dict):
                        recs.append(obj)
        except FileNotFoundError:
            pass
    return recs


def run(cmd, lib=None, level="info", extra=None, logdir=None, timeout=400, cwd=None, env=None):
    """Run cmd with env (default: the caller's environment) less LD_PRELOAD
    and CGSHIM_*; under the shim (lib given) at `level`, JSONL to a fresh
    folder (or logdir), then extra on top. Returns (CompletedProcess,
    records, log files)."""
    tmp = logdir or tempfile.mkdtemp(prefix="cgshim-test-")
    e = clean_env(env)
    if lib:
        e = shim_env(e, lib, os.path.join(tmp, "log-%p.jsonl"), level)
    e.update(extra or {})
    p = subprocess.run(cmd, env=e, capture_output=True, text=True, timeout=timeout, cwd=cwd)
    logs = sorted(glob.glob(os.path.join(tmp, "log-*.jsonl")))
    return p, read_log(logs), logs


# Python source that runs as a host on the driver through ctypes: the
# driver cu (libcuda.so.1), a context ctx, a stream s, ints dev and a
# handle g for the program's own use. A script is "import ctypes, ...\n" +
# PY_CUDA_STREAM + its own lines (its markers found in the whole text).
PY_CUDA_STREAM = """cu = ctypes.CDLL("libcuda.so.1")
dev = ctypes.c_int(); ctx = ctypes.c_void_p(); s = ctypes.c_void_p(); g = ctypes.c_void_p()
assert cu.cuInit(0) == 0
cu.cuDeviceGet(ctypes.byref(dev), 0)
cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev)
cu.cuCtxSetCurrent(ctx)
cu.cuStreamCreate(ctypes.byref(s), 1)
"""


# ---- record filters ---------------------------------------------------------

def ev(recs, kind, **kw):
    """Records of kind `kind` whose fields equal kw."""
    return [r for r in recs if r.get("ev") == kind and all(r.get(k) == v for k, v in kw.items())]


def calls(recs, prefix=None, **kw):
    """Call records whose api starts with prefix and whose fields equal kw."""
    return [r for r in recs if r.get("ev") == "call" and (not prefix or r.get("api", "").startswith(prefix))
            and all(r.get(k) == v for k, v in kw.items())]


def viol(recs, rule=None):
    """Violation records, of one rule when given."""
    return [r for r in recs if r.get("ev") == "violation" and (rule is None or r.get("rule") == rule)]


# ---- cases and the tally ----------------------------------------------------

class Skip(Exception):
    """A case that cannot run on this host (its reason the message): Tally
    prints it as SKIP and counts it neither passed nor failed."""


class Tally:
    """One line per check ("ok   what" / "FAIL what") or per case ("PASS
    name: detail" / "FAIL name: why"), then "N passed, N failed"."""

    def __init__(self, quiet_pass=False):
        self.results = []
        self.quiet_pass = quiet_pass

    def ok(self, name, detail=""):
        self.results.append(True)
        if not self.quiet_pass:
            print("PASS %s%s" % (name, (": " + detail) if detail else ""), flush=True)

    def fail(self, name, why=""):
        self.results.append(False)
        print("FAIL %s%s" % (name, (": " + why) if why else ""), flush=True)

    def check(self, cond, what, why=""):
        """One assertion: "ok   what", or "FAIL what[: why]". Returns cond
        as a bool, so a runner can go on only when it held."""
        self.results.append(bool(cond))
        if cond:
            if not self.quiet_pass:
                print("ok   " + what, flush=True)
        else:
            print("FAIL " + what + ((": " + why) if why else ""), flush=True)
        return bool(cond)

    def check_none(self, problem, what):
        """Passes when problem (a message) is None."""
        return self.check(problem is None, what, problem or "")

    def case(self, name, fn, *args):
        """Run fn(*args) as case name: its return value is the PASS detail;
        AssertionError its failure, any other exception too (named); Skip
        a "SKIP name: why" line, counted neither way."""
        try:
            detail = fn(*args)
            self.ok(name, "" if detail is None else str(detail))
            return True
        except Skip as e:
            print("SKIP %s: %s" % (name, e), flush=True)
        except AssertionError as e:
            self.fail(name, str(e))
        except Exception as e:  # the harness's own failure counts the same
            self.fail(name, "%s: %s" % (type(e).__name__, e))
        return False

    @property
    def passed(self):
        return sum(self.results)

    @property
    def failed(self):
        return len(self.results) - self.passed

    def summary(self):
        return "%d passed, %d failed" % (self.passed, self.failed)

    def finish(self, exit=False):
        """Print the closing line; return the exit status (or exit with it)."""
        print(self.summary(), flush=True)
        rc = 0 if self.failed == 0 else 1
        if exit:
            sys.exit(rc)
        return rc


# ---- a checker of one stand-in program --------------------------------------

def prog_args(cgshim=None):
    """The command line of a checker of one program on the stand-in
    (tests/rules/check_*.py): --prog, --standin-dir and --shim, all
    required, and, given cgshim (its help text), an optional --cgshim (the
    launcher). Returns the parsed arguments."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--prog", required=True)
    ap.add_argument("--standin-dir", required=True)
    ap.add_argument("--shim", required=True)
    if cgshim:
        ap.add_argument("--cgshim", help=cgshim)
    return ap.parse_args()


def prog_checker(cgshim=None):
    """prog_args(cgshim), a Tally and its check(name, ok, detail=""): one
    "ok   name" / "FAIL name: detail" line, the detail shown on a failure
    only. Returns (arguments, tally, check)."""
    t = Tally()

    def check(name, ok, detail=""):
        return t.check(ok, name, str(detail) if detail and not ok else "")

    return prog_args(cgshim), t, check
