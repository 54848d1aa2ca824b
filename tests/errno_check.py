#!/usr/bin/env python3
"""tests/errno_check.py -- the errno contract of the hand-written wrappers
(shim/call.h), suite 'style'.

    errno_check.py --src DIR

In shim/hooks/ and shim/getproc.c (the CUSTOM rows of hooks.def and their
helpers) errno is kept only through call.h's macros: CG_ERRNO_IN / CG_FWD
(the application's value to the real call), CG_FWD_OUT or CG_ERRNO_OUT with
CG_RETURN (the call's value back on return), CG_KEEP_ERRNO(...) (around
work not bracketed by a return). Fails, naming file and line, on:
  - a hand-paired save: "int x = errno" or "errno = x" (x not cg_errno_in);
  - a plain return in a function after its CG_FWD_OUT / CG_ERRNO_OUT;
  - a return inside CG_KEEP_ERRNO(...), which would skip the restore.
"""
import argparse
import glob
import os
import re
import sys

SAVE = re.compile(r"\bint\s+\w+\s*=\s*errno\b|\berrno\s*=\s*(?!cg_errno_in\b)[A-Za-z_]\w*\s*;")
OUT = re.compile(r"\bCG_FWD_OUT\(|\bCG_ERRNO_OUT\b")
RET = re.compile(r"\breturn\b")


def functions(text):
    """(start offset, body) of each top-level function: from a line that
    opens a brace at column 0 to the next line that is a lone '}'."""
    for m in re.finditer(r"^\{\n(.*?)^\}", text, re.M | re.S):
        yield m.start(1), m.group(1)


def line_of(text, off):
    return text.count("\n", 0, off) + 1


def check(path, rel):
    text = open(path).read()
    bad = []
    for m in SAVE.finditer(text):
        bad.append("%s:%d: errno saved by hand (%r): use call.h's macros" % (rel, line_of(text, m.start()), m.group(0)))
    for start, body in functions(text):
        o = OUT.search(body)
        if not o:
            continue
        for r in RET.finditer(body, o.end()):
            line = body[body.rfind("\n", 0, r.start()) + 1:body.find("\n", r.start())]
            if "CG_RETURN" not in line:
                bad.append("%s:%d: a plain return after CG_FWD_OUT/CG_ERRNO_OUT: use CG_RETURN"
                           % (rel, line_of(text, start + r.start())))
    for m in re.finditer(r"\bCG_KEEP_ERRNO\(", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        if RET.search(text, m.end(), i):
            bad.append("%s:%d: a return inside CG_KEEP_ERRNO skips the restore" % (rel, line_of(text, m.start())))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", required=True)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.src, "shim", "hooks", "*.[ch]"))) + [os.path.join(a.src, "shim", "getproc.c")]
    bad = []
    for f in files:
        bad += check(f, os.path.relpath(f, a.src))
    for b in bad:
        print("FAIL " + b)
    print("%d files, %d problems" % (len(files), len(bad)))
    print("%d passed, %d failed" % (len(files) - len({b.split(':')[0] for b in bad}), len({b.split(':')[0] for b in bad})))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
