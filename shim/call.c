/* shim/call.c -- shared parts of every hook: the real-pointer guard and the
 * call record's facts (cg_call_facts); a hook's own record step, which
 * writes it (emit_call_open) and tells the model of a refused call, is
 * hooks/call.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

#include "call.h"
#include "emit.h"
#include "hot.h"

int cg_need_real(int hid)
{
	static _Atomic int warned[HID_COUNT];
	if (cg_resolve_driver() < 0) {
		/* Reached through an export before the process loaded the
		 * driver: load it the way the runtime would. */
		void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
		(void)h;
		if (cg_resolve_driver() < 0)
			return -1;
	}
	if (*cg_routes[hid].real)
		return 0;
	if (!atomic_exchange(&warned[hid], 1))
		cg_warn("this driver has no %s; returning CUDA_ERROR_NOT_FOUND", cg_routes[hid].name);
	return -1;
}

static int call_level(const struct cg_call *c, CUresult rc)
{
	if (rc != CUDA_SUCCESS)
		return CG_L_INFO;
	if (c->flags & CG_CALL_LIFE)
		return (c->flags & CG_CALL_REPEAT) ? CG_L_DEBUG : CG_L_INFO;
	return CG_L_TRACE;
}

/* A repeat's record left out where it would have been written. */
static void count_hidden(const struct cg_call *c, CUresult rc)
{
	if (rc == CUDA_SUCCESS && (c->flags & CG_CALL_REPEAT) && (c->flags & CG_CALL_LIFE) && cg_log_on(CG_L_INFO))
		cg_count_condensed();
}

/* For the one place that then writes nothing (hooks/call.c). */
CG_HOT int cg_call_on_count(const struct cg_call *c, CUresult rc)
{
	if (cg_log_on(call_level(c, rc)))
		return 1;
	count_hidden(c, rc);
	return 0;
}

CG_HOT int cg_call_facts(struct ev_call *f, const struct cg_call *c, CUresult rc, const char *via, uint64_t end)
{
	int level = call_level(c, rc);
	if (!cg_log_on(level)) {
		count_hidden(c, rc);
		return -1;
	}
	*f = (struct ev_call){.at = end ? end : cg_now_ns(),
			      .api = cg_routes[c->hid].name,
			      .via = via,
			      .rc = rc,
			      .has_rc = 1,
			      .err = rc != CUDA_SUCCESS ? cg_result_name(rc) : NULL,
			      .dur_ns = end - c->t0,
			      .has_dur_ns = c->t0 != 0,
			      .pre_ns = c->t_in - c->t0,
			      .has_pre_ns = c->t0 && c->t_in,
			      .post_ns = end - c->t_out,
			      .has_post_ns = c->t_out != 0};
	return level;
}
