#!/usr/bin/env python3
"""tests/layers_check.py -- the layers of shim/layers.txt, read from the
built objects' symbols (tests/lists_check.py layers reads the #includes).

    layers_check.py --src DIR --build DIR        the shim as built
    layers_check.py --cases DIR                  tests/layers/*.case: each ends as it says

Three rules, each naming every breach as  from -> to: symbol (where):
  call    a room (module) uses only symbols defined by rooms at or below
          it: nm over every object of libcgshim.so, an undefined symbol of
          module A defined by module B, B above A. Calls and address
          references alike (a table of a higher room's functions is a call
          up by another road).
  header  no header of shim/ declares a name that a higher room defines:
          the functions each translation unit sees (gcc -aux-info, macro
          expansions included, at the line that declares them) and the
          extern variables of shim/**/*.h, against nm's definitions.
  writer  the record writer's symbols (a 'writer PATTERN: MODULE...' line;
          {event} in a pattern: each event of include/cgshim/records.def)
          are used only by the modules listed and the writer, the module
          that defines them; the record starters (a 'starts SYMBOL...'
          line) only by the writer and their own module. Checked once a
          symbol matches the writer's pattern; before that the line says it
          waits.
An 'except-symbol FROM -> TO: REASON' line of layers.txt excuses one edge
(TO a module, or 'writer'); the check fails on one no symbol needs.

A case (tests/layers/*.case) is a layers.txt, an nm -A listing and an
-aux-info listing in one file, with the result it must give:
    expect: pass | fail RULE...
    --- layers / --- nm / --- decls   (paths as the build writes them:
    objects by meson's name, headers relative to build/ under the source)
    --- records                       (CGSHIM_EVENT rows: what {event} means
                                      in a writer pattern)
"""
import argparse
import fnmatch
import glob
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))
import cgtest  # noqa: E402

RULES = ("room", "call", "header", "writer", "stale")


def parse_layers(text):
    """The lines of shim/layers.txt: layer levels, groups, include
    exceptions, symbol exceptions, the writer line and the starters."""
    out = {"layer": {}, "group": {}, "except": {}, "except_symbol": {}, "writer": None, "starts": []}
    level = 0
    for n, line in enumerate(text.splitlines(), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        word, _, rest = line.partition(" ")
        if word == "layer":
            for m in rest.split():
                out["layer"][m] = level
            level += 1
        elif word == "group":
            name, _, stems = rest.partition(":")
            for st in stems.split():
                out["group"][st] = name.strip()
        elif word == "except":
            a, _, b = rest.partition("->")
            out["except"][(a.strip(), b.strip())] = n
        elif word == "except-symbol":
            edge, _, why = rest.partition(":")
            a, _, b = edge.partition("->")
            if not why.strip():
                raise SystemExit("layers.txt:%d: an except-symbol line says why after ':'" % n)
            out["except_symbol"][(a.strip(), b.strip())] = (n, why.strip())
        elif word == "writer":
            pat, _, users = rest.partition(":")
            out["writer"] = (pat.split(), users.split())
        elif word == "starts":
            out["starts"] += rest.split()
        else:
            raise SystemExit("layers.txt:%d: unknown line %r" % (n, line))
    return out


def object_module(path, group):
    """meson's object name -> module: model_execs.c.o is shim/model/execs.c,
    meson-generated_.._hooks-env.c.o the generated hooks-env.c."""
    b = os.path.basename(path)
    b = re.sub(r"\.o$", "", b)
    b = re.sub(r"\.(c|S)$", "", b)
    b = re.sub(r"^meson-generated_(\.\._)*", "", b)
    if "_" in b:
        return b.split("_", 1)[0]  # a directory of shim/ (stems use '-')
    return group.get(b, b)


def header_module(path, shim, group):
    """The module of a header, or None for what is no module (lists,
    generated headers, system and CUDA headers)."""
    r = os.path.relpath(path, shim)
    if r.startswith("..") or not r.endswith(".h"):
        return None
    if os.sep in r:
        return r.split(os.sep, 1)[0]
    stem = r[:-2]
    return group.get(stem, stem)


def parse_nm(text, group):
    """nm -A lines -> ({symbol: (module, object)}, [(module, object, symbol)])."""
    defs, uses = {}, []
    for line in text.splitlines():
        obj, sep, rest = line.partition(":")
        if not sep:
            continue
        f = rest.split()
        mod = object_module(obj, group)
        if len(f) == 2 and f[0] in ("U", "w", "v"):  # undefined here (weak too)
            uses.append((mod, os.path.basename(obj), f[1]))
        elif len(f) == 3 and f[1] in "TDBRGSVWiu":  # global definitions (lower case: local)
            defs[f[2]] = (mod, os.path.basename(obj))
    return defs, uses


AUX = re.compile(r"^/\* (.+?):(\d+):([NO])([CF]) \*/ (.*)$")


def parse_decls(text):
    """-aux-info lines (and the extern variables in the same form) ->
    [(header path as written, line, name)] for extern declarations."""
    out = []
    for line in text.splitlines():
        m = AUX.match(line)
        if not m or m.group(4) != "C" or not m.group(5).startswith("extern "):
            continue
        body = m.group(5)
        f = re.search(r"\(\s*\*\s*(\w+)\s*\)", body) or re.search(r"(\w+) \(", body) or \
            re.search(r"(\w+)\s*(?:\[[^\]]*\])?\s*;\s*$", body)
        if f:
            out.append((m.group(1), int(m.group(2)), f.group(1)))
    return out


def strip_c(text):
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.S)
    # preprocessor lines (with their continuations) declare nothing here:
    # a macro's declarations are seen where it expands (-aux-info)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", lambda m: re.sub(r"[^\n]", " ", m.group(0)), text, flags=re.M)


