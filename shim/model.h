/*
 * shim/model.h -- what the shim knows of the process: captures, graphs,
 * executables, pools and allocations.
 *
 * Ownership and locks: captures (cap_lock), graphs+executables (gx_lock),
 * pools+allocations (mem_lock). A function here takes at most one of them
 * at a time and never holds one across a driver call (interposition.md
 * 2.9). The launch path reads an exec through a lock-free index
 * (model_exec_fast) and touches only atomics.
 *
 * Memory per tracked node: one struct cg_mnode (32 bytes) per allocation
 * node, one byte per node type in a graph summary, 4-byte site ids.
 */
#ifndef CGSHIM_MODEL_H
#define CGSHIM_MODEL_H

#include <stdatomic.h>
#include <stdint.h>

#include "call.h"
#include "cuda-abi.h"
#include "emit.h"
#include "log.h"
#include "state.h"
#include "thread.h"

#define CG_MAX_DEV 16
#define CG_MAX_JOIN 16

/* One allocation or free node of a graph, as the shim saw it made. */
struct cg_mnode {
	CUdeviceptr dptr;
	size_t size;
	CUmemoryPool pool; /* pool the allocation came from (NULL: unknown/explicit node) */
	uint32_t site;
	uint8_t is_free; /* a free node (dptr only) */
	uint8_t ipc;
	uint8_t pool_default;
	/* Device the allocation is made on, plus one (0: not known yet): the
	 * node's poolProps.location for explicit and walked nodes, the pool's
	 * device (else the calling context's) for captured ones. Memset 0
	 * leaves it unknown; model_graph_add_mnode and model_alloc_graph fill
	 * it in. */
	uint8_t dev;
};
#define CG_MNODE_DEV(m) ((int)(m)->dev - 1)

/* Node summary walked from the driver once per graph generation.
 * Immutable once published and shared by reference count between the
 * graph's cache, executables and callers: a "copy" is a reference, and
 * model_summary_free drops one. 128 bytes: what a partial summary's
 * readers use (counts, partial, nocopy, mem) on the first line, and a
 * partial summary's memory nodes, right after it, from the third on
 * (issue 36: an instantiation of a capture loop read four lines of it). */
struct cg_summary {
	_Atomic int refs;
	uint32_t n_nodes, n_edges;
	uint32_t n_alloc, n_free;
	/* partial: counts and memory nodes from what the shim tracked during
	 * the capture, no walk yet (types/ndeps/nodes NULL); an exec holding
	 * one gets the full summary on first need (model_exec_summary) or
	 * before its graph changes or goes (model_graph_settle). */
	uint8_t partial;
	/* partial only: the capture's tally proved no copy node
	 * (model_graph_captured); model_graph_copies is then one count query */
	uint8_t nocopy;
	/* topo: a 64-bit hash of exactly what the update prediction compares
	 * (node count, edge count, each node's type, dependency count and
	 * dependency signature in creation order), computed once per graph generation by the walk
	 * (never 0; 0 in a partial summary: no hash, compare in full). Equal
	 * hashes answer "same topology" in O(1); different ones fall through
	 * to the node-by-node comparison that names the difference. */
	uint64_t topo;
	struct cg_mnode *mem; /* n_alloc + n_free memory nodes, read back from the driver */
	uint8_t *types;	      /* n_nodes node types, creation order */
	uint16_t *ndeps;      /* n_nodes dependency counts */
	/* n_nodes dependency signatures: per node, the sum of a hash of each
	 * incoming edge (its source's index, its data: ports and type), so
	 * equal sets of edges give equal values in any order; two graphs of
	 * the same types and counts whose edges differ (a chain against a
	 * fork/join) differ here (issue 31). 0 for a node without edges. */
	uint32_t *depsig;
	CUgraphNode *nodes;
	/* node details (nodes.h) of the kernel, memcpy and memset nodes only,
	 * n_det of them in node order (det[k].node is the index); NULL when
	 * not learned */
	struct cg_ndet *det;
	/* nodes_fingerprint() of det (nodes.h), 0 when not computed: equal
	 * values let an update skip the refusal pass, the pointer diff and
	 * the references' rework */
	uint64_t sig, ptrs;
	uint32_t n_det;
	/* a walked summary's block capacities (graphs.c: its blocks are
	 * kept for the next walk when it is freed); 0 in a partial one */
	uint32_t cap_nodes, cap_det, cap_mem;
	/* child graph nodes (type GRAPH), n_kids of them in node order, each
	 * with the walked summary of the graph the node owns
	 * (cuGraphChildGraphNodeGetGraph, read while the walk's graph is held
	 * by the call), CG_KID_DEPTH levels at most; the child's topology hash
	 * and refusal fingerprint are folded into topo, so a changed child
	 * makes the update compare in full (rules/update.c). NULL: no child
	 * node, or none walked (then nothing about the child is predicted). */
	struct cg_kid *kids;
	uint32_t n_kids;
	/* with kids: the count of hooked graph changes (any graph) when the
	 * walk began; a child graph changed in place through its handle bumps
	 * it, not its parent's generation, so a cached summary with kids
	 * stands only while this count holds (graphs.c summary_cached) */
	uint32_t kid_gen;
};
_Static_assert(sizeof(struct cg_summary) == 128 && offsetof(struct cg_summary, mem) < 64,
	       "struct cg_summary: two lines, a partial one's readers on the first");

/* Levels of child graphs a walk descends (each level costs the walk's
 * ~9 KiB of stack scratch; deeper children are not compared). */
#define CG_KID_DEPTH 3
struct cg_kid {
	uint32_t node; /* index of the child graph node in the summary */
	struct cg_summary *s;
};

/* The child summary of node i of s, or NULL (not a child node, or not walked). */
static inline const struct cg_summary *model_summary_kid(const struct cg_summary *s, uint32_t i)
{
	for (uint32_t k = 0; s && k < s->n_kids; k++)
		if (s->kids[k].node == i)
			return s->kids[k].s;
	return NULL;
}

struct cg_ndet;

