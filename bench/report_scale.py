#!/usr/bin/env python3
"""How `cgshim report` scales with the size of a log: generates a synthetic
JSONL log of about SIZE MB from a real one (its records repeated with
shifted ts/seq and fresh handles, as a long-running process would write
them), then times `cgshim report --json` and reads its peak RSS
(getrusage of the child). Targets (issue 16): 200 MB in <= 10 s and
<= 250 MB RSS.

usage: report_scale.py --cgshim BUILD/tools/cgshim --seed LOG.jsonl [--mb 200] [--keep DIR]
       report_scale.py --cgshim EXE --seed-from PROGRAM --lib LIBCGSHIM --standin-dir DIR ...
       [--max-s S] [--max-rss-mb M]   (limits; default: the 200 MB targets scaled)

The meson test report-scale runs it at 20 MB with limits that keep it from
being flaky on a loaded CI host; the 200 MB figure is measured by hand:
    python3 bench/report_scale.py --cgshim build/tools/cgshim --seed-from \
        build/tests/programs/demo_capture --lib build/shim/libcgshim.so \
        --standin-dir build/tests/standin
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ap = argparse.ArgumentParser()
ap.add_argument("--cgshim", required=True)
ap.add_argument("--seed", help="a real log (e.g. the demo at CGSHIM_LOG=trace)")
ap.add_argument("--seed-from", help="run this program under the shim at trace level for the seed")
ap.add_argument("--lib")
ap.add_argument("--standin-dir")
ap.add_argument("--max-s", type=float)
ap.add_argument("--max-rss-mb", type=float)
ap.add_argument("--no-limits", action="store_true", help="check the exit status only (a sanitizer build)")
ap.add_argument("--mb", type=float, default=200)
ap.add_argument("--keep", help="write the log here and keep it")
A = ap.parse_args()
if A.seed_from:
    A.seed = os.path.join(tempfile.mkdtemp(prefix="cgshim-seed-"), "seed.jsonl")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    env.update(LD_PRELOAD=os.path.abspath(A.lib), LD_LIBRARY_PATH=os.path.abspath(A.standin_dir),
               CGSHIM_LOG="trace", CGSHIM_LOG_FILE=A.seed)
    subprocess.run([os.path.abspath(A.seed_from)], env=env, stdout=subprocess.DEVNULL, check=True)
if not A.seed:
    sys.exit("report_scale.py: --seed or --seed-from")

seed = [json.loads(l) for l in open(A.seed) if l.strip()]
seed = [r for r in seed if r.get("ev") not in ("start", "summary")]
d = A.keep or tempfile.mkdtemp(prefix="cgshim-scale-")
os.makedirs(d, exist_ok=True)
path = os.path.join(d, "scale.jsonl")
want = int(A.mb * 1e6)
t0 = min(r["ts"] for r in seed)
span = max(r["ts"] for r in seed) - t0 + 1000
seq = 0
rounds = 0
with open(path, "w") as f:
    f.write(json.dumps({"v": 1, "ev": "start", "seq": 0, "ts": t0, "pid": 1, "tid": 1, "lib": "cgshim",
                        "exe": "/synthetic", "log_level": "trace"}) + "\n")
    while f.tell() < want:
        for r in seed:
            seq += 1
            r2 = dict(r, seq=seq, ts=r["ts"] + rounds * span, pid=1, tid=1)
            # fresh handles each round: a long run keeps creating objects
            for k in ("graph", "exec"):
                if isinstance(r2.get(k), str) and r2[k].startswith("0x"):
                    r2[k] = "0x%x" % (int(r2[k], 16) + rounds * 0x10000)
            f.write(json.dumps(r2, separators=(",", ":")) + "\n")
        rounds += 1
size = os.path.getsize(path)
print("log: %s, %.1f MB, %d records (%d rounds of %d)" % (path, size / 1e6, seq + 1, rounds, len(seed)))
t = time.monotonic()
p = subprocess.run([A.cgshim, "report", "--json", path], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
dt = time.monotonic() - t
rss_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024.0
max_s = A.max_s if A.max_s is not None else 10 * A.mb / 200
max_m = A.max_rss_mb if A.max_rss_mb is not None else 250
ok_t, ok_m = A.no_limits or dt <= max_s, A.no_limits or rss_mb <= max_m
print("report --json: exit %d, %.2f s, peak RSS %.0f MB (limits %.1f s, %.0f MB): time %s, memory %s"
      % (p.returncode, dt, rss_mb, max_s, max_m, "ok" if ok_t else "OVER", "ok" if ok_m else "OVER"))
if p.returncode:
    print(p.stderr.decode(errors="replace")[-2000:])
if not A.keep:
    os.unlink(path)
sys.exit(0 if p.returncode == 0 and ok_t and ok_m else 1)
