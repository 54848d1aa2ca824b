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
#   tsc           cg_now_ns from the time-stamp counter (a fixed 2.1 GHz, the
#                 H200 host's; values only roughly right): what the
#                 clock_gettime calls of a cycle cost
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
# patch FILE SED MARK: one edit of the scratch copy's FILE, which must then
# hold MARK (else the line it follows moved: say so rather than build the
# tree unchanged)
patch() {
	sed -i "$2" "$S/$1"
	grep -qF -- "$3" "$S/$1" || { echo "exp/build.sh: $V: $1 not patched (the line it follows moved?)" >&2; exit 1; }
}
# at_entry CODE: CODE at every hook's entry (cg_call_begin), after its
# profile mark; at_begin CODE: at cg_call_begin's start, before any mark
at_entry() { patch shim/hooks/hooks.h 's/^\tCG_PROF_ENTER(hid);$/&\n\t'"$1"'/' "$1"; }
at_begin() { patch shim/hooks/hooks.h 's/^\tif (CG_UNLIKELY(cg_tls.in_shim))$/\t'"$1"'\n&/' "$1"; }
case $V in
plain) ;;
nolock) F="$F -include $R/bench/exp/nolock.h" ;;
nolock-atomic) F="$F -include $R/bench/exp/nolock.h -DXNOATOMIC" ;;
touch*-ind | touch*-dep)
	n=${V#touch}; n=${n%-*}; k=${V##*-}
	F="$F -include $R/bench/exp/touch.h -DCGX_LINES=$n -DCGX_$(echo "$k" | tr a-z A-Z)${CGX_ONLY_HID:+ -DCGX_ONLY_HID=$CGX_ONLY_HID}"
	at_entry 'cgx_touch(hid);'
	;;
pf-entry | pf-both)
	F="$F -include $R/bench/exp/prefetch.h"
	at_entry 'cgx_pf(hid);'
	[ "$V" = pf-entry ] ||
		patch shim/call.h 's/^#define CG_FWD(call) (errno = cg_errno_in, (call))$/#define CG_FWD(call) ({ errno = cg_errno_in; __typeof__(call) cgx_r_ = (call); cgx_pf(cgx_pf_cur); cgx_r_; })/' 'cgx_pf(cgx_pf_cur)'
	;;
skip*) at_begin "if (hid == ${V#skip}) return 0;" ;;
spin*-*)
	n=${V#spin}; h=${n#*-}; n=${n%-*}
	at_begin "if (hid == $h) { struct timespec t_[2]; clock_gettime(CLOCK_MONOTONIC, t_); do clock_gettime(CLOCK_MONOTONIC, t_ + 1); while ((t_[1].tv_sec - t_[0].tv_sec) * 1000000000L + t_[1].tv_nsec - t_[0].tv_nsec < $n); return 0; }"
	;;
nopost20) patch shim/hooks/exec.c 's/^\tif (f->churn \&\& rc == CUDA_SUCCESS)$/\treturn; \/\* cgx \*\/\n&/' 'return; /* cgx */' ;;
pad*)
	pad="volatile char *cgx_p_ = __builtin_alloca(${V#pad}); cgx_p_[0] = 0;"
	patch shim/call.h 's/^#define CG_FWD(call) (errno = cg_errno_in, (call))$/#define CG_FWD(call) ({ '"$pad"' errno = cg_errno_in; (call); })/' "$pad errno"
	# the profile build's CG_FWD too (its first mark is the call's start)
	patch shim/call.h '0,/CG_PROF_MARK(CG_PROF_FWD0);/s//'"$pad"' &/' "$pad CG_PROF_MARK"
	;;
tsc)
	patch shim/log.c 's/^\tclock_gettime(CLOCK_MONOTONIC, \&ts);$/\tstatic uint64_t cgx_t0, cgx_n0;\n\tif (CG_LIKELY(cgx_t0)) return cgx_n0 + (uint64_t)((__builtin_ia32_rdtsc() - cgx_t0) \/ 2.1);\n\tclock_gettime(CLOCK_MONOTONIC, \&ts);\n\tcgx_n0 = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec; cgx_t0 = __builtin_ia32_rdtsc();/' 'cgx_n0 = '
	;;
*) echo "exp/build.sh: unknown variant $V" >&2; exit 2 ;;
esac
rm -rf "$D"
CFLAGS="$F" meson setup "$D" "$S" -Dtests=disabled ${EXP_MESON:-} >"$D.log" 2>&1
ninja -C "$D" shim/libcgshim.so >>"$D.log" 2>&1 || { tail -20 "$D.log"; exit 1; }
echo "built $D/shim/libcgshim.so ($V)"
