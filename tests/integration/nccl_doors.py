#!/usr/bin/env python3
"""tests/integration/nccl_doors.py -- the shim's NCCL exports as a process
sees them (tests/integration/nccl_doors.c), bare and under the shim.

usage: nccl_doors.py PROG LIBCGSHIM STANDIN_DIR
Without a libnccl the shim's exports are not found by lookup (as bare);
with one in a local scope, RTLD_DEFAULT still finds nothing (as bare), its
handle's lookups of the three teardown names give the shim's export, which
forwards there (same results as bare, and a record of each call), other
names stay libnccl's. A weak reference with no libnccl binds to the export:
its call exits 127 with the loader's message. One line per check.
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "harness"))
import cgtest  # noqa: E402

T = cgtest.Tally()


def main():
    prog, lib, standin = sys.argv[1:4]
    base = cgtest.clean_env()
    base["LD_LIBRARY_PATH"] = standin + (":" + base["LD_LIBRARY_PATH"] if base.get("LD_LIBRARY_PATH") else "")
    with tempfile.TemporaryDirectory(prefix="cgs-nccl-") as tmp:
        log = os.path.join(tmp, "l.jsonl")
        bare = subprocess.run([prog, "lookups"], env=base, capture_output=True, text=True, timeout=60)
        sh = subprocess.run([prog, "lookups"], env=cgtest.shim_env(base, lib, log), capture_output=True, text=True,
                            timeout=60)
        b = dict(ln.split(": ", 1) for ln in bare.stdout.splitlines() if ": " in ln)
        s = dict(ln.split(": ", 1) for ln in sh.stdout.splitlines() if ": " in ln)
        T.check(bare.returncode == 0 and sh.returncode == 0, "lookups: exit 0 bare and under the shim (%d, %d) %s" % (
            bare.returncode, sh.returncode, sh.stderr[-300:]))
        T.check(b.get("default, no libnccl") == s.get("default, no libnccl") == "null (dlerror set)",
                "RTLD_DEFAULT without libnccl: not found, dlerror set, as bare (%s / %s)" % (
                    b.get("default, no libnccl"), s.get("default, no libnccl")))
        T.check(b.get("default, local libnccl") == s.get("default, local libnccl") == "null",
                "RTLD_DEFAULT with a local libnccl: not found, as bare (%s)" % s.get("default, local libnccl"))
        T.check(b.get("handle ncclCommDestroy") == "libnccl" and s.get("handle ncclCommDestroy") == "shim"
                and s.get("handle ncclCommFinalize") == "shim",
                "libnccl's handle: the teardown names are the shim's export under the shim (%s, %s)" % (
                    s.get("handle ncclCommDestroy"), s.get("handle ncclCommFinalize")))
        T.check(s.get("handle ncclCommInitAll") == "libnccl" and s.get("handle ncclBogus") == "null",
                "libnccl's handle: other names unchanged (%s, %s)" % (s.get("handle ncclCommInitAll"),
                                                                    s.get("handle ncclBogus")))
        T.check(all(b.get(k) == s.get(k) for k in ("init", "finalize", "destroy", "destroy NULL"))
                and s.get("destroy NULL") == "4",
                "the calls answer as bare, forwarded into the local scope (%s)" % {
                    k: s.get(k) for k in ("init", "finalize", "destroy", "destroy NULL")})
        recs = [r for r in cgtest.read_log(log) if r.get("ev") == "call" and r.get("api", "").startswith("ncclComm")]
        T.check([(r.get("api"), r.get("rc")) for r in recs] ==
                [("ncclCommFinalize", 0), ("ncclCommDestroy", 0), ("ncclCommDestroy", 4)],
                "a call record per teardown call (%s)" % [(r.get("api"), r.get("rc")) for r in recs])
        nolib = cgtest.clean_env()
        nolib.pop("LD_LIBRARY_PATH", None)
        wb = subprocess.run([prog, "weak"], env=nolib, capture_output=True, text=True, timeout=60)
        ws = subprocess.run([prog, "weak"], env=cgtest.shim_env(nolib, lib, log), capture_output=True, text=True,
                            timeout=60)
        T.check(wb.returncode == 0 and wb.stdout.strip() == "weak: null", "weak reference bare: NULL (%s)" %
                wb.stdout.strip())
        T.check(ws.returncode == 127 and "weak: shim" in ws.stdout and "symbol lookup error" in ws.stderr
                and "undefined symbol: ncclCommDestroy" in ws.stderr,
                "weak reference under the shim: the export, and its call gets the loader's answer "
                "(exit %d, %s)" % (ws.returncode, ws.stderr.strip()[-200:]))
    return T.finish()


if __name__ == "__main__":
    sys.exit(main())
