/*
 * shim/rules/verdict.h -- what a rule answers. A rule (shim/rules/<family>.c)
 * is a pure function of the event (the call's arguments, the summaries the
 * hook looked up) and a read-only model view: it writes nothing, calls no
 * driver and takes no lock of its own. It fills verdicts; the hook hands
 * them to rules.c (cg_verdict_write), the only writer of violation
 * records, or counts them (cg_verdict_count) where policy says a record
 * would repeat one already written.
 *
 * A verdict holds the rule, its predicted result, the reason text and the
 * objects involved as the ordered fields of the violation record; the
 * order is the record's, so a record stays byte-identical to the one the
 * hooks wrote before the rules moved here.
 */
#ifndef CGSHIM_RULES_VERDICT_H
#define CGSHIM_RULES_VERDICT_H

#include <stdint.h>

#include "../model.h"

/* Field kinds. SITE_HERE: the caller's site, taken by the writer only when
 * the record is written (a backtrace costs microseconds); EXEC_SITE: the
 * site of exec val, looked up by the writer only when written. */
enum {
	CG_VF_HEX,
	CG_VF_U64,
	CG_VF_INT,
	CG_VF_BOOL,
	CG_VF_STR,
	CG_VF_WORD,
	CG_VF_SITE,
	CG_VF_SITE_HERE,
	CG_VF_EXEC_SITE,
	CG_VF_DPTRS,
	CG_VF_HANDLES,
	CG_VF_CALLER
};
/* WORD: a string needing no escaping (rec_word). HANDLES: a JSON array of
 * the val handles at ptr. CALLER: the calling thread, as the fields
 * call_tid, call_thread and call_mode, taken by the writer. */
/* DPTRS: a JSON array of the allocation nodes' addresses among the val
 * struct cg_mnode at ptr (free nodes skipped). */

#define CG_VERDICT_FIELDS 18
#define CG_VERDICT_MSG 512

struct cg_vfield {
	const char *key; /* a string literal */
	int kind;	 /* CG_VF_* */
	uint64_t val;	 /* HEX, U64, INT (as int64), SITE, EXEC_SITE */
	const char *str; /* STR: a string that outlives the verdict (interned or static) */
	const void *ptr; /* DPTRS: the nodes, alive until the verdict is written */
};

struct cg_verdict {
	int rule;	  /* R_* (rules.h) */
	int predicted_rc; /* CUresult the driver will answer, -1 when it accepts */
	int repeat;	  /* a repeat of a record already written: counted, not written */
	int hint;	  /* this finding is a hint, below its rule's grade (CGS011 at exit) */
	int nf;
	struct cg_vfield f[CG_VERDICT_FIELDS];
	char msg[CG_VERDICT_MSG];
};

static inline void cg_verdict_init(struct cg_verdict *v, int rule, int predicted_rc)
{
	v->rule = rule;
	v->predicted_rc = predicted_rc;
	v->repeat = 0;
	v->hint = 0;
	v->nf = 0;
	v->msg[0] = 0;
}

static inline void cg_vf_(struct cg_verdict *v, const char *key, int kind, uint64_t val, const char *str)
{
	if (v->nf < CG_VERDICT_FIELDS)
		v->f[v->nf++] = (struct cg_vfield){key, kind, val, str, 0};
}
#define cg_vf_hex(v, k, x) cg_vf_((v), (k), CG_VF_HEX, (uint64_t)(x), 0)
#define cg_vf_u64(v, k, x) cg_vf_((v), (k), CG_VF_U64, (uint64_t)(x), 0)
#define cg_vf_int(v, k, x) cg_vf_((v), (k), CG_VF_INT, (uint64_t)(int64_t)(x), 0)
#define cg_vf_bool(v, k, x) cg_vf_((v), (k), CG_VF_BOOL, (uint64_t) !!(x), 0)
#define cg_vf_str(v, k, s) cg_vf_((v), (k), CG_VF_STR, 0, (s))
#define cg_vf_word(v, k, s) cg_vf_((v), (k), CG_VF_WORD, 0, (s))
#define cg_vf_caller(v) cg_vf_((v), "call_tid", CG_VF_CALLER, 0, 0)
#define cg_vf_site(v, k, s) cg_vf_((v), (k), CG_VF_SITE, (uint64_t)(s), 0)
#define cg_vf_site_here(v, k) cg_vf_((v), (k), CG_VF_SITE_HERE, 0, 0)
#define cg_vf_exec_site(v, k, e) cg_vf_((v), (k), CG_VF_EXEC_SITE, (uint64_t)(uintptr_t)(e), 0)
static inline void cg_vf_handles(struct cg_verdict *v, const char *key, void *const *h, int n)
{
	cg_vf_(v, key, CG_VF_HANDLES, (uint64_t)n, 0);
	if (v->nf && v->f[v->nf - 1].kind == CG_VF_HANDLES)
		v->f[v->nf - 1].ptr = h;
}
static inline void cg_vf_dptrs(struct cg_verdict *v, const char *key, const struct cg_mnode *m, int n)
{
	cg_vf_(v, key, CG_VF_DPTRS, (uint64_t)n, 0);
	if (v->nf && v->f[v->nf - 1].kind == CG_VF_DPTRS)
		v->f[v->nf - 1].ptr = m;
}

