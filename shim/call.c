/* shim/call.c -- shared parts of every hook: the real-pointer guard and the
 * call record's fields (cg_call_rec_at); a hook's own record step, which
 * also tells the model of a refused call, is hooks/call.c. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

#include "call.h"
#include "cgshim/record.h"

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

static void call_fields(struct cg_rec *r, const struct cg_call *c, CUresult rc, const char *via, uint64_t now)
{
	rec_word(r, "api", cg_routes[c->hid].name);
	if (via)
		rec_word(r, "via", via);
	rec_int(r, "rc", rc);
	if (rc != CUDA_SUCCESS)
		rec_word(r, "err", cg_result_name(rc));
	if (c->t0)
		rec_u64(r, "dur_ns", now - c->t0);
	if (c->t0 && c->t_in)
		rec_u64(r, "pre_ns", c->t_in - c->t0);
	if (c->t_out)
		rec_u64(r, "post_ns", now - c->t_out);
}

/* For the one place that then writes nothing (hooks/call.c). */
int cg_call_on_count(const struct cg_call *c, CUresult rc)
{
	if (cg_log_on(call_level(c, rc)))
		return 1;
	count_hidden(c, rc);
	return 0;
}

int cg_call_rec_at(struct cg_rec *r, const struct cg_call *c, CUresult rc, const char *via, uint64_t end)
{
	if (!cg_log_on(call_level(c, rc))) {
		count_hidden(c, rc);
		r->on = 0;
		return 0;
	}
	rec_begin_at(r, call_level(c, rc), CGSHIM_EV_CALL, end ? end : cg_now_ns());
	call_fields(r, c, rc, via, end);
	return 1;
}
