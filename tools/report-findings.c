/*
 * tools/report-findings.c -- findings, fingerprints, baselines and the
 * --fail-on status of `cgshim report` (report-findings.h).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report-findings.h"

int rp_ci_check(const struct rp_ci *ci)
{
	if (ci->fail_on && strcmp(ci->fail_on, "error") && strcmp(ci->fail_on, "warn")) {
		fprintf(stderr, "cgshim report: --fail-on takes error or warn, not \"%s\"\n", ci->fail_on);
		return 1;
	}
	return 0;
}

static void rp_set(json_t *o, const char *k, const char *v)
{
	json_object_set_new(o, k, json_string(v ? v : "?"));
}

/* Function, file and line of a site frame as the report shows it:
 * "py:FILE:LINE:FUNC", "pylib:FILE:LINE:FUNC", "FUNC (FILE:LINE)",
 * "MODULE:SYMBOL+0xOFF", "MODULE+0xOFF", "0x..." or a bare name. */
static void rp_site_parts(const char *s, json_t *o)
{
	char *c, *a, *b;
	long line = 0;

	if (!s || !*s || !strncmp(s, "0x", 2)) {
		rp_set(o, "function", "?");
		rp_set(o, "file", "?");
		return;
	}
	c = strdup(s);
	if (!c)
		return;
	if (!strncmp(c, "py:", 3) || !strncmp(c, "pylib:", 6)) {
		char *body = strchr(c, ':') + 1;
		a = strrchr(body, ':'); /* :FUNC */
		if (a) {
			*a = '\0';
			b = strrchr(body, ':'); /* :LINE */
			if (b) {
				*b = '\0';
				line = strtol(b + 1, NULL, 10);
			}
			rp_set(o, "function", a + 1);
			rp_set(o, "file", body);
		} else {
			rp_set(o, "function", "?");
			rp_set(o, "file", body);
		}
	} else if (c[strlen(c) - 1] == ')' && (a = strstr(c, " ("))) {
		while ((b = strstr(a + 1, " ("))) /* the last one: C++ names hold " (" */
			a = b;
		*a = '\0';
		a[2 + strlen(a + 2) - 1] = '\0'; /* the ')' */
		b = strrchr(a + 2, ':');
		if (b) {
			*b = '\0';
			line = strtol(b + 1, NULL, 10);
		}
		rp_set(o, "function", c);
		rp_set(o, "file", a + 2);
	} else if ((a = strstr(c, "+0x"))) {
		*a = '\0';
		b = strchr(c, ':');
		if (b)
			*b = '\0';
		rp_set(o, "function", b ? b + 1 : "?");
		rp_set(o, "file", c);
	} else {
		rp_set(o, "function", c);
		rp_set(o, "file", "?");
	}
	if (line > 0)
		json_object_set_new(o, "line", json_integer(line));
	free(c);
}

static int rp_cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The object kind: the names of the handle fields, sorted, comma-joined. */
static void rp_kind(const json_t *rec, char *buf, size_t len)
{
	const char *names[64];
	const char *k;
	json_t *v;
	size_t n = 0, o = 0, i;

	json_object_foreach((json_t *)rec, k, v)
	{
		if (n < 64 && json_is_string(v) && !strncmp(json_string_value(v), "0x", 2))
			names[n++] = k;
	}
	qsort(names, n, sizeof names[0], rp_cmp_str);
	buf[0] = '\0';
	for (i = 0; i < n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? "," : "", names[i]);
}

void rp_fingerprint(const json_t *rec, json_t *o)
{
	const char *rule = rp_str(rec, "rule"), *fields[4];
	char kind[512], hex[20];
	uint64_t h = 1469598103934665603ULL; /* FNV-1a 64 */

	rp_set(o, "rule", rule);
	rp_site_parts(rp_site0(rec, "site"), o);
	rp_kind(rec, kind, sizeof kind);
	rp_set(o, "kind", kind);
	fields[0] = rp_str(o, "rule");
	fields[1] = rp_str(o, "function");
	fields[2] = rp_str(o, "file");
	fields[3] = kind;
	for (int f = 0; f < 4; f++) {
		for (const char *p = fields[f] ? fields[f] : ""; *p; p++)
			h = (h ^ (unsigned char)*p) * 1099511628211ULL;
		h = (h ^ 0x1f) * 1099511628211ULL;
	}
	snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
	rp_set(o, "fingerprint", hex);
}

