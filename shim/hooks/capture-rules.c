/*
 * shim/hooks/capture-rules.c -- the hooks' side of the capture rules (the
 * verdicts themselves: rules/capture.c): each is called by a hook before
 * it forwards, looks the captures up in the model (no driver call, so
 * nothing here can itself break a capture), asks the pure rule, and when
 * the call will break a capture takes the call's site, hands the verdict
 * to rules.c (cg_verdict_write_capture: the capture notes the call as its
 * breaker, its failed end links back here; then the record) and returns 1.
 *
 *   CGS013  cuEventQuery/cuEventSynchronize of an event recorded in a live
 *           capture: 907, the capture invalidated (every mode, any thread)
 *   CGS014  the legacy stream (NULL outside _ptsz, CU_STREAM_LEGACY; a
 *           synchronous copy or memset outside _ptds) used while a
 *           blocking stream captures: 906, invalidated
 *   CGS015  a stream of one capture waits on an event of another: 902,
 *           both invalidated
 *   CGS016  a global or thread-local capture ended from another thread: 908
 *   CGS021  a capture ended on a stream that is not capturing: 401
 *   CGS022  a capture ended on a stream that joined another one's: 903
 *   CGS023  a capture begun on a stream already capturing: 401
 */
#include <stdio.h>
#include <stdatomic.h>

#include "../call.h"
#include "../hot.h"
#include "../model.h"
#include "../rules.h"
#include "../rules/verdict.h"
#include "../site.h"

#define CAPRULE_SKIP 2 /* this function and the hook */

/* The first call that breaks a capture is its link (the "broken" record);
 * an end from the wrong thread (908) ends the capture too (measured), so
 * it is one. A repeat verdict (counted only) notes nothing. */
static void caprule_breaker(const struct cg_verdict *v, const char *api, uint64_t capture, uint32_t site)
{
	if (!v->repeat)
		model_capture_breaker(capture, api, cg_rule_id(v->rule), v->predicted_rc < 0 ? 0 : v->predicted_rc,
				      site);
}

/* The site is taken here, one frame below the cg_caprule_* entry, and goes
 * both into the record and into the capture's breaker note. */
static __attribute__((noinline)) void caprule_write(const struct cg_verdict *v, const char *api, uint64_t capture)
{
	uint32_t site = cg_site_here(CAPRULE_SKIP + 1);
	caprule_breaker(v, api, capture, site);
	cg_verdict_write_capture(v, api, capture, site);
}

int cg_caprule_event(const char *api, CUevent ev)
{
	struct cg_capture_view cv;
	struct cg_verdict v;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed) || !model_capture_of_event(ev, &cv))
		return 0;
	if (!rules_capture_event(api, &cv, &v))
		return 0;
	caprule_write(&v, api, cv.id);
	return 1;
}

int cg_caprule_legacy(const char *api, CUstream s, int ptsz, const char *what)
{
	struct cg_capture_view cv;
	struct cg_verdict v;
	if (!rules_capture_is_legacy(s, ptsz) || !atomic_load_explicit(&cg_live_captures, memory_order_relaxed) ||
	    !model_capture_blocking(&cv))
		return 0;
	if (!rules_capture_legacy(api, s, ptsz, &cv, what, &v))
		return 0;
	caprule_write(&v, api, cv.id);
	return 1;
}

int cg_caprule_merge(const char *api, uint64_t capture, CUevent ev)
{
	struct cg_capture_view cv, mine;
	struct cg_verdict v;
	if (!capture || !model_capture_of_event(ev, &cv) || cv.id == capture || !model_capture_find(capture, &mine))
		return 0;
	if (!rules_capture_merge(api, capture, &cv, &mine, &v))
		return 0;
	caprule_write(&v, api, mine.id);
	/* both captures are invalidated: the other one links here too */
	model_capture_breaker(cv.id, api, cg_rule_id(R_CAPTURE_MERGE), CUDA_ERROR_STREAM_CAPTURE_MERGE,
			      cg_site_here(CAPRULE_SKIP));
	return 1;
}

CG_HOT int cg_caprule_end_thread(const char *api, uint64_t capture, CUstream s, const struct cg_capture_view *cv)
{
	struct cg_verdict v;
	if (!capture || !cv)
		return 0;
	if (!rules_capture_end_thread(api, capture, s, cv, cg_gettid(), &v))
		return 0;
	caprule_write(&v, api, cv->id);
	return 1;
}

