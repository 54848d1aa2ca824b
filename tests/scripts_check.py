#!/usr/bin/env python3
"""scripts/setup.sh (behind demo.sh and test.sh) fails loudly: a missing
CUDA toolkit names the path looked at, and a failing `meson setup` prints
meson's own error instead of a bare exit status.

usage: scripts_check.py SOURCE_ROOT
"""
import os
import subprocess
import sys
import tempfile

root = sys.argv[1]
fails = 0


def setup(cuda_home, build):
    env = dict(os.environ, CUDA_HOME=cuda_home, BUILD=build, CGSHIM_NO_INSTALL="1")
    p = subprocess.run(["bash", os.path.join(root, "scripts", "setup.sh"), "build"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    return p.returncode, p.stdout


def expect(name, cond, out):
    global fails
    print("%s: %s" % ("ok  " if cond else "FAIL", name))
    if not cond:
        fails += 1
        print("    output was:\n" + "\n".join("    | " + l for l in out.splitlines()))


with tempfile.TemporaryDirectory() as d:
    rc, out = setup(os.path.join(d, "no-cuda"), os.path.join(d, "b1"))
    expect("no CUDA headers: exit 1 naming the path", rc == 1 and "no-cuda/include/cuda.h" in out, out)
    # A toolkit with cuda.h only: meson's has_header passes, then the shim's
    # build finds no cudaTypedefs.h. The error must reach the user.
    os.makedirs(os.path.join(d, "fake", "include"))
    open(os.path.join(d, "fake", "include", "cuda.h"), "w").write("/* fake */\n")
    rc, out = setup(os.path.join(d, "fake"), os.path.join(d, "b2"))
    expect("meson setup failure: its error is printed",
           rc == 1 and "ERROR:" in out and "cudaTypedefs.h" in out and "meson setup" in out, out)
    # scripts/deps.sh on a machine missing everything, with an apt-get that
    # fails: apt's own error is printed, with the packages wanted, exit 1.
    # (Fake dpkg/apt-get/id/sudo first on PATH; nothing is installed.)
    fake = os.path.join(d, "fakebin")
    os.makedirs(fake)
    for name, body in (("dpkg", "exit 1"), ("id", 'echo 1000'), ("sudo", 'exec "$@"'),
                       ("apt-get", 'echo "E: Unable to locate package libjansson-dev (fake apt)" >&2; exit 100')):
        p = os.path.join(fake, name)
        open(p, "w").write("#!/bin/sh\n" + body + "\n")
        os.chmod(p, 0o755)
    env = dict(os.environ, PATH=fake + ":" + os.environ["PATH"])
    env.pop("CGSHIM_NO_INSTALL", None)
    p = subprocess.run(["bash", os.path.join(root, "scripts", "deps.sh"), "test"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    expect("deps.sh: a failing apt-get shows its error and the packages",
           p.returncode == 1 and "fake apt" in p.stdout and "libcmocka-dev" in p.stdout
           and "apt-get failed" in p.stdout, p.stdout)
    env["CGSHIM_NO_INSTALL"] = "1"
    p = subprocess.run(["bash", os.path.join(root, "scripts", "deps.sh"), "build"], env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    expect("deps.sh build: lists what it lacks, not the test packages",
           p.returncode == 0 and "libjansson-dev" in p.stdout and "libcmocka-dev" not in p.stdout, p.stdout)
print("%d failed" % fails)
sys.exit(1 if fails else 0)
