/*
 * shim/nodes-launch.c -- a captured graph's node details from the launches
 * the hooks saw (nodes.h, issue 36), instead of a type and a parameters
 * query a node at the capture's end.
 *
 * Per thread, one log of the capture its tally follows (model.h
 * cg_cap_tally), kept only while the capture's end will summarise the graph
 * (updates seen, debug level, NCCL: the begin hook decides). Each launch the
 * tally counts is described as the walk would describe its node, by the same
 * code (nodes_kernel_fill, or the template it made for the function: struct
 * log_fn) and the same function entry, whose layout the driver confirmed in
 * this capture before a byte of the caller's arguments is read (and no
 * hooked module or library unload since the capture began: a handle's
 * function may have changed with it). The summary takes the log only when
 * it is provably the graph:
 *   - the tally saw the capture whole and counted as many kernels as the
 *     graph has nodes (it can only fall short of them: every node is then a
 *     launch the hooks saw, in order), and the log holds each of them;
 *   - no node was destroyed meanwhile (a destroy and an unseen node would
 *     keep the count), no cooperative launch or attribute was seen (the log
 *     says 0), the ledger did not change if a struct argument's words were
 *     matched against it (the walk matches them at the end);
 *   - each function's first node and the last node, asked of the driver
 *     (nodes_describe), are described alike (order and handle form: a
 *     launch by a CUkernel is described with the function a walk read
 *     beside it, nodes.c's alias, and a wrong one is refused here).
 * Anything else: the full walk, as before. CGSHIM_SUMMARY_CHECK=1 walks
 * anyway and compares (nodes_launch_check).
 *
 * The edges too (the chain): a taken log's graph holds only launches on
 * the origin stream of a plain begin (the begin hook logs no capture into
 * a graph), in order, and each launch depends on that stream's capture
 * dependencies, the launch before it (the first: none), unless something
 * changed them without a node: a wait on an event, a dependency update, an
 * edge added to or removed from the capturing graph, a launch whose
 * attributes make a programmatic edge. The hooks count those while a
 * capture is live (model.h model_deps_change_enter); unchanged from the
 * begin to the take, the walk asks no edges (model/topo.c
 * model_topo_chain); CGSHIM_SUMMARY_CHECK asks and compares
 * (nodes_launch_chain_check).
 *
 * Memory: a block of LOG_MAX entries (at most a description and a tag
 * each), LOG_MAX + 1 node handles and FN_MAX function templates (~132 KiB)
 * per thread that captures while summaries are wanted, freed at
 * its exit; a capture of more launches, or of more than FN_MAX functions,
 * is walked.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "hot.h"
#include "ledger.h"
#include "log.h"
#include "model.h"
#include "resolve.h"
#include "nodes-int.h"
#include "nodes.h"
#include "thread.h"

#define LOG_MAX 512
#define FN_MAX 32   /* functions a capture's log describes: past them it is walked */
#define FN_SLOTS 64 /* fn_ix's slots (a power of two, more than FN_MAX) */

/* A function this capture's launches ran, whose layout the driver
 * confirmed in this capture (nodes_fn_confirm), with what every launch of
 * it is described from. A launch by kernelParams of a function of
 * nodes_fn_small's form (at most CG_NODE_MAXP parameters, none of more
 * than 8 bytes: parameter i is kept in p[i]) is logged as its values alone
 * (struct log_ent); the take lays them over t, the description
 * nodes_kernel_fill gives a launch whose argument pointers are all NULL
 * (the entry's facts, the layout, no value, phash's seed). Each value is
 * read and hashed into phash at the launch as nodes_kernel_fill does
 * (nodes-int.h nodes_word, nodes_fnv): no memset, no layout loop, no call
 * a launch, and one cache line written for a launch of up to 3 parameters
 * where a description takes four. Any other launch is nodes_kernel_fill's,
 * logged whole. Entries stay until the take (they are not taken over: an
 * entry's index names its launches' template). */
struct log_fn {
	uint64_t key;	   /* the launches' handle (a CUkernel or a function) */
	struct fn_ent *fe; /* held */
	int np;		   /* nodes_fn_small's count, -1: no template */
	uint8_t wide;	   /* nodes_fn_wide */
	struct cg_ndet t;  /* np >= 0: the template (node, dimensions, shared memory 0) */
};

