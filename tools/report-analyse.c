/*
 * tools/report-analyse.c -- the analysis document of `cgshim report`
 * (summary, violations, memory tables, failing calls): one handler per
 * record kind, dispatched from the generated table (struct rp_on,
 * shim/gen-records.py report), each reading its record through the typed
 * reader of the schema (struct rd_<event>). Rendering is report.c's.
 *
 * A handler reads scalars through its struct; where a row echoes the
 * record's own values (rp_copy), it copies them from f->j as they are, so
 * the document says what the log said, whatever its types.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Fields every record has; left out when a record is shown "in full". */
static int rp_std_field(const char *k)
{
	return !strcmp(k, "v") || !strcmp(k, "ev") || !strcmp(k, "seq") || !strcmp(k, "ts");
}

static int rp_prefix(const char *s, const char *p)
{
	return s && !strncmp(s, p, strlen(p));
}

static int rp_is_launch(const char *api)
{
	return rp_prefix(api, "cuGraphLaunch") || rp_prefix(api, "cudaGraphLaunch");
}

static int rp_is_instantiate(const char *api)
{
	return rp_prefix(api, "cuGraphInstantiate") || rp_prefix(api, "cudaGraphInstantiate");
}

static int rp_is_update(const char *api)
{
	return rp_prefix(api, "cuGraphExecUpdate") || rp_prefix(api, "cudaGraphExecUpdate");
}

/* a - b in milliseconds, in double: ts comes from the file and may be any
 * int64, where the difference would overflow. */
static double rp_ms(long long a, long long b)
{
	return ((double)a - (double)b) / 1e6;
}

static void rp_set_str(json_t *o, const char *key, const char *val)
{
	json_object_set_new(o, key, val ? json_string(val) : json_null());
}

/* Copy field key of rec into o if present (any type). */
static void rp_copy(json_t *o, const json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);
	if (v)
		json_object_set(o, key, v);
}

static void rp_copy_or_null(json_t *o, const json_t *rec, const char *key)
{
	json_t *v = json_object_get(rec, key);
	json_object_set(o, key, v ? v : json_null());
}

static void rp_key(char *buf, size_t len, long long pid, const char *a, const char *b)
{
	snprintf(buf, len, "%lld\x1f%s\x1f%s", pid, a ? a : "", b ? b : "");
}

/* Accumulated state for the per-pool table: one object per (pid, pool). */
static json_t *rp_pool_row(json_t *index, json_t *rows, long long pid, const char *pool)
{
	char key[256];
	json_t *row;

	rp_key(key, sizeof key, pid, pool, NULL);
	row = json_object_get(index, key);
	if (row)
		return row;
	row = json_object();
	json_object_set_new(row, "pid", json_integer(pid));
	rp_set_str(row, "pool", pool);
	json_object_set_new(row, "allocs", json_integer(0));
	json_object_set_new(row, "alloc_bytes", json_integer(0));
	json_object_set_new(row, "default", json_false());
	json_object_set_new(row, "ipc", json_false());
	json_object_set_new(row, "site", json_null());
	json_array_append_new(rows, row);
	json_object_set(index, key, row);
	return row;
}

/* The counts the shim's exit summary also gives: report key, summary key. */
static const char *const rp_exact[][2] = {
    {"graphs", "graphs"},
    {"execs", "execs"},
    {"launches", "launches"},
    {"updates", "updates"},
    {"updates_failed", "update_failures"},
    {"violations", "violations"},
    {"captures", "captures"},
    {"captures_invalidated", "captures_invalidated"},
    {"rewrites", "rewrites"},
};
#define RP_NEXACT (sizeof rp_exact / sizeof rp_exact[0])

/* derived[pid][key] += by: the per-process share of a count made from the
 * records, replaced by the shim's own figure where it wrote its summary. */
static void rp_pcount(json_t *derived, long long pid, const char *key, long long by)
{
	char pk[32];
	json_t *o;
	snprintf(pk, sizeof pk, "%lld", pid);
	o = json_object_get(derived, pk);
	if (!o) {
		o = json_object();
		json_object_set_new(derived, pk, o);
	}
	rp_count(o, key, by);
}