def extern_variables(path, shown):
    """The extern variable declarations of one header, in -aux-info form
    (gcc writes functions only); shown is the path as the build names it."""
    text = strip_c(open(path).read())
    out, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif ch == ";" and depth == 0:
            stmt, at = text[start:i], start
            start = i + 1
            s = stmt.strip()
            if not s.startswith("extern ") or s.startswith('extern "C"'):
                continue
            s = re.sub(r"__attribute__\s*\(\((?:[^()]|\([^()]*\))*\)\)|\bCG_HIDDEN\b", " ", s)
            if re.search(r"\(\s*\*\s*\w+\s*\)", s) or "(" not in s:  # a function's own line is gcc's
                line = text.count("\n", 0, at + len(stmt) - len(stmt.lstrip())) + 1
                out.append("/* %s:%d:NC */ %s;" % (shown, line, " ".join(s.split())))
    return out


def build_inputs(src, build):
    """nm -A over the shim's objects, and the declarations: -aux-info of
    every shim translation unit (one gcc -fsyntax-only each) plus the
    extern variables of shim/**/*.h."""
    objs = sorted(glob.glob(os.path.join(build, "shim", "libcgshim.so.p", "*.o")))
    if not objs:
        raise SystemExit("no objects under %s/shim/libcgshim.so.p: build first" % build)
    nm = subprocess.run(["nm", "-A"] + objs, capture_output=True, text=True, check=True).stdout
    decls = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, e in enumerate(json.load(open(os.path.join(build, "compile_commands.json")))):
            if "libcgshim.so.p" not in e["output"] or not e["file"].endswith(".c"):
                continue
            args, skip = [], 0
            for a in shlex.split(e["command"]):
                if skip:
                    skip -= 1
                elif a in ("-o", "-MQ", "-MF"):
                    skip = 1
                elif a not in ("-c", "-MD"):
                    args.append(a)
            aux = os.path.join(tmp, "%d.aux" % i)
            p = subprocess.run(args + ["-fsyntax-only", "-w", "-aux-info", aux], cwd=e["directory"],
                               capture_output=True, text=True)
            if p.returncode or not os.path.exists(aux):
                raise SystemExit("gcc -aux-info failed on %s:\n%s" % (e["file"], p.stderr[-2000:]))
            decls.append(open(aux).read())
    for h in sorted(glob.glob(os.path.join(src, "shim", "**", "*.h"), recursive=True)):
        decls += extern_variables(h, os.path.relpath(h, build))
    return nm, "\n".join(decls)


def records_events(text):
    """The event names of include/cgshim/records.def (its CGSHIM_EVENT rows)."""
    return re.findall(r'^CGSHIM_EVENT\(\s*\w+\s*,\s*"([^"]+)"', text, re.M)


