/* shim/policy.c -- re-instantiation behind the application's exec handle. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "call.h"
#include "cgshim/record.h"
#include "config.h"
#include "decide.h"
#include "hot.h"
#include "locks.h"
#include "policy.h"
#include "table.h"

_Atomic int cg_policy_active CG_HOT_DATA;
_Atomic int cg_policy_garbage CG_HOT_DATA; /* retired replacements wait in garbage_q (policy.h) */
_Atomic int cg_policy_pending;		   /* proxies with allocations to free at their next launch */

/* A replacement executable kept for reuse: a later update whose graph has
 * the same topology updates it (an update costs a fraction of an
 * instantiation) instead of instantiating once more. Graphs with memory
 * nodes are never cached (one executable per such graph; updates of them
 * move allocations). */
#define CG_REPL_MAX 4
struct repl {
	CUgraphExec exec;
	CUgraph src;		/* the shim's clone it was instantiated from: its nodes map per-node calls */
	int src_dead;		/* the shim destroys src with exec (always so for its clones) */
	struct cg_summary *sum; /* topology of src (reference) */
	long long last_use;
};

struct proxy {
	CUgraphExec app; /* the real exec behind it: model_exec_real_of (the one map) */
	CUgraph graph;
	/* The graph `real` was instantiated from, when it is not cached: the
	 * shim's clone (held_dead set: destroyed with `real`), or, for a graph
	 * with memory nodes that the driver will not clone, the application's
	 * own graph; its nodes are what per-node calls are mapped to, so when
	 * the application destroys it the shim keeps it alive (held_dead) until
	 * `real` is replaced or destroyed. */
	CUgraph held;
	int held_dead;
	uint32_t n_nodes;
	CUgraphNode *orig_nodes; /* nodes of the graph the app instantiated */
	/* Nodes of the graph behind `real`, in the order of orig_nodes, built
	 * at the first per-node call after a rewrite (most rewritten handles
	 * never see one): from map_sum (a reference), or the identity when
	 * `real` is the application's own executable again. */
	CUgraphNode *new_nodes;
	struct cg_summary *map_sum;
	struct cg_summary *orig_sum; /* topology of the app's own executable */
	struct repl cache[CG_REPL_MAX];
	int n_cache;
	/* Topologies this handle was rewritten to: a replacement is cached
	 * only when its topology comes back (a loop alternating shapes), so a
	 * stream of ever-new shapes keeps no executables alive. */
	uint64_t seen[16];
	int n_seen;
	long long rewrites, reuses, launches_at_last, clock;
	int warned;
	/* AutoFreeOnLaunch: allocations of the replaced executable's last
	 * launch, freed (stream-ordered) before the next launch of the handle,
	 * as the replaced executable's own next launch would have done. */
	CUdeviceptr *pending;
	int n_pending;
	UT_hash_handle hh;
};

static struct proxy *proxies;
/* A failed add leaves the handle unrewritten (the update keeps the
 * driver's answer). */
static struct cg_table proxy_table = CG_TABLE_INIT("policy table");

CUgraphExec cg_policy_exec_slow(CUgraphExec app)
{
	return model_exec_real_of(app);
}

/* Builds new_nodes: node i of the graph the application instantiated maps
 * to node i of the graph behind `real` where the types agree. Under
 * proxy_lock (write). */
static void map_build(struct proxy *p)
{
	const struct cg_summary *to = p->map_sum;
	p->new_nodes = calloc(p->n_nodes + 1, sizeof *p->new_nodes);
	if (!p->new_nodes)
		return;
	for (uint32_t i = 0; i < p->n_nodes; i++) {
		if (model_exec_real_of(p->app) == p->app)
			p->new_nodes[i] = p->orig_nodes[i];
		else if (to && p->orig_sum && i < to->n_nodes && p->orig_sum->types[i] == to->types[i])
			p->new_nodes[i] = to->nodes[i];
	}
}

