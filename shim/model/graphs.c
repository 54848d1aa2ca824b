/*
 * shim/model/graphs.c -- graphs and their node summaries.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

/* The graphs by handle (table.h: a capture loop's graph comes and goes
 * every step without the table's header and buckets going with it). */
struct cg_hidx model_graphs = CG_HIDX_INIT(struct cg_graph, h, link);
struct cg_graph *model_graph_find_slow_locked(CUgraph g)
{
	return cg_hidx_find(&model_graphs, g);
}

/* One spare walked summary, freed whole: the next walk takes its three
 * blocks (header with nodes, ndeps and types; details; memory nodes)
 * instead of allocating them. An update from a fresh capture then frees
 * and allocates nothing: the exec's old summary goes here, the next
 * capture's walk takes it (stand-in callgrind, workload update-fresh 64:
 * the update's summary swap ~500 -> ~150 instructions). */
static _Atomic(struct cg_summary *) spare_sum;
/* What a capture loop touches of this file's own data at its graph's
 * making, its end, the instantiation, the exec's and the graph's destroy,
 * on one 64-byte line (issue 36: in the lockstep harness every line is a
 * miss; these were on three lines beside data no step of the loop reads).
 * partial, mnodes, graph: a freed partial summary, a destroyed graph's
 * memory-node array and its entry, each for the next of its size
 * (table.h: a capture loop with memory nodes makes and frees one of each a
 * step). ids: the last graph id given (gx_lock). node_destroys: the node
 * destroys seen (cuGraphDestroyNode names no graph, and this driver's
 * headers have no query for a node's graph). changes: hooked changes of
 * any graph (nodes added or destroyed, memory nodes): a child graph's
 * handle is owned by its node and unknown to the graph table, so its
 * change reaches its parent's cached summary only here. */
static struct {
	struct cg_spare partial, mnodes, graph;
	uint64_t ids;
	_Atomic unsigned node_destroys;
	_Atomic uint32_t changes;
} __attribute__((aligned(64)))
graph_line = {.partial = CG_SPARE_INIT(0), .mnodes = CG_SPARE_INIT(0), .graph = CG_SPARE_INIT(sizeof(struct cg_graph))};
_Static_assert(sizeof graph_line == 64, "graph_line: one cache line");

/* A summary's child summaries go with it (never kept in the spare). */
static void summary_kids_free(struct cg_summary *s)
{
	for (uint32_t k = 0; k < s->n_kids; k++)
		model_summary_free(s->kids[k].s);
	free(s->kids);
	s->kids = NULL;
	s->n_kids = 0;
}

/* A partial summary's one block (graph_partial_locked: its memory nodes
 * and a zeroed one after them) back to its spare. */
static CG_HOT void summary_partial_free(struct cg_summary *s)
{
	cg_spare_free(&graph_line.partial, s, sizeof *s + ((size_t)s->n_alloc + s->n_free + 1) * sizeof *s->mem);
}

static CG_HOT void summary_blocks_free(struct cg_summary *s)
{
	summary_kids_free(s);
	if (s->mem == (struct cg_mnode *)(s + 1)) { /* a partial one: its memory nodes in its block */
		summary_partial_free(s);
		return;
	}
	free(s->mem);
	free(s->det);
	free(s); /* nodes, ndeps and types live in the same block */
}

CG_HOT void model_summary_free(struct cg_summary *s)
{
	struct cg_summary *none = NULL;
	if (!s || atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) != 1)
		return;
	/* A partial summary is made by graph_partial_locked alone: one block
	 * with its memory nodes, no kids, no capacities (never the spare
	 * walked summary): what the path below does to it, without reading
	 * the header's later lines (kids, cap_nodes, mem; issue 36: an exec
	 * destroy of a capture loop). */
	if (s->partial) {
		summary_partial_free(s);
		return;
	}
	summary_kids_free(s);
	if (s->cap_nodes && atomic_compare_exchange_strong(&spare_sum, &none, s))
		return;
	summary_blocks_free(s);
}