def check(t, lay, nm_text, decl_text, src, build, events=()):
    """The three rules over one build (or one case). Returns the set of
    rules that failed."""
    layer, group = lay["layer"], lay["group"]
    shim = os.path.join(src, "shim")
    defs, uses = parse_nm(nm_text, group)
    failed = set()
    excused = {}  # (from, to) -> symbols

    def breach(rule, a, b, what):
        if (a, b) in lay["except_symbol"]:
            excused.setdefault((a, b), []).append(what)
            return False
        print("  %s: %s -> %s: %s" % (rule, a, b, what))
        return True

    mods = {d[0] for d in defs.values()} | {u[0] for u in uses}
    unknown = sorted(m for m in mods if m not in layer)
    t.check(not unknown, "every object of the shim is in a room of layers.txt%s" % (
        ": not %s" % unknown if unknown else ""))
    if unknown:
        failed.add("room")

    # call: an undefined symbol of A that B defines, B above A
    n_up = bad = 0
    for a, obj, sym in uses:
        if sym not in defs:
            continue
        b = defs[sym][0]
        if a in layer and b in layer and layer[b] > layer[a]:
            n_up += 1
            bad += breach("call", a, b, "%s (%s)" % (sym, obj))
    t.check(not bad, "no room uses a symbol of a higher room (%d uses go up, %d excepted)" % (n_up, n_up - bad))
    if bad:
        failed.add("call")

    # header: a header of module H declares a name module D defines, D above H
    seen, n_up, bad = set(), 0, 0
    for path, line, name in parse_decls(decl_text):
        h = header_module(os.path.normpath(os.path.join(build, path)), shim, group)
        if h is None or name not in defs or (path, name) in seen:
            continue
        seen.add((path, name))
        d = defs[name][0]
        if h in layer and d in layer and layer[d] > layer[h]:
            n_up += 1
            bad += breach("header", h, d, "%s (%s:%d, defined in %s)" % (
                name, os.path.relpath(os.path.normpath(os.path.join(build, path)), src), line, defs[name][1]))
    t.check(not bad, "no header declares a name a higher room defines (%d such, %d excepted; %d declarations read)" % (
        n_up, n_up - bad, len(seen)))
    if bad:
        failed.add("header")

    # writer: the writer's symbols from the hook wing and the writer only
    if lay["writer"]:
        pats, callers = lay["writer"]
        # {event}: each event of records.def (emit_{event}: the typed
        # writers, not the list and object part writers they call)
        pats = [p.replace("{event}", re.sub(r"\W", "_", e)) for p in pats if "{event}" in p for e in events] + \
            [p for p in pats if "{event}" not in p]
        wsyms = {s for s in defs if any(fnmatch.fnmatchcase(s, p) for p in pats)}
        if not wsyms:
            print("  writer: no symbol matches %s yet: the writer wing is checked once one does" % " ".join(pats))
        else:
            writer = {defs[s][0] for s in wsyms}
            starts = set(lay["starts"])
            bad = n = 0
            for a, obj, sym in uses:
                if sym in wsyms and a not in writer and a not in callers:
                    n += 1
                    bad += breach("writer", a, "writer", "%s (%s): only %s and the writer (%s) call it" % (
                        sym, obj, " ".join(callers), " ".join(sorted(writer))))
                elif sym in starts and sym in defs and a not in writer and a != defs[sym][0]:
                    n += 1
                    bad += breach("writer", a, "writer", "%s (%s): only the writer (%s) starts a record" % (
                        sym, obj, " ".join(sorted(writer))))
            t.check(not bad, "the writer's %d symbols are used only by %s and the writer %s (%d other uses, %d excepted)" % (
                len(wsyms), " ".join(callers), "/".join(sorted(writer)), n, n - bad))
            if bad:
                failed.add("writer")

    stale = sorted("%s -> %s (line %d)" % (a, b, v[0]) for (a, b), v in lay["except_symbol"].items()
                   if (a, b) not in excused)
    t.check(not stale, "every except-symbol line is still needed%s" % (": remove %s" % stale if stale else ""))
    if stale:
        failed.add("stale")
    for (a, b), what in sorted(excused.items()):
        print("  excepted %s -> %s (%s): %s" % (a, b, lay["except_symbol"][(a, b)][1], "; ".join(sorted(set(what)))))
    return failed


def read_case(path):
    parts, cur = {"head": []}, "head"
    for line in open(path).read().splitlines():
        m = re.match(r"^--- (\w+)\s*$", line)
        if m:
            cur = m.group(1)
            parts[cur] = []
        else:
            parts[cur].append(line)
    expect = next((ln.split(":", 1)[1].split() for ln in parts["head"] if ln.startswith("expect:")), None)
    if not expect or expect[0] not in ("pass", "fail") or any(r not in RULES for r in expect[1:]):
        raise SystemExit("%s: no 'expect: pass' or 'expect: fail RULE...' line" % path)
    return (expect, "\n".join(parts.get("layers", [])), "\n".join(parts.get("nm", [])), "\n".join(parts.get("decls", [])),
            records_events("\n".join(parts.get("records", []))))


def run_case(path):
    """The case's own lines (indented: an expected FAIL is no failure of
    this test), the result it expects and the rules it failed."""
    import contextlib
    import io
    expect, lay, nm, decls, events = read_case(path)
    src = "/case"  # headers are named as ../shim/x.h from /case/build
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        failed = check(cgtest.Tally(), parse_layers(lay), nm, decls, src, os.path.join(src, "build"), events)
    for line in buf.getvalue().splitlines():
        print("   | " + line)
    return expect, failed


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src")
    ap.add_argument("--build")
    ap.add_argument("--cases")
    a = ap.parse_args()
    t = cgtest.Tally()
    if a.cases:
        cases = sorted(glob.glob(os.path.join(a.cases, "*.case")))
        t.check(len(cases) > 0, "%d cases in %s" % (len(cases), a.cases))
        for c in cases:
            expect, failed = run_case(c)
            want = set(expect[1:]) if expect[0] == "fail" else set()
            t.check(failed == want, "%s: fails %s as it should" % (os.path.basename(c), sorted(want) or "nothing"),
                    "it fails %s" % (sorted(failed) or "nothing"))
        return t.finish()
    if not a.src or not a.build:
        ap.error("--src and --build, or --cases")
    src, build = os.path.abspath(a.src), os.path.abspath(a.build)
    nm, decls = build_inputs(src, build)
    rdef = os.path.join(src, "include", "cgshim", "records.def")
    events = records_events(open(rdef).read()) if os.path.exists(rdef) else []
    check(t, parse_layers(open(os.path.join(src, "shim", "layers.txt")).read()), nm, decls, src, build, events)
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
