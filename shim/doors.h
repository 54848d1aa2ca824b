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

/* The last hooked call of each thread, for the fatal record (crashlog.c):
 * a fixed table that a signal handler reads with no lock and no pointer to
 * follow. A thread takes a free slot (tid 0) at its first call and gives it
 * back at its exit; a thread that finds none writes to a slot nobody reads.
 * One cache line per slot: the launch path writes its own slot only. */
#define CG_CALL_SLOTS 256
struct cg_call_slot {
	_Atomic int tid;
	_Atomic int hid; /* -1: none yet */
	char pad[56];
};
extern struct cg_call_slot cg_call_slots[CG_CALL_SLOTS] CG_HIDDEN;

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
/* "doors":{...} and "lookups":{...} fields for the exit summary. */
void cg_door_summary(struct cg_rec *r) CG_HIDDEN;
/* Any CUDA call (lookups aside) reached the shim in this process. */
int cg_door_any_call(void) CG_HIDDEN;
void cg_door_after_fork_child(void) CG_HIDDEN;

#endif
