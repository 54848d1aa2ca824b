/*
 * tools/report-html.c -- `cgshim report --html OUT.html LOG...`: one
 * self-contained page (no external resource) with every section of the
 * text report: summary, violations with their rule pages (embedded, and
 * linked where installed), who broke each capture, memory per capture,
 * graph memory over time and per pool (charts: report-html-chart.c), leaks,
 * rewrites, mispredictions, failing calls, processes and ranks, any further
 * table the analysis has, graphs and failing updates drawn by `dot -Tsvg`,
 * and a link to the Perfetto timeline written beside it (OUT.perfetto.json).
 *
 * Size is bounded whatever the log's: identical rows are folded with a
 * count (rp_fold_rows), each table shows its first HTML_TOP_ROWS rows (the
 * largest first where that means something) and says how many it leaves
 * out, charts draw at most that many marks, and pictures are drawn while
 * the passes over the log they cost stay within HTML_PICTURE_VISITS.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* Rows shown per table, and groups per chart. */
#define HTML_TOP_ROWS 100
#define HTML_TOP_BARS 40
/* Pictures drawn at most, each kind; and record visits all pictures may
 * cost together (each is one pass over the log). */
#define HTML_MAX_PICTURES 12
#define HTML_PICTURE_VISITS 2000000LL

struct hcol {
	const char *key, *head;
	int bytes;
};

/* A cell: strings escaped, integers as is, byte counts (bytes != 0) sized. */
static void html_cell(FILE *f, const json_t *o, const char *k, int bytes)
{
	json_t *v = json_object_get(o, k);
	char b[32];
	fputs("<td>", f);
	if (json_is_string(v))
		rp_xml_esc(f, json_string_value(v));
	else if (json_is_integer(v) && bytes)
		rp_xml_esc(f, rp_bytes((long long)json_integer_value(v), b, sizeof b));
	else if (json_is_integer(v))
		fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
	else if (json_is_boolean(v))
		fputs(json_is_true(v) ? "yes" : "no", f);
	else if (json_is_real(v))
		fprintf(f, "%.3f", json_real_value(v));
	else
		fputs("-", f);
	fputs("</td>", f);
}

/* The first HTML_TOP_ROWS rows with the given columns, a "count" column
 * when the rows are folded (rp_fold_rows), and a last row saying what was
 * left out. */
static void html_table(FILE *f, const json_t *rows, const struct hcol *cols, unsigned ncols, int folded)
{
	size_t i, n = json_array_size(rows), shown = n < HTML_TOP_ROWS ? n : HTML_TOP_ROWS;
	long long rest = 0;
	json_t *row;
	unsigned c;
	fputs("<table><tr>", f);
	for (c = 0; c < ncols; c++) {
		fputs("<th>", f);
		rp_xml_esc(f, cols[c].head);
		fputs("</th>", f);
	}
	fputs(folded ? "<th>count</th></tr>\n" : "</tr>\n", f);
	json_array_foreach(rows, i, row)
	{
		if (i >= shown) {
			rest += folded ? rp_int(row, "count", 1) : 1;
			continue;
		}
		fputs("<tr>", f);
		for (c = 0; c < ncols; c++)
			html_cell(f, row, cols[c].key, cols[c].bytes);
		if (folded)
			html_cell(f, row, "count", 0);
		fputs("</tr>\n", f);
	}
	if (n > shown)
		fprintf(f,
			"<tr class=\"rest\"><td colspan=\"%u\">and %zu more row%s (%lld in all) not shown: "
			"<code>cgshim report --json</code> has every one</td></tr>\n",
			ncols + (unsigned)folded, n - shown, n - shown == 1 ? "" : "s", rest);
	fputs("</table>\n", f);
}