CUgraphNode cg_policy_node(CUgraphExec app, CUgraphNode node, int *found)
{
	struct proxy *p;
	CUgraphNode r = node;
	*found = 1;
	/* NULL is never a node of the map (the driver answers it itself) */
	if (!node || !atomic_load_explicit(&cg_policy_active, memory_order_relaxed))
		return node;
	pthread_rwlock_rdlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p && p->orig_nodes && !p->new_nodes) {
		/* the first per-node call since a rewrite builds the map */
		pthread_rwlock_unlock(&proxy_lock);
		pthread_rwlock_wrlock(&proxy_lock);
		HASH_FIND_PTR(proxies, &app, p);
		if (p && p->orig_nodes && !p->new_nodes)
			map_build(p);
	}
	if (p && p->orig_nodes) {
		*found = 0;
		for (uint32_t i = 0; p->new_nodes && i < p->n_nodes; i++)
			if (p->orig_nodes[i] == node) {
				r = p->new_nodes[i];
				*found = r != NULL;
				break;
			}
	}
	pthread_rwlock_unlock(&proxy_lock);
	return r;
}

static int same_topology(const struct cg_summary *a, const struct cg_summary *b)
{
	return a && b && a->n_nodes == b->n_nodes && !memcmp(a->types, b->types, a->n_nodes) &&
	       !memcmp(a->ndeps, b->ndeps, a->n_nodes * sizeof *a->ndeps);
}

/* FNV-style over the node types (bytes) and dependency counts (16-bit), a
 * word at a time: only a hint for topology_recurs (same_topology decides). */
static uint64_t hash_words(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t w;
	for (; n >= 8; n -= 8, b += 8) {
		memcpy(&w, b, 8);
		h = (h ^ w) * 1099511628211ull;
	}
	w = 0;
	if (n)
		memcpy(&w, b, n);
	return (h ^ w) * 1099511628211ull;
}

static uint64_t topology_hash(const struct cg_summary *s)
{
	uint64_t h = 1469598103934665603ull ^ s->n_nodes;
	h = hash_words(h, s->types, s->n_nodes);
	return hash_words(h, s->ndeps, s->n_nodes * sizeof *s->ndeps);
}

/* Records h; returns whether it was seen before. Under proxy_lock (write). */
static int topology_recurs(struct proxy *p, uint64_t h)
{
	int n = p->n_seen < 16 ? p->n_seen : 16;
	for (int i = 0; i < n; i++)
		if (p->seen[i] == h)
			return 1;
	p->seen[p->n_seen++ % 16] = h;
	return 0;
}

static int cache_index(const struct proxy *p, CUgraphExec e)
{
	for (int i = 0; i < p->n_cache; i++)
		if (p->cache[i].exec == e)
			return i;
	return -1;
}

/* Per-node calls map to the graph behind `real` from now on: to's nodes
 * (NULL when `real` is the application's own executable: the identity).
 * The map itself is built on first use (map_build). Under proxy_lock
 * (write), after `real` is set; the old reference goes to *drop, released
 * by the caller after the lock. */
static void map_set(struct proxy *p, struct cg_summary *to, struct cg_summary **drop)
{
	free(p->new_nodes);
	p->new_nodes = NULL;
	*drop = p->map_sum;
	p->map_sum = model_summary_ref(to);
}

/* Things to destroy once proxy_lock is released. */
struct doomed {
	CUgraphExec exec[2];
	CUgraph graph[2];
	int n_exec, n_graph;
};

static void doomed_run(struct doomed *d)
{
	for (int i = 0; i < d->n_exec; i++)
		real_cuGraphExecDestroy(d->exec[i]);
	for (int i = 0; i < d->n_graph; i++)
		drv_cuGraphDestroy(d->graph[i]);
}

/* Retired replacements are destroyed at the next graph lifecycle call of
 * any thread (capture begin, graph create, instantiate, exec destroy),
 * not inside the update that retired them: a rewrite costs the
 * instantiation it stands for, and the destruction is paid where the
 * application does graph work anyway. */
#define GARBAGE_MAX 64
static struct doomed garbage_q[GARBAGE_MAX / 2];
static int garbage_len;

static void garbage_add(struct doomed *d)
{
	if (!d->n_exec && !d->n_graph)
		return;
	pthread_mutex_lock(&garbage_lock);
	if (garbage_len < GARBAGE_MAX / 2) {
		garbage_q[garbage_len++] = *d;
		atomic_store(&cg_policy_garbage, 1);
		d = NULL;
	}
	pthread_mutex_unlock(&garbage_lock);
	if (d) /* queue full: destroy now */
		doomed_run(d);
}

