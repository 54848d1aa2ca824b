#!/usr/bin/env python3
"""tests/lists_check.py -- every list of the project is kept in one place;
this checks that what is generated or derived from each still agrees with it.

    lists_check.py [--src DIR] [--write] CHECK...

CHECK: events, rules, config, scenarios, driver-calls, layers, citations, diagrams
(or all). Each check prints one line per finding and ends with
"N passed, N failed"; the exit status is non-zero on any failure.

--write regenerates the committed generated blocks (record.h's event names,
config-values.h's enums, docs/rules/README.md's index) from their lists
instead of comparing them; run it after editing a list and commit the
result. The blocks sit between "BEGIN generated" and "END generated" marker
lines and are never edited by hand.
"""
import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))
import cgtest  # noqa: E402
import layers_check  # noqa: E402

SRC = None
WRITE = False


def rd(rel):
    with open(os.path.join(SRC, rel)) as f:
        return f.read()


def files(pattern):
    return sorted(glob.glob(os.path.join(SRC, pattern), recursive=True))


def rel(path):
    return os.path.relpath(path, SRC)


def strip_c_comments(text):
    return re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)


def block(path, text):
    """Compare (or, with --write, replace) the generated block of path."""
    full = os.path.join(SRC, path)
    s = open(full).read()
    m = re.search(r"(^[^\n]*BEGIN generated[^\n]*\n)(.*?)(^[^\n]*END generated[^\n]*$)", s, re.S | re.M)
    if not m:
        return "%s has no BEGIN/END generated markers" % path
    if m.group(2) == text:
        return None
    if WRITE:
        open(full, "w").write(s[:m.start(2)] + text + s[m.end(2):])
        print("wrote the generated block of %s" % path)
        return None
    return "%s: the generated block differs from its list (tests/lists_check.py --write)" % path


def c_string(s):
    """The text of a C string literal's body (the lists use \\" and \\\\ only)."""
    return re.sub(r"\\(.)", r"\1", s)


# ---- events -----------------------------------------------------------------

def events_list():
    rows = re.findall(r'^CGSHIM_EVENT\((\w+),\s*"([^"]*)",\s*"((?:[^"\\]|\\.)*)"\)',
                      rd("include/cgshim/records.def"), re.M)
    return [(i, n, c_string(d)) for i, n, d in rows]


def check_events(t):
    ev = events_list()
    t.check(len(ev) > 0, "records.def lists %d record kinds" % len(ev))
    ids = {i for i, _, _ in ev}
    names = {n for _, n, _ in ev}
    t.check(len(ids) == len(ev) and len(names) == len(ev), "records.def: IDs and names unique")
    gen = "".join('#define CGSHIM_EV_%s "%s" /* %s */\n' % (i, n, d) for i, n, d in ev)
    t.check_none(block("include/cgshim/record.h", gen), "record.h's CGSHIM_EV_* names generated from records.def")
    used = {}
    for path in files("shim/**/*.[ch]") + files("tools/**/*.[ch]"):
        for m in re.finditer(r"\bCGSHIM_EV_(\w+)", strip_c_comments(open(path).read())):
            used.setdefault(m.group(1), set()).add(rel(path))
    unknown = sorted(set(used) - ids)
    t.check(not unknown, "every CGSHIM_EV_* used is in records.def%s" % (": not %s" % unknown if unknown else ""))
    # Written: named in the shim, or its generated writer emit_<name>()
    # or emit_<name>_open() (shim/emit.h) called or handed on there.
    emitted = set()
    for path in files("shim/**/*.c"):
        for w in re.findall(r"\bemit_(\w+)", strip_c_comments(open(path).read())):
            emitted |= {w, re.sub(r"_open$", "", w)}
    written = {i for i, n, _ in ev if any(p.startswith("shim/") for p in used.get(i, ())) or n in emitted}
    unwritten = sorted(ids - written)
    t.check(not unwritten, "every kind of records.def is written by the shim%s" % (
        ": never %s" % unwritten if unwritten else ""))
    lit = []
    for path in files("shim/**/*.c"):
        for m in re.finditer(r"\brec_begin(?:_at)?\s*\([^,]*,[^,]*,\s*\"([^\"]*)\"", strip_c_comments(open(path).read())):
            lit.append("%s: \"%s\"" % (rel(path), m.group(1)))
    t.check(not lit, "no record kind written as a literal%s" % (": %s" % lit if lit else ""))
    # Records are started by the generated writer (emit_<event>, shim/emit.h)
    # only, but for these, each with its reason; a new file that starts a
    # record fails here.
    starters = {
        "shim/log.c": "the record builder itself (rec_begin is rec_begin_at)",
    }
    found = {}
    for path in files("shim/**/*.c"):
        for m in re.finditer(r"\brec_begin(?:_at)?\s*\(\s*[^)]", strip_c_comments(open(path).read())):
            found.setdefault(rel(path), 0)
            found[rel(path)] += 1
    extra = sorted(set(found) - set(starters))
    t.check(not extra, "records are started only by emit_* and the %d writers listed%s" % (
        len(starters), ": also %s" % extra if extra else ""))
    # the report's kinds, readers and handler table are generated from
    # records.def (shim/gen-records.py report, tools/meson.build's report-gen):
    # the loader asks the generated rp_ev_kind() for a record's kind
    t.check("rp_ev_kind(" in rd("tools/report-load.c") and
            re.search(r"gen-records\.py'\), 'report'", rd("tools/meson.build")) is not None,
            "the report's known kinds are generated from records.def")
    documented = set(re.findall(r"^### `(\w+)`", rd("docs/log-format.md"), re.M))
    t.check(documented == names, "docs/log-format.md documents exactly the kinds of records.def%s" % (
        "" if documented == names else ": missing %s, extra %s" % (sorted(names - documented), sorted(documented - names))))


