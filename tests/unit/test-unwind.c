/* tests/unit/test-unwind.c -- the cached unwinder against glibc's backtrace():
 * same frames (from the caller's caller up) in the shapes call sites take:
 * plain calls, %rbp-based frames (alloca), frames inside libc (qsort
 * callback), a thread's outermost frames, signal frames (declined: -1 so
 * the caller falls back), the cache (a repeated site computes nothing),
 * and the deferred walk (the begin-capture hook's: cached rules now, the
 * rest later from a copy of the stack). */
#define _GNU_SOURCE
#include <alloca.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unwind.h"

#define MAXF 48

struct pair {
	void *a[MAXF], *b[MAXF];
	int na, nb;
	uint64_t cuda;
};

/* glibc's own backtrace(): sanitizer runtimes intercept the public name,
 * and their wrapper adds a frame of its own below ours. */
static int (*libc_backtrace)(void **, int);

/* Both walks from the same function; entry 0 differs (two call
 * instructions), everything above must be identical. */
static __attribute__((noinline)) void both(struct pair *p)
{
	p->na = cg_unwind(p->a, MAXF, &p->cuda, NULL);
	if (!libc_backtrace) {
		void *libc = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
		*(void **)&libc_backtrace = libc ? dlsym(libc, "backtrace") : NULL;
		if (!libc_backtrace)
			libc_backtrace = backtrace;
	}
	p->nb = libc_backtrace(p->b, MAXF);
	__asm__ volatile("" ::: "memory");
}

static void check_same(const struct pair *p)
{
	assert_true(p->na > 2);
	assert_int_equal(p->na, p->nb);
	for (int i = 1; i < p->na; i++)
		assert_ptr_equal(p->a[i], p->b[i]);
	assert_int_equal(p->cuda, 0); /* no CUDA library in this process */
}

static __attribute__((noinline)) void plain(void **state)
{
	struct pair p;
	(void)state;
	both(&p);
	check_same(&p);
}

/* alloca keeps %rbp as the CFA register in these frames */
static __attribute__((noinline)) int deep(int n, struct pair *p)
{
	volatile char *buf = alloca(64 + (size_t)n * 16);
	buf[0] = (char)n;
	if (n == 0)
		both(p);
	else
		deep(n - 1, p);
	return buf[0];
}

static void rbp_frames(void **state)
{
	struct pair p;
	(void)state;
	deep(12, &p);
	check_same(&p);
	assert_true(p.na >= 14);
}

static struct pair qs;
static int cmp(const void *x, const void *y)
{
	static int done;
	if (!done) {
		done = 1;
		both(&qs);
	}
	return *(const int *)x - *(const int *)y;
}

static void through_libc(void **state)
{
	int v[64];
	(void)state;
	for (int i = 0; i < 64; i++)
		v[i] = 64 - i;
	qsort(v, 64, sizeof v[0], cmp);
	check_same(&qs);
}

static void *thread_main(void *arg)
{
	both(arg);
	return NULL;
}

static void thread_frames(void **state)
{
	struct pair p;
	pthread_t t;
	(void)state;
	assert_int_equal(pthread_create(&t, NULL, thread_main, &p), 0);
	pthread_join(t, NULL);
	check_same(&p); /* ends where libgcc ends: clone's undefined return address */
}

static struct pair sig;
static void handler(int s)
{
	(void)s;
	both(&sig);
}

static void signal_frames(void **state)
{
	(void)state;
	signal(SIGUSR1, handler);
	raise(SIGUSR1);
	/* the frame above the handler is the kernel's sigreturn trampoline:
	 * declined, so the site falls back to the generic unwinder. Under
	 * qemu-user the trampoline lies in no module (no vDSO): the walk ends
	 * there, at the trampoline, as a frame of JIT code ends it */
	assert_true(sig.nb > 2);
#if defined(__aarch64__)
	if (sig.na != -1) {
		assert_int_equal(sig.na, 2);
		assert_ptr_equal(sig.a[1], sig.b[1]);
	}
#else
	assert_int_equal(sig.na, -1);
#endif
}

static void cached(void **state)
{
	struct pair p;
	unsigned long m[100];
	(void)state;
	/* one call site in a loop (no branch for the compiler to peel on):
	 * only the first pass computes rules */
#pragma GCC unroll 1
	for (int i = 0; i < 100; i++) {
		both(&p);
		m[i] = cg_unwind_misses();
	}
	assert_true(m[0] > 0);
	assert_int_equal(m[99], m[1]);
	check_same(&p);
}

/* The walk memo: the same walk again is answered by it; a walk from the
 * same start (via_b's frame is as deep as via_a's) whose stack holds
 * another return address above must not be. */
