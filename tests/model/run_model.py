#!/usr/bin/env python3
"""tests/model/run_model.py -- check one model scenario (kernels/model/*.cu,
or bench/node_memory.c) built against the CPU stand-in runtime, bare and
under libcgshim.so (CGSHIM_LOG=info, jsonl).

usage: run_model.py --case NAME --prog PATH --standin-dir DIR --shim LIBCGSHIM

Cases: module_reuse, kernel_forms, node_types, three_pools, current_pool, destroy_outstanding, exit_outstanding,
relaxed_malloc, deferred_summary, handle_reuse, device_reset, node_memory. The scenarios print the pool handles they
created on stderr ("pool A 0x..."); stdout is deterministic and must be the
same bare and under the shim. One line per check; exit status non-zero when
any check failed.
"""
import argparse
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

# One reader of the shim's JSONL for every runner (tests/gpu/model.py uses
# it as rm.read_log).
read_log = cgtest.read_log

MiB = 1 << 20
T = cgtest.Tally()
failures = 0  # this runner's failed checks (tests/gpu/model.py reads them)
STANDIN = False  # set by main(): run against the CPU stand-in


def check(ok, what):
    global failures
    if not T.check(ok, what):
        failures += 1
    return ok


def run(cmd, env):
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


def shim_env(base, shim, log):
    return cgtest.shim_env(base, shim, log, "info")


def pools_from_stderr(text):
    """'pool A 0x...' lines -> {'A': 0x..., 'default': 0x...}"""
    out = {}
    for m in re.finditer(r"^pool (\S+) (0x[0-9a-fA-F]+)$", text, re.M):
        out[m.group(1)] = int(m.group(2), 16)
    return out


def hx(v):
    return int(v, 16) if isinstance(v, str) else v


def ev(recs, kind):
    return [r for r in recs if r.get("ev") == kind]


def one(recs, kind):
    xs = ev(recs, kind)
    return xs[-1] if xs else {}


# ---------------------------------------------------------------- cases


def case_three_pools(recs, pools):
    check(set(pools) >= {"A", "B", "default"}, "pool handles printed: %s" % sorted(pools))
    allocs = ev(recs, "alloc")
    check(len(allocs) == 3, "3 alloc records (got %d)" % len(allocs))
    by_size = {a.get("size"): a for a in allocs}
    want = {1 * MiB: ("A", False, "cuMemAllocFromPoolAsync"), 2 * MiB: ("B", False, "cuMemAllocFromPoolAsync"),
            3 * MiB: ("default", True, "cuMemAllocAsync")}
    caps = ev(recs, "capture")
    check(len(caps) == 1, "one capture record (got %d)" % len(caps))
    cap = caps[0] if caps else {}
    for size, (name, dflt, api) in sorted(want.items()):
        a = by_size.get(size)
        if not check(a is not None, "alloc of %d bytes recorded" % size):
            continue
        check(hx(a.get("pool")) == pools.get(name),
              "%d-byte allocation attributed to pool %s %s (got %s)" % (size, name, hex(pools.get(name, 0)), a.get("pool")))
        check(a.get("pool_default") is dflt, "%d bytes: pool_default %s (got %s)" % (size, dflt, a.get("pool_default")))
        check(a.get("api", "").startswith(api), "%d bytes: api %s (got %s)" % (size, api, a.get("api")))
        check(a.get("capture") == cap.get("capture") and a.get("capture"),
              "%d bytes: capture id %s = capture record's %s" % (size, a.get("capture"), cap.get("capture")))
        check(hx(a.get("graph")) == hx(cap.get("graph")), "%d bytes: graph = captured graph" % size)
        check(a.get("stream") == cap.get("stream"), "%d bytes: stream = capture stream" % size)
        check(isinstance(a.get("site"), list) and len(a["site"]) > 0, "%d bytes: has a call site" % size)
        check(a.get("ipc") is False, "%d bytes: ipc false" % size)
        check(isinstance(a.get("tid"), int), "%d bytes: tid present" % size)
    check(hx(by_size.get(1 * MiB, {}).get("pool")) != hx(by_size.get(2 * MiB, {}).get("pool")),
          "pools A and B (equal properties) told apart")
    check(cap.get("alloc_nodes") == 3 and cap.get("alloc_bytes") == 6 * MiB,
          "capture ledger: alloc_nodes 3, alloc_bytes 6 MiB (got %s, %s)" % (cap.get("alloc_nodes"), cap.get("alloc_bytes")))
    check(cap.get("malloc_bytes") == 0, "capture ledger: malloc_bytes 0 (got %s)" % cap.get("malloc_bytes"))
    check(cap.get("mode") == "global", "capture mode global")
    check(not ev(recs, "violation"), "no violations (got %s)" % [v.get("rule") for v in ev(recs, "violation")])
    check(not ev(recs, "leak"), "no leaks")
    pr = {hx(p.get("pool")): p for p in ev(recs, "pool")}
    for name in ("A", "B", "default"):
        p = pr.get(pools.get(name))
        if check(p is not None, "pool record at exit for pool %s" % name):
            check(p.get("allocs") == 1, "pool %s: allocs 1 (got %s)" % (name, p.get("allocs")))
            check(p.get("alloc_bytes") == {"A": 1, "B": 2, "default": 3}[name] * MiB,
                  "pool %s: alloc_bytes (got %s)" % (name, p.get("alloc_bytes")))
            check(p.get("default") is (name == "default"), "pool %s: default %s" % (name, name == "default"))
    d = pr.get(pools.get("default"), {})
    check(all(k in d for k in ("reserved", "reserved_high", "used", "used_high")),
          "default pool record has reserved/used current and high")
    s = one(recs, "summary")
    check(s.get("alloc_nodes") == 3 and s.get("alloc_bytes") == 6 * MiB and s.get("captures") == 1
          and s.get("leaks") == 0 and s.get("graphs", 0) >= 1 and s.get("execs") == 1 and s.get("launches") == 1,
          "summary: alloc_nodes 3, alloc_bytes 6 MiB, captures 1, execs 1, launches 1, leaks 0 (got %s)" % {
              k: s.get(k) for k in ("alloc_nodes", "alloc_bytes", "captures", "execs", "launches", "leaks")})


def case_current_pool(recs, pools):
    check(set(pools) >= {"C", "default"}, "pool handles printed: %s" % sorted(pools))
    allocs = ev(recs, "alloc")
    check(len(allocs) == 2, "2 alloc records (got %d)" % len(allocs))
    by_size = {a.get("size"): a for a in allocs}
    a1, a2 = by_size.get(1 * MiB, {}), by_size.get(2 * MiB, {})
    check(hx(a1.get("pool")) == pools.get("C"),
          "capture 1 cudaMallocAsync attributed to current pool C %s (got %s)" % (hex(pools.get("C", 0)), a1.get("pool")))
    check(a1.get("pool_default") is False, "capture 1: pool_default false")
    check(hx(a2.get("pool")) == pools.get("default"),
          "capture 2 cudaMallocAsync attributed to the default pool %s (got %s)" % (hex(pools.get("default", 0)), a2.get("pool")))
    check(a2.get("pool_default") is True, "capture 2: pool_default true")
    check(a1.get("capture") and a2.get("capture") and a1.get("capture") != a2.get("capture"),
          "two different capture ids")
    caps = {c.get("capture"): c for c in ev(recs, "capture")}
    for a in (a1, a2):
        c = caps.get(a.get("capture"), {})
        check(c.get("alloc_nodes") == 1 and c.get("alloc_bytes") == a.get("size"),
              "capture %s ledger: alloc_nodes 1, alloc_bytes %s" % (a.get("capture"), a.get("size")))
    check(not ev(recs, "violation") and not ev(recs, "leak"), "no violations, no leaks")
    s = one(recs, "summary")
    check(s.get("captures") == 2 and s.get("alloc_nodes") == 2 and s.get("alloc_bytes") == 3 * MiB,
          "summary: captures 2, alloc_nodes 2, alloc_bytes 3 MiB")


def case_destroy_outstanding(recs, pools):
    allocs = ev(recs, "alloc")
    check(len(allocs) == 1, "1 alloc record (got %d)" % len(allocs))
    a = allocs[0] if allocs else {}
    leaks = ev(recs, "leak")
    check(len(leaks) == 1, "1 leak record (got %d)" % len(leaks))
    l = leaks[0] if leaks else {}
    check(l.get("when") == "exec_destroy", "leak when exec_destroy (got %s)" % l.get("when"))
    check(l.get("dptr") == a.get("dptr") and l.get("size") == 2 * MiB,
          "leak names the allocation %s of 2 MiB (got %s, %s)" % (a.get("dptr"), l.get("dptr"), l.get("size")))
    check(l.get("pool") == a.get("pool") and a.get("pool_default") is True, "leak pool = the default pool")
    site = l.get("site") or []
    check(bool(site) and site == a.get("site"), "leak carries the allocation site (%s)" % site[:2])
    check(any("make_graph" in f for f in site) or any("destroy_outstanding" in f for f in site),
          "allocation site points into the program (%s)" % site[:3])
    v = [x for x in ev(recs, "violation") if x.get("rule") == "CGS011"]
    if check(len(v) == 1, "one CGS011 violation (got %d)" % len(v)):
        check(v[0].get("severity") == "warn", "CGS011 at the exec's destroy is a warn (got %s)" % v[0].get("severity"))
        check(v[0].get("alloc_site") == site, "CGS011 alloc_site = the allocation site")
        check(v[0].get("exec") == l.get("exec") and v[0].get("exec"), "CGS011 names the exec")
    others = [x.get("rule") for x in ev(recs, "violation") if x.get("rule") != "CGS011"]
    check(not others, "no other rule fired (got %s)" % others)
    s = one(recs, "summary")
    check(s.get("leaks") == 1 and s.get("alloc_nodes") == 1 and s.get("execs") == 1 and s.get("execs_live") == 0,
          "summary: leaks 1, alloc_nodes 1, execs 1, execs_live 0")


