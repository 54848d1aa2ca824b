/*
 * tools/report-fold.c -- folded repeats (issue 31): the shim writes one
 * violation record per rule, call site and object, and at exit one
 * "repeat" record per key seen more than once (docs/log-format.md). The
 * report adds the repeats to the violation's row (rule and first site
 * frame, as the violation record named them), to the counts by severity,
 * and keeps them as the row's "repeats".
 */
#include <stdio.h>
#include <stdlib.h>

#include "report.h"

long long rp_fold_repeat(json_t *row, const json_t *j, json_t *sev)
{
	long long more = rp_int(j, "repeats", 0);
	const char *s = rp_str(j, "severity");
	json_t *v;
	if (more <= 0)
		return 0;
	if (row) {
		v = json_object_get(row, "count");
		json_object_set_new(row, "count", json_integer((v ? json_integer_value(v) : 0) + more));
		v = json_object_get(row, "repeats");
		json_object_set_new(row, "repeats", json_integer((v ? json_integer_value(v) : 0) + more));
	}
	v = json_object_get(sev, s ? s : "?");
	json_object_set_new(sev, s ? s : "?", json_integer((v ? json_integer_value(v) : 0) + more));
	return more;
}

/* Identical rows folded (issue 35): 13,500 captures that differ only in
 * their ids are one row with a count. Two rows are identical when they
 * agree on every field except those of vary (ids, times); the first row of
 * each group is kept (a copy), in first-seen order, with "count" (rows
 * folded in; left as it is when rows already counted) and, for vary[0],
 * "last_<vary[0]>" (the last row's value). Rows whose count is already
 * there add it, and their "last_<vary[0]>" stands for their last row
 * (the analysis folds capture rows as it reads, report-analyse.c). New
 * reference. */
json_t *rp_fold_rows(const json_t *rows, const char *const *vary)
{
	json_t *out = json_array(), *idx = json_object(), *row;
	size_t i;

	json_array_foreach(rows, i, row)
	{
		json_t *key = json_deep_copy(row), *g, *lastv = NULL;
		const char *const *v;
		char *k, last[64];
		long long n = rp_int(row, "count", 1);

		json_object_del(key, "count");
		if (vary[0]) {
			snprintf(last, sizeof last, "last_%s", vary[0]);
			lastv = json_object_get(row, last);
			json_object_del(key, last);
		}
		for (v = vary; *v; v++)
			json_object_del(key, *v);
		k = json_dumps(key, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
		json_decref(key);
		if (!k)
			continue;
		g = json_object_get(idx, k);
		if (!g) {
			g = json_copy(row);
			json_object_set_new(g, "count", json_integer(0));
			json_array_append_new(out, g);
			json_object_set(idx, k, g);
		}
		free(k);
		json_object_set_new(g, "count", json_integer(rp_int(g, "count", 0) + n));
		/* Groups folded before (with a wider vary here) interleave in
		 * the log: their last row is the one of the highest id (capture
		 * ids grow in a process, and pid is never in vary). */
		if (lastv && json_is_integer(lastv) && json_is_integer(json_object_get(g, last)) &&
		    json_integer_value(json_object_get(g, last)) > json_integer_value(lastv))
			lastv = json_object_get(g, last);
		if (vary[0] && (lastv || json_object_get(row, vary[0])))
			json_object_set(g, last, lastv ? lastv : json_object_get(row, vary[0]));
	}
	json_decref(idx);
	return out;
}

const char *rp_fold_note(const json_t *row, const char *cell, const char *idkey)
{
	static char buf[1024];
	long long n = rp_int(row, "count", 1);
	char lastk[64];
	json_t *last;

	snprintf(lastk, sizeof lastk, "last_%s", idkey);
	last = json_object_get(row, lastk);
	if (!cell)
		cell = "-";
	if (n <= 1)
		snprintf(buf, sizeof buf, "%s", cell);
	else if (json_is_integer(last))
		snprintf(buf, sizeof buf, "%s  x%lld (to %s %" JSON_INTEGER_FORMAT ")", cell, n, idkey,
			 json_integer_value(last));
	else if (json_is_string(last))
		snprintf(buf, sizeof buf, "%s  x%lld (to %s %s)", cell, n, idkey, json_string_value(last));
	else
		snprintf(buf, sizeof buf, "%s  x%lld", cell, n);
	return buf;
}
