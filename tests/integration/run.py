#!/usr/bin/env python3
"""Integration tests: programs run under LD_PRELOAD=libcgshim.so against the
CPU stand-in driver and runtime; assertions on program output and on the
JSONL records. Usage: run.py CASE (see CASES). Env from meson:
CGSHIM_LIB, STANDIN_DIR, STANDIN11_DIR, PROG_DIR, INTEG_DIR, SRC_ROOT, SHIM_EXPORTS."""
import glob, json, os, re, subprocess, sys, tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

LIB = os.environ["CGSHIM_LIB"]
STANDIN = os.environ["STANDIN_DIR"]
PROG = os.environ["PROG_DIR"]
INTEG = os.environ["INTEG_DIR"]
ROOT = os.environ["SRC_ROOT"]


def run(exe, shim=True, level="info", extra=None, fmt="jsonl", libdir=None, args=(), timeout=120):
    tmp = tempfile.mkdtemp(prefix="cgshim-it-")
    env = cgtest.clean_env()
    env["LD_LIBRARY_PATH"] = libdir or STANDIN
    if shim:
        env = cgtest.shim_env(env, LIB, os.path.join(tmp, "log-%p.jsonl"), level, {"CGSHIM_LOG_FORMAT": fmt})
    if extra:
        env.update(extra)
    env = {k: v for k, v in env.items() if v is not None}
    p = subprocess.run([exe, *args], env=env, capture_output=True, text=True, timeout=timeout)
    recs = []
    for f in sorted(glob.glob(os.path.join(tmp, "log-*.jsonl"))):
        for line in open(f):
            if line.strip():  # strict: a line that is not JSON fails the case
                recs.append(json.loads(line) if fmt == "jsonl" else line)
    return p, recs, tmp


T = cgtest.Tally()


def check(cond, msg):
    if not T.check(cond, msg):
        check.failed += 1


check.failed = 0


def calls(recs, prefix, **kw):
    return cgtest.calls(recs, prefix, **kw)


def same(bare, shim):
    check(bare.returncode == shim.returncode, "exit status %d bare, %d under the shim" % (bare.returncode, shim.returncode))
    check(bare.stdout == shim.stdout, "program output identical under the shim")


def case_edge():
    exe = os.path.join(INTEG, "dlsym_edge")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe, level="trace")
    print(shim.stdout)
    b = dict(l.split(": ", 1) for l in bare.stdout.splitlines() if ": " in l)
    s = dict(l.split(": ", 1) for l in shim.stdout.splitlines() if ": " in l)
    check(bare.returncode == 0 and shim.returncode == 0, "program exits 0 bare and under the shim")
    check(b["dlsym(cuda,cuGraphLaunch)"] == "driver:cuGraphLaunch", "bare: dlsym on libcuda gives the driver's")
    check(s["dlsym(cuda,cuGraphLaunch)"] == "shim:cuGraphLaunch", "shim: dlsym(libcuda, hooked name) gives our wrapper")
    check(s["dlsym(cuda,cuGraphLaunch_ptsz)"] == "shim:cuGraphLaunch_ptsz", "shim: _ptsz twin kept apart")
    check(s["dlsym(cuda,cuInit)"] == "driver:cuInit", "shim: a name not in the hook list goes to the driver")
    check(s["dlsym(cuda,cuGetExportTable)"] == "driver:cuGetExportTable", "shim: cuGetExportTable untouched")
    check(s["dlsym(cuda,cuNoSuchFunction)"] == "null dlerror=set", "shim: unknown cu name -> NULL with dlerror, as bare")
    check(s["dlsym(libm,cuGraphLaunch)"] == "null", "shim: another library's handle is not redirected")
    check(s["dlsym(libm,cos)"] == "found" and s["dlsym(RTLD_DEFAULT,printf)"] == "same", "shim: ordinary lookups unchanged")
    check(s["dlsym(cuda,cuGetProcAddress_v2)"] == "shim:cuGetProcAddress_v2", "dlsym of cuGetProcAddress_v2 gives the wrapper")
    check(s["dlsym(cuda,cuGetProcAddress)"] == "shim:cuGetProcAddress", "dlsym of cuGetProcAddress gives the 4-arg wrapper")
    want = {
        "gpa2(cuGetProcAddress,12000,0)": "shim:cuGetProcAddress_v2",
        "gpa2(cuGetProcAddress,11030,0)": "shim:cuGetProcAddress",
        "gpa2(cuGraphLaunch,13000,0)": "shim:cuGraphLaunch",
        "gpa2(cuGraphLaunch,13000,2)": "shim:cuGraphLaunch_ptsz",
        "gpa2(cuGraphInstantiate,13000,0)": "shim:cuGraphInstantiate_v2",
        "gpa2(cuGraphInstantiate,10000,0)": "shim:cuGraphInstantiate",
        "gpa2(cuGraphExecUpdate,11000,0)": "shim:cuGraphExecUpdate",
        "gpa2(cuGraphExecUpdate,12000,0)": "shim:cuGraphExecUpdate_v2",
        "gpa2(cuStreamBeginCapture,13000,2)": "shim:cuStreamBeginCapture_v2_ptsz",
        "gpa2(cuMemAllocAsync,13000,0)": "shim:cuMemAllocAsync",
        "gpa2(cuInit,13000,0)": "driver:cuInit",
        "gpa2(cuGetExportTable,13000,0)": "driver:cuGetExportTable",
    }
    for k, w in want.items():
        got = s[k].split(" ")[-1]
        bare_sym = b[k].split(" ")[-1].split(":")[-1]
        check(got == w and w.split(":")[1] == bare_sym and s[k].split(" ")[:2] == b[k].split(" ")[:2],
              "%s -> %s (bare: %s; same rc/status)" % (k, got, b[k]))
    check(s["v1(cuGraphLaunch,12000,2)"].endswith("shim:cuGraphLaunch_ptsz"), "lookup through the v1 wrapper is routed too")
    for k in ("gpa2(unknown)", "gpa1(unknown)", "gpa2(version 14000)", "gpa2(empty)"):
        check(s[k] == b[k], "%s unchanged: %s" % (k, s[k]))
    check(s["gpa1(unknown)"].startswith("rc=500") and "untouched" in s["gpa1(unknown)"], "v1 unknown: 500, pfn untouched")
    check(s["gpa2(version 14000)"].startswith("rc=1 ") and "untouched" in s["gpa2(version 14000)"], "version above driver: 1, pfn untouched")
    check(s["gpa2(status NULL)"] == "rc=0 shim:cuGraphLaunch", "symbolStatus NULL accepted")
    check(s["errno after cuGraphCreate"].startswith("kept"), "errno preserved across a hooked call")
    for k in ("launch(NULL exec)", "update(NULL, NULL, NULL)", "update(NULL exec, graph, NULL)"):
        check(s[k] == b[k] and s[k] != "rc=0", "bad input gets the driver's own error: %s %s" % (k, s[k]))
    check(s["threads"] == "0 failed, forks: 3/3 children ok", "4 launching threads + 3 forks: " + s["threads"])
    n = sum(r["count"] for r in recs if r.get("ev") == "launches" and r.get("reason") == "exit")
    check(n == 4000, "launch count recorded for 4x1000 concurrent launches: %d" % n)
    check(calls(recs, "cuGetProcAddress", sym="cuGraphLaunch", routed=True) != [], "trace records of routed lookups")


def case_rt_app():
    exe = os.path.join(PROG, "rt_app")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe)
    same(bare, shim)
    check(any(r["ev"] == "start" for r in recs), "start record")
    inst = calls(recs, "cuGraphInstantiate")
    check(len(inst) >= 1 and inst[0].get("via", "").startswith("cudaGraphInstantiate"),
          "instantiate recorded once per call, via the runtime name: %s" % [(r["api"], r.get("via")) for r in inst])
    rt_only = [r for r in recs if r.get("ev") == "call" and r.get("api", "").startswith("cuda")]
    check(not rt_only, "no duplicate runtime-level records for calls that reached the driver")
    beg = calls(recs, "cuStreamBeginCapture")
    check(beg and beg[0].get("via") == "cudaStreamBeginCapture" and beg[0].get("capture", 0) > 0,
          "capture begin recorded with its capture id, via cudaStreamBeginCapture")
    allocs = [r for r in recs if r.get("ev") == "alloc"]
    check(allocs and all(a["pool_default"] and a["capture"] > 0 for a in allocs), "captured allocations attributed to the default pool")
    # without runtime hooks: same driver records, no "via"
    shim2, recs2, _ = run(exe, extra={"CGSHIM_RUNTIME_HOOKS": "0"})
    same(bare, shim2)
    check(calls(recs2, "cuGraphInstantiate") and not any("via" in r for r in recs2 if r.get("ev") == "call"),
          "CGSHIM_RUNTIME_HOOKS=0: driver records only (the static-cudart situation)")


def case_rt11():
    exe = os.path.join(INTEG, "rt11_app")
    d11 = os.environ["STANDIN11_DIR"] + ":" + STANDIN
    bare, _, _ = run(exe, shim=False, libdir=d11)
    shim, recs, _ = run(exe, libdir=d11)
    same(bare, shim)
    print(shim.stdout)
    check("runtime 11" in bare.stdout, "stand-in 11.x runtime in use")
    check("update topology: 910 result=2" in shim.stdout, "11.x 4-arg update result reaches the program")
    upd = calls(recs, "cuGraphExecUpdate")
    check([r["api"] for r in upd] == ["cuGraphExecUpdate", "cuGraphExecUpdate"] and upd[0].get("via") == "cudaGraphExecUpdate",
          "11.x runtime reaches the 4-arg driver update: %s" % [(r["api"], r.get("via")) for r in upd])
    inst = calls(recs, "cuGraphInstantiate")
    check(inst and inst[0]["api"] == "cuGraphInstantiate_v2" and inst[0].get("via") == "cudaGraphInstantiate",
          "11.x runtime instantiate: %s" % [(r["api"], r.get("via")) for r in inst])
    # reinstantiate policy in the 11.x form
    shim3, recs3, _ = run(exe, libdir=d11, extra={"CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"})
    check("update topology: 0 result=0" in shim3.stdout, "11.x form: failing update rewritten to success")
    check(any(r.get("ev") == "rewrite" for r in recs3), "rewrite record")


def case_dlsym_app():
    exe = os.path.join(PROG, "dlsym_app")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe, level="trace")
    same(bare, shim)
    apis = {r["api"] for r in recs if r.get("ev") == "call"}
    for a in ("cuGraphCreate", "cuGraphInstantiateWithFlags", "cuGraphLaunch", "cuGraphExecDestroy"):
        check(a in apis, "record for %s (by-name dlsym path)" % a)


