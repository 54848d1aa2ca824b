/*
 * shim/hooks/hooks.h -- private header of the driver hooks, split by API
 * family: graph.c (graphs and nodes), exec.c (instantiate, exec destroy),
 * update.c, launch.c (launch, upload), capture.c (stream capture, events,
 * synchronize), memory.c (allocation, pools); capture-map.c (the capture
 * map's other routes), capture-rules.c (the capture rules' lookups), gen.c
 * (the GEN/EXEC/EXECN/UNSAFE/CAPINFO rows' helpers and parts), runtime.c, vmm.c.
 *
 * The envelope (every row of hooks.def but the CUSTOM ones) is generated once by
 * gen-hooks.py: readiness and pass-through (cg_call_begin), the
 * application's errno to the real call and the call's errno back (call.h),
 * the call record. A hook writes only its parts, named by convention and
 * called in this order, each once:
 *   cgh_<name>_pre   before the driver
 *   cgh_<name>_post  after it: the model update
 *   cgh_<name>_rec   the call record's own fields
 *   cgh_<name>_done  after the call record (records that follow it)
 * The CUSTOM rows (hooks.def lists them and why) write the whole wrapper.
 *
 * The sequence a hook follows (contract):
 *   1. translate the arguments (the application's exec handle to the real
 *      one: cg_policy_exec)
 *   2. look the model up (summaries, captures, pools), once
 *   3. ask the rules for verdicts (rules/verdict.h: pure, no writes)
 *   4. let the policy decide on them (count instead of write, batch,
 *      abort), from the verdicts and its own state only
 *   5. hand the verdicts to rules.c, the one writer of violation records
 *      (they precede the call, so a debugger stops before it), then act on
 *      the policy's abort
 *   6. call the driver; the policy may then replace a refusal it was
 *      asked to avert (reinstantiate), from the driver's answer only
 *   7. update the model (and the ledger) with the answer
 *   8. write the call's record
 * Steps 1-5 are a pre part, 6 the envelope, 7 the post part, 8 the rec
 * (and done) parts. Each step runs once and no step calls back into an
 * earlier one. Out of line still:
 *   - update.c follows it step by step, but for one record out of place:
 *     the mismatch (the driver's answer is not the predicted one) is
 *     written before step 7, and the ledger may write CGS020 in step 7;
 *     the same holds for the mismatch records of the capture-unsafe calls
 *     (post parts of memory.c, capture.c, capture-map.c, gen.c UNSAFE) and
 *     for instantiate (exec.c: CGS020 from the ledger in step 7);
 *   - the capture rules (capture-rules.c, rules.c's cg_rule_capture_unsafe
 *     and cg_rule_unsafe_violation) still fold lookup, verdict and write
 *     into one call: steps 2-5 in one helper, not yet split into a pure
 *     verdict and its write;
 *   - the CUSTOM hooks: the launch fast path (launch.c, capture-map.c's
 *     LIVE_CAPTURE_HOOK) does no step at all while no capture is live, and
 *     begin/end capture, exec destroy and update keep their own order.
 */
#ifndef CGSHIM_HOOKS_H
#define CGSHIM_HOOKS_H

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../call.h"
#include "cgshim/record.h"
#include "../config.h"
#include "../decide.h"
#include "../dump.h"
#include "../emit.h"
#include "../init.h"
#include "../ledger.h"
#include "../model.h"
#include "../nccl-lib.h"
#include "../nodes.h"
#include "../policy.h"
#include "../rules.h"
#include "../rules/verdict.h"
#include "exports.h"
#include "../site.h"

/* The hook's entry (hooks-env.c, the CUSTOM wrappers, getproc.c):
 * cg_call_begin() decides in a few loads whether the shim acts on this
 * call: not when the shim is not READY (it starts it on the first door),
 * not for the shim's own driver calls (cg_tls.in_shim). When it returns 0
 * the hook must forward untouched. Here, not in call.h: it calls up into
 * init.c and hooks/capture.c (shim/layers.txt). */
/* Nonzero until the begin-capture hook's first-use work is done
 * (cg_warm_capture, hooks/capture.c): one relaxed load per hooked call. */
