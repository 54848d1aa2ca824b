/*
 * shim/summary.c -- the exit summary (summary.h): above the model and the
 * rules, called only from the exit path.
 */
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#include "findings.h"

#include "cgshim/record.h"
#include "counters.h"
#include "doors.h"
#include "emit.h"
#include "fold.h"
#include "ledger.h"
#include "nodes.h"
#include "model.h"
#include "rules.h"
#include "site.h"
#include "summary.h"

/* Coverage (issue 32): kernels launched eagerly against kernels run
 * through graph launches, the share as graphs in per mille; under
 * CGSHIM_EXPECT_GRAPHED a share below it is said (graphed_below: the
 * summary is then written at error level, so stderr shows it) and counted
 * an error-level finding. */
struct coverage {
	long long eager, graphed;
	long long expect; /* per mille, -1 unset */
	int below;
};

static void coverage_get(struct coverage *c)
{
	const char *want = cg_cfg.expect_graphed;
	char *end = NULL;
	double x = want && *want ? strtod(want, &end) : -1;
	long long all;
	c->eager = cg_eager_total();
	c->graphed = model_exec_kernels_run();
	all = c->eager + c->graphed;
	c->expect = want && *want && end && !*end && x >= 0 && x <= 1 ? (long long)(x * 1000 + 0.5) : -1;
	c->below = c->expect >= 0 && all && (double)c->graphed < x * (double)all;
	if (c->below)
		cg_findings_note(1);
}

/* Re-capture churn at exit (issue 32): one "recapture" record per capture
 * site and graph fingerprint captured twice or more, the most wasteful
 * first (CHURN_RECS at most). */
#define CHURN_RECS 32
static void churn_recs(void)
{
	struct model_churn_view v[CHURN_RECS];
	long long untracked = 0;
	int n = model_churn_exit(v, CHURN_RECS, &untracked);
	for (int i = 0; i < n; i++)
		emit_recapture(CG_L_INFO, &(struct ev_recapture){.fingerprint = v[i].shape,
								 .nodes = v[i].nodes,
								 .fingerprints_at_site = v[i].fps_at_site,
								 .captures = v[i].captures,
								 .instantiations = v[i].insts,
								 .launches = v[i].launches,
								 .capture_ns = v[i].cap_ns,
								 .instantiate_ns = v[i].inst_ns,
								 .wasted_ns = model_churn_wasted(&v[i]),
								 .graph_mem_bytes = v[i].mem_bytes,
								 .buffer_sets = v[i].ptr_sets,
								 .buffer_sets_more = 1,
								 .has_buffer_sets_more = (unsigned char)v[i].more_ptrs,
								 .untracked_captures = untracked,
								 .has_untracked_captures = untracked && !i,
								 .site = v[i].site});
}

/* The top eager kernels by call site (issue 32, coverage): one eager_top
 * record per kernel and site among the CGSHIM_EAGER_TOP most sampled; each
 * row's launches are the exact eager total times its share of the
 * samples (exact when every launch was a sample and none was lost); at
 * the summary's level (error when the share fell below
 * CGSHIM_EXPECT_GRAPHED: stderr then names the kernels that ran eagerly).
 * *sites and *samples for the summary. */
static void eager_top_recs(int level, long long eager, long long *sites, long long *samples)
{
	struct cg_eager_ent *top;
	long long kept = 0;
	int n = cg_eager_top(&top, samples);
	for (int i = 0; i < n; i++)
		kept += top[i].samples;
	*sites = n;
	for (int i = 0; i < n && i < cg_cfg.eager_top; i++) {
		long long c = top[i].samples;
		int exact = cg_eager_period() == 1 && kept == *samples && *samples == eager;
		long long est = exact ? c : (long long)((double)eager * (double)c / (double)*samples + 0.5);
		emit_eager_top(level, &(struct ev_eager_top){.rank = i + 1,
							     .kernel = top[i].name[0] ? top[i].name : NULL,
							     .function = top[i].fn == 1 ? 0 : top[i].fn,
							     .launches = est,
							     .samples = c,
							     .exact = exact,
							     .site = top[i].site});
	}
	free(top);
}