/* The analysis' state, shared by the handlers. */
struct an {
	json_t *procs, *pids, *graphs, *failures, *sev, *viol, *viol_idx, *caps, *cap_tot;
	json_t *pools, *pool_idx, *pool_seen, *gmem, *fails, *fail_idx, *leaks, *launch_cur, *shim_sum;
	json_t *broken;			 /* invalidated and abandoned captures, in log order */
	json_t *chains;			 /* "broken": a failed end linked to its first breaking call */
	json_t *derived;		 /* per process: the records' share of the exact counts */
	json_t *cap_idx;		 /* "pid/capture" -> its row, while pending */
	json_t *cap_pending;		 /* capture rows waiting for their instantiation, in log order */
	json_t *cap_group_idx;		 /* a row's figures (an_cap_key) -> its group in caps */
	json_t *cap_rest, *cap_rest_idx; /* past AN_CAP_GROUPS: per process, site and batch size */
	json_t *cap_last;		 /* per process: the highest capture id seen */
	long long cap_rest_other;	 /* captures past AN_CAP_REST rest rows too */
	json_t *abandoned_idx, *shim_by_pid, *rw_rows, *exec_graph;
	long long captures, cap_ok, execs, upd_ok, upd_fail, rewrites;
	long long nleaks, leak_bytes, nviol, launches_rec, launches_trace;
	long long nmismatch, nwarn, nfail, nshim_sum, t0, ninvalidated, nabandoned;
	int have_launch_recs;
};

static const char *const an_cap_cols[] = {"alloc_nodes", "alloc_bytes", "malloc_bytes", "free_before",
					  "free_after",	 "delta",	"unattributed"};
#define AN_NCAP_COLS (sizeof an_cap_cols / sizeof an_cap_cols[0])

/* Captures in bounded memory (issue 35): a capture's row waits (pending,
 * at most AN_CAP_PENDING, oldest first out) for its instantiation to join
 * the memory it took, then is folded into its group: the rows identical
 * but for capture and graph (rp_fold_rows' rule), kept with "count" and
 * "last_capture", in first-seen order. Past AN_CAP_GROUPS groups a row of
 * new figures is counted per process, site and batch size (alloc_bytes) in
 * "captures_rest" (at most AN_CAP_REST rows, then in one count). So the
 * memory is flat in the number of captures; the tables say the same as
 * one row per capture folded at print, but for an instantiation more than
 * AN_CAP_PENDING captures after its capture (its delta is in the totals,
 * not on the row). */
#define AN_CAP_PENDING 256
#define AN_CAP_GROUPS 1000
#define AN_CAP_REST 1000

static void an_cap_rest(struct an *a, json_t *row)
{
	char key[1024];
	const char *site = rp_str(row, "site");
	json_t *g;

	snprintf(key, sizeof key, "%lld\x1f%s\x1f%lld", rp_int(row, "pid", 0), site ? site : "",
		 rp_int(row, "alloc_bytes", -1));
	g = json_object_get(a->cap_rest_idx, key);
	if (!g) {
		if (json_array_size(a->cap_rest) >= AN_CAP_REST) {
			a->cap_rest_other++;
			return;
		}
		g = json_object();
		json_object_set(g, "pid", json_object_get(row, "pid"));
		json_object_set(g, "site", json_object_get(row, "site"));
		json_object_set(g, "alloc_bytes", json_object_get(row, "alloc_bytes"));
		json_object_set_new(g, "count", json_integer(0));
		json_object_set_new(g, "invalidated", json_integer(0));
		json_object_set(g, "first_capture", json_object_get(row, "capture"));
		json_array_append_new(a->cap_rest, g);
		json_object_set(a->cap_rest_idx, key, g);
	}
	json_object_set_new(g, "count", json_integer(rp_int(g, "count", 0) + 1));
	if (rp_int(row, "rc", 0))
		json_object_set_new(g, "invalidated", json_integer(rp_int(g, "invalidated", 0) + 1));
	json_object_set(g, "last_capture", json_object_get(row, "capture"));
}