CG_COLD void cg_policy_collect_slow(void)
{
	struct doomed q[GARBAGE_MAX / 2];
	int n;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	pthread_mutex_lock(&garbage_lock);
	n = garbage_len;
	memcpy(q, garbage_q, (size_t)n * sizeof q[0]);
	garbage_len = 0;
	atomic_store(&cg_policy_garbage, 0);
	pthread_mutex_unlock(&garbage_lock);
	cg_tls.in_shim++;
	/* relaxed, as PyTorch's reset(): never invalidates another thread's capture */
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	for (int i = 0; i < n; i++)
		doomed_run(&q[i]);
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	cg_tls.in_shim--;
}

/* The executable behind the handle (model_exec_real_of) stops standing
 * behind it: keep it when it is the application's own or a cached one, else
 * it goes (with its source graph if the application destroyed that). Under
 * proxy_lock (write). */
static void retire_current(struct proxy *p, struct doomed *d)
{
	CUgraphExec real = model_exec_real_of(p->app);
	if (real && real != p->app && cache_index(p, real) < 0) {
		d->exec[d->n_exec++] = real;
		if (p->held_dead && p->held)
			d->graph[d->n_graph++] = p->held;
		p->held = NULL;
		p->held_dead = 0;
	}
}

/* Thrashing: once per handle, when it has been rewritten at least 8 times
 * and on at least every other launch, the update fails nearly every step.
 * Checked under proxy_lock (write) where the rewrite is counted; the
 * warning goes out after the lock (thrash_warn). */
struct thrash {
	long long rewrites, reuses, launches;
};

static int thrash_check_locked(struct proxy *p, long long launches, struct thrash *t)
{
	if (p->warned || p->rewrites < 8 || launches <= 0 || p->rewrites * 2 < launches)
		return 0;
	p->warned = 1;
	t->rewrites = p->rewrites;
	t->reuses = p->reuses;
	t->launches = launches;
	return 1;
}

/* A rewrite record's reason, and for a predicted one what differs (built
 * by the shim from names and numbers: a word); the thrashing warning when
 * one is owed. */
static void facts_reason(struct cg_rewrite_facts *o, const char *reason, const char *why)
{
	o->rec.reason = reason;
	o->rec.why = why && *why ? why : NULL;
}

static void facts_thrash(struct cg_rewrite_facts *o, int warn, const struct thrash *t)
{
	o->thrash = warn;
	o->rewrites = t->rewrites;
	o->launches = t->launches;
	o->reuses = t->reuses;
}

/* Reuse: a cached replacement, or the application's own executable, whose
 * topology is that of g is updated from g and stands behind the handle
 * from now on. Returns 1 when done (nu consumed). */
