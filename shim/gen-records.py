#!/usr/bin/env python3
"""Generate the record writer and the log format's field tables from
include/cgshim/records.def, the one schema of the shim's records.

usage: gen-records.py c OUT.c OUT.h records.def
       gen-records.py report OUT.c OUT.h records.def     (the report's readers)
       gen-records.py doc records.def docs/log-format.md      (rewrite the tables)
       gen-records.py check-doc records.def docs/log-format.md (fail when they differ)

C: per event NAME, the facts struct ev_NAME (one member per REQ/OPT/DYN
field, in the schema's order; has_<field> beside an optional number, bool
or null) and emit_NAME(level, facts): begins the record, writes the fields
in the schema's order and ends it. It is the only code in the shim that
starts a record (shim/emit.h). Doc: one table per event, between the
markers <!-- BEGIN fields of NAME ... --> and <!-- END fields --> at the
end of its "### `NAME`" section of docs/log-format.md. Report: per event
NAME the typed reader rd_NAME() filling struct rd_NAME from a parsed
record, and the event -> handler table struct rp_on with rp_on_call(), the
one dispatch of every view of tools/ (gen_report below).
"""
import os
import re
import sys

EVENT = re.compile(r'^CGSHIM_EVENT\((\w+),\s*"([^"]*)",\s*"((?:[^"\\]|\\.)*)"\)', re.M)
FIELD = re.compile(r'^CGSHIM_FIELD\((\w+),\s*(\w+),\s*(\w+),\s*(\w+),\s*"((?:[^"\\]|\\.)*)"\)', re.M)
TYPES = ('hex', 'u64', 'int', 'bool', 'str', 'word', 'site', 'null', 'list', 'obj')
USES = ('REQ', 'OPT', 'DYN', 'EXT')
C_KEYWORDS = {'default', 'int', 'char', 'long', 'short', 'unsigned', 'signed', 'const', 'static', 'struct',
              'union', 'enum', 'if', 'else', 'for', 'while', 'do', 'switch', 'case', 'break', 'continue',
              'return', 'goto', 'void', 'volatile', 'register', 'extern', 'auto', 'sizeof', 'typedef',
              'float', 'double', 'inline', 'restrict', 'bool'}


def unquote(s):
    return re.sub(r'\\(.)', r'\1', s)


def schema(path):
    """[(id, name, what, [(field, type, use, what), ...]), ...] in order."""
    text = re.sub(r'/\*.*?\*/', '', open(path).read(), flags=re.S)
    events, by_id = [], {}
    for m in re.finditer(r'^CGSHIM_(EVENT|FIELD)\(.*$', text, re.M):
        line = m.group(0)
        e = EVENT.match(line)
        if e:
            ev = (e.group(1), e.group(2), unquote(e.group(3)), [])
            if e.group(1) in by_id:
                sys.exit('%s: event %s twice' % (path, e.group(1)))
            by_id[e.group(1)] = ev
            events.append(ev)
            continue
        f = FIELD.match(line)
        if not f:
            sys.exit('%s: malformed row: %s' % (path, line))
        eid, name, typ, use, what = f.groups()
        if eid not in by_id:
            sys.exit('%s: field %s of unknown (or later) event %s' % (path, name, eid))
        if typ not in TYPES or use not in USES:
            sys.exit('%s: %s.%s: type %s / use %s unknown' % (path, eid, name, typ, use))
        fields = by_id[eid][3]
        if any(x[0] == name for x in fields):
            sys.exit('%s: %s.%s twice' % (path, eid, name))
        if use == 'EXT' and fields and fields[-1][2] != 'EXT' and any(x[2] == 'EXT' for x in fields):
            sys.exit('%s: %s: the EXT rows must be contiguous (one extension)' % (path, eid))
        fields.append((name, typ, use, unquote(what)))
    return events


# The ids part (issue 35's identity): an event whose rows name the graph's
# and the executable's ids, the shim's and the driver's, as optional
# numbers in this order (graph_id, cuda_graph_id[, exec_id, cuda_exec_id],
# contiguous) carries them as one member, struct emit_ids ids, filled from
# the model's ids (model_ids_of); each is written when known (non-0).
IDS = ('graph_id', 'cuda_graph_id', 'exec_id', 'cuda_exec_id')
IDS_KEY = {'graph_id': 'graph', 'cuda_graph_id': 'cuda_graph', 'exec_id': 'exec', 'cuda_exec_id': 'cuda_exec'}


