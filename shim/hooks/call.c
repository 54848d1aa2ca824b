/* shim/hooks/call.c -- a hook's record step: the call record (call.c
 * gives its facts, emit_call_open writes them), and what a failed call tells the rest of the shim
 * (the failure counters; a 900 tells the model, which names the capture the
 * call collided with). Here, above the model, so the low-level call.c never
 * calls up into it (shim/layers.txt). */
#include "../hot.h"
#include "hooks.h"

CG_HOT int cg_call_rec_wanted(struct cg_call *c, CUresult rc)
{
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
	return cg_call_on_count(c, rc);
}

CG_HOT int cg_call_rec_open(struct cg_rec *r, struct cg_call *c, CUresult rc)
{
	/* one clock read: the record's stamp and the end of dur_ns */
	return cg_call_rec_at(r, c, rc, cg_tls.via, c->t0 ? cg_now_ns() : 0);
}

CG_HOT int cg_call_rec(struct cg_rec *r, struct cg_call *c, CUresult rc)
{
	if (!cg_call_rec_wanted(c, rc)) {
		r->on = 0;
		return 0;
	}
	return cg_call_rec_open(r, c, rc);
}

CG_HOT int cg_call_rec_at(struct cg_rec *r, const struct cg_call *c, CUresult rc, const char *via, uint64_t end)
{
	struct ev_call f;
	int level = cg_call_facts(&f, c, rc, via, end);
	if (level < 0) {
		r->on = 0;
		return 0;
	}
	return emit_call_open(r, level, &f);
}

void cg_call_end(struct cg_call *c, CUresult rc)
{
	struct cg_rec r;
	if (cg_call_rec(&r, c, rc))
		rec_end(&r);
	CG_PROF_MARK(CG_PROF_CALL_END);
}
