"""The pytest plugin of cgshim (docs/ci.md): `pytest -p cgshim`.

- The pytest process runs under the shim: when it was not started with
  libcgshim.so preloaded, the plugin starts pytest again with it (once).
- Each test is labelled: its node id is pushed on the label stack of the
  pytest process and set as its process label for threads that push none
  (cgshim_label_push, cgshim_label_process, so records of the test's own CUDA
  calls carry it) and set as CGSHIM_LABEL for the processes it starts.
- After each test, the JSONL logs are read for error-level violation records
  carrying that label: the test fails (--cgshim=fail, the default) or
  passes with the findings in its report (--cgshim=mark).
- --cgshim-baseline B: findings B knows do not count (docs/ci.md).
- --cgshim-junit / --cgshim-sarif: `cgshim report`'s files at the end.
"""
import ctypes
import glob
import json
import os
import subprocess
import sys

import pytest

from ._paths import launcher, library
from .labels import joined_names, label_names

__all__ = ["pytest_addoption", "pytest_load_initial_conftests", "pytest_configure"]

_REEXEC = "_CGSHIM_PYTEST_REEXEC"  # set on the second start: never a loop


def pytest_addoption(parser):
    g = parser.getgroup("cgshim", "cgshim: CUDA-graph rules for each test")
    g.addoption("--cgshim", choices=("fail", "mark", "off"), default="fail",
                help="a test during which an error-level finding was recorded: fail it (default), "
                     "mark it (passes, the findings in its report) or off")
    g.addoption("--cgshim-baseline", metavar="FILE", help="known findings (cgshim report --write-baseline)")
    g.addoption("--cgshim-junit", metavar="FILE", help="write cgshim report --junit FILE at the end")
    g.addoption("--cgshim-sarif", metavar="FILE", help="write cgshim report --sarif FILE at the end")


def _preloaded():
    try:
        with open("/proc/self/maps") as f:
            return "libcgshim" in f.read()
    except OSError:
        return False


def _log_template():
    """The JSONL log template the shim writes to, set when there is none."""
    t = os.environ.get("CGSHIM_LOG_FILE")
    if not t:
        d = os.path.abspath("cgshim-logs")
        os.makedirs(d, exist_ok=True)
        t = os.path.join(d, "cgshim-%p.jsonl")
        os.environ["CGSHIM_LOG_FILE"] = t
        os.environ.setdefault("CGSHIM_LOG_FORMAT", "jsonl")
    return t


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config, parser, args):
    if early_config.getoption("cgshim", "fail") == "off":
        return
    _log_template()
    lib = library()
    if not lib or not os.path.exists(lib):
        sys.stderr.write("cgshim plugin: %s not found; tests run without the shim\n" % lib)
        return
    # The processes the tests start: preloaded, NVTX ranges as labels.
    if lib not in os.environ.get("LD_PRELOAD", ""):
        os.environ["LD_PRELOAD"] = lib + (":" + os.environ["LD_PRELOAD"] if os.environ.get("LD_PRELOAD") else "")
    os.environ.setdefault("NVTX_INJECTION64_PATH", lib)
    if _preloaded() or os.environ.get(_REEXEC):
        return
    # This process too: start pytest again with the shim preloaded, before
    # any conftest imports CUDA. Capturing has begun (fd 1 and 2 point at
    # pytest's files): give the terminal back first.
    os.environ[_REEXEC] = "1"
    capman = early_config.pluginmanager.getplugin("capturemanager")
    if capman:
        capman.suspend_global_capture(in_=True)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(sys.executable, [sys.executable] + sys.orig_argv[1:])


class _Logs:
    """New violation records of every log file matching the template."""

    def __init__(self, template):
        self.pattern = template.replace("%p", "*").replace("%r", "*")
        self.offsets = {}

    def mark(self):
        for p in glob.glob(self.pattern):
            try:
                self.offsets[p] = os.path.getsize(p)
            except OSError:
                pass

    def files(self):
        return sorted(glob.glob(self.pattern))

    def new_errors(self, label, ids=()):
        out = []
        for p in glob.glob(self.pattern):
            try:
                with open(p, "rb") as f:
                    f.seek(self.offsets.get(p, 0))
                    data = f.read()
            except OSError:
                continue
            for line in data.splitlines():
                if b'"violation"' not in line:
                    continue
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                labels = r.get("labels") or []
                if r.get("ev") == "violation" and r.get("severity") == "error" and any(
                        label_names(l, label, ids) for l in labels):
                    out.append(r)
        return out


