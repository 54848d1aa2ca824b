/*
 * shim/model/model-int.h -- what the files of the model share, and nothing
 * outside shim/model/ includes. The public API is shim/model.h.
 *
 * Files and their prefixes: model.c (locks, fork, totals: model_*,
 * cg_model_*), devices.c (model_dev_*, sampling), captures.c
 * (model_capture_*), joins.c (model_capture_confirm_unjoined), graphs.c
 * (model_graph_*, model_summary_*), topo.c (model_topo_*: a walked graph's
 * edges and topology hash), execs.c (model_exec_*), pools.c
 * (model_pool_*, model_device_*), allocations.c (model_alloc_*), ledger.c
 * (ledger_*), churn.c (model_churn_*; model_last_lock guards its table), nccl.c
 * (model_nccl_*: NCCL work in graphs), reset.c (model_reset_*: what a
 * device's context reset destroyed, forgotten).
 *
 * Locks (model.h): model_cap_lock guards model_cap_list; model_gx_lock
 * guards model_graphs and model_execs; model_mem_lock guards model_pools,
 * model_allocs, model_cur_pool and model_dev_alloc; model_last_lock guards
 * the last free-memory samples and the steady table (devices.c) and the
 * churn table (churn.c). Each total in model_tot is
 * written under the lock of the table it counts. A *_locked function runs
 * with the lock of its table held.
 */
#ifndef CGSHIM_MODEL_INT_H
#define CGSHIM_MODEL_INT_H

#define _GNU_SOURCE
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../call.h"
#include "../locks.h"
#include "cgshim/record.h"
#include "../model.h"
#include "../nodes.h"
#include "../resolve.h"
#include "../site.h"
#include "../state.h"
#include "../table.h"

/* Each total written under the lock of the table it counts (model.h). */
extern struct model_totals model_tot;

/* The model epoch (model.h, the known-update memo): bumped by every
 * change an update's analysis reads, where that change is made. */
extern _Atomic uint64_t model_epoch;
static inline void model_epoch_bump(void)
{
	atomic_fetch_add_explicit(&model_epoch, 1, memory_order_release);
}

/* The model's tables, each counting its own allocation failures. */
extern struct cg_table model_graph_table, model_exec_table, model_pool_table, model_alloc_table;
/* Right after an add to t, under t's lock: 0 when it went in; -1 when it
 * failed (the item is not in the table; counted on t, and the shim
 * degrades to pass-through with one warning). */
int model_table_added(struct cg_table *t);

/* The first slot of graph node n in an open-addressing table of mask + 1
 * slots (a power of two): node handles are 16-byte aligned pointers, so
 * the low bits go, then one multiply, the high bits taken (graphs.c's
 * dependency counts, joins.c's node sets). */
static inline size_t model_node_slot(const void *n, size_t mask)
{
	return (size_t)(((uintptr_t)n >> 4) * 0x9E3779B97F4A7C15ull >> 20) & mask;
}

/* ---- captures (captures.c, capture-records.c) -------------------------- */

/* Cross-stream structure of a capture (event record/wait edges, forked
 * streams): allocated at its first event, most captures have none. */
struct cap_links {
	int n_fork;
	struct {
		CUstream s;
		uint32_t site;
		int joined;
	} fork[CG_MAX_JOIN];
	int n_ev;
	struct {
		CUevent ev;
		CUstream s;
	} evs[64];
	int n_edge;
	struct {
		CUstream from, to;
	} edge[64];
};

/* The first call seen to break a capture (issue 14, the link at the end):
 * a predicted violation (rule set) or a refusal the shim did not predict.
 * api and rule point at static strings. */

/* A live capture. The live ones are a list in begin order (captures.c:
 * a process has a few at once; a capture loop adds and removes one a
 * step, which a hash table did with its header and buckets allocated and
 * freed each time). Its first two cache lines (allocated 64-aligned) hold
 * what a capture's own calls read: the list links and the id (a find),
 * and what an allocation or free inside it reads and counts (repeat,
 * n_alloc): issue 36. */