/* The field named key, or NULL (tests and hooks that act on an object). */
static inline const struct cg_vfield *cg_verdict_field(const struct cg_verdict *v, const char *key)
{
	for (int i = 0; i < v->nf; i++)
		if (!__builtin_strcmp(v->f[i].key, key))
			return &v->f[i];
	return 0;
}

/* The read-only model view a rule asks. Every accessor answers from the
 * model (or a capture-safe query) and changes nothing; a rule calls one
 * only on the path that needs it, so the common case costs no lookup.
 * cg_model_view_live (rules.c) is the process's; unit tests pass their own. */
struct cg_model_view {
	/* An exec of g that is alive (model_graph_live_exec). */
	int (*graph_live_exec)(CUgraph g, struct cg_exec_view *out);
	/* A pool's IPC and default flags and creation site (model_pool_info). */
	int (*pool_info)(CUmemoryPool p, int *ipc, int *is_default, uint32_t *site);
	/* The calling thread's current context, 0 when unknown. */
	uint64_t (*current_ctx)(void);
	/* A graph allocation holding p: its capture and site (model_alloc_lookup). */
	int (*alloc_lookup)(CUdeviceptr p, uint64_t *capture, uint32_t *site);
};
extern const struct cg_model_view cg_model_view_live;

/* ---- update (shim/rules/update.c) ---------------------------------------- */

/* cuGraphExecUpdate of exec e from graph g: the exec's summary (old, kept
 * since instantiate) and the graph's (nu), either NULL when unknown. */
struct cg_update_ev {
	CUgraphExec e;
	CUgraph g;
	const struct cg_summary *old, *nu;
};

/* What CGS001 predicts, beside its verdict: the update result, the node
 * it names (index and both handles, 0 when the node count differs) and
 * the reason as text (also the policy's rewrite reason). */
struct cg_update_pred {
	int result; /* CUgraphExecUpdateResult */
	uint32_t err_index;
	CUgraphNode err_node, from_node;
	char why[256];
};

/* CGS002: g holds memory nodes and is itself instantiated as another exec. */
int rules_update_instantiated(const struct cg_update_ev *ev, const struct cg_model_view *mv, struct cg_verdict *v);
/* CGS001: the update will fail (node count, a node's type or dependency
 * count, or a node detail the driver refuses). Fills p and v; 0 when not. */
int rules_update_fail(const struct cg_update_ev *ev, const struct cg_model_view *mv, struct cg_update_pred *p,
		      struct cg_verdict *v);
/* Whether the update keeps the exec's memory nodes as they are (then
 * neither CGS003 nor CGS012 can apply). */
int rules_update_same_memory(const struct cg_update_ev *ev);
/* Whether no update rule can apply to an update from old to nu, known in
 * O(1) and without a call (a steady update loop's path, hooks/update.c):
 * both summaries walked, of equal topology hashes and node counts
 * (rules_update_fail's node loop would not run), of equal refusal
 * fingerprints (its refusal pass would find nothing), neither with a
 * memory node (no CGS002, CGS003 or CGS012). When it answers 1,
 * rules_update_instantiated and rules_update_fail answer 0 and
 * rules_update_same_memory 1 (tests/unit/test-rules-update.c). */
static inline int rules_update_none(const struct cg_summary *old, const struct cg_summary *nu)
{
	return old && nu && old->topo && old->topo == nu->topo && old->n_nodes == nu->n_nodes && old->sig &&
	       old->sig == nu->sig && !(old->n_alloc | old->n_free | nu->n_alloc | nu->n_free);
}
/* CGS012 (an allocation from another pool) and CGS003 (an escaping
 * allocation replaced), memory node pair by pair from *pos: fills at most
 * max verdicts, in record order, and returns how many; *pos is where the
 * next call resumes, UINT32_MAX when every pair was seen. */
