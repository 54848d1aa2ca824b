#!/usr/bin/env python3
"""tests/gpu/fidelity.py BUILD BIN -- the fidelity harness (issue 4).

Runs every rule reproducer (kernels/rules/cgsNNN_*.cu, nvcc-built into BIN)
and every valid program (kernels/rules/valid_*.cu) on the GPU under the shim,
and prints one table row per scenario: the real driver's result for the
call the rule is about, whether the rule was logged before that call (and
which), and the verdict. A reproducer passes when its rule fired before the
call, the driver then answered what the rule predicted, no other rule
fired and the model reported no mismatch. A correct program (valid_*, and
the real stacks below) passes when its output and exit status under the
shim are its bare ones, it exits 0, the shim wrote a log and no warn or
error record and no mismatch (a hint is no fault: docs/rules/README.md);
judge_correct() is that one verdict for both. Before the closing line,
precision (warn/error records on the correct programs: 0 wanted) beside
recall (refusals, rules that predict a driver error, announced before the
call: all wanted).
Then the real stacks (FIDELITY_REAL=0 leaves them out): correct programs
on cuBLAS, PyTorch eager, torch.cuda.graph, torch.compile, JAX and CuPy, each
run bare and under the shim (their own precision line).
Closing line: N passed, N failed.

fidelity.py --self-test (no GPU; the 'fidelity-judge' test of the tools
suite) judges canned runs with judge_correct() and judge_reproducer() and
checks the verdicts: a broken verdict fails it. On the CPU stand-in the
whole table runs too (the 'fidelity-standin' test of the rules suite: BIN
the rules build folder, FIDELITY_REAL=0, no GPU so the NCCL rows skipped).
"""
import glob, json, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(ROOT, "tests", "rules"))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
from run_rule import EXPECT, COMPANIONS, SEVERITY, expect, faults  # noqa: E402  one table for CPU and GPU
import cgtest  # noqa: E402  (a cross build: the programs through meson's exe wrapper)


DEFAULT_OFF = ()  # rules off by default: none since CGS017 was retired
LIB = None  # the shim, BUILD/shim/libcgshim.so (main)


def run(exe, shim):
    tmp = tempfile.mkdtemp(prefix="fid-")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CGSHIM_") and k != "LD_PRELOAD"}
    if shim:
        env.update(LD_PRELOAD=LIB, CGSHIM_LOG="info", CGSHIM_LOG_FORMAT="jsonl",
                   CGSHIM_LOG_FILE=os.path.join(tmp, "l-%p.jsonl"))
        # A rule off by default (CGS017) is switched on for its own reproducer
        # only: every other program runs with the defaults a user gets.
        if isinstance(exe, str) and os.path.basename(exe).startswith(DEFAULT_OFF):
            env["CGSHIM_RULES_OFF"] = ""
    p = subprocess.run(exe if isinstance(exe, list) else [exe], env=env, capture_output=True, text=True,
                       timeout=240)
    recs = []
    for f in glob.glob(os.path.join(tmp, "*.jsonl")):
        recs += [json.loads(l) for l in open(f) if l.strip()]
    recs.sort(key=lambda r: r["seq"])
    return p, recs


def _verdict(ok, note):
    return ("PASS" if ok else "FAIL") + ("; " + "; ".join(note) if note else "")


def _common_notes(bare, shim, mism):
    """What spoils any row: output or exit status that differs under the
    shim, the program's own checks failing bare, a model mismatch."""
    note = []
    if bare.stdout != shim.stdout or bare.returncode != shim.returncode:
        note.append("output differs")
    if bare.returncode:
        note.append("program's own checks failed: exit %d bare%s" % (
            bare.returncode, (": " + bare.stderr[-300:].replace("\n", " ")) if bare.stderr else ""))
    if mism:
        note.append("mismatch %s" % mism[0])
    return note


def judge_correct(label, bare, shim, recs):
    """A correct program run bare (bare) and under the shim (shim, its
    records recs): (row, fault records, hint count). It passes when the two
    runs print and exit the same, exit 0, the shim wrote a log, no warn or
    error record and no mismatch."""
    viol = [r for r in recs if r["ev"] == "violation"]
    mism = [r for r in recs if r["ev"] == "mismatch"]
    bad = faults(viol)
    note = _common_notes(bare, shim, mism)
    if not recs:
        note.append("no log: the shim did not load")
    if bad:
        note.append("warn/error records")
    fired = ",".join(sorted({"%s %s" % (v["rule"], v.get("severity")) for v in viol})) or "none"
    row = (label, "exit %d, %d records" % (shim.returncode, len(recs)),
           "silent" if not viol else ("hints only: " if not bad else "") + fired, _verdict(not note, note))
    return row, bad, len(viol) - len(bad)


