#!/usr/bin/env python3
"""Does `cgshim report`'s memory grow with the number of captures? (issue 35)

Writes a synthetic log of N capture cycles (a capture record, the
instantiation's call record, the exec's launches record; fresh capture ids
and handles each cycle, SITES begin sites, BATCHES batch sizes) at two
sizes, runs every output (text tables, --json, --perfetto, --html) on each
under /usr/bin/time -v, and prints peak RSS, CPU and wall time, and the
growth per capture between the sizes (flat: about 0 bytes a capture).
A benchmark, not a test: it asserts nothing.

usage: report_captures.py --cgshim BUILD/tools/cgshim [--sizes 20000,80000]
                          [--sites 4] [--batches 8] [--outputs tables,json,perfetto,html] [--keep DIR]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser()
ap.add_argument("--cgshim", required=True)
ap.add_argument("--sizes", default="20000,80000")
ap.add_argument("--sites", type=int, default=4)
ap.add_argument("--batches", type=int, default=8)
ap.add_argument("--outputs", default="tables,json,perfetto,html")
ap.add_argument("--keep")
A = ap.parse_args()


def write_log(path, n):
    t, seq = 1_000_000_000, 0
    frames = ["app+0x%x" % (0x1000 + 0x40 * s) for s in range(A.sites)]
    with open(path, "w") as f:
        def rec(ev, **kw):
            nonlocal t, seq
            seq += 1
            t += 1000
            f.write(json.dumps(dict({"v": 1, "ev": ev, "seq": seq, "ts": t, "pid": 7, "tid": 7}, **kw),
                               separators=(",", ":")) + "\n")
        rec("start", lib="cgshim", version="x", exe="/synthetic", ppid=1, log_level="info", log_format="jsonl",
            on_update_failure="log", on_violation="log")
        for i in range(1, n + 1):
            site = [frames[i % A.sites], "app+0x99", "libc.so.6+0x2724a"]
            b = (i // A.sites) % A.batches + 1
            graph, exec_ = "0x%x" % (0x500000 + 0x100 * i), "0x%x" % (0x900000 + 0x100 * i)
            rec("capture", capture=i, stream="0x5000", mode="global", begin_tid=7, graph=graph, graph_id=i, rc=0,
                dur_ns=100000, alloc_nodes=1, alloc_bytes=b << 20, malloc_bytes=0, free_before=80 << 30,
                free_after=(80 << 30) - (b << 20), delta=b << 20, unattributed=0, site=site)
            rec("call", api="cuGraphInstantiateWithFlags", via="cudaGraphInstantiate", rc=0, dur_ns=30000,
                graph=graph, exec=exec_, graph_id=i, exec_id=i, flags=0, nodes=5, alloc_nodes=1, free_nodes=1,
                dev=0, free_before=80 << 30, free_after=80 << 30, delta=0, capture=i, site=["app+0x124f"])
            rec("launches", exec=exec_, graph=graph, count=3, reason="destroy")


def measure(args):
    p = subprocess.run(["/usr/bin/time", "-v", A.cgshim, "report"] + args, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, errors="replace")
    err = p.stderr
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", err).group(1))
    user = float(re.search(r"User time \(seconds\): ([\d.]+)", err).group(1))
    syst = float(re.search(r"System time \(seconds\): ([\d.]+)", err).group(1))
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", err)
    wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    return p.returncode, rss, user + syst, wall


d = A.keep or tempfile.mkdtemp(prefix="cgshim-captures-")
os.makedirs(d, exist_ok=True)
sizes = [int(x) for x in A.sizes.split(",")]
res = {}
print("load average: %s" % open("/proc/loadavg").read().strip())
for n in sizes:
    log = os.path.join(d, "captures-%d.jsonl" % n)
    write_log(log, n)
    print("log of %d captures: %.1f MB" % (n, os.path.getsize(log) / 1e6))
    for out in A.outputs.split(","):
        args = {"tables": [], "json": ["--json"], "perfetto": ["--perfetto", os.path.join(d, "c.perfetto.json")],
                "html": ["--html", os.path.join(d, "c.html")]}[out]
        rc, rss, cpu, wall = measure(args + [log])
        res[(n, out)] = rss
        print("  %-8s exit %d  peak RSS %7.1f MB  cpu %6.2f s  wall %6.2f s" % (out, rc, rss / 1024, cpu, wall))
if len(sizes) >= 2:
    a, b = sizes[0], sizes[-1]
    for out in A.outputs.split(","):
        print("growth %-8s %+.0f bytes a capture (%d -> %d captures)"
              % (out, (res[(b, out)] - res[(a, out)]) * 1024.0 / (b - a), a, b))
print("load average: %s" % open("/proc/loadavg").read().strip())
if not A.keep:
    shutil.rmtree(d)
