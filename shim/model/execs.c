/*
 * shim/model/execs.c -- executables: the lock-free launch index, instantiate, update, destroy.
 * See model.h for the lock contract, model-int.h for what the model's files share.
 */
#include "model-int.h"

/* By handle, the execs the launch index had no slot for (model-int.h);
 * the others are found through the index alone. */
struct cg_hidx model_execs = CG_HIDX_INIT(struct cg_exec, h, ovf_link);
#define FAST_SLOTS 8192
#define FAST_TOMB ((struct cg_exec *)1)
static _Atomic(struct cg_exec *) fast_idx[FAST_SLOTS];
/* model-int.h: one line of its own */
_Alignas(64) struct model_exec_line model_xl;
_Static_assert(sizeof(struct model_exec_line) <= 64, "model_xl is one cache line");
static void exec_memo_clear_locked(struct cg_exec *x);
/* x forgets its memo, settled first. gx_lock. An empty memo's lines are
 * not touched (an instantiation and a destroy drop it), nor is the
 * clearing's code (issue 36: three more code lines a step). */
static inline void exec_memo_drop_locked(struct cg_exec *x)
{
	if (x->memo_any || atomic_load_explicit(&x->memo_cur, memory_order_relaxed))
		exec_memo_clear_locked(x);
}

static unsigned fast_hash(CUgraphExec e)
{
	uintptr_t x = (uintptr_t)e;
	x ^= x >> 17;
	x *= 0x9E3779B97F4A7C15ull;
	return (unsigned)(x >> 40) & (FAST_SLOTS - 1);
}

unsigned model_exec_home(CUgraphExec e)
{
	return fast_hash(e);
}

/* 0: x is in the index; -1: its neighbourhood is full (overflow set: x
 * goes to the locked table). */
static int fast_insert(struct cg_exec *x)
{
	unsigned h = fast_hash(x->h);
	for (int i = 0; i < 64; i++) {
		unsigned k = (h + (unsigned)i) & (FAST_SLOTS - 1);
		struct cg_exec *cur = atomic_load_explicit(&fast_idx[k], memory_order_relaxed);
		if (!cur || cur == FAST_TOMB) {
			atomic_store_explicit(&fast_idx[k], x, memory_order_release);
			return 0;
		}
	}
	atomic_store(&model_xl.overflow, 1);
	return -1;
}

/* 1: x was in the index (no slot goes back to empty, so its probe meets
 * it before an empty one); 0: it was not (the locked table holds it). */
static int fast_remove(struct cg_exec *x)
{
	unsigned h = fast_hash(x->h);
	for (int i = 0; i < 64; i++) {
		unsigned k = (h + (unsigned)i) & (FAST_SLOTS - 1);
		struct cg_exec *cur = atomic_load_explicit(&fast_idx[k], memory_order_relaxed);
		if (!cur)
			return 0;
		if (cur == x) {
			atomic_store_explicit(&fast_idx[k], FAST_TOMB, memory_order_release);
			return 1;
		}
	}
	return 0;
}

/* The list of live execs (model-int.h): x last. gx_lock. */
static CG_HOT void exec_list_add(struct cg_exec *x)
{
	struct cg_exec *h = model_xl.head;
	x->link.next = NULL;
	if (!h) {
		x->link.prev = x;
		model_xl.head = x;
		return;
	}
	x->link.prev = h->link.prev;
	((struct cg_exec *)h->link.prev)->link.next = x;
	h->link.prev = x;
}

static CG_HOT void exec_list_del(struct cg_exec *x)
{
	struct cg_exec *h = model_xl.head, *next = x->link.next;
	if (x == h) {
		model_xl.head = next;
		if (next)
			next->link.prev = x->link.prev;
	} else {
		((struct cg_exec *)x->link.prev)->link.next = next;
		(next ? next : h)->link.prev = x->link.prev;
	}
	x->link.prev = x->link.next = NULL;
}

CG_HOT CUgraphExec model_exec_real(struct cg_exec *x)
{
	return atomic_load_explicit(&x->real, memory_order_acquire);
}

CUgraphExec model_exec_real_of(CUgraphExec app)
{
	struct cg_exec *x = model_exec_fast(app);
	CUgraphExec r;
	if (!x)
		return app;
	r = atomic_load_explicit(&x->real, memory_order_acquire);
	/* x may have been destroyed and reused meanwhile: its real is then
	 * another handle's (the application's own race; answer the handle). */
	if (X_GET(x, h) != app || !X_GET(x, live))
		return app;
	return r ? r : app;
}