int rules_update_memory(const struct cg_update_ev *ev, const struct cg_model_view *mv, uint32_t *pos,
			struct cg_verdict *out, int max);
/* A CUgraphNodeType as its record name ("mem_alloc"). */
const char *rules_update_node_type(int t);
/* CUgraphExecUpdateResult as its name ("TopologyChanged"). */
const char *rules_update_result_name(int res);

/* ---- capture (shim/rules/capture.c) -------------------------------------- */

/* me: the calling thread's id. cv, blocking, other, mine: captures the
 * hook looked up (NULL: none). Each returns 1 with the verdict filled. */
int rules_capture_is_legacy(CUstream s, int ptsz);
/* CGS007: a capture-unsafe call (what it does, NULL: said from api) while
 * cv, the capture this thread's mode collides with, is live. */
int rules_capture_unsafe(const char *api, const char *what, const struct cg_capture_view *cv, int me,
			 struct cg_verdict *v);
/* CGS013: a host query of an event recorded in live capture cv. */
int rules_capture_event(const char *api, const struct cg_capture_view *cv, struct cg_verdict *v);
/* CGS014: the legacy stream used while blocking, a blocking capture, is live. */
int rules_capture_legacy(const char *api, CUstream s, int ptsz, const struct cg_capture_view *blocking,
			 const char *what, struct cg_verdict *v);
/* CGS015: a stream of capture (mine) waits on an event of capture other. */
int rules_capture_merge(const char *api, uint64_t capture, const struct cg_capture_view *other,
			const struct cg_capture_view *mine, struct cg_verdict *v);
/* CGS016: capture cv, on stream s, ended from another thread. */
int rules_capture_end_thread(const char *api, uint64_t capture, CUstream s, const struct cg_capture_view *cv, int me,
			     struct cg_verdict *v);
/* CGS021: an end of capture on stream s; none: the driver says s captures
 * nothing (the hook asked). */
int rules_capture_end_not_capturing(const char *api, CUstream s, int none, struct cg_verdict *v);
/* CGS022: an end of capture on stream s, which joined capture cv begun on
 * another stream. 0 when s is cv's origin. */
int rules_capture_end_unmatched(const char *api, CUstream s, const struct cg_capture_view *cv, struct cg_verdict *v);
/* CGS023: a begin-capture on stream s, which is in capture cv (begun on
 * it, or joined). */
int rules_capture_begin_capturing(const char *api, CUstream s, const struct cg_capture_view *cv, struct cg_verdict *v);
/* CGS024: the calling thread began capture cv, still live, and launches
 * (kernel: the function's name, NULL for a copy or memset; what: the call
 * said in words) on stream s, which the driver says is in no capture:
 * route is why it escaped ("legacy_stream", "per_thread_stream",
 * "other_stream"), device the calling thread's current device (-1
 * unknown). */
struct cg_escape_ev {
	CUstream s;
	const char *route, *kernel, *what;
	int device;
	int sync; /* a synchronous copy or memset: a hint (docs/rules/CGS024.md) */
};
int rules_capture_escape(const char *api, const struct cg_escape_ev *ev, const struct cg_capture_view *cv,
			 struct cg_verdict *v);
/* CGS025: capture cv ended into graph g with no kernel node while its
 * thread launched n kernels outside it (kernels: the first names, joined
 * by commas). */
int rules_capture_empty(CUgraph g, int n, const char *kernels, const struct cg_capture_view *cv, struct cg_verdict *v);
/* CGS026: the churn entry cv (model.h) reached the threshold at this
 * capture, whose graph is g. */
int rules_capture_again(const struct model_churn_view *cv, CUgraph g, struct cg_verdict *v);
/* CGS008: capture on stream s ends with n forked streams unjoined
 * (unjoined[], their fork sites); cv: the capture, for its begin site. */
int rules_capture_unjoined(uint64_t capture, CUstream s, CUstream const *unjoined, const uint32_t *fork_sites, int n,
			   const struct cg_capture_view *cv, struct cg_verdict *v);

/* ---- instantiate and launch (shim/rules/instantiate.c) ------------------ */

/* cuGraphInstantiate* of g with flags; sum: g's summary (NULL unknown),
 * site: the call's. */
struct cg_instantiate_ev {
	CUgraph g;
	uint64_t flags;
	const struct cg_summary *sum;
	uint32_t site;
};
/* CGS004: a memory-node graph instantiated again while its exec lives. */
int rules_instantiate_second(const struct cg_instantiate_ev *ev, const struct cg_model_view *mv, struct cg_verdict *v);
/* CGS010: DeviceLaunch with AutoFreeOnLaunch or memory nodes. */
int rules_instantiate_device_launch(const struct cg_instantiate_ev *ev, struct cg_verdict *v);
/* A graph g with mem memory nodes (graph_site: its creation) cloned or
 * made a child (what: how, for the reason) at site. */
