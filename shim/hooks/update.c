/*
 * shim/hooks/update.c -- cuGraphExecUpdate (both forms): the update rules
 * (CGS001, CGS002, CGS003, CGS012) before the call, the policy's
 * reinstantiate after a refusal, the model and the record after it.
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "../hot.h"
#include "hooks.h"

/* ======================================================================= */
/* update                                                                  */
/* ======================================================================= */

/* One update's way through the hook (hooks.h: the sequence). The fields
 * every update touches first, the verdict and the reason (~1.3 KiB, read
 * only after a predicted refusal) last: a cold stack costs a miss a line. */
struct upd_pred {
	/* 2. model lookup: the exec's summary and the new graph's (references) */
	struct cg_summary *old, *nu;
	uint64_t epoch; /* the model epoch before the analysis (the memo's) */
	/* 3. have_v: the rules' verdict before the call is in v (below) */
	int have_v;
	int rc, result, rule;
	/* quiet: the new graph is known to have the exec's topology (same
	 * summary, or equal topology hashes) and the same memory nodes, and
	 * nothing was written: a successful update then changes nothing the
	 * shim models and is counted, not recorded, below debug level. */
	int quiet;
	/* same: the exec already holds the new graph's summary, which has no
	 * memory node: a successful update changes only the count; alike:
	 * another summary of the exec's memo class (model.h), which nothing
	 * is said about: a successful update changes only the summary */
	int same, alike;
	/* 4. the policy's decision: abort before the call */
	int abort;
	/* what the analysis saw (model_exec_updated_alike); seen.x, before
	 * it: the exec of a memo hit (model_update_memo_hit) */
	struct cg_update_seen seen;
	/* 4, with a verdict only (update_policy_pre): count the verdict
	 * instead of writing it, write it into the thread's batch */
	int count_only, batched;
	char why[256]; /* set with a CGS001 verdict (rc GRAPH_EXEC_UPDATE_FAILURE) */
	/* 3. the verdict (CGS002 or CGS001; CGS003 and CGS012 come from the
	 * memory rule as their records are written) */
	struct cg_verdict v;
};

/* No prediction yet. Field by field: the verdict (~1 KiB) is only read
 * when have_v is set, why only after a predicted refusal, count_only and
 * batched only with a verdict; a memset of the whole was a fifth of an
 * identical update's cost. */
static void update_pred_init(struct upd_pred *p)
{
	p->old = p->nu = NULL;
	p->have_v = p->rc = p->rule = p->quiet = p->same = p->alike = p->abort = 0;
	p->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	p->epoch = 0;
}

/* Step 3 in full: the update rules' verdict (rules/update.c) on the
 * summaries in p. Out of line: a steady loop's update (one memo class,
 * update_predict) never needs it. */
static CG_COLD void update_predict_rules(struct upd_pred *p, CUgraphExec e, CUgraph g)
{
	const struct cg_model_view *mv = &cg_model_view_live;
	struct cg_update_pred up;
	struct cg_update_ev ev = {e, g, p->old, p->nu};
	p->why[0] = 0;
	if (rules_update_instantiated(&ev, mv, &p->v)) {
		p->have_v = 1;
	} else if (p->old && p->nu && rules_update_fail(&ev, mv, &up, &p->v)) {
		p->have_v = 1;
		p->result = up.result;
		memcpy(p->why, up.why, sizeof p->why);
	} else if (p->old && p->nu) {
		p->quiet = rules_update_same_memory(&ev);
		p->same = p->quiet && p->old == p->nu && !(p->nu->n_alloc + p->nu->n_free);
		p->alike = p->quiet && !p->same && model_update_alike(p->old, p->nu);
	}
	if (p->have_v) {
		p->rc = p->v.predicted_rc;
		p->rule = p->v.rule;
	}
}

/* Steps 2 and 3: the model's summaries of exec e and graph g, and the
 * update rules' verdict. Writes nothing. An update between two summaries
 * of one memo class (a serving loop's fresh capture with new scalar
 * arguments) is answered here, as update_predict_rules would answer it
 * (rules_update_none: no verdict, quiet; not the same summary; alike),
 * without its calls: in lockstep each is a cold code line or more. */
