/*
 * shim/rules/update.c -- the update rules, pure verdicts (verdict.h):
 *
 *   CGS001  cuGraphExecUpdate will fail: node count, a node's type,
 *           dependency count or dependencies (the edges, their data), a
 *           node detail the driver refuses, or any of these inside a child
 *           graph node (the update is recursive)
 *   CGS002  update from a memory-node graph that has its own live exec
 *   CGS003  the update replaces an allocation the program may hold
 *   CGS012  the update carries an allocation from another pool
 *
 * Inputs: the exec's summary (kept since instantiate) and the new graph's;
 * the model view only for a live exec of the graph, a pool's flags and the
 * current context. Nothing here writes, locks or calls the driver.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "../hot.h"
#include "../nodes.h"
#include "../rules.h"
#include "verdict.h"

#define UPD_MSG 400 /* the records' message cap, as it always was */

static const char *const update_node_type_names[] = {
    "kernel",	    "memcpy",	      "memset",	      "host",	   "graph",    "empty",	       "wait_event",
    "event_record", "ext_sem_signal", "ext_sem_wait", "mem_alloc", "mem_free", "batch_mem_op", "conditional"};

const char *rules_update_node_type(int t)
{
	return t >= 0 && t < (int)(sizeof update_node_type_names / sizeof *update_node_type_names)
		   ? update_node_type_names[t]
		   : "?";
}

const char *rules_update_result_name(int res)
{
	static const char *n[] = {
	    "Success",		 "Error",	 "TopologyChanged",	      "NodeTypeChanged",  "FunctionChanged",
	    "ParametersChanged", "NotSupported", "UnsupportedFunctionChange", "AttributesChanged"};
	return res >= 0 && res < 9 ? n[res] : "?";
}

CG_HOT int rules_update_instantiated(const struct cg_update_ev *ev, const struct cg_model_view *mv,
				     struct cg_verdict *v)
{
	struct cg_exec_view live;
	const struct cg_summary *nu = ev->nu;
	if (!nu || !(nu->n_alloc + nu->n_free) || !mv->graph_live_exec(ev->g, &live) || live.h == ev->e)
		return 0;
	cg_verdict_init(v, R_UPDATE_INSTANTIATED, CUDA_ERROR_NOT_SUPPORTED);
	snprintf(v->msg, UPD_MSG,
		 "graph 0x%llx holds memory nodes and is itself instantiated as exec 0x%llx; it cannot "
		 "be used to update exec 0x%llx (driver: 801, result left Success)",
		 (unsigned long long)(uintptr_t)ev->g, (unsigned long long)(uintptr_t)live.h,
		 (unsigned long long)(uintptr_t)ev->e);
	cg_vf_hex(v, "exec", (uintptr_t)ev->e);
	cg_vf_hex(v, "graph", (uintptr_t)ev->g);
	cg_vf_hex(v, "other_exec", (uintptr_t)live.h);
	cg_vf_site_here(v, "site");
	cg_vf_site(v, "other_exec_site", live.site);
	return 1;
}

/* The reason a predicted update fails, as text (it goes into the CGS001
 * record and, under reinstantiate, into every rewrite record): built with
 * stpcpy and the record's number formatters, as snprintf costs more than
 * the rest of a rewrite's bookkeeping. Every text fits the 256-byte why[]. */
static void update_why_count(char *o, uint32_t exec_nodes, CUgraph g, uint32_t graph_nodes)
{
	o = rec_fmt_u64_(stpcpy(o, "node count differs: exec has "), exec_nodes);
	o = rec_fmt_hex_(stpcpy(o, " nodes, graph "), (uintptr_t)g, 0);
	*rec_fmt_u64_(stpcpy(o, " has "), graph_nodes) = 0;
}

static void update_why_type(char *o, uint32_t i, int exec_type, int graph_type)
{
	o = rec_fmt_u64_(stpcpy(o, "node "), i);
	o = stpcpy(stpcpy(o, " changed type: "), rules_update_node_type(exec_type));
	stpcpy(stpcpy(stpcpy(o, " in the exec, "), rules_update_node_type(graph_type)), " in the graph");
}

static void update_why_deps(char *o, uint32_t i, int type, unsigned exec_deps, unsigned graph_deps)
{
	o = rec_fmt_u64_(stpcpy(o, "node "), i);
	o = stpcpy(stpcpy(stpcpy(o, " ("), rules_update_node_type(type)), ") has ");
	o = rec_fmt_u64_(o, exec_deps);
	o = rec_fmt_u64_(stpcpy(o, " dependencies in the exec and "), graph_deps);
	stpcpy(o, " in the graph");
}