/* 248 bytes, allocated 64-aligned (captures.c cap_alloc): four lines, each
 * written at the begin and read at the end (issue 36: it was 272, five). */
struct cg_capture {
	struct cg_capture *next, *prev;
	uint64_t id;
	int steady; /* a steady site's capture: no samples (devices.c) */
	/* invalid: the shim knows the capture is invalidated (counted once in
	 * captures_invalidated); named: its "abandoned" record is written. */
	int invalid, named;
	int n_alloc;
	long long noted0; /* cg_noted_total() at its begin */
	unsigned long long alloc_bytes;
	CUstream stream;
	struct cap_breaker br;
	unsigned long long malloc_bytes;
	int mode, tid;
	char tname[16]; /* the begin thread's name (pthread_getname_np) */
	uint32_t site;
	uint32_t steady_key; /* what the steady judgement goes by: the site, else the stream */
	uint64_t t0;
	CUgraph into;
	struct cap_links *l;
	size_t free_before;
	unsigned char ptsz;
	unsigned char blocking;	    /* begun on a blocking stream: the legacy stream joins it (906) */
	unsigned char have_before;  /* free_before was sampled */
	unsigned char site_pending; /* its begin site's walk waited: not judged for steadiness */
	/* The begin call, whose record is written later (brec) */
	unsigned char brec;
	struct cg_call bcall;
	const char *bvia;
	uint64_t bend;
	CUgraph bgraph;
};
_Static_assert(sizeof(struct cg_capture) <= 256, "struct cg_capture: four cache lines");

#define CAP_NOTE_MAX 8
struct cap_list {
	struct cg_capture *head, *tail;
} __attribute__((aligned(16)));
/* The live captures' list and the writer of the capture records (model.h,
 * set by the hook wing once, at start-up), the writer's functions copied:
 * an end reads its two calls off the list's line, not a line of their own
 * (issue 36). */
struct cap_line {
	struct cap_list list;
	struct model_capture_records rec; /* all NULL before it is set */
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct cap_line) == 64, "struct cap_line: one cache line");
extern struct cap_line model_cap_line;
#define model_cap_list (model_cap_line.list)
/* The live captures in begin order, under model_cap_lock. */
#define CAP_EACH(c) for ((c) = model_cap_list.head; (c); (c) = (c)->next)
void model_captures_forget(void); /* the list emptied (a fork's child, its entries freed) */
/* Every live capture dropped, written nowhere (a reset destroyed their
 * streams: capture-list.c); returns how many. */
int model_capture_drop_all(void);
/* o: c's facts, under model_cap_lock or of a capture unlinked (its ender's alone) */
void model_capture_snap_locked(const struct cg_capture *c, struct cap_snap *o);
/* A captured allocation counted in capture id; returns model_capture_repeat's
 * answer for it, from the same lock round trip (issue 36). */
int model_capture_count_alloc(uint64_t id, int n, size_t size);
#define model_caprec (model_cap_line.rec.ended ? &model_cap_line.rec : NULL)