int model_exec_set_real(CUgraphExec app, CUgraphExec real)
{
	struct cg_exec *x;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(app);
	if (x) {
		exec_memo_drop_locked(x);
		atomic_store_explicit(&x->real, real, memory_order_release);
	}
	pthread_mutex_unlock(&model_gx_lock);
	return x != NULL;
}

/* e's live exec in the index, NULL when not there. */
static struct cg_exec *fast_probe(CUgraphExec e)
{
	unsigned h = fast_hash(e);
	struct cg_exec *x;
	for (int i = 0; i < 64; i++) {
		x = atomic_load_explicit(&fast_idx[(h + (unsigned)i) & (FAST_SLOTS - 1)], memory_order_acquire);
		if (!x)
			break;
		if (x != FAST_TOMB && X_GET(x, h) == e && X_GET(x, live))
			return x;
	}
	return NULL;
}

CG_HOT struct cg_exec *model_exec_fast(CUgraphExec e)
{
	struct cg_exec *x = fast_probe(e);
	if (x || !atomic_load_explicit(&model_xl.overflow, memory_order_relaxed))
		return x;
	pthread_mutex_lock(&model_gx_lock);
	x = cg_hidx_find(&model_execs, e);
	pthread_mutex_unlock(&model_gx_lock);
	return x;
}

uint64_t model_exec_id_fast(CUgraphExec e)
{
	struct cg_exec *x = model_exec_fast(e);
	return x ? X_GET(x, id) : 0;
}

/* A launch of x runs free nodes of allocations other graphs made: those
 * allocations are freed (their executables' outstanding counts drop). */
static void exec_foreign_frees(struct cg_exec *x)
{
	CUdeviceptr d[16];
	int n = 0;
	pthread_mutex_lock(&model_gx_lock);
	for (int i = 0; i < x->n_mem && n < 16; i++)
		if (x->mem[i].is_free && !model_mnode_has(x->mem, x->n_mem, x->mem[i].dptr, 0))
			d[n++] = x->mem[i].dptr;
	pthread_mutex_unlock(&model_gx_lock);
	for (int i = 0; i < n; i++)
		model_alloc_freed(d[i]);
}

/* A locked add: launches of one executable from several threads are
 * counted exactly (integration test edge: 4 threads x 1,000 launches). */
CG_HOT long long model_exec_launched(struct cg_exec *x, int *unfreed_before, int *autofree)
{
	long long n = atomic_fetch_add_explicit(&x->launches, 1, memory_order_relaxed) + 1;
	int unfreed_nodes = X_GET(x, unfreed_nodes);
	*autofree = (X_GET(x, flags) & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH) != 0;
	*unfreed_before = n > 1 ? atomic_load_explicit(&x->outstanding, memory_order_relaxed) : 0;
	if (unfreed_nodes)
		atomic_store_explicit(&x->outstanding, unfreed_nodes, memory_order_relaxed);
	if (CG_UNLIKELY(X_GET(x, foreign_frees)))
		exec_foreign_frees(x);
	return n;
}

void model_exec_launch_failed(struct cg_exec *x)
{
	atomic_fetch_sub_explicit(&x->launches, 1, memory_order_relaxed);
}

/* gx_lock held, under which alone the index and the table change: every
 * live exec is in the index, or in the table once the index overflowed,
 * so the index answers (two cache lines, the slot and the exec's; the
 * table's lookup touched its header, bucket and each entry of the chain). */
CG_HOT struct cg_exec *model_exec_find_locked(CUgraphExec e)
{
	struct cg_exec *x = fast_probe(e);
	if (x || !atomic_load_explicit(&model_xl.overflow, memory_order_relaxed))
		return x;
	return cg_hidx_find(&model_execs, e);
}

/* ---- the known-update memo (model.h) ---------------------------------- */

/* The summary a memo hit left x running (memo_cur) becomes x->sum; a
 * memo summary has no memory node, nor had the one it replaces. gx_lock. */
static CG_HOT void exec_memo_settle_locked(struct cg_exec *x)
{
	int c = atomic_exchange_explicit(&x->memo_cur, 0, memory_order_relaxed);
	struct cg_summary *s = c > 0 && c <= EXEC_MEMO_N ? x->memo_s[c - 1] : NULL;
	if (!s || s == x->sum)
		return;
	model_summary_free(x->sum);
	x->sum = model_summary_ref(s);
	x->mem = s->mem;
	x->n_mem = 0;
}

