/*
 * tools/report-html.c -- `cgshim report --html OUT.html LOG...`: one
 * self-contained page (no external resource): the summary, violations by
 * rule with their sites and rule pages, memory per capture as an inline SVG
 * chart, pools, rewrites, failing calls, every graph with node records and
 * every failing update drawn as inline SVG (by `dot -Tsvg`), and a link to
 * the Perfetto timeline written beside the page (OUT.perfetto.json).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report.h"

/* Pictures drawn at most, each kind: a page stays readable and quick. */
#define HTML_MAX_PICTURES 12

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

/* A table of rows (objects) with the given columns; bytes marks size columns. */
static void html_table(FILE *f, const json_t *rows, const char *const *cols, const char *const *heads, const int *bytes,
		       unsigned ncols)
{
	size_t i;
	json_t *row;
	unsigned c;
	fputs("<table><tr>", f);
	for (c = 0; c < ncols; c++) {
		fputs("<th>", f);
		rp_xml_esc(f, heads[c]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	json_array_foreach(rows, i, row)
	{
		fputs("<tr>", f);
		for (c = 0; c < ncols; c++)
			html_cell(f, row, cols[c], bytes[c]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* Draw one --dot picture to a temporary SVG and copy its <svg> element in. */
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

/* Memory per capture: one bar per capture, graph allocations plus the
 * caching allocator's mallocs inside it, and what instantiation took. */
static void html_capture_chart(FILE *f, const json_t *caps)
{
	const double W = 900, H = 220, left = 70, bottom = 30;
	long long maxv = 1;
	size_t i, n = json_array_size(caps);
	json_t *row;
	double bw;
	char b[32];

	json_array_foreach(caps, i, row)
	{
		long long v = rp_int(row, "alloc_bytes", 0) + rp_int(row, "malloc_bytes", 0);
		long long d = rp_int(row, "instantiate_delta", 0);
		if (v > maxv)
			maxv = v;
		if (d > maxv)
			maxv = d;
	}
	bw = (W - left - 10) / (double)(n ? n : 1);
	fprintf(f,
		"<svg class=\"chart\" width=\"%.0f\" height=\"%.0f\" role=\"img\" "
		"aria-label=\"memory per capture\">\n",
		W, H);
	fprintf(f, "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>\n", left, H - bottom,
		W - 10, H - bottom);
	fprintf(f, "<text x=\"2\" y=\"14\" font-size=\"11\">%s</text>\n", rp_bytes(maxv, b, sizeof b));
	fprintf(f, "<text x=\"2\" y=\"%.0f\" font-size=\"11\">0 B</text>\n", H - bottom);
	json_array_foreach(caps, i, row)
	{
		long long v = rp_int(row, "alloc_bytes", 0) + rp_int(row, "malloc_bytes", 0);
		long long d = rp_int(row, "instantiate_delta", 0);
		double x = left + (double)i * bw, hv = (H - bottom - 20) * (double)v / (double)maxv,
		       hd = (H - bottom - 20) * (double)(d > 0 ? d : 0) / (double)maxv;
		fprintf(f,
			"<rect class=\"cap\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
			"fill=\"%s\"><title>capture %s: %s in the capture",
			x + 1, H - bottom - hv, bw / 2 - 1, hv, rp_int(row, "rc", 0) ? "#fb8072" : "#80b1d3",
			json_is_string(json_object_get(row, "capture"))
			    ? json_string_value(json_object_get(row, "capture"))
			    : "?",
			rp_bytes(v, b, sizeof b));
		fprintf(f,
			"</title></rect>\n<rect class=\"inst\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.1f\" fill=\"#fdb462\"><title>instantiation took %s</title></rect>\n",
			x + bw / 2, H - bottom - hd, bw / 2 - 1, hd, rp_bytes(d, b, sizeof b));
	}
	fprintf(f,
		"<text x=\"%.0f\" y=\"%.0f\" font-size=\"11\">captures in time order "
		"(blue: allocated in the capture, red: invalidated, orange: taken at "
		"instantiation)</text>\n</svg>\n",
		left, H - 8);
}

int rp_html(const struct rp_log *log, const json_t *doc, const char *out)
{
	const json_t *sum = json_object_get(doc, "summary"), *a, *row;
	char perf[4096];
	const char *base, *k;
	json_t *v;
	size_t i, ngraphs = 0, nupd = 0;
	FILE *f;
	int dot_ok = system("command -v dot >/dev/null 2>&1") == 0;

	snprintf(perf, sizeof perf, "%.*s.perfetto.json",
		 (int)(strlen(out) > 5 && !strcmp(out + strlen(out) - 5, ".html") ? strlen(out) - 5 : strlen(out)),
		 out);
	if (rp_perfetto(log, perf) != 0)
		return 1;
	if (!(f = fopen(out, "w"))) {
		fprintf(stderr, "cgshim report: %s: %s\n", out, strerror(errno));
		return 1;
	}
	base = strrchr(perf, '/') ? strrchr(perf, '/') + 1 : perf;
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>cgshim report</title>\n<style>\n"
	      "body{font-family:sans-serif;margin:1.5em;max-width:1400px}\n"
	      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;"
	      "padding:2px 6px;font-size:13px;text-align:left}th{background:#eee}\n"
	      "code,td{font-family:monospace}.err{color:#b00}.viol{border-left:4px solid #b00;"
	      "padding-left:.6em;margin:1em 0}\nfigure{margin:1em 0}figcaption{font-weight:bold}\n"
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

	fputs("<section id=\"summary\"><h2>Summary</h2>\n<table>\n", f);
	json_object_foreach((json_t *)sum, k, v)
	{
		if (!json_is_integer(v))
			continue;
		fprintf(f, "<tr><th>%s</th><td class=\"n\" data-key=\"%s\">%" JSON_INTEGER_FORMAT "</td></tr>\n", k, k,
			json_integer_value(v));
	}
	fputs("</table></section>\n", f);

	a = json_object_get(doc, "violations");
	fprintf(f, "<section id=\"violations\"><h2>Violations (%zu rule/site pairs)</h2>\n", json_array_size(a));
	json_array_foreach(a, i, row)
	{
		const json_t *first = json_object_get(row, "first");
		json_t *fr;
		size_t x;
		fputs("<div class=\"viol\"><b>", f);
		rp_xml_esc(f, rp_str(row, "rule"));
		fputs(" ", f);
		rp_xml_esc(f, rp_str(row, "name"));
		fputs("</b> <span class=\"err\">[", f);
		rp_xml_esc(f, rp_str(row, "severity"));
		fprintf(f, "]</span> x%lld at <code>", rp_int(row, "count", 0));
		rp_xml_esc(f, rp_str(row, "site"));
		fputs("</code> &mdash; rule page: <a href=\"", f);
		rp_xml_esc(f, rp_str(row, "doc"));
		fputs("\">", f);
		rp_xml_esc(f, rp_str(row, "doc"));
		fputs("</a>\n<p>", f);
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

	a = json_object_get(doc, "captures");
	fprintf(f, "<section id=\"captures\"><h2>Memory per capture (%zu)</h2>\n", json_array_size(a));
	if (json_array_size(a)) {
		static const char *const cols[] = {"pid",	  "capture",	  "rc",	   "alloc_nodes",
						   "alloc_bytes", "malloc_bytes", "delta", "instantiate_delta",
						   "graph",	  "site"};
		static const char *const heads[] = {"pid",    "capture", "rc",	       "alloc nodes", "alloc",
						    "malloc", "delta",	 "inst-delta", "graph",	      "site"};
		static const int bytes[] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 0};
		html_capture_chart(f, a);
		html_table(f, a, cols, heads, bytes, 10);
	}
	fputs("</section>\n", f);

	a = json_object_get(doc, "pools");
	fprintf(f, "<section id=\"pools\"><h2>Memory per pool (%zu)</h2>\n", json_array_size(a));
	if (json_array_size(a)) {
		static const char *const cols[] = {"pid",	  "pool",      "default",	"ipc", "allocs",
						   "alloc_bytes", "used_high", "reserved_high", "site"};
		static const char *const heads[] = {"pid",   "pool",	  "default",   "ipc", "allocs",
						    "bytes", "used-high", "resv-high", "site"};
		static const int bytes[] = {0, 0, 0, 0, 0, 1, 1, 1, 0};
		html_table(f, a, cols, heads, bytes, 9);
	}
	fputs("</section>\n", f);

	a = json_object_get(doc, "rewrites");
	if (json_array_size(a)) {
		static const char *const cols[] = {"t_ms", "pid", "exec", "graph", "reason", "reused", "why"};
		static const int bytes[] = {0, 0, 0, 0, 0, 0, 0};
		fprintf(f, "<section id=\"rewrites\"><h2>Rewrites (%zu)</h2>\n", json_array_size(a));
		html_table(f, a, cols, cols, bytes, 7);
		fputs("</section>\n", f);
	}
	a = json_object_get(doc, "failing_calls");
	if (json_array_size(a)) {
		static const char *const cols[] = {"api", "err", "count", "site"};
		static const int bytes[] = {0, 0, 0, 0};
		fprintf(f, "<section id=\"failing\"><h2>Failing calls</h2>\n");
		html_table(f, a, cols, cols, bytes, 4);
		fputs("</section>\n", f);
	}

	fputs("<section id=\"graphs\"><h2>Graphs</h2>\n", f);
	if (!dot_ok) {
		fputs("<p>dot (Graphviz) is not on PATH: no pictures.</p>\n", f);
	} else {
		json_t *drawn = json_object();
		char what[64], title[160];
		long long nviol = 0;
		/* each failing update (CGS001) */
		for (i = 0; i < log->n; i++)
			if (!strcmp(log->recs[i].ev, CGSHIM_EV_VIOLATION) && rp_str(rp_j(log, i), "rule") &&
			    !strcmp(rp_str(rp_j(log, i), "rule"), "CGS001"))
				nviol++;
		for (long long u = 1; u <= nviol && nupd < HTML_MAX_PICTURES; u++) {
			snprintf(what, sizeof what, "update:%lld", u);
			snprintf(title, sizeof title, "failing update %lld: the exec and the new graph", u);
			nupd += (size_t)html_picture(f, log, what, title);
		}
		/* each graph with node records (debug level), first process's */
		for (i = 0; i < log->n && ngraphs < HTML_MAX_PICTURES; i++) {
			const json_t *j;
			char g[64];
			if (strcmp(log->recs[i].ev, CGSHIM_EV_NODE))
				continue;
			j = rp_j(log, i);
			if (!rp_str(j, "graph") || rp_str(j, "side") || json_object_get(drawn, rp_str(j, "graph")))
				continue;
			/* a copy: drawing reads other records (rp_j) */
			snprintf(g, sizeof g, "%s", rp_str(j, "graph"));
			json_object_set_new(drawn, g, json_true());
			snprintf(title, sizeof title, "graph %s (pid %lld)", g, log->recs[i].pid);
			ngraphs += (size_t)html_picture(f, log, g, title);
		}
		if (!nupd && !ngraphs)
			fputs("<p>No graph to draw: node records are written for failing updates, and "
			      "for every graph at CGSHIM_LOG=debug.</p>\n",
			      f);
		json_decref(drawn);
	}
	fputs("</section>\n</body></html>\n", f);
	if (fclose(f) != 0) {
		fprintf(stderr, "cgshim report: %s: %s\n", out, strerror(errno));
		return 1;
	}
	fprintf(stderr, "cgshim report: wrote %s (%zu update and %zu graph pictures) and %s\n", out, nupd, ngraphs,
		perf);
	return 0;
}