def case_exit_outstanding(recs, pools):
    allocs = ev(recs, "alloc")
    check(len(allocs) == 1, "1 alloc record (got %d)" % len(allocs))
    a = allocs[0] if allocs else {}
    leaks = ev(recs, "leak")
    check(len(leaks) == 1 and leaks[0].get("when") == "exit",
          "1 leak record with when exit (got %s)" % [x.get("when") for x in leaks])
    l = leaks[0] if leaks else {}
    check(l.get("dptr") == a.get("dptr") and l.get("size") == 1 * MiB and l.get("site") == a.get("site")
          and bool(l.get("site")), "exit leak names the allocation and its site")
    v = [x for x in ev(recs, "violation") if x.get("rule") == "CGS011"]
    check(len(v) == 1 and v[0].get("severity") == "hint" and v[0].get("api") == "exit",
          "CGS011 at exit is a hint: the context's teardown gives the memory back (got %s)" % [
              (x.get("api"), x.get("severity")) for x in v])
    s = one(recs, "summary")
    summ_seq = s.get("seq", 0)
    check(s.get("leaks") == 1 and s.get("execs_live") == 1 and s.get("launches") == 1,
          "summary: leaks 1, execs_live 1, launches 1 (got %s)" % {k: s.get(k) for k in ("leaks", "execs_live", "launches")})
    check(all(x.get("seq", 0) < summ_seq for x in leaks + ev(recs, "pool")), "leak and pool records precede the summary")
    pr = ev(recs, "pool")
    d = [p for p in pr if p.get("default")]
    if check(len(d) == 1, "one default-pool record at exit"):
        check(d[0].get("allocs") == 1 and d[0].get("alloc_bytes") == 1 * MiB, "default pool: allocs 1, alloc_bytes 1 MiB")
    gm = [g for g in ev(recs, "graphmem") if g.get("when") == "exit"]
    check(bool(gm), "graphmem record at exit")


def case_relaxed_malloc(recs, pools):
    caps = ev(recs, "capture")
    check(len(caps) == 2, "2 capture records (got %d)" % len(caps))
    if len(caps) < 2:
        return
    c1, c2 = caps
    check(c1.get("alloc_nodes") == 1 and c1.get("alloc_bytes") == 1 * MiB,
          "capture 1: alloc_nodes 1, alloc_bytes 1 MiB (got %s, %s)" % (c1.get("alloc_nodes"), c1.get("alloc_bytes")))
    check(c1.get("malloc_bytes") == 6 * MiB, "capture 1: malloc_bytes 6 MiB (relaxed-mode cudaMalloc; got %s)" % c1.get("malloc_bytes"))
    check(c2.get("malloc_bytes") == 0 and c2.get("alloc_nodes") == 0, "capture 2: malloc_bytes 0, alloc_nodes 0")
    for i, c in enumerate((c1, c2), 1):
        if check(all(k in c for k in ("free_before", "free_after", "delta", "unattributed")),
                 "capture %d: free_before/free_after/delta/unattributed present" % i):
            check(c["delta"] == c["free_before"] - c["free_after"], "capture %d: delta = free_before - free_after" % i)
            check(c["unattributed"] == c["delta"] - c["malloc_bytes"], "capture %d: unattributed = delta - malloc_bytes" % i)
        check(c.get("mode") == "global" and isinstance(c.get("site"), list), "capture %d: mode global, site" % i)
    check(c1.get("delta", 0) >= 6 * MiB, "capture 1: device free memory fell by at least malloc_bytes (delta %s)" % c1.get("delta"))
    check(c2.get("delta") == 0, "capture 2: delta 0 (got %s)" % c2.get("delta"))
    check(c1.get("capture") != c2.get("capture"), "distinct capture ids")
    check(not ev(recs, "violation") and not ev(recs, "leak"), "no violations, no leaks")
    s = one(recs, "summary")
    check(s.get("captures") == 2 and s.get("alloc_nodes") == 1, "summary: captures 2, alloc_nodes 1")


def case_quiet_sync(recs, pools):
    """Issue 19: the synchronize before a begin takes the sample the begin
    reuses. The stand-in counts the process's cuMemGetInfo calls (stderr
    line); on the GPU the begin's own queries are judged by
    tests/gpu/issue19.py's cost cases."""
    caps = ev(recs, "capture")
    check(len(caps) == 1 and all(k in caps[0] for k in ("free_before", "free_after", "delta")),
          "one capture record with its memory samples (got %s)" % [sorted(c) for c in caps])
    m = re.search(r"quiet_sync: sync \+(\d+) begin \+(\d+) gap_us (\d+)", STDERR)
    if not STANDIN:
        return
    if not check(m, "the scenario printed the stand-in's cuMemGetInfo counts (stderr %r)" % STDERR[-300:]):
        return
    sync, begin, gap = map(int, m.groups())
    skipped = one(recs, "summary").get("meminfo_skipped", 0)
    if skipped:
        # The auto budget counts a sample's wall time: on a loaded host a
        # preempted query overspends it and later samples are skipped, the
        # synchronize's among them (as in case_deferred_refs).
        print("note: %d sample(s) skipped by the auto budget (a loaded host): counts not judged" % skipped)
        return
    check(sync == 1, "the synchronize took one sample, memory having moved since the last (got %d)" % sync)
    # The reuse holds for 1 ms (MEMINFO_REUSE_NS): a sample older than that
    # at the begin (a preempted run: gap, from the synchronize's call to the
    # begin's return, bounds its age) is taken again, rightly.
    check(begin == 0 or gap >= 1000,
          "the begin reused that sample, %d us from the synchronize's call to its return (got %d queries)"
          % (gap, begin))


def case_deferred_summary(recs, pools):
    """Predictions from summaries completed after the instantiation."""
    v = ev(recs, "violation")
    got = [(x.get("rule"), x.get("api"), x.get("predicted_rc")) for x in v]
    check(len(v) == 2 and all(r == "CGS001" and rc == 910 for r, _, rc in got),
          "two CGS001 violations predicting 910 (A: graph destroyed; B: graph changed after instantiate) (got %s)" % got)
    ups = [r for r in ev(recs, "call") if (r.get("api") or "").startswith("cuGraphExecUpdate")]
    # B2 succeeds with the exec's topology and memory nodes: counted, not
    # recorded (docs/log-format.md, update records); the summary counts all 3.
    check([u.get("rc") for u in ups] == [910, 910], "update records A, B1 -> 910, 910 (got %s)" % [u.get("rc") for u in ups])
    s = one(recs, "summary")
    check((s.get("updates"), s.get("update_failures")) == (3, 2),
          "summary: updates 3, update_failures 2 (got %s, %s)" % (s.get("updates"), s.get("update_failures")))
    seqs = {x.get("seq") for x in v}
    # The node records of both sides follow a CGS001 (for --dot update:N):
    # they do not count as distance.
    pictures = {r.get("seq") for r in ev(recs, "node") if r.get("side")}
    check(all(any(0 < u["seq"] - s0 - len([p for p in pictures if s0 < p < u["seq"]]) <= 3 for s0 in seqs)
              for u in ups[:2]),
          "each violation written just before its failing update")
    ends = [r for r in ev(recs, "call") if (r.get("api") or "").startswith("cuStreamEndCapture")]
    check([e.get("nodes") for e in ends] == [1, 1, 4, 2, 1],
          "end-capture node counts 1, 1, 4 (no walk) then 2, 1 (walked: the process updates) (got %s)"
          % [e.get("nodes") for e in ends])
    check(len(ends) == 5 and (ends[2].get("alloc_nodes"), ends[2].get("free_nodes")) == (1, 1),
          "capture C: 1 alloc node, 1 free node")
    check(not ev(recs, "leak"), "no leak records")


def graphmem_from_stderr(text):
    """'graphmem D used U used_high UH reserved R reserved_high RH' -> {D: {...}}"""
    out = {}
    for m in re.finditer(r"^graphmem (\d+) used (\d+) used_high (\d+) reserved (\d+) reserved_high (\d+)$", text, re.M):
        out[int(m.group(1))] = {"used": int(m.group(2)), "used_high": int(m.group(3)),
                                "reserved": int(m.group(4)), "reserved_high": int(m.group(5))}
    return out


STDERR = ""
STDOUT = ""


def case_deferred_refs(recs, pools):
    """References worked out at the first free, not at instantiate."""
    s = one(recs, "summary")
    check(s.get("walks") == 1, "one graph walk in all: none for the 5 instantiate/destroy cycles, one at the "
          "first free after E's instantiation (got %s)" % s.get("walks"))
    v = ev(recs, "violation")
    got = [(x.get("rule"), x.get("api")) for x in v]
    check(len(v) == 1 and v[0].get("rule") == "CGS018" and "MemFree" in (v[0].get("api") or ""),
          "one CGS018, at the free of tmp (got %s)" % got)
    check(bool(v) and (v[0].get("node_index"), v[0].get("param")) == (0, 0),
          "CGS018 names node 0, parameter 0 (got %s)" % ((v[0].get("node_index"), v[0].get("param")) if v else None,))
    # Steady captures (CGSHIM_MEMINFO=auto): D's five cycles come from one
    # begin site with one shape; from the 4th on they take no sample when
    # the first three moved nothing (always on the stand-in; on a GPU the
    # first instantiations may take a chunk, and D then stays sampled). A
    # steady cycle that saw nothing go wrong repeats the one before: its six
    # lifecycle records (begin, capture, end, instantiate, exec and graph
    # destroy) are left to debug level and counted (records_condensed).
    caps = ev(recs, "capture")
    n_steady = s.get("meminfo_steady") or 0
    # A sample the auto budget skipped (a loaded host: the samples' share of
    # the run's time went over 4%) leaves a record without delta and keeps
    # the site from being steady: the exact counts below need none skipped.
    skipped = s.get("meminfo_skipped") or 0
    check(all(("delta" in c or skipped) and c.get("meminfo") != "steady" for c in caps),
          "each capture record written has a delta (steady ones are condensed; %d samples skipped)" % skipped)
    check(len(caps) == 6 - n_steady, "%d capture records for 6 captures, %d steady" % (len(caps), n_steady))
    check(s.get("records_condensed") == 6 * n_steady, "summary records_condensed %s = 6 per steady cycle (%d)"
          % (s.get("records_condensed"), n_steady))
    insts = [r for r in ev(recs, "call") if "Instantiate" in (r.get("api") or "")]
    check(len(insts) == 6 - n_steady and not any(r.get("meminfo") == "steady" for r in insts),
          "an instantiate record for each capture record, none steady (%d)" % len(insts))
    if STANDIN and not skipped:
        # D's first begin meets new frames: its site's walk waits for the
        # capture's end and that capture is not judged (site.h,
        # cg_site_pending), so D's 2nd-4th make the site steady for the 5th.
        check(n_steady == 1, "stand-in: D's 5th capture steady (meminfo_steady %s)" % n_steady)
    frees = [r for r in ev(recs, "call") if "MemFree" in (r.get("api") or "")]
    check(bool(v) and bool(frees) and v[0]["seq"] < max(f["seq"] for f in frees),
          "the violation precedes the free's call record")