def ids_part(fields):
    """(first, count) of the event's ids rows, or None."""
    at = [i for i, x in enumerate(fields) if x[0] in IDS and x[2] != 'EXT']
    if not at:
        return None
    names = [fields[i][0] for i in at]
    if (at != list(range(at[0], at[0] + len(at))) or names != list(IDS[:len(names)]) or len(names) not in (2, 4)
            or any(fields[i][1:3] != ('u64', 'OPT') for i in at)):
        sys.exit('records.def: the ids rows of an event are graph_id, cuda_graph_id[, exec_id, cuda_exec_id], '
                 'optional u64, contiguous: %s' % names)
    return at[0], len(at)


def member(name):
    return name + '_' if name in C_KEYWORDS else name


def c_decl(name, typ):
    m = member(name)
    return {
        'hex': 'unsigned long long %s;' % m,
        'u64': 'unsigned long long %s;' % m,
        'int': 'long long %s;' % m,
        'bool': 'int %s;' % m,
        'str': 'const char *%s;' % m,
        'word': 'const char *%s;' % m,
        'site': 'uint32_t %s;' % m,
        'null': '',
        'list': 'struct emit_part %s;' % m,
        'obj': 'struct emit_part %s;' % m,
    }[typ]


def has_flag(typ, use):
    return use == 'OPT' and typ in ('hex', 'u64', 'int', 'bool', 'null')


def c_write(name, typ, use, key=None):
    """The statements writing one field from facts f into record r."""
    m = 'f->' + member(name)
    k = key or '"%s"' % name
    w = {
        'hex': 'rec_hex(r, %s, %s);' % (k, m),
        'u64': 'rec_u64(r, %s, %s);' % (k, m),
        'int': 'rec_int(r, %s, %s);' % (k, m),
        'bool': 'rec_bool(r, %s, %s);' % (k, m),
        'str': 'rec_str(r, %s, %s);' % (k, m),
        'word': 'rec_word(r, %s, %s);' % (k, m),
        'site': 'rec_site(r, %s, %s);' % (k, m),
        'null': 'rec_str(r, %s, NULL);' % k,
        'list': '%s.fn(r, %s, %s.arg);' % (m, k, m),
        'obj': '%s.fn(r, %s, %s.arg);' % (m, k, m),
    }[typ]
    if use == 'DYN':
        return ['if (%s_key)' % m, '\t' + w.replace(k, m + '_key', 1)]
    if has_flag(typ, use):
        return ['if (f->has_%s)' % name, '\t' + w]
    if typ in ('list', 'obj') and use == 'OPT':
        return ['if (%s.fn)' % m, '\t' + w]
    if typ in ('str', 'word') and use == 'OPT':
        return ['if (%s)' % m, '\t' + w]
    if typ == 'word' and use == 'REQ':  # rec_word takes no NULL
        return ['if (%s)' % m, '\t' + w, 'else', '\trec_str(r, %s, NULL);' % k]
    return [w]


