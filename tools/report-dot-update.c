/*
 * tools/report-dot-update.c -- `cgshim report --dot update:N`: both sides
 * of a failing update (the exec's nodes and the new graph's, from the node
 * records the shim writes with a CGS001 or an unpredicted 910), aligned by
 * what the nodes are, not where they stand (issue 35): a kernel inserted
 * at #2 is the one marked, not every node after it.
 *
 * The alignment: each side in its node order (the order the graph was
 * built or captured in, a topological one), a longest common subsequence
 * of nodes equal in content (type, kernel, launch dimensions, copy and
 * memset sizes, memory-node sizes); in each gap between two matched
 * nodes, unmatched nodes of the same type are paired in order as changed;
 * the rest are inserted (new graph only) or removed (exec only). An edge
 * differs when its two ends are not matched to the ends of an edge on the
 * other side.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report-dot.h"

#define DOT_UPD_MAX 4096
/* Above this many cells (nodes x nodes) the sides are paired by position. */
#define DOT_UPD_LCS_CELLS (16u << 20)

enum { UPD_SAME, UPD_INSERTED, UPD_REMOVED, UPD_CHANGED };

struct dot_upd {
	const json_t *viol;		    /* the CGS001 violation or the mismatch record */
	const json_t *side[2][DOT_UPD_MAX]; /* [0] the exec's nodes, [1] the new graph's */
	long long n[2];
	long long err_index;	   /* the driver's error node (new graph), -1 */
	int match[2][DOT_UPD_MAX]; /* the node on the other side, -1 */
	unsigned char mark[2][DOT_UPD_MAX];
	char *sig[2][DOT_UPD_MAX]; /* content signatures */
};

/* Dependencies of node i of side k as a JSON array, or NULL when unknown
 * (the exec's graph was gone: only a count was logged). */
static const json_t *dot_upd_deps(const struct dot_upd *u, int k, long long i)
{
	const json_t *d = i >= 0 && i < u->n[k] && u->side[k][i] ? json_object_get(u->side[k][i], "deps") : NULL;
	return json_is_array(d) ? d : NULL;
}

static int dot_upd_has_edge(const struct dot_upd *u, int k, long long from, long long to)
{
	const json_t *deps = dot_upd_deps(u, k, to);
	size_t i;
	json_t *d;
	json_array_foreach(deps, i, d) if (json_integer_value(d) == from) return 1;
	return 0;
}

/* What node nd is, as a string: equal strings, equal nodes (for the
 * alignment; its place and edges are not part of it). */
static char *dot_upd_sig(const json_t *nd)
{
	static const char *const keys[] = {"type", "kernel", "func", "grid", "block", "shmem",
					   "kind", "bytes",  "elem", "size", "dev"};
	json_t *o = json_object();
	char *s;
	if (!nd)
		return strdup("");
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_t *v = json_object_get(nd, keys[i]);
		if (v)
			json_object_set(o, keys[i], v);
	}
	/* a kernel known by name is not told apart by its function handle */
	if (json_object_get(o, "kernel"))
		json_object_del(o, "func");
	s = json_dumps(o, JSON_SORT_KEYS | JSON_COMPACT);
	json_decref(o);
	return s ? s : strdup("");
}

static const char *dot_upd_type(const struct dot_upd *u, int k, long long i)
{
	const char *t = u->side[k][i] ? rp_str(u->side[k][i], "type") : NULL;
	return t ? t : "?";
}

/* In the gap [a0, a1) x [b0, b1) between matched nodes: unmatched nodes of
 * one type paired in order as changed. */
static void dot_upd_pair_gap(struct dot_upd *u, long long a0, long long a1, long long b0, long long b1)
{
	for (long long i = a0; i < a1; i++) {
		if (u->match[0][i] >= 0 || !u->side[0][i])
			continue;
		for (long long j = b0; j < b1; j++) {
			if (u->match[1][j] >= 0 || !u->side[1][j] ||
			    strcmp(dot_upd_type(u, 0, i), dot_upd_type(u, 1, j)))
				continue;
			u->match[0][i] = (int)j;
			u->match[1][j] = (int)i;
			u->mark[0][i] = u->mark[1][j] = UPD_CHANGED;
			b0 = j + 1;
			break;
		}
	}
}