# ---- rules ------------------------------------------------------------------

def rules_list():
    """(live rows, retired rows) of shim/rules.def; a RULE row whose ID is
    also RETIRED is not live (the row awaiting deletion)."""
    text = rd("shim/rules.def")
    q = r'"((?:[^"\\]|\\.)*)"'
    rows = [tuple(c_string(x) for x in m.groups()[1:]) for m in re.finditer(
        r"^RULE\((\w+),\s*" + r",\s*".join([q] * 5) + r"\)", text, re.M)]
    retired = [tuple(c_string(x) for x in m.groups()) for m in re.finditer(
        r"^RETIRED\(" + r",\s*".join([q] * 3) + r"\)", text, re.M)]
    gone = {r[0] for r in retired}
    return [r for r in rows if r[0] not in gone], retired


def rules_index(live, retired):
    rows = [(i, "| [%s](%s.md) | %s | %s | %s | %s |\n" % (i, i, slug, sev, pred, title))
            for i, slug, sev, pred, title in live]
    rows += [(i, "| [%s](%s.md) | %s | retired | – | %s |\n" % (i, i, slug, why)) for i, slug, why in retired]
    return ("| ID | slug | severity | predicted_rc | title |\n|---|---|---|---|---|\n"
            + "".join(r for _, r in sorted(rows)))


def page_head(path):
    """(heading, title) of a rule page: its first line and its first bold
    paragraph, joined, less the closing full stop."""
    text = open(path).read()
    head = text.split("\n", 1)[0]
    m = re.search(r"^\*\*(.*?)\*\*", text, re.M | re.S)
    title = re.sub(r"\s+", " ", m.group(1)).strip().rstrip(".") if m else ""
    return head, title