/* The oldest pending row into its group (or the rest). */
static void an_cap_fold(struct an *a)
{
	json_t *row = json_incref(json_array_get(a->cap_pending, 0)), *key, *g;
	char ik[64], *k;

	json_array_remove(a->cap_pending, 0);
	snprintf(ik, sizeof ik, "%lld/%lld", rp_int(row, "pid", 0), rp_int(row, "capture", 0));
	if (json_object_get(a->cap_idx, ik) == row)
		json_object_del(a->cap_idx, ik);
	key = json_deep_copy(row);
	json_object_del(key, "capture");
	json_object_del(key, "graph");
	k = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	json_decref(key);
	g = k ? json_object_get(a->cap_group_idx, k) : NULL;
	if (g) {
		json_object_set_new(g, "count", json_integer(rp_int(g, "count", 0) + 1));
		json_object_set(g, "last_capture", json_object_get(row, "capture"));
	} else if (k && json_array_size(a->caps) < AN_CAP_GROUPS) {
		json_object_set_new(row, "count", json_integer(1));
		json_object_set(row, "last_capture", json_object_get(row, "capture"));
		json_array_append(a->caps, row);
		json_object_set(a->cap_group_idx, k, row);
	} else {
		an_cap_rest(a, row);
	}
	free(k);
	json_decref(row);
}

static void an_pidkey(char *buf, size_t len, const struct rp_rec *r)
{
	snprintf(buf, len, "%lld", r->pid);
}

static void an_start(void *ctx, const struct rp_rec *r, const struct rd_start *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"exe", "ppid", "rank", "version", "lib", "log_level"};
	char pidkey[32];
	json_t *p;
	unsigned k;

	an_pidkey(pidkey, sizeof pidkey, r);
	p = json_object_get(a->pids, pidkey);
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy(p, f->j, keep[k]);
}

static void an_call(void *ctx, const struct rp_rec *r, const struct rd_call *f)
{
	struct an *a = ctx;
	const char *api = f->api;
	long long rc = f->rc;
	char key[1024];

	if (rp_is_instantiate(api) && rc == 0) {
		a->execs++;
		rp_pcount(a->derived, r->pid, "execs", 1);
	}
	/* Device memory the instantiation of a captured graph took (the
	 * driver reserves the exec's own memory here, not in the capture):
	 * joined to that capture's row. */
	if (rp_is_instantiate(api) && rc == 0 && f->has_delta == 1 && f->capture) {
		json_t *crow;
		snprintf(key, sizeof key, "%lld/%lld", r->pid, f->capture);
		if ((crow = json_object_get(a->cap_idx, key))) { /* the first such capture */
			json_object_set_new(crow, "instantiate_delta", json_integer(f->delta));
			rp_count(a->cap_tot, "instantiate_delta", f->delta);
		} else {
			/* its row already folded: the totals still have it */
			char pk[32];
			snprintf(pk, sizeof pk, "%lld", r->pid);
			if (f->capture <= rp_int(a->cap_last, pk, 0))
				rp_count(a->cap_tot, "instantiate_delta", f->delta);
		}
	}
	if (rp_is_update(api)) {
		rc == 0 ? a->upd_ok++ : a->upd_fail++;
		rp_pcount(a->derived, r->pid, "updates", 1);
		rp_pcount(a->derived, r->pid, "updates_failed", rc != 0);
	}
	if (rp_is_launch(api) && rc == 0) {
		a->launches_trace++;
		rp_pcount(a->derived, r->pid, "launches_trace", 1);
	}
	if (rc != 0) {
		const char *err = f->err;
		char rcbuf[32];
		json_t *row;
		if (!err) {
			snprintf(rcbuf, sizeof rcbuf, "rc=%lld", rc);
			err = rcbuf;
		}
		a->nfail++;
		rp_count(a->failures, err, 1);
		rp_key(key, sizeof key, 0, api ? api : "?", err);
		row = json_object_get(a->fail_idx, key);
		if (!row) {
			row = json_object();
			rp_set_str(row, "api", api ? api : "?");
			rp_set_str(row, "err", err);
			json_object_set_new(row, "rc", json_integer(rc));
			json_object_set_new(row, "count", json_integer(0));
			rp_set_str(row, "via", f->via);
			rp_set_str(row, "site", f->site);
			json_object_set_new(row, "first_pid", json_integer(r->pid));
			json_array_append_new(a->fails, row);
			json_object_set(a->fail_idx, key, row);
		}
		rp_count(row, "count", 1);
	}
}

