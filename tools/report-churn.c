/*
 * tools/report-churn.c -- the report's "Captures made again" (issue 32,
 * re-capture churn): one row per `recapture` record (a capture site and a
 * graph fingerprint it captured twice or more, written at exit), the most
 * wasted time first: the site, the graphs it captured, the captures,
 * instantiations and launches of this one, the milliseconds spent past the
 * first capture and instantiation, and the graph memory of one graph.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void rc_copy(json_t *row, const json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (v)
		json_object_set(row, key, v);
}

static int rc_by_waste(const void *a, const void *b)
{
	long long x = rp_int(*(json_t *const *)a, "wasted_ns", 0), y = rp_int(*(json_t *const *)b, "wasted_ns", 0);
	return x < y ? 1 : x > y ? -1 : 0;
}

json_t *rp_recaptures(const struct rp_log *log)
{
	static const char *const keys[] = {"fingerprint",     "nodes",		"fingerprints_at_site",
					   "captures",	      "instantiations", "launches",
					   "capture_ns",      "instantiate_ns", "wasted_ns",
					   "graph_mem_bytes", "buffer_sets",	"buffer_sets_more"};
	json_t *rows = json_array(), *sorted = json_array();
	json_t **v;
	size_t i, n;
	for (i = 0; i < log->n; i++) {
		const json_t *j;
		json_t *row;
		if (log->recs[i].kind != RP_EV_RECAPTURE)
			continue;
		j = rp_j(log, i);
		row = json_object();
		json_object_set_new(row, "pid", json_integer(log->recs[i].pid));
		for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
			rc_copy(row, j, keys[k]);
		/* the first frame, and every frame for the HTML and --json */
		rc_copy(row, j, "site");
		if (json_object_get(row, "site"))
			json_object_set(row, "site_frames", json_object_get(row, "site"));
		json_object_set_new(row, "site", rp_site0(j, "site") ? json_string(rp_site0(j, "site")) : json_null());
		json_array_append_new(rows, row);
	}
	n = json_array_size(rows);
	v = calloc(n ? n : 1, sizeof *v);
	for (i = 0; v && i < n; i++)
		v[i] = json_array_get(rows, i);
	if (v)
		qsort(v, n, sizeof *v, rc_by_waste);
	for (i = 0; v && i < n; i++)
		json_array_append(sorted, v[i]);
	free(v);
	json_decref(rows);
	return sorted;
}

void rp_print_recaptures(FILE *f, const json_t *rows)
{
	const json_t *row;
	size_t i;
	if (!json_array_size(rows))
		return;
	fputs("\n== Captures made again (one site capturing one graph again and again; CGS026)\n", f);
	fprintf(f, "  %-7s %6s %8s %6s %8s %11s %11s %10s %7s  %s\n", "pid", "graphs", "captures", "insts", "launches",
		"wasted (ms)", "capture(ms)", "memory", "buffers", "site");
	json_array_foreach(rows, i, row)
	{
		char mem[32], bufs[16];
		snprintf(bufs, sizeof bufs, "%lld%s", rp_int(row, "buffer_sets", 0),
			 rp_bool(row, "buffer_sets_more") ? "+" : "");
		fprintf(f, "  %-7lld %6lld %8lld %6lld %8lld %11.3f %11.3f %10s %7s  %s\n", rp_int(row, "pid", 0),
			rp_int(row, "fingerprints_at_site", 0), rp_int(row, "captures", 0),
			rp_int(row, "instantiations", 0), rp_int(row, "launches", 0),
			(double)rp_int(row, "wasted_ns", 0) / 1e6, (double)rp_int(row, "capture_ns", 0) / 1e6,
			rp_bytes(rp_int(row, "graph_mem_bytes", 0), mem, sizeof mem), bufs,
			rp_str(row, "site") ? rp_str(row, "site") : "-");
	}
	fputs("  (graphs: distinct graphs the site captured; wasted: capture and instantiation time past the first of "
	      "this graph; memory: the graph allocations of one graph; buffers: distinct pointer sets)\n",
	      f);
}
