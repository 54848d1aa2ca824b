#!/usr/bin/env python3
"""Generate the envelope of every ENV and LIFE row of hooks.def: the
exported wrapper cgh_<name> that hands the call to the hook's hand-written
parts and does everything else once, here.

usage: gen-hooks.py OUT.c OUT.h hooks.def HOOKS/*.c
       gen-hooks.py --check hooks.def HOOKS/*.c

The envelope (call.h): resolve the real entry (CG_REAL, which takes the
application's errno), pass through untouched when the shim is not ready, is
disabled or is re-entered (cg_call_begin), hand the application's errno to
the real call (CG_FWD), keep the errno the call left and restore it before
returning, write the call record (cg_call_rec / cg_call_end). The row's
hand-written parts, found by name in shim/hooks/*.c (a definition at the
start of a line):
  void cgh_<name>_pre(struct cg_call *c, struct cgh_frame *f, <params>)
      before the driver: translate, look up, verdicts, policy, their records
  void cgh_<name>_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, <params>)
      after it: the model update (may set c->flags)
  void cgh_<name>_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, <params>)
      the call record's own fields, when its level is on
  void cgh_<name>_done(struct cg_call *c, struct cgh_frame *f, CUresult rc, <params>)
      after the call record: records that follow it, releases
Each is optional, but an ENV row with none of them is a GEN row. LIFE rows
record at info (CG_CALL_LIFE). BLOCK rows are calls that block the calling
thread until work completes (synchronize, synchronous copy and memset): as
ENV, parts optional, and while dumps can be asked for (dump.h) the call is
noted in the thread's slot after the pre part and the note ends right after
the driver's answer, with the arguments the dump names, picked here from
the parameters (block_note: the stream, event or context; a copy's bytes,
destination and source; a memset's elements, destination and value). A CUSTOM row has a hand-written cgh_<name>;
any other row gets none: the GEN, EXEC, EXECN, UNSAFE and CAPINFO rows get
the same envelope with their class's fixed steps (hooks/gen.c has their
helpers and parts). --check fails on a row without its wrapper, or with two.
"""
import os
import re
import sys

ROW = re.compile(r'^HOOK\((\w+),\s*(\w+),\s*\((.*?)\),\s*\((.*?)\),\s*(\w+)\)', re.M | re.S)
ENVELOPE = ('ENV', 'LIFE', 'GEN', 'EXEC', 'EXECN', 'UNSAFE', 'CAPINFO', 'BLOCK')


def block_note(name, params):
    """A BLOCK row's kind (doors.h, enum cg_block_kind) and its four
    arguments, as C expressions of the row's parameters; None when the row's
    parameters fit no kind (gen-hooks then fails)."""
    names = [p.split()[-1].lstrip('*') for p in params.split(',')] if params and params != 'void' else []
    stream = '2' if name.endswith('_ptds') else '0'  # the legacy stream, or the per-thread one

    def first(prefix):
        return next((n for n in names if n.startswith(prefix)), None)
    if 'Synchronize' in name and 'hStream' in names:
        return 'CG_BK_STREAM', ['hStream', '0', '0', '0']
    if 'Synchronize' in name and 'hEvent' in names:
        return 'CG_BK_EVENT', ['hEvent', '0', '0', '0']
    if name.startswith('cuCtxSynchronize'):
        return 'CG_BK_CTX', ['ctx' if 'ctx' in names else '0', '0', '0', '0']
    if name.startswith('cuMemcpy') and 'ByteCount' in names and first('dst') and first('src'):
        return 'CG_BK_COPY', [stream, 'ByteCount', first('dst'), first('src')]
    if name.startswith('cuMemset') and 'N' in names and first('dst') and len(names) == 3:
        return 'CG_BK_SET', [stream, 'N', first('dst'), names[1]]
    return None


def rows(path):
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    return [(n, pfn, ' '.join(p.split()), ' '.join(a.split()), cls) for n, pfn, p, a, cls in ROW.findall(text)]


