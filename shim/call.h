/*
 * shim/call.h -- the per-call context every hook uses.
 *
 * cg_call_begin() (hooks/hooks.h: it starts the shim and warms the capture
 * path, both above this room) decides in a few loads whether the shim acts
 * on this call. cg_call_end() (hooks/hooks.h) writes the "call" record: every call at trace level,
 * lifecycle calls (CG_CALL_LIFE) at info, and any failing call at info.
 */
#ifndef CGSHIM_CALL_H
#define CGSHIM_CALL_H

#include <errno.h>

#include "doors.h"
#include "log.h"
#include "prof.h"
#include "resolve.h"

#define CG_CALL_LIFE 1 /* lifecycle call: logged at info */
/* With CG_CALL_LIFE: a call of a steady capture cycle (a capture from a
 * steady begin site, model/devices.c, and the instantiation, executable
 * and graph that came from it), which repeats the cycle before it and
 * changes nothing the shim models. Its record, if it succeeded, is written
 * at debug level; below that it is counted (records_condensed), as
 * identical updates and launches are. Every 64th cycle of a steady site is
 * sampled in full and written. */
#define CG_CALL_REPEAT 2
/* No clock read at entry: the hook reads it (cg_call_clock) once it knows
 * a record may follow (an update that changes nothing writes none). */
#define CG_CALL_NOCLOCK 4

/* t0: hook entry; t_in/t_out: the real call's bracket, set by hooks that
 * mark it (cg_call_mark_in/out), so the record can split the hook's own
 * cost into pre_ns (before the real call) and post_ns (after it). All 0
 * when the record level is off (no clock is read). */
struct cg_call {
	int hid;
	int flags;
	uint64_t t0;
	uint64_t t_in, t_out;
};

/* The entry clock of a CG_CALL_NOCLOCK call, read now. */
static inline void cg_call_clock(struct cg_call *c)
{
	if (!c->t0 && cg_log_on(CG_L_INFO))
		c->t0 = cg_now_ns();
}

/* Bracket the real call: the hook's own time before and after it becomes
 * the record's pre_ns/post_ns. One clock read each, only when t0 was read. */
static inline void cg_call_mark_in(struct cg_call *c)
{
	if (c->t0)
		c->t_in = cg_now_ns();
}
static inline void cg_call_mark_out(struct cg_call *c)
{
	if (c->t0)
		c->t_out = cg_now_ns();
}

/* Make sure real_<hid> can be called: resolves the driver on first use
 * (loading libcuda.so.1 only if the process has not). Returns 0, or -1 when
 * this driver lacks the entry point (the hook then returns
 * CUDA_ERROR_NOT_FOUND, as interposition.md 2.5 prescribes). */
int cg_need_real(int hid) CG_HIDDEN;
/*
 * errno contract: the application sees errno exactly as the real call left
 * it, whatever the shim did before or after the call (a failed log write,
 * a failed allocation). A wrapper takes the application's value on entry
 * (CG_REAL declares cg_errno_in; a helper entered straight from a wrapper
 * uses CG_ERRNO_IN), hands it back to the real call (CG_FWD), and restores
 * the value the call left before every return after it.
 *
 * real_<name> is written once by cg_resolve_driver, before the release store
 * of cg_driver_resolved: the acquire load of that flag orders this thread's
 * reads of every real pointer after those writes (a plain mov on x86). A
 * thread that reads real_<name> without it races with the resolving thread
 * (C11 data race; TSan reports it).
 */
#define CG_ERRNO_IN const int cg_errno_in = errno
#ifdef CG_PROF
#define CG_FWD(call)                                                                                                   \
	({                                                                                                             \
		CG_PROF_MARK(CG_PROF_FWD0);                                                                            \
		errno = cg_errno_in;                                                                                   \
		__typeof__(call) cg_fwd_r_ = (call);                                                                   \
		CG_PROF_MARK(CG_PROF_FWD1);                                                                            \
		cg_fwd_r_;                                                                                             \
	})
#else
#define CG_FWD(call) (errno = cg_errno_in, (call))
#endif
/* A hand-written (CUSTOM) wrapper's real call when the hook works after it:
 * CG_FWD_OUT(rc, call) makes the call and keeps the errno it left in
 * cg_errno_out (CG_ERRNO_OUT in a helper the wrapper enters right after
 * the call); CG_RETURN(rc) gives that back and returns. Work that is
 * not bracketed by the wrapper's return (a record written from a cold
 * helper, a block in the middle) runs inside CG_KEEP_ERRNO(...), which
 * restores errno after it. tests/errno_check.py (test errno-contract)
 * fails on a hand-paired save in shim/hooks/ or getproc.c, a plain return
 * after a CG_FWD_OUT, or a return inside CG_KEEP_ERRNO. */
#define CG_ERRNO_OUT const int cg_errno_out = errno /* a helper entered right after the call */
#define CG_FWD_OUT(rc, call)                                                                                           \
	(rc) = CG_FWD(call);                                                                                           \
	CG_ERRNO_OUT
#define CG_RETURN(rc) return (CG_PROF_MARK(CG_PROF_RETURN), errno = cg_errno_out, (rc))
#define CG_KEEP_ERRNO(...)                                                                                             \
	do {                                                                                                           \
		const int cg_errno_kept_ = errno;                                                                      \
		__VA_ARGS__;                                                                                           \
		errno = cg_errno_kept_;                                                                                \
	} while (0)
#define CG_REAL(name)                                                                                                  \
	CG_ERRNO_IN;                                                                                                   \
	if (CG_UNLIKELY(!atomic_load_explicit(&cg_driver_resolved, memory_order_acquire) || !real_##name)) {           \
		int cg_missing_ = cg_need_real(HID_##name) < 0;                                                        \
		errno = cg_errno_in;                                                                                   \
		if (cg_missing_)                                                                                       \
			return CUDA_ERROR_NOT_FOUND;                                                                   \
	}

/* Whether the call record of c with result rc passes the log level,
 * counting a repeat's record it leaves out. */
int cg_call_on_count(const struct cg_call *c, CUresult rc) CG_HIDDEN;
/* The facts of the call record of c with result rc (its fields before the
 * per-API ones, struct ev_call of records.def), for the hook wing to write
 * (hooks/call.c: emit_call_open): via is the runtime name the call came
 * through, end the time the hook finished (the record's stamp and the end
 * of dur_ns/post_ns; 0: now, and no dur_ns/post_ns unless t0/t_out were
 * read). Returns the record's level, or -1 when it does not pass (a
 * repeat's record left out is counted). Consumes no via. */
struct ev_call;
int cg_call_facts(struct ev_call *f, const struct cg_call *c, CUresult rc, const char *via, uint64_t end) CG_HIDDEN;

/* Counters for the exit summary: cg_count_failure. */
#include "counters.h"

#endif
