/*
 * shim/doors.h -- which doors the process's CUDA calls came through.
 *
 * A door is how the application obtained an entry point: the exported
 * symbol itself (-lcuda, dlsym(RTLD_DEFAULT)), the shim's dlsym on
 * libcuda's handle, cuGetProcAddress (the runtime's way, and
 * cudaGetDriverEntryPoint*'s), or an exported cuda* runtime wrapper.
 * A driver call is counted at the door through which the process first
 * obtained that entry point (one byte per hook, written once); a runtime
 * wrapper's call is counted at the runtime door, and the driver calls it
 * makes again at theirs. Counting is a thread-local add: no shared line on
 * the launch path. The exit summary sums every thread.
 */
#ifndef CGSHIM_DOORS_H
#define CGSHIM_DOORS_H

#include "log.h"
#include "state.h"

enum cg_door { CG_DOOR_EXPORT, CG_DOOR_DLSYM, CG_DOOR_GETPROC, CG_DOOR_RUNTIME, CG_DOOR_COUNT };

/* First door by which each hook was handed out (CG_DOOR_EXPORT if none). */
extern _Atomic unsigned char cg_door_of[] CG_HIDDEN;

void cg_door_register_thread(void) CG_HIDDEN;

/* The last hooked call of each thread, for the fatal record (crashlog.c)
 * and the dump (dump.c): a fixed table that a signal handler or the dump's
 * watchdog reads with no lock and no pointer to follow. A thread takes a
 * free slot (tid 0) at its first call and gives it back at its exit; a
 * thread that finds none writes to a slot nobody reads. Only the owning
 * thread writes its slot (relaxed stores, no clock on the launch path), in
 * whole cache lines of its own. Besides the last call a slot holds:
 *   - the blocking call in progress (cg_block_enter/leave: the BLOCK rows
 *     of hooks.def, the NCCL teardown calls), under a sequence count: bseq
 *     is odd while its fields change,
 *     so a reader that sees the same even count before and after its reads
 *     has one call's fields;
 *   - the thread's last CG_WORK_RING kernel launches and graph launches
 *     (cg_work_kernel/graph: stream, function or exec, the exec's launch
 *     number), each entry three relaxed stores; a reader racing a launch
 *     may pair one entry's stream with the next one's object (dump.md).
 *     An entry whose object is 0 was cleared (its stream destroyed). */
#define CG_CALL_SLOTS 256
#define CG_WORK_RING 4
struct cg_work {
	_Atomic uintptr_t stream, obj;
	_Atomic long long n; /* graph launches: the exec's launch number */
};
struct cg_call_slot {
	_Atomic int tid;
	_Atomic int hid; /* -1: none yet */
	_Atomic unsigned bseq;
	_Atomic int bhid;	   /* the blocking call in progress, -1: none */
	_Atomic int bkind;	   /* what its arguments are (enum cg_block_kind) */
	_Atomic uint64_t bsince;   /* its entry, CLOCK_MONOTONIC ns */
	_Atomic uintptr_t barg[4]; /* its arguments (enum cg_block_kind) */
	_Atomic uint32_t bsite;	   /* its call site (site.h), 0 none */
	_Atomic unsigned kn, gn;   /* kernels and graph launches given so far */
	struct cg_work kern[CG_WORK_RING], graph[CG_WORK_RING];
} __attribute__((aligned(64)));
extern struct cg_call_slot cg_call_slots[CG_CALL_SLOTS] CG_HIDDEN;
/* Slots in use are below this index (a reader's bound). */
extern _Atomic int cg_call_slots_hi CG_HIDDEN;

/* The calling thread's slot for the launch paths, which do not register
 * the thread otherwise: taken once (cold) while the shim is READY. */
static inline struct cg_call_slot *cg_slot_for_work(void)
{
	struct cg_call_slot *t = cg_tls.slot;
	if (CG_UNLIKELY(!t) && !cg_tls.door_reg && cg_ready()) {
		cg_door_register_thread();
		t = cg_tls.slot;
	}
	return t;
}

/* A kernel launch given to stream s (the launch wrappers' fast path: no
 * clock, no lock, three relaxed stores to the thread's own slot). */
static inline void cg_work_kernel(const void *s, const void *f)
{
	struct cg_call_slot *t = cg_slot_for_work();
	if (CG_LIKELY(t != NULL)) {
		unsigned i = atomic_load_explicit(&t->kn, memory_order_relaxed);
		struct cg_work *w = &t->kern[i % CG_WORK_RING];
		atomic_store_explicit(&w->stream, (uintptr_t)s, memory_order_relaxed);
		atomic_store_explicit(&w->obj, (uintptr_t)f, memory_order_relaxed);
		atomic_store_explicit(&t->kn, i + 1, memory_order_release);
	}
}

/* A graph launch of exec e (its n-th) given to stream s. */
static inline void cg_work_graph(const void *s, const void *e, long long n)
{
	struct cg_call_slot *t = cg_slot_for_work();
	if (CG_LIKELY(t != NULL)) {
		unsigned i = atomic_load_explicit(&t->gn, memory_order_relaxed);
		struct cg_work *w = &t->graph[i % CG_WORK_RING];
		atomic_store_explicit(&w->stream, (uintptr_t)s, memory_order_relaxed);
		atomic_store_explicit(&w->obj, (uintptr_t)e, memory_order_relaxed);
		atomic_store_explicit(&w->n, n, memory_order_relaxed);
		atomic_store_explicit(&t->gn, i + 1, memory_order_release);
	}
}