/* exec_memo_drop_locked's work, a memo to drop. */
static CG_HOT __attribute__((noinline)) void exec_memo_clear_locked(struct cg_exec *x)
{
	exec_memo_settle_locked(x);
	for (int i = 0; i < EXEC_MEMO_N; i++) {
		atomic_store_explicit(&x->memo_g[i], NULL, memory_order_relaxed);
		model_summary_free(x->memo_s[i]);
		x->memo_s[i] = NULL;
	}
	x->memo_next = 0;
	x->memo_cls = 0;
	x->memo_any = 0;
}

/* g, with summary s (borrowed), joins x's memo at epoch: a memo of
 * another epoch or class, or a summary of no class (then only as the
 * exec's own), starts again; nothing joins when the epoch moved since
 * the analysis. x->sum is s or of its class. gx_lock. */
static CG_HOT void exec_memo_add_locked(struct cg_exec *x, CUgraph g, const struct cg_summary *s, uint64_t epoch)
{
	uint64_t c = model_memo_class(s);
	int i;
	if (model_epoch_now() != epoch || !s || (!c && s != x->sum)) {
		exec_memo_drop_locked(x);
		return;
	}
	if (atomic_load_explicit(&x->memo_epoch, memory_order_relaxed) != epoch || !c || c != x->memo_cls) {
		exec_memo_drop_locked(x); /* every slot free: the first (a fresh graph each update) */
		i = 0;
		x->memo_next = 1;
	} else {
		for (i = 0; i < EXEC_MEMO_N && atomic_load_explicit(&x->memo_g[i], memory_order_relaxed) != g; i++)
			;
		if (i == EXEC_MEMO_N) { /* a new graph: the next slot, round robin */
			i = x->memo_next;
			x->memo_next = (i + 1) % EXEC_MEMO_N;
			atomic_store_explicit(&x->memo_g[i], NULL, memory_order_relaxed); /* no hit while it changes */
		}
		model_summary_free(x->memo_s[i]);
	}
	x->memo_s[i] = model_summary_ref((struct cg_summary *)s);
	x->memo_any = 1;
	x->memo_cls = c;
	atomic_store_explicit(&x->memo_epoch, epoch, memory_order_relaxed);
	atomic_store_explicit(&x->memo_g[i], g, memory_order_release);
}

void model_exec_view_fill(const struct cg_exec *x, struct cg_exec_view *out)
{
	out->h = x->h;
	out->graph = x->graph;
	out->flags = x->flags;
	out->site = x->site;
	out->launches = atomic_load(&x->launches);
	out->mem_nodes = x->n_mem;
	out->unfreed_nodes = x->unfreed_nodes;
	out->live = x->live;
}

/* x stops waiting for the full summary of x->graph (its partial view is
 * replaced, or x goes): the graph's count of such execs drops. */
static CG_HOT void exec_release_claim_locked(struct cg_exec *x)
{
	if (x->sum && x->sum->partial && x->sum_gen) {
		struct cg_graph *gr = model_graph_find_locked(x->graph);
		if (gr && gr->pending) {
			gr->pending--;
			atomic_fetch_sub_explicit(&model_xl.claims, 1, memory_order_relaxed);
		}
	}
	x->sum_gen = 0;
}

/* A program that synchronises its own calls orders a graph's destroy or
 * change after the instantiation that claimed it: the count it reads
 * here then includes that claim. */
int model_graph_claimed_ask(CUgraph g)
{
	struct cg_graph *gr;
	int pending;
	pthread_mutex_lock(&model_gx_lock);
	gr = model_graph_find_locked(g);
	pending = gr ? gr->pending : 0;
	pthread_mutex_unlock(&model_gx_lock);
	return pending;
}

CG_HOT void model_exec_set_summary(struct cg_exec *x, struct cg_summary *sum)
{
	exec_memo_drop_locked(x); /* runs other parameters now */
	if (sum != x->sum)
		exec_release_claim_locked(x); /* a partial view replaced (update, rewrite) */
	/* x->mem borrows the summary's memory nodes: summaries are immutable
	 * and shared by reference, so an exec costs no copy of its nodes. */
	model_summary_free(x->sum);
	x->sum = sum;
	x->mem = sum ? sum->mem : NULL;
	x->n_mem = sum && sum->mem ? (int)(sum->n_alloc + sum->n_free) : 0;
	int unfreed = 0, foreign = 0;
	x->devmask = 0;
	for (int i = 0; i < x->n_mem; i++) {
		if (!x->mem[i].is_free && x->mem[i].dev)
			x->devmask |= 1u << CG_MNODE_DEV(&x->mem[i]);
		/* a free node of an allocation made elsewhere / an allocation
		 * with no free node in this graph */
		int other = model_mnode_has(x->mem, x->n_mem, x->mem[i].dptr, !x->mem[i].is_free);
		if (x->mem[i].is_free)
			foreign += !other;
		else
			unfreed += !other;
	}
	X_SET(x, unfreed_nodes, unfreed);
	X_SET(x, foreign_frees, foreign);
}