class _Plugin:
    def __init__(self, config):
        self.config = config
        self.mode = config.getoption("cgshim")
        self.baseline = config.getoption("cgshim_baseline")
        self.logs = _Logs(_log_template())
        self.push = self.pop = self.proc = None
        self.ids = None
        try:
            dl = ctypes.CDLL(None)
            self.push, self.pop = dl.cgshim_label_push, dl.cgshim_label_pop
            self.push.argtypes, self.push.restype = [ctypes.c_char_p], ctypes.c_int
            self.pop.argtypes, self.pop.restype = [], ctypes.c_int
        except (AttributeError, OSError):
            pass  # no shim in this process: its children are still labelled
        try:
            # the label of threads that push none (a loader thread's
            # cuLibraryLoadData during a test): a shim without it still
            # labels the test's own thread
            self.proc = ctypes.CDLL(None).cgshim_label_process
            self.proc.argtypes, self.proc.restype = [ctypes.c_char_p], ctypes.c_int
        except (AttributeError, OSError):
            pass

    def _ids(self, item):
        """The session's test ids (a cut label names a test only when its
        prefix starts no other)."""
        if self.ids is None:
            self.ids = [i.nodeid for i in getattr(item.session, "items", None) or [item]]
        return self.ids

    def _new_findings(self, nodeid, raw, ids):
        """The findings of raw as `cgshim report` names them, minus those
        the baseline knows: [(rule, name, site, msg)]."""
        exe = launcher()
        if exe:
            argv = [exe, "report", "--json"] + (["--baseline", self.baseline] if self.baseline else [])
            p = subprocess.run(argv + self.logs.files(), capture_output=True, text=True)
            if p.returncode == 0:
                doc = json.loads(p.stdout)
                return [(f["rule"], f["name"], f["site"], f["msg"]) for f in doc.get("findings", [])
                        if f.get("severity") == "error" and f.get("baseline") != "unchanged"
                        and any(joined_names(l, nodeid, ids) for l in f.get("labels", []))]
            if self.baseline:
                raise pytest.UsageError("cgshim report --baseline %s failed: %s" % (self.baseline, p.stderr))
        return [(r.get("rule"), r.get("name"), (r.get("site") or ["?"])[0], r.get("msg")) for r in raw]

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        os.environ["CGSHIM_LABEL"] = item.nodeid
        if self.push:
            self.push(item.nodeid.encode())
        if self.proc:
            self.proc(item.nodeid.encode())
        self.logs.mark()
        try:
            yield
        finally:
            if self.proc:
                self.proc(None)
            if self.pop:
                self.pop()
            os.environ.pop("CGSHIM_LABEL", None)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        rep = outcome.get_result()
        if call.when == "setup":
            return
        # At the end of the call, then what teardown added: a test's own
        # findings fail the test itself, not its teardown.
        ids = self._ids(item)
        raw = self.logs.new_errors(item.nodeid, ids)
        self.logs.mark()
        found = self._new_findings(item.nodeid, raw, ids) if raw else []
        if not found:
            return
        text = "cgshim: %d error-level finding(s) during this test:\n" % len(found) + "\n".join(
            "  %s %s at %s\n    %s" % f for f in found)
        rep.sections.append(("cgshim findings", text))
        item.user_properties.append(("cgshim_findings", ";".join("%s at %s" % (f[0], f[2]) for f in found)))
        if self.mode == "fail":
            rep.outcome = "failed"
            rep.longrepr = text

    def pytest_sessionfinish(self, session):
        junit, sarif = self.config.getoption("cgshim_junit"), self.config.getoption("cgshim_sarif")
        exe = launcher()
        if not (junit or sarif) or not exe or not self.logs.files():
            return
        argv = [exe, "report"] + (["--junit", junit] if junit else []) + (["--sarif", sarif] if sarif else [])
        argv += (["--baseline", self.baseline] if self.baseline else []) + self.logs.files()
        subprocess.run(argv, stdout=subprocess.DEVNULL)


def pytest_configure(config):
    if config.getoption("cgshim") != "off":
        config.pluginmanager.register(_Plugin(config), "cgshim-plugin")
