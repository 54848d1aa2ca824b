#!/usr/bin/env bash
# bench/pgo.sh -- a profile-guided libcgshim.so, to measure what code layout
# is worth (issue 36): GCC moves the branches a steady loop never takes out
# of the hot functions and packs those together. On the stand-in's cache
# simulation (docs/measurements.md, 2026-11-29 coldmiss) a capture-64
# cycle's instruction misses fell 317 -> 135 this way. Trained on the CPU
# stand-in driver (no GPU needed): the capture, update and launch loops of
# bench/workload.cu. Information, not the shipped build.
# usage: bash bench/pgo.sh [BUILD_DIR]   (default build-pgo)
# then on a GPU host, beside the usual build:
#   python3 bench/phases.py --lib build-pgo/shim/libcgshim.so \
#     --before build-gpu/shim/libcgshim.so --rounds 12 capture 64 300
set -eu -o pipefail
cd "$(dirname "$0")/.."
B=${1:-build-pgo}
[ -d "$B" ] || meson setup "$B" -Db_pgo=generate >/dev/null
meson configure "$B" -Db_pgo=generate
find "$B" -name '*.gcda' -delete
ninja -C "$B" >/dev/null
gcc -O2 -x c -Ikernels -Itests/standin -Ibench -I"${CUDA_HOME:-/usr/local/cuda}/include" bench/workload.cu \
	-L"$B/tests/standin" -lcudart -o "$B/wl-standin"
t=$(mktemp -d)
for c in "capture 64 300" "update-capture 64 200" "update-same 64 500" "update-fresh 64 200" "launch 1 40 1000"; do
	LD_LIBRARY_PATH="$B/tests/standin" LD_PRELOAD="$B/shim/libcgshim.so" CGSHIM_LOG=info \
		CGSHIM_LOG_FORMAT=jsonl CGSHIM_LOG_FILE="$t/r-%p.jsonl" "$B/wl-standin" $c >/dev/null
done
rm -rf "$t"
meson configure "$B" -Db_pgo=use
ninja -C "$B" shim/libcgshim.so >/dev/null
echo "built $B/shim/libcgshim.so (profile: $(find "$B/shim" -name '*.gcda' | wc -l) objects)"
