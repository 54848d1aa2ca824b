#!/usr/bin/env python3
"""tests/rules/check_nodes.py -- node details (issue 15) from the shim on the
CPU stand-in: runs node_details under libcgshim.so at debug level and checks
the node records (kernel name, grid, block, parameter layout and values,
memcpy and memset operands, sizes and kinds) and the update_diff record.

usage: check_nodes.py --prog PATH --standin-dir DIR --shim LIBCGSHIM
One line per check; exit status non-zero when any failed."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

a, T, check = cgtest.prog_checker()


with tempfile.TemporaryDirectory() as d:
    log = os.path.join(d, "l.jsonl")
    env = dict(os.environ, LD_LIBRARY_PATH=a.standin_dir, LD_PRELOAD=a.shim,
               CGSHIM_LOG="debug", CGSHIM_LOG_FILE=log)
    p = subprocess.run([a.prog], env=env, capture_output=True, text=True, timeout=60)
    check("program exits 0", p.returncode == 0, p.stdout + p.stderr)
    recs = [json.loads(l) for l in open(log)] if os.path.exists(log) else []

nodes = [r for r in recs if r.get("ev") == "node" and "side" not in r]
first = {}
for r in nodes:
    first.setdefault(r["graph"], []).append(r)
g1 = next(iter(first.values()), [])
by = {r["type"]: r for r in g1}
k, c, m = by.get("kernel", {}), by.get("memcpy", {}), by.get("memset", {})
check("kernel node named by its mangled name", k.get("kernel") == "_Z5k_addPfld", str(k))
check("kernel grid/block/shmem", k.get("grid") == [1, 1, 1] and k.get("block") == [256, 1, 1] and k.get("shmem") == 0, str(k))
pr = k.get("params", [])
check("kernel parameter layout (3 x 8 bytes at 0, 8, 16)",
      k.get("nparams") == 3 and [x[:2] for x in pr] == [[0, 8], [8, 8], [16, 8]], str(pr))
check("kernel parameter values (n = 256, v = 2.0)",
      len(pr) == 3 and int(pr[1][2], 16) == 256 and int(pr[2][2], 16) == 0x4000000000000000, str(pr))
check("memcpy node: HtoD, 256 bytes, operands", c.get("kind") == "HtoD" and c.get("bytes") == 256
      and int(c.get("dst", "0"), 16) == int(pr[0][2], 16) if pr else False, str(c))
check("memset node: 128 bytes of 1-byte elements at buf + 256", m.get("bytes") == 128 and m.get("elem") == 1
      and int(m.get("value", "0"), 16) == 7 and pr and int(m.get("dst", "0"), 16) == int(pr[0][2], 16) + 256, str(m))
ud = [r for r in recs if r.get("ev") == "update_diff"]
check("one update_diff record (the kernel)", len(ud) == 1, str(ud))
u = ud[0] if ud else {}
check("update_diff names kernel, field and parameter 0", u.get("kernel") == "_Z5k_addPfld"
      and u.get("fields") == "parameters" and u.get("param") == 0 and u.get("exec_value") != u.get("graph_value"), str(u))
check("no violation", not [r for r in recs if r.get("ev") == "violation"])
T.finish(exit=True)