void cg_summary_exit(void)
{
	struct model_totals t;
	uint64_t open_ids[MODEL_CAPTURE_EXIT_MAX];
	long long launches = 0, n_exec_live = 0;
	int n_open = 0, n_open_all;
	struct coverage cov;

	/* Executables still alive: their launch counts and outstanding graph
	 * allocations. */
	{
		struct model_leak *leaks;
		struct ev_launches *lr;
		int n_lr, n = model_exec_exit(&launches, &n_exec_live, &leaks, &lr, &n_lr);
		for (int i = 0; i < n_lr; i++)
			emit_launches(CG_L_INFO, &lr[i]);
		free(lr);
		cg_rule_leaks(leaks, n, "exit");
	}
	{
		struct ev_graphmem g[CG_MAX_DEV];
		struct ev_pool *pools = NULL;
		int n = cg_model_graphmem("exit", NULL, g);
		for (int i = 0; i < n; i++)
			emit_graphmem(CG_L_INFO, &g[i]);
		n = model_pool_exit(&pools);
		for (int i = 0; i < n; i++)
			emit_pool(CG_L_INFO, &pools[i]);
		free(pools);
	}
	/* Captures still open: named, and listed below. */
	n_open_all = model_capture_exit(open_ids, MODEL_CAPTURE_EXIT_MAX, &n_open);
	if (cg_cfg.churn_threshold > 0)
		churn_recs();
	model_totals_get(&t);

	coverage_get(&cov);
	{
		long long all, tallied, eager_sites = 0, eager_samples = 0;
		unsigned long long opened[MODEL_CAPTURE_EXIT_MAX], counts[R_COUNT];
		const char *ids[R_COUNT];
		struct cg_door_counts doors;
		struct emit_counts rules = {ids, counts, cg_rules_counts(ids, counts)}, door_calls, door_lookups;
		struct emit_u64s open_list = {opened, n_open};
		for (int i = 0; i < n_open; i++)
			opened[i] = open_ids[i];
		model_graph_copy_checks(&all, &tallied);
		if (cg_eager_period() > 0)
			eager_top_recs(cov.below ? CG_L_ERROR : CG_L_INFO, cov.eager, &eager_sites, &eager_samples);
		cg_door_counts(&doors);
		door_calls = (struct emit_counts){doors.names, doors.calls, CG_DOOR_COUNT};
		door_lookups = (struct emit_counts){doors.lookup_names, doors.lookups, 2};
		emit_summary(cov.below ? CG_L_ERROR : CG_L_INFO,
			     &(struct ev_summary){
				 .graphs = t.graphs,
				 .execs = t.execs,
				 .execs_live = n_exec_live,
				 .launches = launches,
				 .updates = t.updates,
				 .updates_known = t.updates_known,
				 .update_failures = t.update_failures,
				 .failures = cg_failures_total(),
				 .captures = t.captures,
				 .captures_invalidated = t.captures_bad,
				 .captures_open = n_open_all,
				 .open_captures = n_open ? EMIT_U64S(&open_list) : (struct emit_part){0},
				 .pools = t.pools,
				 .alloc_nodes = t.alloc_nodes,
				 .alloc_bytes = (unsigned long long)t.alloc_bytes,
				 .rewrites = t.rewrites,
				 .violations = cg_violations_total(),
				 .leaks = t.leaks,
				 .meminfo_skipped = model_meminfo_skipped(),
				 .meminfo_reused = model_meminfo_reused(),
				 .meminfo_steady = model_meminfo_steady(),
				 .records_condensed = cg_condensed_total(),
				 .sites_deferred = cg_sites_deferred(),
				 .sites_dropped = cg_sites_dropped(),
				 .ledger_examined = ledger_examined(),
				 .walks = model_graph_walks(),
				 .churn_walks = model_graph_churn_walks(),
				 .launch_summaries = nodes_launch_summaries(),
				 .launch_summary_diffs = nodes_launch_check_diffs(),
				 .launch_chains = model_topo_chains(),
				 .has_launch_chains = cg_cfg.summary_check,
				 .copy_checks = all,
				 .copy_checks_tallied = tallied,
				 .repeats_folded = cg_fold_repeats(),
				 .unprinted = cg_print_unprinted(),
				 .eager_kernels = cov.eager,
				 .graph_kernels = cov.graphed,
				 .graphed_permille =
				     cov.eager + cov.graphed ? cov.graphed * 1000 / (cov.eager + cov.graphed) : 0,
				 .has_graphed_permille = cov.eager + cov.graphed != 0,
				 .expect_graphed_permille = cov.expect,
				 .has_expect_graphed_permille = cov.expect >= 0,
				 .graphed_below = cov.below,
				 .has_graphed_below = cov.expect >= 0,
				 .eager_sample = cg_eager_period(),
				 .has_eager_sample = cg_eager_period() > 0,
				 .eager_samples = eager_samples,
				 .has_eager_samples = cg_eager_period() > 0,
				 .eager_sites = eager_sites,
				 .has_eager_sites = cg_eager_period() > 0,
				 .rules = EMIT_COUNTS(&rules),
				 .doors = EMIT_COUNTS(&door_calls),
				 .lookups = EMIT_COUNTS(&door_lookups),
				 .early_calls = doors.early});
	}
}