static void an_capture(void *ctx, const struct rp_rec *r, const struct rd_capture *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"capture", "stream", "mode", "graph", "rc", "dur_ns", "begin_tid"};
	/* an_cap_cols' figures, as read: 1 a number */
	const unsigned char has[AN_NCAP_COLS] = {f->has_alloc_nodes, f->has_alloc_bytes, f->has_malloc_bytes,
						 f->has_free_before, f->has_free_after,	 f->has_delta,
						 f->has_unattributed};
	const long long val[AN_NCAP_COLS] = {f->alloc_nodes, f->alloc_bytes, f->malloc_bytes, f->free_before,
					     f->free_after,  f->delta,	     f->unattributed};
	json_t *row = json_object();
	char key[64];
	unsigned k;

	a->captures++;
	if (f->rc == 0)
		a->cap_ok++;
	rp_pcount(a->derived, r->pid, "captures", 1);
	rp_pcount(a->derived, r->pid, "captures_invalidated", f->rc != 0);
	json_object_set_new(row, "pid", json_integer(r->pid));
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy_or_null(row, f->j, keep[k]);
	for (k = 0; k < AN_NCAP_COLS; k++) {
		rp_copy_or_null(row, f->j, an_cap_cols[k]);
		if (has[k] == 1)
			rp_count(a->cap_tot, an_cap_cols[k], val[k]);
	}
	rp_set_str(row, "site", f->site);
	snprintf(key, sizeof key, "%lld/%lld", r->pid, f->capture);
	if (!json_object_get(a->cap_idx, key))
		json_object_set(a->cap_idx, key, row);
	snprintf(key, sizeof key, "%lld", r->pid);
	if (f->capture > rp_int(a->cap_last, key, 0))
		json_object_set_new(a->cap_last, key, json_integer(f->capture));
	if (json_array_size(a->cap_pending) >= AN_CAP_PENDING)
		an_cap_fold(a);
	json_array_append_new(a->cap_pending, row);
}

/* count is the exec's running total; "every" records are superseded by
 * the exec's later records. */
static void an_launches(void *ctx, const struct rp_rec *r, const struct rd_launches *f)
{
	struct an *a = ctx;
	char key[1024];

	a->have_launch_recs = 1;
	rp_key(key, sizeof key, r->pid, f->exec, NULL);
	if (f->reason && !strcmp(f->reason, "every")) {
		json_object_set_new(a->launch_cur, key, json_integer(f->count));
	} else {
		a->launches_rec += f->count;
		rp_pcount(a->derived, r->pid, "launches_rec", f->count);
		json_object_del(a->launch_cur, key);
	}
}

/* The call site of a violation is among its rule's objects (the schema's
 * EXT rows), so it is read from the record itself. */
static void an_violation(void *ctx, const struct rp_rec *r, const struct rd_violation *f)
{
	struct an *a = ctx;
	const char *rule = f->rule, *s0 = rp_site0(f->j, "site");
	json_t *row, *first, *v;
	const char *k;
	char key[1024];

	a->nviol++;
	rp_pcount(a->derived, r->pid, "violations", 1);
	rp_count(a->sev, f->severity ? f->severity : "?", 1);
	rp_key(key, sizeof key, 0, rule ? rule : "?", s0);
	row = json_object_get(a->viol_idx, key);
	if (!row) {
		row = json_object();
		rp_set_str(row, "rule", rule ? rule : "?");
		rp_set_str(row, "name", f->name);
		rp_set_str(row, "severity", f->severity);
		rp_set_str(row, "site", s0);
		/* the rule's page, also for logs older than the violation
		 * record's "doc" field */
		json_object_set_new(row, "doc", json_sprintf("%s%s.md", CGSHIM_RULE_DOC_DIR, rule ? rule : "README"));
		json_object_set_new(row, "count", json_integer(0));
		first = json_object();
		json_object_foreach((json_t *)f->j, k, v) if (!rp_std_field(k)) json_object_set(first, k, v);
		json_object_set_new(first, "t_ms", json_real(rp_ms(r->ts, a->t0)));
		json_object_set_new(row, "first", first);
		json_array_append_new(a->viol, row);
		json_object_set(a->viol_idx, key, row);
	}
	rp_count(row, "count", 1);
}

/* keyed as the violation's row; its call site is under the violation's own
 * field name (the schema's DYN row), "site" for most rules */
static void an_repeat(void *ctx, const struct rp_rec *r, const struct rd_repeat *f)
{
	struct an *a = ctx;
	char key[1024];
	long long more;

	rp_key(key, sizeof key, 0, f->rule ? f->rule : "?", rp_site0(f->j, "site"));
	more = rp_fold_repeat(json_object_get(a->viol_idx, key), f->j, a->sev);
	a->nviol += more;
	rp_pcount(a->derived, r->pid, "violations", more);
}