static int policy_reuse(CUgraphExec app, CUgraph g, struct cg_summary *nu, const char *reason, int rc_update,
			const char *why, uint64_t t0, long long launches, struct cg_rewrite_facts *o)
{
	struct proxy *p;
	CUgraphExec cand = NULL, prev;
	CUgraphExecUpdateResultInfo info;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	struct doomed d = {{0}, {0}, 0, 0};
	struct cg_summary *drop = NULL;
	struct thrash th = {0, 0, 0};
	uint64_t t_end;
	CUresult rc;
	int idx = -2, warn;
	long long rewrites = 0;

	if (!real_cuGraphExecUpdate_v2 || !nu || nu->n_alloc + nu->n_free)
		return 0;
	pthread_rwlock_rdlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p) {
		CUgraphExec real = model_exec_real_of(app);
		if (real != app && same_topology(p->orig_sum, nu)) {
			cand = app;
			idx = -1;
		} else {
			for (int i = 0; i < p->n_cache && !cand; i++)
				if (p->cache[i].exec != real && same_topology(p->cache[i].sum, nu)) {
					cand = p->cache[i].exec;
					idx = i;
				}
		}
	}
	pthread_rwlock_unlock(&proxy_lock);
	if (!cand)
		return 0;
	memset(&info, 0, sizeof info);
	cg_tls.in_shim++;
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	rc = real_cuGraphExecUpdate_v2(cand, g, &info);
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	cg_tls.in_shim--;
	if (rc != CUDA_SUCCESS)
		return 0; /* the caller instantiates instead */

	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (!p || (idx >= 0 && (idx >= p->n_cache || p->cache[idx].exec != cand))) {
		pthread_rwlock_unlock(&proxy_lock);
		return 0;
	}
	prev = model_exec_real_of(app);
	retire_current(p, &d);
	model_exec_set_real(app, cand);
	p->graph = g;
	p->rewrites++;
	p->reuses++;
	p->clock++;
	if (idx >= 0) {
		p->cache[idx].last_use = p->clock;
		map_set(p, p->cache[idx].sum, &drop);
	} else {
		map_set(p, NULL, &drop);
	}
	rewrites = p->rewrites;
	warn = thrash_check_locked(p, launches, &th);
	pthread_rwlock_unlock(&proxy_lock);
	model_summary_free(drop);
	garbage_add(&d);
	model_exec_rewritten(app, g, nu);

	t_end = cg_now_ns(); /* the record's stamp and the end of its dur_ns */
	o->level = CG_L_INFO;
	o->rec = (struct ev_rewrite){.at = t_end,
				     .exec = (uintptr_t)app,
				     .old_real = (uintptr_t)prev,
				     .has_old_real = 1,
				     .new_real = (uintptr_t)cand,
				     .has_new_real = 1,
				     .graph = (uintptr_t)g,
				     .rc_update = rc_update,
				     .has_rc_update = 1,
				     .reused = 1,
				     .has_reused = 1,
				     .rewrites = rewrites,
				     .has_rewrites = 1,
				     .dur_ns = t_end - t0,
				     .has_dur_ns = 1};
	facts_reason(o, reason, why);
	facts_thrash(o, warn, &th);
	return 1;
}

int cg_policy_rewritten_before(CUgraphExec app)
{
	struct proxy *p;
	if (!atomic_load_explicit(&cg_policy_active, memory_order_relaxed))
		return 0;
	pthread_rwlock_rdlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	pthread_rwlock_unlock(&proxy_lock);
	return p != NULL;
}

/* Whether g may hold memory nodes: those the shim tracked in it, or those
 * the driver's answers gave its summary; unknown (no summary) counts. */
static int graph_may_have_mem(CUgraph g, const struct cg_summary *s)
{
	int origin, mem_nodes = 0;
	uint64_t capture;
	uint32_t site;
	if (!s || s->n_alloc + s->n_free)
		return 1;
	return model_graph_info(g, &origin, &capture, &site, &mem_nodes) && mem_nodes > 0;
}

