/*
 * shim/call.h -- the per-call context every hook uses.
 *
 * cg_call_begin() decides in a few loads whether the shim acts on this call:
 * not when the shim is not READY, not for the shim's own driver calls
 * (cg_tls.in_shim). When it returns 0 the hook must forward untouched.
 * cg_call_end() writes the "call" record: every call at trace level,
 * lifecycle calls (CG_CALL_LIFE) at info, and any failing call at info.
 */
#ifndef CGSHIM_CALL_H
#define CGSHIM_CALL_H

#include "log.h"
#include "resolve.h"

#define CG_CALL_LIFE 1 /* lifecycle call: logged at info */

struct cg_call {
	int hid;
	int flags;
	uint64_t t0;
};

static inline int cg_call_begin(struct cg_call *c, int hid, int flags)
{
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (CG_UNLIKELY(st != CG_READY)) {
		if (st != CG_SETUP)
			return 0;
		cg_ensure_init();
		if (!cg_ready())
			return 0;
	}
	if (CG_UNLIKELY(cg_tls.in_shim))
		return 0;
	c->hid = hid;
	c->flags = flags;
	c->t0 = cg_log_on(CG_L_INFO) ? cg_now_ns() : 0;
	return 1;
}

/* Make sure real_<hid> can be called: resolves the driver on first use
 * (loading libcuda.so.1 only if the process has not). Returns 0, or -1 when
 * this driver lacks the entry point (the hook then returns
 * CUDA_ERROR_NOT_FOUND, as interposition.md 2.5 prescribes). */
int cg_need_real(int hid) CG_HIDDEN;
/* real_<name> is written once by cg_resolve_driver, before the release store
 * of cg_driver_resolved: the acquire load of that flag orders this thread's
 * reads of every real pointer after those writes (a plain mov on x86). A
 * thread that reads real_<name> without it races with the resolving thread
 * (C11 data race; TSan reports it). */
#define CG_REAL(name)                                                                              \
	do {                                                                                       \
		if (CG_UNLIKELY(!atomic_load_explicit(&cg_driver_resolved, memory_order_acquire) ||        \
				!real_##name) &&                                                   \
		    cg_need_real(HID_##name) < 0)                                                  \
			return CUDA_ERROR_NOT_FOUND;                                               \
	} while (0)

/* Begin the "call" record for c if its level passes; the caller adds its
 * key arguments and calls rec_end(). Returns r->on. */
int cg_call_rec(struct cg_rec *r, struct cg_call *c, CUresult rc) CG_HIDDEN;

/* Record a call with no extra arguments. */
void cg_call_end(struct cg_call *c, CUresult rc) CG_HIDDEN;

/* Counters for the exit summary. */
void cg_count_failure(int hid, CUresult rc) CG_HIDDEN;

#endif
