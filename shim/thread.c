/* shim/thread.c -- thread id and thread name cache (thread.h). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "hot.h"
#include "thread.h"

#define THREAD_TLS __thread __attribute__((tls_model("initial-exec")))

static THREAD_TLS int tid; /* 0: not read yet */

CG_HOT int cg_gettid(void)
{
	if (__builtin_expect(!tid, 0))
		tid = (int)syscall(SYS_gettid);
	return tid;
}

void cg_thread_after_fork_child(void)
{
	tid = 0;
}

/* One prctl at most every 50 ms per thread: a begin-capture asks for the
 * name every time, and threads are named at start far more often than
 * renamed (a rename shows within 50 ms). */
CG_HOT void cg_thread_name(char name[16])
{
	static THREAD_TLS char cached[16];
	static THREAD_TLS int64_t cached_at;
	struct timespec t;
	int64_t now = 0;
	if (!clock_gettime(CLOCK_MONOTONIC_COARSE, &t))
		now = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	if (!cached_at || !now || now - cached_at > 50000000) {
		if (pthread_getname_np(pthread_self(), cached, 16))
			cached[0] = 0;
		cached_at = now ? now : 0;
	}
	memcpy(name, cached, 16);
}

/* cg_thread_block: the block follows a header naming the TLS slot that
 * points at it. */
struct block_hdr {
	alignas(max_align_t) void **slot;
};

static void block_free(void *p)
{
	struct block_hdr *h = p;
	*h->slot = NULL;
	free(h);
}

void *cg_thread_block(struct cg_thread_kind *kind, void **slot, size_t size)
{
	struct block_hdr *h;
	int saved = errno, none = 0;
	if (*slot)
		return *slot;
	/* The kind's key, made by the first caller (state 2 while it does):
	 * no lock, so a child forked meanwhile never waits on one; a caller
	 * that finds the key in the making goes without a block this time. */
	if (atomic_compare_exchange_strong(&kind->state, &none, 2))
		atomic_store_explicit(&kind->state, pthread_key_create(&kind->key, block_free) == 0 ? 1 : -1,
				      memory_order_release);
	if (atomic_load_explicit(&kind->state, memory_order_acquire) != 1 || !(h = calloc(1, sizeof *h + size))) {
		errno = saved;
		return NULL;
	}
	h->slot = slot;
	if (pthread_setspecific(kind->key, h) != 0) {
		free(h);
		errno = saved;
		return NULL;
	}
	*slot = h + 1;
	errno = saved;
	return *slot;
}