static void dot_upd_align(struct dot_upd *u)
{
	long long n0 = u->n[0], n1 = u->n[1], i, j, pa = 0, pb = 0;
	uint16_t *L = NULL;

	for (int k = 0; k < 2; k++)
		for (i = 0; i < u->n[k]; i++) {
			u->match[k][i] = -1;
			u->sig[k][i] = dot_upd_sig(u->side[k][i]);
		}
	if ((unsigned long long)(n0 + 1) * (unsigned long long)(n1 + 1) <= DOT_UPD_LCS_CELLS)
		L = calloc((size_t)(n0 + 1) * (size_t)(n1 + 1), sizeof *L);
#define LC(a, b) L[(size_t)(a) * (size_t)(n1 + 1) + (size_t)(b)]
	if (L) {
		/* LC(i, j): the longest common subsequence of the suffixes from i and j */
		for (i = n0 - 1; i >= 0; i--)
			for (j = n1 - 1; j >= 0; j--)
				LC(i, j) = u->side[0][i] && u->side[1][j] && !strcmp(u->sig[0][i], u->sig[1][j])
					       ? (uint16_t)(LC(i + 1, j + 1) + 1)
					   : LC(i + 1, j) >= LC(i, j + 1) ? LC(i + 1, j)
									  : LC(i, j + 1);
		for (i = 0, j = 0; i < n0 && j < n1;) {
			if (u->side[0][i] && u->side[1][j] && !strcmp(u->sig[0][i], u->sig[1][j]) &&
			    LC(i, j) == LC(i + 1, j + 1) + 1) {
				u->match[0][i] = (int)j;
				u->match[1][j] = (int)i;
				i++, j++;
			} else if (LC(i + 1, j) >= LC(i, j + 1)) {
				i++;
			} else {
				j++;
			}
		}
		free(L);
	} else { /* too large to align: by position */
		for (i = 0; i < n0 && i < n1; i++)
			if (u->side[0][i] && u->side[1][i] && !strcmp(u->sig[0][i], u->sig[1][i]))
				u->match[0][i] = u->match[1][i] = (int)i;
	}
#undef LC
	/* the gaps between matched nodes */
	for (i = 0; i <= n0; i++) {
		if (i < n0 && u->match[0][i] < 0)
			continue;
		j = i < n0 ? u->match[0][i] : n1;
		dot_upd_pair_gap(u, pa, i, pb, j);
		pa = i + 1;
		pb = j + 1;
	}
	for (i = 0; i < n0; i++)
		if (u->match[0][i] < 0)
			u->mark[0][i] = UPD_REMOVED;
	for (j = 0; j < n1; j++)
		if (u->match[1][j] < 0)
			u->mark[1][j] = UPD_INSERTED;
}

/* Edge from -> to of side k has no counterpart on the other side (known
 * only where the other side's edges are). Returns -1 when unknown. */
static int dot_upd_edge_differs(const struct dot_upd *u, int k, long long from, long long to)
{
	long long mf = from >= 0 && from < u->n[k] ? u->match[k][from] : -1, mt = u->match[k][to];
	if (mt >= 0 && !dot_upd_deps(u, !k, mt))
		return -1;
	if (mt < 0 && !dot_upd_deps(u, !k, 0))
		return -1;
	return mf < 0 || mt < 0 || !dot_upd_has_edge(u, !k, mf, mt);
}

