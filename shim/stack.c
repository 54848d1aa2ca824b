/* shim/stack.c -- copies of the calling thread's stack, for a call-site
 * walk finished later (cg_unwind_warm / cg_unwind_finish).
 *
 * The begin-capture hook may not spend tens of microseconds (issue 19): a
 * copy inside the thread's known stack is a memcpy (0.5-2 us for 16 KiB);
 * only a stack whose bounds are unknown goes through process_vm_readv
 * (13-24 us in a sandbox), which stops at an unmapped page instead of
 * faulting. Measurements: docs/host-memory-capture.md.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "stack.h"

/* The calling thread's stack, [lo, hi): the main thread's top is
 * __libc_stack_end (the kernel's argument block lies above it, mapped), its
 * bottom the rlimit below; another thread's from pthread_getattr_np (no
 * /proc read for a thread glibc made). Learned once per thread, outside any
 * capture where the warm-up runs on that thread (cg_stack_thread_warm). A
 * thread whose sp lies outside (a coroutine's or signal stack) has no
 * bounds: its copy goes through process_vm_readv. */
extern void *__libc_stack_end;
#if defined(__SANITIZE_ADDRESS__)
#define CG_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CG_ASAN 1
#endif
#endif
#ifndef CG_ASAN
#define CG_ASAN 0
#endif
/* initial-exec: the shim is preloaded (no __tls_get_addr on the walk's
 * path, as unwind.c's memo) */
#define CG_TLS __thread __attribute__((tls_model("initial-exec")))
static CG_TLS uintptr_t stack_lo, stack_hi;
static CG_TLS int stack_known;

static void stack_learn(void)
{
	pthread_attr_t a;
	void *addr;
	size_t size;
	stack_known = 1;
	if (getpid() == (pid_t)syscall(SYS_gettid)) {
		struct rlimit rl;
		stack_hi = (uintptr_t)__libc_stack_end;
		if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < stack_hi)
			stack_lo = stack_hi - rl.rlim_cur;
		else
			stack_lo = stack_hi - (8u << 20);
		return;
	}
	if (pthread_getattr_np(pthread_self(), &a) != 0)
		return;
	if (pthread_attr_getstack(&a, &addr, &size) == 0) {
		stack_lo = (uintptr_t)addr;
		stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&a);
}

int cg_stack_bounds(uintptr_t *lo, uintptr_t *hi)
{
	if (__builtin_expect(!stack_known, 0)) {
		int saved = errno;
		stack_learn();
		errno = saved;
	}
	*lo = stack_lo;
	*hi = stack_hi;
	return stack_hi > stack_lo;
}

void cg_stack_thread_warm(void)
{
	int saved = errno;
	if (!stack_known)
		stack_learn();
	errno = saved;
}

/* The stack above sp, up to cap bytes: a memcpy when sp lies in the
 * thread's known stack (the copy ends at its top), else process_vm_readv a
 * page (iovec) at a time, which stops at the first page that is not mapped
 * instead of faulting (16 KiB cost 13-24 us in a sandbox, the memcpy
 * 0.5-2 us). */
size_t cg_stack_copy(unsigned char *dst, uintptr_t sp, size_t cap)
{
	struct iovec local = {dst, cap}, remote[CG_STACK_COPY_MAX / 4096 + 1];
	int k = 0;
	ssize_t got;
	if (!stack_known)
		stack_learn();
	/* Under ASan the stack holds poisoned redzones a memcpy would report. */
	if (!CG_ASAN && sp >= stack_lo && sp < stack_hi) {
		size_t n = stack_hi - sp < cap ? stack_hi - sp : cap;
		memcpy(dst, (const void *)sp, n);
		return n;
	}
	for (uintptr_t a = sp; a < sp + cap && k < (int)(sizeof remote / sizeof remote[0]); k++) {
		uintptr_t end = (a | 4095) + 1;
		if (end > sp + cap)
			end = sp + cap;
		remote[k].iov_base = (void *)a;
		remote[k].iov_len = end - a;
		a = end;
	}
	got = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)k, 0);
	return got > 0 ? (size_t)got : 0;
}
