/*
 * tools/report-mismatch.c -- the report's "Predictions the driver
 * disagreed with" (issue 31): one row per `mismatch` record, in time
 * order, naming the call (its entry point, exec and graph when it has
 * them, its site), what the driver answered and what the shim predicted.
 *
 * The site is the mismatch record's own (update mismatches carry it), else
 * that of the violation that made the prediction (same process, thread,
 * rule and entry point, the latest before it). The driver's answer as a
 * name, and an update's result name, come from the call's own record (the
 * first of that entry point after the mismatch on the same thread).
 */
#include <stdio.h>
#include <string.h>

#include "report.h"

#define RM_LOOK 256 /* records searched either side of a mismatch */

static void rm_copy(json_t *row, const json_t *j, const char *key)
{
	json_t *v = json_object_get(j, key);
	if (v)
		json_object_set(row, key, v);
}

static int rm_same_call(const struct rp_rec *a, const struct rp_rec *b)
{
	return a->pid == b->pid && a->tid == b->tid;
}

/* The site of the violation that predicted mismatch i (rule, api), or NULL. */
static const char *rm_violation_site(const struct rp_log *log, size_t i, const char *rule, const char *api, char *buf,
				     size_t cap)
{
	const struct rp_rec *m = &log->recs[i];
	size_t lo = i > RM_LOOK ? i - RM_LOOK : 0;
	if (!rule || !*rule)
		return NULL;
	for (size_t k = i; k-- > lo;) {
		const struct rp_rec *r = &log->recs[k];
		const json_t *j;
		const char *s;
		if (!rm_same_call(r, m) || r->kind != RP_EV_VIOLATION)
			continue;
		j = rp_j(log, k);
		if (!rp_str(j, "rule") || strcmp(rp_str(j, "rule"), rule) || !rp_str(j, "api") ||
		    strcmp(rp_str(j, "api"), api))
			continue;
		s = rp_site0(j, "site");
		if (!s)
			return NULL;
		snprintf(buf, cap, "%s", s);
		return buf;
	}
	return NULL;
}

/* The call's own record after mismatch i: its error and result names. */
static void rm_call_names(const struct rp_log *log, size_t i, const char *api, json_t *row)
{
	const struct rp_rec *m = &log->recs[i];
	size_t hi = i + RM_LOOK < log->n ? i + RM_LOOK : log->n;
	for (size_t k = i + 1; k < hi; k++) {
		const struct rp_rec *r = &log->recs[k];
		const json_t *j;
		if (!rm_same_call(r, m) || r->kind != RP_EV_CALL)
			continue;
		j = rp_j(log, k);
		if (!rp_str(j, "api") || strcmp(rp_str(j, "api"), api))
			continue;
		rm_copy(row, j, "err");
		rm_copy(row, j, "result_name");
		if (!json_object_get(row, "exec"))
			rm_copy(row, j, "exec");
		if (!json_object_get(row, "graph"))
			rm_copy(row, j, "graph");
		return;
	}
}

json_t *rp_mismatches(const struct rp_log *log)
{
	json_t *rows = json_array();
	long long t0 = log->n ? log->recs[0].ts : 0;
	for (size_t i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		const json_t *j;
		json_t *row;
		const char *api, *rule, *site;
		char api_buf[128], rule_buf[16], sbuf[512];
		static const char *const keep[] = {"predicted_rc", "rc", "predicted_result", "result", "exec", "graph"};
		if (r->kind != RP_EV_MISMATCH)
			continue;
		j = rp_j(log, i);
		row = json_object();
		snprintf(api_buf, sizeof api_buf, "%s", rp_str(j, "api") ? rp_str(j, "api") : "?");
		snprintf(rule_buf, sizeof rule_buf, "%s", rp_str(j, "rule") ? rp_str(j, "rule") : "");
		api = api_buf;
		rule = rule_buf;
		json_object_set_new(row, "t_ms", json_real((double)(r->ts - t0) / 1e6));
		json_object_set_new(row, "pid", json_integer(r->pid));
		json_object_set_new(row, "tid", json_integer(r->tid));
		json_object_set_new(row, "api", json_string(api));
		json_object_set_new(row, "rule", *rule ? json_string(rule) : json_null());
		for (size_t k = 0; k < sizeof keep / sizeof *keep; k++)
			rm_copy(row, j, keep[k]);
		site = rp_site0(j, "site");
		if (site) {
			snprintf(sbuf, sizeof sbuf, "%s", site);
			site = sbuf;
		} else {
			site = rm_violation_site(log, i, rule, api, sbuf, sizeof sbuf);
		}
		json_object_set_new(row, "site", site ? json_string(site) : json_null());
		rm_call_names(log, i, api, row);
		json_array_append_new(rows, row);
	}
	return rows;
}

void rp_print_mismatches(FILE *f, const json_t *rows)
{
	size_t i;
	json_t *row;
	if (!json_array_size(rows))
		return;
	fputs("\n== Predictions the driver disagreed with\n", f);
	json_array_foreach(rows, i, row)
	{
		const char *err = rp_str(row, "err"), *res = rp_str(row, "result_name"), *rule = rp_str(row, "rule");
		long long prc = rp_int(row, "predicted_rc", 0);
		fprintf(f, "  %s at %s (pid %lld, %.1f ms)", rp_str(row, "api"),
			rp_str(row, "site") ? rp_str(row, "site") : "(site unknown)", rp_int(row, "pid", 0),
			json_real_value(json_object_get(row, "t_ms")));
		if (rp_str(row, "exec"))
			fprintf(f, ", exec %s", rp_str(row, "exec"));
		if (rp_str(row, "graph"))
			fprintf(f, ", graph %s", rp_str(row, "graph"));
		fprintf(f, "\n    driver: %lld%s%s", rp_int(row, "rc", 0), err ? " " : "", err ? err : "");
		if (rp_has_int(row, "result"))
			fprintf(f, ", result %lld%s%s", rp_int(row, "result", 0), res ? " " : "", res ? res : "");
		if (rule)
			fprintf(f, "\n    shim:   %lld, predicted by %s before the call", prc, rule);
		else
			fprintf(f, "\n    shim:   %s",
				prc ? "a refusal no rule named" : "no refusal predicted (success)");
		if (rule && rp_has_int(row, "predicted_result"))
			fprintf(f, ", result %lld", rp_int(row, "predicted_result", 0));
		fputc('\n', f);
	}
}
