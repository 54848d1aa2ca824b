/*
 * tools/report-html-chart.c -- the HTML page's charts, inline SVG with
 * axes, tick labels, a legend and a tooltip (<title>) on every mark: memory
 * per capture group, graph memory over time, memory per pool. Each chart
 * draws a bounded number of marks whatever the log's size (groups are
 * already the top N; time series are thinned to RC_MAX_POINTS by keeping
 * each bucket's highest sample), so the page stays small.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report.h"

#define RC_W 960.0
#define RC_H 260.0
#define RC_LEFT 80.0
#define RC_RIGHT 20.0
#define RC_TOP 20.0
#define RC_BOTTOM 50.0
#define RC_MAX_POINTS 400

/* Colours of series and pools (ColorBrewer Set1/Dark2, readable on white). */
const char *rp_html_colour(size_t i)
{
	static const char *const c[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b",
					"#e377c2", "#17becf", "#bcbd22", "#7f7f7f", "#393b79", "#637939"};
	return c[i % (sizeof c / sizeof c[0])];
}

/* A round step for about n ticks up to max. */
static double rc_step(double max, int n)
{
	double raw = max / n, p = pow(10, floor(log10(raw > 0 ? raw : 1))), m = raw / p;
	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* A power-of-two step for byte axes, so ticks read 256 MiB, 512 MiB... */
static double rc_bstep(double max, int n)
{
	double raw = max / n, s = 1;
	while (s < raw)
		s *= 2;
	return s;
}

static void rc_open(FILE *f, const char *label, double ymax, int bytes_axis, const char *ylabel, const char *xlabel)
{
	double st = bytes_axis ? rc_bstep(ymax, 4) : rc_step(ymax, 4), y, plot_h = RC_H - RC_TOP - RC_BOTTOM;
	char b[32];

	fprintf(f,
		"<svg class=\"chart\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"",
		RC_W, RC_H, RC_W, RC_H);
	rp_xml_esc(f, label);
	fputs("\" font-family=\"sans-serif\" font-size=\"11\">\n", f);
	for (y = 0; y <= ymax * 1.0001 && st > 0; y += st) {
		double py = RC_TOP + plot_h - plot_h * y / ymax;
		fprintf(f,
			"<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
			"<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			RC_LEFT, py, RC_W - RC_RIGHT, py, RC_LEFT - 4, py + 4,
			bytes_axis ? rp_bytes((long long)y, b, sizeof b) : (snprintf(b, sizeof b, "%g", y), b));
	}
	fprintf(f,
		"<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>"
		"<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"#333\"/>\n",
		RC_LEFT, RC_TOP, RC_LEFT, RC_H - RC_BOTTOM, RC_LEFT, RC_H - RC_BOTTOM, RC_W - RC_RIGHT,
		RC_H - RC_BOTTOM);
	fprintf(f, "<text class=\"ylabel\" transform=\"translate(12,%.0f) rotate(-90)\" text-anchor=\"middle\">",
		RC_TOP + plot_h / 2);
	rp_xml_esc(f, ylabel);
	fprintf(f, "</text>\n<text class=\"xlabel\" x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\">",
		RC_LEFT + (RC_W - RC_LEFT - RC_RIGHT) / 2, RC_H - 6);
	rp_xml_esc(f, xlabel);
	fputs("</text>\n", f);
}

static void rc_legend(FILE *f, size_t i, const char *colour, const char *text, int dashed)
{
	double x = RC_LEFT + 10 + (double)(i % 4) * 215, y = RC_TOP + 4 + (double)(i / 4) * 14;
	fprintf(f,
		"<g class=\"legend\"><line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" "
		"stroke-width=\"6\"%s/><text x=\"%.0f\" y=\"%.0f\">",
		x, y, x + 14, y, colour, dashed ? " stroke-dasharray=\"3,2\"" : "", x + 18, y + 4);
	rp_xml_esc(f, text);
	fputs("</text></g>\n", f);
}

/* Captures folded into groups (rp_fold_rows, then the top N): one bar
 * group each: allocated in the capture (graph allocations, and the caching
 * allocator's mallocs inside it) and taken at instantiation. */
void rp_html_capture_chart(FILE *f, const json_t *groups)
{
	size_t i, n = json_array_size(groups);
	double maxv = 1, plot_w = RC_W - RC_LEFT - RC_RIGHT, plot_h = RC_H - RC_TOP - RC_BOTTOM, bw;
	json_t *g;
	char b1[32], b2[32], b3[32];

	json_array_foreach(groups, i, g)
	{
		double v = (double)rp_int(g, "alloc_bytes", 0) + (double)rp_int(g, "malloc_bytes", 0);
		double d = (double)rp_int(g, "instantiate_delta", 0);
		maxv = fmax(maxv, fmax(v, d));
	}
	maxv *= 1.15; /* room for the legend */
	bw = fmin(plot_w / (double)(n ? n : 1), 60);
	rc_open(f, "memory per capture", maxv, 1, "bytes per capture",
		"capture groups (identical captures folded; largest first)");
	rc_legend(f, 0, "#1f77b4", "graph allocations in the capture", 0);
	rc_legend(f, 1, "#9ecae1", "mallocs in the capture", 0);
	rc_legend(f, 2, "#ff7f0e", "taken at instantiation", 0);
	rc_legend(f, 3, "#d62728", "invalidated capture", 0);
	json_array_foreach(groups, i, g)
	{
		long long a = rp_int(g, "alloc_bytes", 0), m = rp_int(g, "malloc_bytes", 0);
		long long d = rp_int(g, "instantiate_delta", 0), cnt = rp_int(g, "count", 1);
		double x = RC_LEFT + (double)i * bw, base = RC_TOP + plot_h;
		double ha = plot_h * (double)(a > 0 ? a : 0) / maxv, hm = plot_h * (double)(m > 0 ? m : 0) / maxv;
		double hd = plot_h * (double)(d > 0 ? d : 0) / maxv, w = bw / 2 - 1 > 1 ? bw / 2 - 1 : 1;
		const char *site = rp_str(g, "site");
		char tip[1024];

		if (cnt > 1)
			snprintf(tip, sizeof tip, "captures %lld to %lld (%lld identical), pid %lld, at %s",
				 rp_int(g, "capture", 0), rp_int(g, "last_capture", 0), cnt, rp_int(g, "pid", 0),
				 site ? site : "an unknown site");
		else
			snprintf(tip, sizeof tip, "capture %lld, pid %lld, at %s", rp_int(g, "capture", 0),
				 rp_int(g, "pid", 0), site ? site : "an unknown site");
		fprintf(f, "<g class=\"cap\"><title>");
		rp_xml_esc(f, tip);
		fprintf(f, ": %s graph allocations, %s mallocs in the capture, %s at instantiation%s</title>\n",
			rp_bytes(a, b1, sizeof b1), rp_bytes(m, b2, sizeof b2), rp_bytes(d, b3, sizeof b3),
			rp_int(g, "rc", 0) ? "; INVALIDATED" : "");
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>", x + 1, base - ha,
			w, ha, rp_int(g, "rc", 0) ? "#d62728" : "#1f77b4");
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#9ecae1\"/>", x + 1,
			base - ha - hm, w, hm);
		fprintf(f,
			"<rect class=\"inst\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#ff7f0e\"/>",
			x + bw / 2, base - hd, w, hd);
		if (n <= 40 || i % (n / 20 + 1) == 0)
			fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">#%zu</text>", x + bw / 2,
				base + 14, i + 1);
		fputs("</g>\n", f);
	}
	fputs("</svg>\n", f);
}