/* One multiply-xorshift step of the summaries' 64-bit hashes (topology,
 * fingerprints, shape). */
static inline uint64_t cg_mix64(uint64_t h, uint64_t v)
{
	h ^= v;
	h *= 0xff51afd7ed558ccdull;
	return h ^ h >> 33;
}

struct cg_exec_view {
	CUgraphExec h;
	CUgraph graph;
	uint64_t flags;
	uint32_t site;
	long long launches;
	int mem_nodes, unfreed_nodes;
	int live;
};

extern _Atomic int cg_live_captures;

int cg_model_init(void);
void cg_model_after_fork_child(void);

/* ---- at exit (summary.c asks; the model writes its own records) ------- */
/* Totals since start, for the summary record. */
struct model_totals {
	long long captures, captures_bad, graphs, execs, updates, update_failures, alloc_nodes, alloc_bytes, pools,
	    leaks, rewrites;
	long long updates_known; /* of updates: answered by the known-update memo */
};
void model_totals_get(struct model_totals *out);
/* A graph allocation an executable's last launch left outstanding when the
 * exec went (destroy) or at exit: the model finds them, the hook or the
 * summary hands them to the rules' writer (CGS011). */
struct model_leak {
	CUgraphExec e;
	uint64_t exec_id; /* e's process-unique id: e may be a handle given again */
	struct cg_mnode m;
};
/* Returns the number of leaks, *leaks malloc'd (the caller frees); *lr
 * (malloc'd, n_lr of them; the caller frees): the facts of a "launches"
 * record (exit) per live exec, which the caller writes before the leaks. */
int model_exec_exit(long long *launches, long long *n_live, struct model_leak **leaks, struct ev_launches **lr,
		    int *n_lr);
/* Kernels run through graph launches (issue 32, coverage): each exec's
 * launches times its kernel nodes (counted once at instantiation; kernels
 * inside child graphs not counted), destroyed execs included. */
long long model_exec_kernels_run(void);
/* An eager launch of f that its thread's count made a sample
 * (cg_eager_add's answer; model/eager.c): its call site and function into
 * the thread's table. Cold: the launch wrappers' sampled path only. May
 * change errno (the caller keeps it). */
void model_eager_sample(CUfunction f);
/* The facts of a "pool" record per pool the process made or used, into
 * *out (allocated, the caller frees it); their number. */
int model_pool_exit(struct ev_pool **out);
#define MODEL_CAPTURE_EXIT_MAX 8
int model_capture_exit(uint64_t *ids, int max, int *n_named);
/* The live captures for the fatal record (crashlog.c), copied out with a
 * trylock of the capture lock: a signal handler cannot wait for a lock the
 * code it interrupted may hold. Returns how many are live (up to max
 * copied), or -1 when the lock was held throughout a short retry. */
struct model_live_cap {
	uint64_t id;
	CUstream stream;
	CUgraph graph;
	int tid, mode, invalid;
	uint32_t site;	/* the begin's call site */
	uint64_t t0;	/* the begin, CLOCK_MONOTONIC ns */
	char tname[16]; /* the begin thread's name */
};
int model_capture_live_try(struct model_live_cap *out, int max);
/* Graph memory per device: e's first launch, or (e NULL) at exit: the
 * facts of one "graphmem" record per device into out, their number
 * returned (0 when info is off or a capture is live); the caller writes
 * them (emit_graphmem). */
int cg_model_graphmem(const char *when, CUgraphExec e, struct ev_graphmem out[CG_MAX_DEV]);
long long model_meminfo_skipped(void);

/* ---- capture ---------------------------------------------------------- */
/* The first call seen to break a capture (model_capture_breaker). */
struct cap_breaker {
	const char *api, *rule;
	int tid, rc;
	char tname[16];
	uint32_t site;
};

/* What a record about a capture needs, copied out under cap_lock: the
 * facts the model hands to the capture records' writer. */
struct cap_snap {
	uint64_t id, t0;
	CUstream stream;
	int mode, tid, invalid;
	char tname[16];
	struct cap_breaker br;
	uint32_t site;
	int brec;
	struct cg_call bcall;
	const char *bvia;
	uint64_t bend;
	CUgraph graph;
};

static inline const char *model_capture_mode_name(int m)
{
	return m == CU_STREAM_CAPTURE_MODE_GLOBAL	  ? "global"
	       : m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ? "thread_local"
	       : m == CU_STREAM_CAPTURE_MODE_RELAXED	  ? "relaxed"
							  : "?";
}

/* The records the capture tracking owes, handed as facts to their writer
 * (hooks/capture-records.c, set once at start-up by
 * model_capture_records_set; none are written before): the deferred call
 * record of a capture's begin, "capture" (its ledger at the end, repeat: a
 * steady cycle's, cg_log_life_level), "invalidated", "abandoned" and
 * "broken". The model writes no record itself. */
struct model_capture_records {
	/* begin_shown: whether a capture's deferred begin record (bcall)
	 * passes, counted as a repeat's hidden one when not; begin then
	 * writes it from the capture's facts, which an end takes only for a
	 * record written (issue 36) */
	int (*begin_shown)(const struct cg_call *bcall);
	void (*begin)(const struct cap_snap *k);
	void (*ended)(const struct ev_capture *f, int repeat);
	void (*invalidated)(const struct cap_snap *k, const char *found_by, const char *api, uint32_t call_site,
			    const char *by_api, int by_tid, uint32_t by_site);
	void (*abandoned)(const struct cap_snap *k, const char *reason, const char *api, int rc, uint32_t call_site);
	void (*broken)(const struct cap_snap *k, int rc);
};
void model_capture_records_set(const struct model_capture_records *w);
/* Capture info of a stream through the family-matched capture-safe query.
 * Returns 1 and fills id/graph when the stream is capturing (active or
 * invalidated; status out), 0 otherwise. */
