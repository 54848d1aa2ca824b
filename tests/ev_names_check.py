#!/usr/bin/env python3
"""tests/ev_names_check.py -- no view of the report compares a record's
event by name (issue 38), suite 'style'.

    ev_names_check.py [--src DIR]      check tools/*.c
    ev_names_check.py --cases          the check's own cases: each breach
                                       below is found, each allowed form is not

The loader (tools/report-load.c) reads a record's "ev" once and gives it its
kind (enum rp_ev, generated from include/cgshim/records.def by
shim/gen-records.py report); every view compares kinds (r->kind ==
RP_EV_DUMP, a switch, a struct rp_on table). A file of tools/ other than
the loaders (LOADERS) fails when it
  - calls a comparison (strcmp, strncmp, strcasecmp, memcmp, strstr, ...)
    with an argument that is the record's name: ->ev / .ev / a variable ev,
    the key "ev", a CGSHIM_EV_* name or rp_ev_names[...];
  - reads the "ev" field itself (rp_str(j, "ev"), json_object_get(j, "ev"));
  - names an event through CGSHIM_EV_* (record.h's names exist to be
    compared; a view prints rp_ev_names[kind]);
  - searches raw lines for "ev":"... .
Comparing a key with "ev" (strcmp(k, "ev"): which fields are the header's)
is no reading of the event and is allowed.
"""
import argparse
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))
import cgtest  # noqa: E402

# The files that read the name. cgshim.c is the launcher: it finds its run's
# start records in the raw lines of a log without the report (built without
# jansson), by record.h's CGSHIM_EV_START.
LOADERS = {"tools/report-load.c": "the loader: gives each record its kind",
           "tools/report-scan.c": "the loader's scanner of a line's top-level fields",
           "tools/cgshim.c": "the launcher: a run's start records in raw lines, without the report"}

COMPARE = re.compile(r"\b(strn?cmp|strn?casecmp|memcmp|strstr|strcasestr|bcmp|fnmatch)\s*\(")
# an argument (its strings blanked) that is the record's event name
NAME_ARG = re.compile(r"(->|\.)\s*ev\b|(?<![\w.>])ev\b|\bCGSHIM_EV_\w+|\brp_ev_names\b")
STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
EV_KEY = re.compile(r'"ev"')
MACRO = re.compile(r"\bCGSHIM_EV_[A-Z_]+\b")
RAW = re.compile(r'"[^"\n]*\\"ev\\"\s*:')


def strip_comments(text):
    """Comments blanked (newlines kept, so line numbers hold); strings kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def call_args(text, start):
    """The arguments of the call whose "(" is at start, split at top-level
    commas, and the index after its ")"."""
    depth, i, args, cur = 0, start, [], []
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "([{":
            depth += 1
            if depth == 1:
                i += 1
                continue
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append("".join(cur))
                return args, i + 1
        elif c == "," and depth == 1:
            args.append("".join(cur))
            cur = []
            i += 1
            continue
        cur.append(c)
        i += 1
    return args, i


def enclosing_call(text, pos):
    """The name of the call whose argument list holds pos, or None."""
    depth, i = 0, pos - 1
    while i >= 0 and text[i] != ";" and text[i] != "{" or (i >= 0 and depth > 0):
        c = text[i]
        if c in ")]":
            depth += 1
        elif c in "([":
            if depth == 0:
                if c == "(":
                    m = re.search(r"(\w+)\s*$", text[:i])
                    return m.group(1) if m else None
                return None
            depth -= 1
        i -= 1
    return None


def breaches(text):
    """[(line, what)] for one file's text."""
    text = strip_comments(text)
    out = []

    def line(pos):
        return text.count("\n", 0, pos) + 1

    for m in COMPARE.finditer(text):
        args, _ = call_args(text, m.end() - 1)
        for a in args:
            if NAME_ARG.search(STRING.sub('""', a)):
                out.append((line(m.start()), "%s(...) on the event's name (%s): compare r->kind with an RP_EV_*"
                            % (m.group(1), " ".join(a.split()))))
                break
    for m in EV_KEY.finditer(text):
        fn = enclosing_call(text, m.start())
        if not fn or not COMPARE.match(fn + "("):
            out.append((line(m.start()), 'the "ev" field read%s by a view: use the record\'s kind'
                        % (" (%s)" % fn if fn else "")))
    for m in MACRO.finditer(text):
        out.append((line(m.start()), "%s: a view names events by kind (RP_EV_*, rp_ev_names[kind])" % m.group(0)))
    for m in RAW.finditer(text):
        out.append((line(m.start()), 'a search for "ev": in raw lines'))
    return sorted(set(out))


def tools_files(src):
    p = subprocess.run(["git", "-C", src, "ls-files", "tools"], capture_output=True, text=True)
    names = p.stdout.split() if p.returncode == 0 else \
        ["tools/" + f for f in os.listdir(os.path.join(src, "tools"))]
    return sorted(n for n in names if n.endswith(".c") and os.path.exists(os.path.join(src, n)))


# The check's own cases: (text, breaches expected).
CASES = [
    ('if (!strcmp(r->ev, "dump"))', 1),
    ("if (strcmp(log->recs[i].ev, CGSHIM_EV_NODE))", 2),  # the name compared; CGSHIM_EV_* named
    ('const char *ev = rp_str(j, "ev");\nif (ev && !strcmp(ev, "call"))', 2),
    ('if (!strcmp(rp_str(j, "ev") ? rp_str(j, "ev") : "", want))', 1),
    ("if (!strncmp(sc.ev,\n\t\trp_ev_names[k], 4))", 1),
    ('x = json_object_get(j, "ev");', 1),
    ('if (!memcmp(name, CGSHIM_EV_LEAK, 4))', 2),
    ('const char *want = CGSHIM_EV_ALLOC;', 1),
    ('if (strstr(line, "\\"ev\\":\\"start\\""))', 1),
    ('if (r->kind == RP_EV_DUMP && (part = rp_str(j, "part")) && !strcmp(part, "capture"))', 0),
    ('switch (r->kind) {\ncase RP_EV_CALL:\n\tbreak;\n}', 0),
    ('return !strcmp(k, "v") || !strcmp(k, "ev") || !strcmp(k, "seq");', 0),
    ('rp_set_str(row, "what", rp_ev_names[r->kind]);', 0),
    ('/* strcmp(r->ev, "dump") was here */ if (!strcmp(event_name_of_rule, x))', 0),
    ('if (!strcmp(rp_str(j, "every"), "dump"))', 0),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--cases", action="store_true")
    a = ap.parse_args()
    t = cgtest.Tally()
    if a.cases:
        for text, want in CASES:
            got = breaches(text)
            t.check(len(got) == want, "%d breach(es) in %r" % (want, text), "found %s" % got)
        return t.finish()
    files = tools_files(a.src)
    t.check(len(files) > 10, "tools/*.c found (%d)" % len(files))
    for n in files:
        if n in LOADERS:
            continue
        found = breaches(open(os.path.join(a.src, n)).read())
        t.check(not found, "%s compares kinds, not event names" % n,
                "\n" + "\n".join("  %s:%d: %s" % (n, ln, what) for ln, what in found))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
