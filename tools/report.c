/*
 * tools/report.c -- `cgshim report`: the analysis document (summary,
 * violations, memory tables, failing calls) and its text rendering.
 * --json prints the document itself, so text and JSON carry the same content.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static long long rp_geti(const json_t *o, const char *k)
{
	return rp_int(o, k, 0);
}

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

/* obj[key] += by, for a counter object. */
static void rp_count(json_t *obj, const char *key, long long by)
{
	json_t *v = json_object_get(obj, key);
	if (v)
		json_integer_set(v, json_integer_value(v) + by);
	else
		json_object_set_new(obj, key, json_integer(by));
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

json_t *rp_analyse(const struct rp_log *log)
{
	json_t *doc = json_object(), *sum = json_object(), *files = json_array();
	json_t *procs = json_array(), *pids = json_object(), *graphs = json_object();
	json_t *failures = json_object(), *sev = json_object();
	json_t *viol = json_array(), *viol_idx = json_object();
	json_t *caps = json_array(), *cap_tot = json_object();
	json_t *pools = json_array(), *pool_idx = json_object(), *pool_seen = json_object();
	json_t *gmem = json_array(), *fails = json_array(), *fail_idx = json_object();
	json_t *leaks = json_array(), *launch_cur = json_object(), *shim_sum = json_object();
	json_t *broken = json_array(); /* invalidated and abandoned captures, in log order */
	json_t *abandoned_idx = json_object();
	json_t *chains = json_array(); /* "broken": a failed end linked to its first breaking call */
	long long captures = 0, cap_ok = 0, execs = 0, upd_ok = 0, upd_fail = 0, rewrites = 0;
	long long nleaks = 0, leak_bytes = 0, nviol = 0, launches_rec = 0, launches_trace = 0;
	long long nmismatch = 0, nwarn = 0, nfail = 0, nshim_sum = 0, t0 = 0;
	long long ninvalidated = 0, nabandoned = 0;
	json_t *derived = json_object(), *shim_by_pid = json_object(), *rw_rows = json_array();
	json_t *exec_graph = json_object(), *cap_idx = json_object(); /* "pid/capture" -> its row */
	int have_launch_recs = 0;
	const char *tk;
	json_t *tv;
	unsigned fi;
	size_t i;

	static const char *const cap_cols[] = {"alloc_nodes", "alloc_bytes", "malloc_bytes", "free_before",
					       "free_after",  "delta",	     "unattributed"};

	for (fi = 0; fi < log->nfiles; fi++)
		json_array_append_new(files, json_string(log->files[fi]));
	if (log->n)
		t0 = log->recs[0].ts;
	for (i = 0; i < sizeof cap_cols / sizeof cap_cols[0]; i++)
		json_object_set_new(cap_tot, cap_cols[i], json_integer(0));

	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		const json_t *j = rp_j(log, i);
		const char *ev = r->ev, *graph = rp_str(j, "graph");
		char key[1024], pidkey[32];

		snprintf(pidkey, sizeof pidkey, "%lld", r->pid);
		if (!json_object_get(pids, pidkey)) {
			json_t *p = json_object();
			json_object_set_new(p, "pid", json_integer(r->pid));
			json_object_set_new(p, "exe", json_null());
			json_object_set_new(p, "records", json_integer(0));
			json_array_append_new(procs, p);
			json_object_set(pids, pidkey, p);
		}
		rp_count(json_object_get(pids, pidkey), "records", 1);
		if (graph && strcmp(ev, CGSHIM_EV_SUMMARY)) {
			rp_key(key, sizeof key, r->pid, graph, NULL);
			if (!json_object_get(graphs, key))
				rp_pcount(derived, r->pid, "graphs", 1);
			json_object_set_new(graphs, key, json_true());
		}
		/* the graph an exec runs, for the graph-memory table's rows */
		if (rp_str(j, "exec") && graph && strcmp(ev, CGSHIM_EV_NODE)) {
			rp_key(key, sizeof key, r->pid, rp_str(j, "exec"), NULL);
			json_object_set_new(exec_graph, key, json_string(graph));
		}

		if (!strcmp(ev, CGSHIM_EV_START)) {
			json_t *p = json_object_get(pids, pidkey);
			static const char *const keep[] = {"exe", "ppid", "rank", "version", "lib", "log_level"};
			unsigned k;
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy(p, j, keep[k]);
		} else if (!strcmp(ev, CGSHIM_EV_CALL)) {
			const char *api = rp_str(j, "api");
			long long rc = rp_int(j, "rc", 0);
			if (rp_is_instantiate(api) && rc == 0) {
				execs++;
				rp_pcount(derived, r->pid, "execs", 1);
			}
			/* Device memory the instantiation of a captured graph took
			 * (the driver reserves the exec's own memory here, not in
			 * the capture): joined to that capture's row. */
			if (rp_is_instantiate(api) && rc == 0 && rp_has_int(j, "delta") && rp_int(j, "capture", 0)) {
				json_t *crow;
				snprintf(key, sizeof key, "%lld/%lld", r->pid, rp_int(j, "capture", 0));
				if ((crow = json_object_get(cap_idx, key))) { /* the first such capture */
					json_object_set_new(crow, "instantiate_delta",
							    json_integer(rp_int(j, "delta", 0)));
					rp_count(cap_tot, "instantiate_delta", rp_int(j, "delta", 0));
				}
			}
			if (rp_is_update(api)) {
				rc == 0 ? upd_ok++ : upd_fail++;
				rp_pcount(derived, r->pid, "updates", 1);
				rp_pcount(derived, r->pid, "updates_failed", rc != 0);
			}
			if (rp_is_launch(api) && rc == 0) {
				launches_trace++;
				rp_pcount(derived, r->pid, "launches_trace", 1);
			}
			if (rc != 0) {
				const char *err = rp_str(j, "err");
				char rcbuf[32];
				json_t *row;
				if (!err) {
					snprintf(rcbuf, sizeof rcbuf, "rc=%lld", rc);
					err = rcbuf;
				}
				nfail++;
				rp_count(failures, err, 1);
				rp_key(key, sizeof key, 0, api ? api : "?", err);
				row = json_object_get(fail_idx, key);
				if (!row) {
					row = json_object();
					rp_set_str(row, "api", api ? api : "?");
					rp_set_str(row, "err", err);
					json_object_set_new(row, "rc", json_integer(rc));
					json_object_set_new(row, "count", json_integer(0));
					rp_set_str(row, "via", rp_str(j, "via"));
					rp_set_str(row, "site", rp_site0(j, "site"));
					json_object_set_new(row, "first_pid", json_integer(r->pid));
					json_array_append_new(fails, row);
					json_object_set(fail_idx, key, row);
				}
				rp_count(row, "count", 1);
			}
		} else if (!strcmp(ev, CGSHIM_EV_CAPTURE)) {
			json_t *row = json_object();
			unsigned k;
			captures++;
			if (rp_int(j, "rc", 0) == 0)
				cap_ok++;
			rp_pcount(derived, r->pid, "captures", 1);
			rp_pcount(derived, r->pid, "captures_invalidated", rp_int(j, "rc", 0) != 0);
			json_object_set_new(row, "pid", json_integer(r->pid));
			static const char *const keep[] = {"capture", "stream", "mode",	    "graph",
							   "rc",      "dur_ns", "begin_tid"};
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy_or_null(row, j, keep[k]);
			for (k = 0; k < sizeof cap_cols / sizeof cap_cols[0]; k++) {
				rp_copy_or_null(row, j, cap_cols[k]);
				if (rp_has_int(j, cap_cols[k]))
					rp_count(cap_tot, cap_cols[k], rp_int(j, cap_cols[k], 0));
			}
			rp_set_str(row, "site", rp_site0(j, "site"));
			snprintf(key, sizeof key, "%lld/%lld", r->pid, rp_int(j, "capture", 0));
			if (!json_object_get(cap_idx, key))
				json_object_set(cap_idx, key, row);
			json_array_append_new(caps, row);
		} else if (!strcmp(ev, CGSHIM_EV_LAUNCHES)) {
			/* count is the exec's running total; "every" records are
			 * superseded by the exec's later records. */
			const char *reason = rp_str(j, "reason");
			long long n = rp_int(j, "count", 0);
			have_launch_recs = 1;
			rp_key(key, sizeof key, r->pid, rp_str(j, "exec"), NULL);
			if (reason && !strcmp(reason, "every")) {
				json_object_set_new(launch_cur, key, json_integer(n));
			} else {
				launches_rec += n;
				rp_pcount(derived, r->pid, "launches_rec", n);
				json_object_del(launch_cur, key);
			}
		} else if (!strcmp(ev, CGSHIM_EV_VIOLATION)) {
			const char *rule = rp_str(j, "rule"), *s0 = rp_site0(j, "site");
			json_t *row, *first;
			const char *k;
			json_t *v;
			nviol++;
			rp_pcount(derived, r->pid, "violations", 1);
			rp_count(sev, rp_str(j, "severity") ? rp_str(j, "severity") : "?", 1);
			rp_key(key, sizeof key, 0, rule ? rule : "?", s0);
			row = json_object_get(viol_idx, key);
			if (!row) {
				row = json_object();
				rp_set_str(row, "rule", rule ? rule : "?");
				rp_set_str(row, "name", rp_str(j, "name"));
				rp_set_str(row, "severity", rp_str(j, "severity"));
				rp_set_str(row, "site", s0);
				/* the rule's page, also for logs older than the
				 * violation record's "doc" field */
				json_object_set_new(
				    row, "doc", json_sprintf("%s%s.md", CGSHIM_RULE_DOC_DIR, rule ? rule : "README"));
				json_object_set_new(row, "count", json_integer(0));
				first = json_object();
				json_object_foreach((json_t *)j, k, v) if (!rp_std_field(k))
				    json_object_set(first, k, v);
				json_object_set_new(first, "t_ms", json_real(rp_ms(r->ts, t0)));
				json_object_set_new(row, "first", first);
				json_array_append_new(viol, row);
				json_object_set(viol_idx, key, row);
			}
			rp_count(row, "count", 1);
		} else if (!strcmp(ev, CGSHIM_EV_REPEAT)) { /* keyed as the violation's row */
			rp_key(key, sizeof key, 0, rp_str(j, "rule") ? rp_str(j, "rule") : "?", rp_site0(j, "site"));
			long long more = rp_fold_repeat(json_object_get(viol_idx, key), j, sev);
			nviol += more;
			rp_pcount(derived, r->pid, "violations", more);
		} else if (!strcmp(ev, CGSHIM_EV_REWRITE)) {
			json_t *row = json_object();
			unsigned k;
			static const char *const keep[] = {"exec",	"graph",  "reason", "why",
							   "rc_update", "reused", "dur_ns"};
			rewrites++;
			rp_pcount(derived, r->pid, "rewrites", 1);
			json_object_set_new(row, "t_ms", json_real((double)(r->ts - t0) / 1e6));
			json_object_set_new(row, "pid", json_integer(r->pid));
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy_or_null(row, j, keep[k]);
			json_array_append_new(rw_rows, row);
		} else if (!strcmp(ev, CGSHIM_EV_LEAK)) {
			json_t *row = json_object();
			unsigned k;
			static const char *const keep[] = {"dptr", "size", "pool", "exec", "graph", "when"};
			nleaks++;
			leak_bytes += rp_int(j, "size", 0);
			json_object_set_new(row, "pid", json_integer(r->pid));
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy_or_null(row, j, keep[k]);
			rp_set_str(row, "site", rp_site0(j, "site"));
			json_array_append_new(leaks, row);
		} else if (!strcmp(ev, CGSHIM_EV_ALLOC)) {
			json_t *row = rp_pool_row(pool_idx, pools, r->pid, rp_str(j, "pool"));
			rp_count(row, "allocs", 1);
			rp_count(row, "alloc_bytes", rp_int(j, "size", 0));
			json_object_set_new(row, "default", json_boolean(rp_bool(j, "pool_default")));
			json_object_set_new(row, "ipc", json_boolean(rp_bool(j, "ipc")));
			if (json_is_null(json_object_get(row, "site")) && rp_site0(j, "pool_site"))
				rp_set_str(row, "site", rp_site0(j, "pool_site"));
		} else if (!strcmp(ev, CGSHIM_EV_POOL)) {
			json_t *row = rp_pool_row(pool_idx, pools, r->pid, rp_str(j, "pool"));
			unsigned k;
			static const char *const keep[] = {"dev", "reserved", "reserved_high", "used", "used_high"};
			rp_key(key, sizeof key, r->pid, rp_str(j, "pool"), NULL);
			json_object_set_new(pool_seen, key, json_true());
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy(row, j, keep[k]);
			json_object_set_new(row, "default", json_boolean(rp_bool(j, "default")));
			json_object_set_new(row, "ipc", json_boolean(rp_bool(j, "ipc")));
			/* Without alloc records (log level below info in some
			 * process) the pool's own tally is all there is. */
			if (json_integer_value(json_object_get(row, "allocs")) == 0) {
				json_object_set_new(row, "allocs", json_integer(rp_int(j, "allocs", 0)));
				json_object_set_new(row, "alloc_bytes", json_integer(rp_int(j, "alloc_bytes", 0)));
			}
			if (rp_site0(j, "site"))
				rp_set_str(row, "site", rp_site0(j, "site"));
		} else if (!strcmp(ev, CGSHIM_EV_GRAPHMEM)) {
			json_t *row = json_object();
			unsigned k;
			static const char *const keep[] = {"dev",	"when",	    "exec",	    "used",
							   "used_high", "reserved", "reserved_high"};
			json_object_set_new(row, "t_ms", json_real(rp_ms(r->ts, t0)));
			json_object_set_new(row, "pid", json_integer(r->pid));
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy_or_null(row, j, keep[k]);
			json_array_append_new(gmem, row);
		} else if (!strcmp(ev, CGSHIM_EV_MISMATCH)) {
			nmismatch++;
		} else if (!strcmp(ev, CGSHIM_EV_WARNING)) {
			nwarn++;
		} else if (!strcmp(ev, CGSHIM_EV_INVALIDATED) || !strcmp(ev, CGSHIM_EV_ABANDONED)) {
			/* One row per record: what broke a capture (or found it
			 * broken), and a capture never ended with the first call
			 * it made fail. */
			json_t *row = json_object();
			unsigned k;
			static const char *const keep[] = {"capture", "mode", "begin_tid", "found_by", "reason",
							   "api",     "rc",   "call_tid",  "age_ns"};
			rp_set_str(row, "what", ev);
			json_object_set_new(row, "pid", json_integer(r->pid));
			json_object_set_new(row, "t_ms", json_real((double)(r->ts - t0) / 1e6));
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy(row, j, keep[k]);
			rp_set_str(row, "begin_site", rp_site0(j, "begin_site"));
			rp_set_str(row, "site", rp_site0(j, "site"));
			json_array_append_new(broken, row);
			if (!strcmp(ev, CGSHIM_EV_ABANDONED)) {
				/* a capture is named at a refusal and again at exit */
				snprintf(key, sizeof key, "%lld/%lld", r->pid, rp_int(j, "capture", 0));
				if (!json_object_get(abandoned_idx, key)) {
					json_object_set_new(abandoned_idx, key, json_true());
					nabandoned++;
				}
			} else {
				ninvalidated++;
			}
		} else if (!strcmp(ev, CGSHIM_EV_BROKEN)) {
			/* One block per failed end: the capture (begin thread,
			 * name, site), the first call that broke it (API, rule,
			 * thread, name, site) and the end's result. */
			json_t *row = json_object();
			unsigned k;
			static const char *const keep[] = {
			    "capture", "stream", "mode",    "begin_tid", "begin_thread", "rc",	      "err",
			    "end_tid", "by_api", "by_rule", "by_rc",	 "by_tid",	 "by_thread", "msg"};
			json_object_set_new(row, "pid", json_integer(r->pid));
			for (k = 0; k < sizeof keep / sizeof keep[0]; k++)
				rp_copy(row, j, keep[k]);
			rp_set_str(row, "begin_site", rp_site0(j, "begin_site"));
			rp_set_str(row, "by_site", rp_site0(j, "by_site"));
			json_array_append_new(chains, row);
		} else if (!strcmp(ev, CGSHIM_EV_SUMMARY)) {
			const char *k;
			json_t *v;
			nshim_sum++;
			json_object_set(shim_by_pid, pidkey, (json_t *)j);
			json_object_foreach((json_t *)j, k, v)
			{
				if (!rp_std_field(k) && strcmp(k, "pid") && strcmp(k, "tid") && json_is_integer(v))
					rp_count(shim_sum, k, json_integer_value(v));
			}
		}
	}
	json_object_foreach(launch_cur, tk, tv)
	{
		launches_rec += json_integer_value(tv);
		rp_pcount(derived, strtoll(tk, NULL, 10), "launches_rec", json_integer_value(tv));
	}
	/* The graph each graph-memory sample's exec runs. */
	{
		json_t *row;
		json_array_foreach(gmem, i, row)
		{
			const char *ex = rp_str(row, "exec");
			char key[256];
			rp_key(key, sizeof key, rp_geti(row, "pid"), ex, NULL);
			json_object_set(row, "graph",
					ex && *ex && json_object_get(exec_graph, key) ? json_object_get(exec_graph, key)
										      : json_null());
		}
	}

	json_object_set_new(sum, "records", json_integer((json_int_t)log->n));
	json_object_set_new(sum, "processes", json_integer((json_int_t)json_array_size(procs)));
	json_object_set_new(sum, "captures", json_integer(captures));
	json_object_set_new(sum, "captures_ok", json_integer(cap_ok));
	json_object_set_new(sum, "captures_invalidated", json_integer(captures - cap_ok));
	json_object_set_new(sum, "invalidations", json_integer(ninvalidated));
	json_object_set_new(sum, "captures_abandoned", json_integer(nabandoned));
	json_object_set_new(sum, "graphs", json_integer((json_int_t)json_object_size(graphs)));
	json_object_set_new(sum, "execs", json_integer(execs));
	json_object_set_new(sum, "launches", json_integer(have_launch_recs ? launches_rec : launches_trace));
	json_object_set_new(sum, "launches_from",
			    json_string(have_launch_recs ? "launches"
					: launches_trace ? "trace"
							 : "none"));
	json_object_set_new(sum, "updates", json_integer(upd_ok + upd_fail));
	json_object_set_new(sum, "updates_ok", json_integer(upd_ok));
	json_object_set_new(sum, "updates_failed", json_integer(upd_fail));
	json_object_set_new(sum, "failures", json_integer(nfail));
	json_object_set_new(sum, "failures_by_error", failures);
	json_object_set_new(sum, "rewrites", json_integer(rewrites));
	json_object_set_new(sum, "leaks", json_integer(nleaks));
	json_object_set_new(sum, "leak_bytes", json_integer(leak_bytes));
	json_object_set_new(sum, "violations", json_integer(nviol));
	json_object_set_new(sum, "violations_by_severity", sev);
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
		json_object_foreach(shim_by_pid, pk, sr)
		{
			json_t *d = json_object_get(derived, pk);
			exact_procs++;
			rp_count(sum, "records_condensed", rp_int(sr, "records_condensed", 0));
			for (i = 0; i < RP_NEXACT; i++) {
				const char *mine = rp_exact[i][0];
				long long had = d ? rp_int(d, mine, 0) : 0;
				if (!json_is_integer(json_object_get(sr, rp_exact[i][1])))
					continue;
				if (!strcmp(mine, "launches"))
					had = d ? (have_launch_recs ? rp_int(d, "launches_rec", 0)
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
	json_object_set_new(sum, "mismatches", json_integer(nmismatch));
	json_object_set_new(sum, "shim_warnings", json_integer(nwarn));

	json_object_set_new(doc, "format_version", json_integer(CGSHIM_RECORD_VERSION));
	json_object_set_new(doc, "files", files);
	json_object_set_new(doc, "skipped",
			    json_pack("{s:I,s:I,s:I}", "malformed", (json_int_t)log->malformed, "newer_version",
				      (json_int_t)log->newer, "unknown_ev", (json_int_t)log->unknown_ev));
	json_object_set_new(doc, "summary", sum);
	json_object_set_new(doc, "shim_summary", nshim_sum ? shim_sum : json_null());
	if (!nshim_sum)
		json_decref(shim_sum);
	json_object_set_new(doc, "processes", procs);
	json_object_set_new(doc, "violations", viol);
	json_object_set_new(doc, "captures", caps);
	json_object_set_new(doc, "capture_totals", cap_tot);
	json_object_set_new(doc, "broken_captures", broken);
	json_object_set_new(doc, "capture_chains", chains);
	json_object_set_new(doc, "pools", pools);
	json_object_set_new(doc, "graphmem", gmem);
	json_object_set_new(doc, "failing_calls", fails);
	json_object_set_new(doc, "rewrites", rw_rows);
	json_object_set_new(doc, "leaks", leaks);
	json_object_set_new(doc, "ranks", rp_ranks(log));
	json_object_set_new(doc, "mispredictions", rp_mismatches(log));
	json_object_set_new(doc, "recaptures", rp_recaptures(log));

	json_decref(pids);
	json_decref(graphs);
	json_decref(viol_idx);
	json_decref(pool_idx);
	json_decref(pool_seen);
	json_decref(fail_idx);
	json_decref(launch_cur);
	json_decref(abandoned_idx);
	json_decref(derived);
	json_decref(shim_by_pid);
	json_decref(exec_graph);
	json_decref(cap_idx);
	return doc;
}

/* ---- text rendering ---- */

static const char *rp_cell(const json_t *o, const char *k, char *buf, size_t len)
{
	json_t *v = json_object_get(o, k);
	if (json_is_string(v))
		return json_string_value(v);
	if (json_is_integer(v)) {
		snprintf(buf, len, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return buf;
	}
	if (json_is_boolean(v))
		return json_is_true(v) ? "yes" : "no";
	return "-";
}

static const char *rp_bcell(const json_t *o, const char *k, char *buf, size_t len)
{
	json_t *v = json_object_get(o, k);
	if (!json_is_integer(v))
		return "-";
	return rp_bytes((long long)json_integer_value(v), buf, len);
}

/* Each use gets its own buffer (a compound literal lives until the end of
 * the enclosing block), so several cells can go into one printf. */
#define RP_CELL(o, k) rp_cell((o), (k), (char[48]){0}, 48)
#define RP_BCELL(o, k) rp_bcell((o), (k), (char[48]){0}, 48)

static void rp_print_value(FILE *f, const char *k, const json_t *v)
{
	size_t idx;
	json_t *e;

	if (json_is_array(v)) {
		fprintf(f, "    %s:\n", k);
		json_array_foreach(v, idx, e)
		{
			if (json_is_string(e))
				fprintf(f, "      #%zu %s\n", idx, json_string_value(e));
		}
		return;
	}
	fprintf(f, "    %s: ", k);
	if (json_is_real(v))
		fprintf(f, "%.3f", json_real_value(v));
	else if (json_is_string(v))
		fputs(json_string_value(v), f);
	else {
		char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		fputs(s ? s : "?", f);
		free(s);
	}
	fputc('\n', f);
}

void rp_print_text(FILE *f, const json_t *doc)
{
	const json_t *sum = json_object_get(doc, "summary"), *shim = json_object_get(doc, "shim_summary");
	json_t *a, *row, *v;
	char b1[32];
	const char *k;
	size_t i;

	fprintf(f, "== cgshim report: %lld records from", rp_geti(sum, "records"));
	json_array_foreach(json_object_get(doc, "files"), i, v) fprintf(f, " %s", json_string_value(v));
	fputs("\n\n== Summary\n", f);
	fprintf(f, "  processes    %lld\n", rp_geti(sum, "processes"));
	fprintf(f, "  captures     %lld (%lld ok, %lld invalidated)\n", rp_geti(sum, "captures"),
		rp_geti(sum, "captures_ok"), rp_geti(sum, "captures_invalidated"));
	if (rp_geti(sum, "invalidations") || rp_geti(sum, "captures_abandoned"))
		fprintf(f, "  broken       %lld invalidation(s) seen, %lld capture(s) never ended\n",
			rp_geti(sum, "invalidations"), rp_geti(sum, "captures_abandoned"));
	fprintf(f, "  graphs       %lld\n", rp_geti(sum, "graphs"));
	fprintf(f, "  executables  %lld\n", rp_geti(sum, "execs"));
	fprintf(f, "  launches     %lld%s\n", rp_geti(sum, "launches"),
		!strcmp(rp_str(sum, "launches_from"), "trace")	? " (from trace-level call records)"
		: !strcmp(rp_str(sum, "launches_from"), "none") ? " (no launch records in the log)"
								: "");
	fprintf(f, "  updates      %lld (%lld ok, %lld failed)\n", rp_geti(sum, "updates"), rp_geti(sum, "updates_ok"),
		rp_geti(sum, "updates_failed"));
	fprintf(f, "  failures     %lld", rp_geti(sum, "failures"));
	i = 0;
	json_object_foreach(json_object_get(sum, "failures_by_error"), k, v)
	    fprintf(f, "%s%s x%" JSON_INTEGER_FORMAT, i++ ? ", " : " (", k, json_integer_value(v));
	fputs(i ? ")\n" : "\n", f);
	fprintf(f, "  rewrites     %lld%s\n", rp_geti(sum, "rewrites"),
		rp_geti(sum, "rewrites") ? " (see Rewrites)" : "");
	fprintf(f, "  leaks        %lld (%s)\n", rp_geti(sum, "leaks"),
		rp_bytes(rp_geti(sum, "leak_bytes"), b1, sizeof b1));
	fprintf(f, "  violations   %lld", rp_geti(sum, "violations"));
	i = 0;
	json_object_foreach(json_object_get(sum, "violations_by_severity"), k, v)
	    fprintf(f, "%s%" JSON_INTEGER_FORMAT " %s", i++ ? ", " : " (", json_integer_value(v), k);
	fputs(i ? ")\n" : "\n", f);
	if (rp_geti(sum, "records_condensed"))
		fprintf(f,
			"  condensed    %lld lifecycle record(s) of steady capture cycles, each repeating the one "
			"before (written at CGSHIM_LOG=debug)\n",
			rp_geti(sum, "records_condensed"));
	if (rp_geti(sum, "mismatches"))
		fprintf(f, "  mismatches   %lld (the shim's prediction disagreed with the driver)\n",
			rp_geti(sum, "mismatches"));
	if (rp_geti(sum, "shim_warnings"))
		fprintf(f, "  shim warnings %lld\n", rp_geti(sum, "shim_warnings"));
	json_array_foreach(json_object_get(doc, "stale_modules"), i, v)
	    fprintf(f,
		    "  STALE BINARY %s: changed since the run (build-id %s logged, %s on disk); "
		    "its frames are offsets\n",
		    rp_str(v, "path"), rp_str(v, "logged"), rp_str(v, "on_disk"));
	if (rp_geti(sum, "counts_from_summary"))
		fprintf(f,
			"  (graphs, executables, launches, updates, captures, rewrites and violations "
			"of %lld process%s are its shim's exit summary)\n",
			rp_geti(sum, "counts_from_summary"), rp_geti(sum, "counts_from_summary") == 1 ? "" : "es");
	if (json_is_object(shim)) {
		fputs("  shim exit summary:", f);
		json_object_foreach((json_t *)shim, k, v)
		    fprintf(f, " %s=%" JSON_INTEGER_FORMAT, k, json_integer_value(v));
		fputc('\n', f);
	}

	a = json_object_get(doc, "processes");
	if (json_array_size(a)) {
		fputs("\n== Processes\n", f);
		fprintf(f, "  %-8s %-8s %-6s %-8s %s\n", "pid", "ppid", "rank", "records", "exe");
		json_array_foreach(a, i, row)
		    fprintf(f, "  %-8s %-8s %-6s %-8s %s\n", RP_CELL(row, "pid"), RP_CELL(row, "ppid"),
			    RP_CELL(row, "rank"), RP_CELL(row, "records"), RP_CELL(row, "exe"));
	}
	rp_print_ranks(f, json_object_get(doc, "ranks"));
	rp_print_mismatches(f, json_object_get(doc, "mispredictions"));

	a = json_object_get(doc, "violations");
	if (json_array_size(a)) {
		fputs("\n== Violations (by rule and call site)\n", f);
		json_array_foreach(a, i, row)
		{
			json_t *first = json_object_get(row, "first");
			fprintf(f, "\n  %s %s [%s] x%lld at %s  (%s)\n", RP_CELL(row, "rule"), RP_CELL(row, "name"),
				RP_CELL(row, "severity"), rp_geti(row, "count"), RP_CELL(row, "site"),
				RP_CELL(row, "doc"));
			if (rp_str(first, "msg"))
				fprintf(f, "    %s\n", rp_str(first, "msg"));
			json_object_foreach(first, k, v)
			{
				if (strcmp(k, "msg") && strcmp(k, "rule") && strcmp(k, "name") &&
				    strcmp(k, "severity") && strcmp(k, "doc") && !json_is_array(v))
					rp_print_value(f, k, v);
			}
			json_object_foreach(first, k, v) if (json_is_array(v)) rp_print_value(f, k, v);
		}
	}

	static const char *const cap_vary[] = {"capture", "graph", NULL};
	static const char *const brk_vary[] = {"capture", "t_ms", "age_ns", NULL};
	static const char *const mem_vary[] = {"t_ms", "exec", "graph", NULL};
	static const char *const leak_vary[] = {"dptr", "exec", "graph", NULL};
	static const char *const rw_vary[] = {"t_ms", "exec", "graph", "dur_ns", NULL};
	json_t *folded;

	/* identical rows but for their ids folded, with a count (rp_fold_rows) */
	a = folded = rp_fold_rows(json_object_get(doc, "captures"), cap_vary);
	if (json_array_size(a)) {
		const json_t *t = json_object_get(doc, "capture_totals");
		fputs("\n== Memory per capture (one row per captured graph, e.g. per batch size)\n", f);
		fprintf(f, "  %-7s %-8s %-8s %-14s %-12s %5s %10s %10s %10s %10s %10s %10s %10s %12s  %s\n", "pid",
			"capture", "rc", "stream", "mode", "anode", "alloc", "malloc", "free-before", "free-after",
			"delta", "unattrib", "inst-delta", "graph", "site");
		json_array_foreach(a, i, row)
		    fprintf(f, "  %-7s %-8s %-8s %-14s %-12s %5s %10s %10s %10s %10s %10s %10s %10s %12s  %s\n",
			    RP_CELL(row, "pid"), RP_CELL(row, "capture"), rp_geti(row, "rc") ? "INVALID" : "ok",
			    RP_CELL(row, "stream"), RP_CELL(row, "mode"), RP_CELL(row, "alloc_nodes"),
			    RP_BCELL(row, "alloc_bytes"), RP_BCELL(row, "malloc_bytes"), RP_BCELL(row, "free_before"),
			    RP_BCELL(row, "free_after"), RP_BCELL(row, "delta"), RP_BCELL(row, "unattributed"),
			    RP_BCELL(row, "instantiate_delta"), RP_CELL(row, "graph"),
			    rp_fold_note(row, rp_str(row, "site"), "capture"));
		fprintf(f, "  %-7s %-8s %-8s %-14s %-12s %5lld %10s %10s %10s %10s %10s %10s %10s\n", "total", "", "",
			"", "", rp_geti(t, "alloc_nodes"), RP_BCELL(t, "alloc_bytes"), RP_BCELL(t, "malloc_bytes"), "",
			"", RP_BCELL(t, "delta"), RP_BCELL(t, "unattributed"), RP_BCELL(t, "instantiate_delta"));
	}

	rp_print_recaptures(f, json_object_get(doc, "recaptures"));

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "broken_captures"), brk_vary);
	if (json_array_size(a)) {
		fputs("\n== Broken captures (invalidated; abandoned = never ended)\n", f);
		fprintf(f, "  %-11s %-7s %-8s %-9s %-7s %-12s %-22s %-8s %s\n", "what", "pid", "capture", "begin-tid",
			"mode", "how", "call", "call-tid", "call site / begin site");
		json_array_foreach(a, i, row)
		{
			const char *how = rp_str(row, "found_by") ? rp_str(row, "found_by") : rp_str(row, "reason");
			fprintf(f, "  %-11s %-7s %-8s %-9s %-7s %-12s %-22s %-8s %s\n", RP_CELL(row, "what"),
				RP_CELL(row, "pid"), RP_CELL(row, "capture"), RP_CELL(row, "begin_tid"),
				RP_CELL(row, "mode"), how ? how : "-", RP_CELL(row, "api"), RP_CELL(row, "call_tid"),
				RP_CELL(row, "site"));
			fprintf(f, "  %-11s %-7s %-8s %-9s %-7s %-12s %-22s %-8s %s\n", "", "", "", "", "", "", "", "",
				rp_fold_note(row, rp_str(row, "begin_site"), "capture"));
		}
	}

	a = json_object_get(doc, "capture_chains");
	if (json_array_size(a)) {
		fputs("\n== Who broke the capture (each failed end, linked to the first call that broke it)\n", f);
		json_array_foreach(a, i, row)
		{
			const char *bt = rp_str(row, "begin_thread"), *ct = rp_str(row, "by_thread");
			fprintf(f, "  capture %s (pid %s, %s mode, stream %s) ended with %s %s\n",
				RP_CELL(row, "capture"), RP_CELL(row, "pid"), RP_CELL(row, "mode"),
				RP_CELL(row, "stream"), RP_CELL(row, "rc"), RP_CELL(row, "err"));
			fprintf(f, "    begun    on thread %s%s%s%s at %s\n", RP_CELL(row, "begin_tid"),
				bt && *bt ? " \"" : "", bt && *bt ? bt : "", bt && *bt ? "\"" : "",
				rp_str(row, "begin_site") ? rp_str(row, "begin_site") : "-");
			if (rp_str(row, "by_api"))
				fprintf(f, "    broken   by %s (%s, rc %s) on thread %s%s%s%s at %s\n",
					rp_str(row, "by_api"),
					rp_str(row, "by_rule") ? rp_str(row, "by_rule") : "not predicted",
					RP_CELL(row, "by_rc"), RP_CELL(row, "by_tid"), ct && *ct ? " \"" : "",
					ct && *ct ? ct : "", ct && *ct ? "\"" : "",
					rp_str(row, "by_site") ? rp_str(row, "by_site") : "-");
			else
				fputs("    broken   by no call the shim saw (unhooked call or lazy module load)\n", f);
		}
	}

	a = json_object_get(doc, "pools");
	if (json_array_size(a)) {
		fputs("\n== Memory per pool\n", f);
		fprintf(f, "  %-7s %-16s %-8s %-4s %7s %10s %10s %10s  %s\n", "pid", "pool", "kind", "ipc", "allocs",
			"bytes", "used-high", "resv-high", "site");
		json_array_foreach(a, i, row) fprintf(
		    f, "  %-7s %-16s %-8s %-4s %7s %10s %10s %10s  %s\n", RP_CELL(row, "pid"), RP_CELL(row, "pool"),
		    json_is_true(json_object_get(row, "default")) ? "default" : "explicit",
		    json_is_true(json_object_get(row, "ipc")) ? "yes" : "no", RP_CELL(row, "allocs"),
		    RP_BCELL(row, "alloc_bytes"), RP_BCELL(row, "used_high"), RP_BCELL(row, "reserved_high"),
		    RP_CELL(row, "site"));
	}

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "graphmem"), mem_vary);
	if (json_array_size(a)) {
		fputs("\n== Graph memory over time (device graph-memory samples)\n", f);
		fprintf(f, "  %10s %-7s %-3s %-13s %-14s %-14s %10s %10s %10s %10s\n", "t (ms)", "pid", "dev", "when",
			"exec", "graph", "used", "used-high", "reserved", "resv-high");
		json_array_foreach(a, i, row) fprintf(
		    f, "  %10.3f %-7s %-3s %-13s %-14s %-14s %10s %10s %10s %10s\n",
		    json_real_value(json_object_get(row, "t_ms")), RP_CELL(row, "pid"), RP_CELL(row, "dev"),
		    RP_CELL(row, "when"), rp_str(row, "exec") && *rp_str(row, "exec") ? rp_str(row, "exec") : "-",
		    RP_CELL(row, "graph"), RP_BCELL(row, "used"), RP_BCELL(row, "used_high"), RP_BCELL(row, "reserved"),
		    RP_BCELL(row, "reserved_high"));
		json_array_foreach(a, i, row) if (rp_geti(row, "count") > 1)
		    fprintf(f, "  (the row at %.3f ms: x%lld, the same figures until %.3f ms)\n",
			    json_real_value(json_object_get(row, "t_ms")), rp_geti(row, "count"),
			    json_real_value(json_object_get(row, "last_t_ms")));
	}

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "leaks"), leak_vary);
	if (json_array_size(a)) {
		fputs("\n== Graph allocations outstanding (leaks)\n", f);
		fprintf(f, "  %-7s %-16s %10s %-16s %-16s %-13s %s\n", "pid", "dptr", "size", "pool", "exec", "when",
			"site");
		json_array_foreach(a, i, row)
		    fprintf(f, "  %-7s %-16s %10s %-16s %-16s %-13s %s\n", RP_CELL(row, "pid"), RP_CELL(row, "dptr"),
			    RP_BCELL(row, "size"), RP_CELL(row, "pool"), RP_CELL(row, "exec"), RP_CELL(row, "when"),
			    rp_fold_note(row, rp_str(row, "site"), "dptr"));
	}

	json_decref(folded);
	a = folded = rp_fold_rows(json_object_get(doc, "rewrites"), rw_vary);
	if (json_array_size(a)) {
		fputs("\n== Rewrites (failing updates turned into re-instantiation, "
		      "CGSHIM_ON_UPDATE_FAILURE=reinstantiate)\n",
		      f);
		fprintf(f, "  %10s %-7s %-16s %-16s %-10s %-6s %9s  %s\n", "t (ms)", "pid", "exec", "graph", "reason",
			"reused", "dur (us)", "why");
		json_array_foreach(a, i, row)
		{
			char dur[32] = "-";
			if (rp_has_int(row, "dur_ns"))
				snprintf(dur, sizeof dur, "%.1f", (double)rp_geti(row, "dur_ns") / 1e3);
			fprintf(f, "  %10.3f %-7s %-16s %-16s %-10s %-6s %9s  %s\n",
				json_real_value(json_object_get(row, "t_ms")), RP_CELL(row, "pid"),
				RP_CELL(row, "exec"), RP_CELL(row, "graph"), RP_CELL(row, "reason"),
				RP_CELL(row, "reused"), dur, rp_fold_note(row, rp_str(row, "why"), "exec"));
		}
	}
	json_decref(folded);

	a = json_object_get(doc, "failing_calls");
	if (json_array_size(a)) {
		fputs("\n== Failing calls\n", f);
		fprintf(f, "  %-32s %-44s %6s  %s\n", "api", "error", "count", "first site");
		json_array_foreach(a, i, row) fprintf(f, "  %-32s %-44s %6lld  %s\n", RP_CELL(row, "api"),
						      RP_CELL(row, "err"), rp_geti(row, "count"), RP_CELL(row, "site"));
	}
}