def case_driver_app():
    exe = os.path.join(PROG, "driver_app")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe, level="trace")
    same(bare, shim)
    check(calls(recs, "cuGraphLaunch_ptsz"), "exported _ptsz wrapper reached by a -lcuda program")
    check(calls(recs, "cuGraphInstantiate"), "instantiate reached by a -lcuda program")
    # the three reasons CGS001 gives (built without printf: compare the text)
    why = [re.sub(r"0x[0-9a-f]+", "X", r["msg"].split(": ", 1)[1]) for r in recs
           if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    check(why == ["node count differs: exec has 2 nodes, graph X has 3",
                  "node 0 changed type: mem_alloc in the exec, memset in the graph",
                  "node 1 (empty) has 1 dependencies in the exec and 0 in the graph"],
          "CGS001 reasons: %s" % why)
    check(not [r for r in recs if r.get("ev") == "mismatch"], "no prediction mismatch")


def case_getproc_parity():
    exe = os.path.join(PROG, "getproc_table")
    bare, _, _ = run(exe, shim=False)
    exp = open(os.path.join(ROOT, "tests", "standin", "getproc_table.expected")).read()
    check(bare.stdout == exp, "stand-in table equals the measured table (getproc_table.expected)")
    shim, _, _ = run(exe)
    same(bare, shim)


def case_demo():
    exe = os.path.join(PROG, "demo_capture")
    bare, _, _ = run(exe, shim=False)
    check(bare.returncode == 0, "demo runs on the stand-in")
    shim, recs, _ = run(exe, level="trace")
    same(bare, shim)
    upd = calls(recs, "cuGraphExecUpdate")
    check([u["rc"] for u in upd] == [0, 910] and upd[1].get("result") == 2, "updates: 0 then 910/TopologyChanged")
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    check(v and v[0]["seq"] < upd[1]["seq"] and v[0]["predicted_rc"] == 910, "CGS001 announced before the failing update")
    check(not [r for r in recs if r.get("ev") == "mismatch"], "no prediction mismatch")
    lc = calls(recs, "cuGraphLaunch")
    check(len(lc) == 5, "5 launch records at trace level (%d)" % len(lc))
    s = [r for r in recs if r.get("ev") == "summary"]
    check(s and s[0]["launches"] == 5 and s[0]["captures"] == 3 and s[0]["update_failures"] == 1,
          "exit summary counts: %s" % (s[0] if s else None))


def case_disable():
    exe = os.path.join(PROG, "demo_capture")
    bare, _, _ = run(exe, shim=False)
    shim, recs, tmp = run(exe, extra={"CGSHIM_DISABLE": "1"})
    same(bare, shim)
    check(not recs and not os.listdir(tmp), "CGSHIM_DISABLE=1: nothing written")
    check(shim.stderr == bare.stderr, "CGSHIM_DISABLE=1: stderr unchanged")


def case_env():
    exe = os.path.join(PROG, "demo_capture")
    bare, _, _ = run(exe, shim=False)
    shim, recs, tmp = run(exe, extra={"CGSHIM_LOG": "loud", "CGSHIM_BACKTRACE": "10x"})
    same(bare, shim)
    warn = [l for l in shim.stderr.splitlines() if "cgshim: warning" in l]
    check(len(warn) == 2 and "CGSHIM_LOG" in warn[0] and "CGSHIM_BACKTRACE" in warn[1],
          "one clear warning per malformed variable: %s" % warn)
    check(any(r.get("ev") == "start" and r.get("log_level") == "info" for r in recs), "malformed level -> default (info with a log file)")
    files = os.listdir(tmp)
    check(len(files) == 1 and files[0] == "log-%d.jsonl" % int(files[0][4:-6]), "%p expanded in CGSHIM_LOG_FILE: " + str(files))
    # default text to stderr
    shim2, _, _ = run(exe, extra={"CGSHIM_LOG_FILE": None, "CGSHIM_LOG_FORMAT": None, "CGSHIM_LOG": "info"})
    lines = [l for l in shim2.stderr.splitlines() if l.startswith("cgshim ")]
    check(any(" info call api=\"cuGraphInstantiate" in l for l in lines), "text records on stderr by default")
    check(any(" error violation " in l or " warn violation " in l for l in lines), "violations visible in the text log")


def case_text_static():
    """Issue 35: a program with the static cudart (nvcc's default) reaches
    the shim's driver wrappers through the pointers cuGetProcAddress gave
    its runtime, so no runtime hook names the call (CGSHIM_RUNTIME_HOOKS=0
    puts the stand-in runtime in that situation: it too asks
    cuGetProcAddress for every entry point). The text header still names
    cudaGraphExecUpdate (rt-names.def); the JSONL keeps api and has no via."""
    exe = os.path.join(PROG, "demo_capture")
    quiet = {"CGSHIM_LOG_FILE": None, "CGSHIM_LOG_FORMAT": None, "CGSHIM_LOG": "warn"}
    for hooks in ("0", "1"):
        p, _, _ = run(exe, extra=dict(quiet, CGSHIM_RUNTIME_HOOKS=hooks))
        err = p.stderr.splitlines()
        head = [i for i, l in enumerate(err) if " violation CGS001 " in l]
        check(p.returncode == 0 and len(head) == 1
              and err[head[0]].endswith(" error violation CGS001 update-will-fail in cudaGraphExecUpdate"),
              "runtime hooks %s: the header names cudaGraphExecUpdate: %s" % (hooks, [err[i] for i in head]))
        block = err[head[0] + 1:head[0] + 40] if head else []
        entry = [l for l in block if l.startswith("    driver entry point: ")]
        check(entry and entry[0].startswith("    driver entry point: cuGraphExecUpdate")
              and ("no runtime hook saw the call" in entry[0]) == (hooks == "0"),
              "runtime hooks %s: the driver entry point line: %s" % (hooks, entry))
    _, recs, _ = run(exe, extra={"CGSHIM_RUNTIME_HOOKS": "0"})
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    check(v and v[0]["api"].startswith("cuGraphExecUpdate") and "via" not in v[0],
          "JSONL: api is the entry point, no via without a runtime hook: %s" % [(r["api"], r.get("via")) for r in v])


def case_text_warnings():
    """Issue 35 (text for people): a warning that is no violation (the
    shim's own trouble, a mismatch) is written on stderr in the default
    text format as a violation is, a header line (severity, kind, rule, the
    runtime call) then indented lines, not one key=value line. The stand-in
    refuses the update (STANDIN_UPDATE_REFUSE: a mismatch); the
    suppressions file has no list (a "warning"). The program fails its own
    check of the refused update (exit 1): its exit status is not asserted."""
    exe = os.path.join(INTEG, "..", "rules", "valid_update-same-topology")
    tmp = tempfile.mkdtemp(prefix="cgshim-tw-")
    sup = os.path.join(tmp, "sup.json")
    with open(sup, "w") as f:
        f.write("{}\n")
    p, _, _ = run(exe, extra={"CGSHIM_LOG_FILE": None, "CGSHIM_LOG_FORMAT": None, "CGSHIM_LOG": "warn",
                              "STANDIN_UPDATE_REFUSE": "2", "CGSHIM_SUPPRESS": sup})
    err = p.stderr.splitlines()
    check(not [l for l in err if l.startswith("cgshim ") and ("=" in l.split(" warn ", 1)[-1])],
          "no key=value line: %s" % [l for l in err if "=" in l][:2])
    for kind, head, body in (("mismatch", " warn mismatch in cudaGraphExecUpdate", "    objects: exec 0x"),
                             ("warning", " warn warning", "    CGSHIM_SUPPRESS=" + sup + " has no suppressions")):
        at = [i for i, l in enumerate(err) if l.startswith("cgshim ") and l.endswith(head)]
        block = []
        if at:
            for l in err[at[0] + 1:]:
                if not l.startswith("    "):
                    break
                block.append(l)
        check(len(at) == 1, "%s: one header line ending %r: %s" % (kind, head, at))
        check(any(l.startswith(body) for l in block), "%s: an indented line %r in %s" % (kind, body, block[:6]))


def case_rules_off():
    exe = os.path.join(PROG, "demo_capture")
    shim, recs, _ = run(exe, extra={"CGSHIM_RULES_OFF": "CGS001, CGS99,cgs004"})
    warn = [l for l in shim.stderr.splitlines() if "cgshim: warning" in l]
    print("\n".join(warn))
    check(len(warn) == 2 and '"CGS99"' in warn[0] and '"cgs004"' in warn[1] and "not a rule ID" in warn[0],
          "one warning per unknown rule ID in CGSHIM_RULES_OFF: %s" % warn)
    check(not [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS001"],
          "the known ID next to them is still switched off")


def case_symlink_log():
    exe = os.path.join(PROG, "demo_capture")
    tmp = tempfile.mkdtemp(prefix="cgshim-it-")
    os.symlink(os.path.join(tmp, "target"), os.path.join(tmp, "log.jsonl"))
    shim, _, _ = run(exe, extra={"CGSHIM_LOG_FILE": os.path.join(tmp, "log.jsonl")})
    warn = [l for l in shim.stderr.splitlines() if "CGSHIM_LOG_FILE" in l]
    print("\n".join(warn))
    check(warn and "log file is a symlink; refused (O_NOFOLLOW)" in warn[0], "symlink refusal says so: %s" % warn)
    check(not os.path.exists(os.path.join(tmp, "target")), "nothing written through the symlink")


def case_non_utf8_exe():
    """An executable whose name is not UTF-8: every line is still JSON."""
    tmp = tempfile.mkdtemp(prefix="cgshim-it-")
    exe = os.path.join(os.fsencode(tmp), b"demo-\xff\xc3(")
    with open(os.path.join(PROG, "demo_capture"), "rb") as src, open(exe, "wb") as dst:
        dst.write(src.read())
    os.chmod(exe, 0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    env.update(LD_LIBRARY_PATH=STANDIN, LD_PRELOAD=LIB, CGSHIM_LOG="debug", CGSHIM_LOG_FORMAT="jsonl",
               CGSHIM_LOG_FILE=os.path.join(tmp, "log-%p.jsonl"))
    p = subprocess.run([exe], env=env, capture_output=True, timeout=120)
    check(p.returncode == 0, "program with a non-UTF-8 name runs (%d)" % p.returncode)
    bad, recs = [], []
    for f in glob.glob(os.path.join(tmp, "log-*.jsonl")):
        for i, raw in enumerate(open(f, "rb")):
            try:
                recs.append(json.loads(raw.decode("utf-8")))
            except ValueError as e:
                bad.append("%s:%d: %s: %r" % (f, i + 1, e, raw[:120]))
    check(recs and not bad, "%d lines, every one UTF-8 JSON%s" % (len(recs), "".join("\n  " + b for b in bad[:5])))
    start = [r for r in recs if r.get("ev") == "start"]
    check(start and start[0].get("exe", "").endswith("demo-\u00ff\u00c3("),
          "the bytes read back as \\u00XX: %r" % (start[0].get("exe") if start else None))


def case_exports():
    out = subprocess.run(["nm", "-D", "--defined-only", LIB], capture_output=True, text=True, check=True).stdout
    got = sorted(l.split()[-1] for l in out.splitlines() if l.strip())
    want = sorted(open(os.environ["SHIM_EXPORTS"]).read().split())
    check(got == want, "libcgshim.so exports exactly the hook list (%d names)" % len(want))
    und = subprocess.run(["nm", "-D", "--undefined-only", LIB], capture_output=True, text=True, check=True).stdout.split()
    check("dlsym" not in [u.split("@")[0] for u in und], "the shim never imports the public dlsym")
    check(not any(u.startswith("cu") for u in und), "the shim links no CUDA library symbol")
    dyn = subprocess.run(["readelf", "-d", LIB], capture_output=True, text=True, check=True).stdout
    check("libcuda" not in dyn and "libcudart" not in dyn, "no DT_NEEDED on libcuda/libcudart")


def case_policy():
    exe = os.path.join(PROG, "demo_capture")
    shim, recs, _ = run(exe, extra={"CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"})
    # the demo expects 910 on its second update; under the policy it gets success
    check("update extra kernel: result=0" in shim.stdout, "update with changed topology reported as success")
    rw = [r for r in recs if r.get("ev") == "rewrite"]
    check(len(rw) == 1 and rw[0]["reason"] == "predicted", "one rewrite record (predicted failure, no doomed driver call)")
    lc = calls(recs, "cuGraphLaunch")
    check(not [r for r in lc if r["rc"] != 0], "launches after the rewrite succeed")
    nums = [l for l in shim.stdout.splitlines() if l.startswith("checksum after failed update")]
    # extra kernel scales by 2: (1 + 5) * 2 per element
    check(nums and nums[0].endswith("%.1f" % (12.0 * (1 << 18))), "rewritten exec computes the new graph's numbers: %s" % nums)


def case_early_ctor():
    """Issue 11: a library's constructor reaches the driver before the shim's."""
    exe = os.path.join(INTEG, "early_app")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe, extra={"LD_DEBUG": "libs"})
    inits = [l.split("calling init: ")[1] for l in shim.stderr.splitlines() if "calling init: " in l]
    early = [i for i, l in enumerate(inits) if "libearly" in l]
    mine = [i for i, l in enumerate(inits) if "libcgshim" in l]
    check(early and mine and early[0] < mine[0], "libearly's constructor runs before the shim's: %s"
          % [os.path.basename(l) for l in inits])
    check("update: 910 result=2" in bare.stdout, "bare: the update is refused with 910")
    same(bare, shim)
    check([r["ev"] for r in recs[:1]] == ["start"] and len([r for r in recs if r["ev"] == "start"]) == 1,
          "one start record, first in the log")
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    upd = calls(recs, "cuGraphExecUpdate")
    check(v and upd and v[0]["seq"] < upd[0]["seq"] and upd[0]["rc"] == 910,
          "CGS001 recorded before the 910 (%d violations, update rc %s)" % (len(v), upd and upd[0]["rc"]))
    summ = [r for r in recs if r.get("ev") == "summary"]
    check(summ and summ[0]["doors"]["cuGetProcAddress"] >= 5 and summ[0]["lookups"]["dlsym"] >= 1
          and summ[0]["early_calls"] == 0,
          "summary: doors %s, lookups %s" % (summ and summ[0]["doors"], summ and summ[0]["lookups"]))
    ab, recs_ab, _ = run(exe, extra={"CGSHIM_ON_VIOLATION": "abort"})
    va = [r for r in recs_ab if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    check(ab.returncode == -6 and va and not calls(recs_ab, "cuGraphExecUpdate"),
          "abort: SIGABRT (%d) with the violation written before the call" % ab.returncode)
    rw, recs_rw, _ = run(exe, extra={"CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"})
    check("update: 0 result=0" in rw.stdout and "launch after update: 0" in rw.stdout,
          "reinstantiate: the update is rewritten to success")
    check([r for r in recs_rw if r.get("ev") == "rewrite"], "reinstantiate: rewrite record written")


def case_devsync():
    """Issue 11: CUDA 13's cudaDeviceSynchronize (cuCtxSynchronize@13000) inside a capture."""
    exe = os.path.join(INTEG, "devsync_app")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe)
    same(bare, shim)
    check("sync inside capture: 900" in bare.stdout and "end: 901" in bare.stdout,
          "bare: 900 inside the capture, 901 at its end")
    sync = calls(recs, "cuCtxSynchronize_v2")
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS007"]
    check(sync and sync[0]["rc"] == 900, "the 13000 form is routed and recorded (%s)" % [(r["api"], r["rc"]) for r in sync])
    check(v and sync and v[0]["seq"] < sync[0]["seq"] and v[0]["predicted_rc"] == 900,
          "CGS007 named before the 900")
    check(not [r for r in recs if r.get("ev") == "mismatch"], "no mismatch record")


def case_all_versions():
    """Issue 11: every version of every hooked name is routed to the wrapper of its ABI."""
    exe = os.path.join(PROG, "getproc_versions")
    bare, _, _ = run(exe, shim=False)
    shim, _, _ = run(exe)
    strip = lambda out: [re.sub(r" (shim|driver):", " ", l) for l in out.splitlines()]
    check(bare.returncode == 0 and strip(bare.stdout) == strip(shim.stdout),
          "same answers and exported names bare and under the shim (%d queries)" % len(bare.stdout.splitlines()))
    chk, _, _ = run(exe, args=("--check",))
    last = chk.stdout.strip().splitlines()[-1]
    print("\n".join(l for l in chk.stdout.splitlines() if l.startswith("MISS")))
    check(chk.returncode == 0 and last.endswith(", 0 routing misses"), last)
    # Issue 36: each query asked again at once (the shim's per-thread memo
    # of its last answers, getproc.c), and unhooked names: the same answers.
    bare, _, _ = run(exe, shim=False, args=("--twice",))
    shim, _, _ = run(exe, args=("--twice",))
    check(bare.returncode == 0 and strip(bare.stdout) == strip(shim.stdout),
          "asked twice: same answers bare and under the shim (%d lines)" % len(bare.stdout.splitlines()))
    chk, _, _ = run(exe, args=("--check", "--twice"))
    last = chk.stdout.strip().splitlines()[-1]
    print("\n".join(l for l in chk.stdout.splitlines() if l.startswith("MISS")))
    check(chk.returncode == 0 and last.endswith(", 0 routing misses"), "asked twice: " + last)


def case_quiet():
    """Issue 11: a process that makes no CUDA call writes nothing."""
    shim, recs, tmp = run("/bin/true")
    check(shim.returncode == 0 and not os.listdir(tmp), "no CUDA at all: no log file (%s)" % os.listdir(tmp))
    # Lookups only (what a compile worker that imports the framework does).
    exe = os.path.join(PROG, "getproc_versions")
    shim, recs, tmp = run(exe)
    check(shim.returncode == 0 and not os.listdir(tmp), "lookups only: no log file (%s)" % os.listdir(tmp))
    shim, recs, tmp = run(os.path.join(PROG, "demo_capture"))
    check(len(os.listdir(tmp)) == 1 and recs and recs[0]["ev"] == "start", "a CUDA program: the log opens at its first record")


def case_doors():
    """Issue 11: the exit summary says which doors the calls came through."""
    def doors(exe, **kw):
        _, recs, _ = run(os.path.join(PROG, exe), **kw)
        s = [r for r in recs if r.get("ev") == "summary"]
        return s[0]["doors"] if s else {}
    d = doors("driver_app")
    check(d.get("export", 0) > 0 and d.get("dlsym", 0) == 0, "-lcuda program: exported-symbol door (%s)" % d)
    d = doors("dlsym_app")
    check(d.get("dlsym", 0) > 0, "dlsym-by-name program: dlsym door (%s)" % d)
    d = doors("rt_app")
    check(d.get("runtime", 0) > 0 and d.get("cuGetProcAddress", 0) > 0,
          "shared-runtime program: runtime and cuGetProcAddress doors (%s)" % d)
    d = doors("rt_app", extra={"CGSHIM_RUNTIME_HOOKS": "0"})
    check(d.get("runtime", 0) == 0 and d.get("cuGetProcAddress", 0) > 0, "runtime hooks off: no runtime door (%s)" % d)
def threads_run(mode):
    """capture_threads MODE bare and under the shim (issue 19)."""
    exe = os.path.join(INTEG, "capture_threads")
    bare, _, _ = run(exe, shim=False, args=(mode,))
    shim, recs, _ = run(exe, args=(mode,))
    print(shim.stdout.rstrip())
    same(bare, shim)
    check(bare.returncode == 0, "the stand-in answered as the real driver would (bare run exits 0)")
    return recs


def seq_of(recs, pred):
    return [r["seq"] for r in recs if pred(r)]


def case_hostalloc_named():
    """A pinned host allocation from another thread during a Global capture
    is named (thread, site, capture) before it reaches the driver."""
    recs = threads_run("hostalloc")
    begin = calls(recs, "cuStreamBeginCapture", rc=0)
    v = [r for r in recs if r.get("ev") == "violation" and r.get("api") == "cuMemHostAlloc"]
    check(len(v) == 1 and v[0].get("rule") == "CGS007", "one CGS007 violation names cuMemHostAlloc (%d)" % len(v))
    if not (v and begin):
        return
    v = v[0]
    check(v["tid"] != begin[0]["tid"] and v.get("call_tid") == v["tid"] and v.get("capture_tid") == begin[0]["tid"],
          "violation names the other thread %s and the capturing thread %s" % (v.get("call_tid"), v.get("capture_tid")))
    check(v.get("capture") == begin[0].get("capture") and v.get("mode") == "global",
          "violation names the capture it will break (%s, %s)" % (v.get("capture"), v.get("mode")))
    check(bool(v.get("site")) and bool(v.get("begin_site")), "violation carries the call site and the begin site")
    call = calls(recs, "cuMemHostAlloc")
    check(call and call[0]["rc"] == 900 and call[0]["seq"] > v["seq"],
          "the violation is written before the call's record (seq %s < %s, rc %s)"
          % (v["seq"], call[0]["seq"] if call else None, call[0]["rc"] if call else None))
    inv = [r for r in recs if r.get("ev") == "invalidated"]
    check(len(inv) == 1 and inv[0].get("found_by") == "call" and inv[0].get("api") == "cuMemHostAlloc"
          and inv[0].get("other_thread") is True, "one invalidated record: by cuMemHostAlloc on another thread")
    s = [r for r in recs if r.get("ev") == "summary"]
    check(s and s[0].get("captures_invalidated") == 1 and s[0].get("captures_open") == 0,
          "summary: captures_invalidated 1, captures_open 0 (%s)" % (s and {k: s[0].get(k) for k in ("captures_invalidated", "captures_open")}))
    b = begin[0]
    check("pre_ns" in b and "post_ns" in b and b["post_ns"] <= b["dur_ns"],
          "begin record splits the hook's cost: pre_ns %s post_ns %s dur_ns %s" % (b.get("pre_ns"), b.get("post_ns"), b.get("dur_ns")))


def case_broken_link():
    """Issue 14: the failed end of a capture is linked back to the first call
    that broke it (API, rule, thread id and name, site), the violation names
    both threads, and `cgshim report` prints the chain as one block. A capture
    broken by an unhooked call gets an end record that says so."""
    exe = os.path.join(INTEG, "capture_threads")
    _, recs, tmp = run(exe, args=("hostalloc",))
    v = [r for r in recs if r.get("ev") == "violation" and r.get("api") == "cuMemHostAlloc"]
    check(v and v[0].get("call_thread") == "pt_pin_memory" and v[0].get("capture_thread") == "EngineCore",
          "the violation names the calling thread and the capture's thread (%s, %s)"
          % (v and v[0].get("call_thread"), v and v[0].get("capture_thread")))
    b = [r for r in recs if r.get("ev") == "broken"]
    check(len(b) == 1, "one broken record (%d)" % len(b))
    if b:
        b = b[0]
        end = calls(recs, "cuStreamEndCapture")
        check(b.get("rc") == 901 and b.get("by_api") == "cuMemHostAlloc" and b.get("by_rule") == "CGS007"
              and b.get("by_rc") == 900, "it links 901 to cuMemHostAlloc (CGS007, 900): %s" % b.get("msg"))
        check(b.get("by_thread") == "pt_pin_memory" and b.get("begin_thread") == "EngineCore"
              and b.get("by_other_thread") is True and b.get("by_tid") == v[0].get("call_tid"),
              "it names the breaking thread and the begin thread")
        check(bool(b.get("by_site")) and bool(b.get("begin_site")), "it carries both sites")
        check(end and b.get("capture") == end[0].get("capture"), "it names the ended capture")
        check("pt_pin_memory" in b.get("msg", "") and "EngineCore" in b.get("msg", ""), "its message names both threads")
    doc, text = report_broken(tmp)
    if doc is not None:
        ch = doc.get("capture_chains", [])
        check(len(ch) == 1 and ch[0].get("by_api") == "cuMemHostAlloc", "report: one capture chain (%s)" % ch)
        blk = text[text.find("== Who broke the capture"):].split("\n\n")[0] if "== Who broke" in text else ""
        print(blk)
        check("EngineCore" in blk and "pt_pin_memory" in blk and "cuMemHostAlloc (CGS007" in blk,
              "report text: one block with both threads and the breaking call")
    _, recs, _ = run(exe, args=("query",))
    b = [r for r in recs if r.get("ev") == "broken"]
    check(len(b) == 1 and b[0].get("rc") == 901 and "by_api" not in b[0] and "no call the shim saw" in b[0].get("msg", ""),
          "an unhooked breaker: the end record says no call the shim saw broke it (%s)" % (b and b[0].get("msg")))
    _, recs, _ = run(os.path.join(PROG, "driver_app"))
    b = sorted(r.get("capture") for r in recs if r.get("ev") == "broken")
    ok = sorted(r.get("capture") for r in recs if r.get("ev") == "capture" and r.get("rc") == 0)
    bad = sorted(r.get("capture") for r in recs if r.get("ev") == "capture" and r.get("rc") != 0)
    check(b == bad and ok and not set(b) & set(ok),
          "driver_app: a broken record for each failed end only (%s; failed %s; ok %s)" % (b, bad, ok))


def case_capture_mode():
    """Issue 14 point 5: CGSHIM_CAPTURE_MODE=thread_local begins the global
    capture thread-local (one capture_mode record, the begin record says
    both modes): the other thread's pinned allocation no longer breaks it;
    relaxed turns the modeless cuStreamBeginCapture relaxed through _v2;
    keep (the default) rewrites nothing."""
    exe = os.path.join(INTEG, "capture_threads")
    p, recs, _ = run(exe, args=("hostalloc",), extra={"CGSHIM_CAPTURE_MODE": "thread_local"})
    print(p.stdout.rstrip())
    check("other thread cuMemHostAlloc: 0 (unexpected)" in p.stdout and "main cuStreamEndCapture: 0 (unexpected)" in p.stdout,
          "thread_local: the other thread's allocation succeeds and the capture ends with 0")
    cm = [r for r in recs if r.get("ev") == "capture_mode"]
    check(len(cm) == 1 and cm[0].get("asked") == "global" and cm[0].get("mode") == "thread_local"
          and cm[0].get("api") == "cuStreamBeginCapture_v2" and cm[0].get("site"),
          "one capture_mode record: global -> thread_local (%s)" % cm)
    b = calls(recs, "cuStreamBeginCapture", rc=0)
    check(b and b[0].get("mode") == "thread_local", "the begin record says thread_local (%s)" % str(b and b[0].get("mode")))
    check(not [r for r in recs if r.get("ev") in ("violation", "broken", "invalidated")], "no violation, no broken capture")
    c = [r for r in recs if r.get("ev") == "capture"]
    check(c and c[0].get("rc") == 0 and c[0].get("mode") == "thread_local", "the capture record: thread_local, rc 0")
    # relaxed: the capturing thread's own unsafe call no longer breaks it either
    _, recs, _ = run(os.path.join(PROG, "driver_app"))
    strict = len([r for r in recs if r.get("ev") == "call" and r.get("api", "").startswith("cuStreamBeginCapture")
                  and r.get("mode") != "relaxed"])
    p, recs, _ = run(os.path.join(PROG, "driver_app"), extra={"CGSHIM_CAPTURE_MODE": "relaxed"})
    cm = [r for r in recs if r.get("ev") == "capture_mode"]
    caps = [r for r in recs if r.get("ev") == "capture"]
    check(cm and all(r.get("mode") == "relaxed" and r.get("asked") in ("global", "thread_local") for r in cm)
          and len(cm) == strict and all(r.get("mode") == "relaxed" for r in caps),
          "relaxed: every capture relaxed, one capture_mode record per begin that asked for another mode (%d, %d)"
          % (len(cm), strict))
    p, recs, _ = run(exe, args=("hostalloc",), extra={"CGSHIM_CAPTURE_MODE": "keep"})
    check(p.returncode == 0 and not [r for r in recs if r.get("ev") == "capture_mode"], "keep: nothing rewritten")
    p, recs, _ = run(exe, args=("hostalloc",))
    check(p.returncode == 0 and not [r for r in recs if r.get("ev") == "capture_mode"], "unset: nothing rewritten")


def parity_rows(text):
    """Table rows (| a | b | ... |) of a text, as lists of stripped cells."""
    return [[x.strip() for x in l.strip().strip("|").split("|")] for l in text.splitlines()
            if l.startswith("| ") and not l.startswith("| route") and not l.startswith("|---")]


# Routes of the parity program the shim does not name: cuStreamIsCapturing(NULL)
# under a blocking capture (906, but the capture stays active: it breaks
# nothing).
PARITY_NOT_NAMED = {"cudaStreamIsCapturing(legacy) (blocking capture)"}


def hostalloc_rows(text):
    """The rows of hostalloc_probe's table (| call | mode | caller | rc | status | end |)."""
    return [r for r in parity_rows(text) if r and r[0].startswith("cu")]


def case_hostalloc_parity():
    """Issue 19 point 3: the stand-in answers the pinned host memory calls
    during a capture as the real driver did, row by row
    (tests/gpu/hostalloc_probe.cu built as C; the GPU's table is the one in
    docs/host-memory-capture.md), and under the shim every 900 is named
    before the call with no prediction the driver contradicts."""
    doc = hostalloc_rows(open(os.path.join(os.environ["SRC_ROOT"], "docs", "host-memory-capture.md")).read())
    check(len(doc) == 54, "docs/host-memory-capture.md holds the GPU's table (%d rows, want 54)" % len(doc))
    exe = os.path.join(INTEG, "hostalloc_probe")
    bare, _, _ = run(exe, shim=False)
    got = hostalloc_rows(bare.stdout)
    diff = [(g, d) for g, d in zip(got, doc) if g != d]
    check(bare.returncode == 0 and len(got) == len(doc) and not diff,
          "the stand-in's %d rows are the GPU's (%d differ: %s)" % (len(got), len(diff), diff[:3]))
    shim, recs, _ = run(exe)
    same(bare, shim)
    mism = [(r.get("api"), r.get("rule"), r.get("rc")) for r in recs if r.get("ev") == "mismatch"]
    check(not mism, "no prediction the driver contradicts (%s)" % mism[:4])
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS007"]
    want = len([r for r in got if r[3] == "900"])
    check(want == 15 and len(v) == want, "every 900 is named before the call: %d CGS007 for %d rows" % (len(v), want))


def case_capture_parity():
    """Issue 14 point 1: the stand-in answers like the real driver
    (docs/capture-map.md) on every route it implements (capture_parity.c, the
    map's matrix through the driver API; capture_parity.expected, rows copied
    from the map), and under the shim every failing route is named before
    the call and every failed end is linked to its breaking call."""
    exe = os.path.join(INTEG, "capture_parity")
    src = os.path.join(os.environ["SRC_ROOT"], "tests", "integration")
    doc = parity_rows(open(os.path.join(os.environ["SRC_ROOT"], "docs", "capture-map.md")).read())
    gold = parity_rows(open(os.path.join(src, "capture_parity.expected")).read())
    check(len(gold) >= 140 and all(r in doc for r in gold),
          "%d expected rows, each one verbatim in docs/capture-map.md" % len(gold))
    bare, recs0, _ = run(exe, shim=False)
    got = parity_rows(bare.stdout)
    docd = {tuple(r[:3]): r for r in doc}
    gd = {tuple(r[:3]): r for r in gold}
    extra = [r for r in got if tuple(r[:3]) not in gd and docd.get(tuple(r[:3]), [None] * 4)[3] != "201"]
    diff = [(r, gd[tuple(r[:3])][3:]) for r in got if tuple(r[:3]) in gd and r != gd[tuple(r[:3])]]
    check(bare.returncode == 0 and not extra and len(got) == len(gold) + len(
        [r for r in got if docd.get(tuple(r[:3]), [None] * 4)[3] == "201"]),
          "the stand-in prints every expected row (%d rows, unexpected %s)" % (len(got), extra[:3]))
    check(not diff, "the stand-in answers as the H100 did on every row (%d differ: %s)" % (len(diff), diff[:4]))
    shim, recs, _ = run(exe)
    same(bare, shim)
    mism = [(r.get("api"), r.get("rule"), r.get("rc")) for r in recs if r.get("ev") == "mismatch"]
    check(not mism, "no prediction the stand-in contradicts (%s)" % mism[:4])
    named_rc = {"401", "900", "902", "906", "907", "908"}
    want = len([r for r in got if (r[3] in named_rc or (r[3] == "0" and r[4] == "INVALIDATED"))
                and r[0] not in PARITY_NOT_NAMED])
    want8 = len([r for r in got if r[5] == "904"])
    # CGS026 (a hint) names the helper that captures one small graph row
    # after row: churn, not a route
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") != "CGS026"]
    v8 = [r for r in v if r.get("rule") == "CGS008"]
    # a repeat of one rule, call site and object is folded into its first
    # record and counted (docs/log-format.md, `repeat`): CGS021's ends on
    # one stream not capturing, from one site, are one record and a count
    folded = sum(r.get("repeats", 0) for r in recs if r.get("ev") == "repeat" and r.get("rule") != "CGS008")
    check(len(v) - len(v8) + folded == want and len(v8) == want8,
          "every failing route is named before the call: %d violations + %d folded repeats for %d rows "
          "(+%d CGS008 for %d)" % (len(v) - len(v8), folded, want, len(v8), want8))
    check(all(r.get("call_thread") is not None and r.get("capture_thread") is not None for r in v
              if r.get("rule") not in ("CGS008", "CGS021")),
          "each names the calling and the capturing thread (CGS021: there is no capture)")
    check(all(r.get("call_thread") is not None for r in v if r.get("rule") == "CGS021"),
          "each end on a stream not capturing names the calling thread")
    b = [r for r in recs if r.get("ev") == "broken"]
    merge = len([r for r in got if r[0] == "wait on an event of another capture"])
    wrong = len([r for r in got if r[3] == "908"])  # a 908 ends the capture too (measured)
    ends = len([r for r in got if r[5].startswith("901")]) + merge + want8 + wrong
    check(len(b) == ends, "a broken record per failed end (%d, want %d)" % (len(b), ends))
    # a 908 end links to itself: the wrong-thread end, named by CGS016
    unlinked = len([r for r in got if r[0] in PARITY_NOT_NAMED and r[5] == "901"])
    linked = [r for r in b if r.get("by_api")]
    check(len(linked) == len(b) - unlinked,
          "every 901 links back to its breaking call (%d of %d; %d not seen by the shim)" % (len(linked), len(b), unlinked))


def case_cupy_failure2():
    """Issue 31, the bar: CuPy's test_stream_capture_failure2 in C. The end on
    a stream that is not capturing (401, CGS021) and the end on a stream that
    joined another's capture (903, CGS022) are both named before the call,
    with predicted_rc equal to the stand-in's answer; the origin's end
    answers 901 (not 904: the joined end invalidated the capture) and links
    back to the CGS022 end; nothing else is named, nothing contradicted."""
    exe = os.path.join(INTEG, "cupy_failure2")
    bare, _, _ = run(exe, shim=False)
    check(bare.returncode == 0, "bare: the program's own checks pass (401, 903, 901): %s" % bare.stdout[-300:])
    shim, recs, _ = run(exe)
    same(bare, shim)
    v = [r for r in recs if r.get("ev") == "violation"]
    ends = calls(recs, "cuStreamEndCapture")
    check([e.get("rc") for e in ends] == [401, 903, 901], "the ends answer 401, 903, 901 (%s)" % [e.get("rc") for e in ends])
    check([r.get("rule") for r in v] == ["CGS021", "CGS022"], "named: CGS021, CGS022 and nothing else (%s)" % [r.get("rule") for r in v])
    for rule, end in zip(("CGS021", "CGS022"), ends):
        mine = [r for r in v if r.get("rule") == rule]
        check(mine and mine[0].get("predicted_rc") == end.get("rc") and mine[0]["seq"] < end["seq"]
              and (not ends.index(end) or ends[ends.index(end) - 1]["seq"] < mine[0]["seq"]),
              "%s before its end, predicted_rc %s = the answer %s" % (rule, mine and mine[0].get("predicted_rc"), end.get("rc")))
    mism = [r for r in recs if r.get("ev") == "mismatch"]
    check(not mism, "no mismatch (%s)" % [(r.get("api"), r.get("rule"), r.get("rc")) for r in mism])
    b = [r for r in recs if r.get("ev") == "broken"]
    check(len(b) == 1 and b[0].get("rc") == 901 and b[0].get("by_rule") == "CGS022",
          "the origin's 901 links back to the joined end (%s)" % [(r.get("rc"), r.get("by_rule")) for r in b])


def case_mispredicted():
    """Issue 31: a prediction the driver disagrees with is a regression case
    the report names. The stand-in refuses every update (STANDIN_UPDATE_REFUSE,
    fault injection: a refusal the model cannot foresee); the mismatch record
    names the call (exec, graph, the application's site), the report's
    "Predictions the driver disagreed with" shows the call, its site, the
    driver's answer and the shim's prediction, and --dot update:1 draws both
    sides of the unpredicted failure."""
    exe = os.path.join(INTEG, "..", "rules", "valid_update-same-topology")
    shim, recs, tmp = run(exe, extra={"STANDIN_UPDATE_REFUSE": "2"})
    mism = [r for r in recs if r.get("ev") == "mismatch"]
    check(len(mism) == 1, "one mismatch (%d)" % len(mism))
    if not mism:
        return
    m = mism[0]
    check(m.get("api") == "cuGraphExecUpdate_v2" and m.get("rule") == "" and m.get("rc") == 910
          and m.get("result") == 2 and m.get("exec") and m.get("graph"),
          "it names the update, the exec and the graph: %s" % {k: m.get(k) for k in ("api", "rc", "exec", "graph")})
    site = m.get("site") or []
    check(site and site[0].startswith("valid_update-same-topology:main"),
          "its site is the application's call: %s" % site[:1])
    sides = {r.get("side") for r in recs if r.get("ev") == "node" and r.get("exec") == m.get("exec")}
    check(sides == {"exec", "graph"}, "both sides' node records follow it (%s)" % sides)
    tool = os.environ.get("CGSHIM_TOOL")
    if not tool:
        return
    log = glob.glob(os.path.join(tmp, "log-*.jsonl"))
    rep = subprocess.run([tool, "report"] + log, capture_output=True, text=True, timeout=60)
    sec = rep.stdout.split("== Predictions the driver disagreed with\n", 1)
    check(rep.returncode == 0 and len(sec) == 2, "the report has the section (rc %d)" % rep.returncode)
    if len(sec) == 2:
        body = sec[1].split("\n== ", 1)[0]
        check("cuGraphExecUpdate_v2 at main (" in body and "valid_update-same-topology" in body
              and "driver: 910 CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, result 2" in body
              and "no refusal predicted" in body and m["exec"] in body,
              "the row names the call, its site, the answer and the prediction:\n%s" % body)
    js = json.loads(subprocess.run([tool, "report", "--json"] + log, capture_output=True, text=True,
                                   timeout=60).stdout)
    rows = js.get("mispredictions") or []
    check(len(rows) == 1 and rows[0].get("rc") == 910 and rows[0].get("rule") is None
          and rows[0].get("site") and rows[0].get("result_name"),
          "--json: mispredictions %s" % rows)
    dot = subprocess.run([tool, "report", "--dot", "update:1"] + log, capture_output=True, text=True, timeout=60)
    check(dot.returncode == 0 and dot.stdout.count("subgraph cluster_") == 2 and "(not predicted)" in dot.stdout,
          "--dot update:1 draws the unpredicted failure (rc %d %s)" % (dot.returncode, dot.stderr[:200]))


def case_launch_passthrough():
    """Issue 14 point 4: successful kernel launches and async copies pass
    straight through (no record even at trace level, where every other hooked
    call has one); one the driver refuses with a capture error while a
    capture is live is recorded (the capture's first failing call)."""
    exe = os.path.join(PROG, "driver_app")
    bare, _, _ = run(exe, shim=False)
    shim, recs, _ = run(exe, level="trace")
    same(bare, shim)
    fast = ("cuLaunchKernel", "cuMemcpyAsync", "cuMemcpyHtoDAsync", "cuMemcpyDtoHAsync", "cuMemsetD8Async")
    n = [r.get("api") for r in recs if r.get("ev") == "call" and (r.get("api") or "").startswith(fast) and r.get("rc") == 0]
    failed = [(r.get("api"), r.get("rc")) for r in recs if r.get("ev") == "call" and (r.get("api") or "").startswith(fast)
              and r.get("rc") != 0]
    other = [r for r in recs if r.get("ev") == "call" and (r.get("api") or "").startswith("cuStreamBeginCapture")]
    check(not n and other, "trace level: no record of a successful launch/copy (%s), other calls traced (%d begin records)"
          % (n[:4], len(other)))
    # driver_app launches into a capture its cuMemAlloc invalidated: the
    # refused launch (901) is recorded, and is that capture's first failing call
    check(failed and all(rc in range(900, 909) for _, rc in failed),
          "a launch refused with a capture error is recorded: %s" % failed)


def case_abandoned_named():
    """A capture left open after an invalidation is named at the next 900."""
    recs = threads_run("abandon")
    ab = [r for r in recs if r.get("ev") == "abandoned" and r.get("reason") == "refused"]
    check(len(ab) == 1, "one abandoned record at the first later refusal (%d)" % len(ab))
    if not ab:
        return
    a = ab[0]
    begin = calls(recs, "cuStreamBeginCapture", rc=0)
    check(begin and a.get("capture") == begin[0].get("capture") and a.get("begin_tid") == begin[0]["tid"],
          "it names the capture %s and its begin thread %s" % (a.get("capture"), a.get("begin_tid")))
    check(bool(a.get("begin_site")) and bool(a.get("site")), "it carries the begin site and the failing call's site")
    check(a.get("api") == "cuCtxSynchronize" and a.get("rc") == 900 and a.get("invalidated") is True,
          "the first failing call after it: %s rc %s" % (a.get("api"), a.get("rc")))
    sync = calls(recs, "cuCtxSynchronize")
    check(sync and sync[0]["rc"] == 900, "cuCtxSynchronize's own record says 900")
    again = calls(recs, "cuStreamBeginCapture", rc=401)
    check(len(again) == 1, "the second begin on the stream fails (401) and is recorded")
    v = [r for r in recs if r.get("ev") == "violation"]
    s = [r for r in recs if r.get("ev") == "summary"]
    check([r.get("api") for r in v] == ["cuMemHostAlloc", "cuCtxSynchronize"],
          "refusals after the capture was named abandoned are counted, not written again: %s" % [r.get("api") for r in v])
    check(s and s[0].get("rules", {}).get("CGS023") == 1,
          "the second begin on the capturing stream is a counted CGS023 (%s)" % (s and s[0].get("rules")))
    check(s and s[0].get("rules", {}).get("CGS007") == 3, "summary counts 3 CGS007 (%s)" % (s and s[0].get("rules")))


def case_invalidated_by_query():
    """captures_invalidated counts an invalidation the shim only sees through
    the application's own capture-info query."""
    recs = threads_run("query")
    inv = [r for r in recs if r.get("ev") == "invalidated"]
    check(len(inv) == 1 and inv[0].get("found_by") == "capture_info"
          and (inv[0].get("api") or "").startswith("cuStreamGetCaptureInfo"),
          "one invalidated record, found by the application's capture-info query (%s)"
          % [(r.get("found_by"), r.get("api")) for r in inv])
    s = [r for r in recs if r.get("ev") == "summary"]
    check(s and s[0].get("captures_invalidated") == 1, "summary: captures_invalidated 1 (%s)" % (s and s[0].get("captures_invalidated")))
    capr = [r for r in recs if r.get("ev") == "capture"]
    check(capr and capr[0].get("rc") == 901, "the capture record says 901")


def report_broken(tmp):
    """`cgshim report` on the run's log: its broken-captures rows and text."""
    tool = os.environ.get("CGSHIM_TOOL")
    if not tool:
        print("note: no cgshim report (built without jansson)")
        return None, None
    logs = sorted(glob.glob(os.path.join(tmp, "log-*.jsonl")))
    js = subprocess.run([tool, "report", "--json", *logs], capture_output=True, text=True, timeout=60)
    tx = subprocess.run([tool, "report", *logs], capture_output=True, text=True, timeout=60)
    return json.loads(js.stdout), tx.stdout


def case_open_at_exit():
    """A capture never ended is listed in the exit summary, and the report
    shows the invalidation and the abandoned capture."""
    exe = os.path.join(INTEG, "capture_threads")
    _, recs, tmp = run(exe, args=("abandon",))
    doc, text = report_broken(tmp)
    if doc is not None:
        rows = doc.get("broken_captures", [])
        what = [(r.get("what"), r.get("found_by") or r.get("reason"), r.get("api")) for r in rows]
        check(what == [("invalidated", "call", "cuMemHostAlloc"), ("abandoned", "refused", "cuCtxSynchronize"),
                       ("abandoned", "exit", None)], "report rows: %s" % what)
        check(doc["summary"].get("captures_abandoned") == 1 and doc["summary"].get("invalidations") == 1,
              "report summary: invalidations %s, captures abandoned %s" % (
                  doc["summary"].get("invalidations"), doc["summary"].get("captures_abandoned")))
        check("== Broken captures" in text and "cuCtxSynchronize" in text, "report text has the Broken captures table")
        print("\n".join(l for l in text.splitlines() if "broken" in l.lower() or "abandoned" in l or "invalidated " in l))
    recs = threads_run("abandon")
    s = [r for r in recs if r.get("ev") == "summary"]
    begin = calls(recs, "cuStreamBeginCapture", rc=0)
    cid = begin[0].get("capture") if begin else None
    check(s and s[0].get("captures_open") == 1 and s[0].get("open_captures") == [cid],
          "summary: captures_open 1, open_captures [%s] (%s)" % (cid, s and (s[0].get("captures_open"), s[0].get("open_captures"))))
    ex = [r for r in recs if r.get("ev") == "abandoned" and r.get("reason") == "exit"]
    check(len(ex) == 1 and ex[0].get("capture") == cid and ex[0].get("begin_site"),
          "an abandoned record (reason exit) names it with its begin site")
    check(len(begin) == 1, "the begin call's deferred record is written (%d)" % len(begin))


PY_CAPTURE = """import ctypes, sys
""" + cgtest.PY_CUDA_STREAM + """def inner(i):
    if i % 2:
        return cu.cuStreamBeginCapture_v2(s, 0)  # BEGIN-ODD
    return cu.cuStreamBeginCapture_v2(s, 0)  # BEGIN-LINE
def outer(i):
    return inner(i)
for i in range(int(sys.argv[1])):
    assert outer(i) == 0
    assert cu.cuStreamEndCapture(s, ctypes.byref(g)) == 0
print("ok")
"""


def python312():
    """A working CPython 3.12 (the frame reader's version), or skip (77)."""
    import shutil
    cands = [shutil.which("python3.12")] + sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.12*/bin/python3.12")))
    py = next((c for c in cands if c and subprocess.run([c, "-c", "0"], capture_output=True).returncode == 0), None)
    if not py:
        print("skip: no python3.12 here")
        sys.exit(77)
    return py


def python_env(logfile, **extra):
    """The shim preloaded into an uninstrumented Python host, JSONL at info
    to logfile. In a TSan build the runtime must be loaded first
    (CGSHIM_TEST_PRELOAD_FIRST, set by meson.build's tsan setup)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    first = os.environ.get("CGSHIM_TEST_PRELOAD_FIRST", "")
    env.update(LD_LIBRARY_PATH=STANDIN, LD_PRELOAD=(first + " " + LIB).strip(), CGSHIM_LOG="info",
               CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=logfile, **extra)
    return env


def case_python_frames():
    """CPython 3.12 frames read without the GIL (ctypes releases it): the
    begin-capture site names the script's lines, also when repeated (the
    reader's caches: one function begins from two lines in turn, and each
    begin names its own)."""
    py = python312()
    tmp = tempfile.mkdtemp(prefix="cgshim-py-")
    script = os.path.join(tmp, "cap312.py")
    open(script, "w").write(PY_CAPTURE)
    line = [i for i, l in enumerate(PY_CAPTURE.splitlines(), 1) if "BEGIN-LINE" in l][0]
    odd = [i for i, l in enumerate(PY_CAPTURE.splitlines(), 1) if "BEGIN-ODD" in l][0]
    env = python_env(os.path.join(tmp, "log.jsonl"))
    env["CGSHIM_LOG"] = "debug"  # every begin: at info the steady ones are condensed
    p = subprocess.run([py, script, "6"], env=env, capture_output=True, text=True, timeout=120)
    check(p.returncode == 0 and p.stdout.strip() == "ok", "python3.12 ctypes capture loop runs under the shim (%s)" % p.stderr[-200:])
    recs = [json.loads(l) for l in open(os.path.join(tmp, "log.jsonl")) if l.strip()]
    b = calls(recs, "cuStreamBeginCapture", rc=0)
    b.sort(key=lambda r: r["seq"])
    check(len(b) == 6, "6 begin records (%d)" % len(b))
    s = [r for r in recs if r.get("ev") == "summary"]
    check(s and s[0].get("sites_deferred", 0) >= 1,
          "the first begin's walk waited for the capture's end: new frames (sites_deferred %s)"
          % (s[0].get("sites_deferred") if s else None))
    check(len(b) == 6 and all(r.get("site") == b[i % 2].get("site") for i, r in enumerate(b)) and len(b[0].get("site", [])) > 2,
          "the deferred walk's site is the later begins' site from the same line, native frames included (%s)" % (b[0].get("site") if b else None))
    sites = [r.get("site", [])[:2] for r in b]
    want = [["py:%s:%d:inner" % (script, odd if i % 2 else line), "py:%s:%d:outer" % (script, odd + 3)] for i in range(6)]
    check(sites == want, "each begin site names its own line: %s (got %s)" % (want[:2], sites[:2]))
    print("pre_ns %s post_ns %s" % ([r.get("pre_ns") for r in b], [r.get("post_ns") for r in b]))
PY_PIN = """import ctypes, threading
""" + cgtest.PY_CUDA_STREAM + """libc = ctypes.CDLL(None)
def name(n):
    libc.prctl(15, ctypes.c_char_p(n), 0, 0, 0)  # PR_SET_NAME: CPython does not set it
name(b"EngineCore")
res = {}
def pin_memory():
    name(b"pt_pin_memory")
    p = ctypes.c_void_p()
    res["rc"] = cu.cuMemHostAlloc(ctypes.byref(p), 1 << 20, 0)  # PIN-LINE
assert cu.cuStreamBeginCapture_v2(s, 0) == 0  # BEGIN-LINE
t = threading.Thread(target=pin_memory, name="pt_pin_memory")
t.start(); t.join()
print("alloc", res["rc"], "end", cu.cuStreamEndCapture(s, ctypes.byref(g)))
"""


def case_python_culprit():
    """Issue 14 on the stand-in, the shape of the PyTorch test: a Python
    thread named with prctl allocates pinned memory while the main thread
    (EngineCore) holds a Global capture: the violation and the 901's link
    name the thread and the script's line. With CGSHIM_CAPTURE_MODE=
    thread_local the allocation and the capture succeed."""
    py = python312()
    tmp = tempfile.mkdtemp(prefix="cgshim-pin-")
    script = os.path.join(tmp, "pin.py")
    open(script, "w").write(PY_PIN)
    pin = [i for i, l in enumerate(PY_PIN.splitlines(), 1) if "PIN-LINE" in l][0]
    begin = [i for i, l in enumerate(PY_PIN.splitlines(), 1) if "BEGIN-LINE" in l][0]

    def go(extra, log):
        env = python_env(os.path.join(tmp, log), **extra)
        p = subprocess.run([py, script], env=env, capture_output=True, text=True, timeout=120)
        return p, [json.loads(l) for l in open(os.path.join(tmp, log)) if l.strip()]

    p, recs = go({}, "g.jsonl")
    check(p.stdout.strip() == "alloc 900 end 901", "global: the allocation fails, the capture ends 901 (%r %s)" % (p.stdout, p.stderr[-200:]))
    v = [r for r in recs if r.get("ev") == "violation" and r.get("rule") == "CGS007"]
    want = "py:%s:%d:pin_memory" % (script, pin)
    check(v and v[0].get("call_thread") == "pt_pin_memory" and v[0].get("capture_thread") == "EngineCore"
          and want in v[0].get("site", []),
          "CGS007 names thread pt_pin_memory, the capture's EngineCore and %s (%s)" % (
              want, v and (v[0].get("call_thread"), v[0].get("capture_thread"), v[0].get("site"))))
    b = [r for r in recs if r.get("ev") == "broken"]
    check(b and b[0].get("by_thread") == "pt_pin_memory" and want in b[0].get("by_site", [])
          and any(":%d:" % begin in f for f in b[0].get("begin_site", [])),
          "the 901 links to it, with the begin line %d (%s)" % (begin, b and b[0].get("msg")))
    p, recs = go({"CGSHIM_CAPTURE_MODE": "thread_local"}, "t.jsonl")
    check(p.stdout.strip() == "alloc 0 end 0", "thread_local: allocation and capture succeed (%r)" % p.stdout)
    check(not [r for r in recs if r.get("ev") in ("violation", "broken")]
          and len([r for r in recs if r.get("ev") == "capture_mode"]) == 1,
          "no violation, one capture_mode record")


HOST = os.path.join(INTEG, "host_first")


def lines(out):
    return dict(l.split(": ", 1) for l in out.splitlines() if ": " in l)


def case_fork_policies():
    """Issue 12.1: a forked child must not block on the shim's locks (the
    policy's rwlock was write-locked by the parent's thread at the fork)."""
    for pol in ("log", "reinstantiate", "abort"):
        p, recs, _ = run(HOST, level="trace", args=("fork",), extra={"CGSHIM_ON_UPDATE_FAILURE": pol})
        print(p.stdout)
        check(p.returncode == 0 and "fork: 3/3 children exited 0, 0 failed launches" in p.stdout,
              "%s: every child updates, launches, destroys and exits: %s" % (pol, p.stdout.strip().splitlines()[-1:]))
        if pol == "reinstantiate":
            check(any(r.get("ev") == "rewrite" for r in recs), "reinstantiate: the parent's update was rewritten")
        pids = {r["pid"] for r in recs if r.get("ev") == "summary"}
        check(len(pids) == 4, "%s: exit summaries from the parent and 3 children (%d)" % (pol, len(pids)))


def case_nullout():
    """Issue 12.4: NULL out-pointers reach the driver as given."""
    bare, _, _ = run(HOST, shim=False, args=("nullout",))
    print(bare.stdout)
    b = lines(bare.stdout)
    check(b["v1(changed topology, NULL, &res)"] == "rc=1", "bare: v1 with a NULL error-node pointer is 1")
    for pol in ("log", "reinstantiate"):
        shim, recs, _ = run(HOST, args=("nullout",), extra={"CGSHIM_ON_UPDATE_FAILURE": pol})
        sh = lines(shim.stdout)
        for k, v in b.items():
            check(sh.get(k) == v, "%s: %s -> %s (bare %s)" % (pol, k, sh.get(k), v))
        check(not [r for r in recs if r.get("ev") == "rewrite"], "%s: no rewrite of an update the driver refuses" % pol)
        check(not [r for r in recs if r.get("ev") == "mismatch"], "%s: no prediction mismatch" % pol)


def case_errno():
    """Issue 12.5: errno as the real call left it, even when the shim's own
    log writes fail (ENOSPC on /dev/full) before and after the call."""
    bare, _, _ = run(HOST, shim=False, args=("errno",))
    print(bare.stdout)
    check("errno=4242" in bare.stdout, "bare: the stand-in leaves errno alone")
    for f in ("/dev/full", None):
        shim, _, _ = run(HOST, level="trace", args=("errno",), extra={"CGSHIM_LOG_FILE": f})
        b, sh = lines(bare.stdout), lines(shim.stdout)
        for k, v in b.items():
            check(sh.get(k) == v, "log %s: %s: %s (bare %s)" % (f or "stderr", k, sh.get(k), v))


def case_fd_identity():
    """Issue 12.6: records never land in a file the program opened on a
    descriptor the shim's sink used to be (fd 2, or the log file's)."""
    for how in ("fd2", "fd2early", "daemon", "dup2"):
        for logfile in ((None,) if how.startswith("fd2") else (None, "file")):
            tmp = tempfile.mkdtemp(prefix="cgshim-fd-")
            data = os.path.join(tmp, "data.txt")
            extra = {"CGSHIM_LOG_FILE": None, "CGSHIM_LOG_FORMAT": "text"} if logfile is None else {}
            p, recs, _ = run(HOST, level="info", args=(how, data), extra=extra)
            got = open(data).read() if os.path.exists(data) else "(missing)"
            check(p.returncode == 0 and got == "app data\n",
                  "%s, log to %s: data file holds only the program's line (%d bytes: %r)"
                  % (how, logfile or "stderr", len(got), got[:80]))


def case_log_refused():
    """Issue 30: a log file that cannot be opened leaves one plain-text
    warning on stderr, not the file's records spilled there as JSON."""
    tmp = tempfile.mkdtemp(prefix="cgshim-ref-")
    p, _, _ = run(HOST, level="info", args=("noisy",),
                  extra={"CGSHIM_LOG_FILE": os.path.join(tmp, "no-such-dir", "log.jsonl")})
    err = p.stderr.splitlines()
    check(p.returncode == 0, "the program runs and exits 0 (%d)" % p.returncode)
    check(len(err) == 1 and err[0].startswith("cgshim: warning: cannot open CGSHIM_LOG_FILE")
          and "no records are written" in err[0], "one plain warning line on stderr: %r" % err[:3])
    check(not [l for l in err if l.lstrip().startswith("{")], "no JSON on the program's stderr")