static void update_why_edges(char *o, uint32_t i, int type, unsigned deps)
{
	o = rec_fmt_u64_(stpcpy(o, "node "), i);
	o = stpcpy(stpcpy(stpcpy(o, " ("), rules_update_node_type(type)), ") has ");
	o = rec_fmt_u64_(o, deps);
	stpcpy(o, " dependencies in both, but on other nodes (or with other edge data) in the graph than in the exec");
}

/* The node-detail refusals CGS001 predicts when both summaries have the
 * same node types in the same order: a kernel's function from another
 * context (UnsupportedFunctionChange), a cooperative change
 * (AttributesChanged), a memset's extent or a copy's memory types
 * (ParametersChanged). docs/update-refusals.md. */
static CG_HOT int rules_update_refusal(const struct cg_summary *old, const struct cg_summary *nu,
				       const struct cg_model_view *mv, uint32_t *index, int *result, char *why,
				       size_t cap)
{
	if (!old || !nu || !old->det || !nu->det || old->n_det != nu->n_det)
		return 0;
	if (old->sig && old->sig == nu->sig)
		return 0; /* what this pass compares is the same (nodes.h) */
	for (uint32_t j = 0; j < nu->n_det; j++) {
		const struct cg_ndet *a = &old->det[j], *b = &nu->det[j];
		if (a->type != b->type || a->node != b->node)
			return 0; /* not paired: the type/topology checks speak */
		*index = b->node;
		if (a->type == CU_GRAPH_NODE_TYPE_KERNEL) {
			/* A function from another module is accepted (measured on the
			 * H100, docs/update-refusals.md); one from another context is
			 * refused. A context is known only for a module loaded through
			 * a hooked cuModuleLoad*; the old node's, when unknown (the
			 * runtime's own modules), is the update's current context,
			 * normally the exec's. Else the driver answers. */
			uint64_t ca = a->mctx;
			if (!ca && b->mctx)
				ca = mv->current_ctx();
			if (ca && b->mctx && ca != b->mctx) {
				*result = CU_GRAPH_EXEC_UPDATE_ERROR_UNSUPPORTED_FUNCTION_CHANGE;
				snprintf(why, cap, "node %u (kernel %s): function %s is from another context", b->node,
					 a->name ? a->name : "?", b->name ? b->name : "?");
				return 1;
			}
			if (a->coop != b->coop) {
				*result = CU_GRAPH_EXEC_UPDATE_ERROR_ATTRIBUTES_CHANGED;
				snprintf(why, cap, "node %u (kernel %s): cooperative launch %s", b->node,
					 b->name ? b->name : "?", b->coop ? "added" : "removed");
				return 1;
			}
		} else if (a->type == CU_GRAPH_NODE_TYPE_MEMSET) {
			/* The element size alone may change (measured on the H100,
			 * docs/update-refusals.md); the extent may not (cuda-facts §5). */
			if (a->bytes != b->bytes) {
				*result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
				snprintf(why, cap,
					 "node %u (memset): %llu -> %llu bytes; only the address, value and "
					 "element size may change",
					 b->node, (unsigned long long)a->bytes, (unsigned long long)b->bytes);
				return 1;
			}
		} else if (a->type == CU_GRAPH_NODE_TYPE_MEMCPY) {
			if (a->grid[0] != b->grid[0]) {
				*result = CU_GRAPH_EXEC_UPDATE_ERROR_PARAMETERS_CHANGED;
				snprintf(why, cap, "node %u (memcpy): kind %s -> %s; a copy's memory types are fixed",
					 b->node, nodes_copy_kind((int)a->grid[0]), nodes_copy_kind((int)b->grid[0]));
				return 1;
			}
		}
	}
	return 0;
}

static int update_nodes(const struct cg_summary *old, const struct cg_summary *nu, const struct cg_model_view *mv,
			int depth, int *result, char *why, size_t cap);

/* Node i, a child graph node in both: the update is recursive (the
 * child's topology and node insertion order must match, and its nodes
 * obey the same limits: cuGraphExecChildGraphNodeSetParams' contract), so
 * the two child summaries are compared as the parents are. The result is
 * the inner comparison's; the node named is the parent's. A child not
 * walked on either side (model_summary_kid NULL) is not compared. */
