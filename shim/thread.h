/*
 * shim/thread.h -- who the calling thread is: its kernel thread id and its
 * name. The bottom of the shim: it calls nothing of the shim, and every
 * module (the log included) may call it.
 */
#ifndef CGSHIM_THREAD_H
#define CGSHIM_THREAD_H

#include <pthread.h>
#include <stddef.h>

/* The calling thread's id (gettid), read once per thread. */
int cg_gettid(void);
/* The calling thread's name (pthread_getname_np; "" if none), read at most
 * every 50 ms per thread. */
void cg_thread_name(char name[16]);
/* In the child after fork: its one thread has a new id. */
void cg_thread_after_fork_child(void);

/* A zeroed block of size bytes of the calling thread's own, made at its
 * first call and freed at the thread's exit, one pthread key per kind.
 * *slot is the caller's initial-exec TLS pointer (the fast path reads it
 * first); it is reset at the exit, so a later TLS destructor of the same
 * thread that asks again gets a new block. NULL when it cannot be made;
 * errno kept. */
struct cg_thread_kind {
	_Atomic int state; /* 0 no key yet, 2 being made, 1 made, -1 none can be */
	pthread_key_t key;
};
void *cg_thread_block(struct cg_thread_kind *kind, void **slot, size_t size);

#endif