/* ---- graphs and executables (graphs.c, execs.c) ------------------------ */
struct cg_graph {
	CUgraph h;
	/* Identity (issue 35): id, process-unique (a handle comes back after
	 * a destroy as another graph with another id); cuda_id, the driver's
	 * own (cuGraphGetId, CUDA 13.1+), 0 when it has none. */
	uint64_t id;
	unsigned cuda_id;
	uint8_t origin;	    /* 0 built, 1 captured, 2 cloned */
	uint8_t repeat;	    /* from a repeat capture (model_capture_end), unchanged since */
	uint8_t cap_nocopy; /* at cap_gen: every node a kernel or memory node (model_tally) */
	uint64_t capture;
	uint32_t site;
	uint32_t gen;
	int n_mem, cap_mem;
	struct cg_mnode *mem;
	struct cg_summary *sum;
	uint32_t sum_gen;
	uint32_t cap_gen; /* gen at the end of its capture (0: not captured) */
	uint32_t n_nodes_cap;
	unsigned cap_destroys; /* node destroys seen at cap_gen (graphs.c) */
	int pending;	       /* execs holding a partial summary of this graph */
	/* NCCL work (model/nccl.c, from the walk at its end of capture while
	 * a libnccl is loaded): its NCCL kernel nodes, 0 none or not walked;
	 * nccl_gen: the generation they describe; nccl_site: the capture's
	 * begin site */
	int nccl;
	uint32_t nccl_gen, nccl_site;
	CUgraphExec live_exec; /* latest live exec instantiated from it */
	uint32_t churn;	       /* its churn entry (churn.c), 0 none; cleared by a change */
	struct cg_hlink link;  /* in the graphs' index (graphs.c) */
};
/* Two lines' size (its block from cg_spare_calloc, 16-byte aligned, may
 * straddle a third: table.c): the index's link was on a third one a
 * graph's making and destroy touched. */
_Static_assert(sizeof(struct cg_graph) == 128, "struct cg_graph: two cache lines");

#define EXEC_MEMO_N 4
struct cg_exec {
	/* Read by launches without gx_lock (model_exec_fast,
	 * model_exec_launched), possibly while another thread updates or
	 * destroys the exec, or reuses the struct for a new one: written
	 * (under gx_lock) with atomic stores, read with relaxed loads (plain
	 * movs on x86), and never cleared by the memset of a reused struct. */
	CUgraphExec h;
	int live;
	int unfreed_nodes;	 /* alloc nodes without a free node in the same graph */
	int foreign_frees;	 /* free nodes of allocations made by another graph */
	_Atomic int outstanding; /* graph allocations of the last launch not yet freed */
	uint64_t flags;
	_Atomic long long launches;
	_Atomic(CUgraphExec) real; /* the exec behind h: h, or a re-instantiation */
	/* process-unique, a new one per instantiation (issue 35); X_SET under
	 * gx_lock, read lock-free by a violation's fold key (model_exec_id_fast) */
	uint64_t id;
	/* the memo's slot + 1 whose summary a memo hit left the exec running
	 * (0: x->sum is it; settled under gx_lock); the memo below */
	_Atomic int memo_cur;
	/* Under gx_lock only; the struct is 64-byte aligned (execs.c), the
	 * lines above read by launches, these two written by an instantiation
	 * and a destroy, the memo's two lines only by updates. */
	CUgraph graph;
	uint64_t graph_id; /* the id of the graph it was instantiated from */
	int memo_any;	   /* the memo holds something (memo_cur aside) */
	unsigned cuda_id;  /* the driver's own (cuGraphExecGetId, CUDA 13.1+), 0: none */
	uint32_t site;
	int n_mem;
	struct cg_mnode *mem;
	struct cg_summary *sum;
	uint32_t sum_gen; /* gen of graph the (partial) summary describes */
	int inst_dev;	  /* device of the context it was instantiated in */
	/* The ledger's pending entry (ledger.h ledger_exec_pending), kept
	 * here when the ledger had none for the handle: lg_pending set, the
	 * graph (lg_graph: graph moves with a rewrite), the capture and its
	 * begin site the instantiation gave (ledger.c;
	 * counted in model_xl.lg_n). On the lines an instantiation writes
	 * anyway: a steady loop's exec costs the ledger no entry of its own. */
	uint64_t lg_capture;
	unsigned devmask; /* devices its allocation nodes allocate on (bit d) */
	int repeat;	  /* instantiated from a repeat graph with nothing to say; not updated since (X_SET/X_GET) */
	int kernels;	  /* kernel nodes, counted at instantiation */
	uint32_t churn;	  /* its graph's churn entry at instantiation (churn.c), 0 none */
	/* NCCL work (model/nccl.c): the graph's NCCL kernel nodes when it was
	 * instantiated or updated from it, its capture and begin site */
	int nccl;
	int lg_pending;
	uint64_t capture;
	uint32_t cap_site;
	uint32_t lg_csite;
	union {
		struct cg_exec *next_free; /* on the free list (not live) */
		CUgraph lg_graph;	   /* live, lg_pending: the graph it was instantiated from */
	};
	struct cg_hlink link; /* on the list of live execs (model_xl.head; execs.c) */
	/* The known-update memo (model.h): up to EXEC_MEMO_N graphs whose
	 * update of this exec the analysis found to say nothing and change
	 * nothing but the summary it runs (memo_g, NULL: a free slot, read
	 * lock-free), all at the epoch memo_epoch; memo_g[i]'s summary (a
	 * reference), all of one class (model.h model_memo_class) and the
	 * exec's own summary's; the next slot. Empty in a freed struct (a
	 * destroy drops it), and left alone by the memset of a reused one. */
	_Alignas(64) _Atomic(CUgraph) memo_g[EXEC_MEMO_N];
	_Atomic uint64_t memo_epoch;
	struct cg_summary *memo_s[EXEC_MEMO_N];
	int memo_next;
	uint64_t memo_cls; /* their class; 0: one entry, the exec's own summary of no class */
	/* in the overflow table (model_execs) while the launch index had no
	 * slot for it: on these lines, which a steady loop never touches */
	struct cg_hlink ovf_link;
};
#define X_SET(x, f, v) __atomic_store_n(&(x)->f, (v), __ATOMIC_RELAXED)
#define X_GET(x, f) __atomic_load_n(&(x)->f, __ATOMIC_RELAXED)
/* The live execs the launch index had no slot for, by handle (execs.c;
 * gx_lock): found through it only once model_xl.overflow is set. */