/* Kernel nodes of g: from a full summary's types, else one capture-safe
 * query per node (at instantiation only, which costs far more). */
static CG_COLD int exec_kernel_count(CUgraph g, const struct cg_summary *sum)
{
	CUgraphNode *nodes;
	CUgraphNodeType t;
	size_t n = 0, i;
	int k = 0;
	if (sum && !sum->partial && sum->types) {
		for (i = 0; i < sum->n_nodes; i++)
			k += sum->types[i] == CU_GRAPH_NODE_TYPE_KERNEL;
		return k;
	}
	if (!g || !drv_cuGraphGetNodes || !drv_cuGraphNodeGetType || drv_cuGraphGetNodes(g, NULL, &n) != CUDA_SUCCESS ||
	    !n || !(nodes = calloc(n, sizeof *nodes)))
		return 0;
	if (drv_cuGraphGetNodes(g, nodes, &n) == CUDA_SUCCESS)
		for (i = 0; i < n; i++)
			k += drv_cuGraphNodeGetType(nodes[i], &t) == CUDA_SUCCESS && t == CU_GRAPH_NODE_TYPE_KERNEL;
	free(nodes);
	return k;
}

/* model_exec_new refused (rare, out of its line): no memory for x (NULL),
 * or the table full (x: never live, back to the free list). Called with
 * gx_lock held; releases it and drops sum. */
static CG_COLD int exec_new_refused(struct cg_exec *x, struct cg_summary *sum, CUgraph g, uint64_t capture,
				    uint32_t cap_site, int *nccl)
{
	if (nccl) /* the graph's, as model_nccl_exec_from of an exec not there */
		*nccl = model_nccl_exec_from_locked(NULL, g, capture, cap_site);
	if (x) {
		x->next_free = model_xl.free_list;
		model_xl.free_list = x;
	}
	pthread_mutex_unlock(&model_gx_lock);
	model_summary_free(sum);
	if (!x)
		cg_degrade("exec table");
	return 0;
}

/* A new exec struct, zeroed, on 64-byte lines of its own (model-int.h):
 * never freed (launches read reused ones lock-free). */
static CG_COLD struct cg_exec *exec_alloc(void)
{
	void *p = NULL;
	if (posix_memalign(&p, 64, sizeof(struct cg_exec)))
		return NULL;
	return memset(p, 0, sizeof(struct cg_exec));
}

