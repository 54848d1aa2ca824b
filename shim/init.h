/*
 * shim/init.h -- start-up on the first door, and the late exit handler
 * (init.c). The hook wing, above init (shim/layers.txt), calls them; the
 * rooms below reach readiness through state.h only.
 */
#ifndef CGSHIM_INIT_H
#define CGSHIM_INIT_H

#include <stdatomic.h>

#include "state.h" /* CG_HIDDEN */

/* Complete set-up now if no door has yet (thread-safe, once); returns with
 * cg_state past SETUP. A call from set-up's own work passes through.
 * wire: the door's wiring (the hook wing's cgh_wire, the same from every
 * door), called first by set-up: it hands the rooms below the hook wing's
 * record writers, so that start-up calls nothing above it. */
void cg_ensure_init(void (*wire)(void));
/* Once CUDA is in use (first capture): register the exit handler again, so
 * it runs before the CUDA runtime's own atexit teardown. */
void cg_exit_register_late(void);
/* Whether cg_exit_register_late's registration has returned (in this
 * process: a child forked before it registers again itself). */
extern _Atomic int cg_exit_late_registered CG_HIDDEN;
static inline int cg_exit_late_done(void)
{
	return atomic_load_explicit(&cg_exit_late_registered, memory_order_acquire);
}

#endif