/* "outer > decode", or NULL when the record has no labels. */
static char *rp_label_stack(const json_t *rec)
{
	json_t *a = json_object_get(rec, "labels"), *e;
	char *s = NULL;
	size_t len = 0, i;
	FILE *f;

	if (!json_array_size(a) || !(f = open_memstream(&s, &len)))
		return NULL;
	json_array_foreach(a, i, e) fprintf(f, "%s%s", i ? " > " : "", json_is_string(e) ? json_string_value(e) : "?");
	fclose(f);
	return s;
}

static void rp_add_unique(json_t *arr, json_t *v)
{
	size_t i;
	json_t *e;
	json_array_foreach(arr, i, e) if (json_equal(e, v))
	{
		json_decref(v);
		return;
	}
	json_array_append_new(arr, v);
}

/* One object per fingerprint, in the order first seen. */
static json_t *rp_findings(const struct rp_log *log)
{
	json_t *out = json_array(), *idx = json_object();
	size_t i;

	for (i = 0; i < log->n; i++) {
		json_t *j, *fp, *g;
		char *labels;

		if (log->recs[i].kind != RP_EV_VIOLATION)
			continue;
		j = rp_j(log, i);
		fp = json_object();
		rp_fingerprint(j, fp);
		g = json_object_get(idx, rp_str(fp, "fingerprint"));
		if (!g) {
			g = fp;
			rp_set(g, "name", rp_str(j, "name"));
			rp_set(g, "severity", rp_str(j, "severity"));
			rp_set(g, "msg", rp_str(j, "msg"));
			rp_set(g, "api", rp_str(j, "api"));
			rp_set(g, "doc", rp_str(j, "doc"));
			rp_set(g, "site", rp_site0(j, "site"));
			if (json_object_get(j, "site"))
				json_object_set(g, "stack", json_object_get(j, "site"));
			json_object_set_new(g, "count", json_integer(0));
			json_object_set_new(g, "pids", json_array());
			json_object_set_new(g, "labels", json_array());
			json_object_set_new(g, "baseline", json_string("new"));
			json_array_append_new(out, g);
			json_object_set(idx, rp_str(g, "fingerprint"), g);
		} else {
			json_decref(fp);
		}
		json_object_set_new(g, "count", json_integer(rp_int(g, "count", 0) + 1));
		rp_add_unique(json_object_get(g, "pids"), json_integer(log->recs[i].pid));
		if ((labels = rp_label_stack(j))) {
			rp_add_unique(json_object_get(g, "labels"), json_string(labels));
			free(labels);
		}
	}
	json_decref(idx);
	return out;
}

/* A baseline field matches when the entry leaves it out, says "*", or
 * says what the finding has. */
static int rp_field_matches(const json_t *entry, const json_t *f, const char *k)
{
	const char *want = rp_str(entry, k);
	return !want || !strcmp(want, "*") || (rp_str(f, k) && !strcmp(want, rp_str(f, k)));
}

static json_t *rp_baseline_load(const char *path)
{
	json_error_t err;
	json_t *b = json_load_file(path, 0, &err), *s;
	size_t i;
	json_t *e;

	if (!b) {
		fprintf(stderr, "cgshim report: baseline %s:%d: %s\n", path, err.line, err.text);
		return NULL;
	}
	s = json_is_array(b) ? b : json_object_get(b, "suppressions");
	if (!json_is_array(s)) {
		fprintf(stderr, "cgshim report: baseline %s has no \"suppressions\" list (docs/ci.md)\n", path);
		json_decref(b);
		return NULL;
	}
	json_array_foreach(s, i, e)
	{
		if (!json_is_object(e) || !rp_str(e, "rule")) {
			fprintf(stderr, "cgshim report: baseline %s: entry %zu has no \"rule\"\n", path, i + 1);
			json_decref(b);
			return NULL;
		}
	}
	json_incref(s);
	json_decref(b);
	return s;
}

static int rp_baseline_apply(json_t *findings, const char *path, json_t *doc)
{
	json_t *sup = rp_baseline_load(path), *verdict, *stale, *e, *f;
	size_t i, k;
	long long known = 0;

	if (!sup)
		return 1;
	json_array_foreach(findings, k, f)
	{
		json_array_foreach(sup, i, e)
		{
			if (!strcmp(rp_str(e, "rule"), rp_str(f, "rule")) && rp_field_matches(e, f, "function") &&
			    rp_field_matches(e, f, "file") && rp_field_matches(e, f, "kind")) {
				json_object_set_new(f, "baseline", json_string("unchanged"));
				json_object_set_new(e, "matched", json_integer(rp_int(e, "matched", 0) + 1));
				known++;
				break;
			}
		}
	}
	stale = json_array();
	json_array_foreach(sup, i, e) if (!rp_int(e, "matched", 0)) json_array_append(stale, e);
	verdict = json_object();
	rp_set(verdict, "file", path);
	json_object_set_new(verdict, "known", json_integer(known));
	json_object_set_new(verdict, "new", json_integer((long long)json_array_size(findings) - known));
	json_object_set_new(verdict, "stale", stale);
	json_object_set_new(doc, "baseline", verdict);
	json_decref(sup);
	return 0;
}