static CG_HOT void update_predict(struct upd_pred *p, CUgraphExec e, CUgraph g)
{
	update_pred_init(p);
	p->epoch = model_epoch_now();
	/* From the first update on, graphs are walked as their capture ends
	 * (see end_capture_common): an updating program's next update then
	 * finds its graph's summary ready. */
	if (!atomic_load_explicit(&cgh_updates_seen, memory_order_relaxed)) /* read-mostly: hot.h CG_HOT_DATA */
		atomic_store_explicit(&cgh_updates_seen, 1, memory_order_relaxed);
	model_update_summaries(e, g, &p->old, &p->nu, &p->seen);
	if (CG_LIKELY(p->old != p->nu && rules_update_none(p->old, p->nu) && model_update_alike(p->old, p->nu))) {
		p->quiet = p->alike = 1;
		return;
	}
	update_predict_rules(p, e, g);
}

/* The known-update memo (model.h): an update from a graph the exec
 * remembers, with nothing the analysis reads changed since it found that
 * update to say nothing, needs neither the analysis nor a record when it
 * succeeds, only the count and the summary's slot. Not in a live capture
 * (the capture rules look at every call there) nor at debug level (every
 * update is written). Returns the memo's slot + 1, or 0. */
static int update_known_same(CUgraphExec app, CUgraph g, struct cg_exec **x)
{
	return !atomic_load_explicit(&cg_live_captures, memory_order_relaxed) && !cg_log_on(CG_L_DEBUG) &&
	       model_update_memo_hit(app, g, x);
}

/* A successful update that writes no record: the runtime hook above it
 * (cudaGraphExecUpdate) writes none either. */
static void update_unrecorded(void)
{
	if (cg_tls.via)
		cg_tls.via_consumed = 1;
}

/* After the driver's answer to a known-same update: 1 when it succeeded
 * (counted, no record). A refusal after all gets the summaries for the
 * policy and the tail, as after a prediction of success, and 0. */
static CG_HOT int update_known_after(struct upd_pred *p, CUgraphExec app, CUgraph g, CUresult rc, int slot)
{
	if (rc == CUDA_SUCCESS) {
		model_exec_updated_known(p->seen.x, app, slot);
		update_unrecorded();
		return 1;
	}
	update_pred_init(p);
	model_update_summaries(app, g, &p->old, &p->nu, &p->seen);
	model_summary_free(p->old);
	p->old = NULL;
	return 0;
}

/* The entry clock (dur_ns, pre_ns): not read for an update that will
 * write no record if it succeeds (~50 ns on the H100 host, 2% of an
 * identical 64-node update); such an update's record, should it fail,
 * lacks dur_ns (docs/log-format.md). */
static void update_clock(struct cg_call *c, const struct upd_pred *p)
{
	if (!p->quiet || cg_log_on(CG_L_DEBUG))
		cg_call_clock(c);
}

/* Step 4, the policy before the call. A predicted refusal under
 * reinstantiate: on a handle already rewritten once, its CGS001 was
 * written in full then, so this one is counted (each rewrite record
 * carries its reason, why: a thrashing loop costs one record per rewrite,
 * not three); otherwise the refusal is averted behind the handle and the
 * warning goes out with the thread's batch, in order, instead of a write
 * of its own (update_post flushes the batch if the call fails after all).
 * Under abort, a predicted refusal stops the program before the call.
 * Asked only with a verdict: without one cg_decide answers neither rewrite
 * nor abort. */
static CG_COLD void update_policy_pre(struct upd_pred *p, CUgraphExec e)
{
	struct cg_decision d = cg_decide(CG_ASK_UPDATE, p->rc, p->rule == R_UPDATE_FAIL);
	p->count_only = p->batched = 0;
	if (d.rewrite) {
		p->count_only = cg_policy_rewritten_before(e);
		p->batched = 1;
	}
	p->abort = d.abort;
}

/* update_records_pre's verdict (CGS001, CGS002; rare): written, or
 * counted, as the policy decided. One frame below update_records_pre. */
