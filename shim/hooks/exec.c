/*
 * shim/hooks/exec.c -- instantiate (CGS004, CGS010 with DeviceLaunch) and
 * executable destroy; the node records of a graph for pictures.
 * Private to shim/hooks/ (hooks.h): every wrapper forwards the caller's
 * arguments unchanged and returns the driver's result, except where the
 * user asked for a policy.
 */
#define _GNU_SOURCE
#include "../hot.h"
#include "hooks.h"

/* Set by the first cuGraphExecUpdate of the process (hooks.h). */
_Atomic int cgh_updates_seen CG_HOT_DATA;

/* ======================================================================= */
/* instantiate                                                             */
/* ======================================================================= */

/* The model as instantiate_pre read it (model_graph_inst_view), for the
 * rules' view of g's live exec: no second gx_lock round trip. */
static CG_TLS const struct model_inst_view *inst_iv;
static CG_TLS CUgraph inst_g;

static CG_HOT int inst_live_exec(CUgraph g, struct cg_exec_view *out)
{
	const struct model_inst_view *iv = inst_iv;
	if (!iv || g != inst_g)
		return model_graph_live_exec(g, out);
	if (iv->have_live)
		*out = iv->live;
	return iv->have_live;
}

/* Instantiate (LIFE rows): the summary, the rules' verdicts (CGS004,
 * CGS010) and the memory sample before the call; the exec into the model
 * and the ledger after it; the node records after the call's record. */
/* A verdict of the instantiate rules (rare): written, and its prediction
 * kept for the call's end. skip: the frames above instantiate_pre's. */
static CG_COLD void instantiate_verdict(struct cgh_frame *f, const struct cg_verdict *v, const char *api)
{
	f->predicted_rc = v->predicted_rc;
	f->rule = v->rule;
	cg_verdict_write(v, api, 0, SITE_SKIP_PART + 3);
	CGH_FRAME_END();
}

/* CGS004 with the rules' view of g's live exec answered from iv. */
static CG_COLD int instantiate_second(const struct cg_instantiate_ev *ev, const struct model_inst_view *iv,
				      struct cg_verdict *v)
{
	struct cg_model_view mv = cg_model_view_live;
	int second;
	mv.graph_live_exec = inst_live_exec;
	inst_iv = iv, inst_g = ev->g;
	second = rules_instantiate_second(ev, &mv, v);
	inst_iv = NULL;
	return second;
}

/* The rules' verdicts (CGS004, CGS010), in a frame of their own: the
 * verdict's buffer (1.3 KB) is not under the stack of instantiate_pre's
 * other callees, which then share the stack lines the other hooks use. */
static CG_HOT CGH_FRAMED void instantiate_rules(struct cgh_frame *f, CUgraph g, uint64_t flags, const char *api,
						const struct model_inst_view *iv)
{
	struct cg_verdict v;
	struct cg_instantiate_ev ev = {g, flags, f->sum, f->site};
	/* CGS004 asks its view for g's live exec, which iv holds: without one
	 * (a capture loop's step) no verdict, and no view to make (issue 36:
	 * the view's copy and its thread-local anchor were lines of their own) */
	if (CG_UNLIKELY(iv->have_live) && instantiate_second(&ev, iv, &v))
		instantiate_verdict(f, &v, api);
	if (CG_UNLIKELY(rules_instantiate_device_launch(&ev, &v)))
		instantiate_verdict(f, &v, api);
	CGH_FRAME_END();
}

/* t0: the call's entry clock (0: not read), where the churn count's
 * instantiation time starts. */