/* A launch in the log: its function's entry, dimensions, shared memory,
 * phash and its np values; or (fn has LOG_WHOLE) the tag and, 8 bytes on,
 * the launch's whole description. 8-byte aligned, one after another. */
struct log_ent {
	uint32_t fn;
	uint32_t shmem;
	uint32_t grid[3], block[3];
	uint64_t phash;
	uint64_t val[];
};
#define LOG_WHOLE 0x80000000u
#define LOG_WHOLE_SIZE (8 + sizeof(struct cg_ndet))
#define LOG_ENT_MAX                                                                                                    \
	(sizeof(struct log_ent) + 8 * CG_NODE_MAXP > LOG_WHOLE_SIZE ? sizeof(struct log_ent) + 8 * CG_NODE_MAXP        \
								    : LOG_WHOLE_SIZE)
_Static_assert(sizeof(struct cg_ndet) % 8 == 0 && sizeof(struct log_ent) % 8 == 0, "log entries stay 8-byte aligned");

struct launch_log {
	uint64_t cap; /* the capture logged, 0 none */
	uint32_t n;
	uint8_t wide;		 /* an argument of more than 8 bytes was matched against the ledger */
	unsigned destroys;	 /* node destroys at the begin */
	unsigned unloads;	 /* module and library unloads at the begin (nodes_unloads) */
	uint64_t deps;		 /* capture dependency changes at the begin (model.h model_deps_word) */
	uint64_t epoch;		 /* the ledger's at the begin */
	uint32_t n_fn;		 /* entries in fn[] */
	uint32_t last;		 /* fn[last]: the last launch's function (n_fn > 0) */
	uint8_t fn_ix[FN_SLOTS]; /* a handle's slot (nodes_launch_slot): its entry + 1, 0 none */
	struct log_fn fn[FN_MAX];
	const char *why; /* the first reason the log is not the graph, NULL none (CGSHIM_SUMMARY_CHECK says it) */
	uint64_t why_key;
	size_t used;			/* bytes of ents in use: the n launches */
	size_t n_nodes;			/* handles in nodes[]: the end's list of the graph (nodes_launch_list_ask) */
	CUgraphNode nodes[LOG_MAX + 1]; /* one more than a log can match: a longer list is seen to be */
	uint64_t ents[LOG_MAX * LOG_ENT_MAX / 8]; /* the n launches' entries (struct log_ent), from used 0 */
};

static struct cg_thread_kind log_kind;
static __thread __attribute__((tls_model("initial-exec"))) void *log_slot;
static _Atomic long long taken, check_diffs;

long long nodes_launch_summaries(void)
{
	return atomic_load_explicit(&taken, memory_order_relaxed);
}

long long nodes_launch_check_diffs(void)
{
	return atomic_load_explicit(&check_diffs, memory_order_relaxed);
}

static void log_drop_fe(struct launch_log *l)
{
	if (!l->n_fn)
		return;
	for (uint32_t i = 0; i < l->n_fn; i++)
		nodes_fn_release(l->fn[i].fe);
	l->n_fn = l->last = 0;
	memset(l->fn_ix, 0, sizeof l->fn_ix);
}

CG_HOT int nodes_launch_begin(uint64_t cap)
{
	struct launch_log *l = log_slot ? log_slot : cg_thread_block(&log_kind, &log_slot, sizeof *l);
	if (!l)
		return 0;
	log_drop_fe(l);
	l->cap = cap;
	l->n = 0;
	l->used = 0;
	l->n_nodes = 0;
	l->wide = 0;
	l->why = NULL;
	l->why_key = 0;
	l->destroys = model_graph_node_destroys();
	l->unloads = nodes_unloads();
	l->deps = model_deps_word();
	l->epoch = ledger_epoch();
	return 1;
}

/* A launch not described: the graph is walked (the first reason kept). */
static void log_bad(struct launch_log *l, const char *why, uint64_t key)
{
	if (!l->why)
		l->why = why, l->why_key = key;
}

/* The entry of the launches' handle key in this capture, made at its first
 * launch: the function a walk asked already (the entry's form is the
 * walk's: a first capture of a kernel is walked; the runtime launches by a
 * CUkernel, the node gives its context's function, nodes.c: launch-handle
 * aliases), its layout confirmed by the driver. NULL, the log bad: the
 * graph is walked. A lock and, first in a capture, two driver queries:
 * errno kept. */