def defined(sources):
    """Names of cgh_* functions the sources define: at the start of a line,
    or through a function-like macro whose body defines cgh_##<param>[##_part]
    or invokes such a macro with <param> first (one name per invocation)."""
    names = set()
    for path in sources:
        text = open(path).read()
        names.update(re.findall(r'^(?:CG_HOT\s+)?(?:CUresult|void|static void|int)\s+(cgh_\w+)\s*\(', text, re.M))
        defs = re.findall(r'^#define\s+(\w+)\((\w+)[^)]*\)((?:.*\\\n)*.*)', text, re.M)
        makers = {}
        for _ in range(4):
            for macro, param, body in defs:
                sfx = set(re.findall(r'\bcgh_##%s((?:##_\w+)?)\b' % param, body))
                for other, osfx in list(makers.items()):
                    if re.search(r'\b%s\((?:\s|\\)*%s\b' % (other, param), body):  # a break may follow '('
                        sfx |= osfx
                if sfx:
                    makers[macro] = sfx
        rest = re.sub(r'^#define.*(?:\\\n.*)*', '', text, flags=re.M)
        for macro, sfx in makers.items():
            for arg in re.findall(r'\b%s\((\w+)' % macro, rest):
                names.update('cgh_' + arg + x.replace('##', '') for x in sfx)
    return names


def check(hooks, have):
    errors = []
    for name, _pfn, _p, _a, cls in hooks:
        hand = 'cgh_' + name in have
        if cls == 'CUSTOM' and not hand:
            errors.append('%s: CUSTOM row with no hand-written cgh_%s' % (name, name))
        if cls != 'CUSTOM' and hand:
            errors.append('%s: %s row (generated wrapper) has a hand-written cgh_%s' % (name, cls, name))
        if cls == 'ENV' and not any('cgh_%s_%s' % (name, s) in have for s in ('pre', 'post', 'rec', 'done')):
            errors.append('%s: %s row with no cgh_%s_pre/_post/_rec (make it GEN)' % (name, cls, name))
        if cls == 'BLOCK' and not block_note(name, _p):
            errors.append('%s: BLOCK row whose parameters fit no kind of block_note' % name)
        if cls not in ENVELOPE + ('CUSTOM',):
            errors.append('%s: unknown class %s' % (name, cls))
    return errors


# Generated envelopes a steady capture loop runs every iteration (CG_HOT,
# shim/hot.h): placed with their hot parts instead of among the cold
# envelopes (issue 36: each scattered one costs its own cache lines and page).
HOT = {'cuMemAllocAsync', 'cuMemAllocAsync_ptsz', 'cuMemAllocFromPoolAsync', 'cuMemAllocFromPoolAsync_ptsz',
       'cuMemFreeAsync', 'cuMemFreeAsync_ptsz', 'cuGraphInstantiateWithFlags', 'cuGraphInstantiateWithParams',
       'cuGraphInstantiateWithParams_ptsz'}


def envelope(name, params, args, cls, have):
    """The wrapper of one generated row. The classes of hooks/gen.c add
    their fixed steps: EXEC/EXECN translate the exec handle (and node)
    before the readiness test, UNSAFE asks for CGS007 before the call and
    checks the answer after it, CAPINFO tells the model of an Invalidated
    status."""
    call_args = args
    extra = (', ' + args) if args else ''
    parts = {s: 'cgh_%s_%s' % (name, s) in have for s in ('pre', 'post', 'rec', 'done')}
    flags = 'CG_CALL_LIFE' if cls == 'LIFE' else '0'
    ptsz = '1' if name.endswith('_ptsz') else '0'
    # the frame only where a part or the class uses it (a GEN row such as
    # cuStreamIsCapturing, called per operation by frameworks, zeroes none)
    framed = any(parts.values()) or cls == 'UNSAFE'
    note = block_note(name, params) if cls == 'BLOCK' else None
    out = []
    if parts['rec']:
        # The call record's 4 KB buffer in a frame of its own, entered only
        # when the record is written: the wrapper's frame stays small, so
        # the driver's call runs at the stack depth the application's call
        # had, on the stack lines every other hook's driver call uses
        # (issue 36: with the buffer in the wrapper, five of a capture
        # cycle's eight driver calls ran 4.3 KB deeper than the others).
        p = (', ' + params) if params and params != 'void' else ''
        out += ['static __attribute__((noinline)) void cgh_%s_record(struct cg_call *c, struct cgh_frame *f, '
                'CUresult rc%s)' % (name, p), '{', '\tstruct cg_rec r;', '\tif (cg_call_rec_open(&r, c, rc)) {',
                '\t\tcgh_%s_rec(&r, f, rc%s);' % (name, extra), '\t\trec_end(&r);', '\t}', '}', '']
    out += ['%sCUresult cgh_%s(%s)' % ('CG_HOT ' if name in HOT else '', name, params or 'void'), '{',
           '\tstruct cg_call c;'] + (['\tstruct cgh_frame f = {0};'] if framed else []) + [
           '\tCUresult rc;', '\tCG_REAL(%s);' % name]
    if cls == 'EXECN':
        out.append('\thNode = cgh_exec_node(hGraphExec, hNode, "%s");' % name)
    if cls in ('EXEC', 'EXECN'):
        out.append('\thGraphExec = cg_policy_exec(hGraphExec);')
    out += ['\tif (!cg_call_begin(&c, HID_%s, %s))' % (name, flags),
            '\t\treturn CG_FWD(real_%s(%s));' % (name, call_args)]
    if cls == 'UNSAFE':
        out.append('\tf.verdict = cg_rule_capture_unsafe("%s", NULL);' % name)
    if parts['pre']:
        out.append('\tcgh_%s_pre(&c, &f%s);' % (name, extra))
    if note:
        out.append('\tCGH_BLOCK_ENTER(HID_%s, %s, %s);' % (name, note[0], ', '.join(note[1])))
    out += ['\trc = CG_FWD(real_%s(%s));' % (name, call_args),
            '\tconst int cg_errno_out = errno;']
    if note:
        out.append('\tCGH_BLOCK_LEAVE();')
    if cls == 'UNSAFE':
        out.append('\tcg_rule_capture_unsafe_after("%s", f.verdict, rc);' % name)
    if cls == 'CAPINFO':
        out.append('\tcgh_capinfo_seen(rc, hStream, captureStatus_out, id_out, %s, "%s");' % (ptsz, name))
    if parts['post']:
        out.append('\tcgh_%s_post(&c, &f, rc%s);' % (name, extra))
    if parts['rec']:
        out += ['\tif (cg_call_rec_wanted(&c, rc))', '\t\tcgh_%s_record(&c, &f, rc%s);' % (name, extra)]
    else:
        out.append('\tcg_call_end(&c, rc);')
    if parts['done']:
        out.append('\tcgh_%s_done(&c, &f, rc%s);' % (name, extra))
    out += ['\tCG_PROF_MARK(CG_PROF_RETURN);', '\terrno = cg_errno_out;', '\treturn rc;', '}', '']
    return out