/* Stream s is being destroyed: every work entry naming it is cleared (its
 * object 0: the dump leaves it out and never hands the stale handle to the
 * driver). The one write into other threads' slots; from cuStreamDestroy's
 * hook, before the driver's call. */
void cg_work_stream_gone(const void *s) CG_HIDDEN;

/* The blocking-call fields of the thread's own slot change between these
 * two: the sequence count is odd meanwhile (dump.c's reader retries). */
static inline unsigned cg_block_write_begin(struct cg_call_slot *t)
{
	unsigned q = atomic_load_explicit(&t->bseq, memory_order_relaxed);
	atomic_store_explicit(&t->bseq, q + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	return q;
}

static inline void cg_block_write_end(struct cg_call_slot *t, unsigned q)
{
	atomic_store_explicit(&t->bseq, q + 2, memory_order_release);
}

/* What a blocking call's four arguments are (gen-hooks.py picks the kind
 * of a BLOCK row from its parameters; the dump prints by it):
 *   STREAM  a0 the stream (cuStreamSynchronize*)
 *   EVENT   a0 the event (cuEventSynchronize)
 *   CTX     a0 the context, 0: the current one (cuCtxSynchronize*)
 *   COPY    a0 the stream it is ordered on (0 legacy, 2 per-thread: the
 *           _ptds forms), a1 bytes, a2 destination, a3 source; the
 *           direction is the call's name (HtoD, DtoH, DtoD, else any)
 *   SET     a0 the stream as COPY, a1 elements, a2 destination, a3 the
 *           value; the element size is the call's name (D8, D32)
 *   COMM    a0 the communicator (the NCCL teardown calls) */
enum cg_block_kind { CG_BK_STREAM, CG_BK_EVENT, CG_BK_CTX, CG_BK_COPY, CG_BK_SET, CG_BK_COMM };

/* The calling thread enters blocking call hid of kind with its arguments
 * a[0..3] and site, at now (ns); leaves it. Plain stores to its own slot,
 * no lock. */
static inline void cg_block_enter(int hid, int kind, const uintptr_t a[4], uint32_t site, uint64_t now)
{
	struct cg_call_slot *t = cg_tls.slot;
	unsigned q;
	if (!t)
		return;
	q = cg_block_write_begin(t);
	atomic_store_explicit(&t->bsince, now, memory_order_relaxed);
	atomic_store_explicit(&t->bkind, kind, memory_order_relaxed);
	for (int i = 0; i < 4; i++)
		atomic_store_explicit(&t->barg[i], a[i], memory_order_relaxed);
	atomic_store_explicit(&t->bsite, site, memory_order_relaxed);
	atomic_store_explicit(&t->bhid, hid, memory_order_relaxed);
	cg_block_write_end(t, q);
}

static inline void cg_block_leave(void)
{
	struct cg_call_slot *t = cg_tls.slot;
	unsigned q;
	if (!t)
		return;
	q = cg_block_write_begin(t);
	atomic_store_explicit(&t->bhid, -1, memory_order_relaxed);
	cg_block_write_end(t, q);
}

static inline void cg_door_call(int door)
{
	if (CG_UNLIKELY(!cg_tls.door_reg))
		cg_door_register_thread();
	atomic_store_explicit(&cg_tls.door_calls[door],
			      atomic_load_explicit(&cg_tls.door_calls[door], memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static inline void cg_door_hook_call(int hid)
{
	cg_door_call(atomic_load_explicit(&cg_door_of[hid], memory_order_relaxed));
	atomic_store_explicit(cg_tls.last_call, hid, memory_order_relaxed); /* set by the registration */
}

/* A lookup through door handed out hook hid's wrapper. */
void cg_door_routed(int hid, int door) CG_HIDDEN;
/* A lookup of a hooked name returned an entry the shim cannot route
 * (a version it does not hook): warn once per name. */
void cg_door_unroutable(const char *name, int version, unsigned long long flags) CG_HIDDEN;
/* A CUDA call passed through untouched because set-up was not possible at
 * that moment (made from inside the shim's own set-up). */
void cg_door_early(void) CG_HIDDEN;
/* The exit summary's door counts: calls per door (names[i]: calls[i]),
 * lookups routed by dlsym and by cuGetProcAddress (lookup_names[i]:
 * lookups[i]), calls passed through during set-up. */
struct cg_door_counts {
	const char *names[CG_DOOR_COUNT];
	unsigned long long calls[CG_DOOR_COUNT];
	const char *lookup_names[2];
	unsigned long long lookups[2];
	unsigned long long early;
};
void cg_door_counts(struct cg_door_counts *o) CG_HIDDEN;
/* Any CUDA call (lookups aside) reached the shim in this process. */
int cg_door_any_call(void) CG_HIDDEN;
void cg_door_after_fork_child(void) CG_HIDDEN;

#endif