/* Graph memory over time: per process and device, "used" solid and
 * "reserved" dashed, against milliseconds since the log began. */
void rp_html_graphmem_chart(FILE *f, const json_t *rows)
{
	json_t *series = json_object(), *row, *s;
	const char *key;
	double tmax = 1e-3, maxv = 1, plot_w = RC_W - RC_LEFT - RC_RIGHT, plot_h = RC_H - RC_TOP - RC_BOTTOM, t;
	size_t i, si = 0;
	char b1[32], b2[32], k[64];

	json_array_foreach(rows, i, row)
	{
		snprintf(k, sizeof k, "pid %lld, device %lld", rp_int(row, "pid", 0), rp_int(row, "dev", 0));
		if (!(s = json_object_get(series, k))) {
			s = json_array();
			json_object_set_new(series, k, s);
		}
		json_array_append(s, row);
		tmax = fmax(tmax, json_real_value(json_object_get(row, "t_ms")));
		maxv = fmax(maxv, (double)rp_int(row, "reserved", 0));
		maxv = fmax(maxv, (double)rp_int(row, "used", 0));
	}
	maxv *= 1.15;
	rc_open(f, "graph memory over time", maxv, 1, "device graph memory", "time since the log began (ms)");
	for (t = 0; t <= tmax * 1.0001; t += rc_step(tmax, 8))
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%g</text>\n",
			RC_LEFT + plot_w * t / tmax, RC_TOP + plot_h + 14, t);
	json_object_foreach(series, key, s)
	{
		const char *col = rp_html_colour(si);
		size_t n = json_array_size(s), stride = (n + RC_MAX_POINTS - 1) / RC_MAX_POINTS, w;
		char lab[128];
		for (w = 0; w < 2; w++) {
			const char *field = w ? "reserved" : "used";
			size_t b;
			fprintf(f,
				"<polyline class=\"mem\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\"%s points=\"",
				col, w ? " stroke-dasharray=\"4,3\"" : "");
			/* one point per bucket of stride samples: its highest */
			for (b = 0; b < n; b += stride) {
				size_t e, best = b;
				for (e = b; e < b + stride && e < n; e++)
					if (rp_int(json_array_get(s, e), field, 0) >
					    rp_int(json_array_get(s, best), field, 0))
						best = e;
				row = json_array_get(s, best);
				fprintf(f, "%.1f,%.1f ",
					RC_LEFT + plot_w * json_real_value(json_object_get(row, "t_ms")) / tmax,
					RC_TOP + plot_h - plot_h * (double)rp_int(row, field, 0) / maxv);
			}
			fprintf(f, "\"><title>%s: %s</title></polyline>\n", key, field);
		}
		/* marks with the sample's figures, thinned alike */
		for (i = 0; i < n; i += stride) {
			row = json_array_get(s, i);
			fprintf(f,
				"<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"><title>%s at %.3f ms (%s): used "
				"%s, reserved %s, exec %s, graph %s</title></circle>\n",
				RC_LEFT + plot_w * json_real_value(json_object_get(row, "t_ms")) / tmax,
				RC_TOP + plot_h - plot_h * (double)rp_int(row, "used", 0) / maxv, col, key,
				json_real_value(json_object_get(row, "t_ms")),
				rp_str(row, "when") ? rp_str(row, "when") : "-",
				rp_bytes(rp_int(row, "used", 0), b1, sizeof b1),
				rp_bytes(rp_int(row, "reserved", 0), b2, sizeof b2),
				rp_str(row, "exec") && *rp_str(row, "exec") ? rp_str(row, "exec") : "-",
				rp_str(row, "graph") ? rp_str(row, "graph") : "-");
		}
		snprintf(lab, sizeof lab, "%s: used", key);
		rc_legend(f, 2 * si, col, lab, 0);
		snprintf(lab, sizeof lab, "%s: reserved", key);
		rc_legend(f, 2 * si + 1, col, lab, 1);
		si++;
	}
	fputs("</svg>\n", f);
	json_decref(series);
}