extern struct cg_hidx model_execs;
/* The known graphs by handle (graphs.c; gx_lock): a reset walks them (reset.c). */
extern struct cg_hidx model_graphs;
/* What an instantiation and a destroy write besides the exec, its slot of
 * the launch index and the tables, on one line of its own (execs.c; issue
 * 36: each line is a miss in a capture loop). Under gx_lock; the atomics
 * are also read without it. */
struct model_exec_line {
	struct cg_exec *free_list; /* destroyed execs, for the next ones */
	/* the live execs in the order made, linked through their link; the
	 * head's link.prev is the last (MODEL_EXECS_EACH): no table of
	 * their own (issue 36: its header and slot were two more lines an
	 * instantiation and a destroy touched) */
	struct cg_exec *head;
	uint64_t ids; /* the last exec id given (model_exec_new) */
	/* the live execs counted (model_execs_live: every steady begin asks) */
	_Atomic long long live_n;
	/* of the execs destroyed: their launches, and those times their
	 * kernel nodes (the exit summary's totals) */
	long long launches_destroyed, kernels_destroyed;
	_Atomic int claims; /* the graphs' pending counts summed (below) */
	_Atomic int lg_n;   /* live execs whose lg_pending is set */
	/* Set when an exec did not fit its neighbourhood of the launch
	 * index: only then does a miss need the locked table (else a miss
	 * is an untracked exec). */
	_Atomic int overflow;
	/* the ledger's own exec entries (ledger.c, under lg_lock; read
	 * without it by every instantiation's ledger_exec_known) */
	_Atomic int lg_entries;
};
extern struct model_exec_line model_xl;
/* Every live exec in the order made, gx_lock held; x may leave the list
 * in the body. */
#define MODEL_EXECS_EACH(x, tmp) for ((x) = model_xl.head; (x) && ((tmp) = (x)->link.next, 1); (x) = (tmp))
/* The first slot of e in the launch index (execs.c), for a test that
 * fills a neighbourhood. */
