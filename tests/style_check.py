#!/usr/bin/env python3
"""tests/style_check.py -- the C sources against the committed .clang-format
(clang-format --dry-run -Werror), suite 'style'.

    style_check.py [--src DIR] [--clang-format PROG] [--list]

Checks every tracked *.c/*.h/*.cu of shim/, tools/, include/, tests/ and
kernels/ except the files listed in scripts/format-pending.txt (not yet
reformatted: scripts/format.sh reformats them and empties the list), and
that no .c file of shim/ or tools/ is over 900 lines. Fails on a file that
does not conform and on a pending file that conforms already
or no longer exists (take it off the list). --list prints the files that do
not conform, one per line (what format-pending.txt is made from).
"""
import argparse
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "harness"))
import cgtest  # noqa: E402

DIRS = ("shim/", "tools/", "include/", "tests/", "kernels/")
MAX_LINES = 900
EXTS = (".c", ".h", ".cu")


def sources(src):
    p = subprocess.run(["git", "-C", src, "ls-files"], capture_output=True, text=True)
    if p.returncode != 0:
        names = []
        for d in DIRS:
            for root, _, fs in os.walk(os.path.join(src, d)):
                names += [os.path.relpath(os.path.join(root, f), src) for f in fs]
    else:
        names = p.stdout.split()
    return sorted(n for n in names if n.startswith(DIRS) and n.endswith(EXTS)
                  and os.path.exists(os.path.join(src, n)))


def pending(src):
    path = os.path.join(src, "scripts", "format-pending.txt")
    out = []
    for line in open(path):
        line = line.split("#", 1)[0].strip()
        if line:
            out.append(line)
    return out


def conforms(src, prog, name):
    # .cu files are C++ to clang-format; the sources read them as C
    p = subprocess.run([prog, "--dry-run", "-Werror", "--style=file", name], cwd=src,
                       capture_output=True, text=True)
    return p.returncode == 0, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("--clang-format", default="clang-format")
    ap.add_argument("--list", action="store_true")
    a = ap.parse_args()
    files = sources(a.src)
    if a.list:
        for n in files:
            if not conforms(a.src, a.clang_format, n)[0]:
                print(n)
        return 0
    t = cgtest.Tally(quiet_pass=True)
    todo = set(pending(a.src))
    for n in files:
        ok, err = conforms(a.src, a.clang_format, n)
        if n in todo:
            t.check(not ok, "%s is in scripts/format-pending.txt and does not conform yet" % n,
                    "it conforms: take it off the list")
        else:
            t.check(ok, "%s conforms to .clang-format" % n, "\n" + "\n".join(err.splitlines()[:12]))
    # one concern a file (issue 38): no .c file of the shim or the tools
    # over MAX_LINES lines
    long_ = ["%s (%d)" % (n, sum(1 for _ in open(os.path.join(a.src, n))))
             for n in files if n.startswith(("shim/", "tools/")) and n.endswith(".c")]
    long_ = [x for x in long_ if int(x.rsplit("(", 1)[1][:-1]) > MAX_LINES]
    t.check(not long_, "no .c file of shim/ or tools/ over %d lines" % MAX_LINES, "over: %s" % long_)
    gone = sorted(todo - set(files))
    t.check(not gone, "every file of scripts/format-pending.txt exists", "gone: %s" % gone)
    print("%d files, %d pending" % (len(files), len(todo)))
    return t.finish()


if __name__ == "__main__":
    sys.exit(main())