def judge_reproducer(name, bare, shim, recs):
    """A rule's reproducer (name cgsNNN_...): (row, refusal) where refusal
    is None when the rule predicts no driver error, else whether the rule
    fired before the call and the driver refused it as predicted."""
    rule = "CGS" + re.match(r"cgs(\d+)", name).group(1)
    api, pred = expect(name, rule)
    viol = [r for r in recs if r["ev"] == "violation"]
    mism = [r for r in recs if r["ev"] == "mismatch"]
    mine = [v for v in viol if v["rule"] == rule]
    others = {v["rule"] for v in viol} - {rule} - COMPANIONS.get(rule, set())
    first = mine[0] if mine else None
    # the driver's answer: the first call of that api after the violation
    calls = [r for r in recs if r["ev"] == "call" and re.sub(r"_ptsz$", "", r.get("api", "")) == api
             and (first is None or r["seq"] > first["seq"])]
    real = calls[0]["rc"] if calls else None
    if rule == "CGS011":  # found after the fact: at destroy or exit
        real = 0
    logged = "yes, %s (seq %d < %s)" % (rule, first["seq"], calls[0]["seq"] if calls else "exit") if first else "no"
    note = _common_notes(bare, shim, mism)
    ok = bool(first) and not note and not others
    if first and first.get("severity") != SEVERITY.get(rule):
        ok = False
        logged += " severity %s, rules.def %s" % (first.get("severity"), SEVERITY.get(rule))
    refusal = None
    if pred is not None:  # a refusal: announced when the rule fired before the call that got it
        refusal = bool(first) and real == pred
        ok = ok and real == pred
    realtxt = "%s -> %s" % (api, real) if real is not None else "%s (no call record)" % api
    if pred is not None:
        realtxt += " (predicted %d)" % pred
    if others:
        note.append("also fired " + ",".join(sorted(others)))
    return (name, realtxt, logged, _verdict(ok, note)), refusal


def show_failure(label, bare, shim):
    print("---- %s stdout bare:\n%s\n---- shim:\n%s" % (label, bare.stdout[-800:], shim.stdout[-800:]))


# NCCL's reproducers need two ranks: with one rank, NCCL's all-reduce puts
# no kernel of its own into the capture, so CGS027/CGS028 have nothing to
# name. Measured 2026-11-29: on one H200 cgs027's graph held only the
# program's k_add; on a two-H200 host, the programs still on one rank,
# "cgs027 ... ncclCommDestroy -> 0 ... no" and "cgs028 ... cuMemMap (no
# call record)", both FAIL, while PyTorch's two-process all-reduce
# (tests/gpu/multigpu nccl_teardown) got CGS027 on both ranks. The programs
# now take two ranks in one process when two devices are visible
# (kernels/nccl_scenario.h: ncclCommInitAll over devices 0 and 1, the
# all-reduces grouped, one capture per device) and print "nccl ranks: N";
# a row whose program ran on one rank fails, naming that. With fewer than
# two GPUs (CUDA_VISIBLE_DEVICES counted) they are listed as skipped, not
# run. FIDELITY_ONLY=prefix,prefix runs only the programs so named
# (tests/gpu/nccl2: these three).
NEED_TWO = ("cgs027", "cgs028", "valid_nccl")


def gpu_count():
    """GPUs the programs see: nvidia-smi's count, no more than
    CUDA_VISIBLE_DEVICES lists when it is set."""
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=30).stdout
        n = sum(1 for l in out.splitlines() if l.startswith("GPU "))
    except (OSError, subprocess.TimeoutExpired):
        return 0
    vis = os.environ.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        n = min(n, len([d for d in vis.split(",") if d.strip()]))
    return n


def one_rank_note(name, row, bare):
    """A two-rank program (NEED_TWO) run where two GPUs were counted must
    have taken two ranks (its line "nccl ranks: 2"): else its row fails,
    saying so."""
    if not name.startswith(NEED_TWO) or "nccl ranks: 2\n" in bare.stdout:
        return row
    got = re.search(r"nccl ranks: (\d+)", bare.stdout)
    note = "ran on %s rank(s), not 2" % (got.group(1) if got else "no")
    return row[:3] + ("FAIL; " + note + ("; " + row[3].split("; ", 1)[1] if "; " in row[3] else ""),)


