/*
 * tools/report-coverage.c -- the report's "Coverage" (issue 32): per
 * process that wrote its exit summary, the kernels launched eagerly against
 * those run through graph launches and the share as graphs (with
 * CGSHIM_EXPECT_GRAPHED's verdict), then the top eager kernels by call site
 * (one row per `eager_top` record, in its process's rank order: the
 * launches are exact or estimated from the shim's samples).
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

static void cv_copy(json_t *row, const json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (v)
		json_object_set(row, key, v);
}

json_t *rp_coverage(const struct rp_log *log)
{
	static const char *const sum_keys[] = {"eager_kernels",		  "graph_kernels", "graphed_permille",
					       "expect_graphed_permille", "graphed_below", "eager_sample",
					       "eager_samples",		  "eager_sites"};
	static const char *const top_keys[] = {"rank", "kernel", "function", "launches", "samples", "exact"};
	json_t *procs = json_array(), *top = json_array();
	for (size_t i = 0; i < log->n; i++) {
		int is_sum = log->recs[i].kind == RP_EV_SUMMARY;
		const json_t *j;
		json_t *row;
		if (!is_sum && log->recs[i].kind != RP_EV_EAGER_TOP)
			continue;
		j = rp_j(log, i);
		if (is_sum && !json_object_get(j, "eager_kernels"))
			continue; /* a shim before issue 32 */
		row = json_object();
		json_object_set_new(row, "pid", json_integer(log->recs[i].pid));
		if (is_sum) {
			for (size_t k = 0; k < sizeof sum_keys / sizeof sum_keys[0]; k++)
				cv_copy(row, j, sum_keys[k]);
			json_array_append_new(procs, row);
			continue;
		}
		for (size_t k = 0; k < sizeof top_keys / sizeof top_keys[0]; k++)
			cv_copy(row, j, top_keys[k]);
		/* the first frame, and every frame for the HTML and --json */
		if (json_object_get(j, "site"))
			json_object_set(row, "site_frames", json_object_get(j, "site"));
		json_object_set_new(row, "site", rp_site0(j, "site") ? json_string(rp_site0(j, "site")) : json_null());
		json_array_append_new(top, row);
	}
	return json_pack("{s:o,s:o}", "processes", procs, "top_eager", top);
}

void rp_print_coverage(FILE *f, const json_t *cov)
{
	const json_t *procs = json_object_get(cov, "processes"), *top = json_object_get(cov, "top_eager"), *row;
	size_t i;
	if (!json_array_size(procs) && !json_array_size(top))
		return;
	fputs("\n== Coverage (kernels run through graph launches against kernels launched eagerly)\n", f);
	fprintf(f, "  %-7s %12s %12s %7s %7s\n", "pid", "eager", "graphed", "graphed", "expect");
	json_array_foreach(procs, i, row)
	{
		char share[16] = "-", want[24] = "-";
		if (json_object_get(row, "graphed_permille"))
			snprintf(share, sizeof share, "%.1f%%", rp_int(row, "graphed_permille", 0) / 10.0);
		if (json_object_get(row, "expect_graphed_permille"))
			snprintf(want, sizeof want, "%.1f%%%s", rp_int(row, "expect_graphed_permille", 0) / 10.0,
				 rp_bool(row, "graphed_below") ? " BELOW" : "");
		fprintf(f, "  %-7lld %12lld %12lld %7s %7s\n", rp_int(row, "pid", 0), rp_int(row, "eager_kernels", 0),
			rp_int(row, "graph_kernels", 0), share, want);
	}
	if (!json_array_size(top))
		return;
	fputs("  Top eager kernels by call site:\n", f);
	fprintf(f, "  %-7s %4s %12s %8s  %-40s %s\n", "pid", "rank", "launches", "samples", "kernel", "site");
	json_array_foreach(top, i, row)
	{
		char n[32];
		snprintf(n, sizeof n, "%s%lld", rp_bool(row, "exact") ? "" : "~", rp_int(row, "launches", 0));
		fprintf(f, "  %-7lld %4lld %12s %8lld  %-40s %s\n", rp_int(row, "pid", 0), rp_int(row, "rank", 0), n,
			rp_int(row, "samples", 0), rp_str(row, "kernel") ? rp_str(row, "kernel") : "?",
			rp_str(row, "site") ? rp_str(row, "site") : "-");
	}
	fputs("  (~: estimated from one eager launch in CGSHIM_EAGER_SAMPLE sampled per thread; the eager total is "
	      "exact)\n",
	      f);
}
