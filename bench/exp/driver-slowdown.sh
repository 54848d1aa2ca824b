#!/usr/bin/env bash
# bench/exp/driver-slowdown.sh -- FOR MEASURING ONLY, on the GPU host (needs
# .deps/include for uthash where the host lacks it): the nineteenth
# session's open question (docs/design.md, "Where it stands"): the
# instantiate's driver call runs ~1 us longer when its hook acts, and not
# when the hook passes it through (skip20). Is it what the hook does, or
# only that the call comes later (spinN-20: the call passed through after
# spinning as long as the hook's work before it, ~450 ns, and longer)?
# Each variant in phases.py's before slot beside the plain shim, 16 rounds:
# compare the instantiate row's before_d with skip20's and the shim's.
# ~3 min of device time with the start.
set -eu
cd "$(dirname "$0")/../.."
bash bench/build.sh >/dev/null
for v in skip20 spin450-20 spin1500-20; do
	bash bench/exp/build.sh "$v" "build-exp-$v" >/dev/null
done
for v in skip20 spin450-20 spin1500-20; do
	echo "== before: $v"
	python3 bench/phases.py --rounds 16 --before "build-exp-$v/shim/libcgshim.so" capture 64 300 | tail -11
done
