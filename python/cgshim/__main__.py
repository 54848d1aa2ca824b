"""python -m cgshim [options] [--] cmd args...: the launcher (docs/tools.md),
with the same options, exit status and ERROR SUMMARY line."""
import os
import sys

from ._paths import launcher


def main():
    exe = launcher()
    if not exe:
        sys.stderr.write("cgshim: the launcher `cgshim` is not installed next to this package nor on PATH\n")
        return 127
    os.execv(exe, [exe] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