def case_env_escape():
    """Issue 30: a newline in an environment value echoed into a warning or
    a record cannot forge a line of its own on stderr (text) or in the log."""
    tmp = tempfile.mkdtemp(prefix="cgshim-esc-")
    forged = "cgshim 2026-01-01T00:00:00.000000Z 1:1 error violation FORGED"
    p, _, _ = run(HOST, level="warn", args=("noisy",), fmt="text",
                  extra={"CGSHIM_RULES_OFF": "CGS9\n" + forged,
                         "CGSHIM_LOG_FILE": os.path.join(tmp, "none", "x\n" + forged)})
    lines = p.stderr.splitlines()
    check(p.returncode == 0 and lines, "the program runs (%d), with warnings" % p.returncode)
    check(not [l for l in lines if "FORGED" in l and not l.startswith("cgshim: warning:")],
          "no forged line: %r" % [l for l in lines if "FORGED" in l][:3])
    check(any("CGS9\\x0acgshim" in l for l in lines) and any("cannot open CGSHIM_LOG_FILE" in l for l in lines),
          "the newline is shown escaped: %r" % lines[-3:])
    # A record's string value (the executable's path) in the text format on stderr.
    exe = os.path.join(tmp, "host\n" + forged)
    with open(HOST, "rb") as src, open(exe, "wb") as dst:  # a copy: /proc/self/exe names it
        dst.write(src.read())
    os.chmod(exe, 0o755)
    env = cgtest.clean_env()
    env.update(LD_LIBRARY_PATH=STANDIN, LD_PRELOAD=LIB, CGSHIM_LOG="info")
    p = subprocess.run([exe, "noisy"], env=env, capture_output=True, text=True, timeout=120)
    lines = p.stderr.splitlines()
    check(p.returncode == 0 and any(" start " in l for l in lines), "text records on stderr (%d)" % p.returncode)
    check(not [l for l in lines if l.startswith(forged[:12]) and "FORGED" in l.split()[5]],
          "a newline in a record value stays inside its line: %r" % [l for l in lines if "FORGED" in l][:3])
    check(any(" start " in l and "host\\x0a" in l for l in lines), "shown as \\x0a in text")


