#!/usr/bin/env python3
"""bench/prof_table.py -- the in-place cost profile (shim/prof.h, meson
-Dprof=true) as a table: per hook, each step between two marks, its count
and mean time, and the hook's time per cycle.

usage: prof_table.py HOOKS_DEF ITERS FILE [FILE...]
  HOOKS_DEF  shim/hooks.def (a hook's number is its row)
  ITERS      the iterations of the workload (per-cycle figures divide by it;
             several files: by ITERS times their number)
Steps are named from -> to with the marks of prof.h: entry, fwd0 (the real
call's start), fwd1 (its end), call_end, rec_end, return, uN (hand-placed).
'shim' per hook: every step except fwd0 -> fwd1 (the driver's time), each
as its median times its count per cycle (the benchmark's medians ignore a
rare slow cycle; the mean is shown beside it)."""
import re
import sys
from collections import defaultdict

LABELS = {1: 'entry', 2: 'fwd0', 3: 'fwd1', 4: 'call_end', 5: 'rec_end', 6: 'return'}


def hook_names(path):
    names = []
    for line in open(path):
        m = re.match(r'\s*HOOK\(\s*(\w+)\s*,', line)
        if m:
            names.append(m.group(1))
    return names


def label(n):
    return LABELS.get(n, 'u%d' % (n - 16))


def main(argv):
    names, iters, files = hook_names(argv[1]), int(argv[2]), argv[3:]
    steps = defaultdict(lambda: [0, 0, []])
    rate = []
    for fn in files:
        for line in open(fn):
            p = line.split()
            if p[0] == 'tsc_per_ns':
                rate.append(float(p[1]))
                continue
            hid, a, b, n, cyc, med = int(p[0]), int(p[1]), int(p[2]), int(p[3]), int(p[4]), int(p[5])
            st = steps[(hid, a, b)]
            st[0] += n
            st[1] += cyc
            st[2].append((med, n))
    r = sum(rate) / len(rate)
    cycles = iters * len(files)
    hooks = defaultdict(list)
    for (hid, a, b), (n, cyc, meds) in steps.items():
        # a step's typical time: the median of its files' medians, times
        # its count per cycle (a step run in some cycles only counts less)
        med = sorted(m for m, k in meds)[len(meds) // 2]
        hooks[hid].append((a, b, n, cyc, med * n / cycles))
    rows = []
    for hid, st in hooks.items():
        shim = sum(t for a, b, n, c, t in st if not (a == 2 and b == 3)) / r
        drv = sum(t for a, b, n, c, t in st if a == 2 and b == 3) / r
        rows.append((shim, drv, hid, st))
    rows.sort(reverse=True)
    total = 0
    for shim, drv, hid, st in rows:
        total += shim
        nm = names[hid] if 0 <= hid < len(names) else '-'
        # calls a cycle: the entry step's count over the cycles; a hook
        # the workload calls only at start-up (cuGetProcAddress: ~440 a
        # process, the static runtime's) reads as if it ran every cycle
        # when its count happens to be near a multiple of the cycles
        calls = max((n for a, b, n, c, t in st if a == 1), default=0) / cycles
        print('%-36s shim %8.0f ns/cycle  driver %8.0f ns/cycle  calls/cycle %.2f' % (nm, shim, drv, calls))
        for a, b, n, c, t in sorted(st, key=lambda x: -x[4]):
            print('    %-9s -> %-9s %7d  mean %7.0f ns  median x count %7.0f ns/cycle' %
                  (label(a), label(b), n, c / r / n, t / r))
    print('shim total %.0f ns/cycle' % total)


if __name__ == '__main__':
    main(sys.argv)