extern _Atomic int cg_warm_pending CG_HIDDEN;
void cg_warm_capture(int hid) CG_HIDDEN;

static inline int cg_call_begin(struct cg_call *c, int hid, int flags)
{
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (CG_UNLIKELY(st != CG_READY)) {
		if (st != CG_SETUP)
			return 0;
		CG_KEEP_ERRNO(cg_ensure_init(cgh_wire)); /* start-up must not reach the application's errno */
		if (!cg_ready())
			return 0;
	}
	if (CG_UNLIKELY(cg_tls.in_shim))
		return 0;
	CG_PROF_ENTER(hid);
	if (hid != HID_cuGetProcAddress && hid != HID_cuGetProcAddress_v2)
		cg_door_hook_call(hid);
	if (CG_UNLIKELY(atomic_load_explicit(&cg_warm_pending, memory_order_relaxed)))
		cg_warm_capture(hid);
	/* From a register: as constants, hid and flags were one 8-byte store
	 * that GCC loads from .rodata, a line of its own in each hook (issue
	 * 36); so they are two stores of immediates. */
	__asm__("" : "+r"(hid));
	c->hid = hid;
	c->flags = flags;
	c->t0 = cg_log_on(CG_L_INFO) && !(flags & CG_CALL_NOCLOCK) ? cg_now_ns() : 0;
	c->t_in = c->t_out = 0;
	return 1;
}

/* CGS007 (capture-rules.c): whether a capture-unsafe call by this thread
 * (what it does, or NULL to say it from api) collides with a live capture
 * under this thread's capture mode. When it does, the violation naming the
 * calling thread, its site (native and Python frames) and the capture the
 * call will break is written, before the call, and 1 is returned. */
int cg_rule_capture_unsafe(const char *api, const char *what);
void cg_rule_unsafe_violation(const char *api, const struct cg_capture_view *cv, const char *what);
/* capture-rules.c: the map's other routes (CGS013-CGS016). Each returns
 * 1 when the call will break a capture, the violation written. */
int cg_caprule_event(const char *api, CUevent ev);
int cg_caprule_legacy(const char *api, CUstream s, int ptsz, const char *what);
int cg_caprule_merge(const char *api, uint64_t capture, CUevent ev);
/* CGS016, CGS022 at an end: cv is the capture's view (NULL: the model has
 * none), found once by the end hook for all its checks. */
int cg_caprule_end_thread(const char *api, uint64_t capture, CUstream s, const struct cg_capture_view *cv);
/* CGS021: an end of capture on s, which the driver says captures nothing
 * (the hook asked). Writes the violation and returns 1. */
int cg_caprule_end_none(const char *api, CUstream s);
/* CGS022: an end of capture on s, which is in capture (the driver's
 * answer for s) but did not begin it. */
int cg_caprule_end_unmatched(const char *api, uint64_t capture, CUstream s, const struct cg_capture_view *cv);
/* CGS023: a begin-capture on s, which is in capture (the driver's answer
 * for s). Not a breaker: the capture goes on. 2 when that capture is
 * known broken (then the refused begin names it abandoned), 1 when not. */
int cg_caprule_begin_capturing(const char *api, uint64_t capture, CUstream s);
int cg_caprule_device_sync(const char *api);
void cg_caprule_failed(const char *api, uint64_t capture, int rc);
/* After a predicted call: a different answer than predicted_rc is a mismatch. */
void cg_caprule_after(const char *api, int rule, int predicted_rc, int rc);

/* A hook's record step (hooks/call.c). cg_call_rec begins the "call"
 * record for c if its level passes (the caller adds its key arguments and
 * calls rec_end(); returns r->on); cg_call_end records a call with no extra
 * arguments. Both count a failure and tell the model of a 900. */
int cg_call_rec(struct cg_rec *r, struct cg_call *c, CUresult rc) CG_HIDDEN;
/* cg_call_rec in its two steps: the bookkeeping (the failure counted, the
 * via consumed, a hidden repeat counted) and whether the record is to be
 * written; then, only where it is, its opening (cg_call_rec_open). For a
 * hook whose record buffer (4 KB) would put every call below it on stack
 * lines of their own when nothing is written (issue 36). */
