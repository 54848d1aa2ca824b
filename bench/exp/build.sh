#!/usr/bin/env bash
# bench/exp/build.sh VARIANT DIR -- FOR MEASURING ONLY: build a throw-away
# libcgshim.so into DIR (DIR/shim/libcgshim.so) from a scratch copy of the
# tree, for bench/run.py --before DIR/shim/libcgshim.so:
#   plain         the tree as it is (the other side of a comparison, built
#                 by the same compiler)
#   nolock        mutexes no-ops (bench/exp/nolock.h; one thread only)
#   nolock-atomic the same and locked read-modify-writes plain
#   touchN-ind    N extra cold lines at each hook's entry, independent loads
#   touchN-dep    the same as one dependent chain (bench/exp/touch.h)
#   pf-entry      each hook's code lines prefetched at its entry, pf-both
#                 also after its driver call (bench/exp/prefetch.h; the
#                 lines patched in afterwards by bench/exp/pf-lines.py)
#   skipN         the hook of row N of hooks.def passes every call through
#                 untouched (cg_call_begin answers 0): its phase then shows
#                 only what the rest of the shim does to its driver call
#   spinN-H       the hook of row H passes its calls through as skipH, but
#                 first spins N ns (rdtsc-free: CLOCK_MONOTONIC): whether a
#                 driver call runs longer because the call comes later, not
#                 because of what the hook did (a driver thread on the same
#                 core, say)
#   nopost20      the instantiate hook's post part (after the driver's call)
#                 returns at once: the model keeps no exec
#   padN          every driver call made N bytes deeper (alloca in CG_FWD)
# EXP_MESON: more meson options (e.g. -Dprof=true: the in-place profile);
# CGX_ONLY_HID=n: the touch variants touch at that hook only.
# The workload must be single-threaded (the nolock variants race otherwise).
# docs/measurements.md (nineteenth session) has what they measured.
set -eu
V=$1
D=$(realpath -m "$2")
R=$(cd "$(dirname "$0")/../.." && pwd)
S=$(mktemp -d)
trap 'rm -rf "$S"' EXIT
tar -C "$R" --exclude='./build*' --exclude=./.git --exclude='./.peer*' -cf - . | tar -C "$S" -xf -
F="-I$R/.deps/include"
case $V in
plain) ;;
nolock) F="$F -include $R/bench/exp/nolock.h" ;;
nolock-atomic) F="$F -include $R/bench/exp/nolock.h -DXNOATOMIC" ;;
touch*-ind | touch*-dep)
	n=${V#touch}; n=${n%-*}; k=${V##*-}
	F="$F -include $R/bench/exp/touch.h -DCGX_LINES=$n -DCGX_$(echo "$k" | tr a-z A-Z)${CGX_ONLY_HID:+ -DCGX_ONLY_HID=$CGX_ONLY_HID}"
	# the one call site: at every hook's entry, after its profile mark
	sed -i 's/^\tCG_PROF_ENTER(hid);$/\tCG_PROF_ENTER(hid);\n\tcgx_touch(hid);/' "$S/shim/hooks/hooks.h"
	grep -q 'cgx_touch(hid)' "$S/shim/hooks/hooks.h" || { echo "exp/build.sh: hooks.h has no entry mark to follow" >&2; exit 1; }
	;;
pf-entry | pf-both)
	F="$F -include $R/bench/exp/prefetch.h"
	sed -i 's/^\tCG_PROF_ENTER(hid);$/\tCG_PROF_ENTER(hid);\n\tcgx_pf(hid);/' "$S/shim/hooks/hooks.h"
	grep -q 'cgx_pf(hid)' "$S/shim/hooks/hooks.h" || { echo "exp/build.sh: hooks.h has no entry mark to follow" >&2; exit 1; }
	if [ "$V" = pf-both ]; then
		sed -i 's/^#define CG_FWD(call) (errno = cg_errno_in, (call))$/#define CG_FWD(call) ({ errno = cg_errno_in; __typeof__(call) cgx_r_ = (call); cgx_pf(cgx_pf_cur); cgx_r_; })/' "$S/shim/call.h"
		grep -q 'cgx_pf(cgx_pf_cur)' "$S/shim/call.h" || { echo "exp/build.sh: call.h's CG_FWD not found" >&2; exit 1; }
	fi
	;;
skip*)
	n=${V#skip}
	sed -i 's/^\tif (CG_UNLIKELY(cg_tls.in_shim))$/\tif (hid == '"$n"')\n\t\treturn 0;\n\tif (CG_UNLIKELY(cg_tls.in_shim))/' "$S/shim/hooks/hooks.h"
	grep -q "if (hid == $n)" "$S/shim/hooks/hooks.h" || { echo "exp/build.sh: hooks.h's cg_call_begin not found" >&2; exit 1; }
	;;
spin*-*)
	n=${V#spin}; h=${n#*-}; n=${n%-*}
	sed -i 's/^\tif (CG_UNLIKELY(cg_tls.in_shim))$/\tif (hid == '"$h"') {\n\t\tstruct timespec cgx_a_, cgx_b_;\n\t\tclock_gettime(CLOCK_MONOTONIC, \&cgx_a_);\n\t\tdo\n\t\t\tclock_gettime(CLOCK_MONOTONIC, \&cgx_b_);\n\t\twhile ((cgx_b_.tv_sec - cgx_a_.tv_sec) * 1000000000L + cgx_b_.tv_nsec - cgx_a_.tv_nsec < '"$n"');\n\t\treturn 0;\n\t}\n\tif (CG_UNLIKELY(cg_tls.in_shim))/' "$S/shim/hooks/hooks.h"
	grep -q "if (hid == $h) {" "$S/shim/hooks/hooks.h" || { echo "exp/build.sh: hooks.h's cg_call_begin not found" >&2; exit 1; }
	;;
nopost20)
	sed -i 's/^\tif (f->churn \&\& rc == CUDA_SUCCESS)$/\treturn;\n&/' "$S/shim/hooks/exec.c"
	grep -B1 'if (f->churn && rc == CUDA_SUCCESS)' "$S/shim/hooks/exec.c" | head -1 | grep -q 'return;' ||
		{ echo "exp/build.sh: exec.c's instantiate_post not found" >&2; exit 1; }
	;;
pad*)
	n=${V#pad}
	sed -i 's/^#define CG_FWD(call) (errno = cg_errno_in, (call))$/#define CG_FWD(call) ({ volatile char *cgx_p_ = __builtin_alloca('"$n"'); cgx_p_[0] = 0; errno = cg_errno_in; (call); })/' "$S/shim/call.h"
	# the profile build's CG_FWD too (its first mark is the call's start)
	sed -i '0,/CG_PROF_MARK(CG_PROF_FWD0);/s//volatile char *cgx_p_ = __builtin_alloca('"$n"'); cgx_p_[0] = 0; CG_PROF_MARK(CG_PROF_FWD0);/' "$S/shim/call.h"
	[ "$(grep -c 'cgx_p_' "$S/shim/call.h")" = 2 ] || { echo "exp/build.sh: call.h's CG_FWD not found" >&2; exit 1; }
	;;
*) echo "exp/build.sh: unknown variant $V" >&2; exit 2 ;;
esac
rm -rf "$D"
CFLAGS="$F" meson setup "$D" "$S" -Dtests=disabled ${EXP_MESON:-} >"$D.log" 2>&1
ninja -C "$D" shim/libcgshim.so >>"$D.log" 2>&1 || { tail -20 "$D.log"; exit 1; }
echo "built $D/shim/libcgshim.so ($V)"
