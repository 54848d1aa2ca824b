/*
 * shim/thread.h -- who the calling thread is: its kernel thread id and its
 * name. The bottom of the shim: it calls nothing of the shim, and every
 * module (the log included) may call it.
 */
#ifndef CGSHIM_THREAD_H
#define CGSHIM_THREAD_H

/* The calling thread's id (gettid), read once per thread. */
int cg_gettid(void);
/* The calling thread's name (pthread_getname_np; "" if none), read at most
 * every 50 ms per thread. */
void cg_thread_name(char name[16]);
/* In the child after fork: its one thread has a new id. */
void cg_thread_after_fork_child(void);

#endif