def gen_c(events, out_c, out_h, src):
    h = ['/* Generated by shim/gen-records.py from %s: do not edit. */' % src,
         '#ifndef CGSHIM_EMIT_GEN_H', '#define CGSHIM_EMIT_GEN_H', '', '#include <stdint.h>', '',
         'struct cg_rec;', '',
         '/* A list or object field (or an event\'s extension), written by fn:',
         ' * fn(r, key, arg) writes key and its value (rec_open .. rec_close);',
         ' * an extension\'s fn gets key NULL and writes its own fields. */',
         '/* The ids part: the shim\'s and the driver\'s ids of a graph and an',
         ' * executable (0: unknown, not written); model_ids_of fills it. */',
         'struct emit_ids {',
         '\tunsigned long long graph, cuda_graph, exec, cuda_exec;',
         '};',
         '/* Their fields graph_id, cuda_graph_id, exec_id, cuda_exec_id, the',
         ' * known ones (for an extension that writes them). */',
         'void emit_ids_put(struct cg_rec *r, const struct emit_ids *ids);', '',
         'struct emit_part {',
         '\tvoid (*fn)(struct cg_rec *r, const char *key, const void *arg);',
         '\tconst void *arg;',
         '};', '']
    here = os.path.dirname(os.path.abspath(__file__))  # shim/: built from other directories too
    c = ['/* Generated by shim/gen-records.py from %s: do not edit. */' % src] + \
        ['#include "%s"' % os.path.join(here, x) for x in ('emit.h', 'log.h', 'site.h')] + ['']
    c += ['void emit_ids_put(struct cg_rec *r, const struct emit_ids *ids)', '{']
    for fname in IDS:
        c += ['\tif (ids->%s)' % IDS_KEY[fname], '\t\trec_u64(r, "%s", ids->%s);' % (fname, IDS_KEY[fname])]
    c += ['}', '']
    for eid, name, what, fields in events:
        s = 'ev_' + name
        h.append('/* "%s": %s */' % (name, what))
        h.append('struct %s {' % s)
        h.append('\tuint64_t at; /* the record\'s time stamp (CLOCK_MONOTONIC ns); 0: now */')
        h.append('\tint batched; /* a warn/error record sent with the thread\'s batch (rec_batched) */')
        ext = False
        ids = ids_part(fields)
        for k, (fname, typ, use, fwhat) in enumerate(fields):
            if ids and k == ids[0]:
                h.append('\tstruct emit_ids ids; /* optional: %s */' % ', '.join(IDS[:ids[1]]))
            if ids and ids[0] <= k < ids[0] + ids[1]:
                continue
            if use == 'EXT':
                if not ext:
                    h.append('\tstruct emit_part more; /* the extension: %s */' %
                             ', '.join(x[0] for x in fields if x[2] == 'EXT'))
                    ext = True
                continue
            d = c_decl(fname, typ)
            if d:
                h.append('\t%s /* %s%s */' % (d, 'optional: ' if use == 'OPT' else '', fwhat))
            if use == 'DYN':
                h.append('\tconst char *%s_key; /* the key it is written under; NULL: absent */' % member(fname))
            if has_flag(typ, use):
                h.append('\tunsigned char has_%s;' % fname)
        h.append('};')
        h.append('/* Write the "%s" record of facts f at level; returns 1 when written. */' % name)
        h.append('int emit_%s(int level, const struct %s *f);' % (name, s))
        h.append('/* The same into r, left open: returns 1 when r is on, the caller then')
        h.append(' * adds what follows (an extension\'s fields) and ends it (rec_end). */')
        h.append('int emit_%s_open(struct cg_rec *r, int level, const struct %s *f);' % (name, s))
        h.append('')
        c.append('int emit_%s(int level, const struct %s *f)' % (name, s))
        c.append('{')
        c.append('\tstruct cg_rec rec;')
        c.append('\tif (!emit_%s_open(&rec, level, f))' % name)
        c.append('\t\treturn 0;')
        c.append('\trec_end(&rec);')
        c.append('\treturn 1;')
        c.append('}')
        c.append('')
        c.append('int emit_%s_open(struct cg_rec *r, int level, const struct %s *f)' % (name, s))
        c.append('{')
        c.append('\trec_begin_at(r, level, CGSHIM_EV_%s, f->at);' % eid)
        c.append('\tif (!r->on)')
        c.append('\t\treturn 0;')
        ext = False
        for k, (fname, typ, use, fwhat) in enumerate(fields):
            if ids and ids[0] <= k < ids[0] + ids[1]:
                c.append('\tif (f->ids.%s)' % IDS_KEY[fname])
                c.append('\t\trec_u64(r, "%s", f->ids.%s);' % (fname, IDS_KEY[fname]))
                continue
            if use == 'EXT':
                if not ext:
                    c.append('\tif (f->more.fn)')
                    c.append('\t\tf->more.fn(r, NULL, f->more.arg);')
                    ext = True
                continue
            c.extend('\t' + line for line in c_write(fname, typ, use))
        c.append('\tif (f->batched)')
        c.append('\t\trec_batched(r);')
        c.append('\treturn 1;')
        c.append('}')
        c.append('')
    h.append('#endif')
    open(out_h, 'w').write('\n'.join(h) + '\n')
    open(out_c, 'w').write('\n'.join(c) + '\n')


# ---- the report's readers (tools/): typed structs, readers, the handler table