/* Columns of a table nobody described: the scalar fields of its first row. */
static void html_table_any(FILE *f, const json_t *rows, int folded)
{
	struct hcol cols[24];
	unsigned n = 0;
	const char *k;
	json_t *v;

	json_object_foreach(json_array_get(rows, 0), k, v) if (n < 24 && !json_is_array(v) && !json_is_object(v))
	{
		cols[n].key = cols[n].head = k;
		cols[n].bytes = strstr(k, "bytes") || strstr(k, "size") || !strcmp(k, "used") || !strcmp(k, "reserved");
		n++;
	}
	html_table(f, rows, cols, n, folded);
}

static int html_picture(FILE *f, const struct rp_log *log, const char *what, const char *title)
{
	char tmp[] = "/tmp/cgshim-html-XXXXXX.svg";
	char *buf = NULL, *svg;
	size_t cap = 0;
	ssize_t n;
	FILE *in;
	int fd = mkstemps(tmp, 4), ok = 0;

	if (fd < 0)
		return 0;
	close(fd);
	if (rp_dot(log, what, tmp) == 0 && (in = fopen(tmp, "r"))) {
		n = getdelim(&buf, &cap, '\0', in);
		fclose(in);
		if (n > 0 && (svg = strstr(buf, "<svg"))) {
			fputs("<figure><figcaption>", f);
			rp_xml_esc(f, title);
			fprintf(f, "</figcaption>\n%s</figure>\n", svg);
			ok = 1;
		}
	}
	free(buf);
	unlink(tmp);
	return ok;
}

/* Where rule ID's page is: installed (CGSHIM_DOCDIR), beside an installed
 * executable moved elsewhere (EXE/../share/doc/cgshim), or in the checkout
 * this report was built from. 0 when none is readable. */