static __attribute__((noinline)) struct log_fn *log_fn_find(struct launch_log *l, uint64_t key)
{
	static void *nulls[CG_NODE_MAXP]; /* the template's argument pointers */
	size_t i = (size_t)((key >> 4) * 0x9E3779B97F4A7C15ull >> 58) & (FN_SLOTS - 1);
	struct log_fn *c;
	struct fn_ent *fe;
	int err;
	for (; l->fn_ix[i]; i = (i + 1) & (FN_SLOTS - 1))
		if (l->fn[l->fn_ix[i] - 1].key == key)
			return &l->fn[l->last = l->fn_ix[i] - 1u];
	if (l->n_fn == FN_MAX) {
		log_bad(l, "more functions than the log keeps", key);
		return NULL;
	}
	err = errno;
	if (!(fe = nodes_fn_cached(key))) {
		log_bad(l, "a function no walk has described", key);
		errno = err;
		return NULL;
	}
	if (!nodes_fn_confirm(fe)) {
		nodes_fn_release(fe);
		log_bad(l, "a function whose layout the driver did not confirm", key);
		errno = err;
		return NULL;
	}
	c = &l->fn[l->last = l->n_fn++];
	l->fn_ix[i] = (uint8_t)l->n_fn;
	c->key = key, c->fe = fe;
	c->wide = (uint8_t)nodes_fn_wide(fe);
	c->np = nodes_fn_small(fe);
	if (c->np >= 0) {
		memset(&c->t, 0, sizeof c->t);
		c->t.type = CU_GRAPH_NODE_TYPE_KERNEL;
		c->t.np_all = 0xffff;
		c->t.func = nodes_fn_key(fe);
		nodes_kernel_fill(fe, nulls, NULL, &c->t, NULL);
	}
	errno = err;
	return c;
}

CG_HOT void nodes_launch_rec(uint64_t cap, uint32_t kernels, CUfunction f, unsigned gx, unsigned gy, unsigned gz,
			     unsigned bx, unsigned by, unsigned bz, unsigned shmem, void **kp, void **extra)
{
	struct launch_log *l = log_slot;
	uint64_t key = (uint64_t)(uintptr_t)f;
	struct log_fn *c;
	struct log_ent *e;
	if (!l || l->cap != cap || l->why)
		return;
	if (l->n + 1 != kernels || l->n >= LOG_MAX) { /* a launch not logged, or too many */
		log_bad(l, l->n >= LOG_MAX ? "more launches than the log holds" : "a launch not logged", key);
		return;
	}
	if (CG_UNLIKELY(nodes_unloads() != l->unloads)) { /* an entry's handle may name another function */
		log_bad(l, "a module or library unloaded during the capture", key);
		return;
	}
	c = l->n_fn && l->fn[l->last].key == key ? &l->fn[l->last] : log_fn_find(l, key);
	if (!c)
		return;
	e = (struct log_ent *)((unsigned char *)l->ents + l->used); /* room: LOG_ENT_MAX a launch */
	if (CG_LIKELY(c->np >= 0 && (kp || !c->np))) {
		/* nodes_kernel_fill's values and phash: parameter k's pointer
		 * read only below np, the confirmed count */
		uint64_t h = c->t.phash;
		int np = c->np;
		void *const *args = kp;
		for (int k = 0; k < np; k++) {
			const void *v = args[k];
			size_t size = c->t.p[k].size;
			uint64_t w = 0;
			if (v) {
				w = nodes_word(v, size);
				h = size == 8 ? cg_mix64(h, w) : nodes_fnv(h, v, size); /* nodes_fnv's, in line */
			}
			e->val[k] = w;
		}
		e->fn = l->last;
		e->phash = h;
		e->grid[0] = gx, e->grid[1] = gy, e->grid[2] = gz;
		e->block[0] = bx, e->block[1] = by, e->block[2] = bz;
		e->shmem = shmem;
		l->used += sizeof *e + 8 * (size_t)np;
	} else {
		struct cg_ndet *d = (struct cg_ndet *)((unsigned char *)e + 8);
		memset(d, 0, sizeof *d);
		d->type = CU_GRAPH_NODE_TYPE_KERNEL;
		d->np_all = 0xffff;
		d->func = nodes_fn_key(c->fe); /* as the walk (nodes_launch_take compares) */
		if (nodes_kernel_fill(c->fe, kp, extra, d, NULL) < 0) {
			log_bad(l, "arguments not described", key);
			return;
		}
		d->node = l->n;
		d->grid[0] = gx, d->grid[1] = gy, d->grid[2] = gz;
		d->block[0] = bx, d->block[1] = by, d->block[2] = bz;
		d->shmem = shmem;
		e->fn = LOG_WHOLE;
		l->used += LOG_WHOLE_SIZE;
	}
	l->wide |= c->wide;
	l->n++;
}

