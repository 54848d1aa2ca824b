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
#include "report-dot.h"

static const char *const dot_palette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462",
					  "#b3de69", "#fccde5", "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};
#define DOT_NCOLOURS (sizeof dot_palette / sizeof dot_palette[0])

/* A DOT string literal body: quotes and backslashes escaped, newlines as \n. */
void rp_dot_esc(FILE *f, const char *s)
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
	char *pool; /* a copy: records are not kept (rp_j) */
	char *site; /* a copy: dot_ctx.allocs is cleared for each graph drawn */
	int is_default, ipc;
};

/* One graph to draw (issue 35): a process, a handle and the shim's id of
 * the graph (graph_id; -1 in a log without ids), so a handle that came
 * back after cudaGraphDestroy is another graph. Its node records are those
 * of one instantiation: the last (from: the log position of its index-0
 * record; emis: that record's exec_id, -1 when none), so a graph
 * instantiated twice gets each edge once. */
struct dot_sel {
	long long pid, gid, emis;
	char *graph;
	size_t from;
	int have_nodes;
};

struct dot_ctx {
	const struct rp_log *log;
	long long pid;
	const char *graph;
	const struct dot_sel *sel; /* the graph being drawn */
	json_t *allocs;		   /* dptr -> alloc record of this graph */
	struct dot_pool pools[256];
	unsigned npools;
};

/* Record j of process pid is about graph s: the same handle, and the same
 * id where the record has one. */
static int dot_of(const struct dot_sel *s, long long pid, const json_t *j)
{
	const char *g = rp_str(j, "graph");
	if (pid != s->pid || !g || strcmp(g, s->graph))
		return 0;
	return s->gid < 0 || !rp_has_int(j, "graph_id") || rp_int(j, "graph_id", -1) == s->gid;
}

