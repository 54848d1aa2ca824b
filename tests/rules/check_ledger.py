#!/usr/bin/env python3
"""tests/rules/check_ledger.py -- the allocation ledger's cases (issue 15):
runs ledger_cases CASE under libcgshim.so on the CPU stand-in and checks the
stale-pointer violations (CGS018 at the free, CGS019 before the replay)
name the right node, operand and allocation kind, and that the graph's own
memory and an updated exec raise nothing.

usage: check_ledger.py --prog PATH --standin-dir DIR --shim LIBCGSHIM
One line per check; closes with "N passed, N failed"."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, check = cgtest.prog_checker("the cgshim tool: also check the report's picture")


def run(case, level="info", dot=None):
    with tempfile.TemporaryDirectory() as d:
        log = os.path.join(d, "l.jsonl")
        env = dict(os.environ, LD_LIBRARY_PATH=a.standin_dir, LD_PRELOAD=a.shim, CGSHIM_LOG=level,
                   CGSHIM_LOG_FILE=log)
        env.pop("CGSHIM_ON_VIOLATION", None)
        p = subprocess.run([a.prog, case], env=env, capture_output=True, text=True, timeout=60)
        check("%s: exits 0" % case, p.returncode == 0, p.stdout + p.stderr)
        recs = [json.loads(l) for l in open(log)] if os.path.exists(log) else []
        if dot is not None:
            q = subprocess.run([a.cgshim, "report", "--dot", "first", log], capture_output=True, text=True,
                               timeout=60)
            dot.append(q.stdout)
    return recs


def viols(recs, rule=None):
    return [r for r in recs if r.get("ev") == "violation" and (rule is None or r.get("rule") == rule)]


def launch_after(recs, v):
    return any(r.get("ev") == "call" and r.get("api", "").startswith(("cuGraphLaunch", "cuGraphUpload"))
               and r["seq"] > v["seq"] for r in recs)


r = run("pinned")
v13, v14 = viols(r, "CGS018"), viols(r, "CGS019")
check("pinned: CGS018 at cuMemFreeHost naming the copy's src", len(v13) == 1 and v13[0].get("api") == "cuMemFreeHost"
      and v13[0].get("operand") == "src" and v13[0].get("alloc_kind") == "pinned host", v13)
check("pinned: CGS019 before the upload", len(v14) == 1 and launch_after(r, v14[0]), v14)
check("pinned: nothing else", {v["rule"] for v in viols(r)} == {"CGS018", "CGS019"}, [v["rule"] for v in viols(r)])

r = run("async")
v13, v14 = viols(r, "CGS018"), viols(r, "CGS019")
check("async: CGS018 at cuMemFreeAsync, stream-ordered, kernel parameter 0",
      len(v13) == 1 and v13[0].get("api", "").startswith("cuMemFreeAsync") and v13[0].get("alloc_kind") == "stream-ordered"
      and v13[0].get("param") == 0 and v13[0].get("kernel") == "_Z6k_fillPfld", v13)
check("async: CGS019 before the upload", len(v14) == 1 and launch_after(r, v14[0]), v14)

r = run("vmm")
v13, v14 = viols(r, "CGS018"), viols(r, "CGS019")
check("vmm: CGS018 at cuMemUnmap, VMM mapping, kernel parameter 0", len(v13) == 1
      and v13[0].get("api") == "cuMemUnmap" and v13[0].get("alloc_kind") == "VMM mapping" and v13[0].get("param") == 0, v13)
check("vmm: CGS019 before the replay on the re-mapped range", len(v14) == 1 and launch_after(r, v14[0]), v14)
check("vmm: nothing else", {v["rule"] for v in viols(r)} == {"CGS018", "CGS019"}, [v["rule"] for v in viols(r)])

r = run("graphmem")
check("graphmem: the graph's own allocation and an unrelated free raise nothing", not viols(r),
      [v["rule"] for v in viols(r)])

r = run("update")
check("update: CGS018 at the free, no CGS019 after the update repointed the kernel",
      [v["rule"] for v in viols(r)] == ["CGS018"], [v["rule"] for v in viols(r)])
ud = [x for x in r if x.get("ev") == "update_diff"]
check("update: update_diff names parameter 0 of the kernel", len(ud) == 1 and ud[0].get("param") == 0, ud)

r = run("repoint")
ud = [x for x in r if x.get("ev") == "update_diff"]
check("repoint: the pointer moved from one allocation to another is said (update_diff, repointed)",
      len(ud) == 1 and ud[0].get("repointed") is True and ud[0].get("exec_alloc") != ud[0].get("graph_alloc"), ud)
check("repoint: no violation", not viols(r), [v["rule"] for v in viols(r)])

for case, word in (("refuse-kind", "kind HtoD -> DtoD"), ("refuse-memset", "128 -> 256 bytes")):
    r = run(case)
    v = viols(r, "CGS001")
    check("%s: CGS001 predicts ParametersChanged naming the node's change" % case,
          len(v) == 1 and v[0].get("predicted_result") == 5 and word in v[0].get("msg", ""), v)
    check("%s: no mismatch with the driver" % case, not [x for x in r if x.get("ev") == "mismatch"],
          [x for x in r if x.get("ev") == "mismatch"])

# issue 31: the node-type row of docs/update-refusals.md, and a copy's kind
# changed inside a child graph node (the update is recursive)
for case, res, word in (("refuse-type", 3, "changed type: memset in the exec, kernel in the graph"),
                        ("refuse-child-kind", 5, "its child graph differs: node 0 (memcpy): kind HtoD -> DtoD")):
    r = run(case)
    v = viols(r, "CGS001")
    check("%s: CGS001 predicts result %d before the 910" % (case, res),
          len(v) == 1 and v[0].get("predicted_result") == res and word in v[0].get("msg", ""), v)
    check("%s: no mismatch with the driver" % case, not [x for x in r if x.get("ev") == "mismatch"],
          [x for x in r if x.get("ev") == "mismatch"])

# a child graph changed in place through its handle after its parent was
# walked: the first update is named, the second (now the same shape) is not
r = run("child-inplace")
v = viols(r, "CGS001")
check("child-inplace: one CGS001 (the first update), none after the child changed in place",
      len(v) == 1 and "its child graph differs" in v[0].get("msg", ""), v)
check("child-inplace: no mismatch with the driver", not [x for x in r if x.get("ev") == "mismatch"],
      [x for x in r if x.get("ev") == "mismatch"])

if a.cgshim:
    dot = []
    run("async", "debug", dot)
    pic = dot[0] if dot else ""
    lines = [l for l in pic.splitlines() if "kernel" in l and "label" in l]
    check("picture: the kernel node is labelled with its short name and launch shape",
          any("k_fill" in l and "<<<(4,1,1),(256,1,1)>>>" in l for l in lines), pic)
    check("picture: the kernel node holding the freed pointer is red",
          any("fillcolor=\"#fb8072\"" in l and "stale pointer" in l for l in lines), pic)

T.finish(exit=True)
