/*
 * shim/locks.h -- every lock of the shim, defined in one place (locks.def)
 * so that the fork handlers cannot miss one (issue 30: a forked child
 * blocked for ever on a lock the handlers did not know). A module uses its
 * locks by these names; no file defines a lock of its own.
 */
#ifndef CGSHIM_LOCKS_H
#define CGSHIM_LOCKS_H

#include <pthread.h>

#define CG_LOCK(kind, name, fork) extern pthread_##kind##_t name;
#include "locks.def"
#undef CG_LOCK

/* pthread_atfork (init.c): take every TAKE lock in the list's order; release
 * them in the parent; in the child initialise every lock afresh (the child's
 * one thread is the forking thread, and no other exists to hold one). */
void cg_locks_prepare(void);
void cg_locks_parent(void);
void cg_locks_child(void);

#endif