def case_condensed(recs, pools):
    """Steady capture cycles condensed below debug (kernels/model/condensed.cu)."""
    s = one(recs, "summary")
    caps = ev(recs, "capture")
    n_cond = s.get("records_condensed") or 0
    check(s.get("captures") == 74, "the model counts all 74 captures, G's and the loop's (%s)" % s.get("captures"))
    caps = caps[1:]  # G's
    v = [x for x in ev(recs, "violation") if x.get("rule") == "CGS009"]
    check(len(v) == 1, "one CGS009, for B's free of G's allocation (%d)" % len(v))
    bcap = v[0].get("capture") if v else None
    b = [c for c in caps if c.get("capture") == bcap]
    check(len(b) == 1, "B's capture %s is written: a violation came in it" % bcap)
    # B, steady at its begin, was a repeat until its violation: what it made
    # before (its alloc record and call, its first free) is condensed.
    b_early = 3 if b and b[0].get("meminfo") == "steady" else 0
    # the loop's site captures one graph again and again: CGS026 (a hint)
    # once, at the 10th capture, whose end call record is then written
    again = [x for x in ev(recs, "violation") if x.get("rule") == "CGS026"]
    check(len(again) == 1 and again[0].get("captures") == 10,
          "one CGS026 for the loop's site, at 10 captures (%s)" % [x.get("captures") for x in again])
    n_again = len(again)
    check(n_cond == 9 * (73 - len(caps)) + b_early - n_again,
          "each loop cycle written or condensed with its 9 records, and B's %d early ones (%d written, %d condensed)"
          % (b_early, len(caps), n_cond))
    calls_ = ev(recs, "call")
    for api in ("cuStreamBeginCapture", "cuStreamEndCapture", "cuGraphInstantiateWithFlags", "cuGraphExecDestroy",
                "cuGraphDestroy", "cuMemAllocAsync", "cuMemFreeAsync"):
        n = len([r for r in calls_ if (r.get("api") or "").startswith(api)])
        want = len(caps) + 1 - (1 if b_early and api.startswith("cuMem") else 0)  # + G's, or B's second free
        want += n_again if api == "cuStreamEndCapture" else 0  # the end CGS026 names
        check(n == want, "%s: %d call records, one per written cycle (%d)" % (api, n, want))
    check(len(ev(recs, "alloc")) == len(caps) + 1 - (1 if b_early else 0),
          "an alloc record per written cycle and G's, B's condensed")
    check(all(c.get("rc") == 0 for c in caps), "every capture ended well")
    if STANDIN and not s.get("meminfo_skipped"):  # see case_deferred_refs
        ids = [c.get("capture") for c in caps]
        first = min(ids) if ids else 0
        # the first begin's walk waits (new frames): that capture is not
        # judged, captures 2-4 make the site steady
        check([i - first + 1 for i in ids] == [1, 2, 3, 4, 68, 71, 72, 73],
              "stand-in: captures 1-4, 68 (the every-64th recheck), 71 (B), 72, 73 written (got %s)"
              % [i - first + 1 for i in ids])
        check(n_cond == 587, "stand-in: 65 cycles x 9 records and B's 3 condensed, less the end CGS026 names (%d)"
              % n_cond)
        check(s.get("meminfo_steady") == 66, "stand-in: 66 steady captures, 65 of them repeats (%s)"
              % s.get("meminfo_steady"))
        check(s.get("sites_deferred") == 2, "stand-in: G's and the loop's first begins deferred (%s)"
              % s.get("sites_deferred"))
        check([c.get("meminfo") for c in caps] == [None, None, None, None, None, "steady", None, None],
              "stand-in: B's capture steady at its begin, written (got %s)" % [c.get("meminfo") for c in caps])


def meminfo_calls(a, base, level, **extra):
    """Real cuMemGetInfo calls of the stand-in under the shim at level (the
    stand-in's STANDIN_VERBOSE trace, one line a call), with extra in the
    environment."""
    env = dict(base, LD_PRELOAD=a.shim, CGSHIM_LOG=level, STANDIN_VERBOSE="1", **extra)
    r = run([a.prog], env)
    check(r.returncode == 0, "condensed at %s %s: exit %d (want 0)" % (level, extra, r.returncode))
    return len(re.findall(r"^\[standin\] cuMemGetInfo", r.stderr.decode(errors="replace"), re.M))


def device_asks(a, base, call, other):
    """Under the shim (info level, no memory samples), the stand-in's trace:
    how many times `call` was made, and how many cuCtxGetDevice calls came
    in the window just before each (that and `other`, the hook's own
    queries; the trace names some functions less their first 3 letters)."""
    r = run([a.prog], dict(base, LD_PRELOAD=a.shim, CGSHIM_LOG="info", CGSHIM_MEMINFO="off", STANDIN_VERBOSE="1"))
    trace = re.findall(r"^\[standin\] (\S+)", r.stderr.decode(errors="replace"), re.M)
    calls, asked = 0, 0
    for i, fn in enumerate(trace):
        if fn != call:
            continue
        calls += 1
        j = i - 1
        while j >= 0 and trace[j] in (other, "cuCtxGetDevice"):
            asked += trace[j] == "cuCtxGetDevice"
            j -= 1
    return calls, asked


def traced_calls(a, base, case, fn):
    """The program run bare and under the shim (info) with the stand-in's
    trace: how many times each asked the stand-in's function fn (the trace
    names a stream function less its first 3 letters: eam_get_flags)."""
    calls = {}
    for side, env in (("bare", dict(base, STANDIN_VERBOSE="1")),
                      ("shim", dict(base, LD_PRELOAD=a.shim, CGSHIM_LOG="info", STANDIN_VERBOSE="1"))):
        r = run([a.prog], env)
        check(r.returncode == 0, "%s %s traced: exit %d (want 0)" % (case, side, r.returncode))
        calls[side] = len(re.findall(r"^\[standin\] %s\b" % re.escape(fn), r.stderr.decode(errors="replace"), re.M))
    return calls


def condensed_off_checks(recs):
    """condensed.cu's records under CGSHIM_MEMINFO=off (here and on the GPU,
    tests/gpu/model.py): the loop judged by its shape alone, its cycles
    condensed; no record speaks of memory; B's CGS009 still named."""
    s = one(recs, "summary")
    check((s.get("records_condensed") or 0) >= 500 and not s.get("meminfo_steady"),
          "meminfo off: the loop's cycles condensed (%s), none counted as a sample not taken (%s)"
          % (s.get("records_condensed"), s.get("meminfo_steady")))
    check(not any("meminfo" in r or "delta" in r for r in recs if r.get("ev") in ("capture", "call")),
          "meminfo off: no capture or call record carries meminfo or delta")
    check(len([x for x in ev(recs, "violation") if x.get("rule") == "CGS009"]) == 1,
          "meminfo off: B's CGS009 still named")


