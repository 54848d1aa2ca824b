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
 * cuGraphGetEdges) and dropped when joined or no longer in the capture.
 * Any query that fails leaves the stream model's answer standing.
 *
 * Cost: nothing on the common path (no suspect, no query); with suspects,
 * one capture-info query per stream and the graph's edges once.
 */
#include "model-int.h"

/* The capture dependencies of s, and whether it captures into capture id. */
static int join_deps(CUstream s, int ptsz, uint64_t id, const CUgraphNode **deps, size_t *nd, int *member)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	const CUgraphEdgeData *ed = NULL; /* asked for, so edge data is no lossy query */
	cuuint64_t cid = 0;
	CUresult rc;
	*deps = NULL;
	*nd = 0;
	if (ptsz && drv_cuStreamGetCaptureInfo_v3_ptsz)
		rc = drv_cuStreamGetCaptureInfo_v3_ptsz(s, &st, &cid, NULL, deps, &ed, nd);
	else if (drv_cuStreamGetCaptureInfo_v3)
		rc = drv_cuStreamGetCaptureInfo_v3(s, &st, &cid, NULL, deps, &ed, nd);
	else
		return 0;
	if (rc != CUDA_SUCCESS)
		return 0;
	*member = st == CU_STREAM_CAPTURE_STATUS_ACTIVE && cid == id;
	return 1;
}

/* A set of nodes: open addressing on the handle, sized by the caller. */
struct join_set {
	CUgraphNode *slot;
	size_t mask;
};

static int join_set_add(struct join_set *h, CUgraphNode n)
{
	size_t i = (size_t)(((uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ull) & h->mask;
	while (h->slot[i]) {
		if (h->slot[i] == n)
			return 0;
		i = (i + 1) & h->mask;
	}
	h->slot[i] = n;
	return 1;
}

static int join_set_has(const struct join_set *h, CUgraphNode n)
{
	size_t i = (size_t)(((uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ull) & h->mask;
	while (h->slot[i]) {
		if (h->slot[i] == n)
			return 1;
		i = (i + 1) & h->mask;
	}
	return 0;
}

struct join_edge {
	CUgraphNode from, to;
};

static int join_edge_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct join_edge *)a)->to, y = (uintptr_t)((const struct join_edge *)b)->to;
	return x < y ? -1 : x > y;
}

/* The origin's dependencies and all their ancestors in g, into *set.
 * Returns 1 when the set is complete. */
static int join_ancestors(CUgraph g, const CUgraphNode *d0, size_t n0, struct join_set *set, CUgraphNode **mem)
{
	size_t ne = 0, cap, head = 0, tail = 0;
	CUgraphNode *from = NULL, *to = NULL, *queue;
	struct join_edge *e = NULL;
	if (!drv_cuGraphGetEdges || drv_cuGraphGetEdges(g, NULL, NULL, &ne) != CUDA_SUCCESS)
		return 0;
	for (cap = 16; cap < 2 * (ne + n0 + 1); cap <<= 1)
		;
	*mem = calloc(cap + ne + n0 + 1, sizeof **mem);
	from = malloc((ne + 1) * sizeof *from);
	to = malloc((ne + 1) * sizeof *to);
	e = malloc((ne + 1) * sizeof *e);
	if (!*mem || !from || !to || !e || (ne && drv_cuGraphGetEdges(g, from, to, &ne) != CUDA_SUCCESS)) {
		free(from), free(to), free(e);
		return 0;
	}
	set->slot = *mem;
	set->mask = cap - 1;
	queue = *mem + cap;
	for (size_t i = 0; i < ne; i++)
		e[i] = (struct join_edge){from[i], to[i]};
	qsort(e, ne, sizeof *e, join_edge_cmp);
	for (size_t i = 0; i < n0; i++)
		if (d0[i] && join_set_add(set, d0[i]))
			queue[tail++] = d0[i];
	while (head < tail) { /* each node enters the queue once: tail <= ne + n0 */
		CUgraphNode x = queue[head++];
		size_t lo = 0, hi = ne;
		while (lo < hi) { /* first edge into x */
			size_t mid = (lo + hi) / 2;
			if ((uintptr_t)e[mid].to < (uintptr_t)x)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < ne && e[lo].to == x; lo++)
			if (join_set_add(set, e[lo].from))
				queue[tail++] = e[lo].from;
	}
	free(from), free(to), free(e);
	return 1;
}

int model_capture_confirm_unjoined(uint64_t id, CUstream origin, int ptsz, CUgraph g, CUstream *streams,
				   uint32_t *sites, int n)
{
	const CUgraphNode *d0;
	CUgraphNode *copy, *mem = NULL;
	size_t n0;
	int member, kept = 0;
	struct join_set set;
	if (n <= 0 || !g || !join_deps(origin, ptsz, id, &d0, &n0, &member) || !member)
		return n;
	/* the answer is valid until the next call on the origin: keep a copy */
	copy = malloc((n0 + 1) * sizeof *copy);
	if (!copy)
		return n;
	if (n0)
		memcpy(copy, d0, n0 * sizeof *copy);
	if (!join_ancestors(g, copy, n0, &set, &mem)) {
		free(copy);
		free(mem);
		return n;
	}
	for (int i = 0; i < n; i++) {
		const CUgraphNode *d;
		size_t nd;
		int unjoined = 1; /* a failed query keeps the stream model's answer */
		if (join_deps(streams[i], 0, id, &d, &nd, &member)) {
			unjoined = 0;
			for (size_t k = 0; member && k < nd && !unjoined; k++)
				unjoined = !join_set_has(&set, d[k]);
		}
		if (unjoined) {
			streams[kept] = streams[i];
			sites[kept] = sites[i];
			kept++;
		}
	}
	free(copy);
	free(mem);
	return kept;
}