RD_DECL = {
    'hex': 'const char *%s;', 'str': 'const char *%s;', 'word': 'const char *%s;',
    'u64': 'long long %s;', 'int': 'long long %s;', 'bool': 'int %s;',
    'site': 'const char *%s;', 'null': 'const json_t *%s;', 'list': 'const json_t *%s;',
    'obj': 'const json_t *%s;',
}
RD_READ = {  # statements reading value v into the member (report-read.c's converters)
    'hex': 'f->%(m)s = rp_v_str(v);', 'str': 'f->%(m)s = rp_v_str(v);', 'word': 'f->%(m)s = rp_v_str(v);',
    'u64': 'f->has_%(n)s = rp_v_int(v, &f->%(m)s);', 'int': 'f->has_%(n)s = rp_v_int(v, &f->%(m)s);',
    'bool': 'f->has_%(n)s = rp_v_bool(v, &f->%(m)s);', 'site': 'f->%(m)s = rp_v_site0(v);',
    'null': 'f->%(m)s = v;', 'list': 'f->%(m)s = json_is_array(v) ? v : NULL;',
    'obj': 'f->%(m)s = json_is_object(v) ? v : NULL;',
}
RD_PRESENT = {  # a required field counts as missing unless this holds
    'hex': 'f->%(m)s', 'str': 'f->%(m)s', 'word': 'f->%(m)s', 'u64': 'f->has_%(n)s == 1',
    'int': 'f->has_%(n)s == 1', 'bool': 'f->has_%(n)s', 'site': 'f->%(m)s', 'null': 'f->%(m)s',
    'list': 'f->%(m)s', 'obj': 'f->%(m)s',
}


def ev_kind_c(events):
    """rp_ev_kind(): the name's length and first byte pick the candidates
    (one, mostly), a memcmp confirms: the loader asks once a line."""
    by = {}
    for eid, name, _, _ in events:
        by.setdefault(len(name), {}).setdefault(name[0], []).append((eid, name))
    c = ['enum rp_ev rp_ev_kind(const char *ev, size_t n)', '{', '\tswitch (n) {']
    for n in sorted(by):
        c += ['\tcase %d:' % n, '\t\tswitch (ev[0]) {']
        for ch in sorted(by[n]):
            c.append("\t\tcase '%s':" % ch)
            for eid, name in by[n][ch]:
                c += ['\t\t\tif (!memcmp(ev, "%s", %d))' % (name, n), '\t\t\t\treturn RP_EV_%s;' % eid]
            c.append('\t\t\tbreak;')
        c += ['\t\t}', '\t\tbreak;']
    c += ['\t}', '\treturn RP_EV_UNKNOWN;', '}', '']
    return c