static CG_COLD void update_records_verdict(struct upd_pred *p, CUgraphExec e, CUgraph g, const char *api)
{
	struct cg_summary *old = p->old, *nu = p->nu;
	if (p->count_only)
		cg_verdict_count(&p->v);
	else if (cg_verdict_write(&p->v, api, p->batched ? CG_VW_BATCHED : 0, SITE_SKIP + 2) &&
		 p->rule == R_UPDATE_FAIL) {
		cgh_emit_nodes_at(model_summary_graph(old), old, CG_L_INFO, "exec", e);
		cgh_emit_nodes_at(g, nu, CG_L_INFO, "graph", e);
	}
	CGH_FRAME_END();
}

/* The memory rules' findings (CGS012, CGS003) of an update whose memory
 * nodes differ (not quiet): their verdicts (5 KB) in a frame of their own,
 * not under the stack of every update's diff. One frame below
 * update_records_pre. */
static CG_COLD void update_records_memory(const struct upd_pred *p, CUgraphExec e, CUgraph g, const char *api)
{
	struct cg_update_ev ev = {e, g, p->old, p->nu};
	struct cg_verdict v[4];
	for (uint32_t pos = 0; pos != UINT32_MAX;) {
		int n = rules_update_memory(&ev, &cg_model_view_live, &pos, v, 4);
		for (int k = 0; k < n; k++)
			cg_verdict_write(&v[k], api, 0, SITE_SKIP + 2);
	}
	CGH_FRAME_END();
}

/* Step 5, before the call: the verdicts' records, as the policy decided
 * (rules.c writes them); for an update that will succeed, the nodes it
 * changes (nodes.c) and what it does to graph allocations (CGS012,
 * CGS003). Then the policy's abort. Not inlined: the call site is taken
 * a fixed number of frames up. */
static CG_HOT __attribute__((noinline)) void update_records_pre(struct upd_pred *p, CUgraphExec e, CUgraph g,
								const char *api)
{
	struct cg_summary *old = p->old, *nu = p->nu;
	if (CG_UNLIKELY(p->have_v)) {
		update_records_verdict(p, e, g, api);
	} else if (old && nu) {
		/* nothing to compare when the exec already holds this summary;
		 * nothing written below debug between summaries of one memo
		 * class (equal pointer fingerprints: nodes_update_diff) */
		if (old != nu && (!p->alike || cg_log_on(CG_L_DEBUG)))
			nodes_update_diff(e, g, old, nu, emit_update_diff);
		/* same memory nodes (quiet): neither CGS012 nor CGS003 can apply */
		if (!p->quiet)
			update_records_memory(p, e, g, api);
	}
	model_summary_free(old);
	p->old = NULL;
	if (CG_UNLIKELY(p->abort))
		raise(SIGABRT);
	CGH_FRAME_END();
}

/* Steps 2-5 of both forms before the call, unless the memo knows the
 * update (returns its slot + 1 then). Inlined: update_records_pre's site
 * is taken a fixed number of frames up from the wrapper. */
static inline __attribute__((always_inline)) int update_before(struct cg_call *c, struct upd_pred *p, CUgraphExec app,
							       CUgraph g, const char *api)
{
	int slot = update_known_same(app, g, &p->seen.x);
	if (slot)
		return slot;
	update_predict(p, app, g); /* 2, 3 */
	update_clock(c, p);
	if (CG_UNLIKELY(p->have_v)) /* 4: the policy acts on a verdict only */
		update_policy_pre(p, app);
	update_records_pre(p, app, g, api); /* 5 */
	return 0;
}

/* Shared tail of both update forms. rc/result/err nodes are the driver's
 * answer or, after a rewrite, success; result is -1 when the application
 * passed no place for it (the shim never substitutes its own). */
/* A prediction the driver disagreed with (issue 31): the mismatch names
 * the call (exec, graph, site: taken here, two frames below the
 * application: this function and the wrapper). A failure nothing
 * predicted also gets both sides' node records, as a CGS001 does, so that
 * `cgshim report --dot update:N` draws it. */
static CG_COLD void update_mismatch(const struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
				    CUresult rc, int result, CUgraphNode errn, const char *api)
{
	long long at = -1; /* the driver's error node among g's nodes (the picture marks it) */
	for (uint32_t i = 0; errn && nu && nu->nodes && i < nu->n_nodes && at < 0; i++)
		if (nu->nodes[i] == errn)
			at = i;
	cg_mismatch_at(api, p->rule, p->rc, rc, p->result, result, app, g, cg_site_here(SITE_SKIP + 1), at);
	if (rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && !p->rule && cg_log_on(CG_L_INFO)) {
		struct cg_summary *old = model_exec_summary(app);
		cgh_emit_nodes_at(model_summary_graph(old), old, CG_L_INFO, "exec", app);
		cgh_emit_nodes_at(g, nu, CG_L_INFO, "graph", app);
		model_summary_free(old);
	}
}