int cg_call_rec_wanted(struct cg_call *c, CUresult rc) CG_HIDDEN;
int cg_call_rec_open(struct cg_rec *r, struct cg_call *c, CUresult rc) CG_HIDDEN;
/* The same for a record written later than its call (a begin-capture
 * record is deferred until its capture ends: see hooks/capture.c): via is
 * the runtime name the call came through, end the time the hook finished
 * (call.c: cg_call_facts). Counts no failure, consumes no via. */
int cg_call_rec_at(struct cg_rec *r, const struct cg_call *c, CUresult rc, const char *via, uint64_t end) CG_HIDDEN;
void cg_call_end(struct cg_call *c, CUresult rc) CG_HIDDEN;

/* Frames of the shim between a wrapper and cg_site_here's caller: the
 * wrapper itself. SITE_SKIP_PART: from a hook's pre/post/rec part, called
 * by the generated wrapper. */
#define SITE_SKIP 1
#define SITE_SKIP_PART (SITE_SKIP + 1)

/* A part's helper that counts frames (cg_site_here, cg_verdict_write's
 * skip) keeps a frame of its own (CGH_FRAMED) and is not tail-called
 * (CGH_FRAME_END() after the call), so the count holds. Counting short is
 * harmless (the shim's frames are skipped anyway); counting long drops the
 * application's frame. */
#define CGH_FRAMED __attribute__((noinline))
#define CGH_FRAME_END() __asm__ __volatile__("" ::: "memory")

/* The dump's note of a blocking call (dump.h): the BLOCK rows of hooks.def
 * (their generated envelope, after the pre part) note the call, its kind
 * and four arguments (doors.h, enum cg_block_kind), and end the note right
 * after the driver's answer: only while dumps can be asked for.
 * cgh_block_note takes the call site (skip: the wrapper's frame). */
void cgh_block_note(int hid, int kind, uintptr_t a0, uintptr_t a1, uintptr_t a2, uintptr_t a3) CG_HIDDEN;
#define CGH_BLOCK_ENTER(hid, kind, a0, a1, a2, a3)                                                                     \
	do {                                                                                                           \
		if (CG_UNLIKELY(atomic_load_explicit(&cg_dump_on, memory_order_relaxed))) {                            \
			cgh_block_note((hid), (kind), (uintptr_t)(a0), (uintptr_t)(a1), (uintptr_t)(a2),               \
				       (uintptr_t)(a3));                                                               \
			CGH_FRAME_END();                                                                               \
		}                                                                                                      \
	} while (0)
#define CGH_BLOCK_LEAVE()                                                                                              \
	do {                                                                                                           \
		if (CG_UNLIKELY(atomic_load_explicit(&cg_dump_on, memory_order_relaxed)))                              \
			cg_dump_unblocked();                                                                           \
	} while (0)

/* What a hook's pre part hands its post and rec parts, in the generated
 * envelope of the ENV and LIFE rows of hooks.def (gen-hooks.py): zeroed on
 * entry, on the wrapper's stack. */
struct cgh_frame {
	uint32_t site;
	int verdict;	     /* a rule's prediction, checked after the call */
	int capturing;	     /* the stream is capturing (capture id, graph) */
	int ipc, is_default; /* the pool's kind (stream-ordered allocation) */
	uint8_t mdev;	     /* its allocation's device + 1 (cg_mnode dev; model_pool_for_alloc) */
	uint64_t id;
	CUgraph g;
	CUmemoryPool pool;
	int predicted_rc, rule; /* the verdict's prediction (instantiate) */
	int want;		/* an in/out argument's value on entry */
	int have_free;		/* 1: free_before sampled, 2: free_after too */
	size_t free_before;	/* device memory before the call */
	size_t free_after;	/* instantiate: after it (have_free 2) */
	int steady;		/* instantiate: a steady capture's graph, no samples */
	int repeat;		/* instantiate, alloc in a capture: a repeat's call (call.h) */
	uint64_t cap, shape;	/* instantiate: the graph's capture, its shape */
	uint32_t cap_site;	/* instantiate: that capture's begin site */
	int nccl;		/* instantiate: NCCL kernel nodes of the graph (model/nccl.c) */
	struct cg_summary *sum; /* the graph's summary, owned until _done */
	uint32_t churn;		/* instantiate: the graph's churn entry (model.h), 0 none */
	uint64_t t_inst;	/* instantiate: clock at the pre step's end, when churn */
	int deps;		/* a capture dependency change counted before the call (model_deps_change_enter) */
};