int cg_policy_reinstantiate(CUgraphExec app, CUgraph g, struct cg_summary *nu, const char *reason, int rc_update,
			    const char *why, struct cg_rewrite_facts *o)
{
	struct cg_summary *old_sum, *new_sum;
	struct cg_exec_view v, other;
	struct proxy *p;
	CUgraphExec fresh = NULL, prev_real;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	uint64_t t0 = cg_now_ns();
	CUresult rc;
	cuuint64_t flags;
	struct cg_mnode *mem = NULL;
	int n_mem = 0, n_carried = 0;
	long long rewrites = 0;
	uint64_t t_inst, t_end;
	CUdeviceptr carried[8];
	struct doomed doom = {{0}, {0}, 0, 0};
	struct cg_summary *drop = NULL, *map_sum;
	struct thrash th = {0, 0, 0};
	int warn = 0;
	CUgraph src = NULL; /* the shim's clone of g, the replacement's source */
	static _Atomic int warned_uncloned;

	if (!cg_decide(CG_ASK_UPDATE, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 1).rewrite ||
	    !real_cuGraphInstantiateWithFlags)
		return 0;
	if (!model_exec_view(app, &v))
		return 0;
	/* Device code may hold the raw handle of a device-launch exec. */
	if (v.flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH)
		return 0;
	flags = v.flags & ~(cuuint64_t)CUDA_GRAPH_INSTANTIATE_FLAG_UPLOAD;
	prev_real = cg_policy_exec(app);
	new_sum = nu ? model_summary_ref(nu) : model_graph_summary(g);
	/* A memory-node graph with its own live exec cannot be instantiated
	 * again: leave the driver's answer. Any other graph can (from a
	 * clone), and an update back to the original topology needs no
	 * instantiate at all: a live exec of its own is no reason to refuse
	 * what the driver would accept (issue 30). Without a summary the
	 * graph's memory nodes are unknown: the guard holds. */
	if (model_graph_live_exec(g, &other) && other.h != app && graph_may_have_mem(g, new_sum)) {
		model_summary_free(new_sum);
		return 0;
	}
	if (policy_reuse(app, g, new_sum, reason, rc_update, why, t0, v.launches, o))
		return 1;

	cg_tls.in_shim++;
	/* Relaxed so that the shim's own instantiate cannot invalidate an
	 * unrelated capture of another thread (PyTorch does the same). */
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	t_inst = cg_now_ns();
	/* The replacement is instantiated from the shim's own clone of g, so
	 * that g stays the application's alone: its destroy, a use after that,
	 * a second instantiation, a child node made of it all get the
	 * driver's own answers. A graph with memory nodes cannot be cloned
	 * (and allows one executable): it is instantiated itself, a limit
	 * the warning below and docs/design.md state. */
	if (!real_cuGraphClone || real_cuGraphClone(&src, g) != CUDA_SUCCESS)
		src = NULL;
	rc = real_cuGraphInstantiateWithFlags(&fresh, src ? src : g, flags);
	if (rc != CUDA_SUCCESS && src) {
		drv_cuGraphDestroy(src);
		src = NULL;
	}
	t_inst = cg_now_ns() - t_inst;
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	cg_tls.in_shim--;
	if (rc == CUDA_SUCCESS && !src && !atomic_exchange(&warned_uncloned, 1))
		cg_warn(
		    "exec 0x%llx re-instantiated from graph 0x%llx itself (a graph with memory nodes cannot be "
		    "cloned): while the shim holds that executable, the application's own instantiation of the "
		    "graph fails with 801 and its destroy of the graph is deferred (docs/design.md, re-instantiation)",
		    (unsigned long long)(uintptr_t)app, (unsigned long long)(uintptr_t)g);
	/* per-node calls map to the nodes of the graph the exec runs from */
	map_sum = src ? model_graph_summary(src) : model_summary_ref(new_sum);
	if (rc != CUDA_SUCCESS) {
		model_summary_free(map_sum);
		model_summary_free(new_sum);
		o->level = CG_L_WARN;
		o->rec = (struct ev_rewrite){.exec = (uintptr_t)app,
					     .graph = (uintptr_t)g,
					     .rc_instantiate = rc,
					     .has_rc_instantiate = 1,
					     .msg = "re-instantiation failed; the driver's update result is returned"};
		facts_reason(o, reason, why);
		return 0;
	}

	old_sum = model_exec_summary(app);
	/* Graph allocations the replaced executable's last launch left
	 * allocated (alloc nodes with no free node in its graph). */
	if (v.unfreed_nodes > 0 && v.launches > 0)
		n_mem = model_exec_mnodes(app, &mem);
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (!p) {
		p = calloc(1, sizeof *p);
		if (p) {
			p->app = app;
			HASH_ADD_PTR(proxies, app, p);
			if (cg_table_add_failed(&proxy_table)) {
				free(p);
				p = NULL;
			}
		}
		/* Node handles the application holds are those of the graph it
		 * instantiated first; keep them as the reference. */
		if (p && old_sum) {
			p->orig_sum = model_summary_ref(old_sum);
			p->n_nodes = old_sum->n_nodes;
			p->orig_nodes = malloc((old_sum->n_nodes + 1) * sizeof *p->orig_nodes);
			if (p->orig_nodes)
				memcpy(p->orig_nodes, old_sum->nodes, old_sum->n_nodes * sizeof *p->orig_nodes);
		}
	}
	if (p && mem && v.launches > p->launches_at_last) {
		CUdeviceptr *d = realloc(p->pending, (p->n_pending + n_mem + 1) * sizeof *d);
		if (d) {
			p->pending = d;
			for (int i = 0; i < n_mem; i++) {
				int freed;
				if (mem[i].is_free)
					continue;
				freed = model_mnode_has(mem, n_mem, mem[i].dptr, 1);
				if (!freed)
					carried[n_carried < 8 ? n_carried++ : 7] = mem[i].dptr;
				if (!freed && (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)) {
					if (!p->n_pending)
						atomic_fetch_add(&cg_policy_pending, 1);
					d[p->n_pending++] = mem[i].dptr;
				}
			}
		}
	}
	if (p) {
		retire_current(p, &doom);
		model_exec_set_real(app, fresh);
		p->graph = g;
		rewrites = ++p->rewrites; /* for the record, read under the lock */
		p->clock++;
		p->launches_at_last = v.launches;
		map_set(p, map_sum, &drop);
		if (src && map_sum && new_sum && new_sum->n_alloc + new_sum->n_free == 0 &&
		    topology_recurs(p, topology_hash(new_sum))) {
			/* a recurring shape: cache it for reuse; the least
			 * recently used one goes */
			int slot = p->n_cache;
			if (slot == CG_REPL_MAX) {
				slot = 0;
				for (int i = 1; i < p->n_cache; i++)
					if (p->cache[i].last_use < p->cache[slot].last_use)
						slot = i;
				doom.exec[doom.n_exec++] = p->cache[slot].exec;
				if (p->cache[slot].src_dead)
					doom.graph[doom.n_graph++] = p->cache[slot].src;
				model_summary_free(p->cache[slot].sum);
			} else {
				p->n_cache++;
			}
			p->cache[slot].exec = fresh;
			p->cache[slot].src = src;
			p->cache[slot].src_dead = 1; /* the shim's clone: destroyed with the exec */
			p->cache[slot].sum = model_summary_ref(map_sum);
			p->cache[slot].last_use = p->clock;
		} else {
			/* the shim's clone goes with the exec; g itself (not
			 * cloned) is the application's, held only while it lives */
			p->held = src ? src : g;
			p->held_dead = src != NULL;
		}
		warn = thrash_check_locked(p, v.launches, &th);
	}
	pthread_rwlock_unlock(&proxy_lock);
	model_summary_free(drop);
	model_summary_free(map_sum);
	free(mem);
	if (!p) {
		real_cuGraphExecDestroy(fresh);
		if (src)
			drv_cuGraphDestroy(src);
		model_summary_free(old_sum);
		model_summary_free(new_sum);
		return 0;
	}
	atomic_store(&cg_policy_active, 1);
	/* A replaced executable that is neither cached nor the application's
	 * own is unreachable now: destroyed (with its source graph when the
	 * application destroyed that). The application's own executable stays
	 * until it destroys its handle, so the handle value cannot be reused. */
	garbage_add(&doom);
	model_exec_rewritten(app, g, new_sum);
	model_summary_free(old_sum);

	t_end = cg_now_ns();
	o->level = CG_L_INFO;
	o->rec = (struct ev_rewrite){.at = t_end,
				     .exec = (uintptr_t)app,
				     .old_real = (uintptr_t)prev_real,
				     .has_old_real = 1,
				     .new_real = (uintptr_t)fresh,
				     .has_new_real = 1,
				     .graph = (uintptr_t)g,
				     .rc_update = rc_update,
				     .has_rc_update = 1,
				     .flags = flags,
				     .has_flags = 1,
				     .rewrites = rewrites,
				     .has_rewrites = 1,
				     .dur_ns = t_end - t0,
				     .has_dur_ns = 1,
				     .instantiate_ns = t_inst,
				     .has_instantiate_ns = 1};
	facts_reason(o, reason, why);
	if (n_carried) {
		/* AutoFreeOnLaunch: freed before the next launch; otherwise they
		 * stay the application's to free, as after an update. */
		for (int i = 0; i < n_carried; i++)
			o->carried[i] = carried[i];
		o->carried_list = (struct emit_hexes){o->carried, n_carried};
		if (flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH)
			o->rec.free_at_next_launch = EMIT_HEXES(&o->carried_list);
		else
			o->rec.outstanding = EMIT_HEXES(&o->carried_list);
	}
	facts_thrash(o, warn, &th);
	return 1;
}