def gen_report(events, out_c, out_h, src):
    """tools/: struct rd_NAME and rd_NAME() per event (every field of the
    schema, EXT ones too, read as its type says; the reading rules are
    rp_str/rp_int/rp_bool/rp_site0's, so a view reads a field the same
    through either), the kinds (enum rp_ev, rp_ev_names) and struct rp_on,
    one handler per event, called by rp_on_call()."""
    h = ['/* Generated by shim/gen-records.py report from %s: do not edit. */' % src,
         '#ifndef CGSHIM_REPORT_GEN_H', '#define CGSHIM_REPORT_GEN_H', '', '#include <stddef.h>', '', '#include <jansson.h>', '',
         'struct rp_rec;', '',
         '/* The record kinds, in the schema\'s order: a loaded record\'s kind',
         ' * (struct rp_rec), given once by the loader, which alone reads the',
         ' * name; the views compare kinds, never names. */', 'enum rp_ev {',
         '\tRP_EV_UNKNOWN = -1, /* a name the schema lacks (such records are not loaded) */']
    h += ['\tRP_EV_%s,' % eid for eid, _, _, _ in events]
    h += ['\tRP_EV_N', '};', 'extern const char *const rp_ev_names[RP_EV_N];',
          '/* The kind named ev (n bytes, no NUL needed), or RP_EV_UNKNOWN. */',
          'enum rp_ev rp_ev_kind(const char *ev, size_t n);', '',
          '/* Reading one value as a field type says (tools/report-load.c): the',
          ' * rules of rp_str, rp_int, rp_bool and rp_site0. rp_v_int and rp_v_bool',
          ' * return 0 absent or of another type, 1 read, 2 a boolean read as 0/1',
          ' * (rp_v_int) or an integer read as a truth (rp_v_bool). */',
          'const char *rp_v_str(const json_t *v);', 'int rp_v_int(const json_t *v, long long *out);',
          'int rp_v_bool(const json_t *v, int *out);', 'const char *rp_v_site0(const json_t *v);', '']
    c = ['/* Generated by shim/gen-records.py report from %s: do not edit. */' % src,
         '#include <stdlib.h>', '#include <string.h>', '', '#include "report.h"', '',
         'const char *const rp_ev_names[RP_EV_N] = {']
    c += ['\t"%s",' % name for _, name, _, _ in events]
    c += ['};', '']
    c += ev_kind_c(events)
    c += [
          'struct rd_key {', '\tconst char *name;', '\tint field;', '};', '',
          'static int rd_key_cmp(const void *k, const void *e)', '{',
          '\treturn strcmp(k, ((const struct rd_key *)e)->name);', '}', '']
    for eid, name, what, fields in events:
        s = 'rd_' + name
        h.append('/* "%s": %s. Every field of the schema; a number\'s or bool\'s has_<field>' % (name, what))
        h.append(' * is 1 read, 2 read from another JSON type (rp_v_int), 0 absent. */')
        h.append('struct %s {' % s)
        h.append('\tconst json_t *j; /* the record itself (borrowed, as rp_j\'s) */')
        h.append('\tunsigned missing; /* required fields absent or of another type */')
        for fname, typ, use, fwhat in fields:
            m = member(fname)
            h.append('\t%s /* %s%s */' % (RD_DECL[typ] % m, 'required: ' if use == 'REQ' else '', fwhat))
            if typ in ('u64', 'int', 'bool'):
                h.append('\tunsigned char has_%s;' % fname)
        h.append('};')
        h.append('/* Fill f from record j (any object); returns f->missing. */')
        h.append('unsigned %s(const json_t *j, struct %s *f);' % (s, s))
        h.append('')
        keys = sorted(range(len(fields)), key=lambda i: fields[i][0])
        if fields:
            c.append('static const struct rd_key %s_keys[] = {' % s)
            c += ['\t{"%s", %d},' % (fields[i][0], i) for i in keys]
            c.append('};')
        c.append('unsigned %s(const json_t *j, struct %s *f)' % (s, s))
        c.append('{')
        if fields:
            c += ['\tconst char *k;', '\tjson_t *v;', '']
        c += ['\tmemset(f, 0, sizeof *f);', '\tf->j = j;']
        if fields:
            c.append('\tjson_object_foreach((json_t *)j, k, v)')
            c.append('\t{')
            c.append('\t\tconst struct rd_key *e = bsearch(k, %s_keys, %d, sizeof %s_keys[0], rd_key_cmp);' %
                     (s, len(fields), s))
            c.append('\t\tif (!e)')
            c.append('\t\t\tcontinue;')
            c.append('\t\tswitch (e->field) {')
            for i, (fname, typ, use, fwhat) in enumerate(fields):
                c.append('\t\tcase %d:' % i)
                c.append('\t\t\t' + RD_READ[typ] % {'m': member(fname), 'n': fname})
                c.append('\t\t\tbreak;')
            c.append('\t\t}')
            c.append('\t}')
        for fname, typ, use, fwhat in fields:
            if use == 'REQ':
                c.append('\tif (!(%s))' % (RD_PRESENT[typ] % {'m': member(fname), 'n': fname}))
                c.append('\t\tf->missing++;')
        c.append('\treturn f->missing;')
        c.append('}')
        c.append('')
    h += ['/* A view\'s handlers: one per event, NULL for the events it skips.',
          ' * ctx is the view\'s own state. */', 'struct rp_on {']
    for eid, name, what, fields in events:
        h.append('\tvoid (*%s)(void *ctx, const struct rp_rec *r, const struct rd_%s *f);' % (member(name), name))
    h += ['};', '/* Whether on handles kind (an rp_ev; RP_EV_UNKNOWN or out of range: no). */',
          'int rp_on_has(const struct rp_on *on, int kind);',
          '/* Record r (parsed: j) read into its struct and given to on\'s handler:',
          ' * 1 handled, 0 no handler for its kind, -1 a kind the schema lacks (RP_EV_UNKNOWN)',
          ' * (counted by the caller, never fatal). */',
          'int rp_on_call(const struct rp_on *on, void *ctx, const struct rp_rec *r, const json_t *j);',
          '', '#endif']
    c += ['int rp_on_has(const struct rp_on *on, int kind)', '{', '\tswitch (kind) {']
    for eid, name, what, fields in events:
        c += ['\tcase RP_EV_%s:' % eid, '\t\treturn on->%s != NULL;' % member(name)]
    c += ['\tdefault:', '\t\treturn 0;', '\t}', '}', '',
          'int rp_on_call(const struct rp_on *on, void *ctx, const struct rp_rec *r, const json_t *j)', '{',
          '\tswitch (r->kind) {']
    for eid, name, what, fields in events:
        c += ['\tcase RP_EV_%s: {' % eid, '\t\tstruct rd_%s f;' % name,
              '\t\tif (!on->%s)' % member(name), '\t\t\treturn 0;',
              '\t\trd_%s(j, &f);' % name, '\t\ton->%s(ctx, r, &f);' % member(name), '\t\treturn 1;', '\t}']
    c += ['\tdefault:', '\t\treturn -1;', '\t}', '}']
    open(out_h, 'w').write('\n'.join(h) + '\n')
    open(out_c, 'w').write('\n'.join(c) + '\n')


