/*
 * shim/model/topo.c -- a walked graph's topology: its edges as dependency
 * counts and signatures per node, and the topology hash an update compares
 * (struct cg_summary). Split from graphs.c, whose walk calls it.
 */
#include "model-int.h"

struct node_ix {
	CUgraphNode node;
	uint32_t index;
};

/* One incoming edge's share of its node's dependency signature: the
 * source's index + 1 (0: not in the graph's node list) and the edge's data
 * (ports, type; NULL: a driver without edge data, all default). */
static inline uint32_t edge_sig(uint32_t from, const CUgraphEdgeData *ed)
{
	uint64_t data = ed ? (uint64_t)ed->from_port << 16 | (uint64_t)ed->to_port << 8 | ed->type : 0;
	return (uint32_t)cg_mix64((uint64_t)from << 24 | data, 0x5EDull);
}

/* s's ndeps, depsig and n_edges from graph g's edges (s->nodes holds its
 * n_nodes nodes, ndeps and depsig zeroed). */
void model_topo_edges(struct cg_summary *s, CUgraph g)
{
	size_t n = s->n_nodes, ne = 0;
	if (drv_cuGraphGetEdges) {
		/* dependency counts and signatures in O(N + E), node -> index by open addressing; edge data
		 * (CUDA 12.3+) from cuGraphGetEdges_v2 where the driver has it. One query where the edges fit
		 * the stack: asked for `room`, fewer is all of them (the driver writes the count it has). */
		const size_t per = 2 * sizeof(CUgraphNode) + sizeof(CUgraphEdgeData);
		_Alignas(16) unsigned char scratch_small[8192], *scratch = scratch_small;
		size_t cap = 16, ix_bytes, room;
		while (cap < 2 * n)
			cap *= 2;
		ix_bytes = cap * sizeof(struct node_ix);
		room = ix_bytes < sizeof scratch_small ? (sizeof scratch_small - ix_bytes) / per : 0;
		CUgraphNode *from = (CUgraphNode *)(scratch + (room ? ix_bytes : 0)), *to = from + room;
		CUgraphEdgeData *ed = (CUgraphEdgeData *)(to + room);
		int have = 0, have_ed = 0;
		if (room > 1) {
			CUresult rc = CUDA_ERROR_NOT_SUPPORTED;
			ne = room;
			have_ed = drv_cuGraphGetEdges_v2 &&
				  (rc = drv_cuGraphGetEdges_v2(g, from, to, ed, &ne)) == CUDA_SUCCESS;
			if (!have_ed)
				ne = room, rc = drv_cuGraphGetEdges(g, from, to, &ne);
			have = rc == CUDA_SUCCESS && ne < room;
		}
		if (!have && drv_cuGraphGetEdges(g, NULL, NULL, &ne) == CUDA_SUCCESS && ne) {
			size_t bytes = ix_bytes + ne * per, ne2 = ne;
			if ((scratch = bytes <= sizeof scratch_small ? scratch_small : malloc(bytes))) {
				from = (CUgraphNode *)(scratch + ix_bytes), to = from + ne,
				ed = (CUgraphEdgeData *)(to + ne);
				have_ed = drv_cuGraphGetEdges_v2 &&
					  drv_cuGraphGetEdges_v2(g, from, to, ed, &ne2) == CUDA_SUCCESS && ne2 == ne;
				have = have_ed || drv_cuGraphGetEdges(g, from, to, &ne) == CUDA_SUCCESS;
			}
		}
		if (have && ne) {
			struct node_ix *ix = (struct node_ix *)scratch;
			memset(ix, 0, cap * sizeof *ix);
			for (size_t i = 0; i < n; i++) {
				size_t h = model_node_slot(s->nodes[i], cap - 1);
				while (ix[h].node)
					h = (h + 1) & (cap - 1);
				ix[h].node = s->nodes[i];
				ix[h].index = (uint32_t)i;
			}
			s->n_edges = (uint32_t)ne;
			for (size_t e = 0; e < ne; e++) {
				size_t h = model_node_slot(to[e], cap - 1), f = model_node_slot(from[e], cap - 1);
				while (ix[h].node && ix[h].node != to[e])
					h = (h + 1) & (cap - 1);
				while (ix[f].node && ix[f].node != from[e])
					f = (f + 1) & (cap - 1);
				if (!ix[h].node)
					continue;
				s->ndeps[ix[h].index]++;
				/* summed: the same set in any order, the same value */
				s->depsig[ix[h].index] +=
				    edge_sig(ix[f].node ? ix[f].index + 1 : 0, have_ed ? &ed[e] : NULL);
			}
		}
		if (scratch && scratch != scratch_small)
			free(scratch);
	}
}