static int update_kid(const struct cg_summary *old, const struct cg_summary *nu, uint32_t i,
		      const struct cg_model_view *mv, int depth, int *result, char *why, size_t cap)
{
	const struct cg_summary *ko = model_summary_kid(old, i), *kn = model_summary_kid(nu, i);
	char sub[200];
	uint32_t j = 0;
	if (!ko || !kn || depth >= CG_KID_DEPTH || (ko->topo && ko->topo == kn->topo && ko->sig == kn->sig))
		return 0;
	if (ko->n_nodes != kn->n_nodes) {
		*result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		snprintf(sub, sizeof sub, "%u nodes in the exec's, %u in the graph's", ko->n_nodes, kn->n_nodes);
	} else if (!update_nodes(ko, kn, mv, depth + 1, result, sub, sizeof sub) &&
		   !rules_update_refusal(ko, kn, mv, &j, result, sub, sizeof sub))
		return 0;
	snprintf(why, cap, "node %u (graph): its child graph differs: %s", i, sub);
	return 1;
}

/* Two summaries of the same node count, node by node: type, dependency
 * count, dependencies, child graphs. The first difference: its index
 * (returned + 1; 0: none), result and reason. */
static int update_nodes(const struct cg_summary *old, const struct cg_summary *nu, const struct cg_model_view *mv,
			int depth, int *result, char *why, size_t cap)
{
	for (uint32_t i = 0; i < nu->n_nodes; i++) {
		if (old->types[i] != nu->types[i]) {
			*result = CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED;
			update_why_type(why, i, old->types[i], nu->types[i]);
		} else if (old->ndeps[i] != nu->ndeps[i]) {
			*result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
			update_why_deps(why, i, nu->types[i], old->ndeps[i], nu->ndeps[i]);
		} else if (old->depsig && nu->depsig && old->depsig[i] != nu->depsig[i]) {
			/* same count, other edges: a chain against a fork/join
			 * (issue 31), or an edge's ports or type changed */
			*result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
			update_why_edges(why, i, nu->types[i], nu->ndeps[i]);
		} else if (nu->types[i] != CU_GRAPH_NODE_TYPE_GRAPH ||
			   !update_kid(old, nu, i, mv, depth, result, why, cap))
			continue;
		return (int)i + 1;
	}
	return 0;
}

