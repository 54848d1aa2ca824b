/* shim/thread.c -- thread id and thread name cache (thread.h). */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "thread.h"

#define THREAD_TLS __thread __attribute__((tls_model("initial-exec")))

static THREAD_TLS int tid; /* 0: not read yet */

int cg_gettid(void)
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
void cg_thread_name(char name[16])
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
