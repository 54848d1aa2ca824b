/*
 * shim/model/joins.c -- the driver's own view of a capture's forks, asked
 * only when the stream model (captures.c) thinks a fork is unjoined.
 *
 * The stream model sees joins made with events (cuEventRecord on the fork,
 * cuStreamWaitEvent on the origin). Real stacks join otherwise too: NCCL
 * sets the origin's capture dependencies to a fork's frontier with
 * cuStreamUpdateCaptureDependencies, and a stream that only waited (it
 * captured nothing) has nothing to join. The driver's rule is about nodes
 * (the stand-in implements the same): at the end every stream still in the
 * capture must have each of its capture dependencies among the origin's
 * dependencies or their ancestors. So before CGS008 is named, each suspect
 * is checked that way with capture-safe queries (cuStreamGetCaptureInfo,
 * cuGraphNodeGetDependencies, or cuGraphGetEdges once if a node query is
 * refused) and dropped when joined or no longer in the capture. Any query
 * that fails, or a walk past JOIN_WALK_MAX nodes, leaves the stream
 * model's answer standing.
 *
 * Cost, inside the capture's window (the end's pre-call): nothing on the
 * common path (no suspect, no query). With suspects, one capture-info query
 * per stream, then a walk back from the origin's dependencies that stops as
 * soon as every suspect's dependencies are found: a fork joined just before
 * the end costs a few nodes, not the graph. Only a fork that really is
 * unjoined (the end is about to fail with 904) walks every ancestor.
 */
#include "model-int.h"

#define JOIN_WALK_MAX (1u << 20)

/* The capture dependencies of s, and whether it captures into capture id. */
static int join_deps(CUstream s, int ptsz, uint64_t id, const CUgraphNode **deps, size_t *nd, int *member, CUgraph *g)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	const CUgraphEdgeData *ed = NULL; /* asked for, so edge data is no lossy query */
	cuuint64_t cid = 0;
	CUresult rc;
	*deps = NULL;
	*nd = 0;
	if (ptsz && drv_cuStreamGetCaptureInfo_v3_ptsz)
		rc = drv_cuStreamGetCaptureInfo_v3_ptsz(s, &st, &cid, g, deps, &ed, nd);
	else if (drv_cuStreamGetCaptureInfo_v3)
		rc = drv_cuStreamGetCaptureInfo_v3(s, &st, &cid, g, deps, &ed, nd);
	else
		return 0;
	if (rc != CUDA_SUCCESS)
		return 0;
	*member = st == CU_STREAM_CAPTURE_STATUS_ACTIVE && cid == id;
	return 1;
}

/* A node's dependencies into *buf (grown as needed), asked of the driver;
 * -1 when it cannot say. */
static long join_node_query(CUgraphNode n, CUgraphNode **buf, size_t *cap)
{
	size_t k = 0;
	CUresult rc;
	if (drv_cuGraphNodeGetDependencies_v2)
		rc = drv_cuGraphNodeGetDependencies_v2(n, NULL, NULL, &k);
	else if (drv_cuGraphNodeGetDependencies)
		rc = drv_cuGraphNodeGetDependencies(n, NULL, &k);
	else
		return -1;
	if (rc != CUDA_SUCCESS)
		return -1;
	if (!k)
		return 0;
	if (k > *cap) {
		CUgraphNode *b = realloc(*buf, k * sizeof *b);
		if (!b)
			return -1;
		*buf = b;
		*cap = k;
	}
	if (drv_cuGraphNodeGetDependencies_v2) {
		CUgraphEdgeData *ed = calloc(k, sizeof *ed);
		rc = ed ? drv_cuGraphNodeGetDependencies_v2(n, *buf, ed, &k) : CUDA_ERROR_OUT_OF_MEMORY;
		free(ed);
	} else {
		rc = drv_cuGraphNodeGetDependencies(n, *buf, &k);
	}
	return rc == CUDA_SUCCESS ? (long)k : -1;
}

/* Where the walk reads a node's dependencies: the driver, node by node;
 * after a refused node query, every edge of the graph read once
 * (cuGraphGetEdges: the query this check was first measured with on the
 * H200, NCCL's capture) and sorted by the edge's head. */