CG_HOT uint64_t model_summary_shape(const struct cg_summary *s)
{
	uint64_t h = 0x9E3779B97F4A7C15ull ^ ((uint64_t)s->n_nodes << 32 | (uint64_t)s->n_alloc << 16 | s->n_free);
	for (uint32_t i = 0; s->mem && i < s->n_alloc + s->n_free; i++)
		h = cg_mix64(h, s->mem[i].size + ((uint64_t)s->mem[i].is_free << 63));
	return h | 1;
}

CG_HOT struct cg_summary *model_summary_ref(struct cg_summary *s)
{
	if (s)
		atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	return s;
}

/* Walk a graph through capture-safe driver queries: node list, types,
 * edges, memory-node parameters. No lock held. Done once per graph
 * generation (at end of capture or first use) and cached, so an update
 * compares cached summaries instead of walking two graphs. */
static _Atomic long long walks;

CG_HOT long long model_graph_walks(void)
{
	return atomic_load_explicit(&walks, memory_order_relaxed);
}

/* A child graph node's graph, walked one level deeper (no lock held; the
 * handle is owned by the node, which the parent walk holds); appended to
 * s->kids. Best effort: a child not walked is not compared. */
static struct cg_summary *summary_walk_at(CUgraph g, int depth, const size_t *known, uint64_t launches);

static void summary_kid_add(struct cg_summary *s, CUgraphNode node, uint32_t index, int depth)
{
	CUgraph child = NULL;
	if (depth >= CG_KID_DEPTH || !drv_cuGraphChildGraphNodeGetGraph ||
	    drv_cuGraphChildGraphNodeGetGraph(node, &child) != CUDA_SUCCESS || !child)
		return;
	struct cg_kid *k = realloc(s->kids, (s->n_kids + 1) * sizeof *k);
	if (!k)
		return;
	s->kids = k;
	struct cg_summary *c = summary_walk_at(child, depth + 1, NULL, 0);
	if (!c)
		return;
	k[s->n_kids].node = index;
	k[s->n_kids++].s = c;
}

static struct cg_summary *summary_walk(CUgraph g, const size_t *known, uint64_t launches)
{
	struct cg_summary *s;
	atomic_fetch_add_explicit(&walks, 1, memory_order_relaxed);
	s = summary_walk_at(g, 0, known, launches);
	nodes_walk_end();
	return s;
}

/* Churn's fingerprint walks (model.h): counted apart, never cached, so the
 * graph's own summary stays as deferred as it was. */
static _Atomic long long churn_walks;

long long model_graph_churn_walks(void)
{
	return atomic_load_explicit(&churn_walks, memory_order_relaxed);
}

struct cg_summary *model_graph_churn_walk(CUgraph g)
{
	struct cg_summary *s;
	atomic_fetch_add_explicit(&churn_walks, 1, memory_order_relaxed);
	s = summary_walk_at(g, 0, NULL, 0);
	nodes_walk_end();
	return s;
}

/* known: g's node count as the caller just had it from the driver in the
 * call that holds g (no one else can have changed it), else NULL: asked.
 * launches: the capture whose launches this thread logged (nodes.h
 * nodes_launch_take, its end's node list nodes_launch_list), 0 none. */
