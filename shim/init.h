/*
 * shim/init.h -- start-up on the first door, and the late exit handler
 * (init.c). The hook wing, above init (shim/layers.txt), calls them; the
 * rooms below reach readiness through state.h only.
 */
#ifndef CGSHIM_INIT_H
#define CGSHIM_INIT_H

/* Complete set-up now if no door has yet (thread-safe, once); returns with
 * cg_state past SETUP. A call from set-up's own work passes through. */
void cg_ensure_init(void);
/* Once CUDA is in use (first capture): register the exit handler again, so
 * it runs before the CUDA runtime's own atexit teardown. */
void cg_exit_register_late(void);

#endif