int model_stream_capture(CUstream s, int ptsz, uint64_t *id, CUgraph *graph, int *status);
/* Before a begin-capture call from site: sample free memory (only while
 * no capture is live, and not for a steady site's capture) and allocate
 * the next capture's entry, so that nothing costly runs between the
 * driver's begin and the application's next call. The steady judgement
 * (devices.c) goes by site; without one (CGSHIM_BACKTRACE=0 and no Python
 * frames) by the stream. */
void model_capture_presample(uint32_t site, CUstream s);
/* A capture the driver began. c is the begin hook's call (its record is
 * deferred: written when the capture ends, is named abandoned, or at exit,
 * stamped with the time the hook finished), via the runtime name it came
 * through, graph the capture's graph. Costs a lock and a hash insert. */
struct cg_call;
void model_capture_begin(uint64_t id, CUstream s, int mode, int ptsz, CUgraph into, uint32_t site,
			 const struct cg_call *c, const char *via, CUgraph graph);
/* The kernel tally of the capture this thread began (captures.c), so an
 * instantiation can know its graph holds no copy without asking the driver
 * the type of every node. From a successful begin to the end on the same
 * thread, every kernel launch this thread makes while a capture is live and
 * the driver accepts is counted when it goes to the capture's origin
 * stream; anything else -- a launch on another stream, an async copy or
 * memset, a second capture begun -- turns the tally off. The count can
 * only fall short of the graph's kernel nodes (a launch from another
 * thread, an unhooked node call), never exceed them, so "nodes == kernels
 * + memory nodes" proves every node is a kernel or memory node. Written by
 * its own thread only; the launch hooks touch it with no lock. */
struct cg_cap_tally {
	uint64_t cap;	    /* the capture tracked, 0 for none */
	const void *stream; /* its origin stream */
	uint32_t kernels;
	int off;
	uint64_t h; /* the counted launches' functions and dimensions, in order (churn's cheap key) */
	int rec;    /* each counted launch is described too (nodes_launch_rec): set by the begin hook */
	int esc;    /* a kernel escaped it (CGS024, hooks/capture-map.c): its end reads the escapes' own line */
};
extern CG_TLS struct cg_cap_tally model_tally;
/* A launch the driver accepted while a capture was live (kernel: 0 for an
 * async copy or memset). */
static inline void model_tally_launch(const void *s, int kernel, uint64_t what)
{
	if (kernel && s == model_tally.stream) {
		model_tally.kernels++;
		model_tally.h = cg_mix64(model_tally.h, what);
	} else {
		model_tally.off = 1;
	}
}
/* The kernels counted for capture id when this thread tracked it whole,
 * else -1; the tally ends either way when it tracked id. */
long model_tally_take(uint64_t id);
/* The launch hash of capture id's tally (model_tally.h) when model_tally_take
 * gives its count; read before it. */
static inline uint64_t model_tally_hash(uint64_t id)
{
	return id && model_tally.cap == id && !model_tally.off ? model_tally.h : 0;
}

/* ---- re-capture churn (issue 32, model/churn.c) ------------------------
 * Per capture site and graph fingerprint: captures, instantiations and
 * launches, the time spent capturing and instantiating, and one graph's
 * memory. The end-of-capture hook fingerprints the new graph from its
 * summary (model_churn_fp_of: the walk) and counts it
 * (model_churn_capture); a site's fingerprint seen threshold times fires
 * once (CGS026), and binds the capture's cheap key (node count, kernel
 * tally and its launch hash, allocation nodes) so the same site's later
 * captures with that key are counted without a walk (model_churn_again,
 * which also leaves a key's first capture unwalked).
 * An executable knows its graph's entry (1-based index, 0 none) and adds
 * its launches at destroy. Costs a lock at capture end and instantiate;
 * nothing on a launch. */
#define MODEL_CHURN_MAX 512
#define MODEL_CHURN_PTRS 8
/* One ended capture: key the begin site, else its stream's key (the
 * steady judgement's); its time from begin to end; its graph allocations.
 * steady_*: the steady judgement's facts of the capture, left by
 * model_capture_end_facts to model_meminfo_steady_ended (steady_do: to be
 * counted). graph_taken: model_capture_end_facts put the graph in the
 * model. */
struct model_cap_end {
	uint32_t key, site;
	uint64_t dur_ns, alloc_bytes;
	int n_alloc;
	int graph_taken;
	int steady_do, steady_skipped, steady_have;
	uint32_t steady_key;
	long long steady_unattributed;
};
struct model_churn_fp {
	uint64_t shape; /* topology, node types, functions, launch dimensions (0: not known) */
	uint64_t ptrs;	/* the pointer values by position (nodes_fingerprint) */
	uint64_t cheap; /* the capture's cheap key, 0 when it has none */
	int nodes;
};
struct model_churn_view {
	uint32_t key, site;
	uint64_t shape, ptrs0;
	int ptr_sets, more_ptrs; /* distinct pointer sets (MODEL_CHURN_PTRS at most, more_ptrs: more) */
	int nodes, fps_at_site;	 /* fps_at_site: at exit, fingerprints captured at this site */
	long long captures, insts, launches;
	uint64_t cap_ns, inst_ns, first_ns; /* first_ns: the first capture and the first instantiation */
	uint64_t mem_bytes;		    /* graph allocations of one graph */
};
static inline uint64_t model_churn_wasted(const struct model_churn_view *v)
{
	uint64_t all = v->cap_ns + v->inst_ns;
	return all > v->first_ns ? all - v->first_ns : 0;
}
void model_churn_fp_of(const struct cg_summary *s, struct model_churn_fp *fp);
/* Returns the entry's index (0: none); *fire once per entry, at the
 * threshold-th capture (threshold 0: never); v: the entry after the count. */
uint32_t model_churn_capture(const struct model_cap_end *ce, const struct model_churn_fp *fp, int threshold, int *fire,
			     struct model_churn_view *v);
/* Whether the capture is counted without a walk (1): a fired entry of ce's
 * key with this cheap key counts it (*idx), or it is the first capture of
 * that key at the site (a sighting: *idx 0, joined to the fingerprint the
 * next such capture is walked into). 0: walk the graph and call
 * model_churn_capture (always for cheap 0 or key 0). */
