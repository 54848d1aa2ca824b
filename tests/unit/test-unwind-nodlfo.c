/* tests/unit/test-unwind-nodlfo.c -- the cached unwinder where glibc has no
 * _dl_find_object (before 2.35): built with that name renamed to a weak
 * symbol nothing defines (meson.build), as the shim's weak reference is
 * NULL on such a glibc. Every walk is declined (-1: the caller falls back
 * to backtrace()), and no thread takes a walk memo block it could never
 * use (the memo keeps only walks, and none runs). cg_thread_block is
 * wrapped at the link (--wrap) to count the blocks asked for. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "thread.h"
#include "unwind.h"

/* The renamed reference (-D_dl_find_object=...): what the unwinder sees. */
extern int _dl_find_object(void *pc, struct dl_find_object *result) __attribute__((weak));

static _Atomic int blocks;
void *__real_cg_thread_block(struct cg_thread_kind *kind, void **slot, size_t size);
void *__wrap_cg_thread_block(struct cg_thread_kind *kind, void **slot, size_t size)
{
	if (!*slot)
		blocks++;
	return __real_cg_thread_block(kind, slot, size);
}

/* Each entry point, twice (a second call would find a block made by the
 * first): the unexpected answers counted (cmocka asserts on the main
 * thread only). */
static void *walks(void *arg)
{
	void *pcs[16];
	uint64_t cuda = 0;
	struct cg_unwind_rest *rest = (void *)1;
	struct cg_unwind_tag t = {.tag = 1};
	intptr_t bad = 0;
	(void)arg;
	for (int i = 0; i < 2; i++) {
		bad += cg_unwind(pcs, 16, &cuda, NULL) != -1;
		bad += cg_unwind(pcs, 16, &cuda, &t) != -1 || t.val;
		cg_unwind_tag_set(&t, 7); /* no way to keep it in: nothing */
		bad += cg_unwind_warm(pcs, 16, &cuda, &rest, NULL) != -1 || rest;
	}
	return (void *)bad;
}

static void declined_without_a_block(void **state)
{
	pthread_t th;
	void *bad = (void *)1;
	(void)state;
	assert_null((void *)_dl_find_object); /* the seam holds */
	blocks = 0;
	assert_null(walks(NULL));
	assert_int_equal(pthread_create(&th, NULL, walks, NULL), 0);
	assert_int_equal(pthread_join(th, &bad), 0);
	assert_null(bad);
	assert_int_equal(blocks, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(declined_without_a_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