def check_rules(t):
    live, retired = rules_list()
    t.check(len(live) > 0, "rules.def lists %d live rules, %d retired" % (len(live), len(retired)))
    ids = [r[0] for r in live] + [r[0] for r in retired]
    t.check(len(ids) == len(set(ids)), "rules.def: every ID once")
    slugs = [r[1] for r in live] + [r[1] for r in retired]
    t.check(len(slugs) == len(set(slugs)), "rules.def: every slug once")
    bad = [r[0] for r in live if r[2] not in ("error", "warn", "hint")]
    t.check(not bad, "rules.def: severity error, warn or hint%s" % (": not %s" % bad if bad else ""))
    t.check_none(block("docs/rules/README.md", rules_index(live, retired)),
                 "docs/rules/README.md's index generated from rules.def")
    pages = {os.path.basename(p)[:-3] for p in files("docs/rules/CGS*.md")}
    t.check(pages == set(ids), "one page per ID of rules.def%s" % (
        "" if pages == set(ids) else ": pages without a row %s, rows without a page %s" % (
            sorted(pages - set(ids)), sorted(set(ids) - pages))))
    for i, slug, sev, pred, title in live:
        path = os.path.join(SRC, "docs/rules/%s.md" % i)
        if not os.path.exists(path):
            continue
        head, ptitle = page_head(path)
        m = re.match(r"^# (CGS\d+) (\S+) \((\w+)(?:, predicted_rc (\d+))?\)$", head)
        why = []
        if not m or m.group(1) != i or m.group(2) != slug or m.group(3) != sev:
            why.append("heading %r, rules.def says %s %s (%s)" % (head, i, slug, sev))
        elif m.group(4) and not pred.startswith(m.group(4)):
            why.append("heading predicts %s, rules.def %s" % (m.group(4), pred))
        if ptitle[:1].lower() + ptitle[1:] != title[:1].lower() + title[1:]:
            why.append("title %r, rules.def %r" % (ptitle, title))
        t.check(not why, "docs/rules/%s.md agrees with rules.def" % i, "; ".join(why))
    for i, slug, why in retired:
        path = os.path.join(SRC, "docs/rules/%s.md" % i)
        head = open(path).read().split("\n", 1)[0] if os.path.exists(path) else ""
        t.check(head == "# %s %s — retired" % (i, slug), "docs/rules/%s.md is the retired page of %s" % (i, slug),
                "heading %r" % head)
    # The report names rules by the records' "rule"/"name" (written from
    # rules.def): a slug spelt in tools/ must still be one of rules.def's.
    known = set(slugs)
    stray = []
    for path in files("tools/**/*.[ch]"):
        for m in re.finditer(r'"(CGS\d{3})"', strip_c_comments(open(path).read())):
            if m.group(1) not in ids:
                stray.append("%s: %s" % (rel(path), m.group(1)))
    t.check(not stray and known, "every rule ID the report names is in rules.def%s" % (
        ": %s" % stray if stray else ""))


# ---- config -----------------------------------------------------------------

def config_rows():
    text = strip_c_comments(rd("shim/config.def"))
    rows = re.findall(r'^CFG\((\w+),\s*(\w+),\s*(\w+),\s*"([^"]*)",\s*"([^"]*)"', text, re.M)
    enums = re.findall(r"^CFG_ENUM\((\w+),\s*(\w+),\s*(\w+)\)", text, re.M)
    return rows, enums


def config_enums(rows, enums):
    choices = {r[0]: r[4] for r in rows if r[2] == "ENUM"}
    out = []
    for field, tag, prefix in enums:
        names = choices.get(field, "").split("|")
        out.append("enum %s { %s };\n" % (tag, ", ".join("%s_%s" % (prefix, n.upper()) for n in names)))
        out.append("#define %s_NAMES { %s }\n" % (prefix, ", ".join('"%s"' % n for n in names)))
    return "".join(out)


def check_config(t):
    rows, enums = config_rows()
    t.check(len(rows) > 0, "config.def lists %d variables, %d enums" % (len(rows), len(enums)))
    enum_fields = {r[0] for r in rows if r[2] == "ENUM"}
    with_enum = {e[0] for e in enums}
    t.check(enum_fields == with_enum, "every ENUM row of config.def has its CFG_ENUM row and no other%s" % (
        "" if enum_fields == with_enum else ": ENUM rows %s, CFG_ENUM rows %s" % (sorted(enum_fields), sorted(with_enum))))
    bad = [r[1] for r in rows if r[2] == "ENUM" and r[3] not in r[4].split("|")]
    t.check(not bad, "every ENUM default is one of its choices%s" % (": not %s" % bad if bad else ""))
    t.check_none(block("shim/config.h", config_enums(rows, enums)), "config.h's enums generated from config.def")
    init = strip_c_comments(rd("shim/init.c"))
    t.check(not re.search(r'"(auto|off|error|warn|info|debug|trace)"\s*,\s*"', init),
            "init.c's level names come from config.def (CG_L_NAMES), not a hand list")