static void an_rewrite(void *ctx, const struct rp_rec *r, const struct rd_rewrite *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"exec", "graph", "reason", "why", "rc_update", "reused", "dur_ns"};
	json_t *row = json_object();
	unsigned k;

	a->rewrites++;
	rp_pcount(a->derived, r->pid, "rewrites", 1);
	json_object_set_new(row, "t_ms", json_real((double)(r->ts - a->t0) / 1e6));
	json_object_set_new(row, "pid", json_integer(r->pid));
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy_or_null(row, f->j, keep[k]);
	json_array_append_new(a->rw_rows, row);
}

static void an_leak(void *ctx, const struct rp_rec *r, const struct rd_leak *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"dptr", "size", "pool", "exec", "graph", "when"};
	json_t *row = json_object();
	unsigned k;

	a->nleaks++;
	a->leak_bytes += f->size;
	json_object_set_new(row, "pid", json_integer(r->pid));
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy_or_null(row, f->j, keep[k]);
	rp_set_str(row, "site", f->site);
	json_array_append_new(a->leaks, row);
}

static void an_alloc(void *ctx, const struct rp_rec *r, const struct rd_alloc *f)
{
	struct an *a = ctx;
	json_t *row = rp_pool_row(a->pool_idx, a->pools, r->pid, f->pool);

	rp_count(row, "allocs", 1);
	rp_count(row, "alloc_bytes", f->size);
	json_object_set_new(row, "default", json_boolean(f->pool_default));
	json_object_set_new(row, "ipc", json_boolean(f->ipc));
	if (json_is_null(json_object_get(row, "site")) && f->pool_site)
		rp_set_str(row, "site", f->pool_site);
}

static void an_pool(void *ctx, const struct rp_rec *r, const struct rd_pool *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"dev", "reserved", "reserved_high", "used", "used_high"};
	json_t *row = rp_pool_row(a->pool_idx, a->pools, r->pid, f->pool);
	char key[1024];
	unsigned k;

	rp_key(key, sizeof key, r->pid, f->pool, NULL);
	json_object_set_new(a->pool_seen, key, json_true());
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy(row, f->j, keep[k]);
	json_object_set_new(row, "default", json_boolean(f->default_));
	json_object_set_new(row, "ipc", json_boolean(f->ipc));
	/* Without alloc records (log level below info in some process) the
	 * pool's own tally is all there is. */
	if (json_integer_value(json_object_get(row, "allocs")) == 0) {
		json_object_set_new(row, "allocs", json_integer(f->allocs));
		json_object_set_new(row, "alloc_bytes", json_integer(f->alloc_bytes));
	}
	if (f->site)
		rp_set_str(row, "site", f->site);
}

static void an_graphmem(void *ctx, const struct rp_rec *r, const struct rd_graphmem *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"dev", "when", "exec", "used", "used_high", "reserved", "reserved_high"};
	json_t *row = json_object();
	unsigned k;

	json_object_set_new(row, "t_ms", json_real(rp_ms(r->ts, a->t0)));
	json_object_set_new(row, "pid", json_integer(r->pid));
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy_or_null(row, f->j, keep[k]);
	json_array_append_new(a->gmem, row);
}

static void an_mismatch(void *ctx, const struct rp_rec *r, const struct rd_mismatch *f)
{
	(void)r, (void)f;
	((struct an *)ctx)->nmismatch++;
}

static void an_warning(void *ctx, const struct rp_rec *r, const struct rd_warning *f)
{
	(void)r, (void)f;
	((struct an *)ctx)->nwarn++;
}

/* One row per invalidated or abandoned record: what broke a capture (or
 * found it broken), and a capture never ended with the first call it made
 * fail. */
static json_t *an_broken_row(struct an *a, const struct rp_rec *r, const json_t *j, const char *begin_site,
			     const char *site)
{
	static const char *const keep[] = {"capture", "mode", "begin_tid", "found_by", "reason",
					   "api",     "rc",   "call_tid",  "age_ns"};
	json_t *row = json_object();
	unsigned k;

	rp_set_str(row, "what", rp_ev_names[r->kind]);
	json_object_set_new(row, "pid", json_integer(r->pid));
	json_object_set_new(row, "t_ms", json_real((double)(r->ts - a->t0) / 1e6));
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy(row, j, keep[k]);
	rp_set_str(row, "begin_site", begin_site);
	rp_set_str(row, "site", site);
	json_array_append_new(a->broken, row);
	return row;
}

