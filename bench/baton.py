"""bench/baton.py -- the Python half of lockstep (bench/baton.h), and the
environment rules of the benchmark modes.

Lockstep: the processes of one measurement (bare, under the shim, ...) run at
once, pinned to one core, and pass a baton around a ring of pipes after every
iteration: iteration i of each runs right after iteration i of the one
before it in the ring, so the iterations compared share the host's speed of
the moment (on the lent VM it moves by up to ~2x within a fraction of a
second). Used where an operation is long enough for a turn to be cheap next
to it (capture, update, a cold rewrite), by bench/run.py and
bench/rewrite_lockstep.py."""
import json
import os
import subprocess
import sys


def env(extra=None):
    """The environment of a run: the caller's without LD_PRELOAD or any
    CGSHIM_* variable (a bare run), plus extra."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    if extra:
        e.update(extra)
    return e


def lockstep_ring(cmd, envs, timeout=600):
    """Run cmd once per environment in envs, all at once, in lockstep: process
    k waits for process k-1 (the first starts; the last passes to the first).
    Pin them all to one core in cmd. Returns the stdouts in the order of envs;
    a failing process ends the script with every process's output (a partner
    that exits is read as EOF and no longer holds the ring back)."""
    n = len(envs)
    pipes = [os.pipe() for _ in range(n)]  # pipe k: process k -> process k+1
    procs = []
    for k, e in enumerate(envs):
        r, w = pipes[k - 1][0], pipes[k][1]
        e = dict(e)
        e["BENCH_BATON"] = "%d,%d,%d" % (r, w, 1 if k == 0 else 0)
        procs.append(subprocess.Popen(cmd, env=e, pass_fds=(r, w), stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True))
    for r, w in pipes:
        os.close(r)
        os.close(w)
    outs = [p.communicate(timeout=timeout) for p in procs]
    if any(p.returncode for p in procs):
        print("lockstep run failed: " + " | ".join("rc %d %s" % (p.returncode, (o + er)[-800:])
                                                  for p, (o, er) in zip(procs, outs)))
        sys.exit(1)
    return [o for o, _ in outs]


def lockstep_pair(cmd, env_bare, env_shim, bare_first, timeout=600):
    """lockstep_ring of a bare and a shim process; returns (bare, shim) stdouts."""
    if bare_first:
        return tuple(lockstep_ring(cmd, [env_bare, env_shim], timeout))
    os_, ob = lockstep_ring(cmd, [env_shim, env_bare], timeout)
    return ob, os_


def rewrite_records(paths):
    """From the shim's JSONL logs: (every "rewrite" record, and for each fresh
    re-instantiation in order the pair (instantiate_ns of the driver's
    instantiation, dur_ns of the update call around it))."""
    recs, pairs = [], []
    for f in paths:
        pending = {}
        for line in open(f):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            key = (r.get("tid"), r.get("exec"))
            if r.get("ev") == "rewrite":
                recs.append(r)
                if "instantiate_ns" in r:
                    pending[key] = r["instantiate_ns"]
            elif r.get("ev") == "call" and str(r.get("api", "")).startswith("cuGraphExecUpdate") \
                    and r.get("rewritten") and "dur_ns" in r and key in pending:
                pairs.append((pending.pop(key), r["dur_ns"]))
    return recs, pairs


def iters(out, col=2):
    """{i: value} from the "iter I VALUE [START]" lines of a lockstep run
    (col=3: the iteration's start, where the bench prints it)."""
    t = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) > col and f[0] == "iter":
            t[int(f[1])] = float(f[col])
    return t