/* s->topo from its nodes' types and dependencies and its walked children. */
void model_topo_hash(struct cg_summary *s)
{
	/* The topology hash (see struct cg_summary): per node one
	 * multiply-xorshift step, so a 1,000-node walk pays ~1 us once
	 * and every later update of this generation compares 8 bytes. */
	uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)s->n_nodes << 32 | s->n_edges);
	for (uint32_t i = 0; i < s->n_nodes; i++)
		h = cg_mix64(h, (uint64_t)s->depsig[i] << 32 | (uint64_t)s->types[i] << 16 | s->ndeps[i]);
	/* each walked child's topology hash and refusal fingerprint
	 * (nodes.h sig), complete when its walk returned */
	for (uint32_t k = 0; k < s->n_kids; k++)
		h = cg_mix64(cg_mix64(h, (uint64_t)s->kids[k].node << 32 | 0x6B1D),
			     s->kids[k].s->topo ^ (s->kids[k].s->sig * 0x9E3779B97F4A7C15ull));
	s->topo = h | 1;
}

/* ---- a capture's chain (issue 36) ----------------------------------------
 * Capture dependency changes that add no node, counted process-wide while a
 * capture is live: the high 40 bits count changes begun, the low 24 those
 * whose driver call has not returned. A reader that sees the same word at a
 * capture's begin and after its end, with none in flight, knows no such
 * change reached the driver in between: one begun before the begin and
 * still in flight shows in the low bits, one that returned in between moved
 * the word. */
#define DEPS_INFLIGHT 0xFFFFFFull
static _Atomic uint64_t deps_word;
static _Atomic long long chains;

int model_deps_change_enter(void)
{
	if (!atomic_load_explicit(&cg_live_captures, memory_order_relaxed))
		return 0;
	atomic_fetch_add_explicit(&deps_word, (DEPS_INFLIGHT + 1) | 1, memory_order_seq_cst);
	return 1;
}

void model_deps_change_leave(int entered)
{
	if (entered)
		atomic_fetch_sub_explicit(&deps_word, 1, memory_order_seq_cst);
}

uint64_t model_deps_word(void)
{
	return atomic_load_explicit(&deps_word, memory_order_seq_cst);
}

int model_deps_unchanged(uint64_t since)
{
	uint64_t w = model_deps_word();
	return w == since && !(w & DEPS_INFLIGHT);
}

long long model_topo_chains(void)
{
	return atomic_load_explicit(&chains, memory_order_relaxed);
}

/* What the walk computes from a chain's edges: node i > 0 depends on node
 * i - 1 alone, through an edge of default data (the driver's for a stream's
 * capture: edge_sig(x, NULL) == edge_sig(x, &zeroed data)). */
static inline uint32_t chain_sig(size_t i)
{
	return edge_sig((uint32_t)i, NULL); /* the source's index + 1 */
}

void model_topo_chain(struct cg_summary *s)
{
	if (!drv_cuGraphGetEdges) /* the walk would find no edges */
		return;
	for (uint32_t i = 1; i < s->n_nodes; i++) {
		s->ndeps[i] = 1;
		s->depsig[i] = chain_sig(i);
	}
	s->n_edges = s->n_nodes ? s->n_nodes - 1 : 0;
	atomic_fetch_add_explicit(&chains, 1, memory_order_relaxed);
}

size_t model_topo_chain_check(const struct cg_summary *s, size_t *at)
{
	size_t diff = 0;
	atomic_fetch_add_explicit(&chains, 1, memory_order_relaxed);
	for (uint32_t i = 0; i < s->n_nodes; i++) {
		int want_deps = i > 0;
		uint32_t want_sig = i ? chain_sig(i) : 0;
		if ((s->ndeps[i] != want_deps || s->depsig[i] != want_sig) && !diff++)
			*at = i;
	}
	if (!diff && s->n_edges != (s->n_nodes ? s->n_nodes - 1 : 0)) /* an edge to a node not listed */
		diff = 1, *at = s->n_nodes;
	return diff;
}