static CG_HOT CGH_FRAMED void instantiate_pre(struct cgh_frame *f, CUgraph g, uint64_t flags, const char *api,
					      uint64_t t0)
{
	struct model_inst_view iv;
	cg_policy_collect();
	f->site = cg_site_here(SITE_SKIP_PART + 1);
	/* A captured graph unchanged since its capture needs no walk: the
	 * exec gets a partial summary, completed on first need. */
	model_graph_inst_view(g, !cg_log_on(CG_L_DEBUG), &iv);
	f->sum = iv.sum;
	if (CG_UNLIKELY(!f->sum))
		f->sum = model_graph_summary(g);
	f->predicted_rc = 0;
	f->rule = 0;
	instantiate_rules(f, g, flags, api, &iv);
	f->cap = iv.known ? iv.capture : 0;
	f->cap_site = iv.known ? iv.site : 0;
	if (f->cap && f->sum)
		f->shape = model_summary_shape(f->sum);
	f->steady = f->shape && model_meminfo_steady_inst(f->cap, f->shape);
	f->have_free = !f->steady && model_sample_free(&f->free_before);
	/* a captured graph churn counts: the instantiation's time, from the
	 * call's entry: the driver's call and the hook's steps around it */
	f->churn = f->cap && cg_churn_threshold > 0 ? iv.churn : 0;
	f->t_inst = f->churn ? (t0 ? t0 : cg_now_ns()) : 0;
}

/* Node records for pictures: type, dependencies by index, memory-node
 * parameters with the pool and site the shim recorded. At debug level for
 * every instantiated graph; at info for both sides of an update that
 * CGS001 predicts to fail (side "exec": the exec's summary, its edges read
 * from the graph it was taken from while that lives unchanged, else none
 * (g NULL, "deps" absent); side "graph": the new graph), so `cgshim report --dot update:N` can draw them at the default
 * level. Edges are matched to the summary's nodes by handle. */
/* The node record's extension (records.def): the node's details (nodes.c). */
static void node_details(struct cg_rec *r, const char *key, const void *det)
{
	(void)key;
	nodes_rec(r, det);
}

/* A node's dependencies, as indices of the summary's nodes, from the
 * graph's edges (the "deps" list of its node record). */
struct node_edges {
	const struct cg_summary *s;
	const CUgraphNode *from, *to;
	size_t ne;
	uint32_t i;
};

static void node_deps(struct cg_rec *r, const char *key, const void *arg)
{
	const struct node_edges *d = arg;
	rec_open(r, key, '[');
	for (size_t x = 0; x < d->ne; x++)
		if (d->to[x] == d->s->nodes[d->i])
			for (uint32_t k = 0; k < d->s->n_nodes; k++)
				if (d->s->nodes[k] == d->from[x]) {
					char num[16];
					snprintf(num, sizeof num, "%u", k);
					rec_elem_raw(r, num);
					break;
				}
	rec_close(r, ']');
}

CG_HOT void cgh_emit_nodes_at(CUgraph g, const struct cg_summary *s, int level, const char *side, CUgraphExec e)
{
	CUgraphNode *from = NULL, *to = NULL;
	size_t ne = 0;
	struct model_ids ids;
	if (!s || !s->types || !cg_log_on(level))
		return;
	model_ids_get(g, e, &ids);
	if (g && drv_cuGraphGetEdges && drv_cuGraphGetEdges(g, NULL, NULL, &ne) == CUDA_SUCCESS && ne) {
		from = calloc(ne, sizeof *from);
		to = calloc(ne, sizeof *to);
		if (!from || !to || drv_cuGraphGetEdges(g, from, to, &ne) != CUDA_SUCCESS)
			ne = 0;
	}
	for (uint32_t i = 0, m = 0; i < s->n_nodes; i++) {
		struct node_edges dl = {s, from, to, ne, i};
		struct ev_node f = {.graph = (uintptr_t)g,
				    .side = side,
				    .exec = (uintptr_t)e,
				    .has_exec = side != NULL,
				    .ids = model_ids_emit(&ids),
				    .index = i,
				    .type = rules_update_node_type(s->types[i]),
				    .more = {node_details, nodes_of(s, i)}};
		if (!g) {
			f.ndeps = s->ndeps[i];
			f.has_ndeps = 1;
		} else {
			/* the driver's own node ids (CUDA 13.1+): g lives, so its nodes do */
			unsigned lid;
			unsigned long long tid;
			f.deps = (struct emit_part){node_deps, &dl};
			f.has_cuda_node_id =
			    drv_cuGraphNodeGetLocalId && drv_cuGraphNodeGetLocalId(s->nodes[i], &lid) == CUDA_SUCCESS;
			f.cuda_node_id = f.has_cuda_node_id ? lid : 0;
			f.has_cuda_tools_id =
			    drv_cuGraphNodeGetToolsId && drv_cuGraphNodeGetToolsId(s->nodes[i], &tid) == CUDA_SUCCESS;
			f.cuda_tools_id = f.has_cuda_tools_id ? tid : 0;
		}
		if (s->types[i] == CU_GRAPH_NODE_TYPE_MEM_ALLOC || s->types[i] == CU_GRAPH_NODE_TYPE_MEM_FREE) {
			const struct cg_mnode *mn = &s->mem[m++];
			f.dptr = mn->dptr;
			f.has_dptr = 1;
			if (!mn->is_free) {
				f.size = mn->size;
				f.has_size = 1;
				f.dev = CG_MNODE_DEV(mn);
				f.has_dev = mn->dev != 0;
				f.pool = (uintptr_t)mn->pool;
				f.has_pool = 1;
				f.site = mn->site;
			}
		}
		emit_node(level, &f);
	}
	free(from);
	free(to);
}