CG_HOT int model_exec_new(CUgraphExec e, CUgraph g, uint64_t flags, uint32_t site, struct cg_summary *sum, int repeat,
			  int kernels, uint64_t capture, uint32_t cap_site, int *nccl, int lg_pending)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	int dev = cg_current_device(); /* the exec belongs to the instantiating context */
	if (CG_UNLIKELY(kernels < 0))
		kernels = exec_kernel_count(g, sum);
	/* The driver's own id (CUDA 13.1+): a query of the handle the driver
	 * just gave, alive for sure. Not at a record's first need: a record
	 * may name an exec the driver destroyed meanwhile (another thread's
	 * cuGraphExecDestroy after the lookup; a context gone, cudaDeviceReset
	 * having no hook, before the exit summary's CGS011), and a query of a
	 * dead handle reads freed driver memory (test-model). */
	unsigned cuda_id = 0;
	if (!drv_cuGraphExecGetId || drv_cuGraphExecGetId(e, &cuda_id) != CUDA_SUCCESS)
		cuda_id = 0;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (!x) {
		x = model_xl.free_list;
		if (CG_LIKELY(x))
			model_xl.free_list = x->next_free;
		else
			x = exec_alloc();
		if (CG_UNLIKELY(!x))
			return exec_new_refused(NULL, sum, g, capture, cap_site, nccl);
		/* a launch may still read the lock-free fields of a reused
		 * struct; its memo is empty (model_exec_destroy) */
		memset(&x->graph, 0, offsetof(struct cg_exec, memo_g) - offsetof(struct cg_exec, graph));
		X_SET(x, h, e);
		/* into the launch index now (not found there while not live),
		 * else the table; its failure alone reports one (cg_hidx_add):
		 * the report's thread-local flag is not read on every add */
		if (CG_UNLIKELY(fast_insert(x)) && cg_hidx_add(&model_execs, x) && model_table_added(&model_exec_table))
			return exec_new_refused(x, sum, g, capture, cap_site, nccl);
		exec_list_add(x);
		model_tot.execs++;
		atomic_fetch_add_explicit(&model_xl.live_n, 1, memory_order_relaxed);
	}
	exec_release_claim_locked(x); /* a reused handle: before x->graph changes */
	x->graph = g;
	X_SET(x, id, ++model_xl.ids);
	x->cuda_id = cuda_id;
	x->inst_dev = dev;
	X_SET(x, flags, flags);
	x->site = site;
	x->kernels = kernels;
	atomic_store(&x->real, e);
	atomic_store(&x->launches, 0);
	atomic_store(&x->outstanding, 0);
	model_exec_set_summary(x, sum);
	X_SET(x, live, 1);
	x->sum_gen = 0;
	gr = model_graph_find_locked(g);
	x->churn = gr ? gr->churn : 0;
	repeat = repeat && gr && gr->repeat;
	X_SET(x, repeat, repeat);
	x->graph_id = gr ? gr->id : 0;
	if (gr) {
		gr->live_exec = e;
		if (sum && sum->partial) {
			x->sum_gen = gr->gen;
			gr->pending++;
			atomic_fetch_add_explicit(&model_xl.claims, 1, memory_order_release);
		}
	}
	if (nccl) /* model_nccl_exec_from_locked, of the graph found above */
		*nccl = model_nccl_exec_of_graph_locked(x, gr, capture, cap_site);
	if (CG_UNLIKELY(x->lg_pending != lg_pending)) /* set (a reused handle: as it was) */
		atomic_fetch_add_explicit(&model_xl.lg_n, lg_pending ? 1 : -1, memory_order_relaxed);
	x->lg_pending = lg_pending;
	x->lg_graph = g;
	x->lg_capture = capture;
	x->lg_csite = cap_site;
	model_epoch_bump(); /* g has a live exec now (CGS002) */
	pthread_mutex_unlock(&model_gx_lock);
	if (x->n_mem)
		model_alloc_set_exec(e, x->mem, x->n_mem);
	return repeat;
}

int model_exec_view(CUgraphExec e, struct cg_exec_view *out)
{
	struct cg_exec *x;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x)
		model_exec_view_fill(x, out);
	pthread_mutex_unlock(&model_gx_lock);
	return x != NULL;
}

int model_exec_mnodes(CUgraphExec e, struct cg_mnode **out)
{
	struct cg_exec *x;
	int n = 0;
	*out = NULL;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x && x->n_mem) {
		*out = malloc((size_t)x->n_mem * sizeof **out);
		if (*out) {
			memcpy(*out, x->mem, (size_t)x->n_mem * sizeof **out);
			n = x->n_mem;
		}
	}
	pthread_mutex_unlock(&model_gx_lock);
	return n;
}

struct cg_summary *model_exec_summary(CUgraphExec e)
{
	struct cg_exec *x;
	struct cg_summary *s = NULL;
	CUgraph g = NULL;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x)
		exec_memo_settle_locked(x);
	if (x && x->sum && x->sum->partial)
		g = x->graph;
	else if (x)
		s = model_summary_ref(x->sum);
	pthread_mutex_unlock(&model_gx_lock);
	if (!g)
		return s;
	/* First need of the full summary: its graph is still as instantiated
	 * (changes and destruction through hooks settle it first). */
	model_graph_settle(g);
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x && x->sum && !x->sum->partial)
		s = model_summary_ref(x->sum);
	pthread_mutex_unlock(&model_gx_lock);
	return s;
}