static unsigned dot_pool_idx(struct dot_ctx *c, const char *pool, const json_t *alloc)
{
	unsigned i;

	for (i = 0; i < c->npools; i++)
		if (!strcmp(c->pools[i].pool, pool ? pool : "?"))
			goto found;
	if (c->npools == sizeof c->pools / sizeof c->pools[0])
		return c->npools - 1;
	i = c->npools++;
	c->pools[i].pool = strdup(pool ? pool : "?");
	c->pools[i].site = NULL;
	c->pools[i].is_default = -1;
	c->pools[i].ipc = 0;
found:
	if (alloc) {
		if (!c->pools[i].site && rp_site0(alloc, "pool_site"))
			c->pools[i].site = strdup(rp_site0(alloc, "pool_site"));
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

	rp_dot_esc(f, type);
	if (size >= 0) {
		fputs("\\n", f);
		rp_dot_esc(f, rp_bytes(size, b, sizeof b));
	}
	if (dptr) {
		fputs("\\n", f);
		rp_dot_esc(f, dptr);
	}
	if (site) {
		fputs("\\n", f);
		rp_dot_esc(f, site);
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
		rp_dot_esc(f, c->pools[i].pool);
		fputs(c->pools[i].is_default == 1   ? "\\ndefault pool"
		      : c->pools[i].is_default == 0 ? "\\nexplicit pool"
						    : "",
		      f);
		if (c->pools[i].ipc)
			fputs("\\nipc", f);
		if (c->pools[i].site) {
			fputs("\\n", f);
			rp_dot_esc(f, c->pools[i].site);
		}
		fputs("\"];\n", f);
	}
	for (i = 1; i < c->npools; i++)
		fprintf(f, "    pool%u -> pool%u [style=invis];\n", i - 1, i);
	fputs("  }\n", f);
}

int rp_dot_is_mem(const char *type)
{
	return type && (!strcmp(type, "mem_alloc") || !strcmp(type, "mem_free"));
}

/* What a node does, under its type in a label (issue 15): a kernel's short
 * name, grid and block; a copy's kind and size; a memset's size. */
void rp_dot_node_detail(FILE *f, const json_t *nd)
{
	const char *type = rp_str(nd, "type");
	char b[32];
	if (!type)
		return;
	if (!strcmp(type, "kernel")) {
		const char *k = rp_kernel_short(rp_str(nd, "kernel"));
		const json_t *g = json_object_get(nd, "grid"), *bl = json_object_get(nd, "block");
		if (k) {
			fputs("\\n", f);
			rp_dot_esc(f, k);
		}
		if (json_array_size(g) == 3 && json_array_size(bl) == 3)
			fprintf(f, "\\n<<<(%lld,%lld,%lld),(%lld,%lld,%lld)>>>",
				(long long)json_integer_value(json_array_get(g, 0)),
				(long long)json_integer_value(json_array_get(g, 1)),
				(long long)json_integer_value(json_array_get(g, 2)),
				(long long)json_integer_value(json_array_get(bl, 0)),
				(long long)json_integer_value(json_array_get(bl, 1)),
				(long long)json_integer_value(json_array_get(bl, 2)));
	} else if (!strcmp(type, "memcpy") && rp_has_int(nd, "bytes")) {
		fputs("\\n", f);
		rp_dot_esc(f, rp_str(nd, "kind") ? rp_str(nd, "kind") : "?");
		fputs(" ", f);
		rp_dot_esc(f, rp_bytes(rp_int(nd, "bytes", 0), b, sizeof b));
	} else if (!strcmp(type, "memset") && rp_has_int(nd, "bytes")) {
		fputs("\\n", f);
		rp_dot_esc(f, rp_bytes(rp_int(nd, "bytes", 0), b, sizeof b));
		fprintf(f, " (%lld-byte elements)", rp_int(nd, "elem", 0));
	}
}

/* Nodes of graph g (pid) that a stale-pointer violation (CGS018/CGS019)
 * names: their indices into idx (up to max); returns the count. */
static int dot_stale_nodes(const struct dot_ctx *c, long long *idx, int max)
{
	int n = 0;
	for (size_t i = 0; i < c->log->n && n < max; i++) {
		const struct rp_rec *r = &c->log->recs[i];
		const json_t *j;
		const char *rule, *g;
		if (r->pid != c->pid || r->kind != RP_EV_VIOLATION)
			continue;
		j = rp_j(c->log, i);
		rule = rp_str(j, "rule");
		g = rp_str(j, "graph");
		if (!rule || !g || !dot_of(c->sel, r->pid, j) || (strcmp(rule, "CGS018") && strcmp(rule, "CGS019")))
			continue;
		idx[n++] = rp_int(j, "node_index", -1);
	}
	return n;
}

/* The nodes of graph c->sel, their names prefixed with pfx (a cluster's
 * in a picture of several graphs), indented by ind. */
static void dot_write_graph(FILE *f, struct dot_ctx *c, const char *pfx, const char *ind)
{
	const struct dot_sel *sel = c->sel;
	long long stale[64];
	int nstale = dot_stale_nodes(c, stale, 64);
	json_t *drawn = json_object(); /* node indices drawn: one instantiation's records once */
	size_t i, k;
	unsigned n = 0;

	for (i = sel->have_nodes ? sel->from : 0; i < c->log->n; i++) {
		const struct rp_rec *r = &c->log->recs[i];
		const json_t *j, *alloc;
		const char *type;
		json_t *deps, *d;
		long long idx;
		char key[24];

		if (r->pid != c->pid || (r->kind != RP_EV_NODE && r->kind != RP_EV_ALLOC))
			continue;
		j = rp_j(c->log, i);
		if (!dot_of(sel, r->pid, j))
			continue;
		if (sel->have_nodes && r->kind == RP_EV_NODE && !rp_str(j, "side")) {
			type = rp_str(j, "type");
			idx = rp_int(j, "index", -1);
			if (idx < 0 || (sel->emis >= 0 && rp_int(j, "exec_id", -1) != sel->emis))
				continue;
			snprintf(key, sizeof key, "%lld", idx);
			if (json_object_get(drawn, key))
				continue;
			json_object_set_new(drawn, key, json_true());
			fprintf(f, "%s%sn%lld [label=\"", ind, pfx, idx);
			if (rp_dot_is_mem(type)) {
				alloc = dot_alloc(c, rp_str(j, "dptr"));
				dot_mem_label(f, type, j, alloc);
				fprintf(f, "\", style=filled, fillcolor=\"%s\"%s];\n",
					dot_palette[dot_pool_idx(c,
								 rp_str(j, "pool") ? rp_str(j, "pool")
								 : alloc	   ? rp_str(alloc, "pool")
										   : NULL,
								 alloc) %
						    DOT_NCOLOURS],
					!strcmp(type, "mem_free") ? ", shape=invhouse" : ", shape=house");
			} else {
				int red = 0;
				for (int s = 0; s < nstale; s++)
					red |= stale[s] == idx;
				rp_dot_esc(f, type ? type : "?");
				rp_dot_node_detail(f, j);
				fprintf(f, "%s\"%s];\n", red ? "\\nstale pointer (freed memory)" : "",
					red ? ", style=filled, fillcolor=\"#fb8072\", color=red" : "");
			}
			deps = json_object_get(j, "deps");
			json_array_foreach(deps, k, d) if (json_is_integer(d))
			    fprintf(f, "%s%sn%" JSON_INTEGER_FORMAT " -> %sn%lld;\n", ind, pfx, json_integer_value(d),
				    pfx, idx);
		} else if (!sel->have_nodes && r->kind == RP_EV_ALLOC) {
			fprintf(f, "%s%sa%u [label=\"", ind, pfx, n++);
			dot_mem_label(f, "mem_alloc", j, j);
			fprintf(f, "\", style=filled, shape=house, fillcolor=\"%s\"];\n",
				dot_palette[dot_pool_idx(c, rp_str(j, "pool"), j) % DOT_NCOLOURS]);
		}
	}
	json_decref(drawn);
}

static void dot_graph_title(FILE *f, const struct dot_sel *s)
{
	fputs("graph ", f);
	rp_dot_esc(f, s->graph);
	if (s->gid >= 0)
		fprintf(f, " #%lld", s->gid);
	fprintf(f, " (pid %lld)%s", s->pid, s->have_nodes ? "" : "\\nallocations only: no node records");
}

/* The allocation records of graph c->sel by address (their pools and sites). */
static void dot_allocs(struct dot_ctx *c)
{
	json_object_clear(c->allocs);
	for (size_t i = 0; i < c->log->n; i++) {
		const struct rp_rec *r = &c->log->recs[i];
		const json_t *j;
		const char *dptr;
		if (r->kind != RP_EV_ALLOC || r->pid != c->sel->pid)
			continue;
		j = rp_j(c->log, i);
		dptr = rp_str(j, "dptr");
		if (dptr && dot_of(c->sel, r->pid, j) && !json_object_get(c->allocs, dptr))
			json_object_set(c->allocs, dptr, (json_t *)j);
	}
}

struct dot_many {
	struct dot_ctx *c;
	struct dot_sel *sel;
	size_t n;
};

/* One picture: one graph alone, or several (every graph a handle named,
 * one cluster each, in the order they were made). */
static void dot_write_many(FILE *f, void *arg)
{
	struct dot_many *m = arg;
	struct dot_ctx *c = m->c;

	fputs("digraph cgshim {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", "
	      "fontsize=10];\n",
	      f);
	fputs("  label=\"", f);
	if (m->n == 1)
		dot_graph_title(f, &m->sel[0]);
	else
		fprintf(f, "%zu graphs at handle %s (pid %lld): a handle comes back after cudaGraphDestroy", m->n,
			m->sel[0].graph, m->sel[0].pid);
	fputs("\";\n  labelloc=t;\n", f);
	for (size_t s = 0; s < m->n; s++) {
		char pfx[32];
		c->sel = &m->sel[s];
		c->pid = c->sel->pid;
		c->graph = c->sel->graph;
		dot_allocs(c);
		if (m->n == 1) {
			dot_write_graph(f, c, "", "  ");
			continue;
		}
		snprintf(pfx, sizeof pfx, "g%zu_", s + 1);
		fprintf(f, "  subgraph cluster_g%zu {\n    label=\"", s + 1);
		dot_graph_title(f, c->sel);
		fputs("\";\n    style=rounded;\n", f);
		dot_write_graph(f, c, pfx, "    ");
		fputs("  }\n", f);
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

/* The output type of -o FILE, from its extension: "" for DOT text (.dot,
 * .gv), else a `dot -T` format. NULL when the extension is not one of them. */
static const char *dot_type(const char *out)
{
	static const char *const rendered[] = {"svg", "png", "pdf", "ps", "eps", "jpg", "jpeg", "gif"};
	const char *dot = strrchr(out, '.'), *slash = strrchr(out, '/');
	unsigned i;

	if (!dot || (slash && dot < slash))
		return NULL;
	if (!strcmp(dot, ".dot") || !strcmp(dot, ".gv"))
		return "";
	for (i = 0; i < sizeof rendered / sizeof rendered[0]; i++)
		if (!strcmp(dot + 1, rendered[i]))
			return rendered[i];
	return NULL;
}

int rp_dot_check_output(const char *out)
{
	if (!out || dot_type(out))
		return 0;
	fprintf(stderr,
		"cgshim report: -o %s: unknown output type (the extension decides: .dot or .gv for "
		"DOT text; .svg, .png, .pdf, .ps, .eps, .jpg, .jpeg, .gif rendered by dot -T<ext>)\n",
		out);
	return -1;
}

/* Write the picture with write(f, arg) to out (stdout when NULL) in the
 * type its extension names, through `dot -T<ext>` for a rendered type. */
int rp_dot_output(const char *out, void (*write)(FILE *, void *), void *arg)
{
	const char *type = out ? dot_type(out) : "";
	char tmp[] = "/tmp/cgshim-dot-XXXXXX", fmt[16];
	int render = 0, rc = 0;
	FILE *f;

	if (!type)
		return rp_dot_check_output(out) < 0 ? 1 : 0;
	if (*type) {
		if (dot_on_path())
			render = 1;
		else
			fprintf(stderr,
				"cgshim report: dot is not on PATH (Debian: graphviz); writing DOT "
				"source to %s.dot\n",
				out);
	}
	if (render) {
		int fd = mkstemp(tmp);
		if (fd < 0 || !(f = fdopen(fd, "w"))) {
			perror("cgshim report: temporary file");
			return 1;
		}
	} else if (out) {
		char alt[4096];
		snprintf(alt, sizeof alt, "%s%s", out, *type ? ".dot" : "");
		if (!(f = fopen(alt, "w"))) {
			fprintf(stderr, "cgshim report: %s: %s\n", alt, strerror(errno));
			return 1;
		}
	} else {
		f = stdout;
	}
	write(f, arg);
	if (f != stdout && fclose(f) != 0) {
		perror("cgshim report: writing DOT");
		rc = 1;
	}
	snprintf(fmt, sizeof fmt, "-T%s", type);
	if (render && rc == 0 && dot_render(tmp, out, fmt) < 0) {
		fprintf(stderr, "cgshim report: dot failed to render %s\n", out);
		rc = 1;
	}
	if (render)
		unlink(tmp);
	return rc;
}

/* Add the graph of record j (pid) to the selection unless it is there. */
static int dot_sel_add(struct dot_many *m, size_t *cap, long long pid, const json_t *j)
{
	const char *g = rp_str(j, "graph");
	long long gid = rp_int(j, "graph_id", -1);
	for (size_t k = 0; k < m->n; k++)
		if (m->sel[k].pid == pid && m->sel[k].gid == gid && !strcmp(m->sel[k].graph, g))
			return 0;
	if (m->n == *cap) {
		size_t nc = *cap ? *cap * 2 : 8;
		struct dot_sel *ns = realloc(m->sel, nc * sizeof *ns);
		if (!ns)
			return -1;
		m->sel = ns;
		*cap = nc;
	}
	m->sel[m->n] = (struct dot_sel){pid, gid, -1, strdup(g), 0, 0};
	return m->sel[m->n].graph ? (int)++m->n : -1;
}

/* `--dot GRAPH`: first or last (a graph), a handle (every graph that had
 * it, one cluster each), or id:N (the graph the shim numbered N). Among
 * graphs with node records, else with alloc records. */
int rp_dot(const struct rp_log *log, const char *graph, const char *out)
{
	struct dot_ctx c;
	struct dot_many m = {&c, NULL, 0};
	size_t i, cap = 0;
	long long want_id = -1;
	int rc, first = !strcmp(graph, "first"), last = !strcmp(graph, "last");

	if (!strncmp(graph, "update:", 7))
		return rp_dot_update(log, graph + 7, out);
	if (!strncmp(graph, "id:", 3)) {
		char *end;
		want_id = strtoll(graph + 3, &end, 10);
		if (want_id <= 0 || *end) {
			fprintf(stderr, "cgshim report: --dot %s: want id:N (a graph_id, from 1)\n", graph);
			return 1;
		}
	}
	memset(&c, 0, sizeof c);
	c.log = log;
	for (int pass = 0; pass < 2 && !m.n; pass++) {
		int want = pass == 0 ? RP_EV_NODE : RP_EV_ALLOC;
		for (i = 0; i < log->n; i++) {
			const struct rp_rec *r = &log->recs[i];
			const json_t *j;
			const char *g;
			if (r->kind != want)
				continue;
			j = rp_j(log, i);
			g = rp_str(j, "graph");
			if (!g || rp_str(j, "side"))
				continue;
			if (last && m.n) { /* the last graph only */
				const struct dot_sel *l = &m.sel[0];
				if (l->pid == r->pid && l->gid == rp_int(j, "graph_id", -1) && !strcmp(l->graph, g))
					continue;
				free(m.sel[0].graph);
				m.n = 0;
			}
			if ((first || last ||
			     (want_id > 0 ? rp_int(j, "graph_id", -1) == want_id : !strcmp(graph, g))) &&
			    dot_sel_add(&m, &cap, r->pid, j) < 0)
				break;
			if (m.n && (first || want_id > 0))
				break;
		}
	}
	if (!m.n) {
		fprintf(stderr, "cgshim report: no node or alloc records for graph %s\n", graph);
		free(m.sel);
		return 2;
	}
	/* Each graph's last instantiation: its last index-0 node record. */
	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		const json_t *j;
		if (r->kind != RP_EV_NODE)
			continue;
		j = rp_j(log, i);
		if (rp_str(j, "side") || rp_int(j, "index", -1) != 0)
			continue;
		for (size_t k = 0; k < m.n; k++)
			if (dot_of(&m.sel[k], r->pid, j)) {
				m.sel[k].have_nodes = 1;
				m.sel[k].from = i;
				m.sel[k].emis = rp_int(j, "exec_id", -1);
			}
	}
	for (size_t k = 0; k < m.n; k++)
		if (!m.sel[k].have_nodes)
			fprintf(stderr,
				"cgshim report: no node records for graph %s (log at CGSHIM_LOG=debug to get "
				"them); drawing its allocations only\n",
				m.sel[k].graph);
	c.allocs = json_object();
	rc = rp_dot_output(out, dot_write_many, &m);
	json_decref(c.allocs);
	for (i = 0; i < c.npools; i++) {
		free(c.pools[i].pool);
		free(c.pools[i].site);
	}
	for (size_t k = 0; k < m.n; k++)
		free(m.sel[k].graph);
	free(m.sel);
	return rc;
}