def main(build, bindir):
    global LIB
    LIB = os.path.join(build, "shim", "libcgshim.so")
    rows, ok_all = [], 0
    n_valid, n_faults, n_hints, faulty = 0, 0, 0, []  # precision: correct programs
    n_refusals, n_announced, missed = 0, 0, []  # recall: reproducers whose rule predicts an error
    progs = sorted(glob.glob(os.path.join(bindir, "cgs*"))) + sorted(glob.glob(os.path.join(bindir, "valid_*")))
    progs = [p for p in progs if os.path.isfile(p) and os.access(p, os.X_OK)]  # a build folder: sources too
    only = tuple(p for p in os.environ.get("FIDELITY_ONLY", "").split(",") if p)
    if only:
        progs = [p for p in progs if os.path.basename(p).startswith(only)]
    n_gpus = gpu_count()
    skipped = []
    for exe in progs:
        name = os.path.basename(exe)
        if name.startswith(NEED_TWO) and n_gpus < 2:
            skipped.append(name)
            continue
        bare, _ = run(exe, False)
        shim, recs = run(exe, True)
        if name.startswith("valid_"):
            row, bad, hints = judge_correct(name, bare, shim, recs)
            n_valid += 1
            n_faults += len(bad)
            n_hints += hints
            if bad:
                faulty.append("%s (%s)" % (name, ",".join(sorted({v["rule"] for v in bad}))))
        else:
            row, refusal = judge_reproducer(name, bare, shim, recs)
            if refusal is not None:
                n_refusals += 1
                n_announced += refusal
                if not refusal:
                    missed.append(name)
        row = one_rank_note(name, row, bare)
        rows.append(row)
        ok_all += row[3].startswith("PASS")
        if not row[3].startswith("PASS"):
            show_failure(name, bare, shim)

    # Real stacks (issue 31): correct programs nobody here wrote the library of,
    # each run bare and under the shim, judged as the valid programs are.
    # FIDELITY_REAL=0 leaves them out.
    REAL = [("real: cuBLAS binary (capture, launch, update)", [os.path.join(bindir, "real-cublas")]),
            ("real: PyTorch eager training", [sys.executable, os.path.join(HERE, "torch_eager.py")]),
            ("real: PyTorch torch.cuda.graph + make_graphed_callables",
             [sys.executable, os.path.join(HERE, "torch_graphed.py")]),
            ("real: PyTorch capture + replay", [sys.executable, os.path.join(HERE, "torch_capture.py")]),
            ("real: torch.compile reduce-overhead", [sys.executable, os.path.join(HERE, "torch_compile_ro.py")]),
            ("real: JAX command buffers", [sys.executable, os.path.join(HERE, "jax_capture.py")]),
            ("real: CuPy capture + launch", [sys.executable, os.path.join(HERE, "cupy_capture.py")])]
    n_real, n_real_faults, real_faulty = 0, 0, []
    for label, argv in (REAL if os.environ.get("FIDELITY_REAL", "1") != "0" else []):
        if not os.path.exists(argv[-1]):
            rows.append((label, "not built", "-", "FAIL (missing %s)" % argv[-1]))
            continue
        try:
            bare, _ = run(argv, False)
            shim, recs = run(argv, True)
        except subprocess.TimeoutExpired:
            rows.append((label, "timeout", "-", "FAIL (timeout)"))
            continue
        row, bad, _ = judge_correct(label, bare, shim, recs)
        n_real += 1
        n_real_faults += len(bad)
        if bad:
            real_faulty.append("%s (%s)" % (label, ",".join(sorted({v["rule"] for v in bad}))))
        rows.append(row)
        ok_all += row[3].startswith("PASS")
        if not row[3].startswith("PASS"):
            show_failure(label, bare, shim)

    hdr = ("scenario", "real driver result", "rule logged before the call", "verdict")
    w = [max(len(r[i]) for r in rows + [hdr]) for i in range(4)]
    print("| " + " | ".join(h.ljust(w[i]) for i, h in enumerate(hdr)) + " |")
    print("|" + "|".join("-" * (x + 2) for x in w) + "|")
    for r in rows:
        print("| " + " | ".join(c.ljust(w[i]) for i, c in enumerate(r)) + " |")
    print("precision: %d warn/error records on %d correct programs (want 0)%s; %d hint records" % (
        n_faults, n_valid, ": " + ", ".join(faulty) if faulty else "", n_hints))
    if n_real:
        print("precision on real stacks: %d warn/error records on %d correct programs (want 0)%s" % (
            n_real_faults, n_real, ": " + ", ".join(real_faulty) if real_faulty else ""))
    print("recall: %d of %d refusals announced before the call (want all)%s" % (
        n_announced, n_refusals, ": missed " + ", ".join(missed) if missed else ""))
    if skipped:
        print("skipped on %d GPU(s), need two ranks (nvidia-h200-x2): %s" % (n_gpus, ", ".join(skipped)))
    print("%d passed, %d failed" % (ok_all, len(rows) - ok_all))
    return 0 if ok_all == len(rows) else 1