static int html_rule_path(const char *rule, char *out, size_t len)
{
	char exe[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	const char *dirs[3] = {CGSHIM_DOCDIR "/rules", NULL, CGSHIM_SRCDIR "/docs/rules"};
	char rel[PATH_MAX + 32];
	unsigned i;

	if (n > 0) {
		exe[n] = 0;
		if ((slash = strrchr(exe, '/'))) {
			*slash = 0;
			snprintf(rel, sizeof rel, "%s/../share/doc/cgshim/rules", exe);
			dirs[1] = rel;
		}
	}
	for (i = 0; i < 3; i++) {
		if (!dirs[i])
			continue;
		snprintf(out, len, "%s/%s.md", dirs[i], rule);
		if (access(out, R_OK) == 0)
			return 1;
	}
	return 0;
}

static void html_violations(FILE *f, const json_t *a, json_t *rules)
{
	json_t *row, *v, *fr;
	const char *k;
	size_t i, x;

	fprintf(f, "<section id=\"violations\"><h2>Violations (%zu rule/site pairs)</h2>\n", json_array_size(a));
	json_array_foreach(a, i, row)
	{
		const json_t *first = json_object_get(row, "first");
		const char *rule = rp_str(row, "rule") ? rp_str(row, "rule") : "?";
		if (i >= HTML_TOP_ROWS) {
			fprintf(
			    f,
			    "<p class=\"rest\">and %zu more rule/site pairs: <code>cgshim report</code> lists every "
			    "one</p>\n",
			    json_array_size(a) - i);
			break;
		}
		json_object_set_new(rules, rule, json_true());
		fputs("<div class=\"viol\"><b>", f);
		rp_xml_esc(f, rule);
		fputs(" ", f);
		rp_xml_esc(f, rp_str(row, "name"));
		fputs("</b> <span class=\"err\">[", f);
		rp_xml_esc(f, rp_str(row, "severity"));
		fprintf(f, "]</span> x%lld at <code>", rp_int(row, "count", 0));
		rp_xml_esc(f, rp_str(row, "site"));
		fputs("</code> &mdash; <a class=\"rule\" href=\"#rule-", f);
		rp_xml_esc(f, rule);
		fputs("\">rule page</a>\n<p>", f);
		rp_xml_esc(f, rp_str(first, "msg"));
		fputs("</p>\n", f);
		json_object_foreach((json_t *)first, k, v)
		{
			if (!json_is_array(v))
				continue;
			fputs("<details><summary>", f);
			rp_xml_esc(f, k);
			fputs("</summary><ol start=\"0\">", f);
			json_array_foreach(v, x, fr) if (json_is_string(fr))
			{
				fputs("<li><code>", f);
				rp_xml_esc(f, json_string_value(fr));
				fputs("</code></li>", f);
			}
			fputs("</ol></details>\n", f);
		}
		fputs("</div>\n", f);
	}
	fputs("</section>\n", f);
}

/* The pages of the rules the page names, embedded (a page read anywhere
 * keeps them), each linked to its installed file when there is one. */
static void html_rules(FILE *f, const json_t *rules)
{
	const char *rule;
	json_t *v;
	char path[PATH_MAX + 64], buf[4096];

	if (!json_object_size(rules))
		return;
	fputs("<section id=\"rules\"><h2>Rule pages</h2>\n", f);
	json_object_foreach((json_t *)rules, rule, v)
	{
		FILE *in;
		size_t n, total = 0;
		fputs("<details class=\"rulepage\" id=\"rule-", f);
		rp_xml_esc(f, rule);
		fputs("\"><summary>", f);
		rp_xml_esc(f, rule);
		if (!html_rule_path(rule, path, sizeof path) || !(in = fopen(path, "r"))) {
			fprintf(f,
				"</summary><p>No page found for this rule here (installed under %s/rules, "
				"or docs/rules in the source).</p></details>\n",
				CGSHIM_DOCDIR);
			continue;
		}
		fputs(" &mdash; <a href=\"file://", f);
		rp_xml_esc(f, path);
		fputs("\">", f);
		rp_xml_esc(f, path);
		fputs("</a></summary><pre>", f);
		while ((n = fread(buf, 1, sizeof buf - 1, in)) > 0 && total < (64 << 10)) {
			buf[n] = 0;
			rp_xml_esc(f, buf);
			total += n;
		}
		fclose(in);
		fputs("</pre></details>\n", f);
	}
	fputs("</section>\n", f);
}

/* Captures with the same figures and site folded, largest first. */
static int html_cap_cmp(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	double vx =
	    (double)rp_int(x, "count", 1) *
	    (double)(rp_int(x, "alloc_bytes", 0) + rp_int(x, "malloc_bytes", 0) + rp_int(x, "instantiate_delta", 0));
	double vy =
	    (double)rp_int(y, "count", 1) *
	    (double)(rp_int(y, "alloc_bytes", 0) + rp_int(y, "malloc_bytes", 0) + rp_int(y, "instantiate_delta", 0));
	if (vx != vy)
		return vx > vy ? -1 : 1;
	return rp_int(x, "count", 1) > rp_int(y, "count", 1) ? -1 : rp_int(x, "count", 1) < rp_int(y, "count", 1);
}

static json_t *html_sorted(json_t *rows, int (*cmp)(const void *, const void *))
{
	size_t n = json_array_size(rows), i;
	json_t **v = malloc((n ? n : 1) * sizeof *v), *out = json_array();
	for (i = 0; v && i < n; i++)
		v[i] = json_array_get(rows, i);
	if (v) {
		qsort(v, n, sizeof *v, cmp);
		for (i = 0; i < n; i++)
			json_array_append(out, v[i]);
	}
	free(v);
	json_decref(rows);
	return out;
}

static void html_captures(FILE *f, const json_t *doc)
{
	static const char *const vary[] = {"capture", "graph", "stream", "dur_ns", "begin_tid", NULL};
	static const struct hcol cols[] = {{"pid", "pid"},
					   {"capture", "capture"},
					   {"last_capture", "to capture"},
					   {"rc", "rc"},
					   {"mode", "mode"},
					   {"alloc_nodes", "alloc nodes"},
					   {"alloc_bytes", "alloc", 1},
					   {"malloc_bytes", "malloc", 1},
					   {"delta", "delta", 1},
					   {"unattributed", "unattributed", 1},
					   {"instantiate_delta", "inst-delta", 1},
					   {"site", "site"}};
	const json_t *a = json_object_get(doc, "captures"), *t = json_object_get(doc, "capture_totals");
	json_t *groups, *top = json_array(), *g;
	size_t i;
	char b1[32], b2[32], b3[32];

	long long ncap = 0, nrest = rp_int(doc, "captures_rest_other", 0);
	const json_t *rest = json_object_get(doc, "captures_rest");

	/* the analysis folds identical rows as it reads (report-analyse.c) */
	json_array_foreach(a, i, g) ncap += rp_int(g, "count", 1);
	json_array_foreach(rest, i, g) nrest += rp_int(g, "count", 0);
	fprintf(f, "<section id=\"captures\"><h2>Memory per capture (%lld captures)</h2>\n", ncap + nrest);
	if (!json_array_size(a)) {
		fputs("<p>No capture in the log.</p></section>\n", f);
		json_decref(top);
		return;
	}
	groups = html_sorted(rp_fold_rows(a, vary), html_cap_cmp);
	fprintf(f,
		"<p>%zu group%s of captures with the same site and figures (e.g. one per batch size); in all "
		"%s in graph allocations, %s in mallocs during captures, %s taken at instantiation.</p>\n",
		json_array_size(groups), json_array_size(groups) == 1 ? "" : "s",
		rp_bytes(rp_int(t, "alloc_bytes", 0), b1, sizeof b1),
		rp_bytes(rp_int(t, "malloc_bytes", 0), b2, sizeof b2),
		rp_bytes(rp_int(t, "instantiate_delta", 0), b3, sizeof b3));
	json_array_foreach(groups, i, g) if (i < HTML_TOP_BARS) json_array_append(top, g);
	rp_html_capture_chart(f, top);
	html_table(f, groups, cols, sizeof cols / sizeof cols[0], 1);
	if (nrest)
		fprintf(f,
			"<p>and %lld more capture(s) of other figures past the table's rows, counted by site and "
			"batch size in the --json document's captures_rest.</p>\n",
			nrest);
	fputs("</section>\n", f);
	json_decref(top);
	json_decref(groups);
}

/* Who broke the capture: each failed end with the first call that broke
 * it, then the invalidations and abandoned captures (folded). */
static void html_broken(FILE *f, const json_t *doc)
{
	static const char *const vary[] = {"capture", "t_ms", "age_ns", NULL};
	static const struct hcol cols[] = {{"what", "what"},
					   {"pid", "pid"},
					   {"capture", "capture"},
					   {"last_capture", "to"},
					   {"begin_tid", "begin tid"},
					   {"mode", "mode"},
					   {"found_by", "found by"},
					   {"reason", "reason"},
					   {"api", "call"},
					   {"call_tid", "call tid"},
					   {"site", "call site"},
					   {"begin_site", "begin site"}};
	const json_t *chains = json_object_get(doc, "capture_chains"), *brk = json_object_get(doc, "broken_captures");
	json_t *row, *rows;
	size_t i;

	if (!json_array_size(chains) && !json_array_size(brk))
		return;
	fputs("<section id=\"broken\"><h2>Who broke the capture</h2>\n", f);
	json_array_foreach(chains, i, row)
	{
		if (i >= HTML_TOP_ROWS) {
			fprintf(f, "<p class=\"rest\">and %zu more failed ends</p>\n", json_array_size(chains) - i);
			break;
		}
		fprintf(f, "<div class=\"chain\"><b>capture %lld</b> (pid %lld, ", rp_int(row, "capture", 0),
			rp_int(row, "pid", 0));
		rp_xml_esc(f, rp_str(row, "mode"));
		fputs(" mode, stream <code>", f);
		rp_xml_esc(f, rp_str(row, "stream"));
		fprintf(f, "</code>) ended with %lld <span class=\"err\">", rp_int(row, "rc", 0));
		rp_xml_esc(f, rp_str(row, "err"));
		fprintf(f, "</span><br>begun on thread %lld ", rp_int(row, "begin_tid", 0));
		rp_xml_esc(f, rp_str(row, "begin_thread"));
		fputs(" at <code>", f);
		rp_xml_esc(f, rp_str(row, "begin_site") ? rp_str(row, "begin_site") : "-");
		fputs("</code><br>", f);
		if (rp_str(row, "by_api")) {
			fputs("broken by <b>", f);
			rp_xml_esc(f, rp_str(row, "by_api"));
			fputs("</b> (", f);
			rp_xml_esc(f, rp_str(row, "by_rule") ? rp_str(row, "by_rule") : "not predicted");
			fprintf(f, ", rc %lld) on thread %lld ", rp_int(row, "by_rc", 0), rp_int(row, "by_tid", 0));
			rp_xml_esc(f, rp_str(row, "by_thread"));
			fputs(" at <code>", f);
			rp_xml_esc(f, rp_str(row, "by_site") ? rp_str(row, "by_site") : "-");
			fputs("</code>", f);
		} else {
			fputs("broken by no call the shim saw (an unhooked call or a lazy module load)", f);
		}
		fputs("</div>\n", f);
	}
	if (json_array_size(brk)) {
		fputs("<h3>Invalidated and abandoned captures</h3>\n", f);
		rows = rp_fold_rows(brk, vary);
		html_table(f, rows, cols, sizeof cols / sizeof cols[0], 1);
		json_decref(rows);
	}
	fputs("</section>\n", f);
}

static void html_graphmem(FILE *f, const json_t *a)
{
	static const char *const vary[] = {"t_ms", "exec", "graph", NULL};
	static const struct hcol cols[] = {{"t_ms", "t (ms)"},
					   {"last_t_ms", "until (ms)"},
					   {"pid", "pid"},
					   {"dev", "dev"},
					   {"when", "when"},
					   {"exec", "exec"},
					   {"graph", "graph"},
					   {"used", "used", 1},
					   {"used_high", "used-high", 1},
					   {"reserved", "reserved", 1},
					   {"reserved_high", "resv-high", 1}};
	json_t *rows;
	if (!json_array_size(a))
		return;
	fprintf(f, "<section id=\"graphmem\"><h2>Graph memory over time (%zu samples)</h2>\n", json_array_size(a));
	rp_html_graphmem_chart(f, a);
	rows = rp_fold_rows(a, vary);
	html_table(f, rows, cols, sizeof cols / sizeof cols[0], 1);
	json_decref(rows);
	fputs("</section>\n", f);
}

static void html_pools(FILE *f, const json_t *a)
{
	static const struct hcol cols[] = {{"pid", "pid"},
					   {"pool", "pool"},
					   {"default", "default"},
					   {"ipc", "ipc"},
					   {"allocs", "allocs"},
					   {"alloc_bytes", "bytes", 1},
					   {"used_high", "used-high", 1},
					   {"reserved_high", "resv-high", 1},
					   {"site", "site"}};
	json_t *top = json_array(), *p;
	size_t i;

	fprintf(f, "<section id=\"pools\"><h2>Memory per pool (%zu)</h2>\n", json_array_size(a));
	json_array_foreach(a, i, p) if (i < HTML_TOP_BARS) json_array_append(top, p);
	if (json_array_size(a)) {
		rp_html_pool_chart(f, top);
		/* the swatch ties each row to its colour in the chart */
		fputs("<p>", f);
		json_array_foreach(top, i, p)
		{
			fprintf(f, "<span class=\"swatch\" style=\"background:%s\"></span> <code>", rp_html_colour(i));
			rp_xml_esc(f, rp_str(p, "pool") ? rp_str(p, "pool") : "?");
			fputs("</code> ", f);
		}
		fputs("</p>\n", f);
		html_table(f, a, cols, sizeof cols / sizeof cols[0], 0);
	}
	json_decref(top);
	fputs("</section>\n", f);
}

/* A section of rows, folded by vary when given. */
static void html_rows_section(FILE *f, const char *id, const char *title, const json_t *a, const char *const *vary,
			      const struct hcol *cols, unsigned ncols)
{
	json_t *rows;
	if (!json_array_size(a))
		return;
	rows = vary ? rp_fold_rows(a, vary) : json_incref((json_t *)a);
	fprintf(f, "<section id=\"%s\"><h2>", id);
	rp_xml_esc(f, title);
	fprintf(f, " (%zu)</h2>\n", json_array_size(a));
	if (cols)
		html_table(f, rows, cols, ncols, vary != NULL);
	else
		html_table_any(f, rows, vary != NULL);
	fputs("</section>\n", f);
	json_decref(rows);
}

/* Every failing update (CGS001) and every graph with node records, drawn,
 * while the passes they cost stay within HTML_PICTURE_VISITS. */
static void html_graphs(FILE *f, const struct rp_log *log, size_t *nupd, size_t *ngraphs)
{
	long long budget = HTML_PICTURE_VISITS, nviol = 0, skipped = 0;
	json_t *drawn;
	char what[64], title[160];
	size_t i;

	fputs("<section id=\"graphs\"><h2>Graphs</h2>\n", f);
	if (system("command -v dot >/dev/null 2>&1") != 0) {
		fputs("<p>dot (Graphviz) is not on PATH: no pictures.</p>\n</section>\n", f);
		return;
	}
	drawn = json_object();
	for (i = 0; i < log->n; i++)
		if (log->recs[i].kind == RP_EV_VIOLATION && rp_str(rp_j(log, i), "rule") &&
		    !strcmp(rp_str(rp_j(log, i), "rule"), "CGS001"))
			nviol++;
	for (long long u = 1; u <= nviol; u++) {
		if (*nupd >= HTML_MAX_PICTURES || (budget < (long long)log->n && *nupd)) {
			skipped += nviol - u + 1;
			break;
		}
		budget -= (long long)log->n;
		snprintf(what, sizeof what, "update:%lld", u);
		snprintf(title, sizeof title, "failing update %lld: the exec and the new graph", u);
		*nupd += (size_t)html_picture(f, log, what, title);
	}
	for (i = 0; i < log->n; i++) {
		const json_t *j;
		char g[64];
		if (log->recs[i].kind != RP_EV_NODE)
			continue;
		j = rp_j(log, i);
		if (!rp_str(j, "graph") || rp_str(j, "side") || json_object_get(drawn, rp_str(j, "graph")))
			continue;
		snprintf(g, sizeof g, "%s", rp_str(j, "graph")); /* drawing reads other records */
		json_object_set_new(drawn, g, json_true());
		if (*ngraphs >= HTML_MAX_PICTURES || (budget < (long long)log->n && *ngraphs)) {
			skipped++;
			continue;
		}
		budget -= (long long)log->n;
		snprintf(title, sizeof title, "graph %s (pid %lld)", g, log->recs[i].pid);
		*ngraphs += (size_t)html_picture(f, log, g, title);
	}
	if (skipped)
		fprintf(f,
			"<p class=\"rest\">%lld more picture%s not drawn here (each is a pass over the log): "
			"<code>cgshim report --dot GRAPH|update:N</code> draws any one.</p>\n",
			skipped, skipped == 1 ? "" : "s");
	if (!*nupd && !*ngraphs)
		fputs("<p>No graph to draw: node records are written for failing updates, and "
		      "for every graph at CGSHIM_LOG=debug.</p>\n",
		      f);
	json_decref(drawn);
	fputs("</section>\n", f);
}

/* Sections this file draws itself; any other array (or object of arrays)
 * the analysis gains is drawn as a plain table. */
static int html_known(const char *k)
{
	static const char *const known[] = {"format_version", "files",		 "skipped",	   "summary",
					    "shim_summary",   "processes",	 "violations",	   "captures",
					    "capture_totals", "broken_captures", "capture_chains", "pools",
					    "graphmem",	      "failing_calls",	 "rewrites",	   "leaks",
					    "mispredictions", "findings",	 "stale_modules"};
	size_t i;
	for (i = 0; i < sizeof known / sizeof known[0]; i++)
		if (!strcmp(k, known[i]))
			return 1;
	return 0;
}

static void html_other(FILE *f, const json_t *doc)
{
	const char *k, *k2;
	json_t *v, *v2;
	char id[128];

	json_object_foreach((json_t *)doc, k, v)
	{
		if (html_known(k))
			continue;
		if (json_is_array(v) && json_is_object(json_array_get(v, 0))) {
			html_rows_section(f, k, k, v, NULL, NULL, 0);
		} else if (json_is_object(v)) {
			json_object_foreach(v, k2, v2) if (json_is_array(v2) && json_is_object(json_array_get(v2, 0)))
			{
				snprintf(id, sizeof id, "%s-%s", k, k2);
				html_rows_section(f, id, id, v2, NULL, NULL, 0);
			}
		}
	}
}

int rp_html(const struct rp_log *log, const json_t *doc, const char *out)
{
	static const struct hcol leak_cols[] = {{"pid", "pid"},	     {"dptr", "dptr"}, {"last_dptr", "to dptr"},
						{"size", "size", 1}, {"pool", "pool"}, {"exec", "exec"},
						{"when", "when"},    {"site", "site"}};
	static const char *const leak_vary[] = {"dptr", "exec", "graph", NULL};
	static const struct hcol rw_cols[] = {{"t_ms", "t (ms)"},     {"pid", "pid"},	    {"exec", "exec"},
					      {"graph", "graph"},     {"reason", "reason"}, {"reused", "reused"},
					      {"dur_ns", "dur (ns)"}, {"why", "why"}};
	static const char *const rw_vary[] = {"t_ms", "exec", "graph", "dur_ns", NULL};
	static const struct hcol fail_cols[] = {{"api", "api"}, {"via", "via"},	    {"err", "error"},
						{"rc", "rc"},	{"count", "calls"}, {"site", "first site"}};
	static const struct hcol proc_cols[] = {
	    {"pid", "pid"}, {"ppid", "ppid"}, {"rank", "rank"}, {"records", "records"}, {"exe", "exe"}};
	const json_t *sum = json_object_get(doc, "summary"), *a;
	json_t *v, *rules = json_object();
	char perf[4096];
	const char *base, *k;
	size_t i, ngraphs = 0, nupd = 0;
	FILE *f;

	snprintf(perf, sizeof perf, "%.*s.perfetto.json",
		 (int)(strlen(out) > 5 && !strcmp(out + strlen(out) - 5, ".html") ? strlen(out) - 5 : strlen(out)),
		 out);
	if (rp_perfetto(log, perf) != 0) {
		json_decref(rules);
		return 1;
	}
	if (!(f = fopen(out, "w"))) {
		fprintf(stderr, "cgshim report: %s: %s\n", out, strerror(errno));
		json_decref(rules);
		return 1;
	}
	base = strrchr(perf, '/') ? strrchr(perf, '/') + 1 : perf;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>cgshim report</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;max-width:1400px}\n"
	      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;"
	      "padding:2px 6px;font-size:13px;text-align:left}th{background:#eee}\n"
	      "code,td{font-family:monospace}.err{color:#b00}.viol,.chain{border-left:4px solid #b00;"
	      "padding-left:.6em;margin:1em 0}.rest{color:#555;font-style:italic}\n"
	      ".swatch{display:inline-block;width:12px;height:12px;margin-left:1em}"
	      "pre{white-space:pre-wrap;background:#f7f7f7;padding:.5em}nav a{margin-right:1em}\n"
	      "figure{margin:1em 0}figcaption{font-weight:bold}svg.chart{display:block;margin:.5em 0}\n"
	      "</style></head><body>\n<h1>cgshim report</h1>\n<p>",
	      f);
	fprintf(f, "%" JSON_INTEGER_FORMAT " records from", json_integer_value(json_object_get(sum, "records")));
	json_array_foreach(json_object_get(doc, "files"), i, v)
	{
		fputs(" <code>", f);
		rp_xml_esc(f, json_string_value(v));
		fputs("</code>", f);
	}
	fputs(". Timeline: <a id=\"perfetto\" href=\"", f);
	rp_xml_esc(f, base);
	fputs("\">", f);
	rp_xml_esc(f, base);
	fputs("</a> (open it in ui.perfetto.dev).</p>\n", f);
	json_array_foreach(json_object_get(doc, "stale_modules"), i, v)
	{
		fputs("<p class=\"err\">STALE BINARY <code>", f);
		rp_xml_esc(f, rp_str(v, "path"));
		fputs("</code>: changed since the run; its frames are offsets.</p>\n", f);
	}
	fputs("<nav><a href=\"#summary\">summary</a><a href=\"#violations\">violations</a><a href=\"#broken\">broken "
	      "captures</a><a href=\"#captures\">captures</a><a href=\"#graphmem\">graph memory</a><a "
	      "href=\"#pools\">pools</a><a href=\"#leaks\">leaks</a><a href=\"#rewrites\">rewrites</a><a "
	      "href=\"#graphs\">graphs</a></nav>\n",
	      f);

	fputs("<section id=\"summary\"><h2>Summary</h2>\n<table>\n", f);
	json_object_foreach((json_t *)sum, k, v)
	{
		if (!json_is_integer(v))
			continue;
		fprintf(f, "<tr><th>%s</th><td class=\"n\" data-key=\"%s\">%" JSON_INTEGER_FORMAT "</td></tr>\n", k, k,
			json_integer_value(v));
	}
	fputs("</table></section>\n", f);

	html_violations(f, json_object_get(doc, "violations"), rules);
	html_broken(f, doc);
	html_captures(f, doc);
	html_graphmem(f, json_object_get(doc, "graphmem"));
	html_pools(f, json_object_get(doc, "pools"));
	html_rows_section(f, "leaks", "Graph allocations outstanding (leaks)", json_object_get(doc, "leaks"), leak_vary,
			  leak_cols, sizeof leak_cols / sizeof leak_cols[0]);
	html_rows_section(f, "rewrites", "Rewrites (failing updates turned into re-instantiation)",
			  json_object_get(doc, "rewrites"), rw_vary, rw_cols, sizeof rw_cols / sizeof rw_cols[0]);
	html_rows_section(f, "mismatches", "Predictions the driver disagreed with",
			  json_object_get(doc, "mispredictions"), NULL, NULL, 0);
	html_rows_section(f, "failing", "Failing calls", json_object_get(doc, "failing_calls"), NULL, fail_cols,
			  sizeof fail_cols / sizeof fail_cols[0]);
	a = json_object_get(doc, "processes");
	html_rows_section(f, "processes", "Processes", a, NULL, proc_cols, sizeof proc_cols / sizeof proc_cols[0]);
	html_other(f, doc);
	html_graphs(f, log, &nupd, &ngraphs);
	html_rules(f, rules);
	json_decref(rules);
	fputs("</body></html>\n", f);
	if (fclose(f) != 0) {
		fprintf(stderr, "cgshim report: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(stderr, "cgshim report: wrote %s (%zu update and %zu graph pictures) and %s\n", out, nupd, ngraphs,
		perf);
	return 0;
}