/* The log's n descriptions into det, in order (a take). Only the bytes a
 * reader looks at are written: every reader of p[] stops at np (nodes.h),
 * so the kept values past it are left as they were. That spares a take
 * about a cache line a node (~144 of 224 bytes for a three-parameter
 * kernel), each a miss in a cold cycle (issue 36); the header is one
 * fixed-size copy and the values a loop, so no call to memcpy. */
static void log_expand(const struct launch_log *l, struct cg_ndet *restrict det, size_t n)
{
	const unsigned char *p = (const unsigned char *)l->ents;
	for (size_t i = 0; i < n; i++) {
		const struct log_ent *e = (const struct log_ent *)p;
		struct cg_ndet *restrict d = &det[i];
		const struct cg_ndet *t;
		if (e->fn & LOG_WHOLE) {
			t = (const struct cg_ndet *)(p + 8);
			memcpy(d, t, offsetof(struct cg_ndet, p));
			for (uint32_t k = 0; k < t->np && k < CG_NODE_MAXP; k++)
				d->p[k] = t->p[k];
			p += LOG_WHOLE_SIZE;
			continue;
		}
		const struct log_fn *c = &l->fn[e->fn];
		int np = c->np;
		t = &c->t;
		memcpy(d, t, offsetof(struct cg_ndet, p));
		d->node = (uint32_t)i;
		memcpy(d->grid, e->grid, sizeof d->grid);
		memcpy(d->block, e->block, sizeof d->block);
		d->shmem = e->shmem;
		d->phash = e->phash;
		for (int k = 0; k < np; k++) {
			d->p[k] = t->p[k];
			d->p[k].val = e->val[k];
		}
		p += sizeof *e + 8 * (size_t)np;
	}
}

/* The first field in which a and b differ, or NULL. */
static CG_HOT const char *nodes_launch_differs(const struct cg_ndet *a, const struct cg_ndet *b)
{
	if (a->node != b->node || a->type != b->type)
		return "node";
	if (a->func != b->func)
		return "function";
	if (memcmp(a->grid, b->grid, sizeof a->grid) || memcmp(a->block, b->block, sizeof a->block))
		return "dimensions";
	if (a->shmem != b->shmem)
		return "shared memory";
	if (a->coop != b->coop)
		return "cooperative";
	if (a->name != b->name || a->module != b->module || a->mctx != b->mctx)
		return "function entry";
	if (a->np_all != b->np_all || a->np != b->np || a->phash != b->phash)
		return "parameters";
	for (uint32_t k = 0; k < a->np; k++)
		if (a->p[k].off != b->p[k].off || a->p[k].size != b->p[k].size || a->p[k].idx != b->p[k].idx ||
		    a->p[k].embedded != b->p[k].embedded || a->p[k].val != b->p[k].val)
			return "kept parameter";
	if (a->dst != b->dst || a->src != b->src || a->bytes != b->bytes)
		return "operands";
	return NULL;
}

CG_HOT int nodes_launch_list_ask(uint64_t cap, CUgraph g, size_t *n)
{
	struct launch_log *l = log_slot;
	size_t room, m;
	if (!l || !cap || l->cap != cap || !drv_cuGraphGetNodes)
		return 0;
	/* room for one more than the launches logged: a graph of them all (the
	 * one a take describes) fits, and the driver writes one NULL past it,
	 * not hundreds; a longer one is asked its count (it is walked node by
	 * node: the take refuses it) */
	room = m = (size_t)l->n + 1;
	if (drv_cuGraphGetNodes(g, l->nodes, &m) != CUDA_SUCCESS || m >= room)
		return 0; /* the driver writes the count it has when below the room given */
	l->n_nodes = *n = m;
	return 1;
}

CG_HOT int nodes_launch_list(uint64_t cap, CUgraphNode *out, size_t n)
{
	struct launch_log *l = log_slot;
	if (!l || !cap || l->cap != cap || !n || l->n_nodes != n)
		return 0;
	memcpy(out, l->nodes, n * sizeof *out);
	return 1;
}

