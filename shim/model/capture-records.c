/*
 * shim/model/capture-records.c -- the records about a capture (begin, invalidated, abandoned, broken).
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

/* The deferred record of a capture's begin call (see model_capture_begin). */
void model_caprec_begin(const struct cap_snap *k)
{
	struct cg_rec r;
	if (!k->brec || !cg_call_rec_at(&r, &k->bcall, CUDA_SUCCESS, k->bvia, k->bend))
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

static void cap_fields(struct cg_rec *r, const struct cap_snap *k)
{
	rec_u64(r, "capture", k->id);
	rec_hex(r, "stream", (uintptr_t)k->stream);
	rec_word(r, "mode", model_capture_mode_name(k->mode));
	rec_int(r, "begin_tid", k->tid);
	rec_str(r, "begin_thread", k->tname);
	rec_site(r, "begin_site", k->site);
}

/* "invalidated": how the shim learned it (found_by: "call", a call that
 * failed with 900 against it; "capture_info", the application's query;
 * "shim_query", the shim's own capture-safe query). A capture whose end
 * fails without any of these is counted in captures_invalidated only. */
void model_caprec_invalidated(const struct cap_snap *k, const char *found_by, const char *api, uint32_t call_site,
			      const char *by_api, int by_tid, uint32_t by_site)
{
	struct cg_rec r;
	rec_begin(&r, CG_L_INFO, CGSHIM_EV_INVALIDATED);
	cap_fields(&r, k);
	rec_word(&r, "found_by", found_by);
	if (api)
		rec_word(&r, "api", api);
	rec_int(&r, "call_tid", cg_gettid());
	rec_bool(&r, "other_thread", k->tid != cg_gettid());
	rec_site(&r, "site", call_site);
	/* A refusal that raced the begin, now known to be the culprit. */
	if (by_api) {
		rec_word(&r, "by_api", by_api);
		rec_int(&r, "by_tid", by_tid);
		rec_site(&r, "by_site", by_site);
	}
	rec_end(&r);
}

/* "abandoned": a capture never ended, named at the first call it makes
 * fail after it was invalidated (reason "refused"), at a failed begin on
 * its stream ("begin_failed"), or at exit ("exit"). */
void model_caprec_abandoned(const struct cap_snap *k, const char *reason, const char *api, int rc, uint32_t call_site)
{
	struct cg_rec r;
	model_caprec_begin(k);
	rec_begin(&r, CG_L_WARN, CGSHIM_EV_ABANDONED);
	cap_fields(&r, k);
	rec_word(&r, "reason", reason);
	rec_u64(&r, "age_ns", cg_now_ns() - k->t0);
	rec_bool(&r, "invalidated", k->invalid);
	if (api) {
		rec_word(&r, "api", api);
		rec_int(&r, "rc", rc);
		rec_int(&r, "call_tid", cg_gettid());
		rec_site(&r, "site", call_site);
	}
	rec_str(&r, "msg",
		!strcmp(reason, "exit")
		    ? "capture still open at exit: it was begun and never ended"
		    : "capture begun long ago was never ended and still blocks this call: end it (or use "
		      "thread_local capture mode) after a failure inside the capture");
	rec_end(&r);
}

/* "broken": the end of a capture that failed (901, 904, ...) linked back to
 * the first call seen to break it (issue 14): its API, rule, thread id and
 * name and site, beside the capture's begin thread and site. Written by
 * the end-capture call's thread after the driver answered. A capture broken
 * by nothing the shim saw (an unhooked call) says so. */
void model_caprec_broken(const struct cap_snap *k, int rc)
{
	struct cg_rec r;
	char msg[768], bsite[200], csite[200];
	int n;
	cg_site_first(k->site, bsite, sizeof bsite);
	cg_site_first(k->br.site, csite, sizeof csite);
	rec_begin(&r, CG_L_ERROR, CGSHIM_EV_BROKEN);
	cap_fields(&r, k);
	rec_int(&r, "rc", rc);
	rec_str(&r, "err", cg_result_name(rc));
	rec_int(&r, "end_tid", cg_gettid());
	n = snprintf(
	    msg, sizeof msg, "capture %llu (%s mode, stream 0x%llx), begun%s%s on thread %d%s%s%s, ended with %d",
	    (unsigned long long)k->id, model_capture_mode_name(k->mode), (unsigned long long)(uintptr_t)k->stream,
	    bsite[0] ? " at " : "", bsite, k->tid, k->tname[0] ? " \"" : "", k->tname, k->tname[0] ? "\"" : "", rc);
	if (k->br.api) {
		rec_word(&r, "by_api", k->br.api);
		if (k->br.rule)
			rec_word(&r, "by_rule", k->br.rule);
		rec_int(&r, "by_rc", k->br.rc);
		rec_int(&r, "by_tid", k->br.tid);
		rec_str(&r, "by_thread", k->br.tname);
		rec_bool(&r, "by_other_thread", k->br.tid != k->tid);
		rec_site(&r, "by_site", k->br.site);
		if (n > 0 && (size_t)n < sizeof msg)
			snprintf(msg + n, sizeof msg - n, ": it was broken by %s on thread %d%s%s%s%s%s (%s%s%s)",
				 k->br.api, k->br.tid, k->br.tname[0] ? " \"" : "", k->br.tname,
				 k->br.tname[0] ? "\"" : "", csite[0] ? " at " : "", csite,
				 k->br.rule ? k->br.rule : "not predicted", k->br.rule ? ", named before the call" : "",
				 k->br.rc ? "" : "; the call itself succeeded");
	} else if (n > 0 && (size_t)n < sizeof msg) {
		snprintf(msg + n, sizeof msg - n,
			 ": no call the shim saw broke it (an unhooked call, or a lazy module load the driver made)");
	}
	rec_str(&r, "msg", msg);
	rec_end(&r);
}
