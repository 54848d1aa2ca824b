#!/usr/bin/env python3
"""Tests of the cgshim launcher and `cgshim report` (meson suite 'tools').

usage: test_tools.py CASE [--cgshim EXE] [--child EXE] [--fake-lib SO]
                          [--lib LIBCGSHIM] [--standin-dir DIR]
                          [--config-def FILE] [--readme FILE]
                          [--programs EXE...] [--log FILE...]

Launcher cases run the tiny `child` program with a no-op preload library.
Report cases run real stand-in programs under the real shim
(LD_LIBRARY_PATH=standin_dir, CGSHIM_LOG=debug, jsonl) and check what
`cgshim report` makes of the logs; --log FILE... (development only) uses
given logs instead. Exit 77 means SKIP.
"""
import argparse
import collections
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SKIP = 77
A = None  # parsed arguments
TMP = None


class Fail(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Fail(msg)


def asan_env(env):
    """Under -Db_sanitize=address the preloaded library comes before the
    sanitizer runtime in the children; that order is intended here."""
    opts = env.get("ASAN_OPTIONS", "")
    if "verify_asan_link_order" not in opts:
        env["ASAN_OPTIONS"] = (opts + ":" if opts else "") + "verify_asan_link_order=0"
    return env


def run(argv, env=None, cwd=None, timeout=120, input=None):
    full = dict(os.environ)
    if env:
        full.update(env)
    asan_env(full)
    p = subprocess.run(argv, env=full, cwd=cwd, timeout=timeout, input=input,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace")
    return p.returncode, p.stdout, p.stderr


def cgshim(*args, **kw):
    return run([A.cgshim] + list(args), **kw)


def report_json(logs):
    rc, out, err = cgshim("report", "--json", *logs)
    check(rc == 0, "report --json exit %d\n%s" % (rc, err))
    return json.loads(out)


def read_records(paths):
    """Independent reading of the logs: every well-formed v1 object."""
    recs = []
    for p in paths:
        with open(p, errors="replace") as f:
            for line in f:
                try:
                    r = json.loads(line)
                except ValueError:
                    continue
                if isinstance(r, dict) and r.get("v") == 1 and isinstance(r.get("ev"), str):
                    recs.append(r)
    return recs


# ---------------------------------------------------------------- launcher

def launcher_env(extra=None):
    env = {"CGSHIM_LIB": A.fake_lib}
    # A clean slate: no CGSHIM_* or LD_PRELOAD from the caller.
    for k in list(os.environ):
        if k.startswith("CGSHIM_") or k == "LD_PRELOAD":
            os.environ.pop(k)
    if extra:
        env.update(extra)
    return env


def child_env(out):
    return dict(l.split("=", 1) for l in out.splitlines() if "=" in l)


def case_exit_status():
    env = launcher_env()
    for code in (0, 3, 42):
        rc, _, err = cgshim("--stderr", "--", A.child, "exit", str(code), env=env)
        check(rc == code, "child exit %d gave %d: %s" % (code, rc, err))
    for sig in (signal.SIGTERM, signal.SIGKILL, signal.SIGSEGV):
        rc, _, err = cgshim("--stderr", A.child, "kill", str(int(sig)), env=env)
        check(rc == 128 + sig, "child killed by %d gave %d: %s" % (sig, rc, err))
    rc, _, err = cgshim("--stderr", "--", os.path.join(TMP, "no-such-program"), env=env)
    check(rc == 127, "missing command gave %d" % rc)
    check("no-such-program" in err, "no message for a missing command: %r" % err)
    rc, _, err = cgshim("--stderr", env=env)
    check(rc == 1, "no command gave %d" % rc)


def case_signals():
    env = launcher_env()
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        full = asan_env(dict(os.environ))
        full.update(env)
        # A new session: the child must get the signal from the launcher
        # (forwarding), not from a terminal's process group.
        p = subprocess.Popen([A.cgshim, "--stderr", "--", A.child, "wait"], env=full,
                             stdout=subprocess.PIPE, text=True, start_new_session=True)
        line = p.stdout.readline()
        check(line.strip() == "ready", "child did not start: %r" % line)
        p.send_signal(sig)
        try:
            rc = p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            p.kill()
            raise Fail("signal %d was not forwarded" % sig)
        # SIGINT is ignored by the child only if the launcher was started
        # with it ignored; here it was not.
        check(rc == 128 + sig, "signal %d forwarded: exit %d" % (sig, rc))


def case_preload():
    env = launcher_env({"LD_PRELOAD": "libc.so.6"})
    rc, out, err = cgshim("--stderr", A.child, "env", env=env)
    check(rc == 0, "child env failed: %s" % err)
    pre = re.split(r"[: ]+", child_env(out).get("LD_PRELOAD", ""))
    check(pre == [A.fake_lib, "libc.so.6"], "LD_PRELOAD not prepended: %r" % pre)
    env = launcher_env({"LD_PRELOAD": "libc.so.6:libm.so.6"})
    rc, out, err = cgshim("--stderr", A.child, "env", env=env)
    check(child_env(out).get("LD_PRELOAD") == A.fake_lib + ":libc.so.6:libm.so.6",
          "colon list not kept: %r" % child_env(out).get("LD_PRELOAD"))
    env = launcher_env()
    rc, out, err = cgshim("--stderr", A.child, "env", env=env)
    check(child_env(out).get("LD_PRELOAD") == A.fake_lib, "LD_PRELOAD: %r" % out)
    # Without CGSHIM_LIB the build tree's library is found (or the install path).
    if A.lib:
        env = launcher_env()
        del env["CGSHIM_LIB"]
        os.environ.pop("CGSHIM_LIB", None)
        rc, out, err = cgshim("--stderr", A.child, "env", env=env)
        first = re.split(r"[: ]+", child_env(out).get("LD_PRELOAD", ""))[0]
        check(rc == 0 and first and os.path.samefile(first, A.lib),
              "build-tree lookup gave %r, want %s (%s)" % (first, A.lib, err))


def config_rows():
    text = open(A.config_def).read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    rows = []
    for m in re.finditer(r'CFG\(\s*(\w+)\s*,\s*(\w+)\s*,\s*(\w+)\s*,\s*"([^"]*)"\s*,\s*"([^"]*)"\s*,\s*((?:"[^"]*"\s*)+)\)', text):
        doc = "".join(re.findall(r'"([^"]*)"', m.group(6)))
        rows.append(dict(field=m.group(1), name=m.group(2), kind=m.group(3), default=m.group(4),
                         choices=m.group(5), doc=doc))
    check(rows, "no CFG rows parsed from %s" % A.config_def)
    return rows


def option_of(row):
    return "--" + row["name"][len("CGSHIM_"):].lower().replace("_", "-")


def example_value(row):
    if row["kind"] == "BOOL":
        return "1"
    if row["kind"] == "INT":
        return row["choices"].split("..")[1]
    if row["kind"] == "ENUM":
        return row["choices"].split("|")[-1]
    return "x,y"


def case_options():
    rows = config_rows()
    rc, out, _ = cgshim("--help")
    check(rc == 0, "--help exit %d" % rc)
    for r in rows:
        check(option_of(r) in out and r["name"] in out and r["doc"] in out,
              "--help lacks %s / %s / its doc" % (option_of(r), r["name"]))
    # Every row becomes an option that sets its variable.
    args = []
    for r in rows:
        args.append("%s=%s" % (option_of(r), example_value(r)))
    env = launcher_env()
    rc, out, err = cgshim(*(args + [A.child, "env"]), env=env)
    check(rc == 0, "options rejected: %s" % err)
    got = child_env(out)
    for r in rows:
        check(got.get(r["name"]) == example_value(r),
              "%s=%s did not set %s: %r" % (option_of(r), example_value(r), r["name"], got.get(r["name"])))
    # BOOL alone means 1; every documented spelling is accepted; the
    # separate-argument spelling works too.
    for r in rows:
        if r["kind"] == "BOOL":
            for word in ("0", "1", "no", "yes", "false", "true", "off", "on", "ON", "False"):
                rc, out, err = cgshim("%s=%s" % (option_of(r), word), A.child, "env", env=env)
                check(rc == 0 and child_env(out).get(r["name"]) == word,
                      "%s=%s (a documented bool spelling) refused: %s" % (option_of(r), word, err))
            rc, out, _ = cgshim(option_of(r), A.child, "env", env=env)
            check(child_env(out).get(r["name"]) == "1", "%s alone != 1" % option_of(r))
        if r["kind"] == "ENUM":
            rc, out, _ = cgshim(option_of(r), r["choices"].split("|")[0], A.child, "env", env=env)
            check(child_env(out).get(r["name"]) == r["choices"].split("|")[0],
                  "%s VALUE not accepted" % option_of(r))
    # Bad values are usage errors, before anything runs.
    for r in rows:
        bad = {"BOOL": "maybe", "ENUM": "no-such-choice", "INT": "12x"}.get(r["kind"])
        if bad:
            rc, out, err = cgshim("%s=%s" % (option_of(r), bad), A.child, "exit", "5", env=env)
            check(rc == 1 and r["name"] in err, "%s=%s gave %d: %s" % (option_of(r), bad, rc, err))
        if r["kind"] == "INT":
            hi = int(r["choices"].split("..")[1])
            rc, _, _ = cgshim("%s=%d" % (option_of(r), hi + 1), A.child, "exit", "5", env=env)
            check(rc == 1, "%s above its range accepted" % option_of(r))
    rc, _, _ = cgshim("--no-such-option", A.child, "exit", "5", env=env)
    check(rc == 1, "unknown option gave %d" % rc)
    # A value is never taken from "--": the level is missing, the child not run.
    rc, out, err = cgshim("--log", "--", A.child, "exit", "5", env=env)
    check(rc == 1 and "--log needs a value" in err, "--log -- cmd gave %d: %r" % (rc, err))
    rc, out, err = cgshim("--log", env=env)
    check(rc == 1 and "needs a value" in err, "--log at the end gave %d: %r" % (rc, err))
    # Options stop at the command: its own options are its own.
    rc, out, _ = cgshim("--log=info", A.child, "env", "--log=debug", env=env)
    check(rc == 0 and child_env(out).get("CGSHIM_LOG") == "info", "command's options read: %r" % out)
    print("launcher: --log -- refused, options stop at the command")
    rc, out, _ = cgshim("--version")
    check(rc == 0 and out.startswith("cgshim "), "--version: %r" % out)


def expected_env_table():
    lines = ["| Variable | Type | Default | Values | Meaning |", "|---|---|---|---|---|"]
    for r in config_rows():
        if r["kind"] == "ENUM":
            vals = ", ".join("`%s`" % c for c in r["choices"].split("|"))
        elif r["kind"] == "INT":
            vals = "`%s`" % r["choices"]
        elif r["kind"] == "BOOL":
            vals = "`0`, `1`, `no`, `yes`, `false`, `true`, `off`, `on`"
        else:
            vals = ""
        default = "`%s`" % r["default"] if r["default"] else ""
        lines.append("| `%s` | %s | %s | %s | %s |" % (r["name"], r["kind"].lower(), default, vals,
                                                       r["doc"].replace("|", "\\|")))
    return "\n".join(lines) + "\n"


def case_list_env():
    rc, out, _ = cgshim("--list-env")
    check(rc == 0, "--list-env exit %d" % rc)
    check(out == expected_env_table(), "--list-env differs from config.def:\n%s\nwant:\n%s"
          % (out, expected_env_table()))


def case_readme():
    rc, out, _ = cgshim("--list-env")
    check(rc == 0, "--list-env exit %d" % rc)
    text = open(A.readme).read()
    m = re.search(r"<!-- env-table-begin -->\n(.*?)<!-- env-table-end -->", text, re.S)
    check(m, "%s lacks the env-table markers" % A.readme)
    block = m.group(1).strip("\n") + "\n"
    check(block == out, "README env table is stale: replace the block between the markers "
          "with `cgshim --list-env` output.\nREADME:\n%s\ncgshim --list-env:\n%s" % (block, out))


def case_default_log():
    env = launcher_env()
    d = tempfile.mkdtemp(dir=TMP)
    rc, out, err = cgshim(A.child, "env", env=env, cwd=d)
    got = child_env(out)
    check(got.get("CGSHIM_LOG_FILE") == "cgshim-%p.jsonl" and got.get("CGSHIM_LOG_FORMAT") == "jsonl",
          "default log variables: %r" % got)
    check("no log file" in err, "missing no-log notice: %r" % err)
    rc, out, err = cgshim(A.child, "writelog", env=env, cwd=d)
    check(rc == 0, "writelog: %s" % err)
    pid = out.strip()
    check("cgshim: log written to cgshim-%s.jsonl" % pid in err, "log not listed: %r" % err)
    rc, out, err = cgshim("--stderr", A.child, "env", env=env, cwd=d)
    check("CGSHIM_LOG_FILE" not in child_env(out), "--stderr still set a log file")
    check("log written" not in err, "--stderr listed a log")
    rc, out, err = cgshim("--log-file=mine-%p.log", A.child, "writelog", env=env, cwd=d)
    check("log written to mine-%s.log" % out.strip() in err, "--log-file not listed: %r" % err)
    check(child_env(cgshim("--log-file=a.log", A.child, "env", env=env)[1]).get("CGSHIM_LOG_FORMAT") is None,
          "--log-file alone forced a format")
    check(child_env(cgshim("--log-file=a-%p.jsonl", A.child, "env", env=env)[1]).get("CGSHIM_LOG_FORMAT") == "jsonl",
          "--log-file=*.jsonl did not select the jsonl format")
    rc, out, err = cgshim(A.child, "env", env=dict(env, CGSHIM_LOG_FILE="/dev/null"), cwd=d)
    check(child_env(out).get("CGSHIM_LOG_FILE") == "/dev/null", "user's CGSHIM_LOG_FILE overridden")


# ---------------------------------------------------------- real logs

def program_logs(level="debug"):
    """Run every stand-in program under the shim; return the logs written."""
    if A.log:
        return list(A.log)
    if not (A.lib and A.standin_dir and A.programs):
        print("SKIP: needs --lib, --standin-dir and --programs (or --log)")
        sys.exit(SKIP)
    d = tempfile.mkdtemp(prefix="logs-%s-" % level, dir=TMP)
    for prog in A.programs:
        name = os.path.basename(prog)
        env = {"LD_LIBRARY_PATH": A.standin_dir + ((":" + os.environ["LD_LIBRARY_PATH"])
                                                   if os.environ.get("LD_LIBRARY_PATH") else ""),
               "LD_PRELOAD": A.lib, "CGSHIM_LOG": level, "CGSHIM_LOG_FORMAT": "jsonl",
               "CGSHIM_LOG_FILE": os.path.join(d, name + "-%p.jsonl")}
        try:
            rc, _, err = run([prog], env=env, cwd=d, timeout=60)
        except subprocess.TimeoutExpired:
            print("note: %s timed out" % name)
            continue
        print("ran %s: exit %d" % (name, rc))
    logs = sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(".jsonl"))
    check(logs, "no program wrote a log in %s" % d)
    return logs


def tally(recs):
    """What the report should count, computed here from the raw records."""
    t = collections.Counter()
    launch_cur = {}
    t["processes"] = len({r.get("pid") for r in recs})
    for r in recs:
        ev, api, rc = r["ev"], r.get("api") or "", r.get("rc", 0)
        if ev == "capture":
            t["captures"] += 1
            t["captures_invalidated"] += rc != 0
        elif ev == "call":
            if re.match(r"cu(da)?GraphInstantiate", api) and rc == 0:
                t["execs"] += 1
            if re.match(r"cu(da)?GraphExecUpdate", api):
                t["updates"] += 1
                t["updates_failed"] += rc != 0
            if re.match(r"cu(da)?GraphLaunch", api) and rc == 0:
                t["trace_launches"] += 1
            if rc != 0:
                t["failures"] += 1
        elif ev == "launches":
            t["have_launches"] = 1
            key = (r.get("pid"), r.get("exec"))
            if r.get("reason") == "every":
                launch_cur[key] = r.get("count", 0)
            else:
                t["launches"] += r.get("count", 0)
                launch_cur.pop(key, None)
        elif ev in ("rewrite", "leak", "violation"):
            t[ev + "s"] += 1
    t["launches"] += sum(launch_cur.values())
    if not t["have_launches"]:
        t["launches"] = t["trace_launches"]
    return t


def case_report_counts():
    logs = program_logs("debug")
    recs = read_records(logs)
    doc = report_json(logs)
    s = doc["summary"]
    t = tally(recs)
    check(s["records"] == len([r for r in recs]), "records %d != %d" % (s["records"], len(recs)))
    for k in ("processes", "captures", "captures_invalidated", "execs", "launches", "updates",
              "updates_failed", "failures", "rewrites", "leaks", "violations"):
        check(s[k] == t[k], "summary %s = %d, the log holds %d" % (k, s[k], t[k]))
    # rows identical but for capture and graph come folded, with a count
    # (issue 35: memory flat in the number of captures); past the table's
    # rows the rest is counted by site and batch size
    ncap = sum(r["count"] for r in doc["captures"]) + sum(r["count"] for r in doc["captures_rest"]) + \
        doc["captures_rest_other"]
    check(ncap == s["captures"], "capture rows count %d captures, the summary %d" % (ncap, s["captures"]))
    check(doc["capture_totals"]["alloc_bytes"] == sum(r.get("alloc_bytes", 0) for r in recs if r["ev"] == "capture"),
          "capture alloc_bytes total")
    check(sum(p["allocs"] for p in doc["pools"]) >= len([r for r in recs if r["ev"] == "alloc"]),
          "pool table misses allocations")
    # The shim's own exit summaries count what each program did.
    shim = collections.Counter()
    for r in recs:
        if r["ev"] == "summary":
            for k, v in r.items():
                if isinstance(v, int) and k not in ("v", "seq", "ts", "pid", "tid"):
                    shim[k] += v
    if any(r["ev"] == "summary" for r in recs):
        for mine, theirs in (("captures", "captures"), ("captures_invalidated", "captures_invalidated"),
                             ("execs", "execs"), ("launches", "launches"), ("updates", "updates"),
                             ("updates_failed", "update_failures"), ("rewrites", "rewrites"),
                             ("violations", "violations")):
            if theirs in shim:
                check(s[mine] == shim[theirs], "report %s = %d but the shim's exit summaries say %d"
                      % (mine, s[mine], shim[theirs]))
    check(s["captures"] > 0 or A.log, "the programs made no capture: the test proves nothing")
    # Options anywhere: after the logs, --json is still an option.
    rc, out, err = cgshim("report", *(list(logs) + ["--json"]))
    check(rc == 0 and json.loads(out)["summary"] == s, "report LOG --json: %d %s" % (rc, err))
    rc, out, err = cgshim("report", logs[0], "--no-such-option")
    check(rc == 1 and "unknown" in err, "report LOG --no-such-option gave %d: %s" % (rc, err))
    print("report: options after the logs are options")
    # Text output carries the same numbers.
    rc, out, err = cgshim("report", *logs)
    check(rc == 0, "text report exit %d: %s" % (rc, err))
    check(re.search(r"captures\s+%d \(%d ok" % (s["captures"], s["captures_ok"]), out), "text captures line")
    check(re.search(r"launches\s+%d" % s["launches"], out), "text launches line")
    check(re.search(r"executables\s+%d" % s["execs"], out), "text executables line")


def case_report_trace():
    """At trace level launches can also be counted from the call records."""
    logs = program_logs("trace")
    s = report_json(logs)["summary"]
    stripped = os.path.join(TMP, "no-launches.jsonl")
    with open(stripped, "w") as out:
        for p in logs:
            for line in open(p, errors="replace"):
                try:
                    # without launches records, nor the exit summaries
                    # (whose counts the report would take instead)
                    if json.loads(line).get("ev") in ("launches", "summary"):
                        continue
                except ValueError:
                    pass
                out.write(line)
    s2 = report_json([stripped])["summary"]
    check(s2["launches_from"] in ("trace", "none"), "launches_from %r" % s2["launches_from"])
    check(s2["launches"] == s["launches"], "trace-level launches %d != launches records %d"
          % (s2["launches"], s["launches"]))


def damaged_copy(src, dst):
    lines = open(src, errors="replace").read().splitlines(True)
    check(len(lines) >= 3, "log %s too short" % src)
    junk = ["this is not json\n", "{\"v\":1,\"ev\":\n", "[1,2,3]\n", "\n", "\"just a string\"\n",
            json.dumps({"v": 99, "ev": "call", "seq": 1, "ts": 1, "pid": 1, "tid": 1, "api": "x"}) + "\n",
            json.dumps({"v": 99, "ev": "capture", "seq": 2, "ts": 2, "pid": 1, "tid": 1}) + "\n",
            json.dumps({"v": 1, "ev": "from-the-future", "seq": 3, "ts": 3, "pid": 1, "tid": 1}) + "\n",
            json.dumps({"v": 1, "seq": 4, "ts": 4, "pid": 1}) + "\n",
            json.dumps({"v": 1, "ev": "node", "seq": 5, "ts": 5, "pid": 1, "graph": 7, "deps": "x", "index": "y"}) + "\n",
            json.dumps({"v": 1, "ev": "launches", "seq": 6, "ts": 6, "pid": 1, "count": "many"}) + "\n",
            json.dumps({"v": 1, "ev": "violation", "seq": 7, "ts": 7, "pid": 1, "site": 5, "rule": 3}) + "\n",
            "\x00\x01\x02 binary\n"]
    out = []
    step = max(1, len(lines) // len(junk))
    for i, l in enumerate(lines):
        if i % step == 1 and junk:
            out.append(junk.pop(0))
        out.append(l)
    out.extend(junk)
    out.append(lines[-1][: len(lines[-1]) // 2])  # a record cut mid-line, no newline
    with open(dst, "w") as f:
        f.writelines(out)
    return len(out)


def case_report_robust():
    logs = program_logs("debug")
    src = max(logs, key=os.path.getsize)
    dmg = os.path.join(TMP, "damaged.jsonl")
    nlines = damaged_copy(src, dmg)
    base = report_json([src])["summary"]
    for mode in ([], ["--json"]):
        rc, out, err = cgshim("report", *(mode + [dmg]))
        check(rc == 0, "damaged log: exit %d\n%s" % (rc, err))
        check(re.search(r"damaged\.jsonl:\d+: ", err), "no FILE:LINE message: %r" % err)
        check(err.count("not supported") == 1, "want one warning for v=99 records: %r" % err)
        check("damaged.jsonl:%d: truncated last line" % nlines in err, "cut last line not reported: %r" % err)
    # The junk holds no capture and no instantiate: those counts are the clean log's.
    doc = json.loads(cgshim("report", "--json", dmg)[1])
    check(doc["summary"]["captures"] == base["captures"], "damaged captures %d != %d"
          % (doc["summary"]["captures"], base["captures"]))
    check(doc["summary"]["execs"] == base["execs"], "damaged execs")
    check(doc["skipped"]["newer_version"] == 2, "newer_version %r" % doc["skipped"])
    for extra in (["--perfetto", os.path.join(TMP, "dmg.json")], ["--dot", "first"], ["--dot", "0xdeadbeef"]):
        rc, _, err = cgshim("report", *(extra + [dmg]))
        check(rc in (0, 2) and rc < 128 and "Sanitizer" not in err, "%s on damaged log: %d %s" % (extra, rc, err))
    # Nothing usable: exit 2. Usage errors: exit 1.
    garbage = os.path.join(TMP, "garbage.jsonl")
    with open(garbage, "w") as f:
        f.write("garbage\n{\"v\":99,\"ev\":\"call\",\"ts\":1,\"pid\":1}\n[]\n{\"half\":")
    empty = os.path.join(TMP, "empty.jsonl")
    open(empty, "w").close()
    check(cgshim("report", garbage)[0] == 2, "all-garbage log should exit 2")
    check(cgshim("report", empty)[0] == 2, "empty log should exit 2")
    check(cgshim("report", os.path.join(TMP, "missing.jsonl"))[0] == 2, "missing log should exit 2")
    rc, _, err = cgshim("report", os.path.join(TMP, "missing.jsonl"), src)
    check(rc == 0 and "missing.jsonl" in err, "missing + good log: %d %s" % (rc, err))
    check(cgshim("report")[0] == 1, "no file: want usage error 1")
    check(cgshim("report", "--bogus", src)[0] == 1, "bad option: want usage error 1")
    vg = shutil.which("valgrind")
    with open(A.cgshim, "rb") as f:
        data = f.read()
    sanitized = b"__asan_init" in data or b"__ubsan_handle" in data or b"__tsan_init" in data
    if vg and not sanitized:  # a sanitizer build checks itself
        rc, _, err = run([vg, "-q", "--error-exitcode=99", "--leak-check=full",
                          "--errors-for-leak-kinds=definite", A.cgshim, "report", "--json", dmg, garbage],
                         timeout=600)
        check(rc == 0, "valgrind: exit %d\n%s" % (rc, err[-4000:]))


def case_report_perfetto():
    logs = program_logs("trace")
    recs = read_records(logs)
    out = os.path.join(TMP, "trace.json")
    rc, _, err = cgshim("report", "--perfetto", out, *logs)
    check(rc == 0, "--perfetto exit %d: %s" % (rc, err))
    with open(out) as f:
        doc = json.load(f)
    ev = doc["traceEvents"]
    check(doc.get("displayTimeUnit") == "ns", "displayTimeUnit")
    check(ev, "no events")
    for e in ev:
        for k in ("ph", "ts", "pid", "tid", "name"):
            check(k in e, "event without %s: %r" % (k, e))
        check(e["ph"] in ("X", "i", "M", "C"), "unexpected ph %r" % e)
        check(isinstance(e["ts"], (int, float)) and e["ts"] >= 0, "bad ts %r" % e)
        if e["ph"] == "X":
            check(isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0, "X without dur %r" % e)
    pids = {r["pid"] for r in recs}
    named = {e["pid"] for e in ev if e["ph"] == "M" and e["name"] == "process_name"}
    check(pids == named, "process_name for %r, log pids %r" % (named, pids))
    tracks = {(e["pid"], e["tid"]) for e in ev if e["ph"] in ("X", "i")}
    tnamed = {(e["pid"], e["tid"]) for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
    check(tracks <= tnamed, "threads without thread_name: %r" % (tracks - tnamed))
    ncap = len([r for r in recs if r["ev"] == "capture"])
    check(len([e for e in ev if e["ph"] == "X" and e.get("cat") == "capture"]) == ncap, "capture events")
    nviol = len([r for r in recs if r["ev"] == "violation"])
    check(len([e for e in ev if e["ph"] == "i" and e.get("cat") == "violation"]) == nviol, "violation events")
    ncalls = len([r for r in recs if r["ev"] == "call" and isinstance(r.get("dur_ns"), int)])
    check(len([e for e in ev if e["ph"] == "X" and e.get("cat") in ("call", "launch")]) >= ncalls, "call events")
    nfail = len([r for r in recs if r["ev"] == "call" and r.get("rc", 0) != 0])
    check(len([e for e in ev if e["ph"] == "i" and e.get("cat") == "failure"]) == nfail, "failure events")


def case_report_dot():
    logs = program_logs("debug")
    recs = read_records(logs)
    allocs = [r for r in recs if r["ev"] == "alloc" and r.get("graph")]
    if not allocs:
        print("SKIP: no program made a graph allocation")
        sys.exit(SKIP)
    g, pid = allocs[0]["graph"], allocs[0]["pid"]
    mine = [r for r in allocs if r["graph"] == g and r["pid"] == pid]
    nodes = [r for r in recs if r["ev"] == "node" and r.get("graph") == g and r["pid"] == pid]
    # That process's log only: another program may have had a graph at the
    # same address (sanitizer heaps are not randomised).
    logs = [p for p in logs if any(r["pid"] == pid for r in read_records([p]))]
    rc, out, err = cgshim("report", "--dot", g, *logs)
    check(rc == 0, "--dot exit %d: %s" % (rc, err))
    check(out.startswith("digraph"), "not DOT: %r" % out[:80])
    drawn = re.findall(r'^\s*(\w+) \[label="mem_alloc\\n', out, re.M)
    want = len([n for n in nodes if n.get("type") == "mem_alloc"]) if nodes else len(mine)
    check(len(drawn) == want, "%d mem_alloc nodes drawn, the log has %d" % (len(drawn), want))
    for a in mine:
        check(a["dptr"] in out, "allocation %s missing from the drawing" % a["dptr"])
        check(a.get("pool", "") in out, "pool %s missing from the legend" % a.get("pool"))
    check("cluster_legend" in out, "no pool legend")
    if nodes:
        check(len(re.findall(r"^\s*n\d+ \[label=", out, re.M)) == len(nodes), "node count")
    # Fallback without node records.
    flat = os.path.join(TMP, "no-nodes.jsonl")
    with open(flat, "w") as f:
        for p in logs:
            for line in open(p, errors="replace"):
                if '"ev":"node"' not in line.replace(" ", ""):
                    f.write(line)
    rc, out, err = cgshim("report", "--dot", g, flat)
    check(rc == 0 and "no node records" in err, "fallback: %d %s" % (rc, err))
    check(len(re.findall(r'\[label="mem_alloc\\n', out)) == len(mine), "fallback alloc count")
    if shutil.which("dot"):
        svg = os.path.join(TMP, "g.svg")
        rc, _, err = cgshim("report", "--dot", "first", "-o", svg, *logs)
        check(rc == 0 and open(svg).read().lstrip().startswith("<?xml"), "svg: %d %s" % (rc, err))
    rc, _, _ = cgshim("report", "--dot", "0xnosuchgraph", *logs)
    check(rc == 2, "unknown graph: want exit 2, got %d" % rc)


def real_setup():
    """What a case on a real program under the real shim starts with: a
    skip (exit SKIP) without --lib, --standin-dir and --programs; this
    environment without LD_PRELOAD and CGSHIM_*; a fresh folder, returned."""
    if not (A.lib and A.standin_dir and A.programs):
        print("SKIP: needs --lib, --standin-dir and --programs")
        sys.exit(SKIP)
    for k in list(os.environ):
        if k.startswith("CGSHIM_") or k == "LD_PRELOAD":
            os.environ.pop(k)
    return tempfile.mkdtemp(dir=TMP)


def demo_log(d, **extra):
    """demo_capture run under the shim in folder d, its JSONL log d/demo.jsonl
    (extra: more of its environment); returns the log's path."""
    prog = [p for p in A.programs if os.path.basename(p) == "demo_capture"]
    log = os.path.join(d, "demo.jsonl")
    run(prog, env=dict({"LD_LIBRARY_PATH": A.standin_dir, "LD_PRELOAD": A.lib, "CGSHIM_LOG_FILE": log}, **extra),
        cwd=d, timeout=60)
    return log


def case_launcher_shim():
    """The launcher around a real program and the real shim: a log appears."""
    d = real_setup()
    env = {"CGSHIM_LIB": A.lib, "LD_LIBRARY_PATH": A.standin_dir}
    prog = A.programs[0]
    rc_plain, _, _ = run([prog], env={"LD_LIBRARY_PATH": A.standin_dir}, cwd=d, timeout=60)
    # another run's log written a moment before this one (issue 35): new
    # enough for the launcher's file-time filter, but not its run's
    with open(os.path.join(d, "cgshim-4194300.jsonl"), "w") as f:
        f.write(json.dumps({"v": 1, "ev": "start", "seq": 1, "ts": 1, "pid": 4194300, "tid": 4194300,
                            "run": "/tmp/cgshim-tally-other"}) + "\n")
    rc, out, err = cgshim("--log=debug", "--", prog, env=env, cwd=d, timeout=60)
    check(rc == rc_plain, "exit %d under cgshim, %d without" % (rc, rc_plain))
    m = re.search(r"cgshim: log written to (.*)", err)
    check(m, "no 'log written' line: %r" % err)
    files = [f.strip() for f in m.group(1).split(",")]
    check("cgshim-4194300.jsonl" not in files, "the launcher lists another run's log: %r" % files)
    for f in files:
        check(re.fullmatch(r"cgshim-\d+\.jsonl", f), "log name %r" % f)
        recs = read_records([os.path.join(d, f)])
        check(recs and recs[0]["ev"] == "start", "%s does not start with a start record" % f)
        check(all(r["pid"] == int(f[7:-6]) for r in recs), "%s holds another pid's records" % f)
    rc, _, err = cgshim("report", *[os.path.join(d, f) for f in files])
    check(rc == 0, "report of the launcher's log: %d %s" % (rc, err))


def case_report_captures_bounded():
    """Issue 35: the capture table in bounded memory. 1,300 captures whose
    figures all differ (dur_ns) over 2 sites and 3 batch sizes, then 500
    of one batch size alike at each site: the table keeps 1,000 rows (the
    first seen), the 800 others (new figures past the table's rows) are
    counted per site and batch size, 8 rows. Every capture is counted
    once: the rows' counts add up to the summary's."""
    log = os.path.join(TMP, "captures.jsonl")
    seq = [0]

    def rec(f, ev, **kw):
        seq[0] += 1
        f.write(json.dumps(dict({"v": 1, "ev": ev, "seq": seq[0], "ts": 1000 * seq[0], "pid": 5, "tid": 5}, **kw))
                + "\n")
    with open(log, "w") as f:
        rec(f, "start", exe="/x", lib="cgshim")
        for i in range(1, 1801):
            same = i > 1300
            rec(f, "capture", capture=i, stream="0x10", mode="global", begin_tid=5, graph="0x%x" % (0x1000 + i),
                rc=0, dur_ns=7 if same else 100 + i, alloc_nodes=1, alloc_bytes=(1 + i % 3) << 20 if not same else 1,
                malloc_bytes=0, site=["app+0x%x" % (0x10 + i % 2)])
    doc = report_json([log])
    caps, rest = doc["captures"], doc["captures_rest"]
    check(doc["summary"]["captures"] == 1800, "summary captures %d" % doc["summary"]["captures"])
    check(len(caps) == 1000, "table rows %d, want the first 1000" % len(caps))
    check([r["capture"] for r in caps[:3]] == [1, 2, 3], "rows in log order: %r" % [r["capture"] for r in caps[:3]])
    check(sum(r["count"] for r in caps) == 1000, "rows stand for %d captures" % sum(r["count"] for r in caps))
    check(len(rest) == 8 and sum(r["count"] for r in rest) == 800 and doc["captures_rest_other"] == 0,
          "rest: %d rows, %d captures, want 8 (2 sites x 4 sizes) and 800: %r"
          % (len(rest), sum(r["count"] for r in rest), rest[:2]))
    rc, out, err = cgshim("report", log)
    check(rc == 0 and "and 800 more capture(s)" in out, "text: the rest not named\n" + out[-1500:])
    check(len(out.splitlines()) < 1100, "text: %d lines" % len(out.splitlines()))
    print("1800 captures: 1000 rows, 800 in %d rest rows by site and batch size" % len(rest))


def case_report_int64():
    """Issue 12.12: ts and dur_ns are whatever int64 a file holds; the report
    must not overflow on them (run with a -fsanitize=signed-integer-overflow
    build of the report, which traps)."""
    log = os.path.join(TMP, "extreme.jsonl")
    lo, hi = -(1 << 63), (1 << 63) - 1
    recs = [
        {"v": 1, "ev": "start", "seq": 1, "ts": lo, "pid": 1, "tid": 1, "exe": "/x"},
        {"v": 1, "ev": "call", "seq": 2, "ts": hi, "pid": 1, "tid": 1, "api": "cuGraphLaunch", "rc": 0, "dur_ns": lo},
        {"v": 1, "ev": "call", "seq": 3, "ts": lo, "pid": 1, "tid": 1, "api": "cuGraphLaunch", "rc": 1,
         "err": "CUDA_ERROR_INVALID_VALUE", "dur_ns": hi},
        {"v": 1, "ev": "capture", "seq": 4, "ts": lo, "pid": 1, "tid": 1, "capture": 1, "dur_ns": hi},
        {"v": 1, "ev": "graphmem", "seq": 5, "ts": hi, "pid": 1, "tid": 1, "dev": 0, "used": 0,
         "used_high": 0, "reserved": lo, "reserved_high": 0, "when": "exit"},
        {"v": 1, "ev": "leak", "seq": 6, "ts": hi, "pid": 1, "tid": 1, "dptr": "0x1", "size": lo},
    ]
    with open(log, "w") as f:
        for r in recs:
            f.write(json.dumps(r) + "\n")
    for extra in ([], ["--json"], ["--perfetto", os.path.join(TMP, "p.json")]):
        rc, out, err = cgshim("report", *(extra + [log]))
        check(rc in (0, 2) and "runtime error" not in err,
              "report %s on extreme ts/dur_ns: exit %d\n%s" % (" ".join(extra), rc, err[-2000:]))


def case_report_formats():
    """Whatever the shim writes to a file, the report reads it or says why not."""
    d = real_setup()
    prog = [p for p in A.programs if os.path.basename(p) == "demo_capture"] or A.programs[:1]
    base = {"LD_LIBRARY_PATH": A.standin_dir, "LD_PRELOAD": A.lib}
    # CGSHIM_LOG_FILE alone (any name, no format): JSONL, read by the report.
    log = os.path.join(d, "plain.log")
    run(prog, env=dict(base, CGSHIM_LOG_FILE=log), cwd=d, timeout=60)
    lines = open(log).read().splitlines()
    check(lines and all(l.startswith("{") for l in lines), "a file sink without a format is not JSONL: %r" % lines[:2])
    rc, out, err = cgshim("report", log)
    check(rc == 0 and "== Summary" in out, "report of a default file log: %d %s" % (rc, err))
    print("CGSHIM_LOG_FILE=%s alone: %d JSONL lines, report reads them" % (os.path.basename(log), len(lines)))
    # Text asked for: the report says why it cannot read it and what to do.
    log = os.path.join(d, "text.log")
    run(prog, env=dict(base, CGSHIM_LOG_FILE=log, CGSHIM_LOG_FORMAT="text"), cwd=d, timeout=60)
    check(open(log).read().startswith("cgshim "), "CGSHIM_LOG_FORMAT=text did not write text")
    rc, out, err = cgshim("report", log)
    check(rc == 2 and "text format" in err and "CGSHIM_LOG_FORMAT=jsonl" in err and err.count("\n") <= 3,
          "report of a text log: exit %d, %r" % (rc, err))
    print("text log: exit 2 and %r" % err.splitlines()[0])


def case_report_symbols():
    """Sites symbolised from the module records; a rebuilt binary is named stale;
    every violation leads to its rule page."""
    d = real_setup()
    src = [p for p in A.programs if os.path.basename(p) == "demo_capture"]
    check(src, "no demo_capture among the programs")
    exe = os.path.join(d, "demo_capture")
    shutil.copy2(src[0], exe)
    env = {"LD_LIBRARY_PATH": A.standin_dir, "LD_PRELOAD": A.lib, "CGSHIM_LOG_FILE": os.path.join(d, "log-%p.jsonl")}
    run([exe], env=env, cwd=d, timeout=60)
    logs = [os.path.join(d, f) for f in os.listdir(d) if f.startswith("log-")]
    recs = read_records(logs)
    mods = [r for r in recs if r["ev"] == "module" and r.get("name") == "demo_capture"]
    check(len(mods) == 1, "one module record for demo_capture: %r" % mods)
    notes = subprocess.run(["readelf", "-n", exe], capture_output=True, text=True).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", notes)
    check(m and mods[0].get("build_id") == m.group(1) and os.path.samefile(mods[0]["path"], exe),
          "module record %r, readelf says %s" % (mods[0], m and m.group(1)))
    raw = [r for r in recs if r["ev"] == "violation"]
    check(raw and all(r.get("doc") == "docs/rules/%s.md" % r["rule"] for r in raw), "violation doc fields")
    here = os.path.dirname(os.path.abspath(__file__))
    for r in raw:
        check(os.path.exists(os.path.join(here, "..", "..", r["doc"])), "%s does not exist" % r["doc"])
    doc = report_json(logs)
    v = [x for x in doc["violations"] if x["rule"] == "CGS001"]
    check(v and re.fullmatch(r"main \(.*demo_capture\.c:\d+\)", v[0]["site"] or ""),
          "CGS001 site not symbolised: %r" % (v and v[0]["site"]))
    check(v[0]["doc"] == "docs/rules/CGS001.md", "report row doc %r" % v[0].get("doc"))
    check(not doc["stale_modules"], "stale modules on a fresh binary: %r" % doc["stale_modules"])
    rc, out, err = cgshim("report", *logs)
    check(re.search(r"CGS001 update-will-fail .* at main \(.*demo_capture\.c:\d+\)  \(docs/rules/CGS001\.md\)", out),
          "text violation line lacks the symbolised site or the rule page:\n%s" % out[:2000])
    print("symbolised: %s; rule page %s" % (v[0]["site"], v[0]["doc"]))
    # The binary rebuilt (here: replaced by another program) after the run.
    other = [p for p in A.programs if os.path.basename(p) != "demo_capture"][0]
    shutil.copy2(other, exe)
    rc, out, err = cgshim("report", "--json", *logs)
    doc = json.loads(out)
    check(rc == 0 and "changed since the run" in err and exe in err, "no stale-binary notice: %r" % err)
    check([s["path"] for s in doc["stale_modules"]] == [mods[0]["path"]], "stale_modules %r" % doc["stale_modules"])
    v = [x for x in doc["violations"] if x["rule"] == "CGS001"]
    check(v and v[0]["site"].startswith("demo_capture+0x"), "stale frames must stay offsets: %r" % v[0]["site"])
    print("stale: %s" % err.strip().splitlines()[0])


def case_report_dot_update():
    """--dot update:N at the default level: both sides, differences in red,
    the reason on the picture; the extension picks the output type."""
    d = real_setup()
    log = demo_log(d)
    recs = read_records([log])
    check(recs[0].get("log_level") == "info", "not the default level: %r" % recs[0])
    viol = [r for r in recs if r["ev"] == "violation" and r["rule"] == "CGS001"]
    check(len(viol) == 1, "the demo has one CGS001: %d" % len(viol))
    sides = collections.Counter(r.get("side") for r in recs if r["ev"] == "node")
    check(sides["exec"] == viol[0]["exec_nodes"] and sides["graph"] == viol[0]["graph_nodes"],
          "node records at info: %r, violation says %d/%d" % (sides, viol[0]["exec_nodes"], viol[0]["graph_nodes"]))
    out = os.path.join(d, "g.dot")
    rc, _, err = cgshim("report", "--dot", "update:1", "-o", out, log)
    check(rc == 0, "update:1 -o g.dot: %d %s" % (rc, err))
    dot = open(out).read()
    check(dot.count("subgraph cluster_") == 2, "two clusters:\n" + dot)
    check("node count differs" in dot and "exec has 5 nodes" in dot, "the reason is not on the picture")
    marked = sorted(re.findall(r"^\s*([ab]\d+) \[[^\n]*fillcolor=", dot, re.M))
    # exec: alloc, fill, add, memcpy, free; new: alloc, fill, add, scale, memcpy, free: aligned by
    # content, the scale kernel alone is inserted (by position, #3-#5 of both sides differed)
    check(marked == ["b3"] and re.search(r'b3 \[[^\n]*inserted", style=filled, fillcolor="#b3de69"', dot),
          "marked nodes %r (want the inserted kernel b3 alone)" % marked)
    check(re.search(r"a3 \[label=\"#3 memcpy[^\n]*\(= new #4\)", dot), "the exec's memcpy aligned with the new #4")
    redges = sorted(re.findall(r"^\s*(\w+ -> \w+) \[color=red", dot, re.M))
    check(redges == ["a2 -> a3", "b2 -> b3", "b3 -> b4"], "edge highlighting %r:\n%s" % (redges, dot))
    print("update:1: %d exec nodes, %d new, marked %s" % (sides["exec"], sides["graph"], marked))
    if shutil.which("dot"):
        pdf = os.path.join(d, "g.pdf")
        rc, _, err = cgshim("report", "--dot", "update:last", "-o", pdf, log)
        check(rc == 0 and open(pdf, "rb").read(5) == b"%PDF-", "-o g.pdf is not a PDF: %d %s" % (rc, err))
        svg = os.path.join(d, "g.svg")
        rc, _, err = cgshim("report", "--dot", "update:1", "-o", svg, log)
        check(rc == 0 and "<svg" in open(svg).read(), "-o g.svg is not SVG")
    bad = os.path.join(d, "g.xyz")
    rc, _, err = cgshim("report", "--dot", "update:1", "-o", bad, log)
    check(rc == 1 and "unknown output type" in err and not os.path.exists(bad), "-o g.xyz: %d %r" % (rc, err))
    rc, _, err = cgshim("report", "--dot", "update:2", log)
    check(rc == 2 and "1 failing update" in err, "update:2 of one: %d %r" % (rc, err))


def case_report_dot_insert():
    """Issue 35: a kernel inserted at #2 is the node marked, not the one it
    pushed to #3; a changed launch is marked changed; an unpredicted failure
    (a mismatch) is drawn with the driver's error node."""
    d = tempfile.mkdtemp(dir=TMP)

    def node(seq, side, i, kernel, deps, grid=(64, 1, 1), gid=2):
        return {"v": 1, "ev": "node", "seq": seq, "ts": seq, "pid": 7, "tid": 7, "graph": "0x20", "graph_id": gid,
                "side": side, "exec": "0x10", "exec_id": 1, "index": i, "type": "kernel", "kernel": kernel,
                "grid": list(grid), "block": [256, 1, 1], "deps": deps}

    old = ["matmul_kernel", "bias_kernel", "gelu_kernel", "out_kernel"]
    new = ["matmul_kernel", "bias_kernel", "dropout_kernel", "gelu_kernel", "out_kernel"]
    for name, head in (("viol", {"ev": "violation", "rule": "CGS001", "name": "update-will-fail", "severity": "error",
                                 "api": "cuGraphExecUpdate_v2", "via": "cudaGraphExecUpdate",
                                 "msg": "node count differs", "predicted_err": "CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE"}),
                       ("mism", {"ev": "mismatch", "rule": "", "api": "cuGraphExecUpdate_v2", "rc": 910,
                                 "result": 2, "predicted_rc": 0, "node_index": 2})):
        recs = [{"v": 1, "ev": "start", "seq": 1, "ts": 1, "pid": 7, "tid": 7, "exe": "/x"},
                dict(head, v=1, seq=2, ts=2, pid=7, tid=7, exec="0x10", graph="0x20", exec_id=1, graph_id=2)]
        seq = 3
        for i, k in enumerate(old):
            recs.append(node(seq, "exec", i, k, [i - 1] if i else [], gid=1))
            seq += 1
        for i, k in enumerate(new):
            # out_kernel launched wider in the new graph: changed, not removed and inserted
            recs.append(node(seq, "graph", i, k, [i - 1] if i else [], grid=(128, 1, 1) if k == "out_kernel" else (64, 1, 1)))
            seq += 1
        log = os.path.join(d, name + ".jsonl")
        with open(log, "w") as f:
            f.write("".join(json.dumps(r) + "\n" for r in recs))
        rc, dot, err = cgshim("report", "--dot", "update:1", log)
        check(rc == 0, "%s: --dot update:1: %d %s" % (name, rc, err))
        ins = re.findall(r'^\s*(b\d+) \[label="#\d+ kernel\\n(\w+)[^\n]*inserted"', dot, re.M)
        check(ins == [("b2", "dropout_kernel")], "%s: inserted %r (want b2 dropout_kernel)" % (name, ins))
        check(re.search(r'b3 \[label="#3 kernel\\ngelu_kernel[^\n]*\(= exec #2\)"\]', dot),
              "%s: gelu #3 aligned with the exec's #2, unmarked" % name)
        chg = sorted(re.findall(r'^\s*([ab]\d+) \[[^\n]*changed', dot, re.M))
        check(chg == ["a3", "b4"], "%s: out_kernel changed on both sides %r" % (name, chg))
        check(not re.search(r"removed", dot.split("label=", 2)[2]), "%s: nothing removed" % name)
        if name == "mism":
            check(re.search(r"b2 \[[^\n]*penwidth=3", dot) and "failed with 910" in dot,
                  "mismatch: the driver's error node #2 drawn thick, the failure named:\n" + dot)
        else:
            check(dot.startswith("digraph") and "CGS001 cudaGraphExecUpdate will fail" in dot,
                  "the title names the runtime call")
    print("insert: dropout_kernel marked inserted at #2, gelu_kernel aligned")


def case_report_html():
    """--html: one self-contained page with the expected sections and numbers;
    checked by parsing, then in headless chromium (DOM and screenshot)."""
    import html.parser
    d = real_setup()
    log = demo_log(d, CGSHIM_LOG="debug")
    page = os.path.join(d, "run.html")
    rc, _, err = cgshim("report", "--html", page, log)
    check(rc == 0 and os.path.exists(page), "report --html: %d %s" % (rc, err))
    summary = report_json([log])["summary"]
    perf = os.path.join(d, "run.perfetto.json")
    check("traceEvents" in json.load(open(perf)), "the Perfetto json beside the page")

    class Page(html.parser.HTMLParser):
        def __init__(self):
            super().__init__()
            self.ids, self.numbers, self.links, self.svgs, self.external = set(), {}, [], 0, []
            self._key = None

        def handle_starttag(self, tag, attrs):
            a = dict(attrs)
            if "id" in a:
                self.ids.add(a["id"])
            if tag == "svg":
                self.svgs += 1
            if tag == "a":
                self.links.append(a.get("href"))
            for k in ("src",):
                if a.get(k):
                    self.external.append(a[k])
            self._key = a.get("data-key")

        def handle_data(self, data):
            if self._key and data.strip():
                self.numbers[self._key] = int(data)
                self._key = None

    p = Page()
    text = open(page).read()
    p.feed(text)
    want = {"summary", "violations", "captures", "pools", "graphs", "perfetto"}
    check(want <= p.ids, "sections missing: %s" % (want - p.ids))
    for k in ("graphs", "execs", "launches", "updates", "violations", "captures"):
        check(p.numbers.get(k) == summary[k], "page %s=%r, report says %d" % (k, p.numbers.get(k), summary[k]))
    check("#rule-CGS001" in p.links and "run.perfetto.json" in p.links, "links %r" % p.links)
    check("rule-CGS001" in p.ids, "CGS001's page embedded")
    # the charts (captures, graph memory, pools), the failing update, and the
    # demo's instantiated graph (debug level)
    check(p.svgs == 5, "inline SVGs: %d, want 5" % p.svgs)
    check(not p.external and "<link" not in text and "<script" not in text, "not self-contained")
    print("page: sections %s, %d inline SVGs, summary numbers match" % (sorted(p.ids), p.svgs))
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("note: no chromium here (scripts/deps.sh test installs it): browser check not run")
        return
    base = [chromium, "--headless", "--disable-gpu", "--no-sandbox", "--disable-dev-shm-usage",
            "--user-data-dir=" + os.path.join(d, "profile")]
    shot = os.path.join(d, "shot.png")
    q = subprocess.run(base + ["--window-size=1300,2400", "--screenshot=" + shot, "file://" + page],
                       capture_output=True, text=True, timeout=120)
    data = open(shot, "rb").read() if os.path.exists(shot) else b""
    check(data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 20000,
          "chromium screenshot: %d bytes, rc %d %s" % (len(data), q.returncode, q.stderr[-300:]))
    q = subprocess.run(base + ["--dump-dom", "file://" + page], capture_output=True, text=True, timeout=120)
    dom = Page()
    dom.feed(q.stdout)
    check(want <= dom.ids and dom.numbers == p.numbers and dom.svgs == p.svgs,
          "chromium's DOM differs: ids %s, %d svgs" % (sorted(dom.ids), dom.svgs))
    print("chromium: screenshot %d bytes, DOM has every section, %d SVGs and the same numbers"
          % (len(data), dom.svgs))


CASES = {n[5:].replace("_", "-"): f for n, f in globals().items() if n.startswith("case_")}


def main():
    global A, TMP
    ap = argparse.ArgumentParser()
    ap.add_argument("case", choices=sorted(CASES))
    ap.add_argument("--cgshim", required=True)
    ap.add_argument("--child")
    ap.add_argument("--fake-lib")
    ap.add_argument("--lib")
    ap.add_argument("--standin-dir")
    ap.add_argument("--config-def")
    ap.add_argument("--readme")
    ap.add_argument("--programs", nargs="*", default=[])
    ap.add_argument("--log", nargs="*")
    A = ap.parse_args()
    for k in ("cgshim", "child", "fake_lib", "lib"):
        if getattr(A, k):
            setattr(A, k, os.path.abspath(getattr(A, k)))
    A.programs = [os.path.abspath(p) for p in A.programs]
    TMP = tempfile.mkdtemp(prefix="cgshim-tools-")
    try:
        CASES[A.case]()
    except Fail as e:
        print("FAIL %s: %s" % (A.case, e))
        print("(files kept in %s)" % TMP)
        return 1
    shutil.rmtree(TMP, ignore_errors=True)
    print("PASS %s" % A.case)
    return 0


if __name__ == "__main__":
    sys.exit(main())
