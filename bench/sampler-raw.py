#!/usr/bin/env python3
"""Attribute bench/sampler.c's raw samples (SAMPLER_RAW) to modules and to the
shim's functions. A diagnosis tool for where the shim's time goes (issue 36),
not part of the shim.

Usage: sampler-raw.py RAW [--sym MODULE=FILE ...] [--top N] [--base RAW2]
  RAW      the file SAMPLER_RAW wrote (one sample a line, innermost frame
           first, "module+0xoffset" words)
  --sym    names a module's frames with addr2line on FILE (built with -g:
           the shim's build-gpu/shim/libcgshim.so); libcgshim.so is looked for
           beside RAW when not given
  --base   a bare run's RAW: its per-module self share is printed beside

Prints:
  1. self share per module (the innermost frame's module);
  2. for the samples with a shim frame: the innermost shim function and the
     leaf's module ("libcgshim" = the shim's own work, "libcuda" = a driver
     call the shim made or forwarded, "libc from M" = malloc, locks, ...
     called from module M);
  3. inclusive share per shim function (any frame, each counted once a
     sample), and the outermost shim frame (the hook entered).
"""
import argparse, collections, os, subprocess, sys


def load(path):
    with open(path) as f:
        return [l.split() for l in f if l.strip()]


def split(word):
    mod, _, off = word.rpartition("+0x")
    return mod, int(off, 16)


def symbolize(file, offs):
    """offset -> outermost function of its inline chain (addr2line -f -i)."""
    names = {}
    offs = sorted(offs)
    for i in range(0, len(offs), 4000):
        chunk = offs[i:i + 4000]
        out = subprocess.run(["addr2line", "-a", "-f", "-i", "-e", file] + ["0x%x" % o for o in chunk],
                             capture_output=True, text=True).stdout.splitlines()
        cur, fns = None, []
        for line in out + ["0x0"]:
            if line.startswith("0x") and all(c in "0123456789abcdefx" for c in line):
                if cur is not None:
                    names[cur] = fns[-1] if fns else "?"
                cur, fns = int(line, 16), []
            elif not line.startswith("/") and ":" not in line and line != "??":
                fns.append(line)
            elif line == "??":
                fns.append("?")
    return names


def modclass(mod):
    for k in ("libcgshim", "libcuda", "libcudart", "libc.so", "ld-linux", "libpthread", "libstdc++"):
        if mod.startswith(k):
            return k.rstrip(".so") if k != "libc.so" else "libc"
    return mod


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("raw")
    ap.add_argument("--sym", action="append", default=[])
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--base")
    a = ap.parse_args()
    samples = load(a.raw)
    syms = dict(s.split("=", 1) for s in a.sym)
    shim = syms.get("libcgshim.so") or os.path.join(os.path.dirname(a.raw), "libcgshim.so")
    need = set()
    parsed = []
    for s in samples:
        fr = [split(w) for w in s]
        parsed.append(fr)
        for i, (m, o) in enumerate(fr):
            if m == "libcgshim.so":
                need.add(o if i == 0 else o - 1)
    names = symbolize(shim, need) if os.path.exists(shim) and need else {}

    def fname(i, m, o):
        return names.get(o if i == 0 else o - 1, "libcgshim+0x%x" % o)

    n = len(parsed)
    print("%d samples" % n)
    selfmod = collections.Counter(modclass(fr[0][0]) for fr in parsed if fr)
    base = None
    if a.base:
        b = load(a.base)
        base = collections.Counter(modclass(split(s[0])[0]) for s in b if s)
        bn = len(b)
    print("\n1. self share per module%s" % ("   (bare run beside)" if base else ""))
    for m, c in selfmod.most_common(12):
        extra = "   bare %5.1f%%" % (100.0 * base[m] / bn) if base else ""
        print("  %5.1f%%  %s%s" % (100.0 * c / n, m, extra))
    inner, incl, outer = collections.Counter(), collections.Counter(), collections.Counter()
    withshim = 0
    for fr in parsed:
        idx = [i for i, (m, o) in enumerate(fr) if m == "libcgshim.so"]
        if not idx:
            continue
        withshim += 1
        i0 = idx[0]
        leaf = modclass(fr[0][0])
        if leaf in ("libc", "ld-linux"):  # whose libc call: the first frame outside libc
            by = next((modclass(m) for m, o in fr if modclass(m) not in ("libc", "ld-linux")), "?")
            leaf = "%s from %s" % (leaf, by)
        inner[(fname(i0, *fr[i0]), leaf)] += 1
        seen = set(fname(i, *fr[i]) for i in idx)
        for f in seen:
            incl[f] += 1
        outer[fname(idx[-1], *fr[idx[-1]])] += 1
    print("\n2. samples with a shim frame: %d (%.1f%%); innermost shim function, leaf module" %
          (withshim, 100.0 * withshim / max(n, 1)))
    for (f, m), c in inner.most_common(a.top):
        print("  %5.1f%%  %-48s %s" % (100.0 * c / n, f, m))
    print("\n3a. inclusive, shim functions")
    for f, c in incl.most_common(a.top):
        print("  %5.1f%%  %s" % (100.0 * c / n, f))
    print("\n3b. outermost shim frame (the hook entered)")
    for f, c in outer.most_common(a.top):
        print("  %5.1f%%  %s" % (100.0 * c / n, f))


if __name__ == "__main__":
    sys.exit(main())
