/* tests/unit/test-fold.c -- the fold table and the print limit (shim/fold.c,
 * issue 31): folding by rule, site, object and node; exact counts under
 * threads; a full table writes unfolded and stays bounded; the limit only
 * on stderr/stdout; a forked child starts empty. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "config.h"
#include "fold.h"

static struct cg_fold_key key(int rule, uint32_t site, uint64_t obj, int64_t node)
{
	return (struct cg_fold_key){rule, site, obj, node, "site", "exec"};
}

static int reset(void **state)
{
	(void)state;
	cg_fold_after_fork_child();
	cg_cfg.print_limit = 20;
	cg_cfg.log_file = NULL;
	return 0;
}

static void test_fold_by_key(void **state)
{
	(void)state;
	struct cg_fold_key a = key(1, 7, 0x100, -1);
	assert_int_equal(cg_fold_note(&a), 1); /* first: written */
	for (int i = 0; i < 9; i++)
		assert_int_equal(cg_fold_note(&a), 0); /* repeats: counted */
	/* any part of the key differing is another key */
	struct cg_fold_key b = key(2, 7, 0x100, -1), c = key(1, 8, 0x100, -1), d = key(1, 7, 0x200, -1),
			   e = key(1, 7, 0x100, 3);
	assert_int_equal(cg_fold_note(&b), 1);
	assert_int_equal(cg_fold_note(&c), 1);
	assert_int_equal(cg_fold_note(&d), 1);
	assert_int_equal(cg_fold_note(&e), 1);
	assert_int_equal(cg_fold_note(&e), 0);
	struct cg_fold_key f = a;
	f.capture = 9; /* another capture: its own refusal */
	assert_int_equal(cg_fold_note(&f), 1);
	assert_int_equal(cg_fold_repeats(), 10);
	/* the exit's list: the keys seen more than once, with their counts */
	int pos = 0, n = 0;
	struct cg_fold_key k;
	uint64_t count, total = 0;
	while (cg_fold_next(&pos, &k, &count)) {
		n++;
		total += count;
		assert_true((k.rule == 1 && k.site == 7 && k.obj == 0x100 && k.node == -1 && count == 10) ||
			    (k.node == 3 && count == 2));
		assert_string_equal(k.site_key, "site");
		assert_string_equal(k.obj_key, "exec");
	}
	assert_int_equal(n, 2);
	assert_int_equal(total, 12);
}

#define NTHREADS 8
#define NKEYS 50
#define PER_THREAD 20000
static _Atomic int firsts;

static void *hammer(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	for (int i = 0; i < PER_THREAD; i++) {
		struct cg_fold_key k = key(3, 1, (uint64_t)((i + (int)t) % NKEYS) * 64 + 4096, -1);
		if (cg_fold_note(&k))
			atomic_fetch_add(&firsts, 1);
	}
	return NULL;
}

static void test_fold_threads(void **state)
{
	(void)state;
	pthread_t th[NTHREADS];
	for (uintptr_t t = 0; t < NTHREADS; t++)
		assert_int_equal(pthread_create(&th[t], NULL, hammer, (void *)t), 0);
	for (int t = 0; t < NTHREADS; t++)
		pthread_join(th[t], NULL);
	/* every key written exactly once, every other one counted */
	assert_int_equal(atomic_load(&firsts), NKEYS);
	assert_int_equal(cg_fold_repeats(), NTHREADS * PER_THREAD - NKEYS);
	int pos = 0, n = 0;
	struct cg_fold_key k;
	uint64_t count, total = 0;
	while (cg_fold_next(&pos, &k, &count))
		n++, total += count;
	assert_int_equal(n, NKEYS);
	assert_int_equal(total, NTHREADS * PER_THREAD);
}

static void test_fold_full(void **state)
{
	(void)state;
	/* more keys than slots: each is written (1), none crashes or waits */
	for (int i = 0; i < CG_FOLD_SLOTS + 200; i++) {
		struct cg_fold_key k = key(4, 2, (uint64_t)i * 16 + 4096, -1);
		assert_int_equal(cg_fold_note(&k), 1);
	}
	assert_true(cg_fold_full() >= 200);
	/* a key left without a slot is written every time, and counted so */
	uint64_t before = cg_fold_full();
	int written = 0;
	for (int i = CG_FOLD_SLOTS; i < CG_FOLD_SLOTS + 200; i++) {
		struct cg_fold_key k = key(4, 2, (uint64_t)i * 16 + 4096, -1);
		written += cg_fold_note(&k);
	}
	assert_true(written > 0);
	assert_int_equal(cg_fold_full() - before, (uint64_t)written);
}

static void test_print_limit(void **state)
{
	(void)state;
	cg_cfg.print_limit = 3;
	assert_true(cg_print_limited()); /* no log file: stderr */
	for (int i = 0; i < 3; i++)
		assert_int_equal(cg_print_take(), 1);
	for (int i = 0; i < 5; i++)
		assert_int_equal(cg_print_take(), 0);
	assert_int_equal(cg_print_unprinted(), 5);
	cg_cfg.log_file = "stdout";
	assert_true(cg_print_limited());
	cg_cfg.log_file = "/tmp/log-%p.jsonl"; /* a file gets every record */
	assert_false(cg_print_limited());
	assert_int_equal(cg_print_take(), 1);
	cg_cfg.log_file = NULL;
	cg_cfg.print_limit = 0; /* no limit */
	assert_false(cg_print_limited());
	assert_int_equal(cg_print_take(), 1);
	assert_int_equal(cg_print_unprinted(), 5);
	/* a forked child starts afresh */
	cg_fold_after_fork_child();
	assert_int_equal(cg_print_unprinted(), 0);
	assert_int_equal(cg_fold_repeats(), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_fold_by_key, reset),
	    cmocka_unit_test_setup(test_fold_threads, reset),
	    cmocka_unit_test_setup(test_fold_full, reset),
	    cmocka_unit_test_setup(test_print_limit, reset),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
