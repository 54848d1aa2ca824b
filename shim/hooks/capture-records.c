/*
 * shim/hooks/capture-records.c -- the records about a capture (its begin's
 * deferred call record, capture, invalidated, abandoned, broken), written
 * from the facts the model hands over (struct cap_snap, model.h:
 * model_capture_records). The model writes none itself.
 */
#include "../hot.h"
#include "hooks.h"

/* The deferred record of a capture's begin call (see model_capture_begin),
 * written: its 4 KB buffer in this frame (caprec_begin). */
static __attribute__((noinline)) void caprec_begin_write(const struct cap_snap *k)
{
	struct cg_rec r;
	if (!cg_call_rec_at(&r, &k->bcall, CUDA_SUCCESS, k->bvia, k->bend))
		return;
	rec_hex(&r, "stream", (uintptr_t)k->stream);
	rec_word(&r, "mode", model_capture_mode_name(k->mode));
	rec_u64(&r, "capture", k->id);
	rec_hex(&r, "graph", (uintptr_t)k->graph);
	rec_site(&r, "site", k->site);
	if (k->tid != cg_gettid())
		rec_int(&r, "call_tid", k->tid);
	rec_end(&r);
}

/* A repeat's hidden record only counted (cg_call_on_count), below no
 * record buffer: issue 36, each call under a 4 KB frame touches stack
 * lines of its own. */
static CG_HOT void caprec_begin(const struct cap_snap *k)
{
	if (k->brec && cg_call_on_count(&k->bcall, CUDA_SUCCESS))
		caprec_begin_write(k);
}

/* The same split for an end (model_capture_records): the count first, the
 * capture's facts taken only for a record written. */
static CG_HOT int caprec_begin_shown(const struct cg_call *bcall)
{
	return cg_call_on_count(bcall, CUDA_SUCCESS);
}

/* The capture's own fields, common to invalidated, abandoned and broken. */
#define CAP_FACTS(k)                                                                                                   \
	.capture = (k)->id, .stream = (uintptr_t)(k)->stream, .mode = model_capture_mode_name((k)->mode),              \
	.begin_tid = (k)->tid, .begin_thread = (k)->tname, .begin_site = (k)->site

/* "invalidated": how the shim learned it (found_by: "call", a call that
 * failed with 900 against it; "capture_info", the application's query;
 * "shim_query", the shim's own capture-safe query). A capture whose end
 * fails without any of these is counted in captures_invalidated only. A
 * refusal that raced the begin, now known to be the culprit: by_*. */
static void caprec_invalidated(const struct cap_snap *k, const char *found_by, const char *api, uint32_t call_site,
			       const char *by_api, int by_tid, uint32_t by_site)
{
	emit_invalidated(CG_L_INFO,
			 &(struct ev_invalidated){CAP_FACTS(k), .found_by = found_by, .api = api,
						  .call_tid = cg_gettid(), .other_thread = k->tid != cg_gettid(),
						  .site = call_site, .by_api = by_api, .by_tid = by_tid,
						  .has_by_tid = by_api != NULL, .by_site = by_api ? by_site : 0});
}

/* "abandoned": a capture never ended, named at the first call it makes
 * fail after it was invalidated (reason "refused"), at a failed begin on
 * its stream ("begin_failed"), or at exit ("exit"). */
static void caprec_abandoned(const struct cap_snap *k, const char *reason, const char *api, int rc, uint32_t call_site)
{
	caprec_begin(k);
	emit_abandoned(CG_L_WARN, &(struct ev_abandoned){
				      CAP_FACTS(k), .reason = reason, .age_ns = cg_now_ns() - k->t0,
				      .invalidated = k->invalid, .api = api, .rc = rc, .has_rc = api != NULL,
				      .call_tid = cg_gettid(), .has_call_tid = api != NULL, .site = api ? call_site : 0,
				      .msg = !strcmp(reason, "exit")
						 ? "capture still open at exit: it was begun and never ended"
						 : "capture begun long ago was never ended and still blocks this call: "
						   "end it (or use thread_local capture mode) after a failure inside "
						   "the capture"});
}

/* "broken": the end of a capture that failed (901, 904, ...) linked back to
 * the first call seen to break it (issue 14): its API, rule, thread id and
 * name and site, beside the capture's begin thread and site. Written by
 * the end-capture call's thread after the driver answered. A capture broken
 * by nothing the shim saw (an unhooked call) says so. */
static void caprec_broken(const struct cap_snap *k, int rc)
{
	char msg[768], bsite[200], csite[200];
	int n, by = k->br.api != NULL;
	cg_site_first(k->site, bsite, sizeof bsite);
	cg_site_first(k->br.site, csite, sizeof csite);
	n = snprintf(
	    msg, sizeof msg, "capture %llu (%s mode, stream 0x%llx), begun%s%s on thread %d%s%s%s, ended with %d",
	    (unsigned long long)k->id, model_capture_mode_name(k->mode), (unsigned long long)(uintptr_t)k->stream,
	    bsite[0] ? " at " : "", bsite, k->tid, k->tname[0] ? " \"" : "", k->tname, k->tname[0] ? "\"" : "", rc);
	if (by && n > 0 && (size_t)n < sizeof msg)
		snprintf(msg + n, sizeof msg - n, ": it was broken by %s on thread %d%s%s%s%s%s (%s%s%s)", k->br.api,
			 k->br.tid, k->br.tname[0] ? " \"" : "", k->br.tname, k->br.tname[0] ? "\"" : "",
			 csite[0] ? " at " : "", csite, k->br.rule ? k->br.rule : "not predicted",
			 k->br.rule ? ", named before the call" : "", k->br.rc ? "" : "; the call itself succeeded");
	else if (n > 0 && (size_t)n < sizeof msg)
		snprintf(msg + n, sizeof msg - n,
			 ": no call the shim saw broke it (an unhooked call, or a lazy module load the driver made)");
	emit_broken(CG_L_ERROR,
		    &(struct ev_broken){CAP_FACTS(k), .rc = rc, .err = cg_result_name(rc), .end_tid = cg_gettid(),
					.by_api = k->br.api, .by_rule = by ? k->br.rule : NULL, .by_rc = k->br.rc,
					.has_by_rc = by, .by_tid = k->br.tid, .has_by_tid = by,
					.by_thread = by ? k->br.tname : NULL, .by_other_thread = k->br.tid != k->tid,
					.has_by_other_thread = by, .by_site = by ? k->br.site : 0, .msg = msg});
}

/* "capture": the ledger of an ended capture; a steady cycle's (repeat)
 * is left to debug. */
static CG_HOT void caprec_ended(const struct ev_capture *f, int repeat)
{
	int level = cg_log_life_level(repeat);
	if (cg_log_on(level)) /* else emit_capture writes nothing, from under its 4 KB buffer */
		emit_capture(level, f);
}

static const struct model_capture_records caprec_writer = {
    .begin_shown = caprec_begin_shown,
    .begin = caprec_begin_write,
    .ended = caprec_ended,
    .invalidated = caprec_invalidated,
    .abandoned = caprec_abandoned,
    .broken = caprec_broken,
};

void cgh_capture_records_init(void)
{
	model_capture_records_set(&caprec_writer);
}