static void dot_write_update(FILE *f, void *arg)
{
	const struct dot_upd *u = arg;
	static const char *const title[2] = {"exec ", "new graph "};
	static const char *const fill[] = {"", "#b3de69", "#fb8072", "#fdb462"};
	static const char *const what[] = {"", "inserted", "removed", "changed"};
	const char *msg = rp_str(u->viol, "msg");
	long long err_a = u->err_index >= 0 && u->err_index < u->n[1] ? u->match[1][u->err_index] : -1;

	fputs("digraph cgshim_update {\n  rankdir=TB;\n  compound=true;\n"
	      "  node [shape=box, fontname=\"monospace\", fontsize=10];\n  labelloc=t;\n"
	      "  fontname=\"sans-serif\";\n  label=\"",
	      f);
	if (rp_str(u->viol, "rule") && *rp_str(u->viol, "rule")) {
		rp_dot_esc(f, rp_str(u->viol, "rule"));
		fputs(" ", f);
		rp_dot_esc(f, rp_str(u->viol, "via") ? rp_str(u->viol, "via") : rp_str(u->viol, "api"));
		fputs(" will fail (", f);
		rp_dot_esc(f, rp_str(u->viol, "predicted_err"));
		fputs(")\\n", f);
	} else { /* a mismatch: the driver refused what nothing predicted */
		rp_dot_esc(f, rp_str(u->viol, "via") ? rp_str(u->viol, "via") : rp_str(u->viol, "api"));
		fprintf(f, " failed with %lld, result %lld (not predicted)\\n", rp_int(u->viol, "rc", 0),
			rp_int(u->viol, "result", -1));
	}
	/* the reason, wrapped for the picture */
	for (size_t col = 0; msg && *msg; msg++, col++) {
		if (*msg == ' ' && col > 70) {
			fputs("\\n", f);
			col = 0;
			continue;
		}
		if (*msg == '"' || *msg == '\\')
			fputc('\\', f);
		fputc(*msg, f);
	}
	fputs("\\nnodes aligned by content: green inserted in the new graph, red removed from the exec's, "
	      "orange changed;\\nred edges: dependencies without a counterpart; thick border: the driver's "
	      "error node\";\n",
	      f);
	for (int k = 0; k < 2; k++) {
		const char *id = k ? "b" : "a";
		fprintf(f, "  subgraph cluster_%s {\n    label=\"%s", id, title[k]);
		rp_dot_esc(f, rp_str(u->viol, k ? "graph" : "exec"));
		if (rp_has_int(u->viol, k ? "graph_id" : "exec_id"))
			fprintf(f, " #%lld", rp_int(u->viol, k ? "graph_id" : "exec_id", 0));
		fprintf(f, " (%lld nodes)\";\n    style=rounded;\n", u->n[k]);
		for (long long i = 0; i < u->n[k]; i++) {
			const json_t *nd = u->side[k][i], *deps;
			const char *type = nd ? rp_str(nd, "type") : "?";
			int m = u->mark[k][i], err = k ? i == u->err_index : i == err_a && err_a >= 0;
			if (!nd)
				continue;
			fprintf(f, "    %s%lld [label=\"#%lld ", id, i, i);
			rp_dot_esc(f, type ? type : "?");
			rp_dot_node_detail(f, nd);
			if (!dot_upd_deps(u, k, i) && rp_has_int(nd, "ndeps"))
				fprintf(f, "\\n%lld deps (edges unknown: the graph is gone)", rp_int(nd, "ndeps", 0));
			if (rp_dot_is_mem(type) && rp_has_int(nd, "size")) {
				char b[32];
				fputs("\\n", f);
				rp_dot_esc(f, rp_bytes(rp_int(nd, "size", 0), b, sizeof b));
			}
			if (m)
				fprintf(f, "\\n%s", what[m]);
			if (m == UPD_SAME || m == UPD_CHANGED)
				fprintf(f, " (= %s%d)", k ? "exec #" : "new #", u->match[k][i]);
			fprintf(f, "\"%s", rp_dot_is_mem(type) ? ", shape=house" : "");
			if (m)
				fprintf(f, ", style=filled, fillcolor=\"%s\", color=%s", fill[m],
					m == UPD_CHANGED    ? "orange"
					: m == UPD_INSERTED ? "darkgreen"
							    : "red");
			fprintf(f, "%s];\n", err ? ", penwidth=3" : "");
			deps = dot_upd_deps(u, k, i);
			{
				size_t e;
				json_t *d;
				json_array_foreach(deps, e, d)
				{
					long long from = json_integer_value(d);
					int ediff = dot_upd_edge_differs(u, k, from, i) == 1;
					fprintf(f, "    %s%lld -> %s%lld%s;\n", id, from, id, i,
						ediff ? " [color=red, penwidth=2.5]" : "");
				}
			}
		}
		fputs("  }\n", f);
	}
	fputs("}\n", f);
}

static void dot_upd_free(struct dot_upd *u)
{
	for (int k = 0; k < 2; k++)
		for (long long i = 0; i < u->n[k]; i++) {
			json_decref((json_t *)u->side[k][i]);
			free(u->sig[k][i]);
		}
	json_decref((json_t *)u->viol);
	free(u);
}

/* A failing update the shim drew: a CGS001 violation, or a mismatch where
 * the driver answered 910 and nothing was predicted (the shim then writes
 * both sides' node records after it, issue 31). ctx: an int set to 1. */
static void du_violation(void *ctx, const struct rp_rec *r, const struct rd_violation *f)
{
	(void)r;
	*(int *)ctx = f->rule && !strcmp(f->rule, "CGS001");
}

