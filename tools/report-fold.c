/*
 * tools/report-fold.c -- folded repeats (issue 31): the shim writes one
 * violation record per rule, call site and object, and at exit one
 * "repeat" record per key seen more than once (docs/log-format.md). The
 * report adds the repeats to the violation's row (rule and first site
 * frame, as the violation record named them), to the counts by severity,
 * and keeps them as the row's "repeats".
 */
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