DOC_TYPE = {'hex': '`"0x…"`', 'u64': 'int', 'int': 'int', 'bool': 'bool', 'str': 'string', 'word': 'string',
            'site': 'site', 'null': '`null`', 'list': 'array', 'obj': 'object'}
DOC_USE = {'REQ': 'always', 'OPT': 'when known', 'DYN': 'under its own key', 'EXT': 'by kind'}


def doc_table(name, fields):
    out = ['<!-- BEGIN fields of %s: generated from include/cgshim/records.def (shim/gen-records.py doc) -->' % name,
           '', '| field | type | written | meaning |', '|---|---|---|---|']
    for fname, typ, use, what in fields:
        out.append('| `%s` | %s | %s | %s |' % (fname, DOC_TYPE[typ], DOC_USE[use], what.replace('|', '\\|')))
    out += ['', '<!-- END fields -->']
    return '\n'.join(out)


def doc_text(events, doc):
    """doc with every event's table in place: replaced where its markers
    are, else added at the end of its section."""
    for eid, name, what, fields in events:
        table = doc_table(name, fields)
        pat = re.compile(r'<!-- BEGIN fields of %s:.*?<!-- END fields -->' % re.escape(name), re.S)
        if pat.search(doc):
            doc = pat.sub(lambda m: table, doc, count=1)
            continue
        head = re.search(r'^### `%s`.*$' % re.escape(name), doc, re.M)
        if not head:
            sys.exit('docs/log-format.md has no section "### `%s`"' % name)
        nxt = re.search(r'^#{2,3} ', doc[head.end():], re.M)
        end = head.end() + nxt.start() if nxt else len(doc)
        body = doc[:end].rstrip('\n')
        doc = body + '\n\n' + table + '\n\n' + doc[end:].lstrip('\n')
    return doc


def main(argv):
    if len(argv) == 5 and argv[1] == 'c':
        gen_c(schema(argv[4]), argv[2], argv[3], 'include/cgshim/records.def')
        return 0
    if len(argv) == 5 and argv[1] == 'report':
        gen_report(schema(argv[4]), argv[2], argv[3], 'include/cgshim/records.def')
        return 0
    if len(argv) == 4 and argv[1] in ('doc', 'check-doc'):
        events = schema(argv[2])
        old = open(argv[3]).read()
        new = doc_text(events, old)
        if argv[1] == 'doc':
            if new != old:
                open(argv[3], 'w').write(new)
                print('wrote the field tables of %s' % argv[3])
            return 0
        tables = re.findall(r'<!-- BEGIN fields of (\w+):', old)
        names = [e[1] for e in events]
        ok = new == old and sorted(tables) == sorted(names)
        print('%s field tables of %d events: %s' % (argv[3], len(events),
              'equal to records.def' if ok else 'differ (shim/gen-records.py doc %s %s)' % (argv[2], argv[3])))
        print('1 passed, 0 failed' if ok else '0 passed, 1 failed')
        return 0 if ok else 1
    sys.stderr.write(__doc__)
    return 2


if __name__ == '__main__':
    sys.exit(main(sys.argv))