def self_test():
    """judge_correct() and judge_reproducer() on canned runs: each verdict
    and note is checked, so a verdict that passes what it must fail (or the
    reverse) fails this."""
    T = cgtest.Tally()
    P = subprocess.CompletedProcess

    def out(text="result 42\n", rc=0, err=""):
        return P([], rc, text, err)

    def rec(ev, **kw):
        return dict(kw, ev=ev)

    def logged(recs):  # a log in the order given: seq 1, 2, ...
        return [dict(r, seq=i + 1) for i, r in enumerate(recs)]

    call = rec("call", api="cuGraphLaunch", rc=0)
    hint = rec("violation", rule="CGS018", severity="hint")
    warn = rec("violation", rule="CGS024", severity="warn")
    mism = rec("mismatch", api="cuGraphLaunch")

    def correct(what, bare, shim, recs, ok, note=None, faults_n=0, hints=0):
        row, bad, h = judge_correct("valid_x", bare, shim, logged(recs))
        T.check(row[3].startswith("PASS") == ok and (note is None or note in row[3])
                and len(bad) == faults_n and h == hints and len(row) == 4,
                "correct program, %s: %s" % (what, "PASS" if ok else "FAIL"), repr((row, len(bad), h)))

    correct("silent, same output", out(), out(), [call], True, hints=0)
    correct("a hint only", out(), out(), [call, hint], True, hints=1)
    correct("a warn", out(), out(), [call, warn], False, "warn/error", faults_n=1)
    correct("output differs", out(), out("result 41\n"), [call], False, "output differs")
    correct("exit status differs", out(), out(rc=1), [call], False, "output differs")
    correct("own checks fail bare and shimmed", out(rc=1, err="boom\n"), out(rc=1), [call], False,
            "exit 1 bare: boom")
    correct("a mismatch", out(), out(), [call, mism], False, "mismatch")
    correct("no log", out(), out(), [], False, "did not load")

    # a refusal: CGS004 predicts the driver's error on its api
    rule = "CGS004"
    api, pred = EXPECT[rule]
    sev = SEVERITY[rule]

    def repro(what, recs, ok, refusal, note=None, shim=None):
        row, got = judge_reproducer("cgs004_x", out(), shim or out(), logged(recs))
        T.check(row[3].startswith("PASS") == ok and got == refusal and (note is None or note in " ".join(row[1:])),
                "reproducer, %s: %s" % (what, "PASS" if ok else "FAIL"), repr((row, got)))

    v = rec("violation", rule=rule, severity=sev, api=api)
    refused = rec("call", api=api, rc=pred)
    answered = rec("call", api=api, rc=0)
    repro("named before the refused call", [v, refused], True, True)
    repro("not named", [refused], False, False, "no")
    repro("named, the driver did not refuse", [v, answered], False, False)
    repro("named after the call", [refused, v], False, False, "no call record")
    repro("another rule fired too", [v, warn, refused], False, True, "also fired CGS024")
    repro("a mismatch", [v, refused, mism], False, True, "mismatch")
    repro("output differs", [v, refused], False, True, "output differs", shim=out("other\n"))
    other = "error" if sev != "error" else "warn"
    repro("its severity is not rules.def's", [rec("violation", rule=rule, severity=other, api=api), refused],
          False, True, "rules.def")

    # a reproducer judged by its own call (run_rule.EXPECT_PROG): CGS014's
    # synchronous copy, not the rule's usual cuStreamQuery
    v14 = rec("violation", rule="CGS014", severity=SEVERITY["CGS014"], api="cuMemcpyDtoH_v2")
    for what, call, ok in (("its own call refused", "cuMemcpyDtoH_v2", True),
                           ("only the rule's usual call refused", "cuStreamQuery", False)):
        row, got = judge_reproducer("cgs014_sync-copy-in-capture", out(), out(),
                                    logged([v14, rec("call", api=call, rc=906)]))
        T.check(row[3].startswith("PASS") == ok and got == ok,
                "reproducer with its own call, %s: %s" % (what, "PASS" if ok else "FAIL"), repr((row, got)))

    # a two-rank program that ran on one rank fails, saying so
    row = ("cgs027_x", "ncclCommDestroy -> 0", "yes", "PASS")
    for what, name, text, want in (("two ranks", "cgs027_x", "nccl ranks: 2\n", "PASS"),
                                   ("one rank", "cgs027_x", "nccl ranks: 1\n", "FAIL; ran on 1 rank(s), not 2"),
                                   ("no ranks line", "valid_nccl-x", "", "FAIL; ran on no rank(s), not 2"),
                                   ("not a two-rank program", "cgs004_x", "", "PASS")):
        got = one_rank_note(name, row, out(text))
        T.check(got[3] == want and got[:3] == row[:3], "two-rank program, %s: %s" % (what, want), repr(got))
    got = one_rank_note("cgs028_x", row[:3] + ("FAIL; also fired CGS024",), out("nccl ranks: 1\n"))
    T.check(got[3] == "FAIL; ran on 1 rank(s), not 2; also fired CGS024", "two-rank program on one rank, its "
            "other notes kept", repr(got))
    return T.finish()


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    sys.exit(main(sys.argv[1], sys.argv[2]))