static int rp_baseline_write(const json_t *findings, const char *path)
{
	json_t *b = json_object(), *s = json_array(), *f;
	static const char *const keep[] = {"rule", "name", "function", "file", "kind", "count", "msg"};
	size_t i;
	int rc;

	json_object_set_new(b, "cgshim_baseline", json_integer(1));
	json_object_set_new(b, "about",
			    json_string("known cgshim findings: one entry per fingerprint (rule, function, "
					"file, kind); docs/ci.md"));
	json_array_foreach(findings, i, f)
	{
		json_t *e = json_object();
		for (size_t k = 0; k < sizeof keep / sizeof keep[0]; k++)
			if (json_object_get(f, keep[k]))
				json_object_set(e, keep[k], json_object_get(f, keep[k]));
		json_array_append_new(s, e);
	}
	json_object_set_new(b, "suppressions", s);
	rc = json_dump_file(b, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(b);
	if (rc < 0)
		fprintf(stderr, "cgshim report: cannot write the baseline %s\n", path);
	return rc < 0 ? 1 : 0;
}

/* The violations table without the rows of known findings. */
static void rp_cut_known(json_t *doc, const json_t *findings)
{
	json_t *rows = json_object_get(doc, "violations"), *keep = json_array(), *row, *f;
	size_t i, k;

	json_array_foreach(rows, i, row)
	{
		json_t *fp = json_object();
		int known = 0;
		rp_fingerprint(json_object_get(row, "first"), fp);
		json_array_foreach(findings, k, f) if (!strcmp(rp_str(f, "fingerprint"), rp_str(fp, "fingerprint")))
		    known = !strcmp(rp_str(f, "baseline"), "unchanged");
		json_decref(fp);
		if (!known)
			json_array_append(keep, row);
	}
	json_object_set_new(doc, "violations", keep);
}

int rp_ci_run(const struct rp_log *log, json_t *doc, const struct rp_ci *ci)
{
	json_t *findings = rp_findings(log), *f;
	int rc = 0;
	size_t i;

	json_object_set(doc, "findings", findings);
	if (ci->baseline) {
		if (rp_baseline_apply(findings, ci->baseline, doc))
			rc = 1;
		else
			rp_cut_known(doc, findings);
	}
	if (ci->write_baseline && rp_baseline_write(findings, ci->write_baseline))
		rc = 1;
	if (ci->sarif && rp_sarif_write(findings, ci->sarif) < 0)
		rc = 1;
	if (ci->junit && rp_junit_write(findings, ci->junit) < 0)
		rc = 1;
	if (ci->fail_on && !rc) {
		json_array_foreach(findings, i, f)
		{
			const char *sev = rp_str(f, "severity");
			if (!strcmp(rp_str(f, "baseline"), "new") &&
			    (!strcmp(sev, "error") || (!strcmp(ci->fail_on, "warn") && !strcmp(sev, "warn"))))
				rc = 3;
		}
	}
	json_decref(findings);
	return rc;
}

void rp_ci_print(FILE *f, const json_t *doc)
{
	const json_t *b = json_object_get(doc, "baseline"), *fs = json_object_get(doc, "findings"), *e;
	size_t i, k;
	int any = 0;

	if (b) {
		fprintf(f, "\n== Baseline %s: %lld finding(s) known, %lld new\n", rp_str(b, "file"),
			rp_int(b, "known", 0), rp_int(b, "new", 0));
		json_array_foreach(json_object_get(b, "stale"), i, e)
		    fprintf(f, "  stale (matched nothing): %s at %s (%s) kind %s\n", rp_str(e, "rule"),
			    rp_str(e, "function") ? rp_str(e, "function") : "*",
			    rp_str(e, "file") ? rp_str(e, "file") : "*", rp_str(e, "kind") ? rp_str(e, "kind") : "*");
	}
	json_array_foreach(fs, i, e)
	{
		const json_t *l;
		json_array_foreach(json_object_get(e, "labels"), k, l)
		{
			if (!any++)
				fputs("\n== Findings by label (NVTX ranges, cgshim_label_push, the pytest plugin)\n",
				      f);
			fprintf(f, "  %s: %s %s [%s] at %s\n", json_string_value(l), rp_str(e, "rule"),
				rp_str(e, "name"), rp_str(e, "severity"), rp_str(e, "site"));
		}
	}
}
