/*
 * shim/state.h -- readiness state and per-thread context.
 *
 * Concurrency contract:
 *   cg_state is written only by init (SETUP -> READY, under pthread_once),
 *   by cg_degrade() (any -> DEGRADED, once) and by the exit handler
 *   (READY -> FINISHED). Hooks read it with an acquire load and pass through
 *   untouched unless it is READY. DEGRADED means an internal failure: every
 *   hook is a pure pass-through from then on (one warning was written).
 *   cg_tls is thread-local and touched only by its own thread (and reset in
 *   the child after fork).
 * Both are defined in state.c, with cg_degrade(); start-up (cg_ensure_init)
 * is init.h's.
 */
#ifndef CGSHIM_STATE_H
#define CGSHIM_STATE_H

#include "hot.h"
#include <stdint.h>
#include <stdatomic.h>

#include "thread.h" /* cg_gettid, for the modules that had it from here */

enum cg_state_value { CG_SETUP = 0, CG_READY = 1, CG_DEGRADED = 2, CG_FINISHED = 3, CG_OFF = 4 };
extern _Atomic int cg_state;

#define CG_TLS __thread __attribute__((tls_model("initial-exec")))

struct cg_tls {
	int in_shim;			     /* >0 while shim code runs its own driver calls */
	const char *via;		     /* runtime API name when a cuda* hook is on the stack */
	int via_consumed;		     /* a driver hook logged the call on behalf of `via` */
	int via_rc;			     /* driver result seen under `via` */
	int in_init;			     /* this thread runs init_once */
	int door_reg;			     /* door_calls is in doors.c's list */
	_Atomic unsigned long door_calls[4]; /* calls per door (doors.h) */
	_Atomic int *last_call;		     /* this thread's cg_call_slots hid (doors.h) */
	struct cg_call_slot *slot;	     /* this thread's slot (doors.h), NULL: none */
};
extern CG_TLS struct cg_tls cg_tls;

static inline int cg_ready(void)
{
	return atomic_load_explicit(&cg_state, memory_order_acquire) == CG_READY;
}

/* Internal failure: warn once, then pass through for the rest of the process. */
void cg_degrade(const char *why);

#define CG_LIKELY(x) __builtin_expect(!!(x), 1)
#define CG_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define CG_HIDDEN __attribute__((visibility("hidden")))
/* Code that may run before a sanitizer runtime is initialised (the dlsym
 * entry reached from that runtime's own start-up lookups): no
 * instrumentation, and it must call nothing instrumented. */
#define CG_NO_SANITIZE __attribute__((no_sanitize_address, no_sanitize_thread, no_sanitize_undefined, noinline))

#endif
