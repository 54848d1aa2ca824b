#!/usr/bin/env python3
"""`meson install` into a scratch DESTDIR puts the library, the launcher, the
docs, the record header and the pkg-config file where they belong, and the
installed pkg-config file names the installed preload library.
Usage: install_check.py BUILD_DIR"""
import glob, os, subprocess, sys, tempfile

build = sys.argv[1]
dest = tempfile.mkdtemp(prefix="cgshim-install-")
p = subprocess.run(["meson", "install", "-C", build, "--destdir", dest, "--no-rebuild", "--quiet"],
                   capture_output=True, text=True)
fails = 0


def check(ok, what):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += not ok


check(p.returncode == 0, "meson install exits 0 (%s)" % p.stderr.strip()[-300:])
files = [os.path.relpath(f, dest) for f in glob.glob(dest + "/**/*", recursive=True) if os.path.isfile(f)]
for want in ("lib*/**/libcgshim.so", "bin/cgshim", "share/doc/cgshim/log-format.md",
             "share/doc/cgshim/rules/CGS001.md", "share/doc/cgshim/README.md",
             "include/cgshim/record.h", "lib*/**/pkgconfig/cgshim.pc"):
    pat = os.path.join(dest, "**", want)
    check(bool(glob.glob(pat, recursive=True)), "installed: %s" % want)
pcs = glob.glob(os.path.join(dest, "**", "cgshim.pc"), recursive=True)
if pcs:
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]), PKG_CONFIG_SYSROOT_DIR=dest)
    q = subprocess.run(["pkg-config", "--variable=preload", "cgshim"], capture_output=True, text=True, env=env)
    pre = q.stdout.strip()
    check(q.returncode == 0 and pre.endswith("/libcgshim.so"), "pkg-config preload variable: %s" % pre)
    # pkg-config prefixes the sysroot to paths it prints
    path = pre if pre.startswith(dest) else dest + pre
    check(os.path.isfile(path), "it names the installed library")
print("%d failed" % fails)
sys.exit(1 if fails else 0)
