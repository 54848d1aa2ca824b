/*
 * tools/report-ranks.c -- `cgshim report` over the logs of several ranks:
 * a table per rank, the cross-rank view (captures per rank, graph memory per
 * rank and device) and divergence (a violation some ranks have and others
 * lack, or captures counted differently).
 *
 * A record's rank is its header's "rank" (the shim writes it on every record
 * of a process that has RANK, LOCAL_RANK, OMPI_COMM_WORLD_RANK or
 * SLURM_PROCID), else its process's start record's "rank". Records of
 * processes with no rank are left out of this view. Only the record kinds
 * used here are parsed (rp_j), so the pass costs little on a large log.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The rank row for rank, made on first use. */
static json_t *rk_row(json_t *rows, json_t *idx, const char *rank)
{
	json_t *row = json_object_get(idx, rank);
	if (row)
		return row;
	row = json_object();
	json_object_set_new(row, "rank", json_string(rank));
	json_object_set_new(row, "pids", json_array());
	json_object_set_new(row, "captures", json_integer(0));
	json_object_set_new(row, "captures_invalidated", json_integer(0));
	json_object_set_new(row, "execs", json_integer(0));
	json_object_set_new(row, "launches", json_integer(0));
	json_object_set_new(row, "violations", json_integer(0));
	json_object_set_new(row, "rules", json_object());
	json_object_set_new(row, "leaks", json_integer(0));
	json_object_set_new(row, "alloc_bytes", json_integer(0));
	/* device memory the captures and instantiations took (cuMemGetInfo
	 * deltas, where sampled): a caching allocator's graph pool shows here,
	 * not in graph memory */
	json_object_set_new(row, "capture_delta", json_integer(0));
	json_object_set_new(row, "capture_malloc", json_integer(0));
	json_object_set_new(row, "instantiate_delta", json_integer(0));
	json_array_append_new(rows, row);
	json_object_set(idx, rank, row);
	return row;
}

/* Ranks sorted as numbers when they are numbers, else as text. */
static int rk_cmp(const void *a, const void *b)
{
	const char *x = json_string_value(json_object_get(*(json_t *const *)a, "rank"));
	const char *y = json_string_value(json_object_get(*(json_t *const *)b, "rank"));
	char *ex, *ey;
	long long nx = strtoll(x, &ex, 10), ny = strtoll(y, &ey, 10);
	if (!*ex && !*ey && *x && *y)
		return nx < ny ? -1 : nx > ny;
	return strcmp(x, y);
}

/* The view's state: rows by rank, graph memory by rank and device, and the
 * record at hand's rank and row (rk_mine). */
struct rk {
	json_t *rows, *idx, *gmem, *gmem_rows, *rule_names;
	const char *rank;
	long long pid;
};

/* The row of the record's rank, its process listed in it. */
static json_t *rk_mine(struct rk *c)
{
	json_t *row = rk_row(c->rows, c->idx, c->rank), *pids = json_object_get(row, "pids"), *p;
	size_t k;
	int have = 0;
	json_array_foreach(pids, k, p) have |= json_integer_value(p) == c->pid;
	if (!have)
		json_array_append_new(pids, json_integer(c->pid));
	return row;
}

static void rk_start(void *ctx, const struct rp_rec *r, const struct rd_start *f)
{
	(void)r, (void)f;
	rk_mine(ctx);
}

static void rk_capture(void *ctx, const struct rp_rec *r, const struct rd_capture *f)
{
	json_t *row = rk_mine(ctx);
	(void)r;
	rp_count(row, "captures", 1);
	if (f->rc)
		rp_count(row, "captures_invalidated", 1);
	rp_count(row, "capture_delta", f->delta);
	rp_count(row, "capture_malloc", f->malloc_bytes);
}

/* only instantiations are counted from call records */
static void rk_call(void *ctx, const struct rp_rec *r, const struct rd_call *f)
{
	json_t *row;
	(void)r;
	if (!f->api || (strncmp(f->api, "cuGraphInstantiate", 18) && strncmp(f->api, "cudaGraphInstantiate", 20)) ||
	    f->rc)
		return;
	row = rk_mine(ctx);
	rp_count(row, "execs", 1);
	rp_count(row, "instantiate_delta", f->delta);
}

static void rk_violation(void *ctx, const struct rp_rec *r, const struct rd_violation *f)
{
	struct rk *c = ctx;
	json_t *row = rk_mine(c);
	const char *rule = f->rule ? f->rule : "?";
	(void)r;
	rp_count(row, "violations", 1);
	rp_count(json_object_get(row, "rules"), rule, 1);
	if (f->name && !json_object_get(c->rule_names, rule))
		json_object_set_new(c->rule_names, rule, json_string(f->name));
}