struct cg_compose_ev {
	CUgraph g;
	int mem;
	uint32_t site, graph_site;
	const char *what;
};
/* CGS010: a memory-node graph cloned or used as a child. */
int rules_instantiate_compose(const struct cg_compose_ev *ev, struct cg_verdict *v);
/* A launch of exec e: unfreed allocations its previous launch left, its
 * AutoFreeOnLaunch flag, and its memory nodes (mem[0..n)). */
struct cg_launch_ev {
	CUgraphExec e;
	int unfreed, autofree;
	const struct cg_mnode *mem;
	int n;
};
/* CGS005: relaunch with unfreed allocations and no AutoFreeOnLaunch. */
int rules_instantiate_relaunch(const struct cg_launch_ev *ev, struct cg_verdict *v);

/* ---- stream-ordered memory (shim/rules/memory.c) ------------------------- */

/* cuMemAllocAsync-family call api of size bytes from pool (the stream's
 * device's current one when none was given, NULL unknown; ipc and
 * pool_site: the model's answer for it) on stream s while capture
 * (nonzero) captures it, at site. */
struct cg_alloc_ev {
	const char *api;
	size_t size;
	CUmemoryPool pool;
	int ipc;
	uint32_t pool_site;
	CUstream s;
	uint64_t capture;
	uint32_t site;
};
/* CGS006: an allocation from an IPC-capable pool during capture. */
int rules_memory_ipc_pool(const struct cg_alloc_ev *ev, struct cg_verdict *v);
/* cuMemFreeAsync of p on stream s while capture (nonzero) captures it. */
struct cg_free_ev {
	CUdeviceptr p;
	CUstream s;
	uint64_t capture;
};
/* CGS009: the memory freed was not allocated in this capture. */
int rules_memory_free_foreign(const struct cg_free_ev *ev, const struct cg_model_view *mv, struct cg_verdict *v);
/* CGS011: allocation node i of exec e's mem[0..n) outstanding at when
 * ("exit" or "destroy"): not a free node, and no free node of the same
 * graph frees it. */
int rules_memory_leak(CUgraphExec e, const struct cg_mnode *mem, int n, int i, const char *when, struct cg_verdict *v);
/* CGS018: a free or unmap (api) of the range s names made exec s->e
 * stale: silent unless the node's pointer lies in the freed range. */
struct cg_stale;
int rules_memory_stale_free(const struct cg_stale *s, const char *api, struct cg_verdict *v);
/* CGS019: the launch or upload (api) of stale exec s->e: the first one
 * written in full, later ones repeats (counted). */
int rules_memory_stale_launch(const struct cg_stale *s, const char *api, int first, struct cg_verdict *v);
/* CGS020: copy node `node` of exec e reads (what CG_REF_SRC) or writes
 * (CG_REF_DST) bytes of pageable host memory at host. Silent for any other
 * operand (a kernel parameter is no copy). */
int rules_memory_pageable_copy(CUgraphExec e, CUgraph g, uint32_t node, int what, uint64_t host, uint64_t bytes,
			       uint32_t exec_site, uint32_t capture_site, struct cg_verdict *v);

/* ---- NCCL (shim/rules/nccl.c) -------------------------------------------- */

/* A communicator teardown (api: ncclCommDestroy, ncclCommAbort or
 * ncclCommFinalize of comm) while live executables hold NCCL work: n of
 * them, the first shown in x[], each with the first frame of its capture's
 * begin site as text (where[], the hook's lookup; "" unknown). */
#define CG_NCCL_SHOWN 4
struct cg_nccl_teardown_ev {
	const char *api;
	const void *comm;
	int n, shown;
	const struct model_nccl_exec *x;
	CUgraphExec *handles; /* the shown execs' handles, for the record's array */
	char where[CG_NCCL_SHOWN][96];
};
/* CGS027: silent when n is 0. */
int rules_nccl_teardown(const struct cg_nccl_teardown_ev *ev, struct cg_verdict *v);
/* CGS028: [base, base+size) mapped again (cuMemMap) where an unmap made
 * exec s->e stale, and that exec holds nccl NCCL kernel nodes (0: silent). */
int rules_nccl_remap(uint64_t base, uint64_t size, const struct cg_stale *s, int nccl, struct cg_verdict *v);

#endif