static CG_HOT struct cg_summary *summary_walk_at(CUgraph g, int depth, const size_t *known, uint64_t launches)
{
	int logged = 0, chain = 0;
	size_t n = 0, nm = 0;
	struct cg_summary *s;
	struct cg_mnode mem_small[16], *mem = mem_small;
	size_t mem_cap = 16;
	if (!drv_cuGraphGetNodes || !drv_cuGraphNodeGetType)
		return NULL;
	if (known)
		n = *known;
	else if (drv_cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS)
		return NULL;
	/* One block: header, node handles, dependency counts, types; the
	 * spare's when it is large enough (its other blocks kept aside). */
	struct cg_summary *r = atomic_exchange(&spare_sum, NULL);
	struct cg_ndet *det_keep = NULL;
	struct cg_mnode *mem_keep = NULL;
	size_t cap = n;
	uint32_t cap_det = 0, cap_mem = 0;
	if (r && r->cap_nodes >= n && r->cap_nodes <= 2 * n + 16) {
		s = r;
		cap = r->cap_nodes; /* the block's layout */
		det_keep = r->det, cap_det = r->cap_det;
		mem_keep = r->mem, cap_mem = r->cap_mem;
	} else {
		if (r)
			summary_blocks_free(r);
		s = malloc(sizeof *s + (n + 1) * (sizeof *s->nodes + sizeof *s->depsig + sizeof *s->ndeps + 1));
		if (!s)
			return NULL;
	}
	memset(s, 0, sizeof *s);
	s->kid_gen = atomic_load_explicit(&graph_line.changes, memory_order_acquire);
	s->cap_nodes = (uint32_t)cap;
	atomic_init(&s->refs, 1);
	s->nodes = (CUgraphNode *)(s + 1);
	s->depsig = (uint32_t *)(s->nodes + cap + 1);
	s->ndeps = (uint16_t *)(s->depsig + cap + 1);
	s->types = (uint8_t *)(s->ndeps + cap + 1);
	memset(s->ndeps, 0, (n + 1) * sizeof *s->ndeps);
	memset(s->depsig, 0, (n + 1) * sizeof *s->depsig);
	if (n && !(launches && known && nodes_launch_list(launches, s->nodes, n)) && /* the end's, else asked */
	    drv_cuGraphGetNodes(g, s->nodes, &n) != CUDA_SUCCESS)
		goto fail;
	s->n_nodes = (uint32_t)n;
	/* node details (nodes.c): best effort, the summary stands without */
	if (n && cap_det >= n) {
		s->det = det_keep;
		s->cap_det = cap_det;
	} else {
		free(det_keep);
		s->det = n ? malloc(n * sizeof *s->det) : NULL;
		s->cap_det = s->det ? (uint32_t)n : 0;
	}
	det_keep = NULL;
	/* every node a kernel the hooks saw launched, described then */
	if (launches && s->det && nodes_launch_take(launches, s->nodes, n, s->det, &chain) &&
	    !(cg_cfg.summary_check && nodes_launch_check(s->nodes, n, s->det))) {
		memset(s->types, CU_GRAPH_NODE_TYPE_KERNEL, n);
		s->n_det = (uint32_t)n;
		logged = 1;
	}
	for (size_t i = 0; i < n && !logged; i++) {
		CUgraphNodeType t = 0;
		drv_cuGraphNodeGetType(s->nodes[i], &t);
		s->types[i] = (uint8_t)t;
		if (s->det && nodes_described(t))
			nodes_describe(s->nodes[i], t, (uint32_t)i, &s->det[s->n_det++]);
		if (t == CU_GRAPH_NODE_TYPE_GRAPH)
			summary_kid_add(s, s->nodes[i], (uint32_t)i, depth);
		if (t != CU_GRAPH_NODE_TYPE_MEM_ALLOC && t != CU_GRAPH_NODE_TYPE_MEM_FREE)
			continue;
		if (nm == mem_cap) {
			struct cg_mnode *grown = malloc(2 * mem_cap * sizeof *grown);
			if (!grown)
				goto fail;
			memcpy(grown, mem, nm * sizeof *mem);
			if (mem != mem_small)
				free(mem);
			mem = grown;
			mem_cap *= 2;
		}
		struct cg_mnode *m = &mem[nm];
		memset(m, 0, sizeof *m);
		if (t == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
			CUDA_MEM_ALLOC_NODE_PARAMS p;
			memset(&p, 0, sizeof p);
			if (drv_cuGraphMemAllocNodeGetParams &&
			    drv_cuGraphMemAllocNodeGetParams(s->nodes[i], &p) == CUDA_SUCCESS) {
				m->dptr = p.dptr;
				m->size = p.bytesize;
				m->ipc = p.poolProps.handleTypes != CU_MEM_HANDLE_TYPE_NONE;
				if (p.poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE &&
				    p.poolProps.location.id >= 0 && p.poolProps.location.id < CG_MAX_DEV)
					m->dev = (uint8_t)(p.poolProps.location.id + 1);
			}
			s->n_alloc++;
		} else {
			if (drv_cuGraphMemFreeNodeGetParams)
				drv_cuGraphMemFreeNodeGetParams(s->nodes[i], &m->dptr);
			m->is_free = 1;
			s->n_free++;
		}
		nm++;
	}
	/* a logged capture no dependency change reached: a chain, no edges
	 * asked (CGSHIM_SUMMARY_CHECK asks them and compares) */
	if (logged && chain && !cg_cfg.summary_check) {
		model_topo_chain(s);
	} else {
		model_topo_edges(s, g);
		if (logged && chain) {
			size_t at = 0, diff = model_topo_chain_check(s, &at);
			nodes_launch_chain_check(diff, n, at);
		}
	}
	model_topo_hash(s);
	/* Details, exactly as many as described (none: no array) */
	if (s->det && !s->n_det) {
		free(s->det);
		s->det = NULL;
		s->cap_det = 0;
	} else if (s->det && s->n_det < s->cap_det) {
		struct cg_ndet *d = realloc(s->det, s->n_det * sizeof *d);
		if (d) {
			s->det = d;
			s->cap_det = s->n_det;
		}
	}
	if (s->det)
		nodes_fingerprint(s->det, s->n_det, &s->sig, &s->ptrs);
	/* Memory nodes, exactly as many as found (one slot kept for callers
	 * that index mem[0] of an empty list). */
	if (cap_mem >= nm + 1) {
		s->mem = mem_keep;
		s->cap_mem = cap_mem;
	} else {
		free(mem_keep);
		s->mem = malloc((nm + 1) * sizeof *s->mem);
		s->cap_mem = s->mem ? (uint32_t)(nm + 1) : 0;
	}
	mem_keep = NULL;
	if (!s->mem)
		goto fail;
	memcpy(s->mem, mem, nm * sizeof *mem);
	memset(&s->mem[nm], 0, sizeof *s->mem);
	if (mem != mem_small)
		free(mem);
	return s;
fail:
	if (mem != mem_small)
		free(mem);
	free(det_keep); /* the spare's blocks not taken yet */
	free(mem_keep);
	model_summary_free(s);
	return NULL;
}

