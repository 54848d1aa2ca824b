#!/usr/bin/env python3
"""Differential test: difftest bare and under the shim, call by call.

Usage: run.py [--seqs N] [--seed S] [--long] [--only CONFIG]
Env from meson: DIFFTEST, CGSHIM_LIB, STANDIN_DIR.

Each configuration runs `difftest SEED N` bare and under LD_PRELOAD of the
shim; the two outputs must be identical line for line (rc, outputs by
identity class, errno). Under CGSHIM_ON_UPDATE_FAILURE=reinstantiate the one
allowed difference is the requested rewrite: an update the driver refuses
with 910 (CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) that the shim turns into
success. Sequences are independent (each starts and ends with no live
object), so a difference is counted per sequence and the comparison goes on
at the next one. Prints one line per configuration, the first differences in
full, and exits 1 on any difference."""
import argparse, os, shutil, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402,F401  (a cross build: programs through meson's exe wrapper)

EXE = os.environ["DIFFTEST"]
LIB = os.environ["CGSHIM_LIB"]
STANDIN = os.environ["STANDIN_DIR"]

CONFIGS = [
    ("info", {"CGSHIM_LOG": "info"}, ""),
    ("trace", {"CGSHIM_LOG": "trace"}, ""),
    ("debug+meminfo", {"CGSHIM_LOG": "debug", "CGSHIM_MEMINFO": "on"}, ""),
    ("disable", {"CGSHIM_DISABLE": "1", "CGSHIM_LOG": "info"}, ""),
    ("reinstantiate", {"CGSHIM_LOG": "info", "CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"}, "rewrite"),
]
UPDATES = ("cuGraphExecUpdate_v2", "cuGraphExecUpdate", "cudaGraphExecUpdate")


def base_env():
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    env["LD_LIBRARY_PATH"] = STANDIN
    return env


CHUNK = 10000  # sequences per process: the stand-in slows down as a process accumulates driver state


def run(args, extra, tmp, tag, seqs):
    """Runs difftest over seqs sequences in chunks of CHUNK, one process
    each, into one output file. Returns (rc, stderr, path)."""
    env = base_env()
    if extra is not None:
        env.update(LD_PRELOAD=LIB, CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=os.path.join(tmp, tag + "-%p.jsonl"))
        env.update(extra)
    path = os.path.join(tmp, tag + ".out")
    with open(path, "w") as f:
        for start in range(0, seqs, CHUNK):
            n = min(CHUNK, seqs - start)
            p = subprocess.run([EXE, args[0], str(n), *args[1:], "from=%d" % start], env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, timeout=1200)
            # one closing line for the whole run
            f.write(p.stdout[:p.stdout.rfind("done ")] if p.returncode == 0 else p.stdout)
            if p.returncode != 0:
                return p.returncode, p.stderr, path
            for lf in os.listdir(tmp):  # the shim's log of this chunk
                if lf.startswith(tag + "-") and lf.endswith(".jsonl"):
                    os.unlink(os.path.join(tmp, lf))
        f.write("done %d\n" % seqs)
    return 0, "", path


def fields(line):
    """(seq, op, rest, rc) of one output line."""
    parts = line.split(" ", 2)
    rest = parts[2] if len(parts) > 2 else ""
    rc = None
    for w in line.split():
        if w.startswith("rc="):
            rc = w[3:]
    return parts[0], parts[1] if len(parts) > 1 else "", rest, rc


def allowed_rewrite(b, s):
    _, op, _, rcb = fields(b)
    _, op2, _, rcs = fields(s)
    return op == op2 and op in UPDATES and rcb == "910" and rcs == "0"


def by_seq(path):
    """Yields (seq, [lines]) per sequence."""
    cur, lines = None, []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            sq = line.split(" ", 1)[0]
            if sq != cur and lines:
                yield cur, lines
                lines = []
            cur = sq
            lines.append(line)
    if lines:
        yield cur, lines


def compare(bare, shim, rewrites_ok):
    """Returns (sequences, calls, differing sequences, rewrites, examples)."""
    nseq = ncalls = ndiff = nrew = 0
    examples = []
    for (sb, lb), (ss, ls) in zip(by_seq(bare), by_seq(shim)):
        nseq += 1
        ncalls += len(lb)
        bad = None
        seq_rew = 0
        for i in range(max(len(lb), len(ls))):
            b = lb[i] if i < len(lb) else "(none)"
            s = ls[i] if i < len(ls) else "(none)"
            if b == s:
                continue
            if rewrites_ok and allowed_rewrite(b, s):
                seq_rew += 1
                continue
            bad = ("sequence %s call %d (%d calls bare, %d under the shim)" % (sb, i, len(lb), len(ls)),
                   lb[max(0, i - 6):i + 1], ls[max(0, i - 6):i + 1])
            break
        nrew += seq_rew
        if bad:
            ndiff += 1
            if len(examples) < 3:
                examples.append(bad)
    return nseq, ncalls, ndiff, nrew, examples


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seqs", type=int, default=int(os.environ.get("DIFF_SEQS", "10000")))
    ap.add_argument("--seed", type=lambda v: int(v, 0), default=int(os.environ.get("DIFF_SEED", "0x12b"), 0))
    ap.add_argument("--long", action="store_true", help="100000 sequences")
    ap.add_argument("--only", default=None)
    a = ap.parse_args()
    if a.long:
        a.seqs = max(a.seqs, 100000)
    tmp = tempfile.mkdtemp(prefix="cgshim-diff-")
    failed = 0
    bare_runs = {}
    print("difftest: seed %#x, %d sequences per configuration" % (a.seed, a.seqs))
    for name, extra, mode in CONFIGS:
        if a.only and name != a.only:
            continue
        args = [hex(a.seed)] + ([mode] if mode else [])
        t0 = time.time()
        if mode not in bare_runs:
            rc, err, path = run(args, None, tmp, "bare" + mode, a.seqs)
            if rc != 0:
                print("FAIL bare run (%s) exited %d: %s" % (mode or "all", rc, err[-2000:]))
                return 1
            bare_runs[mode] = path
        rc, err, path = run(args, extra, tmp, name, a.seqs)
        if rc != 0:
            print("FAIL %s: shim run exited %d: %s" % (name, rc, err[-2000:]))
            failed += 1
            continue
        nseq, ncalls, ndiff, nrew, ex = compare(bare_runs[mode], path, name == "reinstantiate")
        for f in os.listdir(tmp):  # the shim's logs and this output: large in the long mode
            if f.startswith(name):
                os.unlink(os.path.join(tmp, f))
        complete = nseq == a.seqs + 1  # the closing "done" line counts as one
        ok = ndiff == 0 and complete
        print("%s %-14s %d sequences, %d calls, %d differing sequences%s (%.1f s)" %
              ("ok  " if ok else "FAIL", name, nseq - 1, ncalls - 1, ndiff,
               ", %d allowed rewrites" % nrew if name == "reinstantiate" else "", time.time() - t0))
        if not complete:
            print("     incomplete output: %d of %d sequences" % (nseq - 1, a.seqs))
        for what, lb, ls in ex:
            print("  --- %s" % what)
            for l in lb[-7:]:
                print("     bare: %s" % l)
            for l in ls[-7:]:
                print("     shim: %s" % l)
        failed += not ok
    shutil.rmtree(tmp, ignore_errors=True)
    print("difftest: %s" % ("all configurations identical" if not failed else "%d configuration(s) differ" % failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
