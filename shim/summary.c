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

static void coverage_rec(struct cg_rec *r, const struct coverage *c)
{
	rec_int(r, "eager_kernels", c->eager);
	rec_int(r, "graph_kernels", c->graphed);
	if (c->eager + c->graphed)
		rec_int(r, "graphed_permille", c->graphed * 1000 / (c->eager + c->graphed));
	if (c->expect >= 0) {
		rec_int(r, "expect_graphed_permille", c->expect);
		rec_bool(r, "graphed_below", c->below);
	}
}

void cg_summary_exit(void)
{
	struct model_totals t;
	uint64_t open_ids[MODEL_CAPTURE_EXIT_MAX];
	long long launches = 0, n_exec_live = 0;
	int n_open = 0, n_open_all;
	struct cg_rec r;
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
	model_totals_get(&t);

	coverage_get(&cov);
	rec_begin(&r, cov.below ? CG_L_ERROR : CG_L_INFO, CGSHIM_EV_SUMMARY);
	rec_int(&r, "graphs", t.graphs);
	rec_int(&r, "execs", t.execs);
	rec_int(&r, "execs_live", n_exec_live);
	rec_int(&r, "launches", launches);
	rec_int(&r, "updates", t.updates);
	rec_int(&r, "updates_known", t.updates_known);
	rec_int(&r, "update_failures", t.update_failures);
	rec_int(&r, "failures", cg_failures_total());
	rec_int(&r, "captures", t.captures);
	rec_int(&r, "captures_invalidated", t.captures_bad);
	rec_int(&r, "captures_open", n_open_all);
	if (n_open) {
		rec_open(&r, "open_captures", '[');
		for (int i = 0; i < n_open; i++) {
			char num[24];
			snprintf(num, sizeof num, "%llu", (unsigned long long)open_ids[i]);
			rec_elem_raw(&r, num);
		}
		rec_close(&r, ']');
	}
	rec_int(&r, "pools", t.pools);
	rec_int(&r, "alloc_nodes", t.alloc_nodes);
	rec_u64(&r, "alloc_bytes", (unsigned long long)t.alloc_bytes);
	rec_int(&r, "rewrites", t.rewrites);
	rec_int(&r, "violations", cg_violations_total());
	rec_int(&r, "leaks", t.leaks);
	rec_int(&r, "meminfo_skipped", model_meminfo_skipped());
	rec_int(&r, "meminfo_reused", model_meminfo_reused());
	rec_int(&r, "meminfo_steady", model_meminfo_steady());
	rec_int(&r, "records_condensed", cg_condensed_total());
	rec_int(&r, "sites_deferred", cg_sites_deferred());
	rec_int(&r, "sites_dropped", cg_sites_dropped());
	rec_int(&r, "ledger_examined", ledger_examined());
	rec_int(&r, "walks", model_graph_walks());
	{
		long long all, tallied;
		model_graph_copy_checks(&all, &tallied);
		rec_int(&r, "copy_checks", all);
		rec_int(&r, "copy_checks_tallied", tallied);
	}
	rec_u64(&r, "repeats_folded", cg_fold_repeats());
	rec_u64(&r, "unprinted", cg_print_unprinted());
	coverage_rec(&r, &cov);
	cg_rules_summary(&r);
	cg_door_summary(&r);
	rec_end(&r);
}