static void rk_leak(void *ctx, const struct rp_rec *r, const struct rd_leak *f)
{
	(void)r, (void)f;
	rp_count(rk_mine(ctx), "leaks", 1);
}

static void rk_alloc(void *ctx, const struct rp_rec *r, const struct rd_alloc *f)
{
	(void)r;
	rp_count(rk_mine(ctx), "alloc_bytes", f->size);
}

static void rk_summary(void *ctx, const struct rp_rec *r, const struct rd_summary *f)
{
	(void)r;
	rp_count(rk_mine(ctx), "launches", f->launches);
}

/* per rank and device: the latest sample, an exit one preferred; the highs
 * are the largest seen */
static void rk_graphmem(void *ctx, const struct rp_rec *r, const struct rd_graphmem *f)
{
	struct rk *c = ctx;
	char key[160];
	json_t *g;
	long long dev = f->has_dev ? f->dev : -1;
	const char *when = f->when;
	int is_exit = when && !strcmp(when, "exit");

	(void)r;
	rk_mine(c);
	snprintf(key, sizeof key, "%s/%lld", c->rank, dev);
	g = json_object_get(c->gmem, key);
	if (!g) {
		g = json_object();
		json_object_set_new(g, "rank", json_string(c->rank));
		json_object_set_new(g, "dev", json_integer(dev));
		json_object_set_new(g, "used_high", json_integer(0));
		json_object_set_new(g, "reserved_high", json_integer(0));
		json_object_set_new(g, "from", json_string(""));
		json_object_set(c->gmem, key, g);
		json_array_append_new(c->gmem_rows, g);
	}
	if (is_exit || strcmp(json_string_value(json_object_get(g, "from")), "exit")) {
		json_object_set_new(g, "used", json_integer(f->used));
		json_object_set_new(g, "reserved", json_integer(f->reserved));
		json_object_set_new(g, "from", json_string(when ? when : "?"));
		if (f->has_alloc_bytes == 1)
			json_object_set_new(g, "alloc_bytes", json_integer(f->alloc_bytes));
	}
	if (f->used_high > rp_int(g, "used_high", 0))
		json_object_set_new(g, "used_high", json_integer(f->used_high));
	if (f->reserved_high > rp_int(g, "reserved_high", 0))
		json_object_set_new(g, "reserved_high", json_integer(f->reserved_high));
}

static const struct rp_on rk_on = {
    .start = rk_start,
    .capture = rk_capture,
    .call = rk_call,
    .violation = rk_violation,
    .leak = rk_leak,
    .alloc = rk_alloc,
    .summary = rk_summary,
    .graphmem = rk_graphmem,
};

