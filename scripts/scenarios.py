#!/usr/bin/env python3
"""scripts/scenarios.py -- the scenario programs of kernels/KIND/ (rules,
policy, model), found from the sources: the one list the meson files, the
GPU scripts (tests/gpu/all) and tests/lists_check.py read.

    scenarios.py [--src DIR] KIND [--except NAME]...

Prints the stems of kernels/KIND/*.cu, sorted, one per line. A scenario
built by a rule of its own (model/multi_device: two devices) is left out
by its caller with --except.
"""
import argparse
import glob
import os


def scenarios(src, kind, skip=()):
    return sorted(os.path.basename(p)[:-3] for p in glob.glob(os.path.join(src, "kernels", kind, "*.cu"))
                  if os.path.basename(p)[:-3] not in skip)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument("kind")
    ap.add_argument("--except", dest="skip", action="append", default=[])
    a = ap.parse_args()
    print("\n".join(scenarios(a.src, a.kind, a.skip)))
