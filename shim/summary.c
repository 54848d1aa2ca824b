/*
 * shim/summary.c -- the exit summary (summary.h): above the model and the
 * rules, called only from the exit path.
 */
#include <stdio.h>

#include "cgshim/record.h"
#include "counters.h"
#include "doors.h"
#include "fold.h"
#include "ledger.h"
#include "model.h"
#include "rules.h"
#include "site.h"
#include "summary.h"

void cg_summary_exit(void)
{
	struct model_totals t;
	uint64_t open_ids[MODEL_CAPTURE_EXIT_MAX];
	long long launches = 0, n_exec_live = 0;
	int n_open = 0, n_open_all;
	struct cg_rec r;

	/* Executables still alive: their launch counts and outstanding graph
	 * allocations. */
	{
		struct model_leak *leaks;
		int n = model_exec_exit(&launches, &n_exec_live, &leaks);
		cg_rule_leaks(leaks, n, "exit");
	}
	cg_model_graphmem("exit", NULL);
	model_pool_exit();
	/* Captures still open: named, and listed below. */
	n_open_all = model_capture_exit(open_ids, MODEL_CAPTURE_EXIT_MAX, &n_open);
	model_totals_get(&t);

	rec_begin(&r, CG_L_INFO, CGSHIM_EV_SUMMARY);
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
	cg_rules_summary(&r);
	cg_door_summary(&r);
	rec_end(&r);
}
