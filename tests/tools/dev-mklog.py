#!/usr/bin/env python3
"""Development only: write a small synthetic log (format v1) so the report
can be exercised before the shim and the stand-in programs land. The meson
tests never use it: they run real programs under the real shim.

usage: dev-mklog.py OUT.jsonl [PID]
"""
import json
import sys

out = sys.argv[1]
pid = int(sys.argv[2]) if len(sys.argv) > 2 else 4242
tid = pid
seq = 0
ts = 1_000_000_000 + pid * 1000
recs = []


def rec(ev, **kw):
    global seq, ts
    seq += 1
    ts += 1500
    r = {"v": 1, "ev": ev, "seq": seq, "ts": ts, "pid": pid, "tid": kw.pop("tid", tid)}
    r.update(kw)
    recs.append(r)


site = ["app:main+0x10", "libc.so.6:__libc_start_main+0x80"]
rec("start", lib="libcgshim.so", version="0.1.0", exe="/usr/bin/demo", ppid=1, rank=0,
    log_level="debug", log_format="jsonl", on_violation="log", on_update_failure="log")
pool = "0x1000"
graphs = []
for b, size in enumerate([1 << 20, 2 << 20]):
    g = "0x%x" % (0xa000 + b)
    graphs.append(g)
    cap = str(b + 1)
    rec("call", api="cuStreamBeginCapture_v2", via="cudaStreamBeginCapture", rc=0, dur_ns=800,
        stream="0x55", mode="global", site=site)
    d = "0x%x" % (0x7f0000 + b * 0x100000)
    rec("alloc", dptr=d, size=size, pool=pool, pool_default=True, pool_site=site, stream="0x55",
        capture=cap, graph=g, api="cuMemAllocAsync", site=["app:alloc+0x4"] + site, ipc=False)
    rec("call", api="cuStreamEndCapture", rc=0, dur_ns=1200, stream="0x55", graph=g, nodes=3,
        alloc_nodes=1, free_nodes=1, site=site)
    rec("capture", capture=cap, stream="0x55", mode="global", begin_tid=tid, graph=g, rc=0,
        dur_ns=9000, alloc_nodes=1, alloc_bytes=size, malloc_bytes=0, free_before=8 << 30,
        free_after=(8 << 30) - size - 4096, delta=size + 4096, unattributed=4096, site=site)
    rec("call", api="cuGraphInstantiateWithFlags", via="cudaGraphInstantiate", rc=0, dur_ns=5000,
        graph=g, exec="0x%x" % (0xe000 + b), flags=9, nodes=3, alloc_nodes=1, free_nodes=1, site=site)
    for i, t in enumerate(["mem_alloc", "kernel", "mem_free"]):
        n = {"graph": g, "index": i, "type": t, "deps": [i - 1] if i else []}
        if t.startswith("mem_"):
            n.update(dptr=d, size=size, pool=pool)
        rec("node", **n)
    rec("graphmem", dev=0, used=size, used_high=size, reserved=2 << 20, reserved_high=2 << 20,
        when="instantiate", exec="0x%x" % (0xe000 + b))
    for k in range(3):
        rec("call", api="cuGraphLaunch", via="cudaGraphLaunch", rc=0, dur_ns=300,
            exec="0x%x" % (0xe000 + b), stream="0x55")
rec("violation", rule="CGS003", name="second-exec-with-memory-nodes", severity="error",
    api="cuGraphInstantiateWithFlags", msg="graph already has an exec and holds memory nodes",
    predicted_rc=801, graph=graphs[0], exec="0xe000", site=site, exec_site=site)
rec("call", api="cuGraphInstantiateWithFlags", rc=801, err="CUDA_ERROR_NOT_SUPPORTED", dur_ns=100,
    graph=graphs[0], site=site)
rec("call", api="cuGraphExecUpdate_v2", via="cudaGraphExecUpdate", rc=910,
    err="CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE", dur_ns=100, exec="0xe000", graph=graphs[1],
    result=2, result_name="CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED", site=site)
rec("rewrite", exec="0xe000", old_real="0xe000", new_real="0xe100", graph=graphs[1],
    reason="topology", rc_update=910, dur_ns=4000)
rec("mismatch", api="cuGraphExecUpdate_v2", rule="", predicted_rc=0, rc=910)
for b in range(2):
    rec("launches", exec="0x%x" % (0xe000 + b), graph=graphs[b], count=3, reason="exit")
rec("leak", dptr="0x7f0000", size=1 << 20, pool=pool, exec="0xe000", graph=graphs[0], when="exit",
    site=site)
rec("pool", pool=pool, dev=0, default=True, ipc=False, reserved=2 << 20, reserved_high=2 << 20,
    used=1 << 20, used_high=3 << 20, site=site, allocs=2, alloc_bytes=3 << 20)
rec("graphmem", dev=0, used=1 << 20, used_high=3 << 20, reserved=2 << 20, reserved_high=2 << 20,
    when="exit", exec="")
rec("summary", graphs=2, execs=2, launches=6, updates=1, update_failures=1, failures=2, captures=2,
    captures_invalidated=0, pools=1, alloc_nodes=2, alloc_bytes=3 << 20, rewrites=1, violations=1,
    leaks=1)
with open(out, "w") as f:
    for r in recs:
        f.write(json.dumps(r, separators=(",", ":")) + "\n")