int model_churn_again(const struct model_cap_end *ce, uint64_t cheap, uint32_t *idx);
void model_churn_instantiated(uint32_t idx, uint64_t ns);
void model_churn_launched(uint32_t idx, long long n);
/* A walk of g for its fingerprint only: a private summary (freed with
 * model_summary_free), not cached on the graph and not counted in
 * model_graph_walks but in model_graph_churn_walks (the summary's
 * churn_walks). */
struct cg_summary *model_graph_churn_walk(CUgraph g);
long long model_graph_churn_walks(void);
/* The graph's entry (0: none, or changed since its capture; read by
 * model_graph_inst_view). */
void model_graph_churn_set(CUgraph g, uint32_t idx);
/* execs.c: live executables' launches added per entry (live[idx - 1]). */
void model_exec_churn_live(long long *live, int max);
/* At exit: the entries captured twice or more, the max most wasteful
 * first; *untracked: captures the full table could not count. */
int model_churn_exit(struct model_churn_view *out, int max, long long *untracked);
void model_churn_after_fork_child(void);
/* Returns 1 when the capture repeats its steady site's cycle: a steady
 * capture (devices.c) that ended well with no violation, failure or break
 * seen meanwhile; its records are then left to debug (call.h). */
int model_capture_end(uint64_t id, CUstream s, CUgraph graph, CUresult rc);
/* model_capture_end, and the facts the churn table needs (out, may be NULL;
 * zeroed when the capture was not known). t_end: when the capture ended
 * (the end hook's clock after the driver's end), 0: read now. With out
 * (the end hook; issue 36: each model lock taken once an end), a known
 * capture's graph goes into the model (model_graph_new with the repeat,
 * before the capture's records; out->graph_taken), and the steady
 * judgement's facts are left in out for model_meminfo_steady_ended, which
 * the caller then calls once. */
int model_capture_end_facts(uint64_t id, CUstream s, CUgraph graph, CUresult rc, uint64_t t_end,
			    struct model_cap_end *out);
/* The same, so far, for a call made inside live capture id. */
int model_capture_repeat(uint64_t id);
/* A hooked call failed with 900 (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED):
 * each live capture it conflicts with under this thread's mode is marked
 * invalidated by it ("invalidated" record), or, when that capture was
 * already invalidated before, named abandoned ("abandoned" record, once per
 * capture) with this call as the first failing call after it. */
void model_capture_refused(const char *api);
/* A begin-capture on s failed with rc while the model still holds an
 * earlier capture begun on s: that capture is named abandoned. */
void model_capture_begin_refused(CUstream s, int ptsz, const char *api, int rc);
/* A capture-safe query (the application's, api, or the shim's own, api
 * NULL) answered Invalidated for stream s (capture id, 0 if not given). */
void model_capture_seen_invalid(CUstream s, int ptsz, uint64_t id, const char *api);
/* Unjoined forked streams of the capture: writes up to max streams and their
 * fork sites; returns the count. */
int model_capture_unjoined(uint64_t id, CUstream *streams, uint32_t *sites, int max);
void model_capture_event_record(uint64_t id, CUevent ev, CUstream s);
/* The driver's check of those forks (joins.c, capture-safe queries): keeps,
 * compacted in place, the ones still in capture id with a capture
 * dependency that is neither the origin's nor an ancestor of them; on a
 * failed query all n stay. Returns the count kept. */
int model_capture_confirm_unjoined(uint64_t id, CUstream origin, int ptsz, CUstream *streams, uint32_t *sites, int n);
/* s is about to be destroyed: it leaves the forks of every live capture. */
void model_capture_stream_gone(CUstream s);
void model_capture_wait_event(uint64_t id, CUstream s, CUevent ev, uint32_t site);
/* Whether ev was last recorded on a stream of a live capture. */
int model_capture_event_known(CUevent ev);
void model_capture_plain_alloc(size_t size);
/* Live capture colliding with a capture-unsafe call from the calling thread
 * under its capture mode: fills the capture's id/stream/mode/tid/site.
 * Returns 1 when one exists. */
struct cg_capture_view {
	uint64_t id;
	CUstream stream;
	int mode, tid;
	uint32_t site;
	int named;	/* already named abandoned: every later refusal is only counted */
	int broken;	/* known invalidated, or a call that breaks it was seen: its end answers 901 */
	char tname[16]; /* the begin thread's name */
	int forks;	/* streams forked into it (model_capture_unjoined has suspects to look at) */
};
int model_capture_conflict(int thread_mode, struct cg_capture_view *out);
int model_capture_find(uint64_t id, struct cg_capture_view *out);
/* The first call seen to break capture id (api, rule ID or NULL when not
 * predicted, its rc or 0 when it succeeds yet invalidates, its site), by
 * the calling thread: the end of the capture links back to it ("broken").
 * Later calls leave it as it is. */
void model_capture_breaker(uint64_t id, const char *api, const char *rule, int rc, uint32_t site);
/* Capture id was invalidated by api (a refused call the driver answered
 * with rc, at site): the shim's view, and an "invalidated" record. */
void model_capture_invalidate(uint64_t id, const char *api, uint32_t site);
/* The live capture that ev was last recorded in (capture-safe: model only). */
int model_capture_of_event(CUevent ev, struct cg_capture_view *out);
/* ev was recorded outside any capture: no live capture holds it any more. */
void model_capture_event_forget(CUevent ev);
/* Before a begin-capture (after model_capture_presample): whether its
 * stream is a blocking one (the legacy stream then implicitly joins it). */
void model_capture_prepare_blocking(int blocking);
/* Any live capture, the one this thread's mode collides with first. */
int model_capture_any(struct cg_capture_view *out);
/* A live capture begun on a blocking stream (the first found). */
int model_capture_blocking(struct cg_capture_view *out);
/* Moved to thread.h (cg_thread_name); kept for callers outside the model
 * until the branches are merged. */
static inline void model_thread_name(char name[16])
{
	cg_thread_name(name);
}
/* Calling thread's capture interaction mode as last set through the hook. */
int model_thread_mode(void);
void model_thread_mode_set(int mode);