CG_HOT int rules_update_fail(const struct cg_update_ev *ev, const struct cg_model_view *mv, struct cg_update_pred *p,
			     struct cg_verdict *v)
{
	const struct cg_summary *old = ev->old, *nu = ev->nu;
	int fail = 0;
	p->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	p->err_index = 0;
	p->err_node = p->from_node = NULL;
	p->why[0] = 0;
	if (!old || !nu)
		return 0;
	if (old == nu) {
		/* O(1): the exec's own summary (an update from the graph it runs). */
	} else if (old->topo && old->topo == nu->topo && old->n_nodes == nu->n_nodes) {
		/* Same topology hash: the node-by-node type and edge loop below
		 * only runs when they differ, to name the difference. */
	} else if (old->n_nodes != nu->n_nodes) {
		fail = 1;
		p->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		update_why_count(p->why, old->n_nodes, ev->g, nu->n_nodes);
	} else if (old->types && nu->types) {
		int at = update_nodes(old, nu, mv, 0, &p->result, p->why, sizeof p->why);
		if (at) {
			fail = 1;
			p->err_index = (uint32_t)at - 1;
			p->err_node = nu->nodes[p->err_index];
			p->from_node = old->nodes[p->err_index];
		}
	}
	/* Same shape, other summaries: node details the driver will not take;
	 * they are not in the topology hash. */
	if (!fail && old != nu && rules_update_refusal(old, nu, mv, &p->err_index, &p->result, p->why, sizeof p->why)) {
		fail = 1;
		p->err_node = nu->nodes[p->err_index];
		p->from_node = old->nodes[p->err_index];
	}
	if (!fail)
		return 0;
	cg_verdict_init(v, R_UPDATE_FAIL, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	snprintf(v->msg, UPD_MSG, "cuGraphExecUpdate of exec 0x%llx from graph 0x%llx will fail with %s: %s",
		 (unsigned long long)(uintptr_t)ev->e, (unsigned long long)(uintptr_t)ev->g,
		 rules_update_result_name(p->result), p->why);
	cg_vf_hex(v, "exec", (uintptr_t)ev->e);
	cg_vf_hex(v, "graph", (uintptr_t)ev->g);
	cg_vf_int(v, "predicted_result", p->result);
	cg_vf_int(v, "exec_nodes", old->n_nodes);
	cg_vf_int(v, "graph_nodes", nu->n_nodes);
	if (p->err_node) {
		const char *kn = nodes_kernel_name(nu, p->err_index);
		const char *ko = nodes_kernel_name(old, p->err_index);
		if (kn)
			cg_vf_str(v, "kernel", kn);
		if (ko && ko != kn)
			cg_vf_str(v, "exec_kernel", ko);
		cg_vf_int(v, "node_index", p->err_index);
		cg_vf_hex(v, "error_node", (uintptr_t)p->err_node);
		cg_vf_hex(v, "error_from_node", (uintptr_t)p->from_node);
	}
	cg_vf_site_here(v, "site");
	cg_vf_exec_site(v, "exec_site", ev->e);
	return 1;
}

CG_HOT int rules_update_same_memory(const struct cg_update_ev *ev)
{
	const struct cg_summary *old = ev->old, *nu = ev->nu;
	if (old->n_alloc != nu->n_alloc || old->n_free != nu->n_free)
		return 0;
	for (uint32_t i = 0; old != nu && i < old->n_alloc + old->n_free; i++)
		if (old->mem[i].dptr != nu->mem[i].dptr || old->mem[i].size != nu->mem[i].size ||
		    old->mem[i].pool != nu->mem[i].pool || old->mem[i].is_free != nu->mem[i].is_free)
			return 0;
	return 1;
}

int rules_update_memory(const struct cg_update_ev *ev, const struct cg_model_view *mv, uint32_t *pos,
			struct cg_verdict *out, int max)
{
	const struct cg_summary *old = ev->old, *nu = ev->nu;
	uint32_t no = old->n_alloc + old->n_free, nn = nu->n_alloc + nu->n_free, i = *pos;
	int n = 0;
	/* Two verdicts at most per pair: stop before a pair that might not fit. */
	for (; i < no && i < nn && n + 2 <= max; i++) {
		const struct cg_mnode *a = &old->mem[i], *b = &nu->mem[i];
		if (a->is_free || b->is_free)
			continue;
		if (a->pool != b->pool && a->pool && b->pool) {
			struct cg_verdict *v = &out[n++];
			int ipc, def_a = 0, def_b = 0;
			uint32_t sa = 0, sb = 0;
			mv->pool_info(a->pool, &ipc, &def_a, &sa);
			mv->pool_info(b->pool, &ipc, &def_b, &sb);
			cg_verdict_init(v, R_POOL_CHANGED, -1);
			snprintf(v->msg, UPD_MSG,
				 "update of exec 0x%llx carries an allocation from pool 0x%llx%s where the exec's came "
				 "from pool 0x%llx%s; the driver checks neither pool nor size and accepts it",
				 (unsigned long long)(uintptr_t)ev->e, (unsigned long long)(uintptr_t)b->pool,
				 def_b ? " (default)" : "", (unsigned long long)(uintptr_t)a->pool,
				 def_a ? " (default)" : "");
			cg_vf_hex(v, "exec", (uintptr_t)ev->e);
			cg_vf_hex(v, "pool", (uintptr_t)a->pool);
			cg_vf_hex(v, "other_pool", (uintptr_t)b->pool);
			cg_vf_site(v, "pool_site", sa);
			cg_vf_site(v, "other_pool_site", sb);
			cg_vf_site(v, "alloc_site", a->site);
			cg_vf_site(v, "other_alloc_site", b->site);
		}
		/* Only an allocation that outlives the launch (no free node in
		 * the exec's graph) can be held by the program: swapping one that
		 * the graph frees itself is harmless. */
		int escapes = !model_mnode_has(old->mem, (int)no, a->dptr, 1);
		if (escapes && (a->dptr != b->dptr || a->size != b->size)) {
			struct cg_verdict *v = &out[n++];
			cg_verdict_init(v, R_ALLOC_SWAP, -1);
			snprintf(
			    v->msg, UPD_MSG,
			    "update of exec 0x%llx will succeed but replaces its graph allocation 0x%llx (%zu bytes) "
			    "by 0x%llx (%zu bytes): pointers taken from the original capture are dead after the next "
			    "launch",
			    (unsigned long long)(uintptr_t)ev->e, (unsigned long long)a->dptr, a->size,
			    (unsigned long long)b->dptr, b->size);
			cg_vf_hex(v, "exec", (uintptr_t)ev->e);
			cg_vf_hex(v, "graph", (uintptr_t)ev->g);
			cg_vf_hex(v, "dptr", a->dptr);
			cg_vf_hex(v, "new_dptr", b->dptr);
			cg_vf_u64(v, "size", a->size);
			cg_vf_u64(v, "new_size", b->size);
			cg_vf_hex(v, "pool", (uintptr_t)a->pool);
			cg_vf_hex(v, "new_pool", (uintptr_t)b->pool);
			cg_vf_site(v, "alloc_site", a->site);
			cg_vf_site(v, "new_alloc_site", b->site);
		}
	}
	*pos = i < no && i < nn ? i : UINT32_MAX;
	return n;
}