/* e: the exec just made from g (its id on the records: one picture per
 * instantiation, not each edge once per instantiation), or NULL. The
 * level asked here: below debug the writer's frame and code are not
 * entered (issue 36: two code lines a step). */
static CG_HOT void emit_nodes(CUgraph g, const struct cg_summary *s, CUgraphExec e)
{
	if (CG_UNLIKELY(cg_log_on(CG_L_DEBUG)))
		cgh_emit_nodes_at(g, s, CG_L_DEBUG, NULL, e);
}

/* The ledger's entry from the exec's full summary (a graph with copies,
 * or one walked at instantiation): out of the steady capture loop's way. */
static CG_COLD void instantiate_ledger_full(CUgraphExec e, CUgraph g, uint32_t site, const char *api)
{
	struct cg_summary *full = model_exec_summary(e);
	cgh_ledger_exec_set(e, g, site, full, api);
	model_summary_free(full);
}

static CG_HOT void instantiate_post(struct cgh_frame *f, CUresult rc, CUgraphExec *ph, CUgraph g, uint64_t flags,
				    const char *api)
{
	if (f->churn && rc == CUDA_SUCCESS)
		model_churn_instantiated(f->churn, cg_now_ns() - f->t_inst);
	model_mem_moved(); /* the "after" sample is a real one: the instantiation took memory */
	/* The steady-capture state is the model's, kept whether or not the
	 * record is written (a condensed or level-hidden record skips _rec). */
	if (f->have_free) {
		f->have_free = model_sample_free(&f->free_after) ? 2 : 0;
		model_meminfo_steady_inst_done(f->cap, f->shape, rc == CUDA_SUCCESS && f->have_free,
					       f->have_free ? (long long)f->free_before - (long long)f->free_after : 0);
	} else if (!f->steady) {
		model_meminfo_steady_inst_done(f->cap, f->shape, 0, 0);
	}
	if (CG_UNLIKELY(f->predicted_rc) && (int)rc != f->predicted_rc)
		cg_mismatch(api, f->rule, f->predicted_rc, rc, -1, -1);
	if (CG_LIKELY(rc == CUDA_SUCCESS && ph)) {
		/* the model first; the ledger needs the node details: the full
		 * summary (walked now when the instantiation had a partial one
		 * and the graph has copies). Its findings (CGS020) precede the
		 * call's record. f->sum stays valid: the exec holds it. */
		int kernels = -1, copies = f->sum && f->sum->partial ? model_graph_copies(g, f->sum, &kernels) : 1;
		/* No copy, so nothing for CGS020 now: the references wait for
		 * the first free (ledger_exec_pending), and a loop that
		 * destroys the exec before freeing never walks the graph
		 * (docs/design.md, cost per call). The pending entry is kept
		 * on the model's exec where the ledger knows nothing of *ph. */
		int pending = f->sum && f->sum->partial && !copies, on_model = pending && !ledger_exec_known(*ph);
		f->repeat = model_exec_new(*ph, g, flags, f->site, model_summary_ref(f->sum), f->steady && !f->rule,
					   kernels, f->cap, f->cap_site, &f->nccl, on_model);
		if (pending) {
			if (CG_UNLIKELY(!on_model))
				ledger_exec_pending(*ph, g, f->site, f->cap, f->cap_site);
		} else {
			instantiate_ledger_full(*ph, g, f->site, api);
		}
	}
}