def after_condensed(a, base):
    """The samples' only readers are info-level records: below info the shim
    takes no sample but its start-up one (the loop sampled every
    instantiation at warn level, for a record never written)."""
    warn, info = meminfo_calls(a, base, "warn"), meminfo_calls(a, base, "info")
    check(warn <= 1, "warn level: at most the start-up cuMemGetInfo (%d calls)" % warn)
    # One device: the context's device is known from the first answer
    # (cg_current_device), not asked again at each instantiation and
    # allocation of the loop (issue 36: 2 a cycle before, ~150 calls).
    asked = traced_calls(a, base, "condensed", "cuCtxGetDevice")
    check(asked["shim"] - asked["bare"] <= 4, "one device: the shim asked cuCtxGetDevice %d times in 73 cycles "
          "(at most 4; bare %d)" % (asked["shim"] - asked["bare"], asked["bare"]))
    check(info > 4, "info level: the first captures sampled (%d calls)" % info)
    # Without sites (no backtraces, no Python frames) the steady judgement
    # goes by the stream: the loop is steady as with sites (it sampled at
    # every boundary, 152 calls, and condensed nothing).
    with tempfile.TemporaryDirectory(prefix="cgs-bt0-") as tmp:
        log = os.path.join(tmp, "log.jsonl")
        bt0 = meminfo_calls(a, base, "info", CGSHIM_BACKTRACE="0", CGSHIM_PYTHON_FRAMES="0",
                            CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
        s = one(read_log(log), "summary")
    check(bt0 <= info + 4, "no sites: as few samples as with them (%d calls, %d with sites)" % (bt0, info))
    # A sample the auto budget skipped (a loaded or emulated host: the
    # samples' share of the run's time over 4%) keeps the site from being
    # steady, as in case_deferred_refs: the count needs none skipped. Seen
    # so: 0 condensed under qemu-user, and once natively at load ~20.
    if s.get("meminfo_skipped"):
        print("no sites: %s samples skipped by the auto budget (a loaded host): the condensed count is not judged"
              % s.get("meminfo_skipped"))
    else:
        check((s.get("records_condensed") or 0) >= 500 and (s.get("meminfo_steady") or 0) >= 60,
              "no sites: the loop's cycles steady and condensed (%s condensed, %s steady)"
              % (s.get("records_condensed"), s.get("meminfo_steady")))
    # CGSHIM_MEMINFO=off: no sample at all, and the loop judged by its
    # shape alone, so its cycles are condensed as under auto (before, off
    # wrote every call of the loop at info: 0 condensed, capture-64 1.14 on
    # the H200 against auto's 1.06); no record speaks of memory.
    with tempfile.TemporaryDirectory(prefix="cgs-off-") as tmp:
        log = os.path.join(tmp, "log.jsonl")
        off = meminfo_calls(a, base, "info", CGSHIM_MEMINFO="off", CGSHIM_LOG_FORMAT="jsonl", CGSHIM_LOG_FILE=log)
        recs = read_log(log)
    check(off == 0, "meminfo off: no cuMemGetInfo (%d calls)" % off)
    condensed_off_checks(recs)
    # One device, learned by the first begin: a captured cudaMallocAsync
    # takes the context's device as 0 and asks no cuCtxGetDevice (issue 36).
    allocs, asked = device_asks(a, base, "cuMemAllocAsync", "ture_info")
    check(allocs >= 70 and asked == 0, "%d allocations asked cuCtxGetDevice %d times in their window (want 0)"
          % (allocs, asked))




def case_update_memo(recs, pools):
    """The identical-update memo (kernels/model/update_memo.cu)."""
    s = one(recs, "summary")
    check(s.get("updates") == 17 and s.get("update_failures") == 2,
          "17 updates, 2 refused (%s, %s)" % (s.get("updates"), s.get("update_failures")))
    check(s.get("updates_known") == 11, "11 answered by the memo: A's last 5, C's second, D's last 5 (%s)"
          % s.get("updates_known"))
    v = [x for x in ev(recs, "violation") if x.get("rule") == "CGS001"]
    check(len(v) == 2, "CGS001 before each refusal, B's (node added) and C's (new graph) (%d)" % len(v))
    upd = [r for r in ev(recs, "call") if (r.get("api") or "").startswith("cuGraphExecUpdate")]
    check([r.get("rc") for r in upd] == [910, 910],
          "only the refused updates write call records (got rc %s)" % [r.get("rc") for r in upd])
    check(all(r.get("predicted_by") == "CGS001" for r in upd), "both predicted by CGS001")


def case_update_alt(recs, pools):
    """The known-update memo across graphs of one class, and what ends it
    (kernels/model/update_alt.cu)."""
    s = one(recs, "summary")
    check(s.get("updates") == 32 and s.get("update_failures") == 3,
          "32 updates, 3 refused (%s, %s)" % (s.get("updates"), s.get("update_failures")))
    check(s.get("updates_known") == 14, "14 answered by the memo: A's 6, 2 each in B-E, none in F (%s)"
          % s.get("updates_known"))
    upd = [(i, r) for i, r in enumerate(recs) if r.get("ev") == "call"
           and (r.get("api") or "").startswith("cuGraphExecUpdate")]
    check([r.get("rc") for _, r in upd] == [910, 910, 910],
          "only the refused updates write call records (got rc %s)" % [r.get("rc") for _, r in upd])
    viol = [i for i, r in enumerate(recs) if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    check(len(viol) == 3 and all(r.get("predicted_by") == "CGS001" for _, r in upd)
          and all(v < i for v, (i, _) in zip(viol, upd)),
          "CGS001 named before each refusal: node added (B), child added (C), memory node added (D) (%d)"
          % len(viol))
    check(not ev(recs, "mismatch"), "no prediction the driver disagreed with (%d)" % len(ev(recs, "mismatch")))
    moved = [r for r in ev(recs, "update_diff") if r.get("repointed")]
    check(len(moved) == 16, "F: each of its 4 updates names its 4 kernels moved to other memory (%d)" % len(moved))


def coop_verdict(recs):
    """(CGS001 violations before the refused update, refused update records)"""
    upd = [(i, r) for i, r in enumerate(recs) if r.get("ev") == "call"
           and (r.get("api") or "").startswith("cuGraphExecUpdate") and r.get("rc") == 910]
    viol = [(i, r) for i, r in enumerate(recs) if r.get("ev") == "violation" and r.get("rule") == "CGS001"]
    return viol, upd


def case_coop_update(recs, pools):
    """A cooperative node from a captured cuLaunchCooperativeKernel: CGS001
    names the AttributesChanged refusal before the driver's answer
    (kernels/model/coop_update.cu); without the launch hooks the walk never
    asks for the attribute and nothing is predicted."""
    viol, upd = coop_verdict(recs)
    check(len(upd) == 1 and upd[0][1].get("predicted_by") == "CGS001" and len(viol) == 1 and viol[0][0] < upd[0][0]
          and "cooperative launch added" in (viol[0][1].get("msg") or ""),
          "CGS001 names the cooperative node first (%s)" % [v.get("msg") for _, v in viol])
    check(not ev(recs, "mismatch"), "no prediction the driver disagreed with (%d)" % len(ev(recs, "mismatch")))


def after_coop_update(a, base):
    """attr: cuGraphKernelNodeSetAttribute(COOPERATIVE) after the capture's
    end walked the graph: its cached summary is dropped, CGS001 fires.
    plain: no way to a cooperative node was taken, so the shim asks no node
    for the attribute (cuGraphKernelNodeGetAttribute never called) and the
    update is accepted; in launch and attr it is asked."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        for mode in ("attr", "plain", "launch"):
            log = os.path.join(tmp, mode + ".jsonl")
            p = run([a.prog, mode], dict(cgtest.shim_env(base, a.shim, log, "info"), STANDIN_VERBOSE="1"))
            check(p.returncode == 0, "coop_update %s: exit 0 (got %d)" % (mode, p.returncode))
            asked = len(re.findall(r"^\[standin\] cuGraphKernelNodeGetAttribute", p.stderr.decode(errors="replace"),
                                   re.M))
            viol, upd = coop_verdict(read_log(log))
            if mode == "plain":
                check(asked == 0 and not viol and not upd,
                      "plain: no node asked for the attribute (%d), no CGS001 (%d), no refusal" % (asked, len(viol)))
            else:
                check(asked > 0, "%s: kernel nodes asked for the attribute (%d)" % (mode, asked))
            if mode == "attr":
                check(len(upd) == 1 and upd[0][1].get("predicted_by") == "CGS001" and len(viol) == 1,
                      "attr: CGS001 names the node given the attribute (%s)" % [v.get("msg") for _, v in viol])


def chain_verdict(recs, mode):
    """Whether a chain_joins run's records say what they should for mode: the
    third graph described from its launches (so the chain would be taken
    but for the counted dependency change); for a join, CGS001 names the
    topology first and the driver refuses; for the chain, nothing."""
    s = one(recs, "summary")
    viol, upd = coop_verdict(recs)
    if mode == "chain":
        ok = not viol and not upd
    else:
        ok = (len(upd) == 1 and upd[0][1].get("predicted_by") == "CGS001" and len(viol) == 1
              and viol[0][0] < upd[0][0])
    ok = ok and s.get("launch_summaries") == 1 and not ev(recs, "mismatch")
    return ok, "%s: CGS001 %s, refused %d, launch_summaries %s, mismatches %d" % (
        mode, [v.get("msg") for _, v in viol], len(upd), s.get("launch_summaries"), len(ev(recs, "mismatch")))


def case_chain_joins(recs, pools):
    """A wait-event join into the capturing stream (kernels/model/chain_joins.cu):
    the graph is no chain though every node is a launch logged in order;
    CGS001 predicts the update's TopologyChanged."""
    check(*chain_verdict(recs, "wait"))


def after_chain_joins(a, base):
    """The other joins (cudaStreamUpdateCaptureDependencies, cuGraphAddDependencies
    on the capturing graph) likewise; a plain chain's update is accepted and
    its end asks no edges (the first two graphs' walks ask them: 2 queries)."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        for mode in ("update", "adddeps", "chain"):
            log = os.path.join(tmp, mode + ".jsonl")
            p = run([a.prog, mode], dict(cgtest.shim_env(base, a.shim, log, "info"), STANDIN_VERBOSE="1"))
            check(p.returncode == 0, "chain_joins %s: exit 0 (got %d)" % (mode, p.returncode))
            check(*chain_verdict(read_log(log), mode))
            if mode == "chain":
                edges = len(re.findall(r"^\[standin\] cuGraphGetEdges", p.stderr.decode(errors="replace"), re.M))
                check(edges == 2, "chain: the logged capture's end asked no edges (%d queries, want 2)" % edges)


def case_begin_flags(recs, pools):
    """Which streams are blocking, remembered per stream until one is
    destroyed (kernels/model/begin_flags.cu)."""
    v = [x for x in ev(recs, "violation") if x.get("rule") == "CGS014"]
    check(len(v) == 1, "CGS014 named once: A's query on the blocking stream, not B's (%d)" % len(v))
    u = [x for x in ev(recs, "violation") if x.get("rule") == "CGS007"]
    check(len(u) == 1, "CGS007 named once: B's legacy query under a global capture, the unsafe class (%d)" % len(u))
    # a sanitizer's allocator holds freed memory back: no handle comes back
    if STANDIN and not (os.environ.get("ASAN_OPTIONS") or os.environ.get("TSAN_OPTIONS")):
        check("reused 1" in STDOUT, "stand-in: S2 has S1's handle, the case the destroy must cover (%s)"
              % [x for x in STDOUT.splitlines() if x.startswith("reused")])


def case_copy_tally(recs, pools):
    """The capture's kernel tally answers the copy check (kernels/model/copy_tally.cu)."""
    s = one(recs, "summary")
    check(s.get("copy_checks") == 11, "11 instantiations of captured graphs asked for copies (%s)"
          % s.get("copy_checks"))
    check(s.get("copy_checks_tallied") == 3, "3 answered by the tally, A's; B-H asked every node (%s)"
          % s.get("copy_checks_tallied"))
    v = [x for x in ev(recs, "violation") if x.get("rule") == "CGS020"]
    check(len(v) == 1, "CGS020 names B's pageable copy (%d)" % len(v))
    check(s.get("walks") == 1, "only B's graph walked (the copy's details for CGS020) (%s)" % s.get("walks"))


def case_multi_device(recs, pools):
    """Two devices: memory nodes on each with peer access, a first launch from
    the other device's context, per-device current pool, per-device graph
    memory against cudaDeviceGetGraphMemAttribute."""
    check({"default0", "default1", "C"} <= set(pools), "pool handles printed: %s" % sorted(pools))
    by_size = {a.get("size"): a for a in ev(recs, "alloc")}
    want = {4 * MiB: (0, ["1:rw"], None), 8 * MiB: (1, ["0:rw"], None),
            1 * MiB: (1, None, "C"), 2 * MiB: (0, None, "default0")}
    for size, (dev, access, pool) in sorted(want.items()):
        a = by_size.get(size)
        if not check(a is not None, "alloc of %d MiB recorded" % (size // MiB)):
            continue
        check(a.get("dev") == dev, "%d MiB allocation on device %d (got %s)" % (size // MiB, dev, a.get("dev")))
        check(a.get("access") == access, "%d MiB allocation: peer access %s (got %s)" % (size // MiB, access, a.get("access")))
        if pool:
            check(hx(a.get("pool")) == pools.get(pool), "%d MiB allocation from pool %s (got %s)" % (size // MiB, pool, a.get("pool")))
    inst = [r for r in ev(recs, "call") if r.get("api", "").startswith("cuGraphInstantiate") and r.get("rc") == 0]
    m = [r for r in inst if r.get("alloc_devs") == {"0": 4 * MiB, "1": 8 * MiB}]
    check(len(m) == 1 and m[0].get("dev") == 0,
          "graph M instantiated on device 0 with alloc_devs {0: 4 MiB, 1: 8 MiB} (got %s)" % [(r.get("dev"), r.get("alloc_devs")) for r in inst])
    em = m[0].get("exec") if m else None
    first = [g for g in ev(recs, "graphmem") if g.get("when") == "first_launch" and g.get("exec") == em]
    check(sorted((g.get("dev"), g.get("exec_bytes")) for g in first) == [(0, 4 * MiB), (1, 8 * MiB)],
          "first launch of M: one sample per device of its memory nodes (got %s)" % [(g.get("dev"), g.get("exec_bytes")) for g in first])
    # (a driver that refuses the launch from device 1's context makes the
    # launch from device 0 the first one)
    cross = "launch from device 1's context: ok" in STDOUT
    check(all(g.get("exec_dev") == 0 and g.get("launch_dev") == (1 if cross else None) for g in first),
          "first launch of M: exec_dev 0, launch_dev %s (launched from device %d's context)" % (1 if cross else None, 1 if cross else 0))
    drv = graphmem_from_stderr(STDERR)
    ex = {g.get("dev"): g for g in ev(recs, "graphmem") if g.get("when") == "exit"}
    check(sorted(ex) == [0, 1], "exit: one graphmem record per device (got %s)" % sorted(ex))
    for d in (0, 1):
        g, want_d = ex.get(d, {}), drv.get(d, {})
        check(want_d and g.get("reserved_high") == want_d.get("reserved_high") and g.get("used_high") == want_d.get("used_high"),
              "device %d: the shim's graph memory (reserved_high %s, used_high %s) = cudaDeviceGetGraphMemAttribute (%s, %s)"
              % (d, g.get("reserved_high"), g.get("used_high"), want_d.get("reserved_high"), want_d.get("used_high")))
        check(hx(g.get("default_pool")) == pools.get("default%d" % d),
              "device %d: default pool %s (got %s)" % (d, hex(pools.get("default%d" % d, 0)), g.get("default_pool")))
        check(hx(g.get("current_pool")) == pools.get("default%d" % d), "device %d: current pool back to its default" % d)
    check(ex.get(0, {}).get("alloc_bytes") == 6 * MiB and ex.get(1, {}).get("alloc_bytes") == 9 * MiB,
          "graph allocations per device: 6 MiB on 0, 9 MiB on 1 (got %s, %s)" % (ex.get(0, {}).get("alloc_bytes"), ex.get(1, {}).get("alloc_bytes")))
    pc = [p for p in ev(recs, "pool") if hx(p.get("pool")) == pools.get("C")]
    check(pc and pc[0].get("dev") == 1, "pool C recorded on device 1")
    check(not ev(recs, "violation"), "no violations (got %s)" % [v.get("rule") for v in ev(recs, "violation")])

def case_module_reuse(recs, pools):
    """Function handles reused after their module is unloaded (kernels/model/module_reuse.cu)."""
    s = one(recs, "summary")
    check(s.get("walks") == 6, "each of the 6 graphs walked at its instantiate (%s)" % s.get("walks"))
    if STANDIN:
        check(STDERR.count(" reuses ") == 3, "the stand-in reused the handle in B, C and D (%s)" % STDERR.strip())


def after_module_reuse(a, base):
    """At debug each instantiate writes its node: the layout is the node's
    function's, never the one its handle had before (issue 30)."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "debug.jsonl")
        env = cgtest.shim_env(base, a.shim, log, "debug")
        p = run([a.prog], env)
        check(p.returncode == 0, "module_reuse at debug: exit 0 (got %d)" % p.returncode)
        recs = read_log(log)
        got = [(n.get("kernel"), n.get("nparams"), len(n.get("params") or [])) for n in ev(recs, "node")]
        want = [("wide", 8, 8), ("narrow", 1, 1)] * 3
        check(got == want, "6 kernel nodes described with their own function's name and layout (%s)" % got)
        check(not ev(recs, "warning"), "no warnings at debug (%s)" % [x.get("msg") for x in ev(recs, "warning")])


def case_kernel_forms(recs, pools):
    """Kernel nodes in every argument form (kernels/model/kernel_forms.cu)."""
    s = one(recs, "summary")
    check(s.get("walks") == 1, "the graph walked at its instantiate (%s)" % s.get("walks"))


def after_kernel_forms(a, base):
    """At debug the 5 nodes are described from the driver's own arrays:
    0 parameters, a 4 KiB struct (its device pointer kept), a packed pair,
    a buffer pointer alone on a 0-parameter kernel, a library kernel."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "debug.jsonl")
        p = run([a.prog], cgtest.shim_env(base, a.shim, log, "debug"))
        check(p.returncode == 0, "kernel_forms at debug: exit 0 (got %d)" % p.returncode)
        recs = read_log(log)
        got = [(n.get("kernel"), n.get("nparams"), [x[2] for x in n.get("params") or []],
                len(n.get("param_ptrs") or [])) for n in ev(recs, "node")]
        want = [("zero", 0, [], 0), ("big", 1, [], 1), ("pair", 2, ["0x7", "0x9"], 0), ("zero", 0, [], 0),
                ("libk", 1, ["0x3"], 0)]
        check(got == want, "5 kernel nodes described from their own arrays (%s)" % got)
        check(not ev(recs, "warning"), "no warnings at debug (%s)" % [x.get("msg") for x in ev(recs, "warning")])


def case_node_types(recs, pools):
    """A node of every type through cuGraphAddNode, each exec node set again (kernels/model/node_types.cu)."""
    s = one(recs, "summary")
    check(s.get("walks") == 1, "the graph walked at its instantiate (%s)" % s.get("walks"))
    check(not ev(recs, "violation"), "no violations (%s)" % [x.get("rule") for x in ev(recs, "violation")])
    calls = [r for r in ev(recs, "call") if r.get("rc")]
    check(not calls, "every call answered 0 (%s)" % [(r.get("api"), r.get("rc")) for r in calls])


def after_node_types(a, base):
    """At debug a node record per node, of its type; kernel, memset and
    memcpy described, the others by type alone."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "debug.jsonl")
        p = run([a.prog], cgtest.shim_env(base, a.shim, log, "debug"))
        check(p.returncode == 0, "node_types at debug: exit 0 (got %d)" % p.returncode)
        recs = read_log(log)
        nodes = ev(recs, "node")
        got = [n.get("type") for n in nodes]
        want = ["kernel", "memset", "memcpy", "host", "empty", "event_record", "wait_event", "batch_mem_op", "graph",
                "conditional", "ext_sem_signal", "ext_sem_wait"]
        check(got == want, "12 node records, one per type (%s)" % got)
        k = [n for n in nodes if n.get("type") == "kernel"]
        check(k and k[0].get("kernel") == "k1" and k[0].get("nparams") == 1,
              "the kernel node described (k1, 1 parameter) (%s)" % (k and k[0].get("kernel")))
        check(all("bytes" in n for n in nodes if n.get("type") in ("memset", "memcpy")), "memset and memcpy described")
        check(not ev(recs, "warning"), "no warnings at debug (%s)" % [x.get("msg") for x in ev(recs, "warning")])


def after_begin_flags(a, base):
    """The begin hook asks the stand-in for a stream's flags once per stream:
    S1's first begin and S2's (its handle S1's again, after a destroy); and
    for the context's device not at all once the one device's pool is known."""
    calls = traced_calls(a, base, "begin_flags", "eam_get_flags")
    check(calls["shim"] - calls["bare"] == 2, "the shim asked cuStreamGetFlags twice for 5 begins (%d, bare %d)"
          % (calls["shim"], calls["bare"]))
    # One device, no memory samples: the begin hook learns the device's
    # pool at its first begin and asks no cuCtxGetDevice again (issue 36).
    begins, asked = device_asks(a, base, "cuStreamBeginCapture_v2", "eam_get_flags")
    check(begins == 5 and asked == 0, "5 begins asked no cuCtxGetDevice in their window (%d begins, %d asked)"
          % (begins, asked))


def case_launch_alias(recs, pools):
    """Captures of launches by a CUkernel (kernels/model/launch_alias.cu) at info: no warning, no mismatch."""
    one(recs, "summary")
    check(not ev(recs, "warning") and not ev(recs, "mismatch"),
          "no warning, no mismatch (%s)" % [x.get("msg") for x in ev(recs, "warning")])


def after_launch_alias(a, base):
    """At debug, with CGSHIM_SUMMARY_CHECK=1 (each graph described from its
    launches walked as well and compared): on one device 4 graphs from
    launches (2 a round: the unload ages the CUkernel's alias with its
    entry); on two, 1 more: device 1's first capture, described with device
    0's function, is refused by the take and walked, and libk, then seen
    with two live functions, keeps no alias. None described otherwise."""
    for ndev, want in ((1, 4), (2, 5)) if STANDIN else ((None, None),):
        with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
            log = os.path.join(tmp, "debug.jsonl")
            env = dict(base, STANDIN_DEVICES=str(ndev)) if ndev else base
            p = run([a.prog], cgtest.shim_env(env, a.shim, log, "debug", {"CGSHIM_SUMMARY_CHECK": "1"}))
            recs = read_log(log)
            s = one(recs, "summary")
            ok = p.returncode == 0 and s.get("launch_summary_diffs") == 0
            if want is not None:
                ok = ok and s.get("launch_summaries") == want
            check(ok, "launch_alias on %s device(s): exit %d, %s graphs from launches (want %s), %s nodes differed"
                  % (ndev or "the host's", p.returncode, s.get("launch_summaries"), want, s.get("launch_summary_diffs")))
            warns = [x.get("msg") for x in ev(recs, "warning") if "summary check note" not in (x.get("msg") or "")]
            check(not warns, "no warning but the check's note (%s)" % warns)


def case_launch_forms(recs, pools):
    """Captured launches in every argument form (kernels/model/launch_forms.cu) at info: no warning, no mismatch."""
    one(recs, "summary")
    check(not ev(recs, "warning") and not ev(recs, "mismatch"),
          "no warning, no mismatch (%s)" % [x.get("msg") for x in ev(recs, "warning")])


def after_launch_forms(a, base):
    """At debug, with CGSHIM_SUMMARY_CHECK=1: the second and third captures
    described from their launches (a template a function of small
    parameters, nodes_kernel_fill for the rest), none otherwise than the
    walk; the first (functions no walk described), the fourth (a module
    unloaded during it) and the two of 34 functions (new ones, then more
    than the log keeps) walked. The kept values of 1, 2, 4 and 8 bytes as
    the launch gave them, and every capture's mixed nodes alike but for
    the values (the hash of a walked graph's and a described one's)."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "debug.jsonl")
        p = run([a.prog], cgtest.shim_env(base, a.shim, log, "debug", {"CGSHIM_SUMMARY_CHECK": "1"}))
        recs = read_log(log)
        s = one(recs, "summary")
        check(p.returncode == 0 and s.get("launch_summaries") == 2 and s.get("launch_summary_diffs") == 0,
              "launch_forms: exit %d, %s graphs from launches (want 2), %s nodes differed"
              % (p.returncode, s.get("launch_summaries"), s.get("launch_summary_diffs")))
        mixed = [n for n in ev(recs, "node") if n.get("kernel") == "mixed"]
        want = [[[0, 1, "0x%x" % (5 + r)], [2, 2, "0x%x" % (0x1234 + r)], [4, 4, "0x%x" % (0xdeadbe00 + r)],
                 [8, 4, "0x%x" % struct.unpack("<I", struct.pack("<f", 1.5 + r))[0]],
                 [16, 8, "0x%x" % (0x1122334455667700 + r)]] for r in range(4) for _ in range(3)]
        check([n.get("params") for n in mixed] == want, "mixed's 12 nodes keep their values (%s)"
              % [n.get("params") for n in mixed][:2])
        hashes = [n.get("params_hash") for n in mixed]
        check(all(hashes[3 * r:3 * r + 3] == [hashes[3 * r]] * 3 for r in range(4)) and len(set(hashes)) == 4,
              "one params_hash a capture's mixed nodes, another each capture (%s)" % hashes)
        pair = [n.get("params") for n in ev(recs, "node") if n.get("kernel") == "pair"]
        check(pair == [[[0, 8, "0x%x" % (0x99 + r)], [8, 4, "0x%x" % (0x77 + r)]] for r in range(4)],
              "pair's packed values kept (%s)" % pair)
        warns = [x.get("msg") for x in ev(recs, "warning") if "summary check note" not in (x.get("msg") or "")]
        check(not warns, "no warning but the check's note (%s)" % warns)


def case_update_capture(recs, pools):
    """Per step a fresh 16-kernel capture, an update from it, a destroy
    (kernels/model/update_capture.cu, default 12 steps): one walk a graph."""
    s = one(recs, "summary")
    check(s.get("updates") == 12 and s.get("update_failures") == 0, "12 updates, none refused (%s, %s)"
          % (s.get("updates"), s.get("update_failures")))
    # the first graph at the first update (no update seen at its end), then
    # each step's graph at its capture's end, which its update reuses
    check(s.get("walks") == 13 and s.get("churn_walks") == 0,
          "each graph walked once; churn no walk of its own (walks %s, churn_walks %s)"
          % (s.get("walks"), s.get("churn_walks")))
    # the first step's capture began before any update was seen: walked at it
    check(s.get("launch_summaries") == 11 and s.get("launch_summary_diffs") == 0,
          "each later step's graph described from its 16 launches (launch_summaries %s)" % s.get("launch_summaries"))
    bad = [v.get("rule") for v in ev(recs, "violation") if v.get("severity") in ("warn", "error")]
    check(not bad and not ev(recs, "mismatch"), "no warn or error, no mismatch (%s)" % bad)


# The driver calls the shim may make a step of update_capture (16 kernel
# nodes, one function): none a node. The graph is described from the 16
# launches the hooks saw (nodes.h nodes_launch_take); the driver is asked
# the node list with its count once (into the launch log's room), the
# capture info at begin and end, the graph's id, the function confirmed at
# its first launch by its last parameter's layout and its name (the end's
# check takes that confirmation), and the parameters of the check's two
# nodes (the function's first node and the last): 8. No edges: no capture dependency
# changed without a node, so the graph is its launches' chain (model.h
# model_deps_unchanged). Before issue 36's launch summaries: 41 (a type and
# a parameters query a node); before the one-query list and edges and the
# confirmation kept for the walk (session 12, helper capcost): 13; before
# the chain (session 13, helper chain): 9, the edges asked once.
# On an H200 each costs ~50-100 ns (docs/measurements.md, issue 36).
UPDATE_CAPTURE_NODES = 16
UPDATE_CAPTURE_CALLS = 8


def standin_calls(prog, steps, env):
    """The stand-in driver's entry points called in a run of prog STEPS,
    counted by name (STANDIN_VERBOSE's trace)."""
    r = run([prog, str(steps)], dict(env, STANDIN_VERBOSE="1"))
    check(r.returncode == 0, "update_capture %d steps traced: exit %d (want 0)" % (steps, r.returncode))
    calls = {}
    for m in re.finditer(r"^\[standin\] (\w+)", r.stderr.decode(errors="replace"), re.M):
        calls[m.group(1)] = calls.get(m.group(1), 0) + 1
    return calls


def after_update_capture(a, base):
    """The driver calls the shim makes a step, counted: the difference of the
    shim's and the bare program's stand-in calls between 8 and 24 steps, over
    16 steps. A second walk a step, or a query a node, fails it."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        per = {}
        for side in ("bare", "shim"):
            # CGSHIM_MEMINFO=off: its samples are paced by the clock (one
            # cuMemGetInfo a millisecond at most), not by the step, so a
            # slow run (qemu-user under load: 0.06-0.5 a step) made more
            env = base if side == "bare" else dict(
                cgtest.shim_env(base, a.shim, os.path.join(tmp, "uc.jsonl"), "info"), CGSHIM_MEMINFO="off")
            lo, hi = standin_calls(a.prog, 8, env), standin_calls(a.prog, 24, env)
            per[side] = {k: (hi.get(k, 0) - lo.get(k, 0)) / 16.0 for k in set(lo) | set(hi)}
        shim = {k: v - per["bare"].get(k, 0) for k, v in per["shim"].items()}
        shim = {k: v for k, v in shim.items() if v}
        total = sum(shim.values())
        print("update_capture: the shim's driver calls a step: %.1f %s" % (total, sorted(shim.items())))
        bound = UPDATE_CAPTURE_CALLS
        check(total <= bound, "the shim makes at most %d driver calls a step of 16 kernel nodes (%.1f: %s)"
              % (bound, total, sorted(shim.items())))
        # no cooperative launch was seen: no node is asked for the attribute
        check(not shim.get("cuGraphKernelNodeGetAttribute"), "no cooperative-attribute query (%s)"
              % shim.get("cuGraphKernelNodeGetAttribute"))
        check(not shim.get("cuGraphNodeGetType") and shim.get("cuGraphKernelNodeGetParams_v2", 0) <= 2,
              "no type query, two parameters queries a step (the check's nodes), none a node (%s, %s)"
              % (shim.get("cuGraphNodeGetType"), shim.get("cuGraphKernelNodeGetParams_v2")))
        lists = (shim.get("cuGraphGetNodes", 0), shim.get("cuGraphGetEdges", 0) + shim.get("cuGraphGetEdges_v2", 0),
                 shim.get("cuFuncGetParamInfo", 0))
        check(lists[0] <= 1 and lists[1] == 0 and lists[2] <= 1, "one node-list query, no edges query (the "
              "capture's chain), one layout query a step (%s, %s, %s)" % lists)
        # the function's check asks its last parameter and its name, not the
        # parameter past the last: the driver's refusal there is its error
        # path, ~1.5 us on the H200 (2026-11-29, docs/measurements.md)
        names = shim.get("cuFuncGetName", 0) + shim.get("cuKernelGetName", 0)
        check(names <= 1, "one name query a step, the function's check (%s)" % names)


# What device_reset.cu's reset of device 0 destroyed of what the model knew: e1, g1 and P.
RESET_DEV0 = {"dev": 0, "forgot_execs": 1, "forgot_graphs": 1, "forgot_pools": 1, "forgot_captures": 0}


def reset_counts(recs):
    """Each reset's call record: its api, device and forgot_* counts, in order."""
    return [{k: r.get(k) for k in ("api", "dev", "forgot_execs", "forgot_graphs", "forgot_pools", "forgot_captures")}
            for r in ev(recs, "call") if r.get("api", "").startswith("cuDevicePrimaryCtxReset")]


def case_device_reset(recs, pools):
    """cudaDeviceReset with an outstanding graph allocation, an exec, a graph and
    a pool live, then new ones (kernels/model/device_reset.cu): the model forgets
    what the reset destroyed, says nothing of it, and takes the new objects
    for new ones, also on the dead ones' handles (the stand-in gives them:
    STANDIN_REUSE_HANDLES=1)."""
    bad = [(x.get("rule"), x.get("severity"), x.get("api")) for x in ev(recs, "violation")]
    check(not bad, "no violation of any severity (got %s)" % bad)
    check(not ev(recs, "leak"), "no leak record: the reset gave the allocation back (got %s)"
          % [(x.get("when"), x.get("dptr")) for x in ev(recs, "leak")])
    rs = reset_counts(recs)
    if check(len(rs) == 1, "one reset call record (got %s)" % [r["api"] for r in rs]):
        got = {k: v for k, v in rs[0].items() if k != "api"}
        check(got == RESET_DEV0, "the reset forgot e1, g1 and P on device 0 (got %s)" % got)
    s = one(recs, "summary")
    check(s.get("leaks") == 0 and s.get("execs_live") == 0, "summary: leaks 0, execs_live 0 (got %s)"
          % {k: s.get(k) for k in ("leaks", "execs_live")})
    p2 = pools.get("P2")
    pr = [p for p in ev(recs, "pool") if hx(p.get("pool")) == p2]
    if check(len(pr) == 1, "one pool record of P2 at exit (got %d)" % len(pr)):
        check(pr[0].get("allocs") == 1 and pr[0].get("alloc_bytes") == 1 * MiB,
              "P2: allocs 1, alloc_bytes 1 MiB, nothing of P's before the reset (got %s, %s)"
              % (pr[0].get("allocs"), pr[0].get("alloc_bytes")))
    a3 = [a for a in ev(recs, "alloc") if a.get("size") == 1 * MiB and hx(a.get("pool")) == p2]
    check(len(a3) == 1, "g3's allocation recorded from P2 (got %d)" % len(a3))
    if STANDIN:
        m = re.search(r"^reuse graph (\d) exec (\d) pool (\d)$", STDERR, re.M)
        check(m and m.groups() == ("1", "1", "1"),
              "the stand-in gave g1's, e1's and P's handles to g3, e3 and P2 (%s)" % (m and m.groups(),))


def after_device_reset(a, base):
    """Two devices, device 1 used before device 0 is reset (DEVICE_RESET_OTHER):
    the reset forgets what it can tie to device 0 (e1, g1, P) and keeps device
    1's exec and graph, whose allocation outstanding at the exit is named
    (CGS011 hint, a leak record): device 1 was not reset."""
    env = dict(base, STANDIN_DEVICES="2", DEVICE_RESET_OTHER="1")
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "two.jsonl")
        p = run([a.prog], shim_env(env, a.shim, log))
        check(p.returncode == 0, "two devices: exit 0 (got %d)" % p.returncode)
        recs = read_log(log)
        got = [{k: v for k, v in r.items() if k != "api"} for r in reset_counts(recs)]
        check(got == [RESET_DEV0], "two devices: the reset of device 0 forgot e1, g1 and P only (got %s)" % got)
        a4 = [x for x in ev(recs, "alloc") if x.get("dev") == 1]
        leaks = ev(recs, "leak")
        check(len(a4) == 1 and [(l.get("when"), l.get("dptr")) for l in leaks] == [("exit", a4[0].get("dptr"))],
              "two devices: the exit names device 1's outstanding allocation alone (allocs %s, leaks %s)"
              % ([x.get("dptr") for x in a4], [(l.get("when"), l.get("dptr")) for l in leaks]))
        v = [(x.get("rule"), x.get("severity"), x.get("api")) for x in ev(recs, "violation")]
        check(v == [("CGS011", "hint", "exit")], "two devices: no violation but that exit hint (got %s)" % v)
    # A rewritten exec live at the reset (DEVICE_RESET_REWRITE, the policy
    # on): its replacement and the shim's clone die with the context, and the
    # policy forgets them without a driver call; after the reset the new
    # execs, on the dead replacement's and e5's handles, compute their own
    # values and their graphs are the application's to destroy (a policy
    # that kept e5's rewrite destroyed one at e7's destroy).
    env = dict(base, DEVICE_RESET_REWRITE="1")
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "rewrite.jsonl")
        p = run([a.prog], cgtest.shim_env(env, a.shim, log, "info", {"CGSHIM_ON_UPDATE_FAILURE": "reinstantiate"}))
        err = p.stderr.decode(errors="replace")
        check(p.returncode == 0 and "rewrite ok" in err and b"UNEXPECTED" not in p.stdout,
              "rewrite across the reset: exit 0, the new execs' values and destroys as the program's (rc %d, %s)"
              % (p.returncode, [l for l in err.splitlines() if l.startswith("rewrite")]))
        recs = read_log(log)
        check(len(ev(recs, "rewrite")) == 1, "rewrite across the reset: e5 rewritten once before it (got %d)"
              % len(ev(recs, "rewrite")))
        v = [(x.get("rule"), x.get("severity")) for x in ev(recs, "violation")]
        check(v == [("CGS001", "error")] and not ev(recs, "mismatch") and not ev(recs, "warning"),
              "rewrite across the reset: nothing but the predicted update failure (got %s)" % v)


def case_handle_reuse(recs, pools):
    """17 graphs, each instantiated twice (kernels/model/handle_reuse.cu): at info the summary counts them."""
    s = one(recs, "summary")
    check(s.get("graphs") == 17 and s.get("execs") == 34, "summary: 17 graphs, 34 execs (%s, %s)"
          % (s.get("graphs"), s.get("execs")))


def after_handle_reuse(a, base):
    """At debug every graph has its own graph_id and every instantiation its
    own exec_id, whether or not the driver gave the handle again (issue 35)."""
    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        log = os.path.join(tmp, "debug.jsonl")
        p = run([a.prog], cgtest.shim_env(base, a.shim, log, "debug"))
        check(p.returncode == 0, "handle_reuse at debug: exit 0 (got %d)" % p.returncode)
        recs = read_log(log)
        handles = re.findall(r"^graph \d+ (\S+)$", p.stderr.decode(errors="replace"), re.M)
        caps = ev(recs, "capture")
        ids = [c.get("graph_id") for c in caps]
        check(len(caps) == 17 and len(set(ids)) == 17 and None not in ids,
              "17 capture records with 17 graph_ids (%s)" % ids)
        check([hx(c.get("graph")) for c in caps] == [int(h, 16) for h in handles],
              "each capture record names the graph the program got (%s)" % handles)
        inst = [r for r in ev(recs, "call") if r.get("api", "").startswith("cuGraphInstantiate")]
        xids = [r.get("exec_id") for r in inst]
        check(len(inst) == 34 and len(set(xids)) == 34 and None not in xids,
              "34 instantiations with 34 exec_ids (%s)" % xids)
        check(all(r.get("graph_id") == ids[i // 2] for i, r in enumerate(inst)),
              "each instantiation names its graph's id")
        nodes = ev(recs, "node")
        emis = {(n.get("graph_id"), n.get("exec_id")) for n in nodes}
        check(len(nodes) == 68 and len(emis) == 34, "68 node records, 2 per instantiation (%d, %d)" % (len(nodes), len(emis)))
        # a sanitizer's allocator holds freed memory back: no handle comes back
        if STANDIN and not (os.environ.get("ASAN_OPTIONS") or os.environ.get("TSAN_OPTIONS")):
            check(len(set(handles)) < 17, "the stand-in gave a destroyed graph's handle again (%d handles)" % len(set(handles)))
        # the driver's own ids where it has them (CUDA 13.1; the stand-in does)
        cuda = [c.get("cuda_graph_id") for c in caps]
        xcuda = [r.get("cuda_exec_id") for r in inst]
        if STANDIN or cuda[0] is not None:
            check(None not in cuda and len(set(cuda)) == 17 and None not in xcuda and len(set(xcuda)) == 34,
                  "the driver's graph and exec ids recorded, distinct (%s, %s)" % (cuda, xcuda))
            tools = {(n.get("exec_id"), n.get("cuda_tools_id")) for n in nodes}
            check(all(n.get("cuda_node_id") == n.get("index") for n in nodes) and len(tools) == 68,
                  "node records carry the driver's node ids (%d distinct tools ids)" % len(tools))
        if not a.cgshim:
            return
        # The report draws each graph at a handle as its own, each edge once.
        for h in sorted(set(handles)):
            want = [c.get("graph_id") for c in caps if c.get("graph") == h]
            r = subprocess.run([a.cgshim, "report", "--dot", h, log], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               timeout=60)
            dot = r.stdout.decode(errors="replace")
            clusters = re.findall(r"subgraph cluster_g\d+ \{\n\s*label=\"graph \S+ #(\d+)", dot)
            edges = re.findall(r"^\s*(\w+ -> \w+);", dot, re.M)
            if len(want) == 1:
                clusters = re.findall(r'label="graph \S+ #(\d+)', dot)
            check(r.returncode == 0 and [int(x) for x in clusters] == want,
                  "--dot %s: %d graphs drawn, ids %s (want %s)" % (h, len(clusters), clusters, want))
            check(len(edges) == len(want) and len(set(edges)) == len(edges),
                  "--dot %s: one edge per graph, none twice (%d edges, %d distinct)" % (h, len(edges), len(set(edges))))
        r = subprocess.run([a.cgshim, "report", "--dot", "id:%d" % ids[-1], log], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        dot = r.stdout.decode(errors="replace")
        check(r.returncode == 0 and ("#%d (pid" % ids[-1]) in dot and len(re.findall(r" -> ", dot)) == 1,
              "--dot id:%d: that graph alone, one edge" % ids[-1])


AFTER = {"condensed": after_condensed, "handle_reuse": after_handle_reuse, "module_reuse": after_module_reuse,
         "kernel_forms": after_kernel_forms, "node_types": after_node_types, "begin_flags": after_begin_flags,
         "update_capture": after_update_capture, "coop_update": after_coop_update, "launch_alias": after_launch_alias,
         "launch_forms": after_launch_forms, "chain_joins": after_chain_joins, "device_reset": after_device_reset}


CASES = {
    "module_reuse": case_module_reuse,
    "kernel_forms": case_kernel_forms,
    "node_types": case_node_types,
    "multi_device": case_multi_device,
    "deferred_summary": case_deferred_summary,
    "deferred_refs": case_deferred_refs,
    "condensed": case_condensed,
    "three_pools": case_three_pools,
    "current_pool": case_current_pool,
    "destroy_outstanding": case_destroy_outstanding,
    "exit_outstanding": case_exit_outstanding,
    "relaxed_malloc": case_relaxed_malloc,
    "quiet_sync": case_quiet_sync,
    "update_memo": case_update_memo,
    "update_alt": case_update_alt,
    "begin_flags": case_begin_flags,
    "copy_tally": case_copy_tally,
    "handle_reuse": case_handle_reuse,
    "device_reset": case_device_reset,
    "update_capture": case_update_capture,
    "coop_update": case_coop_update,
    "launch_alias": case_launch_alias,
    "launch_forms": case_launch_forms,
    "chain_joins": case_chain_joins,
}


def parse_node_memory(text):
    out = {}
    for m in re.finditer(r"^(\w+) nodes=(\d+) bytes=(-?\d+) per_node=", text, re.M):
        out[m.group(1)] = (int(m.group(2)), int(m.group(3)))
    return out


def node_memory(a, base, tmp, bar=256):
    """Heap bytes per tracked node: (shim heap growth - bare heap growth) / nodes,
    median of 3 runs each."""
    res = {"bare": [], "shim": []}
    for i in range(3):
        for side in ("bare", "shim"):
            env = base if side == "bare" else shim_env(base, a.shim, os.path.join(tmp, "nm-%d.jsonl" % i))
            p = run([a.prog], env)
            check(p.returncode == 0, "node_memory %s run %d: exit %d" % (side, i, p.returncode))
            res[side].append(parse_node_memory(p.stdout.decode(errors="replace")))
    for kind in ("kernel", "alloc", "allocfree"):
        per = []
        for b, s in zip(res["bare"], res["shim"]):
            if kind in b and kind in s:
                per.append((s[kind][1] - b[kind][1]) / b[kind][0])
        if not check(len(per) == 3, "node_memory %s: measured" % kind):
            continue
        med = sorted(per)[1]
        print("node_memory %s: shim heap bytes per tracked node %.1f (runs %s)" % (
            kind, med, ", ".join("%.1f" % x for x in per)), flush=True)
        check(med <= bar, "node_memory %s: %.1f <= %d bytes per node" % (kind, med, bar))


def multi_rank(a, base, tmp):
    """Two ranks of one job (RANK=0 and 1, log-%r.jsonl), rank 1 leaking a
    graph allocation (CGS011) that rank 0 does not: the report shows a table
    per rank, captures and graph memory per rank and device, and flags the
    divergence. A third process names its rank through OMPI_COMM_WORLD_RANK."""
    import json
    tmpl = os.path.join(tmp, "log-%r.jsonl")
    for rank, leak, var in (("0", "0", "RANK"), ("1", "1", "RANK"), ("2", "0", "OMPI_COMM_WORLD_RANK")):
        env = shim_env(base, a.shim, tmpl)
        env[var] = rank
        env["MULTI_DEVICE_LEAK"] = leak
        p = run([a.prog], env)
        check(p.returncode == 0, "rank %s (%s): exit 0 (got %d)" % (rank, var, p.returncode))
    logs = sorted(os.listdir(tmp))
    check(logs == ["log-0.jsonl", "log-1.jsonl", "log-2.jsonl"], "one log per rank (got %s)" % logs)
    for rank in ("0", "1", "2"):
        recs = read_log(os.path.join(tmp, "log-%s.jsonl" % rank))
        check(recs and all(r.get("rank") == rank for r in recs),
              "rank %s: every record carries rank %s (%d records)" % (rank, rank, len(recs)))
    l0, l1 = os.path.join(tmp, "log-0.jsonl"), os.path.join(tmp, "log-1.jsonl")
    rj = subprocess.run([a.cgshim, "report", "--json", l0, l1], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    check(rj.returncode == 0, "report --json over both ranks: exit 0 (%s)" % rj.stderr.decode(errors="replace")[-300:])
    doc = json.loads(rj.stdout or b"{}")
    rk = doc.get("ranks") or {}
    rows = {r.get("rank"): r for r in rk.get("ranks", [])}
    check(sorted(rows) == ["0", "1"], "report: a table per rank (got %s)" % sorted(rows))
    check(all(r.get("captures") == 2 for r in rows.values()), "report: 2 captures on each rank")
    check(rows.get("1", {}).get("rules", {}).get("CGS011") == 1 and not rows.get("0", {}).get("rules"),
          "report: CGS011 on rank 1 only (got %s / %s)" % (rows.get("0", {}).get("rules"), rows.get("1", {}).get("rules")))
    gm = sorted((g.get("rank"), g.get("dev")) for g in rk.get("graphmem", []))
    check(gm == [("0", 0), ("0", 1), ("1", 0), ("1", 1)], "report: graph memory per rank and device (got %s)" % gm)
    g10 = [g for g in rk.get("graphmem", []) if g.get("rank") == "1" and g.get("dev") == 0]
    g00 = [g for g in rk.get("graphmem", []) if g.get("rank") == "0" and g.get("dev") == 0]
    # The leak shows in the graph allocations the shim attributes to rank 1
    # on device 0; the driver's reservation need not grow (the H200 keeps
    # both ranks at one 32 MiB granule: tests/gpu/multigpu two_process).
    check(g10 and g00 and g10[0].get("alloc_bytes", 0) > g00[0].get("alloc_bytes", 0),
          "report: rank 1's leaking graph shows in its device-0 graph allocations (%s > %s bytes)"
          % (g10 and g10[0].get("alloc_bytes"), g00 and g00[0].get("alloc_bytes")))
    div = [d for d in rk.get("divergence", []) if d.get("what") == "violation"]
    check([(d.get("rule"), d.get("ranks_with"), d.get("ranks_without")) for d in div] == [("CGS011", ["1"], ["0"])],
          "report: divergence CGS011 on rank 1, not on rank 0 (got %s)" % div)
    rt = subprocess.run([a.cgshim, "report", l0, l1], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    text = rt.stdout.decode(errors="replace")
    check(rt.returncode == 0 and "== Ranks" in text and "== Cross-rank" in text,
          "report text: Ranks and Cross-rank sections")
    check("DIVERGENCE CGS011 graph-allocation-outstanding: on rank 1 only, not on rank 0" in text,
          "report text: the divergence line")
    # ranks that agree: no divergence
    l2 = os.path.join(tmp, "log-2.jsonl")
    rj = subprocess.run([a.cgshim, "report", "--json", l0, l2], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    doc = json.loads(rj.stdout or b"{}")
    rows = [r.get("rank") for r in (doc.get("ranks") or {}).get("ranks", [])]
    check(rows == ["0", "2"] and not (doc.get("ranks") or {}).get("divergence"),
          "report over ranks 0 and 2 (OMPI_COMM_WORLD_RANK): no divergence (ranks %s, %s)" % (rows, (doc.get("ranks") or {}).get("divergence")))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--case", required=True)
    ap.add_argument("--prog", required=True)
    ap.add_argument("--standin-dir", required=True)
    ap.add_argument("--shim", required=True)
    ap.add_argument("--cgshim", help="the cgshim tool (multi_rank)")
    a = ap.parse_args()
    global STANDIN
    STANDIN = True

    base = cgtest.clean_env()
    ld = base.get("LD_LIBRARY_PATH")
    base["LD_LIBRARY_PATH"] = a.standin_dir + (":" + ld if ld else "")
    for k in ("RANK", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID", "STANDIN_DEVICES", "MULTI_DEVICE_LEAK"):
        base.pop(k, None)
    if a.case in ("multi_device", "multi_rank"):
        base["STANDIN_DEVICES"] = "2"
    if a.case == "device_reset":  # the dead objects' handles given to new ones
        base["STANDIN_REUSE_HANDLES"] = "1"

    with tempfile.TemporaryDirectory(prefix="cgs-model-") as tmp:
        if a.case == "node_memory":
            node_memory(a, base, tmp)
        elif a.case == "multi_rank":
            multi_rank(a, base, tmp)
        else:
            bare = run([a.prog], base)
            check(bare.returncode == 0, "%s bare: exit %d (want 0)" % (a.case, bare.returncode))
            if bare.returncode:
                sys.stdout.write(bare.stdout.decode(errors="replace"))
            log = os.path.join(tmp, "log.jsonl")
            sh = run([a.prog], shim_env(base, a.shim, log))
            check(sh.returncode == 0, "%s shim: exit %d (want 0)" % (a.case, sh.returncode))
            check(sh.stdout == bare.stdout, "%s shim: program output identical to the bare run" % a.case)
            recs = read_log(log)
            check(any(r.get("ev") == "start" for r in recs), "log has a start record (%d records)" % len(recs))
            check(not ev(recs, "mismatch"), "no mismatch records (got %s)" % [(x.get("api"), x.get("rule")) for x in ev(recs, "mismatch")])
            check(not ev(recs, "warning"), "no shim warnings (got %s)" % [x.get("msg") for x in ev(recs, "warning")])
            check(len(ev(recs, "summary")) == 1, "one summary record")
            global STDERR, STDOUT
            STDERR = sh.stderr.decode(errors="replace")
            STDOUT = sh.stdout.decode(errors="replace")
            CASES[a.case](recs, pools_from_stderr(STDERR))
            if a.case in AFTER:
                AFTER[a.case](a, base)
    print("%s: %s" % (a.case, "PASS" if not failures else "%d check(s) FAILED" % failures))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