# ---- scenarios ----------------------------------------------------------------

def check_scenarios(t):
    sys.path.insert(0, os.path.join(SRC, "scripts"))
    import scenarios as sc
    for kind, build in (("rules", "tests/rules/meson.build"), ("policy", "tests/policy/meson.build"),
                        ("model", "tests/model/meson.build")):
        found = sc.scenarios(SRC, kind)
        t.check(len(found) > 0, "kernels/%s: %d scenarios" % (kind, len(found)))
        mb = rd(build)
        t.check("scenarios_py" in mb and not re.search(r"^\s*'(%s)',\s*$" % "|".join(map(re.escape, found)), mb, re.M),
                "%s takes its programs from scripts/scenarios.py, no hand list" % build)
    gpu_all = rd("tests/gpu/all")
    t.check("scripts/scenarios.py policy" in gpu_all and "scripts/scenarios.py model" in gpu_all
            and "three_pools current_pool" not in gpu_all,
            "tests/gpu/all builds the scenarios found by scripts/scenarios.py")
    live, retired = rules_list()
    ids = {r[0] for r in live}
    repro = {m.group(1).upper() for n in sc.scenarios(SRC, "rules") for m in [re.match(r"(cgs\d{3})_", n)] if m}
    t.check(repro <= ids, "every kernels/rules/cgsNNN_* reproducer is of a live rule%s" % (
        "" if repro <= ids else ": %s" % sorted(repro - ids)))
    t.check(ids <= repro, "every live rule has a reproducer in kernels/rules/%s" % (
        "" if ids <= repro else ": none for %s" % sorted(ids - repro)))
    slugs = {r[0]: r[1] for r in live}
    # one reproducer per rule is named by its slug; others (a second case) may not be
    named = {n[:6].upper() for n in sc.scenarios(SRC, "rules") if n.startswith("cgs") and n[7:] == slugs.get(n[:6].upper())}
    t.check(named >= ids, "every live rule has a reproducer named cgsNNN_<slug>%s" % (
        "" if named >= ids else ": none for %s" % sorted(ids - named)))


# ---- driver-calls ---------------------------------------------------------------

def check_driver_calls(t):
    drv = re.findall(r"^DRV\((\w+),", rd("shim/driver-calls.def"), re.M)
    hooks = set(re.findall(r"^HOOK\((\w+),", rd("shim/hooks.def"), re.M))
    t.check(len(drv) == len(set(drv)), "driver-calls.def: every name once")
    both = sorted(set(drv) & hooks)
    t.check(not both, "driver-calls.def lists no function of hooks.def%s" % (": %s" % both if both else ""))
    code = ""
    for path in files("shim/**/*.[ch]"):
        if not path.endswith((".def",)):
            code += strip_c_comments(open(path).read())
    used = set(re.findall(r"\bdrv_(\w+)", code))
    dead = sorted(n for n in drv if n not in used)
    t.check(not dead, "every row of driver-calls.def is called%s" % (": never %s" % dead if dead else ""))
    aliased = set(re.findall(r"#define drv_(\w+) CG_DRV_HOOKED\((\w+)\)", rd("shim/resolve.h")))
    bad_alias = sorted(a for a, b in aliased if a != b or a not in hooks)
    t.check(not bad_alias, "resolve.h's drv_ aliases name hooks of hooks.def%s" % (": %s" % bad_alias if bad_alias else ""))
    known = set(drv) | {a for a, _ in aliased}
    unknown = sorted(n for n in used if n not in known)
    t.check(not unknown, "every drv_ the shim calls is listed or aliased%s" % (": %s" % unknown if unknown else ""))


# ---- rt-names -------------------------------------------------------------------