/* ---- graphs and executables ------------------------------------------- */
/* repeat: g came from a repeat capture (model_capture_end): its records
 * are left to debug until it changes (call.h, CG_CALL_REPEAT). */
void model_graph_new(CUgraph g, int origin, uint64_t capture, uint32_t site, int repeat);
/* Returns 1 when g was still a repeat graph. */
int model_graph_destroy(CUgraph g);
void model_graph_mutated(CUgraph g);
/* A cuGraphDestroyNode the driver accepted, of a graph unknown. */
void model_graph_node_destroyed(void);
/* A node of a graph unknown changed in what a summary describes (a
 * cuGraphKernelNodeSetAttribute the driver accepted): no graph's cached
 * summary stands (each is walked again at its next need), no memo. */
void model_graph_node_changed(void);
/* cuGraphDestroyNode calls the driver accepted so far. */
unsigned model_graph_node_destroys(void);
/* Changes of a capture's dependencies that add no node (issue 36, model/
 * topo.c): a wait on an event into a stream, cuStreamUpdateCaptureDependencies*,
 * cuGraphAddDependencies* and cuGraphRemoveDependencies*, and a captured
 * launch whose attributes make a programmatic or launch-order edge. Counted
 * only while a capture is live (an eager program's waits touch nothing
 * shared): model_deps_change_enter before the driver's call (1: counted),
 * model_deps_change_leave with its answer after it. model_deps_word at a
 * capture's begin, and model_deps_unchanged(that word) after its end: 1
 * when no such change reached the driver in between (none in flight
 * either), so each node a launch on the capture's origin stream added
 * depends on that stream's node before it alone (a plain begin: the first
 * on none). model_deps_changed: one that already reached the driver (the
 * launch hooks, the capture's own thread). */
int model_deps_change_enter(void);
void model_deps_change_leave(int entered);
static inline void model_deps_changed(void)
{
	model_deps_change_leave(model_deps_change_enter());
}
uint64_t model_deps_word(void);
int model_deps_unchanged(uint64_t since);
/* Graphs whose dependencies were taken as their capture's chain
 * (model_deps_unchanged), asked no edges; under CGSHIM_SUMMARY_CHECK
 * asked and compared. */
long long model_topo_chains(void);
void model_graph_add_mnode(CUgraph g, const struct cg_mnode *m);
/* Summary of a graph (walked now if stale). Returns a private copy the
 * caller frees with model_summary_free, or NULL. Makes only capture-safe
 * graph queries. */
struct cg_summary *model_graph_summary(CUgraph g);
/* The same where the caller has just asked the driver for g's node count n
 * in the call that holds g (the end of its capture): one query less.
 * launches: the capture this thread logged the launches of, whose log
 * describes g's nodes when it provably is g (nodes_launch_take), else 0. */
struct cg_summary *model_graph_summary_counted(CUgraph g, size_t n, uint64_t launches);
/* The graph's summary if one is cached and current, else NULL (no walk). */
struct cg_summary *model_graph_summary_cached(CUgraph g);
/* A live, unchanged graph whose cached summary is s (its node handles are
 * then safe to query), or NULL. Walks every graph: for rare paths only
 * (the node records of a failing update). */
CUgraph model_summary_graph(const struct cg_summary *s);
/* End of a capture that produced g with n nodes: from here until g is
 * mutated, its memory nodes are known from the hooks without a walk.
 * Gives their counts; 0 when g is unknown. kernels: the capture's tally
 * (model_tally_take, -1 for none); when the nodes are exactly the kernels
 * and the memory nodes, g is known to hold no copy (model_graph_partial's
 * nocopy). churn: g's churn entry when not 0 (model_graph_churn_set, in the
 * same lock hold). */
int model_graph_captured(CUgraph g, size_t n_nodes, long kernels, uint32_t churn, uint32_t *n_alloc, uint32_t *n_free);
/* A partial summary of a captured, unchanged graph (NULL if g is not one):
 * what an instantiation needs, without walking the graph. */
struct cg_summary *model_graph_partial(CUgraph g);
/* What an instantiation of g reads of the model before the call, in one
 * gx_lock round trip: sum, the cached summary when current, else (with
 * partial_ok) model_graph_partial's, else NULL (a reference); known: g is
 * in the model, with its capture and site; have_live: live, as
 * model_graph_live_exec answers. */
struct model_inst_view {
	struct cg_summary *sum;
	int known, have_live;
	uint64_t capture;
	uint32_t site;
	uint32_t churn; /* g's churn entry (model_graph_churn_set) */
	struct cg_exec_view live;
};
void model_graph_inst_view(CUgraph g, int partial_ok, struct model_inst_view *o);
/* Call before g is destroyed or changed through a hook: executables whose
 * summary of g is still partial get the full one now, while g is as they
 * were instantiated from. */
void model_graph_settle(CUgraph g);
/* Whether g holds a copy node, or may (a query failed): its node types
 * only, through capture-safe queries, no lock held. partial: the summary
 * g was instantiated with, or NULL; when its capture's tally proved no
 * copy, one node-count query answers. *kernels: g's kernel nodes when the
 * answer is 0 (the tally's, or counted in the same pass), else -1. */
int model_graph_copies(CUgraph g, const struct cg_summary *partial, int *kernels);
/* How many copy checks were made, and how many of them the tally answered
 * (the exit summary's copy_checks). */
void model_graph_copy_checks(long long *all, long long *tallied);
void model_summary_free(struct cg_summary *s);
/* What makes two captures "the same" for the memory samples (steady
 * captures, devices.c): node count, memory nodes and their bytes. Never 0. */
