/* tests/unit/test-site.c -- call sites (site.c) over the walk memo's value
 * (issue 36): a site taken again from the same place is answered without
 * its frames (counted by cg_unwind_tag_hits), with the id the full path
 * gave; a caller with another return address at the same depth is walked
 * and gets a site of its own, with its own frames; a Python lookup turn
 * (none here: no interpreter) takes the full path and the same id. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <link.h>

#include "config.h"
#include "site.h"
#include "unwind.h"

/* What site.c needs from the rest of the shim: no module notes, the
 * loader's list as module.c gives it outside a forked child, no dlsym of
 * the real libraries (no Python found: the lookup turn fails). */
void cg_module_note(const void *fbase, const char *name)
{
	(void)fbase;
	(void)name;
}
int cg_module_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg)
{
	return dl_iterate_phdr(cb, arg);
}
void *(*cg_real_dlsym)(void *, const char *);

static __attribute__((noinline)) uint32_t take(void)
{
	uint32_t s = cg_site_here(0);
	__asm__ volatile("" ::: "memory");
	return s;
}

static __attribute__((noinline)) uint32_t via_a(void)
{
	uint32_t s = take();
	__asm__ volatile("" ::: "memory");
	return s;
}

static __attribute__((noinline)) uint32_t via_b(void)
{
	uint32_t s = take();
	__asm__ volatile("nop" ::: "memory"); /* not folded into via_a */
	return s;
}

/* via_a or via_b from one call site (a walk's words include the return
 * address into each frame's caller) */
static __attribute__((noinline)) uint32_t from(int b)
{
	uint32_t s = b ? via_b() : via_a();
	__asm__ volatile("" ::: "memory");
	return s;
}

static void steady_and_changed(void **state)
{
	/* a, a x 3 (steady), b (another caller), b, a: 100 rounds, so that
	 * the every-64th Python turn (the full path) falls among them */
	static const int seq[] = {0, 0, 0, 0, 1, 1, 0};
	uint32_t id[2] = {0, 0};
	unsigned long fast = 0, calls = 0;
	char la[512], lb[512];
	(void)state;
	for (volatile int r = 0; r < 100; r++)
		for (volatile int i = 0; i < (int)(sizeof seq / sizeof seq[0]); i++) {
			unsigned long h = cg_unwind_tag_hits();
			uint32_t s = from(seq[i]);
			assert_true(s != 0);
			if (!id[seq[i]]) {
				assert_int_equal(cg_unwind_tag_hits(), h); /* a new caller: walked */
				id[seq[i]] = s;
			}
			assert_int_equal(s, id[seq[i]]); /* the same site every time, by either path */
			fast += cg_unwind_tag_hits() - h;
			calls++;
		}
	assert_true(id[0] != id[1]);
	/* the first walk of each caller, the Python turns (every 64th site)
	 * and nothing else took the full path */
	assert_true(fast >= calls - 3 - (calls + 63) / 64);
	assert_true(fast < calls);
	/* their frames differ in via_a / via_b's return address */
	assert_int_equal(cg_site_lines_try(id[0], "", la, sizeof la, 10), 0);
	assert_int_equal(cg_site_lines_try(id[1], "", lb, sizeof lb, 10), 0);
	assert_true(la[0] && lb[0]);
	assert_string_not_equal(la, lb);
	assert_false(cg_site_pending(id[0]));
}

/* The begin-capture hook's deferred site, steady: the first may wait for
 * its walk (a rule not cached yet); once settled, every later one is the
 * memo's value, never pending. */
static __attribute__((noinline)) uint32_t take_deferred(void)
{
	uint32_t s = cg_site_here_deferred(0);
	__asm__ volatile("" ::: "memory");
	return s;
}

static void deferred_steady(void **state)
{
	uint32_t first = 0, id = 0;
	unsigned long fast = 0;
	(void)state;
	for (volatile int i = 0; i < 20; i++) {
		unsigned long h = cg_unwind_tag_hits();
		uint32_t s = take_deferred();
		fast += cg_unwind_tag_hits() - h;
		assert_true(s != 0);
		if (i == 0) {
			first = s;
			cg_site_settle(s);
			assert_false(cg_site_pending(s));
			continue;
		}
		assert_false(cg_site_pending(s));
		if (!id)
			id = s;
		assert_int_equal(s, id);
	}
	assert_true(fast >= 20 - 3 - 1);
	/* the first site (pending then, or not) names the same frames */
	{
		char a[512], b[512];
		assert_int_equal(cg_site_lines_try(first, "", a, sizeof a, 10), 0);
		assert_int_equal(cg_site_lines_try(id, "", b, sizeof b, 10), 0);
		assert_string_equal(a, b);
	}
}

static const char *env_none(const char *name)
{
	(void)name;
	return NULL;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(steady_and_changed),
	    cmocka_unit_test(deferred_steady),
	};
	if (cg_config_load(env_none))
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