def check_rt_names(t):
    """shim/rt-names.def names the runtime call of a driver entry point
    (the text header, issue 35): each row a hooks.def entry, once; every
    runtime hook of rt-hooks.def is the runtime name of some row, and of
    the rows of its own driver entry points."""
    rows = re.findall(r"^RTNAME\((\w+), (\w+)\)", rd("shim/rt-names.def"), re.M)
    hooks = set(re.findall(r"^HOOK\((\w+),", rd("shim/hooks.def"), re.M))
    drv = [d for d, _ in rows]
    t.check(rows and len(drv) == len(set(drv)), "rt-names.def: %d rows, every entry point once" % len(rows))
    bad = sorted(set(drv) - hooks)
    t.check(not bad, "rt-names.def names only hooks.def entries%s" % (": not %s" % bad if bad else ""))
    rt = set(re.findall(r"^RTHOOK\((\w+),", rd("shim/rt-hooks.def"), re.M))
    missing = sorted(rt - {r for _, r in rows})
    t.check(not missing, "every rt-hooks.def call is a runtime name of rt-names.def%s" % (
        ": not %s" % missing if missing else ""))
    odd = sorted(r for _, r in rows if not r.startswith("cuda"))
    t.check(not odd, "every runtime name starts with cuda%s" % (": %s" % odd if odd else ""))


# ---- locks ----------------------------------------------------------------------

def check_locks(t):
    """Every lock of the shim is a row of shim/locks.def, defined nowhere
    else, so that the fork handlers (locks.c) know them all (issue 30)."""
    rows = re.findall(r"^CG_LOCK\((\w+), (\w+), (\w+)\)", rd("shim/locks.def"), re.M)
    names = [n for _, n, _ in rows]
    t.check(rows and len(names) == len(set(names)), "locks.def: %d locks, every name once" % len(rows))
    bad = sorted("%s (%s, %s)" % (n, k, f) for k, n, f in rows if k not in ("mutex", "rwlock") or f not in ("TAKE", "RESET"))
    t.check(not bad, "locks.def: kind mutex|rwlock, fork TAKE|RESET%s" % (": %s" % bad if bad else ""))
    own, used, locked = [], set(), set()
    for path in files("shim/**/*.[ch]"):
        if rel(path) in ("shim/locks.c", "shim/locks.h"):
            continue
        code = strip_c_comments(open(path).read())
        for m in re.finditer(r"\bpthread_(?:mutex|rwlock|spinlock)_t\s+[\w\s,*]*?(\w+)\s*[=;]|PTHREAD_\w*INITIALIZER"
                             r"|\bpthread_(?:mutex|rwlock|spin)_init\b", code):
            own.append("%s: %s" % (rel(path), m.group(0).strip()))
        used |= set(re.findall(r"&(\w+)", code))
        locked |= set(re.findall(r"\bpthread_(?:mutex|rwlock|spin)_\w*(?:lock|unlock)\(&(\w+)\)", code))
    t.check(not own, "no lock defined or initialised outside locks.c%s" % (": %s" % own if own else ""))
    dead = sorted(n for n in names if n not in used)
    t.check(not dead, "every row of locks.def is used%s" % (": never %s" % dead if dead else ""))
    unknown = sorted(locked - set(names))
    t.check(not unknown, "every lock the shim takes is a row of locks.def%s" % (": %s" % unknown if unknown else ""))


# ---- layers -------------------------------------------------------------------

def read_layers():
    """shim/layers.txt's layers, groups and include exceptions (the one
    reader: tests/layers_check.py, which also checks the symbols)."""
    lay = layers_check.parse_layers(rd("shim/layers.txt"))
    return lay["layer"], lay["group"], lay["except"]


def module_of(path, group):
    r = os.path.relpath(path, os.path.join(SRC, "shim"))
    if os.sep in r:
        return r.split(os.sep, 1)[0]
    stem = os.path.splitext(r)[0]
    return group.get(stem, stem)


def include_edges(group):
    """{(from, to): [file: header, ...]} over the modules of shim/."""
    shim = os.path.join(SRC, "shim")
    edges = {}
    for path in files("shim/**/*.[ch]"):
        for m in re.finditer(r'^\s*#\s*include\s+"([^"]+)"', open(path).read(), re.M):
            inc = m.group(1)
            target = os.path.normpath(os.path.join(os.path.dirname(path), inc))
            if not os.path.exists(target):
                target = os.path.join(shim, inc)
            if not target.endswith(".h") or not os.path.exists(target) or not target.startswith(shim + os.sep):
                continue  # lists, the record format, system and generated headers
            a, b = module_of(path, group), module_of(target, group)
            if a != b:
                edges.setdefault((a, b), []).append("%s: %s" % (rel(path), inc))
    return edges