json_t *rp_ranks(const struct rp_log *log)
{
	json_t *rows, *idx, *pid_rank = json_object();
	json_t *gmem, *gmem_rows, *div = json_array();
	json_t *rule_names, *out;
	struct rk c = {json_array(), json_object(), json_object(), json_array(), json_object(), NULL, 0};
	size_t i, nr;

	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		const char *rank;
		char pidkey[32];
		json_t *j;
		if (!rp_on_has(&rk_on, r->kind))
			continue;
		snprintf(pidkey, sizeof pidkey, "%lld", r->pid);
		/* A process whose start record has no rank has none on any
		 * record: its records are not parsed again (a log without
		 * ranks costs this pass its start records only). */
		if (r->kind != RP_EV_START && json_is_null(json_object_get(pid_rank, pidkey)))
			continue;
		j = rp_j(log, i);
		rank = rp_str(j, "rank"); /* the header's, on every record of a ranked process */
		if (rank)
			json_object_set_new(pid_rank, pidkey, json_string(rank));
		else if (r->kind == RP_EV_START)
			json_object_set_new(pid_rank, pidkey, json_null());
		else
			rank = json_string_value(json_object_get(pid_rank, pidkey));
		if (!rank)
			continue;
		c.rank = rank;
		c.pid = r->pid;
		rp_on_call(&rk_on, &c, r, j);
	}
	rows = c.rows, idx = c.idx, gmem = c.gmem, gmem_rows = c.gmem_rows, rule_names = c.rule_names;
	nr = json_array_size(rows);
	if (!nr) {
		json_decref(rows);
		json_decref(idx);
		json_decref(pid_rank);
		json_decref(gmem);
		json_decref(gmem_rows);
		json_decref(div);
		json_decref(rule_names);
		return json_null();
	}
	{
		json_t **v = malloc(nr * sizeof *v), *sorted = json_array();
		for (i = 0; i < nr; i++)
			v[i] = json_array_get(rows, i);
		qsort(v, nr, sizeof *v, rk_cmp);
		for (i = 0; i < nr; i++)
			json_array_append(sorted, v[i]);
		free(v);
		json_decref(rows);
		rows = sorted;
	}

	/* Divergence: a rule some ranks broke and others did not; captures
	 * counted differently across ranks. With one rank there is nothing
	 * to compare. */
	if (nr > 1) {
		json_t *all_rules = json_object(), *row, *d;
		const char *rule;
		json_t *unused;
		json_array_foreach(rows, i, row)
		{
			const char *k;
			json_t *v;
			json_object_foreach(json_object_get(row, "rules"), k, v)
			    json_object_set_new(all_rules, k, json_true());
		}
		json_object_foreach(all_rules, rule, unused)
		{
			json_t *with = json_array(), *without = json_array(), *counts = json_object();
			json_array_foreach(rows, i, row)
			{
				json_t *n = json_object_get(json_object_get(row, "rules"), rule);
				const char *rk = json_string_value(json_object_get(row, "rank"));
				json_array_append_new(n ? with : without, json_string(rk));
				json_object_set_new(counts, rk, json_integer(n ? json_integer_value(n) : 0));
			}
			if (!json_array_size(without)) {
				json_decref(with);
				json_decref(without);
				json_decref(counts);
				continue;
			}
			d = json_object();
			json_object_set_new(d, "what", json_string("violation"));
			json_object_set_new(d, "rule", json_string(rule));
			json_object_set(d, "name",
					json_object_get(rule_names, rule) ? json_object_get(rule_names, rule)
									  : json_null());
			json_object_set_new(d, "ranks_with", with);
			json_object_set_new(d, "ranks_without", without);
			json_object_set_new(d, "count_by_rank", counts);
			json_array_append_new(div, d);
		}
		json_decref(all_rules);
		{
			long long c0 = rp_int(json_array_get(rows, 0), "captures", 0);
			int differ = 0;
			json_array_foreach(rows, i, row) differ |= rp_int(row, "captures", 0) != c0;
			if (differ) {
				json_t *by = json_object();
				d = json_object();
				json_array_foreach(rows, i, row)
				    json_object_set_new(by, json_string_value(json_object_get(row, "rank")),
							json_integer(rp_int(row, "captures", 0)));
				json_object_set_new(d, "what", json_string("captures"));
				json_object_set_new(d, "count_by_rank", by);
				json_array_append_new(div, d);
			}
		}
	}
	out = json_object();
	json_object_set_new(out, "ranks", rows);
	json_object_set_new(out, "graphmem", gmem_rows);
	json_object_set_new(out, "divergence", div);
	json_object_set_new(out, "where", rp_where(log));
	json_decref(idx);
	json_decref(pid_rank);
	json_decref(gmem);
	json_decref(rule_names);
	return out;
}

static void rk_list(FILE *f, const json_t *a)
{
	size_t i;
	json_t *v;
	json_array_foreach(a, i, v) fprintf(f, "%s%s", i ? ", " : "", json_string_value(v));
}