/* Memory per pool: a group of bars per pool in the pool's colour (the
 * table's swatch has the same): allocated in all, used at most, reserved
 * at most. */
void rp_html_pool_chart(FILE *f, const json_t *pools)
{
	static const char *const fields[] = {"alloc_bytes", "used_high", "reserved_high"};
	static const double op[] = {1.0, 0.65, 0.35};
	size_t i, n = json_array_size(pools);
	double maxv = 1, plot_w = RC_W - RC_LEFT - RC_RIGHT, plot_h = RC_H - RC_TOP - RC_BOTTOM, bw;
	json_t *p;
	char b[32];
	unsigned k;

	json_array_foreach(pools, i, p) for (k = 0; k < 3; k++) maxv = fmax(maxv, (double)rp_int(p, fields[k], 0));
	maxv *= 1.15;
	bw = fmin(plot_w / (double)(n ? n : 1), 90);
	rc_open(f, "memory per pool", maxv, 1, "bytes",
		"pools (bars: allocated in all, used at most, reserved at most)");
	json_array_foreach(pools, i, p)
	{
		double x = RC_LEFT + (double)i * bw, w = (bw - 6) / 3 > 1 ? (bw - 6) / 3 : 1;
		const char *col = rp_html_colour(i);
		for (k = 0; k < 3; k++) {
			long long v = rp_int(p, fields[k], 0);
			double h = plot_h * (double)(v > 0 ? v : 0) / maxv;
			fprintf(f,
				"<rect class=\"pool\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\" "
				"fill-opacity=\"%.2f\"><title>pool %s (pid %lld, %s%s): %s %s</title></rect>\n",
				x + 3 + k * w, RC_TOP + plot_h - h, w, h, col, op[k],
				rp_str(p, "pool") ? rp_str(p, "pool") : "?", rp_int(p, "pid", 0),
				rp_bool(p, "default") ? "default" : "explicit", rp_bool(p, "ipc") ? ", IPC" : "",
				fields[k], rp_bytes(v, b, sizeof b));
		}
		fprintf(f, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"%s\">", x + bw / 2,
			RC_TOP + plot_h + 14, col);
		rp_xml_esc(f, rp_str(p, "pool") ? rp_str(p, "pool") : "?");
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}