def cycles(nodes, edges):
    """Strongly connected components of more than one module (Tarjan)."""
    adj = {}
    for a, b in edges:
        adj.setdefault(a, []).append(b)
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in adj.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def check_layers(t):
    layer, group, allowed = read_layers()
    edges = include_edges(group)
    mods = {a for a, _ in edges} | {b for _, b in edges} | {module_of(p, group) for p in files("shim/**/*.[ch]")}
    unknown = sorted(m for m in mods if m not in layer)
    t.check(not unknown, "every module of shim/ has a layer in shim/layers.txt%s" % (
        ": not %s" % unknown if unknown else ""))
    up = sorted((a, b) for a, b in edges if a in layer and b in layer and layer[b] > layer[a])
    bad = [e for e in up if e not in allowed]
    for a, b in bad:
        print("  upward include %s -> %s (layer %d -> %d): %s" % (a, b, layer[a], layer[b], "; ".join(edges[(a, b)])))
    t.check(not bad, "no upward include outside the exceptions of shim/layers.txt (%d upward, %d excepted)" % (
        len(up), len(up) - len(bad)))
    kept = {e: v for e, v in edges.items() if e not in allowed}
    cyc = cycles(mods, kept)
    for comp in cyc:
        for (a, b), where in sorted(kept.items()):
            if a in comp and b in comp:
                print("  cycle %s: %s -> %s: %s" % ("/".join(comp), a, b, "; ".join(where)))
    t.check(not cyc, "no include cycle outside the exceptions%s" % (": %s" % cyc if cyc else ""))
    stale = sorted("%s -> %s (line %d)" % (a, b, n) for (a, b), n in allowed.items() if (a, b) not in edges)
    t.check(not stale, "every exception of shim/layers.txt is still needed%s" % (
        ": remove %s" % stale if stale else ""))


# ---- diagrams -----------------------------------------------------------------

def hook_steps():
    """The numbered steps of hooks/hooks.h's "The sequence a hook follows",
    each as one whitespace-normalised string."""
    text = rd("shim/hooks/hooks.h")
    m = re.search(r"The sequence a hook follows.*?\n((?: \*\s+\d\..*?\n(?: \*\s{4,}.*\n)*)+)", text)
    if not m:
        return []
    steps = re.split(r"\n \*\s+(?=\d\.)", "\n" + m.group(1))
    out = []
    for st in steps:
        st = " ".join(re.sub(r"^\s*\*", "", ln) for ln in st.splitlines()).split()
        if st:
            out.append(" ".join(st))
    return out


def check_diagrams(t):
    """docs/pipeline.dot and design.md's pipeline say hooks.h's steps."""
    steps = hook_steps()
    t.check(len(steps) >= 5, "shim/hooks/hooks.h lists %d numbered steps" % len(steps))
    dot = {int(n): txt for n, txt in re.findall(r'label="(\d)\. ([^"\\]*)', rd("docs/pipeline.dot"))}
    design = rd("docs/design.md")
    block = design[design.find("## One event, one way"):design.find("## One hook list")]
    flat = " ".join(re.sub(r"^[ |v]*(?:envelope|post part|rec part)?", "", ln).strip() for ln in block.splitlines())
    bad_dot, bad_md = [], []

    def words(x):
        return re.findall(r"\w+", x.lower())[:3]  # a step's first three words name it
    for i, st in enumerate(steps, 1):
        w = words(st.partition(" ")[2])
        if words(dot.get(i, "")) != w:
            bad_dot.append("%d (hooks.h %r, dot %r)" % (i, " ".join(w), dot.get(i, "")[:40]))
        if not re.search(r"\b%d\.\s+%s" % (i, r"\W+".join(w)), flat.lower()):
            bad_md.append("%d. %s" % (i, " ".join(w)))
    extra = sorted(set(dot) - set(range(1, len(steps) + 1)))
    t.check(not bad_dot and not extra, "docs/pipeline.dot has hooks.h's %d steps, each starting as hooks.h says%s" % (
        len(steps), ": " + "; ".join(bad_dot + ["extra step %d" % e for e in extra]) if bad_dot or extra else ""))
    t.check(not bad_md, "design.md's pipeline (One event, one way) names the same steps%s" % (
        ": missing %s" % bad_md if bad_md else ""))


