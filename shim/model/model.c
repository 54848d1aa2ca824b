/*
 * shim/model/model.c -- life cycle of the model: its locks, fork handling, the shared totals.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

_Atomic int cg_live_captures;
struct model_totals model_tot;
_Atomic uint64_t model_epoch;
struct cg_graph *model_graph_last; /* model-int.h, gx_lock */

struct cg_table model_graph_table = CG_TABLE_INIT("graph table");
struct cg_table model_exec_table = CG_TABLE_INIT("exec table");
struct cg_table model_pool_table = CG_TABLE_INIT("pool table");
struct cg_table model_alloc_table = CG_TABLE_INIT("allocation table");

CG_HOT int model_table_added(struct cg_table *t)
{
	if (CG_LIKELY(!cg_table_add_failed(t)))
		return 0;
	cg_degrade(t->name);
	return -1;
}
int cg_model_init(void)
{
	/* Warm up backtrace(): its first call loads libgcc_s; do it here,
	 * outside any hook that may run inside a capture or a malloc. */
	(void)cg_site_here(0);
	return 0;
}

void cg_model_after_fork_child(void)
{
	/* The child has one thread; captures of the parent's other threads
	 * do not exist here. The CUDA context is not usable in a forked
	 * child anyway; keep the tables for the exit summary. */
	struct cg_capture *c, *next;
	for (c = model_cap_list.head; c; c = next) {
		next = c->next;
		free(c->l);
		free(c);
	}
	model_captures_forget();
	atomic_store(&cg_live_captures, 0);
	model_churn_after_fork_child();
	ledger_after_fork_child();
}

void model_totals_get(struct model_totals *out)
{
	/* Read without the tables' locks, as the exit summary always did:
	 * totals only grow, one racing the exit is off by the calls in flight. */
	*out = model_tot;
	out->updates += model_exec_updates_same();
	out->updates_known = model_exec_updates_known();
}