/* model/devices.c: the graph-memory record (first launch, exec destroy). */
extern int cg_model_graphmem(const char *when, CUgraphExec e, struct ev_graphmem out[CG_MAX_DEV]);

/* Set by the first cuGraphExecUpdate of the process (update.c); from then
 * on graphs are walked as their capture ends (capture.c). */
extern _Atomic int cgh_updates_seen;

/* gen.c: the fixed steps of the generated EXECN and CAPINFO rows. */
CUgraphNode cgh_exec_node(CUgraphExec app, CUgraphNode node, const char *api);
void cgh_capinfo_seen(CUresult rc, CUstream s, const CUstreamCaptureStatus *st, const cuuint64_t *id, int ptsz,
		      const char *api);

/* Node records of summary s of graph g at level (exec.c): side "exec" or
 * "graph" (exec e) for both sides of a refused update, NULL at debug
 * level for every instantiated graph. */
/* capture-records.c: hands the model the writer of its capture records
 * (model_capture_records_set); at start-up, before the hooks are live. */
void cgh_capture_records_init(void);
void cgh_emit_nodes_at(CUgraph g, const struct cg_summary *s, int level, const char *side, CUgraphExec e);

/* nccl.c: the first graph holding NCCL kernels was seen (capture.c): the
 * dump gets its part listing the executables that hold NCCL work. */
void cgh_nccl_seen(void);

/* capture.c: whether the driver says s captures nothing (a capture-safe
 * query; never asked of the legacy stream). */
int cgh_stream_captures_nothing(CUstream s, int ptsz);
/* capture-map.c, CGS025: whether this thread launched kernels outside
 * capture id (a TLS load); then cgh_escape_end after the end of capture
 * id (cv found before the end) into graph g. When this thread launched kernels outside
 * it (CGS024's) and g has no kernel node, named; the escapes are
 * forgotten either way. Cold; a TLS load when nothing escaped. */
int cgh_escaped(uint64_t id);
void cgh_escape_end(uint64_t id, const struct cg_capture_view *cv, CUgraph g);

/* A repeat's call (call.h): its record is left to debug level. */
static inline void cgh_call_repeat(struct cg_call *c, int repeat)
{
	if (repeat)
		c->flags |= CG_CALL_REPEAT;
}

/* The ledger (model) finds, the rules' writer writes: the model never
 * calls up into the rules (shim/layers.txt). */
/* base freed or [base, base+size) unmapped: CGS018 for each executable it
 * made stale, after the call. Returns how many it made stale. */
static inline int cgh_ledger_free(uint64_t base, uint64_t size, int host, const char *api)
{
	struct ledger_freed f;
	int n = ledger_free(base, size, host, &f);
	if (f.n || f.more)
		cg_rule_stale_frees(&f, api);
	return n;
}
/* An executable's references from its full summary; CGS020 for its copies
 * from pageable host memory. */
static inline void cgh_ledger_exec_set(CUgraphExec e, CUgraph g, uint32_t exec_site, const struct cg_summary *sum,
				       const char *api)
{
	struct ledger_pageable p;
	ledger_exec_set(e, g, exec_site, sum, &p);
	if (p.n)
		cg_rule_pageable_copies(&p, api);
}
/* Launch/upload path: one relaxed load unless an executable is stale; then
 * CGS019 before the call. Returns 1 when e is stale. */
static inline int cgh_ledger_launch(CUgraphExec e, const char *api)
{
	struct cg_stale why;
	int first = 0;
	if (__builtin_expect(!ledger_launch(e, &why, &first), 1))
		return 0;
	cg_rule_stale_launch(&why, api, first);
	return 1;
}

/* The parts' prototypes, generated from hooks.def (gen-hooks.py): where
 * the build has them on its include path, a part defined with another
 * signature than its row's is a compile error. */
#if __has_include("hooks-parts.h")
#include "hooks-parts.h"
#endif

#endif