unsigned model_exec_home(CUgraphExec e);
/* g's entry, NULL when unknown; gx_lock held. The last one found is kept
 * (model_graph_last, gx_lock): a step's lookups are mostly of one graph,
 * and a hit reads that entry's first line only, where the table's lookup
 * read its header, a bucket and the chain (~5 L1 misses when cold). It
 * goes with its entry (model_graph_gone_locked). */
extern struct cg_graph *model_graph_last;
struct cg_graph *model_graph_find_slow_locked(CUgraph g);
static inline struct cg_graph *model_graph_find_locked(CUgraph g)
{
	struct cg_graph *x = model_graph_last;
	if (x && x->h == g)
		return x;
	x = model_graph_find_slow_locked(g);
	if (x)
		model_graph_last = x;
	return x;
}
/* Whether graph gr's cached summary describes it now: its generation, and
 * for a summary with child graphs no graph changed since its walk (a child
 * is changed through its own handle). gx_lock held. */
int model_graph_sum_current_locked(const struct cg_graph *gr);
/* The walk's topology (topo.c): s's ndeps, depsig and n_edges from graph
 * g's edges (s->nodes holds its n_nodes nodes, ndeps and depsig zeroed);
 * then s->topo from them, the types and the walked children. */
void model_topo_edges(struct cg_summary *s, CUgraph g);
void model_topo_hash(struct cg_summary *s);
/* A logged capture's graph as a chain (model.h model_deps_unchanged): s's
 * ndeps, depsig and n_edges as model_topo_edges computes them from the
 * driver's edges of a chain in node order, no query; nothing where the
 * driver has no edges query (the walk would find none).
 * model_topo_chain_check: the nodes whose dependencies model_topo_edges
 * found otherwise than a chain has them (*at: the first; n_nodes for an
 * edge count alone off). Each counts a chain (model_topo_chains). */
void model_topo_chain(struct cg_summary *s);
size_t model_topo_chain_check(const struct cg_summary *s, size_t *at);
struct cg_exec *model_exec_find_locked(CUgraphExec e);
/* Execs' claims on graphs (execs.c): the graphs' pending counts summed,
 * kept under gx_lock and read without it. model_graph_claimed: g's count,
 * 0 without a lock round trip while no exec waits on any graph (a graph
 * destroy or node add then has nothing to settle). _clear_locked: gr's
 * claims dropped (settled, or gr destroyed). */
int model_graph_claimed_ask(CUgraph g); /* under a gx_lock round trip of its own */
static inline int model_graph_claimed(CUgraph g)
{
	return atomic_load_explicit(&model_xl.claims, memory_order_acquire) ? model_graph_claimed_ask(g) : 0;
}
static inline void model_graph_claims_clear_locked(struct cg_graph *gr)
{
	if (gr->pending)
		atomic_fetch_sub_explicit(&model_xl.claims, gr->pending, memory_order_relaxed);
	gr->pending = 0;
}
/* gr just left the table: its claims and the last-found entry go. */
static inline void model_graph_gone_locked(struct cg_graph *gr)
{
	model_graph_claims_clear_locked(gr);
	if (model_graph_last == gr)
		model_graph_last = NULL;
}
/* model_nccl_exec_from (model.h) under gx_lock, x the exec (NULL: none). */
int model_nccl_exec_from_locked(struct cg_exec *x, CUgraph g, uint64_t capture, uint32_t cap_site);
/* What an exec instantiated or updated from graph gr (NULL: unknown)
 * takes of it (model_nccl_exec_from_locked): gr's NCCL kernel nodes while
 * unchanged since its capture's walk (0: none), their capture's begin site
 * (0: none), gr's capture. gx_lock. */