/* update_post's record of the call (a successful update that changes
 * nothing the shim models writes none below debug: out of line). */
static CG_COLD void update_record(struct cg_call *c, const struct upd_pred *p, CUgraphExec app, CUgraph g, CUresult rc,
				  int result, CUgraphNode errn, CUgraphNode fromn, int rewritten)
{
	struct cg_rec r;
	if (cg_call_rec(&r, c, rc)) {
		rec_hex(&r, "exec", (uintptr_t)app);
		rec_hex(&r, "graph", (uintptr_t)g);
		if (result >= 0) { /* -1: the application gave nowhere to put it */
			rec_int(&r, "result", result);
			rec_word(&r, "result_name", rules_update_result_name(result));
		}
		if (errn)
			rec_hex(&r, "error_node", (uintptr_t)errn);
		if (fromn)
			rec_hex(&r, "error_from_node", (uintptr_t)fromn);
		if (p->rule)
			rec_str(&r, "predicted_by", cg_rule_id(p->rule));
		if (rewritten)
			rec_bool(&r, "rewritten", 1);
		rec_end(&r);
	}
	if (rc != CUDA_SUCCESS)
		cg_log_flush_thread(); /* a program may stop on this error: its records first */
}

static __attribute__((always_inline)) inline void update_post(struct cg_call *c, struct upd_pred *p, CUgraphExec app,
							      CUgraph g, struct cg_summary *nu, CUresult rc, int result,
							      CUgraphNode errn, CUgraphNode fromn, int rewritten,
							      const char *api)
{
	if (!rewritten &&
	    (p->rc != (int)rc || (rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && result >= 0 && p->result != result)))
		update_mismatch(p, app, g, nu, rc, result, errn, api);
	if (rc == CUDA_SUCCESS) {
		cgh_ledger_exec_set(app, g, 0, nu, api);    /* the exec's nodes now point where g's do */
		if (rewritten || !p->alike)		    /* else model_exec_updated_alike below does */
			model_nccl_exec_from(app, g, 0, 0); /* and hold g's NCCL work, if any */
	}
	if (rc == CUDA_SUCCESS && !rewritten && p->same) {
		model_exec_updated_same(app);
		model_update_memo_set(app, g, nu, p->epoch);
		model_summary_free(nu);
	} else if (rc == CUDA_SUCCESS && !rewritten && p->alike)
		model_exec_updated_alike(app, g, nu, p->epoch, &p->seen);
	else if (rc == CUDA_SUCCESS && !rewritten)
		model_exec_updated(app, g, nu);
	else {
		if (!rewritten)
			model_exec_update_failed(app);
		model_summary_free(nu);
	}
	/* Counted like launches (the exit summary's updates): a successful
	 * update that changes nothing the shim models -- same topology, same
	 * memory nodes, nothing predicted, not rewritten -- writes no call
	 * record below debug level (docs/log-format.md). The record is most
	 * of the shim's cost of an update from an identical graph. */
	if (CG_LIKELY(p->quiet && rc == CUDA_SUCCESS && !rewritten && !cg_log_on(CG_L_DEBUG))) {
		update_unrecorded();
		return;
	}
	update_record(c, p, app, g, rc, result, errn, fromn, rewritten);
}

/* Policy after the driver's answer: under reinstantiate, a refusal with 910
 * is replaced by a re-instantiation. Only the driver's own refusal counts: a
 * prediction is never acted on unasked, since the driver may answer
 * something else (1 for a bad handle, success where the model is wrong).
 * The reason is "predicted" when the model saw it coming (why: what
 * differs), "failed" when it did not. Returns 1 when rewritten. */