static __attribute__((noinline)) void at(struct pair *p)
{
	both(p);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void via_a(struct pair *p)
{
	at(p);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void via_b(struct pair *p)
{
	at(p);
	__asm__ volatile("nop" ::: "memory"); /* not folded into via_a */
}

static void memo(void **state)
{
	struct pair a[2], b;
	unsigned long h[2];
	(void)state;
	/* one call site, twice (a volatile count: not unrolled into two
	 * call sites): the second walk is the first again */
	for (volatile int i = 0; i < 2; i++) {
		via_a(&a[i]);
		h[i] = cg_unwind_memo_hits();
	}
	check_same(&a[0]);
	check_same(&a[1]);
	assert_int_equal(h[1], h[0] + 1);
	via_b(&b);
	check_same(&b); /* via_b's return address, not via_a's */
	assert_ptr_not_equal(a[0].a[3], b.a[3]);
}

/* The memo's value (cg_unwind_tag, a site's id): a walk kept with a tag
 * gets a value; the same walk again answers with it and fills no frame; a
 * caller with another return address at the same depth walks (no value)
 * and gets its own; a value set after its way was kept again is refused. */
struct tagged {
	struct cg_unwind_tag t;
	void *a[MAXF];
	int n;
};

static __attribute__((noinline)) void tag_walk(struct tagged *w)
{
	uint64_t cuda;
	w->a[0] = NULL;
	w->n = cg_unwind(w->a, 16, &cuda, &w->t);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void tag_via_a(struct tagged *w)
{
	tag_walk(w);
	__asm__ volatile("" ::: "memory");
}

static __attribute__((noinline)) void tag_via_b(struct tagged *w)
{
	tag_walk(w);
	__asm__ volatile("nop" ::: "memory"); /* not folded into tag_via_a */
}

/* tag_via_a or tag_via_b from one call site (a walk's words include the
 * return address into the caller of each frame). */
static __attribute__((noinline)) void tag_from(int b, struct tagged *w)
{
	if (b)
		tag_via_b(w);
	else
		tag_via_a(w);
	__asm__ volatile("" ::: "memory");
}

static void tagged_memo(void **state)
{
	/* the caller (a or b), the tag asked, the value expected (0: walked,
	 * frames filled), the value then kept with the walk (0 none) */
	static const struct {
		int b;
		unsigned tag;
		uint32_t want, keep;
	} step[] = {
	    {0, 0, 0, 0},				    /* kept without a tag (a site with Python's frames) */
	    {0, 7, 0, 101}, {0, 7, 101, 0}, {0, 7, 101, 0}, /* steady: found, given its value, answered */
	    {1, 7, 0, 202}, {1, 7, 202, 0},		    /* another caller at the same depth */
	    {0, 7, 101, 0}, {0, 8, 0, 808},		    /* another tag: frames, its value refused */
	    {0, 7, 101, 0},
	};
	struct tagged w;
	(void)state;
	/* one call site, in a loop (a volatile count: not unrolled) */
	for (volatile int i = 0; i < (int)(sizeof step / sizeof step[0]); i++) {
		unsigned long h = cg_unwind_tag_hits();
		w.t.tag = step[i].tag;
		tag_from(step[i].b, &w);
		assert_int_equal(w.t.val, step[i].want);
		if (step[i].want) {
			assert_ptr_equal(w.a[0], NULL); /* no frame copied */
			assert_int_equal(cg_unwind_tag_hits(), h + 1);
		} else {
			assert_true(w.n > 3 && w.a[0] != NULL);
			assert_int_equal(cg_unwind_tag_hits(), h);
		}
		if (step[i].keep)
			cg_unwind_tag_set(&w.t, step[i].keep);
	}
}

/* A value is kept only with the walk it was made from: a way kept again
 * meanwhile (four other walks with the same tag: every way) refuses it,
 * and none of those walks answers with it. */
static __attribute__((noinline)) uint32_t tag_other(int k)
{
	void *pcs[8];
	uint64_t cuda;
	struct cg_unwind_tag t = {.tag = 9};
	volatile char *buf = alloca(64 + (size_t)k * 32); /* another start each */
	buf[0] = 0;
	(void)cg_unwind(pcs, 8, &cuda, &t);
	__asm__ volatile("" ::: "memory");
	return t.val;
}

static void tagged_stale(void **state)
{
	struct tagged w = {.t = {.tag = 9}};
	(void)state;
	tag_from(0, &w);
	assert_int_equal(w.t.val, 0);
	/* one call site: the second round finds the first's walks */
	for (volatile int i = 0; i < 8; i++) {
		if (i == 4)
			cg_unwind_tag_set(&w.t, 303); /* its way holds another walk now */
		assert_int_equal(tag_other(i % 4), 0);
	}
}

static void short_max(void **state)
{
	void *pcs[2];
	uint64_t cuda;
	(void)state;
	assert_int_equal(cg_unwind(pcs, 2, &cuda, NULL), 2);
	assert_int_equal(cg_unwind(pcs, 65, &cuda, NULL), -1); /* beyond the mask */
}

/* The deferred walk (cg_unwind_warm, then cg_unwind_finish from the
 * stack's copy) against the full one from the same function: entry 0
 * differs (two call instructions), everything above must be identical.
 * *deferred: the warm walk met a frame without a cached rule. */
#define WANT 16 /* about what a site asks for (site.c: depth + skip + 4) */
static __attribute__((noinline)) void warm_then_full(struct pair *p, int *deferred)
{
	struct cg_unwind_rest *rest = NULL;
	uint64_t cuda = 0;
	p->na = cg_unwind_warm(p->a, WANT, &cuda, &rest, NULL);
	*deferred = rest != NULL;
	if (rest) {
		p->na = cg_unwind_finish(rest, p->a, p->na, WANT, &cuda);
		cg_unwind_rest_free(rest);
	}
	p->nb = cg_unwind(p->b, WANT, &p->cuda, NULL);
	__asm__ volatile("" ::: "memory");
}

/* Frames never walked before (a chain of its own), %rbp-based */
static __attribute__((noinline)) int deep_fresh(int n, struct pair *p, int *deferred)
{
	volatile char *buf = alloca(48 + (size_t)n * 16);
	buf[0] = (char)n;
	if (n == 0)
		warm_then_full(p, deferred);
	else
		deep_fresh(n - 1, p, deferred);
	return buf[0];
}

static void deferred_walk(void **state)
{
	struct pair p[3];
	int deferred[3] = {0, 0, 0};
	(void)state;
	/* one call site in a loop: a later pass walks the same stack, every
	 * rule cached by an earlier pass's finish, nothing deferred (the
	 * compiler may peel the first pass into a call site of its own, as in
	 * `cached`: the third pass is the one that must find all cached) */
#pragma GCC unroll 1
	for (int k = 0; k < 3; k++)
		deep_fresh(10, &p[k], &deferred[k]);
	assert_true(deferred[0]); /* the first frame's rule was not cached */
	assert_false(deferred[2]);
	for (int k = 0; k < 3; k++) {
		assert_int_equal(p[k].na, WANT);
		assert_int_equal(p[k].na, p[k].nb);
		for (int i = 1; i < p[k].na; i++)
			assert_ptr_equal(p[k].a[i], p[k].b[i]);
	}
}

/* Frames of 6 KiB: the 16 KiB copy ends inside the third, and the deferred
 * walk ends there too (a shorter site, never a read past the copy). */
static __attribute__((noinline)) int deep_wide(int n, struct pair *p, int *deferred)
{
	volatile char *buf = alloca(6144);
	buf[0] = (char)n;
	if (n == 0)
		warm_then_full(p, deferred);
	else
		deep_wide(n - 1, p, deferred);
	return buf[0];
}

static void deferred_copy_end(void **state)
{
	struct pair p;
	int deferred = 0;
	(void)state;
	deep_wide(8, &p, &deferred);
	assert_true(deferred);
	assert_true(p.na >= 2 && p.na < p.nb && p.nb == WANT);
	for (int i = 1; i < p.na; i++)
		assert_ptr_equal(p.a[i], p.b[i]);
}

/* The same on a thread of its own, whose stack top is near (the copy is a
 * memcpy ended at the top pthread_getattr_np gives, not a read past it):
 * the deferred walk reaches the thread's first frames, as the full one. */
static __attribute__((noinline)) int deep_thr(int n, struct pair *p, int *deferred)
{
	volatile char *buf = alloca(32 + (size_t)n * 8);
	buf[0] = (char)n;
	if (n == 0)
		warm_then_full(p, deferred);
	else
		deep_thr(n - 1, p, deferred);
	return buf[0];
}

struct thr_arg {
	struct pair p;
	int deferred;
};

static void *thr_main(void *v)
{
	struct thr_arg *a = v;
	deep_thr(3, &a->p, &a->deferred);
	return NULL;
}

static void deferred_thread(void **state)
{
	struct thr_arg a = {.deferred = 0};
	pthread_t t;
	(void)state;
	cg_stack_thread_warm();
	assert_int_equal(pthread_create(&t, NULL, thr_main, &a), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(a.deferred);
	assert_true(a.p.na >= 6); /* warm_then_full, deep_thr x4, thr_main */
	assert_int_equal(a.p.na, a.p.nb);
	for (int i = 1; i < a.p.na; i++)
		assert_ptr_equal(a.p.a[i], a.p.b[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(plain),	       cmocka_unit_test(rbp_frames),	cmocka_unit_test(through_libc),
	    cmocka_unit_test(thread_frames),   cmocka_unit_test(signal_frames), cmocka_unit_test(cached),
	    cmocka_unit_test(short_max),       cmocka_unit_test(deferred_walk), cmocka_unit_test(deferred_copy_end),
	    cmocka_unit_test(deferred_thread), cmocka_unit_test(memo),		cmocka_unit_test(tagged_memo),
	    cmocka_unit_test(tagged_stale),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
