/* shim/call.c -- shared parts of every hook: real-pointer guard, call records. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>

#include "call.h"
#include "cgshim/record.h"
#include "model.h"

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
	if (rc != CUDA_SUCCESS || (c->flags & CG_CALL_LIFE))
		return CG_L_INFO;
	return CG_L_TRACE;
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

int cg_call_rec(struct cg_rec *r, struct cg_call *c, CUresult rc)
{
	int level = call_level(c, rc);
	if (cg_tls.via) {
		cg_tls.via_consumed = 1;
		cg_tls.via_rc = rc;
	}
	if (rc != CUDA_SUCCESS) {
		cg_count_failure(c->hid, rc);
		/* 900: the call collided with a live capture; the model names
		 * the capture it invalidated, or one abandoned long before. */
		if (rc == CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED)
			model_capture_refused(cg_routes[c->hid].name);
	}
	if (!cg_log_on(level)) {
		r->on = 0;
		return 0;
	}
	uint64_t now = c->t0 ? cg_now_ns() : 0; /* one clock read: the record's stamp and the end of dur_ns */
	rec_begin_at(r, level, CGSHIM_EV_CALL, now);
	call_fields(r, c, rc, cg_tls.via, now);
	return 1;
}

int cg_call_rec_at(struct cg_rec *r, const struct cg_call *c, CUresult rc, const char *via, uint64_t end)
{
	if (!cg_log_on(call_level(c, rc))) {
		r->on = 0;
		return 0;
	}
	rec_begin_at(r, call_level(c, rc), CGSHIM_EV_CALL, end ? end : cg_now_ns());
	call_fields(r, c, rc, via, end);
	return 1;
}

void cg_call_end(struct cg_call *c, CUresult rc)
{
	struct cg_rec r;
	if (cg_call_rec(&r, c, rc))
		rec_end(&r);
}