uint64_t model_summary_shape(const struct cg_summary *s);
/* One more reference to s (NULL stays NULL); returns s. */
struct cg_summary *model_summary_ref(struct cg_summary *s);
/* Exec instantiated from g that is still alive (memory-node graphs). */
int model_graph_live_exec(CUgraph g, struct cg_exec_view *out);
int model_graph_info(CUgraph g, int *origin, uint64_t *capture, uint32_t *site, int *mem_nodes);
/* Identity (issue 35): the model's ids of a graph and an executable.
 * graph and exec are process-unique (a handle that comes back after a
 * destroy is another graph with another id; each instantiation is a new
 * exec id); cuda_graph and cuda_exec are the driver's own (CUDA 13.1+,
 * cuGraphGetId, cuGraphExecGetId); exec_graph is the id of the graph the
 * exec was instantiated from. 0: unknown (a handle the model does not
 * know, a driver without the query). */
struct model_ids {
	uint64_t graph, exec, exec_graph;
	unsigned cuda_graph, cuda_exec;
};
/* The ids of g and e (either NULL); takes gx_lock. */
void model_ids_get(CUgraph g, CUgraphExec e, struct model_ids *out);
/* The same as a record's ids part (records.def: graph_id, cuda_graph_id,
 * exec_id, cuda_exec_id; emit_ids_put writes it in an extension). */
static inline struct emit_ids model_ids_emit(const struct model_ids *m)
{
	return (struct emit_ids){
	    .graph = m->graph, .cuda_graph = m->cuda_graph, .exec = m->exec, .cuda_exec = m->cuda_exec};
}
/* model_ids_get as a record's ids part. */
struct emit_ids model_ids_of(CUgraph g, CUgraphExec e);

/* repeat: a steady instantiation with nothing to say; the exec is a repeat
 * when g is a repeat graph too (returned) until it is updated. kernels:
 * g's kernel nodes when the caller knows them (model_graph_copies), else
 * -1 (counted from a full summary, else by a query per node). nccl (may
 * be NULL): *nccl gets model_nccl_exec_from(e, g, capture, cap_site), in
 * the same lock round trip. lg_pending: the ledger's pending entry for e
 * (ledger_exec_pending: g, site, capture, cap_site) is kept on the exec,
 * the ledger having none for e (ledger_exec_known); 0 forgets one. */
int model_exec_new(CUgraphExec e, CUgraph g, uint64_t flags, uint32_t site, struct cg_summary *sum, int repeat,
		   int kernels, uint64_t capture, uint32_t cap_site, int *nccl, int lg_pending);
/* Returns the exec's leaks, *leaks malloc'd (the caller frees; NULL when
 * none); *repeat (may be NULL): it was still a repeat exec. *lr: the facts
 * of its "launches" record (destroy), count 0 when none is owed (never
 * launched), which the caller writes before the leaks; *lr_quiet: that
 * record belongs to a steady cycle (cg_log_life_level). *lg_pending (may be
 * NULL): the exec still held its ledger pending entry (model_exec_new), so
 * the ledger has nothing of e (no ledger_exec_gone owed). */
int model_exec_destroy(CUgraphExec e, struct model_leak **leaks, int *repeat, struct ev_launches *lr, int *lr_quiet,
		       int *lg_pending);
int model_exec_view(CUgraphExec e, struct cg_exec_view *out);
/* Copy of the exec's memory nodes (caller frees). */
int model_exec_mnodes(CUgraphExec e, struct cg_mnode **out);
struct cg_summary *model_exec_summary(CUgraphExec e);
/* model_exec_summary(e) and model_graph_summary(g) (references, either
 * NULL), in one lock round trip when both are ready (an update's common
 * case). */
struct cg_exec;
/* What model_update_summaries saw of exec e and graph g under gx_lock,
 * for model_exec_updated_alike to reuse while the model epoch has not
 * moved since the update's analysis began (no exec made or destroyed, no
 * graph changed or destroyed): e's exec (NULL: unknown), and g's NCCL work
 * as model_nccl_exec_from(e, g, 0, 0) gives it to e (model-int.h
 * model_nccl_of_graph_locked). */
struct cg_update_seen {
	struct cg_exec *x;
	uint64_t capture;
	uint32_t site;
	int nccl;
};
void model_update_summaries(CUgraphExec e, CUgraph g, struct cg_summary **old, struct cg_summary **nu,
			    struct cg_update_seen *seen);
void model_exec_updated(CUgraphExec e, CUgraph g, struct cg_summary *sum);
void model_exec_update_failed(CUgraphExec e);
/* A successful update of e from the summary it already holds, without
 * memory nodes: nothing the model keeps changes but the count (no lock). */
void model_exec_updated_same(CUgraphExec e);
/* The known-update memo (hooks/update.c's fast path). The model epoch
 * moves with every change an update's analysis reads: a graph's nodes or
 * memory nodes, a graph destroyed, an executable instantiated or
 * destroyed, the ledger's ranges or stale executables. An update of e from
 * g that the full analysis found to say nothing and to change nothing but
 * the summary e runs -- g's summary is e's own, or of e's class: the same
 * topology hash, refusal and pointer fingerprints, no memory node, no
 * child graph (model_memo_class below) -- is remembered, up to
 * EXEC_MEMO_N graphs per exec, with the epoch read before that analysis,
 * unless the epoch moved meanwhile (then, or at another epoch or class,
 * the memo starts again). Any other change of e (instantiated again,
 * update failed, rewritten, destroyed, an update from outside its class)
 * forgets it. A hit (lock-free: slot + 1, else 0) means the same analysis
 * would say the same again, whichever remembered graph it is from.
 * model_update_memo_set: after an update from e's own summary (sum, a
 * borrowed reference); model_exec_updated_alike: after one from another
 * summary of e's class, which e runs from now on (sum consumed), and e
 * takes g's NCCL work as model_nccl_exec_from(e, g, 0, 0) would, in the
 * same lock round trip: what seen (model_update_summaries) holds, when the
 * epoch is still the analysis's (no lookup then). */
uint64_t model_epoch_now(void);
void model_update_memo_set(CUgraphExec e, CUgraph g, const struct cg_summary *sum, uint64_t epoch);
void model_exec_updated_alike(CUgraphExec e, CUgraph g, struct cg_summary *sum, uint64_t epoch,
			      const struct cg_update_seen *seen);
