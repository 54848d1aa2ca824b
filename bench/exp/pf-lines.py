#!/usr/bin/env python3
"""bench/exp/pf-lines.py LIB WORKLOAD STANDIN_DIR -- FOR MEASURING ONLY:
fill the prefetch table (bench/exp/prefetch.h) of a pf-entry/pf-both build
LIB, in place, with the code lines each hook of a steady capture-64 cycle
runs on the stand-in: valgrind lackey traces `WORKLOAD capture 64 12`
(built against the stand-in: bench/workload.cu as C), the trace is cut at
every entry of a hook (an exported cu* hook or its cgh_ wrapper), and a
hook's lines are those of the library it ran in every one of the cycles
5-10. The table is written into the file by the symbol's address.
Prints the lines per hook."""
import os
import re
import struct
import subprocess
import sys
import tempfile
from collections import defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
from prof_table import hook_names  # noqa: E402  (a hook's number is its row of hooks.def)

HOOKS = ['cuStreamBeginCapture_v2', 'cuMemAllocAsync', 'cuMemFreeAsync', 'cuStreamEndCapture',
         'cuGraphInstantiateWithFlags', 'cuGraphExecDestroy', 'cuGraphDestroy']
SLOTS, POOL = 8, 1500


def main(lib, wl, standin):
    here = os.path.dirname(os.path.abspath(__file__))
    tmp = tempfile.mkdtemp()
    md = os.path.join(tmp, 'mapsdump.so')
    subprocess.check_call(['gcc', '-shared', '-fPIC', '-O2', '-o', md, os.path.join(here, 'mapsdump.c')])
    maps, trace = os.path.join(tmp, 'maps'), os.path.join(tmp, 'trace')
    env = dict(os.environ, LD_LIBRARY_PATH=standin, LD_PRELOAD=lib + ':' + md, CGX_MAPS=maps, BENCH_FLUSH='0',
               CGSHIM_LOG_FILE=os.path.join(tmp, 'log-%p.jsonl'))
    subprocess.check_call(['valgrind', '--tool=lackey', '--trace-mem=yes', '--log-file=' + trace,
                           wl, 'capture', '64', '12'], env=env, stdout=subprocess.DEVNULL)
    ranges = [[int(x, 16) for x in ln.split()[0].split('-')] + [ln.split()[1]] for ln in open(maps)]
    base = min(r[0] for r in ranges)
    code = [r for r in ranges if 'x' in r[2]]
    # hook entries: the cu* exports and their cgh_ wrappers, by address (the
    # full symbol table: the library is not stripped)
    nm = subprocess.run(['nm', lib], capture_output=True, text=True).stdout
    entry = {}
    for ln in nm.splitlines():
        p = ln.split()
        if len(p) == 3 and p[1] in 'tT':
            m = re.match(r'^(?:cgh_)?(cu[A-Z]\w*)$', p[2])
            if m and not re.search(r'_(pre|post|rec|record|done|slow|logged|sampled)$', m.group(1)):
                entry[base + int(p[0], 16)] = m.group(1)
    hid = {h: i for i, h in enumerate(hook_names(os.path.join(here, '..', '..', 'shim', 'hooks.def')))}
    lo, hi = min(r[0] for r in code), max(r[1] for r in code)
    cycle, cur = -1, None
    per = defaultdict(lambda: defaultdict(set))  # hook -> cycle -> lines
    for ln in open(trace):
        if not ln.startswith('I'):
            continue
        a = int(ln[3:].split(',')[0], 16)
        name = entry.get(a)
        if name:
            cur = name
            if name == HOOKS[0]:
                cycle += 1
        if cur and lo <= a < hi:
            per[cur][cycle].add((a - base) >> 6)
    tab = {}
    for h in HOOKS:
        cyc = [per[h][c] for c in range(5, 11) if c in per[h]]
        if len(cyc) < 4:
            sys.exit('pf-lines: hook %s not seen in the steady cycles (%d)' % (h, len(cyc)))
        tab[h] = sorted(set.intersection(*cyc))
        print('%-28s hid %3d  %3d lines every cycle' % (h, hid[h], len(tab[h])))
    # the table's file offset
    sym = [l.split() for l in nm.splitlines() if l.endswith(' cgx_pf_tab')][0]
    va = int(sym[0], 16)
    rs = subprocess.run(['readelf', '-SW', lib], capture_output=True, text=True).stdout
    off = None
    for ln in rs.splitlines():
        m = re.match(r'\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)', ln)
        if m:
            addr, fo, size = int(m.group(2), 16), int(m.group(3), 16), int(m.group(4), 16)
            if addr and addr <= va < addr + size and m.group(1) != '.bss':
                off = fo + va - addr
    if off is None:
        sys.exit('pf-lines: cgx_pf_tab not in a file-backed section')
    with open(lib, 'r+b') as f:
        f.seek(off)
        if f.read(16) != b'CGXPFTAB-0123456':
            sys.exit('pf-lines: no table magic at the symbol')
        hids, firsts, ns, pool = [-1] * SLOTS, [0] * SLOTS, [0] * SLOTS, []
        for k, h in enumerate(HOOKS):
            hids[k], firsts[k], ns[k] = hid[h], len(pool), len(tab[h])
            pool += tab[h]
        if len(pool) > POOL or max(pool) > 65535:
            sys.exit('pf-lines: table too small')
        f.write(struct.pack('<%dh%dH%dH%dH' % (SLOTS, SLOTS, SLOTS, POOL), *hids, *firsts, *ns,
                            *(pool + [0] * (POOL - len(pool)))))
    print('pf-lines: %d lines written into %s' % (len(pool), lib))


if __name__ == '__main__':
    main(*sys.argv[1:4])