static CG_HOT void instantiate_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, CUgraphExec *ph, CUgraph g,
				   uint64_t flags)
{
	CUgraphExec e = rc == CUDA_SUCCESS && ph ? *ph : NULL;
	rec_hex(r, "graph", (uintptr_t)g);
	rec_hex(r, "exec", (uintptr_t)e);
	if (r->on) {
		struct emit_ids ids = model_ids_of(g, e);
		emit_ids_put(r, &ids);
	}
	rec_u64(r, "flags", flags);
	if (f->sum) {
		rec_int(r, "nodes", f->sum->n_nodes);
		rec_int(r, "alloc_nodes", f->sum->n_alloc);
		rec_int(r, "free_nodes", f->sum->n_free);
	}
	if (rc == CUDA_SUCCESS)
		model_summary_devs_rec(r, f->sum); /* dev, alloc_devs */
	if (CG_UNLIKELY(f->nccl))
		rec_int(r, "nccl", f->nccl);
	if (f->have_free == 2) {
		rec_u64(r, "free_before", f->free_before);
		rec_u64(r, "free_after", f->free_after);
		rec_int(r, "delta", (long long)f->free_before - (long long)f->free_after);
		if (f->cap)
			rec_u64(r, "capture", f->cap);
	} else if (f->steady) {
		const char *w = model_meminfo_word(f->steady);
		rec_u64(r, "capture", f->cap);
		if (w)
			rec_word(r, "meminfo", w);
	}
	rec_site(r, "site", f->site);
}

static CG_HOT void instantiate_done(struct cgh_frame *f, CUgraph g, CUresult rc, CUgraphExec *ph)
{
	emit_nodes(g, f->sum, rc == CUDA_SUCCESS && ph ? *ph : NULL);
	model_summary_free(f->sum);
}

