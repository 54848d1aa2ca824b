/*
 * shim/hooks/update.c -- cuGraphExecUpdate (both forms): the update rules
 * (CGS001, CGS002, CGS003, CGS012) before the call, the policy's
 * reinstantiate after a refusal, the model and the record after it.
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "hooks.h"

/* ======================================================================= */
/* update                                                                  */
/* ======================================================================= */

struct upd_pred {
	int rc, result, rule;
	/* quiet: the new graph is known to have the exec's topology (same
	 * summary, or equal topology hashes) and the same memory nodes, and
	 * nothing was written: a successful update then changes nothing the
	 * shim models and is counted, not recorded, below debug level. */
	int quiet;
	uint32_t err_index, from_index;
	CUgraphNode err_node, from_node;
	char why[256];
};

/* Predict cuGraphExecUpdate from the exec's summary (kept since
 * instantiate) and the new graph's summary: the update rules' verdicts
 * (rules/update.c), written before the call. CGS001 under reinstantiate
 * on a handle rewritten before is counted, its reason already written. */
static void update_predict(struct upd_pred *p, CUgraphExec e, CUgraph g, struct cg_summary **newsum,
			   const char *api)
{
	struct cg_summary *old, *nu;
	struct cg_verdict v[4];
	struct cg_update_pred up;
	const struct cg_model_view *mv = &cg_model_view_live;
	/* From the first update on, graphs are walked as their capture ends
	 * (see end_capture_common): an updating program's next update then
	 * finds its graph's summary ready. */
	atomic_store_explicit(&cgh_updates_seen, 1, memory_order_relaxed);
	model_update_summaries(e, g, &old, &nu);
	struct cg_update_ev ev = {e, g, old, nu};
	memset(p, 0, sizeof *p);
	p->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	*newsum = nu;

	if (rules_update_instantiated(&ev, mv, &v[0])) {
		p->rc = v[0].predicted_rc;
		p->rule = v[0].rule;
		cg_verdict_write(&v[0], api, 0, SITE_SKIP + 1);
		goto out;
	}
	if (!old || !nu)
		goto out;
	if (rules_update_fail(&ev, mv, &up, &v[0])) {
		p->rc = v[0].predicted_rc;
		p->rule = v[0].rule;
		p->result = up.result;
		p->err_index = up.err_index;
		p->err_node = up.err_node;
		p->from_node = up.from_node;
		memcpy(p->why, up.why, sizeof p->why);
		/* Under reinstantiate, a handle already rewritten once had its
		 * CGS001 written in full then: later ones are counted, and each
		 * rewrite record carries its reason (why). A thrashing loop
		 * then costs one record per rewrite, not three. Otherwise the
		 * refusal is averted behind the handle: the warning goes out
		 * with the thread's batch, in order, instead of a write of its
		 * own (update_post flushes the batch if the call fails after
		 * all). */
		if (cg_cfg.on_update_failure == CG_UPD_REINSTANTIATE && cg_policy_rewritten_before(e))
			cg_verdict_count(&v[0]);
		else if (cg_verdict_write(&v[0], api,
					  cg_cfg.on_update_failure == CG_UPD_REINSTANTIATE ? CG_VW_BATCHED : 0,
					  SITE_SKIP + 1)) {
			cgh_emit_nodes_at(model_summary_graph(old), old, CG_L_INFO, "exec", e);
			cgh_emit_nodes_at(g, nu, CG_L_INFO, "graph", e);
		}
		goto out;
	}
	/* The update will succeed: say which nodes it changes (nodes.c; nothing
	 * to compare when the exec already holds this summary), then what it
	 * does to graph allocations. */
	if (old != nu)
		nodes_update_diff(e, g, old, nu);
	p->quiet = rules_update_same_memory(&ev);
	if (p->quiet)
		goto out; /* same memory nodes: neither CGS012 nor CGS003 can apply */
	for (uint32_t pos = 0; pos != UINT32_MAX;) {
		int n = rules_update_memory(&ev, mv, &pos, v, 4);
		for (int k = 0; k < n; k++)
			cg_verdict_write(&v[k], api, 0, SITE_SKIP + 1);
	}
out:
	model_summary_free(old);
}