struct join_edge {
	CUgraphNode from, to;
};

struct join_src {
	CUgraph g;
	struct join_edge *e;
	size_t ne;
	int edges;
};

static int join_edge_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct join_edge *)a)->to, y = (uintptr_t)((const struct join_edge *)b)->to;
	return x < y ? -1 : x > y;
}

static int join_edges_load(struct join_src *src)
{
	size_t ne = 0;
	CUgraphNode *from = NULL, *to = NULL;
	int ok = 0;
	if (!src->g || !drv_cuGraphGetEdges || drv_cuGraphGetEdges(src->g, NULL, NULL, &ne) != CUDA_SUCCESS)
		return 0;
	from = malloc((ne + 1) * sizeof *from);
	to = malloc((ne + 1) * sizeof *to);
	src->e = malloc((ne + 1) * sizeof *src->e);
	if (from && to && src->e && (!ne || drv_cuGraphGetEdges(src->g, from, to, &ne) == CUDA_SUCCESS)) {
		for (size_t i = 0; i < ne; i++)
			src->e[i] = (struct join_edge){from[i], to[i]};
		qsort(src->e, ne, sizeof *src->e, join_edge_cmp);
		src->ne = ne;
		src->edges = ok = 1;
	}
	free(from);
	free(to);
	return ok;
}

static long join_node_deps(struct join_src *src, CUgraphNode n, CUgraphNode **buf, size_t *cap)
{
	size_t lo = 0, hi, k = 0;
	if (!src->edges) {
		long q = join_node_query(n, buf, cap);
		if (q >= 0 || !join_edges_load(src))
			return q;
	}
	for (hi = src->ne; lo < hi;) { /* the first edge into n */
		size_t mid = (lo + hi) / 2;
		if ((uintptr_t)src->e[mid].to < (uintptr_t)n)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < src->ne && src->e[hi].to == n; hi++)
		;
	if (hi - lo > *cap) {
		CUgraphNode *b = realloc(*buf, (hi - lo) * sizeof *b);
		if (!b)
			return -1;
		*buf = b;
		*cap = hi - lo;
	}
	for (; lo < hi; lo++)
		(*buf)[k++] = src->e[lo].from;
	return (long)k;
}

/* A set of nodes: open addressing on the handle, grown at half load. */
struct join_set {
	CUgraphNode *slot;
	size_t mask, n;
};

static int join_set_has(const struct join_set *h, CUgraphNode n)
{
	for (size_t i = model_node_slot(n, h->mask); h->slot[i]; i = (i + 1) & h->mask)
		if (h->slot[i] == n)
			return 1;
	return 0;
}

/* 1 when added, 0 when there already, -1 out of memory. */
static int join_set_add(struct join_set *h, CUgraphNode n)
{
	size_t i;
	if (2 * (h->n + 1) > h->mask + 1) {
		struct join_set g = {calloc(2 * (h->mask + 1), sizeof *g.slot), 2 * h->mask + 1, 0};
		if (!g.slot)
			return -1;
		for (size_t k = 0; k <= h->mask; k++)
			if (h->slot[k]) {
				for (i = model_node_slot(h->slot[k], g.mask); g.slot[i]; i = (i + 1) & g.mask)
					;
				g.slot[i] = h->slot[k];
				g.n++;
			}
		free(h->slot);
		*h = g;
	}
	for (i = model_node_slot(n, h->mask); h->slot[i]; i = (i + 1) & h->mask)
		if (h->slot[i] == n)
			return 0;
	h->slot[i] = n;
	h->n++;
	return 1;
}

/* The suspects' dependencies, each once, with how many are still not found
 * among the origin's ancestors. */
struct join_targets {
	struct join_set set;
	size_t left;
};

/* The walk's queue: every node seen once, in the order seen. */
struct join_queue {
	CUgraphNode *v;
	size_t n, cap;
};

/* Node x reached: into seen and the queue when new, and a target found
 * when it is one. 0, or -1 out of memory. */