static void an_invalidated(void *ctx, const struct rp_rec *r, const struct rd_invalidated *f)
{
	struct an *a = ctx;
	an_broken_row(a, r, f->j, f->begin_site, f->site);
	a->ninvalidated++;
}

static void an_abandoned(void *ctx, const struct rp_rec *r, const struct rd_abandoned *f)
{
	struct an *a = ctx;
	char key[64];

	an_broken_row(a, r, f->j, f->begin_site, f->site);
	/* a capture is named at a refusal and again at exit */
	snprintf(key, sizeof key, "%lld/%lld", r->pid, f->capture);
	if (!json_object_get(a->abandoned_idx, key)) {
		json_object_set_new(a->abandoned_idx, key, json_true());
		a->nabandoned++;
	}
}

/* One block per failed end: the capture (begin thread, name, site), the
 * first call that broke it (API, rule, thread, name, site) and the end's
 * result. */
static void an_broken(void *ctx, const struct rp_rec *r, const struct rd_broken *f)
{
	struct an *a = ctx;
	static const char *const keep[] = {"capture", "stream", "mode",	     "begin_tid", "begin_thread",
					   "rc",      "err",	"end_tid",   "by_api",	  "by_rule",
					   "by_rc",   "by_tid", "by_thread", "msg"};
	json_t *row = json_object();
	unsigned k;

	json_object_set_new(row, "pid", json_integer(r->pid));
	for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
		rp_copy(row, f->j, keep[k]);
	rp_set_str(row, "begin_site", f->begin_site);
	rp_set_str(row, "by_site", f->by_site);
	json_array_append_new(a->chains, row);
}

/* Every integer of the exit summary is added up, whatever its name (a
 * newer shim's counts too). */
static void an_summary(void *ctx, const struct rp_rec *r, const struct rd_summary *f)
{
	struct an *a = ctx;
	char pidkey[32];
	const char *k;
	json_t *v;

	an_pidkey(pidkey, sizeof pidkey, r);
	a->nshim_sum++;
	json_object_set(a->shim_by_pid, pidkey, (json_t *)f->j);
	json_object_foreach((json_t *)f->j, k, v)
	{
		if (!rp_std_field(k) && strcmp(k, "pid") && strcmp(k, "tid") && json_is_integer(v))
			rp_count(a->shim_sum, k, json_integer_value(v));
	}
}

static const struct rp_on an_on = {
    .start = an_start,
    .call = an_call,
    .capture = an_capture,
    .launches = an_launches,
    .violation = an_violation,
    .repeat = an_repeat,
    .rewrite = an_rewrite,
    .leak = an_leak,
    .alloc = an_alloc,
    .pool = an_pool,
    .graphmem = an_graphmem,
    .mismatch = an_mismatch,
    .warning = an_warning,
    .invalidated = an_invalidated,
    .abandoned = an_abandoned,
    .broken = an_broken,
    .summary = an_summary,
};

/* What every record gives, whatever its kind: its process, the graph it
 * names, the graph an exec runs (for the graph-memory table's rows). */
static void an_every(struct an *a, const struct rp_rec *r, const json_t *j)
{
	const char *graph = rp_str(j, "graph"), *exec = rp_str(j, "exec");
	char key[1024], pidkey[32];

	an_pidkey(pidkey, sizeof pidkey, r);
	if (!json_object_get(a->pids, pidkey)) {
		json_t *p = json_object();
		json_object_set_new(p, "pid", json_integer(r->pid));
		json_object_set_new(p, "exe", json_null());
		json_object_set_new(p, "records", json_integer(0));
		json_array_append_new(a->procs, p);
		json_object_set(a->pids, pidkey, p);
	}
	rp_count(json_object_get(a->pids, pidkey), "records", 1);
	if (graph && r->kind != RP_EV_SUMMARY) {
		rp_key(key, sizeof key, r->pid, graph, NULL);
		if (!json_object_get(a->graphs, key))
			rp_pcount(a->derived, r->pid, "graphs", 1);
		json_object_set_new(a->graphs, key, json_true());
	}
	if (exec && graph && r->kind != RP_EV_NODE) {
		rp_key(key, sizeof key, r->pid, exec, NULL);
		json_object_set_new(a->exec_graph, key, json_string(graph));
	}
}

static long long rp_geti(const json_t *o, const char *k)
{
	return rp_int(o, k, 0);
}