static void du_mismatch(void *ctx, const struct rp_rec *r, const struct rd_mismatch *f)
{
	(void)r;
	*(int *)ctx = (!f->rule || !*f->rule) && f->rc == 910 && f->exec;
}

static const struct rp_on du_failing = {.violation = du_violation, .mismatch = du_mismatch};

/* Record i is a failing update the shim drew. */
static int dot_failing_update(const struct rp_log *log, size_t i)
{
	int yes = 0;
	if (rp_on_has(&du_failing, log->recs[i].kind))
		rp_on_call(&du_failing, &yes, &log->recs[i], rp_j(log, i));
	return yes;
}

/* The node records of one side of the update (side "exec" or "graph"),
 * written for exec, gathered by index; stop when an index comes again (a
 * later failing update of the same exec). */
struct du_nodes {
	struct dot_upd *u;
	const char *exec;
	int stop;
};

static void du_node(void *ctx, const struct rp_rec *r, const struct rd_node *f)
{
	struct du_nodes *c = ctx;
	long long idx = f->has_index ? f->index : -1;
	int k;

	(void)r;
	if (!f->side || !f->exec || !c->exec || strcmp(f->exec, c->exec))
		return;
	k = !strcmp(f->side, "graph");
	if (idx < 0 || idx >= DOT_UPD_MAX)
		return;
	if (c->u->side[k][idx]) {
		c->stop = 1;
		return;
	}
	c->u->side[k][idx] = json_incref((json_t *)f->j);
	if (idx + 1 > c->u->n[k])
		c->u->n[k] = idx + 1;
}

static const struct rp_on du_nodes_on = {.node = du_node};

/* `--dot update:N`: the Nth failing update (1-based, in time order; or
 * "last": a CGS001 violation or an unpredicted 910) and the node records
 * the shim wrote with it (side "exec" and "graph", at info level). */
int rp_dot_update(const struct rp_log *log, const char *which, const char *out)
{
	struct dot_upd *u;
	struct du_nodes c = {0};
	long long want, seen = 0, vpid = 0, vseq = 0;
	const char *exec;
	char *end;
	size_t i, at = 0;
	int rc;

	want = strcmp(which, "last") ? strtoll(which, &end, 10) : -1;
	if (want == 0 || (want > 0 && *end) || (want < 0 && strcmp(which, "last"))) {
		fprintf(stderr, "cgshim report: --dot update:%s: want update:N (N from 1) or update:last\n", which);
		return 1;
	}
	u = calloc(1, sizeof *u);
	if (!u)
		return 1;
	for (i = 0; i < log->n; i++) {
		const struct rp_rec *r = &log->recs[i];
		if (!dot_failing_update(log, i))
			continue;
		seen++;
		if (want < 0 || seen == want) {
			json_decref((json_t *)u->viol);
			u->viol = json_incref(rp_j(log, i)); /* outlives the next rp_j */
			vpid = r->pid;
			vseq = r->seq;
			at = i;
			if (want > 0)
				break;
		}
	}
	if (!u->viol) {
		fprintf(stderr,
			"cgshim report: --dot update:%s: the log has %lld failing update%s "
			"(CGS001 violations, unpredicted 910s)\n",
			which, seen, seen == 1 ? "" : "s");
		free(u);
		return 2;
	}
	exec = rp_str(u->viol, "exec");
	u->err_index = rp_int(u->viol, "node_index", -1);
	/* The node records follow their violation in the same process; a
	 * later failing update of the same exec starts again at index 0. */
	c.u = u;
	c.exec = exec;
	for (i = at + 1; i < log->n && !c.stop; i++) {
		const struct rp_rec *r = &log->recs[i];
		if (r->pid != vpid || r->seq <= vseq || !rp_on_has(&du_nodes_on, r->kind))
			continue;
		rp_on_call(&du_nodes_on, &c, r, rp_j(log, i));
	}
	if (!u->n[0] && !u->n[1]) {
		fprintf(stderr,
			"cgshim report: --dot update:%s: no node records with that violation (a shim "
			"older than the update pictures, or a CGS001 only counted under "
			"CGSHIM_ON_UPDATE_FAILURE=reinstantiate)\n",
			which);
		dot_upd_free(u);
		return 2;
	}
	dot_upd_align(u);
	rc = rp_dot_output(out, dot_write_update, u);
	dot_upd_free(u);
	return rc;
}