def prototypes(name, params, have):
    p = (', ' + params) if params and params != 'void' else ''
    out = []
    if 'cgh_%s_pre' % name in have:
        out.append('void cgh_%s_pre(struct cg_call *c, struct cgh_frame *f%s);' % (name, p))
    if 'cgh_%s_post' % name in have:
        out.append('void cgh_%s_post(struct cg_call *c, struct cgh_frame *f, CUresult rc%s);' % (name, p))
    if 'cgh_%s_rec' % name in have:
        out.append('void cgh_%s_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc%s);' % (name, p))
    if 'cgh_%s_done' % name in have:
        out.append('void cgh_%s_done(struct cg_call *c, struct cgh_frame *f, CUresult rc%s);' % (name, p))
    return out


def main(argv):
    if argv[1] == '--check':
        hooks, have = rows(argv[2]), defined(argv[3:])
        errors = check(hooks, have)
        for e in errors:
            print('gen-hooks: ' + e, file=sys.stderr)
        return 1 if errors else 0
    out, out_h, hooks, have = argv[1], argv[2], rows(argv[3]), defined(argv[4:])
    errors = check(hooks, have)
    if errors:
        sys.exit('gen-hooks: ' + '\ngen-hooks: '.join(errors))
    env = [h for h in hooks if h[4] in ENVELOPE]
    header = ['/* generated by shim/gen-hooks.py from hooks.def: the prototypes of the',
              ' * ENV and LIFE rows\' parts (hooks.h includes it, so a part defined',
              ' * with another signature is a compile error). */',
              '#ifndef CGSHIM_HOOKS_PARTS_H', '#define CGSHIM_HOOKS_PARTS_H']
    for name, _pfn, params, _args, _cls in env:
        header += prototypes(name, params, have)
    header += ['#endif', '']
    with open(out_h, 'w') as f:
        f.write('\n'.join(header))
    lines = ['/* generated by shim/gen-hooks.py from hooks.def: the envelope of its ENV',
             ' * and LIFE rows (call.h); the hooks\' own parts are in shim/hooks/. */',
             '#define _GNU_SOURCE',
             '#include "%s"' % os.path.join(os.path.dirname(os.path.abspath(argv[3])), 'hot.h'),
             '#include "%s"' % os.path.join(os.path.dirname(os.path.abspath(argv[3])), 'hooks', 'hooks.h'),
             '#include "%s"' % os.path.abspath(out_h), '']
    for name, _pfn, params, args, cls in env:
        lines += envelope(name, params, args, cls, have)
    with open(out, 'w') as f:
        f.write('\n'.join(lines))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