CG_HOT void model_update_summaries(CUgraphExec e, CUgraph g, struct cg_summary **old, struct cg_summary **nu,
				   struct cg_update_seen *seen)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	int have_old = 0, have_nu = 0;
	*old = *nu = NULL;
	pthread_mutex_lock(&model_gx_lock);
	x = seen->x = model_exec_find_locked(e);
	if (x)
		exec_memo_settle_locked(x);
	if (!x || !x->sum || !x->sum->partial) {
		*old = x ? model_summary_ref(x->sum) : NULL;
		have_old = 1;
	}
	gr = model_graph_find_locked(g);
	model_nccl_of_graph_locked(gr, seen);
	if (gr && model_graph_sum_current_locked(gr)) {
		*nu = model_summary_ref(gr->sum);
		have_nu = 1;
	}
	pthread_mutex_unlock(&model_gx_lock);
	/* Otherwise as the two calls would (the exec's first, which may settle
	 * and walk the graph it was instantiated from). */
	if (!have_old)
		*old = model_exec_summary(e);
	if (!have_nu)
		*nu = model_graph_summary(g);
}

void model_exec_updated(CUgraphExec e, CUgraph g, struct cg_summary *sum)
{
	struct cg_exec *x;
	struct cg_summary *old = NULL; /* keeps the old memory nodes alive for the release */
	struct cg_mnode *old_mem = NULL;
	int old_n = 0;
	pthread_mutex_lock(&model_gx_lock);
	model_tot.updates++;
	x = model_exec_find_locked(e);
	if (x) {
		X_SET(x, repeat, 0); /* runs another graph's parameters now */
		if (x->n_mem && x->sum) {
			old = model_summary_ref(x->sum);
			old_mem = x->mem;
			old_n = x->n_mem;
		}
		/* The exec now runs the new graph's parameters, memory nodes
		 * included (measured: it adopts the new allocations). */
		model_exec_set_summary(x, sum);
		sum = NULL;
	}
	pthread_mutex_unlock(&model_gx_lock);
	model_summary_free(sum);
	if (old) {
		model_alloc_release_exec(e, old_mem, old_n, 0);
		model_summary_free(old);
	}
	if (x && x->n_mem)
		model_alloc_set_exec(e, x->mem, x->n_mem);
	(void)g;
}

/* Updates counted without gx_lock (model_exec_updated_same). */
static _Atomic long long updates_same;

long long model_exec_updates_same(void)
{
	return atomic_load_explicit(&updates_same, memory_order_relaxed);
}

void model_exec_updated_same(CUgraphExec e)
{
	struct cg_exec *x = model_exec_fast(e);
	atomic_fetch_add_explicit(&updates_same, 1, memory_order_relaxed);
	if (x)
		X_SET(x, repeat, 0);
}

static _Atomic long long updates_known;

long long model_exec_updates_known(void)
{
	return atomic_load_explicit(&updates_known, memory_order_relaxed);
}

/* Counts, and the summary e runs from now on: the update that made the
 * memo went through model_exec_updated_same or _alike, which cleared the
 * exec's repeat flag, and nothing sets it again without a new summary,
 * which forgets the memo. */
CG_HOT void model_exec_updated_known(struct cg_exec *x, CUgraphExec e, int slot)
{
	/* x is never freed; reused for another exec only if the program
	 * destroyed e during its own update */
	if (X_GET(x, h) == e && X_GET(x, live) && atomic_load_explicit(&x->memo_cur, memory_order_relaxed) != slot)
		atomic_store_explicit(&x->memo_cur, slot, memory_order_relaxed);
	atomic_fetch_add_explicit(&updates_known, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&updates_same, 1, memory_order_relaxed);
}

void model_exec_update_failed(CUgraphExec e)
{
	struct cg_exec *x;
	pthread_mutex_lock(&model_gx_lock);
	model_tot.updates++;
	model_tot.update_failures++;
	x = model_exec_find_locked(e);
	if (x)
		exec_memo_drop_locked(x);
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT uint64_t model_epoch_now(void)
{
	return atomic_load_explicit(&model_epoch, memory_order_acquire);
}

void model_update_memo_set(CUgraphExec e, CUgraph g, const struct cg_summary *sum, uint64_t epoch)
{
	struct cg_exec *x;
	if (!g || model_epoch_now() != epoch)
		return;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x) {
		exec_memo_settle_locked(x);
		exec_memo_add_locked(x, g, sum, epoch);
	}
	pthread_mutex_unlock(&model_gx_lock);
}