int cg_caprule_end_none(const char *api, CUstream s)
{
	struct cg_verdict v;
	if (!rules_capture_end_not_capturing(api, s, 1, &v))
		return 0;
	cg_verdict_write(&v, api, 0, CAPRULE_SKIP); /* the site as caprule_write takes it */
	return 1;
}

/* A stream handle that names one stream whatever the thread: not the
 * legacy or per-thread stream (their handles have several spellings). */
static int plain_stream(CUstream s)
{
	return s && s != CU_STREAM_LEGACY && s != CU_STREAM_PER_THREAD;
}

CG_HOT int cg_caprule_end_unmatched(const char *api, uint64_t capture, CUstream s, const struct cg_capture_view *cv)
{
	struct cg_verdict v;
	if (!capture || !cv || !plain_stream(s) || !plain_stream(cv->stream))
		return 0;
	if (!rules_capture_end_unmatched(api, s, cv, &v))
		return 0;
	caprule_write(&v, api, cv->id); /* the capture's breaker: its origin's end links here */
	return 1;
}

int cg_caprule_begin_capturing(const char *api, uint64_t capture, CUstream s)
{
	struct cg_capture_view cv;
	struct cg_verdict v;
	if (!capture || !model_capture_find(capture, &cv) || !rules_capture_begin_capturing(api, s, &cv, &v))
		return 0;
	cg_verdict_write(&v, api, 0, CAPRULE_SKIP); /* the site as caprule_write takes it (a repeat: counted) */
	return cv.broken ? 2 : 1;
}

/* CGS007, a stream query or synchronize that breaks capture cv: written in
 * full (these paths name every refusal, even of a capture named
 * abandoned). The site is taken here, two frames below the hook. */
__attribute__((noinline)) void cg_rule_unsafe_violation(const char *api, const struct cg_capture_view *cv,
							const char *what)
{
	struct cg_verdict v;
	struct cg_capture_view c = *cv;
	uint32_t site = cg_site_here(3);
	c.named = 0;
	if (rules_capture_unsafe(api, what, &c, cg_gettid(), &v)) {
		caprule_breaker(&v, api, c.id, site);
		cg_verdict_write_capture(&v, api, c.id, site);
	}
}

CG_HOT __attribute__((noinline)) int cg_rule_capture_unsafe(const char *api, const char *what)
{
	struct cg_capture_view cv;
	struct cg_verdict v;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	if (!model_capture_conflict(model_thread_mode(), &cv))
		return 0;
	/* A capture named abandoned: the verdict is a repeat, counted (no
	 * site taken, no record). */
	if (cv.named) {
		if (rules_capture_unsafe(api, what, &cv, 0, &v))
			cg_verdict_count(&v);
	} else {
		cg_rule_unsafe_violation(api, &cv, what);
	}
	return 1;
}

/* cuCtxSynchronize (both forms): the device's streams include the
 * capturing ones, so the driver refuses it (900, CGS007) while any capture
 * is live, whatever the modes (capture-map.md), unlike the rest of the
 * unsafe class. */
int cg_caprule_device_sync(const char *api)
{
	struct cg_capture_view cv;
	struct cg_verdict v;
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed) || !model_capture_any(&cv))
		return 0;
	if (cv.named) { /* named abandoned already */
		if (rules_capture_unsafe(api, NULL, &cv, 0, &v))
			cg_verdict_count(&v);
	} else {
		cg_rule_unsafe_violation(api, &cv, "synchronizes the device, whose streams include the capturing one");
	}
	return 1;
}

/* A call no rule predicted failed with a capture error (900-908) against
 * capture: it is the first failing call seen, the link the capture's failed
 * end points back to (unless a named call came first). Only on failure. */
void cg_caprule_failed(const char *api, uint64_t capture, int rc)
{
	if (capture && rc >= CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED && rc <= CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD)
		model_capture_breaker(capture, api, NULL, rc, cg_site_here(CAPRULE_SKIP));
}

void cg_caprule_after(const char *api, int rule, int predicted_rc, int rc)
{
	if (rc != predicted_rc)
		cg_mismatch(api, rule, predicted_rc, rc, -1, -1);
}