/* p's memory (its summaries, lists and itself), p out of the table: what
 * a forget does after destroying p's driver objects, and all a reset does
 * (policy.h cg_policy_reset: the driver destroyed them). */
static void proxy_free(struct proxy *p)
{
	for (int i = 0; i < p->n_cache; i++)
		model_summary_free(p->cache[i].sum);
	model_summary_free(p->orig_sum);
	model_summary_free(p->map_sum);
	if (p->n_pending) /* never launched again: they stay allocated, as after an update */
		atomic_fetch_sub(&cg_policy_pending, 1);
	free(p->pending);
	free(p->orig_nodes);
	free(p->new_nodes);
	free(p);
}

CG_COLD void cg_policy_forget_slow(CUgraphExec app)
{
	struct proxy *p;
	CUgraphExec real;
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p)
		HASH_DEL(proxies, p);
	pthread_rwlock_unlock(&proxy_lock);
	if (!p)
		return;
	/* The model still holds app here (the destroy hook forgets the
	 * policy's state first), so its real exec is still known. */
	real = model_exec_real_of(app);
	if (real && real != app && cache_index(p, real) < 0)
		real_cuGraphExecDestroy(real);
	if (p->held_dead && p->held)
		drv_cuGraphDestroy(p->held);
	for (int i = 0; i < p->n_cache; i++) {
		real_cuGraphExecDestroy(p->cache[i].exec);
		if (p->cache[i].src_dead)
			drv_cuGraphDestroy(p->cache[i].src);
	}
	proxy_free(p);
}