CG_HOT void model_exec_updated_alike(CUgraphExec e, CUgraph g, struct cg_summary *sum, uint64_t epoch,
				     const struct cg_update_seen *seen)
{
	struct cg_exec *x = seen->x;
	pthread_mutex_lock(&model_gx_lock);
	/* model.h: g's NCCL work in this round trip; the analysis's exec and
	 * NCCL work stand while the epoch has not moved since it began (an
	 * exec made or destroyed, a graph changed or destroyed move it, under
	 * gx_lock); x is never freed (execs.c), its handle checked all the same */
	if (x && model_epoch_now() == epoch && X_GET(x, h) == e && X_GET(x, live)) {
		x->nccl = seen->nccl;
		x->capture = seen->capture;
		x->cap_site = seen->site;
	} else {
		x = model_exec_find_locked(e);
		model_nccl_exec_from_locked(x, g, 0, 0);
	}
	if (x)
		exec_memo_settle_locked(x);
	if (x && model_update_alike(x->sum, sum)) {
		/* model_exec_updated without a memo drop: nothing but the
		 * summary changes (no memory node on either side) */
		model_tot.updates++;
		X_SET(x, repeat, 0);
		model_summary_free(x->sum);
		x->sum = sum;
		x->mem = sum->mem;
		x->n_mem = 0;
		exec_memo_add_locked(x, g, sum, epoch);
		sum = NULL;
	}
	pthread_mutex_unlock(&model_gx_lock);
	if (sum) /* the exec changed meanwhile, or is unknown: the general way */
		model_exec_updated(e, g, sum);
}

CG_HOT int model_update_memo_hit(CUgraphExec e, CUgraph g, struct cg_exec **xp)
{
	struct cg_exec *x = *xp = model_exec_fast(e);
	CUgraphExec r;
	if (!x || !g)
		return 0;
	r = atomic_load_explicit(&x->real, memory_order_relaxed);
	if (r && r != e) /* rewritten: the policy's path */
		return 0;
	for (int i = 0; i < EXEC_MEMO_N; i++)
		if (atomic_load_explicit(&x->memo_g[i], memory_order_acquire) == g)
			return atomic_load_explicit(&x->memo_epoch, memory_order_relaxed) == model_epoch_now() ? i + 1
													       : 0;
	return 0;
}

void model_exec_rewritten(CUgraphExec app, CUgraph g, struct cg_summary *sum)
{
	struct cg_exec *x;
	struct cg_graph *gr;
	pthread_mutex_lock(&model_gx_lock);
	model_tot.rewrites++;
	x = model_exec_find_locked(app);
	if (x) {
		model_exec_set_summary(x, sum); /* before x->graph changes: releases a claim on the old one */
		x->graph = g;
		X_SET(x, repeat, 0);
		sum = NULL;
		atomic_store(&x->outstanding, 0);
		gr = model_graph_find_locked(g);
		if (gr)
			gr->live_exec = app;
	}
	pthread_mutex_unlock(&model_gx_lock);
	model_summary_free(sum);
}

CG_HOT int model_exec_destroy(CUgraphExec e, struct model_leak **leaks, int *repeat_out, struct ev_launches *lr,
			      int *lr_quiet, int *lg_pending)
{
	int n_leaks = 0;
	struct cg_exec *x;
	struct cg_graph *gr;
	struct cg_mnode *mem = NULL;
	struct cg_summary *sum = NULL;
	int n = 0, outstanding = 0;
	long long launches = 0;
	CUgraph g = NULL;
	int repeat = 0;
	uint64_t xid = 0;
	int lgp = 0;
	pthread_mutex_lock(&model_gx_lock);
	x = model_exec_find_locked(e);
	if (x) {
		xid = x->id;
		lgp = x->lg_pending;
		if (lgp) {
			x->lg_pending = 0;
			atomic_fetch_sub_explicit(&model_xl.lg_n, 1, memory_order_relaxed);
		}
		if (CG_UNLIKELY(!fast_remove(x)))
			cg_hidx_del(&model_execs, x);
		exec_list_del(x);
		atomic_fetch_sub_explicit(&model_xl.live_n, 1, memory_order_relaxed);
		X_SET(x, live, 0);
		exec_memo_drop_locked(x);
		model_epoch_bump(); /* its graph has no live exec now */
		repeat = X_GET(x, repeat);
		launches = atomic_load(&x->launches);
		outstanding = atomic_load(&x->outstanding);
		g = x->graph;
		gr = model_graph_find_locked(x->graph);
		if (gr && gr->live_exec == e)
			gr->live_exec = NULL;
		exec_release_claim_locked(x);
		sum = x->sum; /* keeps mem alive until the leak records are out */
		mem = x->mem;
		n = x->n_mem;
		x->mem = NULL;
		x->n_mem = 0;
		x->sum = NULL;
		model_xl.launches_destroyed += launches;
		model_churn_launched(x->churn, launches); /* an atomic add: no lock inside gx_lock */
		model_xl.kernels_destroyed += launches * x->kernels;
		x->next_free = model_xl.free_list;
		model_xl.free_list = x;
	}
	pthread_mutex_unlock(&model_gx_lock);
	*leaks = NULL;
	lr->count = 0;
	if (repeat_out)
		*repeat_out = repeat;
	if (lg_pending)
		*lg_pending = lgp;
	if (!x)
		return 0;
	/* an exec never launched has no count to report (count 0) */
	*lr = (struct ev_launches){
	    .exec = (uintptr_t)e, .graph = (uintptr_t)g, .has_graph = 1, .count = launches, .reason = "destroy"};
	*lr_quiet = repeat && !outstanding;
	if (CG_UNLIKELY(outstanding && launches))
		model_alloc_leaks(e, xid, mem, n, leaks, &n_leaks);
	model_alloc_release_exec(e, mem, n, outstanding && launches);
	model_summary_free(sum);
	return n_leaks;
}