/* A take refused: 0. Under CGSHIM_SUMMARY_CHECK the first refusal in the
 * process is said once, with its reason (the function is the launch's
 * handle, or the walk's where a node was described otherwise). */
static int take_refused(const struct launch_log *l)
{
	static _Atomic int said;
	if (cg_cfg.summary_check && !atomic_exchange_explicit(&said, 1, memory_order_relaxed))
		cg_warn("summary check note: a graph walked, not described from its launches: %s (function %#llx)",
			l->why ? l->why : "a launch not described", (unsigned long long)l->why_key);
	return 0;
}

CG_HOT int nodes_launch_take(uint64_t cap, const CUgraphNode *nodes, size_t n, struct cg_ndet *det, int *chain)
{
	struct launch_log *l = log_slot;
	uint64_t seen[16];
	uint32_t n_seen = 0;
	*chain = 0;
	if (!l || l->cap != cap)
		return 0;
	l->cap = 0; /* one take a capture */
	if (!l->why)
		l->why = !n || l->n != n			      ? "fewer launches logged than the graph has nodes"
			 : nodes_coop_possible()		      ? "a cooperative launch or attribute seen"
			 : l->destroys != model_graph_node_destroys() ? "a node destroyed during the capture"
			 : (l->wide && l->epoch != ledger_epoch())    ? "the ledger changed under a struct argument"
								      : NULL;
	/* the last launch's function, confirmed at its first launch in this
	 * capture (log_fn_find): its first node's read-back asks no more */
	if (!l->why && l->n_fn)
		nodes_fn_confirmed_in_walk(l->fn[l->last].fe);
	if (!l->why)
		log_expand(l, det, n); /* a refused take's det is the walk's to write */
	log_drop_fe(l);
	if (l->why)
		return take_refused(l);
	for (size_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (k < n_seen && seen[k] != det[i].func)
			k++;
		if (k < n_seen && i != n - 1)
			continue;
		if (k == n_seen && n_seen < 16)
			seen[n_seen++] = det[i].func;
		struct cg_ndet w;
		nodes_describe(nodes[i], CU_GRAPH_NODE_TYPE_KERNEL, (uint32_t)i, &w);
		if ((l->why = nodes_launch_differs(&w, &det[i]))) {
			l->why_key = w.func;
			return take_refused(l);
		}
	}
	atomic_fetch_add_explicit(&taken, 1, memory_order_relaxed);
	/* every node a launch on the origin stream of a plain begin (the begin
	 * hook logs no capture into a graph), in order: a chain unless a
	 * dependency changed without a node */
	*chain = model_deps_unchanged(l->deps);
	return 1;
}

void nodes_launch_chain_check(size_t diff, size_t n, size_t at)
{
	static _Atomic int said;
	if (!diff)
		return;
	atomic_fetch_add_explicit(&check_diffs, (long long)diff, memory_order_relaxed);
	if (!atomic_exchange_explicit(&said, 1, memory_order_relaxed))
		cg_warn(
		    "CGSHIM_SUMMARY_CHECK: %zu of %zu nodes depend otherwise than the chain their capture's launches "
		    "made (first: node %zu), by the driver's edges; the edges are kept",
		    diff, n, at);
}

size_t nodes_launch_check(const CUgraphNode *nodes, size_t n, const struct cg_ndet *det)
{
	size_t diff = 0, at = 0;
	const char *first = NULL;
	for (size_t i = 0; i < n; i++) {
		CUgraphNodeType t = 0;
		struct cg_ndet w;
		const char *why;
		drv_cuGraphNodeGetType(nodes[i], &t);
		nodes_describe(nodes[i], t, (uint32_t)i, &w);
		why = t != CU_GRAPH_NODE_TYPE_KERNEL ? "type" : nodes_launch_differs(&w, &det[i]);
		if (why && !diff++)
			first = why, at = i;
	}
	if (diff) {
		atomic_fetch_add_explicit(&check_diffs, (long long)diff, memory_order_relaxed);
		cg_warn("CGSHIM_SUMMARY_CHECK: %zu of %zu nodes described otherwise from the captured launches than "
			"by the walk (first: node %zu, %s); the walk's description is kept",
			diff, n, at, first);
	}
	return diff;
}
