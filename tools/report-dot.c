/*
 * tools/report-dot.c -- `cgshim report --dot GRAPH`: one graph as Graphviz
 * DOT, from `node` records (CGSHIM_LOG=debug) and `alloc` records.
 * Allocation and free nodes are filled with one colour per pool; a legend
 * lists the pools.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "report.h"

static const char *const dot_palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                          "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                          "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
#define DOT_NCOLOURS (sizeof dot_palette / sizeof dot_palette[0])

/* A DOT string literal body: quotes and backslashes escaped, newlines as \n. */
static void dot_esc(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		if (*s == '\n')
			fputs("\\n", f);
		else if ((unsigned char)*s >= 0x20)
			fputc(*s, f);
	}
}

struct dot_pool {
	const char *pool, *site;
	int is_default, ipc;
};

struct dot_ctx {
	const struct rp_log *log;
	long long pid;
	const char *graph;
	json_t *allocs; /* dptr -> alloc record of this graph */
	struct dot_pool pools[256];
	unsigned npools;
};

static unsigned dot_pool_idx(struct dot_ctx *c, const char *pool, const json_t *alloc)
{
	unsigned i;

	for (i = 0; i < c->npools; i++)
		if (!strcmp(c->pools[i].pool, pool ? pool : "?"))
			goto found;
	if (c->npools == sizeof c->pools / sizeof c->pools[0])
		return c->npools - 1;
	i = c->npools++;
	c->pools[i].pool = pool ? pool : "?";
	c->pools[i].site = NULL;
	c->pools[i].is_default = -1;
	c->pools[i].ipc = 0;
found:
	if (alloc) {
		if (!c->pools[i].site)
			c->pools[i].site = rp_site0(alloc, "pool_site");
		if (json_object_get(alloc, "pool_default"))
			c->pools[i].is_default = rp_bool(alloc, "pool_default");
		c->pools[i].ipc |= rp_bool(alloc, "ipc");
	}
	return i;
}

/* The alloc record of (pid, graph, dptr), or NULL. */
static const json_t *dot_alloc(const struct dot_ctx *c, const char *dptr)
{
	return dptr ? json_object_get(c->allocs, dptr) : NULL;
}

static void dot_mem_label(FILE *f, const char *type, const json_t *node, const json_t *alloc)
{
	char b[32];
	long long size = rp_int(node, "size", alloc ? rp_int(alloc, "size", -1) : -1);
	const char *dptr = rp_str(node, "dptr"), *site = rp_site0(node, "site");

	if (!site && alloc)
		site = rp_site0(alloc, "site");

	dot_esc(f, type);
	if (size >= 0) {
		fputs("\\n", f);
		dot_esc(f, rp_bytes(size, b, sizeof b));
	}
	if (dptr) {
		fputs("\\n", f);
		dot_esc(f, dptr);
	}
	if (site) {
		fputs("\\n", f);
		dot_esc(f, site);
	}
}

static void dot_legend(FILE *f, const struct dot_ctx *c)
{
	unsigned i;

	if (!c->npools)
		return;
	fputs("  subgraph cluster_legend {\n    label=\"pools\";\n    fontsize=10;\n", f);
	for (i = 0; i < c->npools; i++) {
		fprintf(f, "    pool%u [shape=box, style=filled, fillcolor=\"%s\", label=\"", i,
		        dot_palette[i % DOT_NCOLOURS]);
		dot_esc(f, c->pools[i].pool);
		fputs(c->pools[i].is_default == 1   ? "\\ndefault pool"
		      : c->pools[i].is_default == 0 ? "\\nexplicit pool"
		                                    : "",
		      f);
		if (c->pools[i].ipc)
			fputs("\\nipc", f);
		if (c->pools[i].site) {
			fputs("\\n", f);
			dot_esc(f, c->pools[i].site);
		}
		fputs("\"];\n", f);
	}
	for (i = 1; i < c->npools; i++)
		fprintf(f, "    pool%u -> pool%u [style=invis];\n", i - 1, i);
	fputs("  }\n", f);
}

static int dot_is_mem(const char *type)
{
	return type && (!strcmp(type, "mem_alloc") || !strcmp(type, "mem_free"));
}