int model_update_memo_hit(CUgraphExec e, CUgraph g, struct cg_exec **x);
/* The memo class of a summary: 0 when no update from or to it is
 * remembered across summaries (partial; a hash or fingerprint not computed;
 * memory nodes; child graphs, whose changes through their own handles the
 * class would not see); else its topology hash and its refusal and pointer
 * fingerprints (nodes.h), mixed. Between two summaries of one class the
 * update rules find nothing (rules/update.c: equal topology hashes skip
 * the node loop, equal refusal fingerprints the refusal pass; no memory
 * node: no CGS002, CGS003, CGS012), the pointer diff writes nothing below
 * debug and the ledger has no reference to redo (equal pointer
 * fingerprints, nodes.c nodes_update_diff, ledger.c ledger_same_ptrs).
 * Inline: an update's hook asks it on its steady path (a call is a code
 * line more, cold in lockstep). model_memo_classed: whether s has a class. */
static inline int model_memo_classed(const struct cg_summary *s)
{
	return s && !s->partial && s->topo && s->sig && s->ptrs && !(s->n_alloc + s->n_free) && !s->n_kids;
}
static inline uint64_t model_memo_class(const struct cg_summary *s)
{
	return model_memo_classed(s) ? cg_mix64(cg_mix64(s->topo, s->sig), s->ptrs) | 1 : 0;
}
/* Whether an update from old to nu is of one memo class (see above): the
 * hashes the class mixes, compared one by one (no mix computed). */
static inline int model_update_alike(const struct cg_summary *old, const struct cg_summary *nu)
{
	return model_memo_classed(old) && model_memo_classed(nu) && old->topo == nu->topo && old->sig == nu->sig &&
	       old->ptrs == nu->ptrs;
}
/* A memo hit (slot and x, from model_update_memo_hit) the driver then
 * answered with success: e runs that slot's summary now; counted (no lock). */
void model_exec_updated_known(struct cg_exec *x, CUgraphExec e, int slot);
/* The policy re-instantiated app from g (the new real exec is set first,
 * with model_exec_set_real): the exec's graph and summary follow. */
void model_exec_rewritten(CUgraphExec app, CUgraph g, struct cg_summary *sum);
/* The one map from an application's exec handle to the real exec standing
 * behind it: the handle itself until the policy rewrites it, and for an
 * exec the model does not know. Lock-free (the launch index). The policy
 * writes it (model_exec_set_real, under its own lock) and must forget a
 * handle before the model drops it (model_exec_destroy). */
CUgraphExec model_exec_real_of(CUgraphExec app);
/* real stands behind app from now on. Returns 0 when app is unknown. */
int model_exec_set_real(CUgraphExec app, CUgraphExec real);

/* Launch path: lock-free. Returns the launch number (1 = first launch) and
 * whether the previous launch left graph allocations unfreed. */
struct cg_exec;
struct cg_exec *model_exec_fast(CUgraphExec e);
/* The live exec e's id (model_ids' exec), lock-free as model_exec_fast; 0
 * when e is not live. */
uint64_t model_exec_id_fast(CUgraphExec e);
/* The real exec standing behind the application's handle (lock-free). */
CUgraphExec model_exec_real(struct cg_exec *x);
long long model_exec_launched(struct cg_exec *x, int *unfreed_before, int *autofree);
void model_exec_launch_failed(struct cg_exec *x);

/* ---- a device's primary context reset (model/reset.c) ------------------ */
/* What a reset made the model forget (the reset's call record). */
struct model_reset {
	int execs, graphs, pools, allocs, captures;
};
/* The live executables a reset of device dev destroyed: those instantiated
 * in its context, every one when the process used no other device.
 * Malloc'd, *n of them; NULL when none (*n 0) or out of memory (*n -1).
 * The hook hands them to the policy (cg_policy_reset) while the model still
 * knows them (the one exec map), then calls model_reset_device. */
CUgraphExec *model_reset_execs(int dev, int *n);
/* cuDevicePrimaryCtxReset(_v2) of dev succeeded: the model forgets its
 * executables (model_reset_execs) and their ledger entries, the graphs
 * (every one when the process used no other device, else those with a
 * memory node on dev or an executable forgotten), dev's pools and current
 * pool, its graph allocations and, with every graph, the live captures.
 * Through the model's removal paths; no record, leak or verdict. Takes
 * each model lock in turn, never two; no driver call. */
void model_reset_device(int dev, struct model_reset *out);

/* ---- pools and allocations --------------------------------------------- */
void model_pool_new(CUmemoryPool p, const CUmemPoolProps *props, uint32_t site);
void model_pool_destroy(CUmemoryPool p);
void model_pool_seen(CUmemoryPool p, int dev, int is_default);
void model_device_set_pool(int dev, CUmemoryPool p, uint32_t site);
CUmemoryPool model_device_pool(int dev, uint32_t *site);
int model_pool_info(CUmemoryPool p, int *ipc, int *is_default, uint32_t *site);
/* A captured allocation's pool in one lock round trip: *pool (NULL: dev's
 * current pool), its ipc, default flag and site (0 when the pool is
 * unknown, as model_pool_info leaves them) and *mdev, the cg_mnode dev of
 * its allocation (the pool's device, else dev; plus one). 1: pool known. */
int model_pool_for_alloc(int dev, CUmemoryPool *pool, int *ipc, int *is_default, uint32_t *site, uint8_t *mdev);
/* A graph allocation observed at creation, counted in its capture (0:
 * none); *out: the facts of its "alloc" record, which the hook writes at
 * *level (emit_alloc; an explicit node adds the peer access it asked for,
 * "access"), filled only where that level passes (the graph's ids are a
 * lock round trip; issue 36: a repeat capture's allocation record is left
 * to debug); out NULL: the model's step alone. *level -1: the capture's
 * own, cg_log_life_level of whether it repeats (model_capture_repeat,
 * asked in the count's lock round trip), set on return. Returns that
 * repeat (0 without a capture). */