def crash_run(mode, shim, level="debug"):
    tmp = tempfile.mkdtemp(prefix="cgshim-crash-")
    env = cgtest.clean_env()
    env["LD_LIBRARY_PATH"] = STANDIN
    if shim:
        env = cgtest.shim_env(env, LIB, os.path.join(tmp, "c-%p.jsonl"), level)
    p = subprocess.run([os.path.join(INTEG, "crash_host"), mode], env=env, capture_output=True, text=True,
                       timeout=60)
    recs = []
    for f in glob.glob(os.path.join(tmp, "c-*.jsonl")):
        recs += [json.loads(l) for l in open(f) if l.strip()]  # strict: every line JSON
    return p, sorted(recs, key=lambda r: r["seq"])


def case_crash_log():
    """Issue 30.4: a host that dies of a fatal signal leaves a complete log
    (every record made before the crash: no seq missing, the other thread's
    batch too) and one `fatal` record, and ends as it does bare (status,
    output, its own handlers run)."""
    for mode in ("raise", "fault", "abort", "handler", "oneshot", "late", "thread"):
        bare, _ = crash_run(mode, False)
        p, recs = crash_run(mode, True)
        want = {"handler": 42}.get(mode, -6 if mode == "abort" else -11)
        check(p.returncode == bare.returncode and p.stdout == bare.stdout,
              "%s: exit %d and output %r as bare (%d, %r)" % (mode, p.returncode, p.stdout, bare.returncode, bare.stdout))
        # Under a sanitizer its own SEGV handler may end the process (bare too).
        if not os.environ.get("CGSHIM_TEST_SANITIZED"):
            check(bare.returncode == want, "%s: bare ends with %d (%d)" % (mode, want, bare.returncode))
        if os.environ.get("CGSHIM_TEST_SANITIZED") and mode == "fault":
            continue  # UBSan sees the NULL store first and ends the process itself, bare too
        seqs = [r["seq"] for r in recs]
        fatal = [r for r in recs if r["ev"] == "fatal"]
        check(seqs == list(range(1, len(seqs) + 1)) and len(seqs) > 5,
              "%s: %d records, seq 1..N with none missing (%s)" % (mode, len(seqs), seqs[:3] + seqs[-3:]))
        # one-shot: the program's handler, then the default action: a record for each
        check(len(fatal) == (2 if mode == "oneshot" else 1) and recs[-1]["ev"] == "fatal",
              "%s: %d fatal record(s), the last record" % (mode, len(fatal)))
        if not fatal:
            continue
        f = fatal[0]
        sig = "SIGABRT" if mode == "abort" else "SIGSEGV"
        check(f.get("signal") == sig and f.get("fault_tid") == f.get("tid"), "%s: signal %s, fault_tid %s"
              % (mode, f.get("signal"), f.get("fault_tid")))
        check(f.get("live_captures") == 1 and len(f.get("captures", [])) == 1, "%s: the open capture named: %s"
              % (mode, f.get("captures")))
        check(any(c.endswith(":cuStreamBeginCapture_v2") for c in f.get("last_calls", [])),
              "%s: the thread's last call: %s" % (mode, f.get("last_calls")))
        if mode == "oneshot":
            check(fatal[-1].get("then") == "default_action", "oneshot: the second record: then default_action")
        want_then = "program_handler" if mode in ("handler", "oneshot") else "default_action"
        if os.environ.get("CGSHIM_TEST_SANITIZED") and sig == "SIGSEGV":
            want_then = "program_handler"  # ASan's SEGV handler was there before the shim's
        check(f.get("then") == want_then, "%s: then %s" % (mode, f.get("then")))
        if mode == "fault":
            check(f.get("addr") == "0x0" and f.get("code", 0) > 0, "fault: addr %s code %s" % (f.get("addr"), f.get("code")))
        if mode == "thread":
            other = {r["tid"] for r in recs} - {f["tid"]}
            check(other and any(r.get("api", "").startswith("cuGraphInstantiate") and r["tid"] in other for r in recs),
                  "thread: the waiting thread's batched records are in the log")
            check(len(f.get("last_calls", [])) == 2, "thread: both threads' last calls: %s" % f.get("last_calls"))
        launches = [r for r in recs if r["ev"] == "call" and r.get("api") == "cuGraphInstantiateWithFlags"]
        check(launches, "%s: the instantiate before the crash is in the log" % mode)
    # A stack overflow: the program's handler on its alternate stack.
    for mode, room in (("overflow", True), ("overflow8", False)):
        bare, _ = crash_run(mode, False)
        p, recs = crash_run(mode, True)
        check(p.returncode == bare.returncode == 43 and p.stdout == bare.stdout,
              "%s: the program's handler ran on its alternate stack: exit %d, %r (bare %d)"
              % (mode, p.returncode, p.stdout, bare.returncode))
        fatal = [r for r in recs if r["ev"] == "fatal"]
        check(len(fatal) == (1 if room else 0),
              "%s: %d fatal record (the shim writes one only with room on that stack)" % (mode, len(fatal)))
        # A runtime that uses SIGSEGV on purpose: its handler returns, the program
    # goes on and exits 0; one fatal record, batching resumed, nothing lost.
    bare, _ = crash_run("recover", False)
    p, recs = crash_run("recover", True)
    check(p.returncode == bare.returncode == 0 and p.stdout == bare.stdout and "recovered 3 times" in p.stdout,
          "recover: runs on and exits 0 as bare: %r" % p.stdout)
    fatal = [r for r in recs if r["ev"] == "fatal"]
    seqs = [r["seq"] for r in recs]
    check(len(fatal) == 1 and fatal[0].get("then") == "program_handler",
          "recover: one fatal record for three signals (%d)" % len(fatal))
    check(seqs == list(range(1, len(seqs) + 1)) and any(r.get("api") == "cuGraphExecDestroy" for r in recs)
          and any(r["ev"] == "summary" for r in recs), "recover: the records after it and the exit summary are there")
    # info level (the default with a file): the batch holds the lines too
    p, recs = crash_run("raise", True, level="info")
    check(p.returncode == -11 or os.environ.get("CGSHIM_TEST_SANITIZED"), "info: dies of SIGSEGV (%d)" % p.returncode)
    check(recs and recs[-1]["ev"] == "fatal" and [r["seq"] for r in recs] == list(range(1, len(recs) + 1)),
          "info: %d records, none missing, fatal last" % len(recs))