static int join_visit(struct join_set *seen, struct join_queue *q, struct join_targets *t, CUgraphNode x)
{
	int a = join_set_add(seen, x);
	if (a <= 0)
		return a;
	if (q->n == q->cap) {
		size_t cap = q->cap ? 2 * q->cap : 64;
		CUgraphNode *v = realloc(q->v, cap * sizeof *v);
		if (!v)
			return -1;
		q->v = v;
		q->cap = cap;
	}
	q->v[q->n++] = x;
	if (join_set_has(&t->set, x))
		t->left--;
	return 0;
}

/* Walks back from d0 until every target is found (returns 1), the
 * ancestors end (1: the ones not found are unjoined), or a query fails or
 * the walk grows past JOIN_WALK_MAX (0: no answer). Found targets are
 * left in seen. */
static int join_walk(struct join_src *src, const CUgraphNode *d0, size_t n0, struct join_targets *t,
		     struct join_set *seen)
{
	struct join_queue q = {NULL, 0, 0};
	CUgraphNode *deps = NULL;
	size_t head = 0, dcap = 0;
	int ok = 1;
	for (size_t i = 0; i < n0 && ok; i++)
		ok = !d0[i] || join_visit(seen, &q, t, d0[i]) == 0;
	while (ok && t->left && head < q.n) {
		long k = join_node_deps(src, q.v[head++], &deps, &dcap);
		ok = k >= 0 && seen->n <= JOIN_WALK_MAX;
		for (long j = 0; ok && j < k; j++)
			ok = join_visit(seen, &q, t, deps[j]) == 0;
	}
	free(q.v);
	free(deps);
	return ok;
}

int model_capture_confirm_unjoined(uint64_t id, CUstream origin, int ptsz, CUstream *streams, uint32_t *sites, int n)
{
	const CUgraphNode *d;
	CUgraphNode *d0 = NULL;
	size_t n0, nd;
	int member, kept = 0, in[CG_MAX_JOIN] = {0}, un[CG_MAX_JOIN];
	struct join_targets t = {{NULL, 0, 0}, 0};
	struct join_set seen = {NULL, 0, 0};
	struct join_src src = {NULL, NULL, 0, 0};
	if (n <= 0 || n > CG_MAX_JOIN || !join_deps(origin, ptsz, id, &d, &n0, &member, &src.g) || !member)
		return n;
	/* the answer is valid until the next call on the origin: a copy */
	if (!(d0 = malloc((n0 + 1) * sizeof *d0)) || !(t.set.slot = calloc(64, sizeof *t.set.slot)) ||
	    !(seen.slot = calloc(64, sizeof *seen.slot)))
		goto keep_all;
	t.set.mask = seen.mask = 63;
	if (n0)
		memcpy(d0, d, n0 * sizeof *d0);
	for (int i = 0; i < n; i++) { /* the suspects still in the capture, their dependencies the targets */
		if (!join_deps(streams[i], 0, id, &d, &nd, &member, NULL))
			goto keep_all;
		in[i] = member;
		for (size_t k = 0; member && k < nd; k++) {
			int a = d[k] ? join_set_add(&t.set, d[k]) : 0;
			if (a < 0)
				goto keep_all;
			t.left += (size_t)a;
		}
	}
	if (t.left && !join_walk(&src, d0, n0, &t, &seen))
		goto keep_all;
	for (int i = 0; i < n; i++) { /* asked again: each answer above held until the next query */
		un[i] = 0;
		if (!in[i])
			continue;
		if (!join_deps(streams[i], 0, id, &d, &nd, &member, NULL))
			goto keep_all;
		for (size_t k = 0; member && k < nd && !un[i]; k++)
			un[i] = d[k] && !join_set_has(&seen, d[k]);
	}
	for (int i = 0; i < n; i++)
		if (un[i]) {
			streams[kept] = streams[i];
			sites[kept] = sites[i];
			kept++;
		}
	n = kept;
keep_all: /* on a failed query or allocation: the stream model's answer, n */
	free(d0);
	free(t.set.slot);
	free(seen.slot);
	free(src.e);
	return n;
}