int model_alloc_graph_at(const struct cg_mnode *m, CUstream s, uint64_t capture, CUgraph g, const char *api, int *level,
			 struct ev_alloc *out);
static inline void model_alloc_graph(const struct cg_mnode *m, CUstream s, uint64_t capture, CUgraph g, const char *api,
				     struct ev_alloc *out)
{
	int level = CG_L_INFO;
	if (out) /* left unfilled where the level does not pass */
		*out = (struct ev_alloc){0};
	(void)model_alloc_graph_at(m, s, capture, g, api, &level, out);
}
/* Devices and graph-allocation bytes per device of a summary, as fields of
 * an instantiate record: "dev" (the calling context's device, where the
 * exec is instantiated) and "alloc_devs" ({"D": bytes} of its allocation
 * nodes). */
void model_summary_devs_rec(struct cg_rec *r, const struct cg_summary *s);
/* Returns 1 if dptr is a graph allocation and fills its capture id/graph. */
int model_alloc_lookup(CUdeviceptr p, uint64_t *capture, CUgraph *graph, size_t *size, uint32_t *site);
/* A free of dptr outside a graph (cuMemFreeAsync / cuMemFree); updates the
 * outstanding counts of the exec that last allocated it. */
void model_alloc_freed(CUdeviceptr p);

int cg_current_device(void);

/* Whether mem[0..n) holds a node for dptr that is a free node (is_free 1)
 * or an allocation node (is_free 0). */
static inline int model_mnode_has(const struct cg_mnode *mem, int n, CUdeviceptr dptr, int is_free)
{
	for (int k = 0; k < n; k++)
		if (mem[k].dptr == dptr && mem[k].is_free == is_free)
			return 1;
	return 0;
}
/* Device free bytes now (cuMemGetInfo, or under auto the device's last
 * sample when nothing moved since, model/devices.c); 0 when a capture is live. */
int model_sample_free(size_t *free_out);
/* Device memory may have moved (an allocation, free, trim, instantiate,
 * exec destroy, upload, first launch): the next sample is real. */
void model_mem_moved(void);
/* A call that moved device memory has returned, outside any capture
 * (cuMemAlloc, cuMemFree, a destroy of an executable that is no steady
 * cycle's): under auto, while the captures being made are not steady, the
 * sample the next boundary needs is taken now, so that a begin-capture
 * right after reuses it instead of querying inside its hook. */
void model_mem_settled(void);
/* A synchronize returned well, outside any capture: under auto, while the
 * captures being made are not steady, a sample is taken when memory moved
 * since the last such point (the begin-capture that usually follows
 * within a millisecond reuses it). */
void model_mem_quiet(void);
long long model_meminfo_reused(void);
/* Steady captures (devices.c): at a begin from site, whether this capture
 * takes no samples; at its end, what it found (skipped: it was one); at an
 * instantiation of a graph of that capture (id) with a shape, whether it
 * takes none, and after it the delta found. Only under auto. */
int model_meminfo_steady_begin(uint32_t site);
/* Whether the last begin took no samples (model_mem_settled). */
void model_meminfo_begin_was(int steady);
void model_meminfo_steady_capture(uint32_t site, uint64_t capture, int skipped, int have, long long unattributed);
/* The end of capture id in one lock hold: what model_capture_end_facts left
 * in ce (model_meminfo_steady_capture's facts), then, when have_shape, its
 * graph's shape by counts (cshape: nodes, memory nodes), by which a site
 * whose graphs are never instantiated is judged. */
void model_meminfo_steady_ended(uint64_t capture, const struct model_cap_end *ce, int have_shape, uint64_t cshape);
int model_meminfo_steady_inst(uint64_t capture, uint64_t shape);
void model_meminfo_steady_inst_done(uint64_t capture, uint64_t shape, int have, long long delta);
/* Captures and instantiations that took no sample, being steady. */
long long model_meminfo_steady(void);
/* A steady capture's or instantiation's "meminfo" word for its record:
 * "steady" under auto (no sample taken), NULL otherwise (off samples
 * nothing, so says nothing of memory). */
const char *model_meminfo_word(int steady);
/* Full node walks of graphs so far (summary_walk): what the shim paid in
 * node queries (docs/design.md, cost per call type). */
long long model_graph_walks(void);

/* ---- NCCL work in graphs (model/nccl.c, issue 33) ---------------------- */
/* What a full summary s of a captured graph says for the cross-rank view
 * and the NCCL rules. model_nccl_count: its NCCL kernel nodes (nccl-lib.h
 * names). model_nccl_fp: a fingerprint that two ranks running the same
 * program give the same graph (no handle, address or context in it: the
 * topology hash, then per described node its type, kernel name, grid,
 * block, shared memory and copy/memset extent), never 0; made only for an
 * end of capture whose record is written. */
int model_nccl_count(const struct cg_summary *s);
uint64_t model_nccl_fp(const struct cg_summary *s);
/* Graph g's NCCL kernel count, noted at its end of capture with the
 * capture's begin site (a new graph generation forgets it). */
void model_nccl_graph_set(CUgraph g, int nccl, uint32_t begin_site);
/* Exec e, just instantiated or updated from g (capture, cap_site: g's
 * capture and site as the instantiation knows them, 0 unknown: then the
 * ones noted at the end of capture): takes g's NCCL kernel count.
 * Returns it. */
int model_nccl_exec_from(CUgraphExec e, CUgraph g, uint64_t capture, uint32_t cap_site);
/* The NCCL kernel nodes live exec e holds (0: none, or not live). */
int model_nccl_exec(CUgraphExec e);
/* A live executable holding NCCL work. */
struct model_nccl_exec {
	CUgraphExec e;
	CUgraph g;
	uint64_t capture;
	uint32_t cap_site, exec_site;
	int nccl, dev;
	long long launches;
};
/* The live executables holding NCCL work, the first max copied to out.
 * Returns how many there are; with try_only (a dump: the caller may have
 * interrupted a holder of the lock) the lock is only tried, and -1 comes
 * back when it was held. */
int model_nccl_execs(struct model_nccl_exec *out, int max, int try_only);

#endif