def case_log_fifo():
    """Issue 12.2/12.3: a FIFO with no reader does not hold the host in
    open(); a FIFO whose reader went away does not kill it with SIGPIPE."""
    tmp = tempfile.mkdtemp(prefix="cgshim-fifo-")
    fifo = os.path.join(tmp, "log.fifo")
    os.mkfifo(fifo)
    try:
        p, _, _ = run(HOST, args=("noisy",), extra={"CGSHIM_LOG_FILE": fifo, "CGSHIM_LOG": "info"}, timeout=10)
        ok, err = p.returncode == 0, p.stderr
    except subprocess.TimeoutExpired:
        ok, err = False, "timed out"
    check(ok, "FIFO without a reader: the program runs and exits 0")
    check("no reader" in err and err.count("cannot open CGSHIM_LOG_FILE") == 1,
          "one warning on stderr: %r" % err[:300])
    # reader present at start-up, gone before the records
    rfd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_")}
    env.update(LD_PRELOAD=LIB, LD_LIBRARY_PATH=STANDIN, CGSHIM_LOG="info", CGSHIM_LOG_FILE=fifo)
    child = subprocess.Popen([HOST, "wait"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    ready = child.stdout.readline()  # the shim has opened the FIFO
    os.close(rfd)
    out, err = child.communicate("go\n", timeout=20)
    check(ready == "ready\n" and child.returncode == 0,
          "FIFO reader gone: exit %d (SIGPIPE is -13), as bare" % child.returncode)
    check("noisy update: rc=910" in out, "the program ran to its end")


def case_sigpipe():
    """Issue 12.3: stderr a pipe with no reader; the program never writes to
    it, the shim does: the program must still exit 0."""
    def go(shim):
        r, w = os.pipe()
        os.close(r)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
        env["LD_LIBRARY_PATH"] = STANDIN
        if shim:
            env.update(LD_PRELOAD=LIB, CGSHIM_LOG="info")
        p = subprocess.run([HOST, "noisy"], env=env, stdout=subprocess.PIPE, stderr=w, text=True, timeout=60)
        os.close(w)
        return p
    bare, shim = go(False), go(True)
    check(bare.returncode == 0, "bare exits 0")
    check(shim.returncode == 0, "under the shim, logging to a reader-less stderr pipe: exit %d" % shim.returncode)
    check(shim.stdout == bare.stdout, "same output")


def case_dlsym_absent():
    """Issue 12.10: the shim's cuda* exports are not found where the process
    has no libcudart."""
    bare, _, _ = run(HOST, shim=False, args=("absent",))
    print(bare.stdout)
    check("no libcudart: dlsym(RTLD_DEFAULT,cudaGraphLaunch): null" in bare.stdout, "bare: not found")
    check("with libcudart: dlsym(RTLD_DEFAULT,cudaGraphLaunch): found" in bare.stdout, "bare: found once loaded")
    drv = "driver name via dlsym(RTLD_DEFAULT,cuGraphLaunch): "
    check(drv + "libcuda.so.1" in bare.stdout, "bare: the driver's cuGraphLaunch")
    for extra in ({}, {"CGSHIM_DISABLE": "1"}, {"CGSHIM_RUNTIME_HOOKS": "0"}):
        shim, _, _ = run(HOST, args=("absent",), extra=extra)
        b, sh = bare.stdout.splitlines(), shim.stdout.splitlines()
        if not extra.get("CGSHIM_DISABLE"):  # with the shim on, cu* lookups keep finding its wrapper
            b, sh = [l for l in b if not l.startswith(drv)], [l for l in sh if not l.startswith(drv)]
        check(shim.returncode == 0 and sh == b, "%s: same answers as bare\n%s" % (extra, shim.stdout))


def case_rank_inject():
    """Issue 12.11: %r cannot leave the log directory; a malformed value
    cannot forge a line on stderr."""
    tmp = tempfile.mkdtemp(prefix="cgshim-rank-")
    sub = os.path.join(tmp, "logs")
    os.mkdir(sub)
    for rank in ("../evil", "a/b", "..", "x\ny"):
        p, _, _ = run(HOST, args=("noisy",), extra={"CGSHIM_LOG_FILE": os.path.join(sub, "log-%r.jsonl"), "RANK": rank})
        check(p.returncode == 0, "RANK=%r: exit 0" % rank)
        check(sorted(os.listdir(tmp)) == ["logs"] and os.listdir(sub) == ["log-badrank.jsonl"],
              "RANK=%r: only logs/log-badrank.jsonl (%s, %s)" % (rank, os.listdir(tmp), os.listdir(sub)))
        check("not a plain token" in p.stderr, "RANK=%r: warned" % rank)
        for f in os.listdir(sub):
            os.unlink(os.path.join(sub, f))
    p, _, _ = run(HOST, args=("noisy",), extra={"CGSHIM_LOG_FILE": os.path.join(sub, "log-%r.jsonl"), "RANK": "rank_1.a-b"})
    check(os.listdir(sub) == ["log-rank_1.a-b.jsonl"], "a plain RANK is kept: %s" % os.listdir(sub))
    # Issue 18: the rank from the first of RANK, LOCAL_RANK,
    # OMPI_COMM_WORLD_RANK, SLURM_PROCID that is set, in the file name and
    # in every record's header.
    none = {"RANK": "", "LOCAL_RANK": "", "OMPI_COMM_WORLD_RANK": "", "SLURM_PROCID": ""}
    for env, want in (({"SLURM_PROCID": "5"}, "5"), ({"OMPI_COMM_WORLD_RANK": "4", "SLURM_PROCID": "5"}, "4"),
                      ({"LOCAL_RANK": "3", "OMPI_COMM_WORLD_RANK": "4"}, "3"),
                      ({"RANK": "1", "LOCAL_RANK": "3", "SLURM_PROCID": "7"}, "1")):
        for f in os.listdir(sub):
            os.unlink(os.path.join(sub, f))
        extra = dict(none, CGSHIM_LOG_FILE=os.path.join(sub, "log-%r.jsonl"), CGSHIM_LOG="info", **env)
        p, _, _ = run(HOST, args=("noisy",), extra=extra)
        check(os.listdir(sub) == ["log-%s.jsonl" % want], "%s: log-%s.jsonl (%s)" % (env, want, os.listdir(sub)))
        recs = [json.loads(l) for l in open(os.path.join(sub, "log-%s.jsonl" % want)) if l.startswith("{")] \
            if os.listdir(sub) == ["log-%s.jsonl" % want] else []
        check(recs and all(r.get("rank") == want for r in recs), "%s: every record has rank %s" % (env, want))
    for f in os.listdir(sub):
        os.unlink(os.path.join(sub, f))
    p, _, _ = run(HOST, args=("noisy",), extra=dict(none, CGSHIM_LOG_FILE=os.path.join(sub, "log-%p.jsonl"),
                                                    CGSHIM_LOG="info"))
    recs = [json.loads(l) for f in os.listdir(sub) for l in open(os.path.join(sub, f)) if l.startswith("{")]
    check(recs and all("rank" not in r for r in recs if r.get("ev") != "start") and
          all(r.get("rank") is None for r in recs if r.get("ev") == "start"),
          "no rank variable: no rank in the headers, start rank null")
    forged = "cgshim 1.000000 1:1 error violation rule=CGS999"
    p, _, _ = run(HOST, args=("noisy",), extra={"CGSHIM_LOG": "x\n" + forged, "CGSHIM_BACKTRACE": "\x1b[2J" + "9" * 300})
    print(p.stderr)
    check(not any(l.startswith("cgshim 1.000000") for l in p.stderr.splitlines()), "no forged line on stderr")
    warn = [l for l in p.stderr.splitlines() if l.startswith("cgshim: warning")]
    check(len(warn) == 2 and "\\x0a" in warn[0] and "\x1b" not in warn[1] and len(warn[1]) < 300,
          "both values echoed escaped and cut: %s" % warn)


def case_heap_flat():
    """Deliverable 5 / issue 12.12: the shim's heap stays flat over
    capture/instantiate/launch/destroy cycles with memory nodes. The
    stand-in's own heap grows (a record per graph allocation it made), the
    same in both runs: the shim's share is the difference."""
    n = "3000"
    growth = lambda p: int(re.search(r"heap growth over \d+ cycles: (-?\d+) bytes", p.stdout).group(1))
    bare, _, _ = run(HOST, shim=False, args=("cycles", n))
    shim, _, _ = run(HOST, level="info", args=("cycles", n))
    print(bare.stdout, shim.stdout)
    d = growth(shim) - growth(bare)
    check(shim.returncode == 0 and d <= 65536,
          "the shim's heap over %s cycles with distinct allocation addresses: %+d bytes (limit 64 KiB)" % (n, d))


def case_graphmem_off():
    """Issue 12.12: with CGSHIM_LOG=off, a first launch costs no
    graph-memory queries (they only fed a record)."""
    for lvl, want in (("off", 0), ("info", 16)):
        p, _, _ = run(HOST, level=lvl, args=("launches",), extra={"STANDIN_VERBOSE": "1"})
        n = sum(1 for l in p.stderr.splitlines() if "cuDeviceGetGraphMemAttribute" in l)
        check(p.returncode == 0 and n == want, "CGSHIM_LOG=%s: %d graph-memory queries for 3 first launches and the exit (want %d)"
              % (lvl, n, want))


def case_nonnull():
    """Issue 12.12: no NULL reaches memcpy (a partial summary of a captured
    graph without memory nodes copied 0 bytes from a NULL list). Runs the
    shim built with trapping nonnull-argument checks, at info level (where
    captured graphs get partial summaries)."""
    lib = os.environ["CGSHIM_NONNULL_LIB"]
    for mode in (("plain",), ("nullout",), ("errno",), ("cycles", "50"), ("fork",)):
        p, _, _ = run(HOST, level="info", args=mode, extra={"LD_PRELOAD": lib})
        check(p.returncode == 0 and "runtime error" not in p.stderr,
              "%s under the checked shim: exit %d %s" % (mode[0], p.returncode, p.stderr[-400:]))


CASES = {n[5:]: f for n, f in globals().items() if n.startswith("case_")}
if __name__ == "__main__":
    CASES[sys.argv[1]]()
    sys.exit(T.finish())