/* Shared tail of both update forms. rc/result/err nodes are the driver's
 * answer or, after a rewrite, success; result is -1 when the application
 * passed no place for it (the shim never substitutes its own). */
static void update_post(struct cg_call *c, struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
			CUresult rc, int result, CUgraphNode errn, CUgraphNode fromn, int rewritten, const char *api)
{
	struct cg_rec r;
	if (!rewritten && (p->rc != (int)rc || (rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && result >= 0 &&
						 p->result != result)))
		cg_mismatch(api, p->rule, p->rc, rc, p->result, result);
	if (rc == CUDA_SUCCESS)
		ledger_exec_set(app, g, 0, nu, api); /* the exec's nodes now point where g's do */
	if (rc == CUDA_SUCCESS && !rewritten)
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
	if (p->quiet && rc == CUDA_SUCCESS && !rewritten && !cg_log_on(CG_L_DEBUG)) {
		if (cg_tls.via)
			cg_tls.via_consumed = 1; /* the runtime hook writes nothing either */
		return;
	}
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

/* Policy before the call: abort on a predicted refusal. */
static void update_policy_pre(const struct upd_pred *p)
{
	if (p->rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE && cg_cfg.on_update_failure == CG_UPD_ABORT)
		raise(SIGABRT);
}

/* Policy after the driver's answer: under reinstantiate, a refusal with 910
 * is replaced by a re-instantiation. Only the driver's own refusal counts: a
 * prediction is never acted on unasked, since the driver may answer
 * something else (1 for a bad handle, success where the model is wrong).
 * The reason is "predicted" when the model saw it coming (why: what
 * differs), "failed" when it did not. Returns 1 when rewritten. */
static int update_policy_post(const struct upd_pred *p, CUgraphExec app, CUgraph g, struct cg_summary *nu,
			      CUresult rc)
{
	int pred = p->rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	if (rc != CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
		return 0;
	return cg_policy_reinstantiate(app, g, nu, pred ? "predicted" : "failed", rc, pred ? p->why : NULL);
}

CUresult cgh_cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphExecUpdateResultInfo *resultInfo)
{
	struct cg_call c;
	struct upd_pred p;
	struct cg_summary *nu;
	CUresult rc;
	int rewritten = 0, result = -1, saved;
	CUgraphNode en = NULL, fn = NULL;
	CUgraphExec app = hGraphExec, real = cg_policy_exec(hGraphExec);
	CG_REAL(cuGraphExecUpdate_v2);
	if (!cg_call_begin(&c, HID_cuGraphExecUpdate_v2, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphExecUpdate_v2(real, hGraph, resultInfo));
	update_predict(&p, app, hGraph, &nu, "cuGraphExecUpdate_v2");
	update_policy_pre(&p);
	/* The application's pointer as given (TensorRT-LLM passes NULL, which
	 * the driver accepts): the result is read only from it. */
	rc = CG_FWD(real_cuGraphExecUpdate_v2(real, hGraph, resultInfo));
	saved = errno;
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
	errno = saved;
	return rc;
}

CUresult cgh_cuGraphExecUpdate(CUgraphExec hGraphExec, CUgraph hGraph, CUgraphNode *hErrorNode_out,
			       CUgraphExecUpdateResult *updateResult_out)
{
	struct cg_call c;
	struct upd_pred p;
	struct cg_summary *nu;
	CUgraphNode en = NULL;
	CUresult rc;
	int rewritten = 0, result = -1, saved;
	CUgraphExec app = hGraphExec, real = cg_policy_exec(hGraphExec);
	CG_REAL(cuGraphExecUpdate);
	if (!cg_call_begin(&c, HID_cuGraphExecUpdate, CG_CALL_LIFE))
		return CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
	if (!hErrorNode_out || !updateResult_out) {
		/* v1 requires both out-pointers: the driver answers
		 * INVALID_VALUE and updates nothing. Its answer, untouched. */
		rc = CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
		saved = errno;
		cg_call_end(&c, rc);
		errno = saved;
		return rc;
	}
	update_predict(&p, app, hGraph, &nu, "cuGraphExecUpdate");
	update_policy_pre(&p);
	rc = CG_FWD(real_cuGraphExecUpdate(real, hGraph, hErrorNode_out, updateResult_out));
	saved = errno;
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
	errno = saved;
	return rc;
}