void rp_print_ranks(FILE *f, const json_t *ranks)
{
	json_t *rows = json_object_get(ranks, "ranks"), *row, *g;
	size_t i, k;
	char b1[32], b2[32], b3[32], b4[32];
	if (!json_is_object(ranks) || !json_array_size(rows))
		return;
	fputs("\n== Ranks (one table per rank)\n", f);
	json_array_foreach(rows, i, row)
	{
		const char *rk = json_string_value(json_object_get(row, "rank"));
		json_t *v;
		const char *rule;
		fprintf(f, "\n  rank %s  (pid", rk);
		json_array_foreach(json_object_get(row, "pids"), k, v)
		    fprintf(f, "%s %" JSON_INTEGER_FORMAT, k ? "," : "", json_integer_value(v));
		fputs(")\n", f);
		fprintf(f, "    captures     %lld (%lld invalidated)\n", rp_int(row, "captures", 0),
			rp_int(row, "captures_invalidated", 0));
		fprintf(f, "    executables  %lld\n", rp_int(row, "execs", 0));
		fprintf(f, "    launches     %lld\n", rp_int(row, "launches", 0));
		fprintf(f, "    graph allocations %s\n", rp_bytes(rp_int(row, "alloc_bytes", 0), b1, sizeof b1));
		fprintf(f, "    device memory taken: captures %s (plain allocations %s), instantiations %s\n",
			rp_bytes(rp_int(row, "capture_delta", 0), b1, sizeof b1),
			rp_bytes(rp_int(row, "capture_malloc", 0), b2, sizeof b2),
			rp_bytes(rp_int(row, "instantiate_delta", 0), b3, sizeof b3));
		fprintf(f, "    leaks        %lld\n", rp_int(row, "leaks", 0));
		fprintf(f, "    violations   %lld", rp_int(row, "violations", 0));
		k = 0;
		json_object_foreach(json_object_get(row, "rules"), rule, v)
		    fprintf(f, "%s%s x%" JSON_INTEGER_FORMAT, k++ ? ", " : " (", rule, json_integer_value(v));
		fputs(k ? ")\n" : "\n", f);
		json_array_foreach(json_object_get(ranks, "graphmem"), k, g)
		{
			if (strcmp(json_string_value(json_object_get(g, "rank")), rk))
				continue;
			fprintf(f, "    graph memory dev %lld: used %s (high %s), reserved %s (high %s)\n",
				rp_int(g, "dev", -1), rp_bytes(rp_int(g, "used", 0), b1, sizeof b1),
				rp_bytes(rp_int(g, "used_high", 0), b2, sizeof b2),
				rp_bytes(rp_int(g, "reserved", 0), b3, sizeof b3),
				rp_bytes(rp_int(g, "reserved_high", 0), b4, sizeof b4));
		}
	}

	fputs("\n== Cross-rank\n", f);
	fprintf(f, "  %-8s %-9s %-11s %-11s %-10s %-12s %-12s\n", "rank", "captures", "invalidated", "executables",
		"violations", "capture_mem", "inst_mem");
	json_array_foreach(rows, i, row) fprintf(
	    f, "  %-8s %-9lld %-11lld %-11lld %-10lld %-12s %-12s\n", json_string_value(json_object_get(row, "rank")),
	    rp_int(row, "captures", 0), rp_int(row, "captures_invalidated", 0), rp_int(row, "execs", 0),
	    rp_int(row, "violations", 0), rp_bytes(rp_int(row, "capture_delta", 0), b1, sizeof b1),
	    rp_bytes(rp_int(row, "instantiate_delta", 0), b2, sizeof b2));
	if (json_array_size(json_object_get(ranks, "graphmem"))) {
		fputs("\n  graph memory per rank and device\n", f);
		fprintf(f, "  %-8s %-4s %-12s %-12s %-12s %-12s\n", "rank", "dev", "used", "used_high", "reserved",
			"reserved_high");
		json_array_foreach(json_object_get(ranks, "graphmem"), k, g)
		    fprintf(f, "  %-8s %-4lld %-12s %-12s %-12s %-12s\n", json_string_value(json_object_get(g, "rank")),
			    rp_int(g, "dev", -1), rp_bytes(rp_int(g, "used", 0), b1, sizeof b1),
			    rp_bytes(rp_int(g, "used_high", 0), b2, sizeof b2),
			    rp_bytes(rp_int(g, "reserved", 0), b3, sizeof b3),
			    rp_bytes(rp_int(g, "reserved_high", 0), b4, sizeof b4));
	}
	rp_print_where(f, json_object_get(ranks, "where"));
	json_array_foreach(json_object_get(ranks, "divergence"), i, g)
	{
		const char *what = json_string_value(json_object_get(g, "what"));
		if (!i)
			fputs("\n== Divergence across ranks\n", f);
		if (!strcmp(what, "violation")) {
			fprintf(f, "  DIVERGENCE %s %s: on rank ", json_string_value(json_object_get(g, "rule")),
				json_is_string(json_object_get(g, "name"))
				    ? json_string_value(json_object_get(g, "name"))
				    : "");
			rk_list(f, json_object_get(g, "ranks_with"));
			fputs(" only, not on rank ", f);
			rk_list(f, json_object_get(g, "ranks_without"));
			fputc('\n', f);
		} else {
			const char *rk;
			json_t *v;
			fputs("  DIVERGENCE captures per rank:", f);
			json_object_foreach(json_object_get(g, "count_by_rank"), rk, v)
			    fprintf(f, " %s=%" JSON_INTEGER_FORMAT, rk, json_integer_value(v));
			fputc('\n', f);
		}
	}
}