/* Pools of memory nodes: the walk only sees properties; the pool comes
 * from what the shim recorded when the allocation was made. */
static void summary_fill_pools(struct cg_summary *s, const struct cg_graph *gr)
{
	if (!s || !gr)
		return;
	for (uint32_t i = 0; i < s->n_alloc + s->n_free; i++) {
		struct cg_mnode *m = &s->mem[i];
		if (m->is_free)
			continue;
		for (int k = 0; k < gr->n_mem; k++)
			if (!gr->mem[k].is_free && gr->mem[k].dptr == m->dptr) {
				m->pool = gr->mem[k].pool;
				m->site = gr->mem[k].site;
				m->pool_default = gr->mem[k].pool_default;
				if (!m->dev)
					m->dev = gr->mem[k].dev;
				break;
			}
	}
}

/* The driver's own id of g (CUDA 13.1+), 0 when it has none: a query of
 * the handle the caller was just given, before the model's lock. */
static unsigned graph_cuda_id(CUgraph g)
{
	unsigned id = 0;
	if (!drv_cuGraphGetId || drv_cuGraphGetId(g, &id) != CUDA_SUCCESS)
		id = 0;
	return id;
}

CG_HOT void model_graph_new(CUgraph g, int origin, uint64_t capture, uint32_t site, int repeat)
{
	struct cg_graph *x;
	int again;
	unsigned cuda_id;
	if (!g)
		return;
	cuda_id = graph_cuda_id(g);
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	again = x != NULL; /* a graph known before, changed (a new handle needs no epoch: destroy moved it) */
	if (!x) {
		x = cg_spare_calloc(&graph_line.graph, sizeof *x);
		if (!x) {
			pthread_mutex_unlock(&model_gx_lock);
			cg_degrade("graph table");
			return;
		}
		x->h = g;
		cg_hidx_add(&model_graphs, x);
		if (model_table_added(&model_graph_table)) {
			pthread_mutex_unlock(&model_gx_lock);
			cg_spare_free(&graph_line.graph, x, sizeof *x);
			return;
		}
		model_tot.graphs++;
		x->id = ++graph_line.ids; /* a graph changed in place keeps its id */
	}
	x->cuda_id = cuda_id;
	x->origin = origin;
	x->capture = capture;
	x->site = site;
	x->repeat = repeat;
	x->churn = 0;
	x->gen++;
	if (again)
		model_epoch_bump();
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT void model_graph_churn_set(CUgraph g, uint32_t idx)
{
	struct cg_graph *x;
	pthread_mutex_lock(&model_gx_lock);
	if ((x = model_graph_find_locked(g)))
		x->churn = idx;
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT void model_ids_get(CUgraph g, CUgraphExec e, struct model_ids *out)
{
	memset(out, 0, sizeof *out);
	if (!g && !e)
		return;
	pthread_mutex_lock(&model_gx_lock);
	if (g) {
		struct cg_graph *x = model_graph_find_locked(g);
		if (x)
			out->graph = x->id, out->cuda_graph = x->cuda_id;
	}
	if (e) {
		struct cg_exec *x = model_exec_find_locked(e);
		if (x)
			out->exec = x->id, out->cuda_exec = x->cuda_id, out->exec_graph = x->graph_id;
	}
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT struct emit_ids model_ids_of(CUgraph g, CUgraphExec e)
{
	struct model_ids ids;
	model_ids_get(g, e, &ids);
	return model_ids_emit(&ids);
}

CG_HOT int model_graph_destroy(CUgraph g)
{
	struct cg_graph *x;
	int repeat = 0;
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	if (x) {
		cg_hidx_del(&model_graphs, x);
		model_graph_gone_locked(x); /* its execs' claims die with it (model-int.h) */
		model_epoch_bump();	    /* the handle may come back as another graph */
	}
	pthread_mutex_unlock(&model_gx_lock);
	if (x) {
		repeat = x->repeat;
		model_alloc_release_graph(g, x->mem, x->n_mem);
		model_summary_free(x->sum);
		cg_spare_free(&graph_line.mnodes, x->mem, (size_t)x->cap_mem * sizeof *x->mem);
		cg_spare_free(&graph_line.graph, x, sizeof *x);
	}
	return repeat;
}

CG_HOT unsigned model_graph_node_destroys(void)
{
	return atomic_load_explicit(&graph_line.node_destroys, memory_order_relaxed);
}

void model_graph_node_destroyed(void)
{
	atomic_fetch_add_explicit(&graph_line.node_destroys, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&graph_line.changes, 1, memory_order_release);
	model_epoch_bump(); /* some graph changed: no memo stands */
}

void model_graph_node_changed(void)
{
	struct cg_graph *x, *tmp;
	atomic_fetch_add_explicit(&graph_line.changes, 1, memory_order_release);
	pthread_mutex_lock(&model_gx_lock);
	CG_HIDX_EACH(&model_graphs, x, tmp)
	x->sum_gen = x->gen - 1; /* not current (model_graph_sum_current_locked) */
	model_epoch_bump();
	pthread_mutex_unlock(&model_gx_lock);
}

void model_graph_mutated(CUgraph g)
{
	struct cg_graph *x;
	atomic_fetch_add_explicit(&graph_line.changes, 1, memory_order_release);
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	if (!x)
		model_epoch_bump(); /* perhaps a child graph: no memo stands */
	if (x) {
		x->gen++;
		model_epoch_bump();
		x->repeat = 0; /* changed after its capture: its records are written */
		x->churn = 0;  /* no longer the graph its fingerprint describes */
	}
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT void model_graph_add_mnode(CUgraph g, const struct cg_mnode *m_in)
{
	struct cg_graph *x;
	struct cg_mnode mm = *m_in, *m = &mm;
	atomic_fetch_add_explicit(&graph_line.changes, 1, memory_order_release);
	if (!mm.is_free && !mm.dev)
		mm.dev = model_pool_mnode_dev(&mm); /* before gx_lock: it may take mem_lock */
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	if (!x) {
		x = cg_spare_calloc(&graph_line.graph, sizeof *x);
		if (x) {
			x->h = g;
			cg_hidx_add(&model_graphs, x);
			if (model_table_added(&model_graph_table)) {
				cg_spare_free(&graph_line.graph, x, sizeof *x);
				x = NULL;
			} else {
				model_tot.graphs++;
				x->id = ++graph_line.ids; /* a captured graph: known from its first memory node */
				model_graph_last = x;	  /* its free node's, its end's lookups next (issue 36) */
			}
		}
	}
	if (x) {
		if (x->n_mem == x->cap_mem) {
			int nc = x->cap_mem ? x->cap_mem * 2 : 4;
			/* none zeroed: entries past n_mem are never read (as
			 * realloc's, issue 36: a capture loop's graph wrote a
			 * line of zeros it never read) */
			struct cg_mnode *nm =
			    x->mem ? realloc(x->mem, (size_t)nc * sizeof *nm)
				   : cg_spare_calloc_head(&graph_line.mnodes, (size_t)nc * sizeof *nm, 0);
			if (nm) {
				x->mem = nm;
				x->cap_mem = nc;
			}
		}
		if (x->n_mem < x->cap_mem)
			x->mem[x->n_mem++] = *m;
		x->gen++;
		model_epoch_bump();
	}
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT int model_graph_sum_current_locked(const struct cg_graph *gr)
{
	return gr->sum && gr->sum_gen == gr->gen &&
	       (!gr->sum->n_kids ||
		gr->sum->kid_gen == atomic_load_explicit(&graph_line.changes, memory_order_acquire));
}

/* The graph's cached summary if current (a reference), else NULL; *gen
 * gets the graph's generation (0 when the graph is unknown). */
static CG_HOT struct cg_summary *summary_cached(CUgraph g, uint32_t *gen)
{
	struct cg_graph *x;
	struct cg_summary *s = NULL;
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	if (x && model_graph_sum_current_locked(x))
		s = model_summary_ref(x->sum);
	*gen = x ? x->gen : 0;
	pthread_mutex_unlock(&model_gx_lock);
	return s;
}

static CG_HOT struct cg_summary *graph_summary(CUgraph g, const size_t *known, uint64_t launches)
{
	struct cg_graph *x;
	uint32_t gen;
	struct cg_summary *s = summary_cached(g, &gen);
	if (s)
		return s;
	s = summary_walk(g, known, launches);
	if (!s)
		return NULL;
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	if (x) {
		summary_fill_pools(s, x);
		if (x->gen == gen) {
			model_summary_free(x->sum);
			x->sum = model_summary_ref(s);
			x->sum_gen = gen;
		}
	}
	pthread_mutex_unlock(&model_gx_lock);
	return s;
}

struct cg_summary *model_graph_summary(CUgraph g)
{
	return graph_summary(g, NULL, 0);
}

CG_HOT struct cg_summary *model_graph_summary_counted(CUgraph g, size_t n, uint64_t launches)
{
	return graph_summary(g, &n, launches);
}

CUgraph model_summary_graph(const struct cg_summary *s)
{
	struct cg_graph *x, *tmp;
	CUgraph g = NULL;
	pthread_mutex_lock(&model_gx_lock);
	CG_HIDX_EACH(&model_graphs, x, tmp)
	if (x->sum == s && x->sum_gen == x->gen) {
		g = x->h;
		break;
	}
	pthread_mutex_unlock(&model_gx_lock);
	return g;
}

struct cg_summary *model_graph_summary_cached(CUgraph g)
{
	uint32_t gen;
	return summary_cached(g, &gen);
}

/* Alloc and free nodes among n memory nodes. */
static void mnode_counts(const struct cg_mnode *m, int n, uint32_t *n_alloc, uint32_t *n_free)
{
	*n_alloc = *n_free = 0;
	for (int i = 0; i < n; i++) {
		if (m[i].is_free)
			(*n_free)++;
		else
			(*n_alloc)++;
	}
}

CG_HOT int model_graph_captured(CUgraph g, size_t n_nodes, long kernels, uint32_t churn, uint32_t *n_alloc,
				uint32_t *n_free)
{
	struct cg_graph *x;
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	*n_alloc = *n_free = 0;
	if (x) {
		if (churn)
			x->churn = churn;
		x->cap_gen = x->gen;
		x->n_nodes_cap = (uint32_t)n_nodes;
		mnode_counts(x->mem, x->n_mem, n_alloc, n_free);
		x->cap_nocopy = kernels >= 0 && (size_t)kernels + *n_alloc + *n_free == n_nodes;
		x->cap_destroys = atomic_load_explicit(&graph_line.node_destroys, memory_order_relaxed);
	}
	pthread_mutex_unlock(&model_gx_lock);
	return x != NULL;
}

/* model_graph_partial under gx_lock, of x (may be NULL). */
static CG_HOT struct cg_summary *graph_partial_locked(const struct cg_graph *x)
{
	struct cg_summary *s = NULL;
	if (x && x->origin == 1 && x->cap_gen && x->cap_gen == x->gen) {
		/* one block: the header, then the memory nodes (zeroed) */
		s = cg_spare_calloc(&graph_line.partial, sizeof *s + ((size_t)x->n_mem + 1) * sizeof *s->mem);
		if (s) {
			s->mem = (struct cg_mnode *)(s + 1);
			atomic_init(&s->refs, 1);
			s->partial = 1;
			/* a node destroyed since, then one added through an
			 * unhooked call, would keep the node count */
			s->nocopy = x->cap_nocopy && x->cap_destroys == atomic_load_explicit(&graph_line.node_destroys,
											     memory_order_relaxed);
			s->n_nodes = x->n_nodes_cap;
			if (x->n_mem) /* x->mem is NULL for a graph without memory nodes */
				memcpy(s->mem, x->mem, (size_t)x->n_mem * sizeof *s->mem);
			memset(&s->mem[x->n_mem], 0, sizeof *s->mem);
			mnode_counts(x->mem, x->n_mem, &s->n_alloc, &s->n_free);
		}
	}
	return s;
}

struct cg_summary *model_graph_partial(CUgraph g)
{
	struct cg_summary *s;
	pthread_mutex_lock(&model_gx_lock);
	s = graph_partial_locked(model_graph_find_locked(g));
	pthread_mutex_unlock(&model_gx_lock);
	return s;
}

CG_HOT void model_graph_inst_view(CUgraph g, int partial_ok, struct model_inst_view *o)
{
	struct cg_graph *x;
	struct cg_exec *e = NULL;
	memset(o, 0, sizeof *o);
	pthread_mutex_lock(&model_gx_lock);
	x = model_graph_find_locked(g);
	if (x && model_graph_sum_current_locked(x))
		o->sum = model_summary_ref(x->sum);
	else if (partial_ok)
		o->sum = graph_partial_locked(x);
	if (x) {
		o->known = 1;
		o->capture = x->capture;
		o->site = x->site;
		o->churn = x->churn;
		if (x->live_exec) /* as model_graph_live_exec */
			e = model_exec_find_locked(x->live_exec);
	}
	if (e && e->live && e->graph == g) {
		model_exec_view_fill(e, &o->live);
		o->have_live = 1;
	}
	pthread_mutex_unlock(&model_gx_lock);
}

/* Held across a settling walk: a hook about to change or destroy a graph
 * settles it first, so it waits here while another thread (a free working
 * out pending references, ledger.h) walks the same graph. Never taken with
 * another model lock held. */

CG_HOT void model_graph_settle(CUgraph g)
{
	struct cg_graph *gr;
	struct cg_summary *full = NULL;
	int pending;
	if (!model_graph_claimed(g)) /* no exec waits on g */
		return;
	pthread_mutex_lock(&settle_lock);
	pthread_mutex_lock(&model_gx_lock);
	gr = model_graph_find_locked(g);
	pending = gr ? gr->pending : 0; /* settled by another thread meanwhile */
	pthread_mutex_unlock(&model_gx_lock);
	if (pending)
		full = model_graph_summary(g); /* walks now, g still as instantiated */
	pthread_mutex_lock(&model_gx_lock);
	gr = pending ? model_graph_find_locked(g) : NULL;
	if (gr) {
		struct cg_exec *x, *tmp;
		MODEL_EXECS_EACH(x, tmp)
		{
			if (x->graph != g || !x->sum || !x->sum->partial || !x->sum_gen)
				continue;
			if (full && x->sum_gen == gr->gen)
				model_exec_set_summary(x, model_summary_ref(full)); /* releases the claim */
			else
				x->sum_gen = 0; /* changed unseen: the exec keeps its partial view */
		}
		model_graph_claims_clear_locked(gr);
	}
	pthread_mutex_unlock(&model_gx_lock);
	pthread_mutex_unlock(&settle_lock);
	model_summary_free(full);
}

static _Atomic long long copy_checks, copy_checks_tallied;

void model_graph_copy_checks(long long *all, long long *tallied)
{
	*all = atomic_load_explicit(&copy_checks, memory_order_relaxed);
	*tallied = atomic_load_explicit(&copy_checks_tallied, memory_order_relaxed);
}

/* model_graph_copies' walk of the nodes, when the capture's tally does not
 * settle it: out of line, so that the steady path (tallied) keeps no
 * 2 KB node array in its frame. */
static CG_COLD int graph_copies_walk(CUgraph g, int *kernels)
{
	CUgraphNode small[256], *nodes = small;
	size_t n = 256;
	int found = 1, ok, k = 0;
	if (drv_cuGraphGetNodes(g, small, &n) != CUDA_SUCCESS)
		return 1;
	/* One query when the nodes fit: the driver writes at most 256 and
	 * says how many it wrote; 256 may mean more, counted then. */
	ok = n < 256;
	if (!ok && drv_cuGraphGetNodes(g, NULL, &n) == CUDA_SUCCESS) {
		if (n > 256 && !(nodes = malloc(n * sizeof *nodes)))
			return 1;
		ok = n <= 256 || drv_cuGraphGetNodes(g, nodes, &n) == CUDA_SUCCESS;
	}
	if (ok) {
		found = 0;
		for (size_t i = 0; i < n && !found; i++) {
			CUgraphNodeType t = CU_GRAPH_NODE_TYPE_MEMCPY;
			drv_cuGraphNodeGetType(nodes[i], &t);
			found = t == CU_GRAPH_NODE_TYPE_MEMCPY;
			k += t == CU_GRAPH_NODE_TYPE_KERNEL;
		}
		if (!found)
			*kernels = k;
	}
	if (nodes != small)
		free(nodes);
	return found;
}

CG_HOT int model_graph_copies(CUgraph g, const struct cg_summary *partial, int *kernels)
{
	size_t n = 256;
	*kernels = -1;
	if (!drv_cuGraphGetNodes || !drv_cuGraphNodeGetType)
		return 1;
	atomic_fetch_add_explicit(&copy_checks, 1, memory_order_relaxed);
	/* Proved by the capture's tally: the same node count still (a node
	 * added since through a call that does not move the generation, such
	 * as cuGraphAddMemcpyNode, shows in it) says nothing was added. */
	if (partial && partial->nocopy && drv_cuGraphGetNodes(g, NULL, &n) == CUDA_SUCCESS && n == partial->n_nodes) {
		atomic_fetch_add_explicit(&copy_checks_tallied, 1, memory_order_relaxed);
		/* every node a kernel or a memory node (model_graph_captured) */
		*kernels = (int)(partial->n_nodes - partial->n_alloc - partial->n_free);
		return 0;
	}
	return graph_copies_walk(g, kernels);
}

int model_graph_live_exec(CUgraph g, struct cg_exec_view *out)
{
	struct cg_graph *gr;
	struct cg_exec *x = NULL;
	pthread_mutex_lock(&model_gx_lock);
	gr = model_graph_find_locked(g);
	if (gr && gr->live_exec)
		x = model_exec_find_locked(gr->live_exec);
	if (x && x->live && x->graph == g)
		model_exec_view_fill(x, out);
	else
		x = NULL;
	pthread_mutex_unlock(&model_gx_lock);
	return x != NULL;
}

int model_graph_info(CUgraph g, int *origin, uint64_t *capture, uint32_t *site, int *mem_nodes)
{
	struct cg_graph *gr;
	int ok = 0;
	pthread_mutex_lock(&model_gx_lock);
	gr = model_graph_find_locked(g);
	if (gr) {
		*origin = gr->origin;
		*capture = gr->capture;
		*site = gr->site;
		*mem_nodes = gr->n_mem;
		ok = 1;
	}
	pthread_mutex_unlock(&model_gx_lock);
	return ok;
}