# ---- citations ----------------------------------------------------------------

FACTS = "docs/cuda-facts.md"
CITE = re.compile(r"(?:docs/)?cuda-facts(?:\.md)?\s*§\s*([0-9][0-9a-z.]*)((?:\s*(?:,|and|or)\s*§\s*[0-9][0-9a-z.]*)*)")
MORE = re.compile(r"§\s*([0-9][0-9a-z.]*)")
OUTSIDE = re.compile(r"/work/|cuda-graph-facts|shared/docs/")
CODE_EXT = (".c", ".h", ".cu", ".py", ".S")


def tracked_text():
    import subprocess
    p = subprocess.run(["git", "-C", SRC, "ls-files"], capture_output=True, text=True)
    names = p.stdout.split() if p.returncode == 0 else [rel(f) for f in files("**/*")]
    for n in names:
        path = os.path.join(SRC, n)
        if n == "tests/lists_check.py" or not os.path.isfile(path):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                yield n, f.read()
        except (UnicodeDecodeError, OSError):
            continue  # images and other binaries


def facts_sections():
    return set(m.group(1) for m in re.finditer(r"^#{2,3} ([0-9]+[a-z]?(?:\.[0-9]+)?)\.? ", rd(FACTS), re.M))


def check_citations(t):
    secs = facts_sections()
    t.check(len(secs) > 5, "%s has %d numbered sections" % (FACTS, len(secs)))
    outside, missing, vague, n = [], [], [], 0
    for name, text in tracked_text():
        for ln, line in enumerate(text.splitlines(), 1):
            where = "%s:%d" % (name, ln)
            if OUTSIDE.search(line):
                outside.append("%s: %s" % (where, line.strip()[:100]))
            if re.search(r"(?<![-\w])facts §", line):
                vague.append("%s: %s" % (where, line.strip()[:100]))
            cited = []
            for m in CITE.finditer(line):
                cited.append(m.group(1))
                cited += MORE.findall(m.group(2))
            # bare §N in code and in the facts page itself cite the facts page
            if name == FACTS or (name.endswith(CODE_EXT) and "cuda-facts" not in line):
                cited += [x for x in MORE.findall(line) if not CITE.search(line)]
            for c in cited:
                c = c.rstrip(".,)")
                if c == "N" or not c:
                    continue
                n += 1
                if c not in secs:
                    missing.append("%s: §%s" % (where, c))
    for x in outside:
        print("  outside the repository: " + x)
    t.check(not outside, "no citation of a path outside the repository (%d)" % len(outside))
    for x in vague:
        print("  'facts §N' without the page: " + x)
    t.check(not vague, "every facts citation names cuda-facts (%d unnamed)" % len(vague))
    for x in missing:
        print("  no such section of %s: %s" % (FACTS, x))
    t.check(not missing, "every cited section exists (%d citations, %d missing)" % (n, len(missing)))


CHECKS = {"citations": check_citations, "diagrams": check_diagrams, "layers": check_layers, "events": check_events, "rules": check_rules, "config": check_config,
          "scenarios": check_scenarios, "driver-calls": check_driver_calls, "rt-names": check_rt_names,
          "locks": check_locks}


def main():
    global SRC, WRITE
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--write", action="store_true")
    ap.add_argument("checks", nargs="+")
    a = ap.parse_args()
    SRC, WRITE = os.path.abspath(a.src), a.write  # absolute: include paths are normalised against it
    names = list(CHECKS) if a.checks == ["all"] else a.checks
    t = cgtest.Tally()
    for n in names:
        if n not in CHECKS:
            sys.exit("unknown check %s (known: %s)" % (n, ", ".join(CHECKS)))
        CHECKS[n](t)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