/* The parts of one instantiate row; flags: the instantiation flags. */
#define INSTANTIATE_PARTS(name, params, flags)                                                                         \
	CG_HOT void cgh_##name##_pre(struct cg_call *c, struct cgh_frame *f, UNPAREN params)                           \
	{                                                                                                              \
		instantiate_pre(f, hGraph, flags, #name, c->t0);                                                       \
		CGH_FRAME_END();                                                                                       \
	}                                                                                                              \
	CG_HOT void cgh_##name##_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, UNPAREN params)             \
	{                                                                                                              \
		instantiate_post(f, rc, phGraphExec, hGraph, flags, #name);                                            \
		cgh_call_repeat(c, f->repeat);                                                                         \
	}                                                                                                              \
	CG_HOT void cgh_##name##_rec(struct cg_rec *r, struct cgh_frame *f, CUresult rc, UNPAREN params)               \
	{                                                                                                              \
		instantiate_rec(r, f, rc, phGraphExec, hGraph, flags);                                                 \
	}                                                                                                              \
	CG_HOT void cgh_##name##_done(struct cg_call *c, struct cgh_frame *f, CUresult rc, UNPAREN params)             \
	{                                                                                                              \
		instantiate_done(f, hGraph, rc, phGraphExec);                                                          \
	}
#define UNPAREN(...) __VA_ARGS__
#define INST5_P                                                                                                        \
	(CUgraphExec * phGraphExec, CUgraph hGraph, CUgraphNode * phErrorNode, char *logBuffer, size_t bufferSize)
#define INSTP_P (CUgraphExec * phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS * instantiateParams)
#define INSTP_FLAGS (instantiateParams ? instantiateParams->flags : 0)
INSTANTIATE_PARTS(cuGraphInstantiate, INST5_P, 0)
INSTANTIATE_PARTS(cuGraphInstantiate_v2, INST5_P, 0)
INSTANTIATE_PARTS(cuGraphInstantiateWithFlags, (CUgraphExec * phGraphExec, CUgraph hGraph, unsigned long long flags),
		  flags)
INSTANTIATE_PARTS(cuGraphInstantiateWithParams, INSTP_P, INSTP_FLAGS)
INSTANTIATE_PARTS(cuGraphInstantiateWithParams_ptsz, INSTP_P, INSTP_FLAGS)

/* The model drops e; the graph allocations its last launch left are
 * CGS011 violations (the rules' writer). *lg_owed: the ledger may hold an
 * entry for e (none while the model's exec held its pending one). */
static CG_HOT int cgh_exec_destroyed(CUgraphExec e, int *lg_owed)
{
	struct model_leak *leaks;
	struct ev_launches lr;
	int quiet = 0, repeat = 0, on_model = 0, n = model_exec_destroy(e, &leaks, &repeat, &lr, &quiet, &on_model);
	*lg_owed = !on_model;
	if (lr.count)
		emit_launches(cg_log_life_level(quiet), &lr);
	if (CG_UNLIKELY(leaks || n))
		cg_rule_leaks(leaks, n, "exec_destroy");
	return repeat && !n;
}

/* The destroy's call record, in a frame of its own (the generated
 * wrappers' cgh_<name>_record: the driver's call stays at the
 * application's stack depth). */
static __attribute__((noinline)) void exec_destroy_record(struct cg_call *c, CUresult rc, CUgraphExec e,
							  CUgraphExec real)
{
	struct cg_rec r;
	if (cg_call_rec_open(&r, c, rc)) {
		rec_hex(&r, "exec", (uintptr_t)e);
		if (CG_UNLIKELY(real != e))
			rec_hex(&r, "real", (uintptr_t)real);
		rec_end(&r);
	}
}

/* CUSTOM: the application's handle is translated before the readiness
 * test (the policy forgets it even when the shim passes the call through),
 * and a destroy refused in a capture leaves model and policy alone. */
CG_HOT CUresult cgh_cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct cg_call c;
	CUresult rc;
	CUgraphExec real;
	int lg_owed;
	CG_REAL(cuGraphExecDestroy);
	real = cg_policy_exec(hGraphExec);
	if (!cg_call_begin(&c, HID_cuGraphExecDestroy, CG_CALL_LIFE)) {
		cg_policy_forget(hGraphExec);
		return CG_FWD(real_cuGraphExecDestroy(hGraphExec));
	}
	/* capture-map.md: destroying an executable is in the unsafe class
	 * (CGS007). A refused destroy leaves the executable alive: the model
	 * and the policy forget it only once the driver destroyed it. */
	if (CG_UNLIKELY(cg_rule_capture_unsafe("cuGraphExecDestroy", "destroys an executable graph"))) {
		CG_FWD_OUT(rc, real_cuGraphExecDestroy(hGraphExec));
		cg_rule_capture_unsafe_after("cuGraphExecDestroy", 1, rc);
		if (rc == CUDA_SUCCESS) {	      /* the driver took what the rule foresaw refused */
			cg_policy_forget(hGraphExec); /* before the model drops the exec: model.h */
			cgh_exec_destroyed(hGraphExec, &lg_owed);
			/* and the ledger with it, as below: else a later free of a
			 * range it used would name a dead executable (CGS018) */
			model_mem_moved();
			ledger_exec_gone(hGraphExec);
		}
		cg_call_end(&c, rc);
		CG_RETURN(rc);
	}
	cg_policy_collect();
	/* Replacements and cached executables go with the handle; the
	 * application's own executable is the one it names. Before the model
	 * drops the exec: the policy reads the real exec from it (model.h). */
	cg_policy_forget(hGraphExec);
	/* Outstanding graph allocations: found by the model, written as CGS011. */
	cgh_call_repeat(&c, cgh_exec_destroyed(hGraphExec, &lg_owed));
	model_mem_moved(); /* the exec's device memory goes back */
	if (lg_owed)
		ledger_exec_gone(hGraphExec);
	CG_FWD_OUT(rc, real_cuGraphExecDestroy(hGraphExec));
	if (rc == CUDA_SUCCESS && !(c.flags & CG_CALL_REPEAT))
		model_mem_settled();
	if (cg_call_rec_wanted(&c, rc))
		exec_destroy_record(&c, rc, hGraphExec, real);
	CG_RETURN(rc);
}