json_t *rp_analyse(const struct rp_log *log)
{
	json_t *doc = json_object(), *sum = json_object(), *files = json_array();
	struct an a = {0};
	long long unknown = 0;
	const char *tk;
	json_t *tv;
	unsigned fi;
	size_t i;

	a.procs = json_array(), a.pids = json_object(), a.graphs = json_object();
	a.failures = json_object(), a.sev = json_object(), a.viol = json_array(), a.viol_idx = json_object();
	a.caps = json_array(), a.cap_tot = json_object(), a.pools = json_array(), a.pool_idx = json_object();
	a.pool_seen = json_object(), a.gmem = json_array(), a.fails = json_array(), a.fail_idx = json_object();
	a.leaks = json_array(), a.launch_cur = json_object(), a.shim_sum = json_object(), a.broken = json_array();
	a.abandoned_idx = json_object(), a.chains = json_array(), a.derived = json_object();
	a.shim_by_pid = json_object(), a.rw_rows = json_array(), a.exec_graph = json_object();
	a.cap_idx = json_object(), a.cap_pending = json_array(), a.cap_group_idx = json_object();
	a.cap_rest = json_array(), a.cap_rest_idx = json_object(), a.cap_last = json_object();

	for (fi = 0; fi < log->nfiles; fi++)
		json_array_append_new(files, json_string(log->files[fi]));
	if (log->n)
		a.t0 = log->recs[0].ts;
	for (i = 0; i < AN_NCAP_COLS; i++)
		json_object_set_new(a.cap_tot, an_cap_cols[i], json_integer(0));

	for (i = 0; i < log->n; i++) {
		const json_t *j = rp_j(log, i);
		an_every(&a, &log->recs[i], j);
		if (rp_on_call(&an_on, &a, &log->recs[i], j) < 0)
			unknown++; /* a kind the schema lacks: counted, not fatal */
	}
	while (json_array_size(a.cap_pending))
		an_cap_fold(&a);
	json_object_foreach(a.launch_cur, tk, tv)
	{
		a.launches_rec += json_integer_value(tv);
		rp_pcount(a.derived, strtoll(tk, NULL, 10), "launches_rec", json_integer_value(tv));
	}
	/* The graph each graph-memory sample's exec runs. */
	{
		json_t *row;
		json_array_foreach(a.gmem, i, row)
		{
			const char *ex = rp_str(row, "exec");
			char key[256];
			rp_key(key, sizeof key, rp_geti(row, "pid"), ex, NULL);
			json_object_set(row, "graph",
					ex && *ex && json_object_get(a.exec_graph, key)
					    ? json_object_get(a.exec_graph, key)
					    : json_null());
		}
	}

	json_object_set_new(sum, "records", json_integer((json_int_t)log->n));
	json_object_set_new(sum, "processes", json_integer((json_int_t)json_array_size(a.procs)));
	json_object_set_new(sum, "captures", json_integer(a.captures));
	json_object_set_new(sum, "captures_ok", json_integer(a.cap_ok));
	json_object_set_new(sum, "captures_invalidated", json_integer(a.captures - a.cap_ok));
	json_object_set_new(sum, "invalidations", json_integer(a.ninvalidated));
	json_object_set_new(sum, "captures_abandoned", json_integer(a.nabandoned));
	json_object_set_new(sum, "graphs", json_integer((json_int_t)json_object_size(a.graphs)));
	json_object_set_new(sum, "execs", json_integer(a.execs));
	json_object_set_new(sum, "launches", json_integer(a.have_launch_recs ? a.launches_rec : a.launches_trace));
	json_object_set_new(sum, "launches_from",
			    json_string(a.have_launch_recs ? "launches"
					: a.launches_trace ? "trace"
							   : "none"));
	json_object_set_new(sum, "updates", json_integer(a.upd_ok + a.upd_fail));
	json_object_set_new(sum, "updates_ok", json_integer(a.upd_ok));
	json_object_set_new(sum, "updates_failed", json_integer(a.upd_fail));
	json_object_set_new(sum, "failures", json_integer(a.nfail));
	json_object_set_new(sum, "failures_by_error", a.failures);
	json_object_set_new(sum, "rewrites", json_integer(a.rewrites));
	json_object_set_new(sum, "leaks", json_integer(a.nleaks));
	json_object_set_new(sum, "leak_bytes", json_integer(a.leak_bytes));
	json_object_set_new(sum, "violations", json_integer(a.nviol));
	json_object_set_new(sum, "violations_by_severity", a.sev);
	/* Where a process wrote its exit summary, its counts are the shim's
	 * own: the model sees what the records at the log's level do not
	 * (graphs by creation, not by handle, which the allocator reuses;
	 * violations only counted under reinstantiate; updates whose call
	 * record is below the level). The records' share of that process is
	 * taken out and the summary's put in. */
	{
		const char *pk;
		json_t *sr;
		long long exact_procs = 0;
		json_object_foreach(a.shim_by_pid, pk, sr)
		{
			json_t *d = json_object_get(a.derived, pk);
			exact_procs++;
			rp_count(sum, "records_condensed", rp_int(sr, "records_condensed", 0));
			for (i = 0; i < RP_NEXACT; i++) {
				const char *mine = rp_exact[i][0];
				long long had = d ? rp_int(d, mine, 0) : 0;
				if (!json_is_integer(json_object_get(sr, rp_exact[i][1])))
					continue;
				if (!strcmp(mine, "launches"))
					had = d ? (a.have_launch_recs ? rp_int(d, "launches_rec", 0)
								      : rp_int(d, "launches_trace", 0))
						: 0;
				rp_count(sum, mine, rp_int(sr, rp_exact[i][1], 0) - had);
			}
		}
		json_object_set_new(sum, "captures_ok",
				    json_integer(rp_geti(sum, "captures") - rp_geti(sum, "captures_invalidated")));
		json_object_set_new(sum, "updates_ok",
				    json_integer(rp_geti(sum, "updates") - rp_geti(sum, "updates_failed")));
		if (exact_procs)
			json_object_set_new(sum, "launches_from", json_string("summary"));
		json_object_set_new(sum, "counts_from_summary", json_integer(exact_procs));
	}
	json_object_set_new(sum, "mismatches", json_integer(a.nmismatch));
	json_object_set_new(sum, "shim_warnings", json_integer(a.nwarn));

	json_object_set_new(doc, "format_version", json_integer(CGSHIM_RECORD_VERSION));
	json_object_set_new(doc, "files", files);
	json_object_set_new(doc, "skipped",
			    json_pack("{s:I,s:I,s:I}", "malformed", (json_int_t)log->malformed, "newer_version",
				      (json_int_t)log->newer, "unknown_ev", (json_int_t)log->unknown_ev + unknown));
	json_object_set_new(doc, "summary", sum);
	json_object_set_new(doc, "shim_summary", a.nshim_sum ? a.shim_sum : json_null());
	if (!a.nshim_sum)
		json_decref(a.shim_sum);
	json_object_set_new(doc, "processes", a.procs);
	json_object_set_new(doc, "violations", a.viol);
	json_object_set_new(doc, "captures", a.caps);
	json_object_set_new(doc, "captures_rest", a.cap_rest);
	json_object_set_new(doc, "captures_rest_other", json_integer(a.cap_rest_other));
	json_object_set_new(doc, "capture_totals", a.cap_tot);
	json_object_set_new(doc, "broken_captures", a.broken);
	json_object_set_new(doc, "capture_chains", a.chains);
	json_object_set_new(doc, "pools", a.pools);
	json_object_set_new(doc, "graphmem", a.gmem);
	json_object_set_new(doc, "failing_calls", a.fails);
	json_object_set_new(doc, "rewrites", a.rw_rows);
	json_object_set_new(doc, "leaks", a.leaks);
	json_object_set_new(doc, "ranks", rp_ranks(log));
	json_object_set_new(doc, "mispredictions", rp_mismatches(log));
	json_object_set_new(doc, "recaptures", rp_recaptures(log));
	json_object_set_new(doc, "coverage", rp_coverage(log));

	json_decref(a.pids);
	json_decref(a.graphs);
	json_decref(a.viol_idx);
	json_decref(a.pool_idx);
	json_decref(a.pool_seen);
	json_decref(a.fail_idx);
	json_decref(a.launch_cur);
	json_decref(a.abandoned_idx);
	json_decref(a.derived);
	json_decref(a.shim_by_pid);
	json_decref(a.exec_graph);
	json_decref(a.cap_idx);
	json_decref(a.cap_pending);
	json_decref(a.cap_group_idx);
	json_decref(a.cap_rest_idx);
	json_decref(a.cap_last);
	return doc;
}