static inline void model_nccl_of_graph_locked(const struct cg_graph *gr, struct cg_update_seen *f)
{
	int n = gr && gr->nccl && gr->gen == gr->nccl_gen ? gr->nccl : 0;
	f->nccl = n;
	f->site = n ? gr->nccl_site : 0;
	f->capture = gr ? gr->capture : 0;
}
/* model_nccl_exec_from_locked of graph gr, found (NULL: unknown). */
static inline int model_nccl_exec_of_graph_locked(struct cg_exec *x, const struct cg_graph *gr, uint64_t capture,
						  uint32_t cap_site)
{
	struct cg_update_seen f;
	model_nccl_of_graph_locked(gr, &f);
	if (x) {
		x->nccl = f.nccl;
		x->capture = capture ? capture : f.capture;
		x->cap_site = cap_site ? cap_site : f.site;
	}
	return f.nccl;
}
void model_exec_view_fill(const struct cg_exec *x, struct cg_exec_view *out);
void model_exec_set_summary(struct cg_exec *x, struct cg_summary *sum);
long long model_exec_updates_same(void);
long long model_exec_updates_known(void);

/* ---- pools and graph allocations (pools.c, allocations.c) -------------- */
struct cg_pool {
	CUmemoryPool h;
	int dev, is_default, ipc, destroyed;
	uint32_t site;
	long long allocs;
	unsigned long long bytes;
	UT_hash_handle hh;
};

/* 64 bytes with the index's link: the pool, stream and thread of an
 * allocation are in its "alloc" record and the graph's memory nodes, not
 * repeated here. */
/* An entry lives while something refers to its address: the graph that
 * holds the allocation node (graph), the executable whose launches make it
 * (exec), or, once both are gone, an allocation that executable left
 * outstanding (orphan) until it is freed. The table stays as large as the
 * live graphs and executables, however many addresses a process cycles
 * through. */
struct cg_alloc {
	CUdeviceptr dptr;
	size_t size;
	uint64_t capture;
	CUgraph graph;	  /* graph holding the allocation node; NULL once destroyed */
	CUgraphExec exec; /* exec whose launches make this allocation */
	uint32_t site;
	uint16_t orphan;      /* its exec went with allocations outstanding: kept until freed */
	uint8_t dev;	      /* its device plus one, as cg_mnode's (0: not known) */
	struct cg_hlink link; /* in the allocations' index (allocations.c) */
};

struct model_pool_cur {
	CUmemoryPool pool;
	uint32_t site;
};
/* Graph allocations the shim attributed to each device (under model_mem_lock). */
struct model_dev_allocs {
	long long nodes;
	unsigned long long bytes;
};
extern struct cg_pool *model_pools;
extern struct model_pool_cur model_cur_pool[CG_MAX_DEV];
extern struct model_dev_allocs model_dev_alloc[CG_MAX_DEV];
uint8_t model_pool_mnode_dev(const struct cg_mnode *m);
struct cg_pool *model_pool_get_locked(CUmemoryPool p);
void model_alloc_set_exec(CUgraphExec e, const struct cg_mnode *mem, int n);
void model_alloc_release_exec(CUgraphExec e, const struct cg_mnode *mem, int n, int outstanding);
void model_alloc_release_graph(CUgraph g, const struct cg_mnode *mem, int n);
/* Appends e's leaked memory nodes to *out (*n_out of them, grown with
 * realloc) and counts them. */
void model_alloc_leaks(CUgraphExec e, uint64_t exec_id, const struct cg_mnode *mem, int n, struct model_leak **out,
		       int *n_out);

/* In the child after fork (model.c): the ledger's resolutions in flight
 * were the parent's other threads' (ledger.c). */
void ledger_after_fork_child(void);
/* The entries of device dev's allocations (all: every entry) dropped,
 * whatever refers to them (a reset took the memory back: reset.c);
 * returns how many. */
int model_alloc_forget(int dev, int all);

/* ---- devices (devices.c) ----------------------------------------------- */
void model_dev_seen(int d);
unsigned model_devs_seen(void); /* the devices seen (bit d), model_dev_seen */
int model_graphmem_sample(const char *when, CUgraphExec e, struct ev_graphmem out[CG_MAX_DEV]);

/* Executables alive now (execs.c; a relaxed load of a count kept under
 * model_gx_lock). */
long long model_execs_live(void);

#endif