static void dot_write(FILE *f, struct dot_ctx *c, int have_nodes)
{
	size_t i, k;
	unsigned n = 0;

	fputs("digraph cgshim {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", "
	      "fontsize=10];\n",
	      f);
	fputs("  label=\"graph ", f);
	dot_esc(f, c->graph);
	fprintf(f, " (pid %lld)%s\";\n  labelloc=t;\n", c->pid,
	        have_nodes ? "" : "\\nallocations only: no node records");
	for (i = 0; i < c->log->n; i++) {
		const struct rp_rec *r = &c->log->recs[i];
		const json_t *j = r->j, *alloc;
		const char *type;
		json_t *deps, *d;
		long long idx;

		if (r->pid != c->pid || !rp_str(j, "graph") || strcmp(rp_str(j, "graph"), c->graph))
			continue;
		if (have_nodes && !strcmp(r->ev, CGSHIM_EV_NODE)) {
			type = rp_str(j, "type");
			idx = rp_int(j, "index", -1);
			if (idx < 0)
				continue;
			fprintf(f, "  n%lld [label=\"", idx);
			if (dot_is_mem(type)) {
				alloc = dot_alloc(c, rp_str(j, "dptr"));
				dot_mem_label(f, type, j, alloc);
				fprintf(
				    f, "\", style=filled, fillcolor=\"%s\"%s];\n",
				    dot_palette[dot_pool_idx(c,
				                             rp_str(j, "pool") ? rp_str(j, "pool")
				                             : alloc ? rp_str(alloc, "pool")
				                                     : NULL,
				                             alloc) %
				                DOT_NCOLOURS],
				    !strcmp(type, "mem_free") ? ", shape=invhouse"
				                              : ", shape=house");
			} else {
				dot_esc(f, type ? type : "?");
				fputs("\"];\n", f);
			}
			deps = json_object_get(j, "deps");
			json_array_foreach(deps, k, d) if (json_is_integer(d))
			    fprintf(f, "  n%" JSON_INTEGER_FORMAT " -> n%lld;\n",
			            json_integer_value(d), idx);
		} else if (!have_nodes && !strcmp(r->ev, CGSHIM_EV_ALLOC)) {
			fprintf(f, "  a%u [label=\"", n++);
			dot_mem_label(f, "mem_alloc", j, j);
			fprintf(f, "\", style=filled, shape=house, fillcolor=\"%s\"];\n",
			        dot_palette[dot_pool_idx(c, rp_str(j, "pool"), j) % DOT_NCOLOURS]);
		}
	}
	dot_legend(f, c);
	fputs("}\n", f);
}

static int dot_on_path(void)
{
	return system("command -v dot >/dev/null 2>&1") == 0;
}

static int dot_render(const char *src, const char *out, const char *fmt)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		execlp("dot", "dot", fmt, "-o", out, src, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int dot_ends(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && !strcmp(s + a - b, suffix);
}

int rp_dot(const struct rp_log *log, const char *graph, const char *out)
{
	struct dot_ctx c;
	int have_nodes = 0, render = 0, rc = 0;
	const char *fmt = NULL;
	char tmp[] = "/tmp/cgshim-dot-XXXXXX";
	size_t i;
	FILE *f;

	memset(&c, 0, sizeof c);
	c.log = log;
	/* first/last: among graphs with node records, else with alloc records. */
	for (int pass = 0; pass < 2 && !c.graph; pass++) {
		const char *want = pass == 0 ? CGSHIM_EV_NODE : CGSHIM_EV_ALLOC;
		for (i = 0; i < log->n; i++) {
			const struct rp_rec *r = &log->recs[i];
			const char *g = rp_str(r->j, "graph");
			if (strcmp(r->ev, want) || !g)
				continue;
			if (!strcmp(graph, "first") || !strcmp(graph, "last") ||
			    !strcmp(graph, g)) {
				c.graph = g;
				c.pid = r->pid;
				if (strcmp(graph, "last"))
					break;
			}
		}
	}
	if (!c.graph) {
		fprintf(stderr, "cgshim report: no node or alloc records for graph %s\n", graph);
		return 2;
	}
	c.allocs = json_object();
	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		const char *g = rp_str(r->j, "graph"), *dptr = rp_str(r->j, "dptr");
		if (r->pid == c.pid && g && dptr && !strcmp(g, c.graph) &&
		    !strcmp(r->ev, CGSHIM_EV_ALLOC) && !json_object_get(c.allocs, dptr))
			json_object_set(c.allocs, dptr, r->j);
	}
	for (i = 0; i < log->n && !have_nodes; i++)
		have_nodes = log->recs[i].pid == c.pid &&
		             !strcmp(log->recs[i].ev, CGSHIM_EV_NODE) &&
		             rp_str(log->recs[i].j, "graph") &&
		             !strcmp(rp_str(log->recs[i].j, "graph"), c.graph);
	if (!have_nodes)
		fprintf(
		    stderr,
		    "cgshim report: no node records for graph %s (log at CGSHIM_LOG=debug to get "
		    "them); drawing its allocations only\n",
		    c.graph);

	if (out && (dot_ends(out, ".svg") || dot_ends(out, ".png"))) {
		fmt = dot_ends(out, ".svg") ? "-Tsvg" : "-Tpng";
		if (dot_on_path())
			render = 1;
		else
			fprintf(stderr,
			        "cgshim report: dot is not on PATH; writing DOT source to %s.dot\n",
			        out);
	}
	if (render) {
		int fd = mkstemp(tmp);
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			perror("cgshim report: temporary file");
			json_decref(c.allocs);
			return 1;
		}
	} else if (out) {
		char alt[4096];
		snprintf(alt, sizeof alt, "%s%s", out, fmt ? ".dot" : "");
		if (!(f = fopen(alt, "w"))) {
			fprintf(stderr, "cgshim report: %s: %s\n", alt, strerror(errno));
			json_decref(c.allocs);
			return 1;
		}
	} else {
		f = stdout;
	}
	dot_write(f, &c, have_nodes);
	if (f != stdout && fclose(f) != 0) {
		perror("cgshim report: writing DOT");
		rc = 1;
	}
	if (render && rc == 0 && dot_render(tmp, out, fmt) < 0) {
		fprintf(stderr, "cgshim report: dot failed to render %s\n", out);
		rc = 1;
	}
	if (render)
		unlink(tmp);
	json_decref(c.allocs);
	return rc;
}