static CG_COLD int update_policy_refused(const struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
					 CUresult rc)
{
	struct cg_rewrite_facts f;
	int pred = p->rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, done;
	memset(&f, 0, sizeof f);
	done = cg_policy_reinstantiate(app, g, nu, pred ? "predicted" : "failed", rc, pred ? p->why : NULL, &f);
	if (f.level)
		emit_rewrite(f.level, &f.rec);
	if (f.thrash)
		cg_warn("exec 0x%llx: %lld rewrites for %lld launches (%lld served from cached executables): the "
			"update fails nearly every step (thrashing); capture a graph whose topology does not change, "
			"or keep one exec per shape",
			(unsigned long long)(uintptr_t)app, f.rewrites, f.launches, f.reuses);
	return done;
}

static CG_HOT int update_policy_post(const struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
				     CUresult rc)
{
	if (CG_LIKELY(rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE))
		return 0;
	return update_policy_refused(p, app, g, nu, rc);
}

CG_HOT CUresult cgh_cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
					 CUgraphExecUpdateResultInfo *resultInfo)
{
	struct cg_call c;
	struct upd_pred p;
	struct cg_summary *nu;
	CUresult rc;
	int rewritten = 0, result = -1, known;
	CUgraphNode en = NULL, fn = NULL;
	CUgraphExec app = hGraphExec, real = cg_policy_exec(hGraphExec);
	CG_REAL(cuGraphExecUpdate_v2);
	if (!cg_call_begin(&c, HID_cuGraphExecUpdate_v2, CG_CALL_LIFE | CG_CALL_NOCLOCK))
		return CG_FWD(real_cuGraphExecUpdate_v2(real, hGraph, resultInfo));
	/* The application's pointer as given (TensorRT-LLM passes NULL, which
	 * the driver accepts): the result is read only from it. */
	known = update_before(&c, &p, app, hGraph, "cuGraphExecUpdate_v2");
	CG_FWD_OUT(rc, real_cuGraphExecUpdate_v2(real, hGraph, resultInfo));
	if (known && update_known_after(&p, app, hGraph, rc, known))
		CG_RETURN(rc);
	nu = p.nu;
	if (resultInfo) {
		result = (int)resultInfo->result;
		en = resultInfo->errorNode;
		fn = resultInfo->errorFromNode;
	}
	if (update_policy_post(&p, app, hGraph, nu, rc)) {
		rc = CUDA_SUCCESS;
		rewritten = 1;
	}
	if (rewritten) {
		result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
		en = fn = NULL;
		if (resultInfo)
			memset(resultInfo, 0, sizeof *resultInfo);
	}
	update_post(&c, &p, app, hGraph, nu, rc, result, en, fn, rewritten, "cuGraphExecUpdate_v2");
	CG_RETURN(rc);
}

CUresult cgh_cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
			       CUgraphExecUpdateResult *updateResult_out)
{
	struct cg_call c;
	struct upd_pred p;
	struct cg_summary *nu;
	CUgraphNode en = NULL;
	CUresult rc;
	int rewritten = 0, result = -1, known;
	CUgraphExec app = hGraphExec, real = cg_policy_exec(hGraphExec);
	CG_REAL(cuGraphExecUpdate);
	if (!cg_call_begin(&c, HID_cuGraphExecUpdate, CG_CALL_LIFE | CG_CALL_NOCLOCK))
		return CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
	if (!hErrorNode_out || !updateResult_out) {
		/* v1 requires both out-pointers: the driver answers
		 * INVALID_VALUE and updates nothing. Its answer, untouched. */
		cg_call_clock(&c);
		CG_FWD_OUT(rc, real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
		cg_call_end(&c, rc);
		CG_RETURN(rc);
	}
	known = update_before(&c, &p, app, hGraph, "cuGraphExecUpdate");
	CG_FWD_OUT(rc, real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
	if (known && update_known_after(&p, app, hGraph, rc, known))
		CG_RETURN(rc);
	nu = p.nu;
	if (rc == CUDA_SUCCESS || rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE) { /* written by the driver */
		en = *hErrorNode_out;
		result = (int)*updateResult_out;
	}
	if (update_policy_post(&p, app, hGraph, nu, rc)) {
		rc = CUDA_SUCCESS;
		rewritten = 1;
	}
	if (rewritten) {
		en = NULL;
		result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
		*hErrorNode_out = NULL;
		*updateResult_out = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	}
	update_post(&c, &p, app, hGraph, nu, rc, result, en, NULL, rewritten, "cuGraphExecUpdate");
	CG_RETURN(rc);
}
