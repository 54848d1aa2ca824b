#!/usr/bin/env python3
"""Every row of shim/hooks.def and shim/rt-hooks.def has exactly one wrapper:
a CUSTOM row one written by hand in shim/hooks/ (or getproc.c), any other row
none written by hand (gen-hooks.py writes its envelope), and the generated
hooks-env.c holds exactly the rows that are not CUSTOM. The checker is also run on
altered copies of hooks.def, where it must fail.

usage: hooks_gen_check.py SRC_ROOT HOOKS_ENV_C"""
import glob
import os
import re
import subprocess
import sys
import tempfile

root, env_c = sys.argv[1], sys.argv[2]
shim = os.path.join(root, 'shim')
gen = os.path.join(shim, 'gen-hooks.py')
hooks_def = os.path.join(shim, 'hooks.def')
sources = sorted(glob.glob(os.path.join(shim, 'hooks', '*.c'))) + [os.path.join(shim, 'getproc.c')]
failed = 0


def check(cond, msg):
    global failed
    print(('ok   ' if cond else 'FAIL ') + msg)
    failed += not cond


def checker(def_path):
    p = subprocess.run([sys.executable, gen, '--check', def_path] + sources, capture_output=True, text=True)
    return p.returncode, p.stderr


rc, err = checker(hooks_def)
check(rc == 0, 'every hooks.def row has one wrapper' + ('' if rc == 0 else ':\n' + err))

text = re.sub(r'/\*.*?\*/', '', open(hooks_def).read(), flags=re.S)
rows = re.findall(r'^HOOK\((\w+),.*?,\s*(\w+)\)\s*$', text, re.M | re.S)
env_rows = {n for n, cls in rows if cls != 'CUSTOM'}
generated = set(re.findall(r'^(?:CG_HOT )?CUresult cgh_(\w+)\(', open(env_c).read(), re.M))
check(generated == env_rows, 'hooks-env.c holds exactly the %d rows that are not CUSTOM (extra %s, missing %s)'
      % (len(env_rows), sorted(generated - env_rows), sorted(env_rows - generated)))


def altered(name, old, new):
    """hooks.def with row name's class old replaced by new."""
    src = open(hooks_def).read()
    m = re.search(r'^HOOK\(%s,.*?,\s*%s\)' % (name, old), src, re.M | re.S)
    assert m, (name, old)
    fd, path = tempfile.mkstemp(suffix='.def')
    with os.fdopen(fd, 'w') as f:
        f.write(src[:m.start()] + m.group(0)[:-len(old) - 1] + new + ')' + src[m.end():])
    return path


hand = next(n for n, cls in rows if cls == 'CUSTOM')
env = next(n for n, cls in rows if cls == 'ENV')
for name, old, new, why in [(hand, 'CUSTOM', 'GEN', 'a generated row with a hand-written wrapper'),
                            (env, 'ENV', 'CUSTOM', 'a CUSTOM row with no hand-written wrapper')]:
    path = altered(name, old, new)
    rc, err = checker(path)
    os.unlink(path)
    check(rc != 0 and name in err, 'the check fails on %s (%s %s -> %s)' % (why, name, old, new))

# Blocking calls (the dump, docs/dump.md): every hooked entry point that
# blocks the calling thread until work completes (a synchronize, a copy or
# memset without Async) is a BLOCK row; exactly the BLOCK rows' generated
# wrappers note the call; no part notes one by hand (the one list).
blocking = {n for n, _cls in rows
            if 'Synchronize' in n or (re.match(r'cuMem(cpy|set)', n) and 'Async' not in n)}
block_rows = {n for n, cls in rows if cls == 'BLOCK'}
check(blocking <= block_rows, 'every blocking hooks.def row is a BLOCK row (not: %s)' % sorted(blocking - block_rows))
env_src = open(env_c).read()
noted = {m.group(1) for m in re.finditer(r'^CUresult cgh_(\w+)\(.*?^}', env_src, re.M | re.S)
         if 'CGH_BLOCK_ENTER(' in m.group(0) and 'CGH_BLOCK_LEAVE()' in m.group(0)}
check(noted == block_rows, 'the generated wrappers that note a blocking call are the %d BLOCK rows (extra %s, '
      'missing %s)' % (len(block_rows), sorted(noted - block_rows), sorted(block_rows - noted)))
by_hand = [p for p in sources if re.search(r'CGH_BLOCK_(ENTER|LEAVE)\(', open(p).read())]
check(not by_hand, 'no hand-written part notes a blocking call (%s)' % by_hand)
odd = next(n for n, cls in rows if cls == 'GEN' and n not in blocking)
path = altered(odd, 'GEN', 'BLOCK')
rc, err = checker(path)
os.unlink(path)
check(rc != 0 and odd in err, 'the check fails on a BLOCK row whose parameters fit no kind (%s)' % odd)

# Runtime rows: one exported wrapper each, generated from the row (no
# hand-written cuda* definition in shim/hooks/), and one ABI line each.
rt = re.sub(r'/\*.*?\*/', '', open(os.path.join(shim, 'rt-hooks.def')).read(), flags=re.S)
rt_rows = re.findall(r'^RTHOOK\((\w+),\s*(\w+),', rt, re.M)
hand_rt = set()
for path in sources:
    hand_rt.update(re.findall(r'^(?:CG_HOT\s+)?(?:RT_EXPORT\s+)?rt_err\s+(cuda\w+)\s*\(', open(path).read(), re.M))
custom_rt = {n for n, cls in rt_rows if cls == 'CUSTOM'}
check(len(rt_rows) == len(re.findall(r'^RTHOOK\(', rt, re.M)), 'every rt-hooks.def row has a class column')
check(hand_rt == custom_rt, 'hand-written runtime wrappers are exactly the CUSTOM rows (extra %s, missing %s)'
      % (sorted(hand_rt - custom_rt), sorted(custom_rt - hand_rt)))
check(all(cls in ('GEN', 'HOT', 'CUSTOM') for _n, cls in rt_rows), 'runtime rows are GEN, HOT or CUSTOM')

print('%d failed' % failed)
sys.exit(1 if failed else 0)