CG_COLD void cg_policy_reset(const CUgraphExec *apps, int n)
{
	struct proxy *p, *tmp;
	if (!atomic_load_explicit(&cg_policy_active, memory_order_relaxed))
		return;
	pthread_rwlock_wrlock(&proxy_lock);
	if (n < 0) {
		HASH_ITER(hh, proxies, p, tmp)
		{
			HASH_DEL(proxies, p);
			proxy_free(p);
		}
	}
	for (int i = 0; i < n; i++) {
		HASH_FIND_PTR(proxies, &apps[i], p);
		if (p) {
			HASH_DEL(proxies, p);
			proxy_free(p);
		}
	}
	pthread_rwlock_unlock(&proxy_lock);
	pthread_mutex_lock(&garbage_lock);
	garbage_len = 0;
	atomic_store(&cg_policy_garbage, 0);
	pthread_mutex_unlock(&garbage_lock);
}

void cg_policy_launch_pending(CUgraphExec app, CUstream s, int ptsz)
{
	struct proxy *p;
	CUdeviceptr *d = NULL;
	int n = 0;
	CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_FIND_PTR(proxies, &app, p);
	if (p && p->n_pending) {
		d = p->pending;
		n = p->n_pending;
		p->pending = NULL;
		p->n_pending = 0;
		atomic_fetch_sub(&cg_policy_pending, 1);
	}
	pthread_rwlock_unlock(&proxy_lock);
	if (!n)
		return;
	cg_tls.in_shim++;
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	if (!real_cuMemFreeAsync)
		(void)cg_need_real(HID_cuMemFreeAsync);
	if (ptsz && !real_cuMemFreeAsync_ptsz)
		(void)cg_need_real(HID_cuMemFreeAsync_ptsz);
	for (int i = 0; i < n; i++) {
		/* the application may have freed it already: ignore the error */
		if (ptsz && real_cuMemFreeAsync_ptsz)
			(void)real_cuMemFreeAsync_ptsz(d[i], s);
		else if (real_cuMemFreeAsync)
			(void)real_cuMemFreeAsync(d[i], s);
	}
	if (drv_cuThreadExchangeStreamCaptureMode)
		drv_cuThreadExchangeStreamCaptureMode(&mode);
	cg_tls.in_shim--;
	free(d);
}

CG_HOT int cg_policy_graph_destroy(CUgraph g)
{
	struct proxy *p, *tmp;
	int held = 0;
	/* NULL is no graph: held and src are NULL once released, and must
	 * not turn the driver's answer to a destroy of NULL into a success. */
	if (!g || !atomic_load_explicit(&cg_policy_active, memory_order_relaxed))
		return 0;
	pthread_rwlock_wrlock(&proxy_lock);
	HASH_ITER(hh, proxies, p, tmp)
	{
		if (p->held == g && !p->held_dead) {
			p->held_dead = 1;
			held = 1;
		}
		for (int i = 0; i < p->n_cache; i++)
			if (p->cache[i].src == g && !p->cache[i].src_dead) {
				p->cache[i].src_dead = 1;
				held = 1;
			}
		if (held)
			break;
	}
	pthread_rwlock_unlock(&proxy_lock);
	return held;
}