/* At exit: a "launches" record per live exec, the leaks of those whose last
 * launch left graph allocations, and the launch count of every exec the
 * process made (*launches) and how many are still alive (*n_live). */
long long model_exec_kernels_run(void)
{
	struct cg_exec *x, *tmp;
	long long k;
	pthread_mutex_lock(&model_gx_lock);
	k = model_xl.kernels_destroyed;
	MODEL_EXECS_EACH(x, tmp)
	k += atomic_load(&x->launches) * x->kernels;
	pthread_mutex_unlock(&model_gx_lock);
	return k;
}

void model_exec_churn_live(long long *live, int max)
{
	struct cg_exec *x, *tmp;
	pthread_mutex_lock(&model_gx_lock);
	MODEL_EXECS_EACH(x, tmp)
	if (x->churn && (int)x->churn <= max)
		live[x->churn - 1] += atomic_load(&x->launches);
	pthread_mutex_unlock(&model_gx_lock);
}

/* An exec whose last launch left graph allocations, as the exit's walk
 * found it: a reference on its summary keeps its memory nodes (x->mem
 * borrows them) for the leaks worked out after the walk. */
struct exit_leak {
	CUgraphExec h;
	uint64_t xid;
	struct cg_summary *sum;
	const struct cg_mnode *mem;
	int n;
};

int model_exec_exit(long long *launches, long long *n_live, struct model_leak **leaks, struct ev_launches **lr,
		    int *n_lr)
{
	int n_leaks = 0, k = 0, nc = 0;
	*leaks = NULL;
	struct cg_exec *x, *tmp;
	struct ev_launches *o;
	struct exit_leak *c;
	long long total = model_xl.launches_destroyed, live = 0, n_all;

	/* One walk, all under gx_lock: another thread may still destroy an
	 * exec, and a walk that let go of the lock inside (model_alloc_leaks
	 * takes mem_lock, never held with gx_lock) could find the exec it
	 * goes to next off the list, its link cleared (the walk ended there)
	 * or the struct reused (the walk read another exec's place). */
	pthread_mutex_lock(&model_gx_lock);
	n_all = atomic_load_explicit(&model_xl.live_n, memory_order_relaxed);
	o = n_all ? calloc((size_t)n_all, sizeof *o) : NULL;
	c = n_all ? calloc((size_t)n_all, sizeof *c) : NULL;
	MODEL_EXECS_EACH(x, tmp)
	{
		long long n = atomic_load(&x->launches);
		total += n;
		live++;
		if (o)
			o[k++] = (struct ev_launches){.exec = (uintptr_t)x->h,
						      .graph = (uintptr_t)x->graph,
						      .has_graph = 1,
						      .count = n,
						      .reason = "exit"};
		if (c && atomic_load(&x->outstanding) > 0 && n > 0 && x->n_mem && x->sum)
			c[nc++] = (struct exit_leak){x->h, x->id, model_summary_ref(x->sum), x->mem, x->n_mem};
	}
	pthread_mutex_unlock(&model_gx_lock);
	*lr = o;
	*n_lr = k;
	for (int i = 0; i < nc; i++) {
		model_alloc_leaks(c[i].h, c[i].xid, c[i].mem, c[i].n, leaks, &n_leaks);
		model_summary_free(c[i].sum);
	}
	free(c);
	*launches = total;
	*n_live = live;
	return n_leaks;
}

CG_HOT long long model_execs_live(void)
{
	return atomic_load_explicit(&model_xl.live_n, memory_order_relaxed);
}
