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
             "include/cgshim/record.h", "include/cgshim/records.def", "lib*/**/pkgconfig/cgshim.pc",
             "share/man/man1/cgshim.1", "share/man/man1/cgshim-report.1", "share/man/man7/cgshim.7",
             "include/cgshim/label.h", "cgshim/__init__.py", "cgshim/plugin.py", "cgshim/labels.py", "cgshim/__main__.py",
             "cgshim/_paths.py"):
    pat = os.path.join(dest, "**", want)
    check(bool(glob.glob(pat, recursive=True)), "installed: %s" % want)
# The Python package names the installed launcher and library, not the build's.
paths = glob.glob(os.path.join(dest, "**", "cgshim", "_paths.py"), recursive=True)
if paths:
    text = open(paths[0]).read()
    check("/bin/cgshim" in text and "libcgshim.so" in text and os.path.abspath(build) not in text,
          "the installed cgshim/_paths.py names the installed launcher and library")
pcs = glob.glob(os.path.join(dest, "**", "cgshim.pc"), recursive=True)
if pcs:
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]), PKG_CONFIG_SYSROOT_DIR=dest)
    q = subprocess.run(["pkg-config", "--variable=preload", "cgshim"], capture_output=True, text=True, env=env)
    pre = q.stdout.strip()
    check(q.returncode == 0 and pre.endswith("/libcgshim.so"), "pkg-config preload variable: %s" % pre)
    # pkg-config prefixes the sysroot to paths it prints
    path = pre if pre.startswith(dest) else dest + pre
    check(os.path.isfile(path), "it names the installed library")
    # The header is included as <cgshim/record.h>: Cflags must name the
    # include directory itself, and a program must compile with it.
    q = subprocess.run(["pkg-config", "--cflags", "cgshim"], capture_output=True, text=True, env=env)
    flags = q.stdout.split()
    check(q.returncode == 0 and flags and flags[0].startswith("-I") and flags[0].endswith("/include"),
          "pkg-config --cflags: %r" % q.stdout.strip())
    src = os.path.join(dest, "use.c")
    open(src, "w").write("#include <cgshim/record.h>\nint main(void) { return CGSHIM_RECORD_VERSION > 0 ? 0 : 1; }\n")
    q = subprocess.run(["cc", "-c", "-o", os.devnull, src] + flags, capture_output=True, text=True)
    check(q.returncode == 0, "a program including <cgshim/record.h> compiles with those flags %s" % q.stderr[-300:])
# cgshim(7) lists every variable of shim/config.def, and the pages render.
mans = glob.glob(os.path.join(dest, "**", "man7", "cgshim.7"), recursive=True)
if mans:
    page = open(mans[0]).read()
    cfg = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "shim", "config.def")).read()
    import re
    names = re.findall(r"^CFG\(\w+, (CGSHIM_\w+),", cfg, re.M)
    missing = [n for n in names if ".B %s\n" % n.replace("_", "_") not in page]
    check(names and not missing, "cgshim(7) lists all %d variables (missing %s)" % (len(names), missing))
    for m in glob.glob(os.path.join(dest, "**", "man?", "cgshim*"), recursive=True):
        q = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", m], capture_output=True, text=True)
        check(q.returncode == 0 and not q.stderr.strip(), "%s renders without warnings %s" % (os.path.basename(m), q.stderr[:300]))
print("%d failed" % fails)
sys.exit(1 if fails else 0)
