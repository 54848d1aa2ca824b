/* tests/unit/test-table.c -- the shim's uthash configuration (shim/table.h)
 * with keys spaced by a fixed stride, as device pointers, sub-allocations,
 * handles and one-frame call sites are (issue 30): over many bases and the
 * strides such keys take, the table never gives up expanding (uthash's
 * noexpand, after which every chain grows without bound) and its longest
 * chain stays short. The 8-byte multiply-xorshift mix it replaces gave up
 * for 12 of 40 bases at stride 16. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "table.h"

struct ent {
	uint64_t k;
	UT_hash_handle hh;
};

/* n keys base, base+stride, ...: 1 when the table stopped expanding, and
 * the longest chain in *maxc. */
static int strided(uint64_t base, uint64_t stride, unsigned n, unsigned *maxc)
{
	struct ent *tab = NULL, *all = calloc(n, sizeof *all), *e, *tmp;
	assert_non_null(all);
	for (unsigned i = 0; i < n; i++) {
		all[i].k = base + i * stride;
		HASH_ADD(hh, tab, k, 8, &all[i]);
		assert_int_equal(cg_table_oom_here, 0);
	}
	assert_int_equal(HASH_COUNT(tab), n);
	for (unsigned i = 0; i < n; i += 97) { /* every key still found */
		uint64_t k = base + i * stride;
		HASH_FIND(hh, tab, &k, 8, e);
		assert_ptr_equal(e, &all[i]);
	}
	int noexpand = (int)tab->hh.tbl->noexpand;
	*maxc = 0;
	for (unsigned b = 0; b < tab->hh.tbl->num_buckets; b++)
		if (tab->hh.tbl->buckets[b].count > *maxc)
			*maxc = tab->hh.tbl->buckets[b].count;
	HASH_ITER(hh, tab, e, tmp)
	HASH_DEL(tab, e);
	free(all);
	return noexpand;
}

static void strided_keys_spread(void **state)
{
	(void)state;
	static const uint64_t strides[] = {8, 16, 64, 256, 512, 4096, 1u << 16, 1u << 21};
	int gave_up = 0, runs = 0;
	unsigned worst = 0;
	for (size_t s = 0; s < sizeof strides / sizeof *strides; s++)
		for (uint64_t b = 0; b < 40; b++) {
			/* bases as device pointers and heap stubs come: high,
			 * aligned, differing in middle bits */
			uint64_t base = 0x7f0000000000ull + b * 0x10a4c000ull + (b & 3) * 0x1000;
			unsigned maxc;
			gave_up += strided(base, strides[s], 60000, &maxc);
			if (maxc > worst)
				worst = maxc;
			runs++;
		}
	print_message("%d of %d strided tables gave up expanding; longest chain %u\n", gave_up, runs, worst);
	assert_int_equal(gave_up, 0);
	/* 60000 keys in >= 8192 buckets: a spread hash keeps chains near the mean */
	assert_true(worst <= 32);
}

/* cg_spare: a freed block of the slot's size comes back, zeroed, for the
 * next take of that size; a block or a take of any other size neither
 * goes into the slot nor comes out of it; a second block while one is
 * kept is freed (the slot holds one). */
static void spare_reused_only_when_size_fits(void **state)
{
	(void)state;
	static struct cg_spare sp = CG_SPARE_INIT(48);
	unsigned char *a = cg_spare_calloc(&sp, 48), *b, *c, *d;
	assert_non_null(a);
	memset(a, 0xab, 48);
	cg_spare_free(&sp, a, 48);
	b = cg_spare_calloc(&sp, 64); /* larger: not the spare */
	assert_non_null(b);
	assert_ptr_not_equal(b, a);
	c = cg_spare_calloc(&sp, 48); /* the spare, zeroed */
	assert_ptr_equal(c, a);
	for (int i = 0; i < 48; i++)
		assert_int_equal(c[i], 0);
	d = cg_spare_calloc(&sp, 48); /* the slot is empty now */
	assert_ptr_not_equal(d, c);
	cg_spare_free(&sp, b, 64); /* another size: freed, not kept */
	assert_null(atomic_load(&sp.p));
	cg_spare_free(&sp, c, 48);
	cg_spare_free(&sp, d, 48); /* the slot is full: freed */
	assert_ptr_equal(atomic_load(&sp.p), c);
	b = cg_spare_calloc(&sp, 16); /* smaller: not the spare either */
	assert_non_null(b);
	assert_ptr_not_equal(b, c);
	assert_ptr_equal(atomic_load(&sp.p), c);
	free(b);
	memset(c + 8, 0xcd, 40);
	b = cg_spare_calloc_head(&sp, 48, 24); /* the spare, its head zeroed, the rest as it was */
	assert_ptr_equal(b, c);
	for (int i = 0; i < 48; i++)
		assert_int_equal(b[i], i < 24 ? 0 : 0xcd);
	cg_spare_free(&sp, b, 48);
	free(cg_spare_calloc(&sp, 48));
	assert_null(atomic_load(&sp.p));
}

/* Every bucket of tab's table empty but the one holding its one item. */
static void only_one_bucket_used(struct ent *tab)
{
	unsigned used = 0;
	assert_int_equal(tab->hh.tbl->num_buckets, HASH_INITIAL_NUM_BUCKETS);
	for (unsigned b = 0; b < tab->hh.tbl->num_buckets; b++) {
		const UT_hash_bucket *k = &tab->hh.tbl->buckets[b];
		assert_int_equal(k->expand_mult, 0);
		if (b == (tab->hh.hashv & (HASH_INITIAL_NUM_BUCKETS - 1u))) {
			assert_int_equal(k->count, 1);
			assert_ptr_equal(k->hh_head, &tab->hh);
			used++;
		} else {
			assert_int_equal(k->count, 0);
			assert_null(k->hh_head);
		}
	}
	assert_int_equal(used, 1);
}

/* A table that empties keeps its bucket array for the next table, which
 * takes it unzeroed (issue 36: 8 cache lines a capture loop's iteration,
 * five tables): it must then be all zero, whichever way the table went.
 * One way, the delete of its last item, leaves the array clean; the other
 * ways (HASH_CLEAR of several items, an expanded table) must not hand a
 * used array on. */
static void emptied_table_hands_on_clean_buckets(void **state)
{
	(void)state;
	enum { N = 200 };
	struct ent *all = calloc(N + 1, sizeof *all), *tab = NULL, *e, *tmp;
	assert_non_null(all);
	for (unsigned i = 0; i <= N; i++)
		all[i].k = 0x7f0000001000ull + i * 0x200;
	for (int round = 0; round < 6; round++) {
		/* way 0: many items deleted one by one (the last in another
		 * bucket than the first); 1: one item; 2: HASH_CLEAR of a few;
		 * 3: HASH_CLEAR of one; 4: expanded past the initial size */
		unsigned n = round == 0 ? 20 : round == 2 ? 7 : round == 4 ? N : 1;
		for (unsigned i = 0; i < n; i++)
			HASH_ADD(hh, tab, k, 8, &all[i]);
		if (round == 2 || round == 3) {
			HASH_CLEAR(hh, tab);
		} else {
			HASH_ITER(hh, tab, e, tmp)
			HASH_DEL(tab, e);
		}
		assert_null(tab);
		HASH_ADD(hh, tab, k, 8, &all[N]);
		only_one_bucket_used(tab);
		HASH_FIND(hh, tab, &all[0].k, 8, e);
		assert_null(e);
		HASH_FIND(hh, tab, &all[N].k, 8, e);
		assert_ptr_equal(e, &all[N]);
		HASH_DEL(tab, &all[N]);
	}
	/* the array kept by that last delete is taken as it is: a mark left
	 * in it survives into the next table (then removed) */
	HASH_ADD(hh, tab, k, 8, &all[N]);
	UT_hash_bucket *bk = tab->hh.tbl->buckets;
	unsigned spare = (tab->hh.hashv + 1u) & (HASH_INITIAL_NUM_BUCKETS - 1u);
	HASH_DEL(tab, &all[N]);
	bk[spare].expand_mult = 7;
	HASH_ADD(hh, tab, k, 8, &all[N]);
	assert_ptr_equal(tab->hh.tbl->buckets, bk);
	assert_int_equal(bk[spare].expand_mult, 7);
	bk[spare].expand_mult = 0;
	HASH_DEL(tab, &all[N]);
	free(all);
}

/* A slot of any size (size 0) keeps a block with its size: a take of
 * that size gets it back zeroed (its size word too), a take of another
 * size never gets it (the kept block is freed, the take allocated). */
static void spare_of_any_size_fits_its_own(void **state)
{
	(void)state;
	static struct cg_spare sp = CG_SPARE_INIT(0);
	unsigned char *a = cg_spare_calloc(&sp, 200), *b, *c;
	assert_non_null(a);
	memset(a, 0xcd, 200);
	cg_spare_free(&sp, a, 200);
	assert_ptr_equal(atomic_load(&sp.p), a);
	b = cg_spare_calloc(&sp, 200);
	assert_ptr_equal(b, a);
	for (int i = 0; i < 200; i++)
		assert_int_equal(b[i], 0);
	cg_spare_free(&sp, b, 200);
	c = cg_spare_calloc(&sp, 240); /* larger: a block of its own */
	assert_non_null(c);
	assert_null(atomic_load(&sp.p));
	for (int i = 0; i < 240; i++)
		assert_int_equal(c[i], 0);
	cg_spare_free(&sp, c, 240);
	b = cg_spare_calloc(&sp, 200); /* kept at 240: not for 200 */
	assert_non_null(b);
	assert_null(atomic_load(&sp.p));
	free(b);
	cg_spare_free(&sp, malloc(4), 4); /* too small to hold its size: freed */
	assert_null(atomic_load(&sp.p));
}

/* The handle index (table.h): every live item found, none after its
 * delete, the list in the order added (a delete in the middle, at either
 * end), a handle that comes back takes its slot again (no growth of the
 * used slots over a make-and-drop loop), strided keys past the first
 * array's size rebuild it with everything still found, and a table
 * emptied keeps no dead slot. */
struct hent {
	uint64_t pad;
	void *k;
	struct cg_hlink link;
};

static void hidx_order(struct cg_hidx *t, struct hent **want, int n)
{
	struct hent *x, *tmp;
	int i = 0;
	CG_HIDX_EACH(t, x, tmp)
	{
		assert_true(i < n);
		assert_ptr_equal(x, want[i++]);
	}
	assert_int_equal(i, n);
	assert_int_equal(t->n, n);
}

static void hidx_finds_orders_and_reuses(void **state)
{
	struct cg_hidx t = CG_HIDX_INIT(struct hent, k, link);
	struct hent e[4], *all;
	(void)state;
	assert_null(cg_hidx_find(&t, (void *)0x1000));
	for (int i = 0; i < 4; i++) {
		e[i].k = (void *)(uintptr_t)(0x7f0000001000ull + 0x200ull * i);
		assert_int_equal(cg_hidx_add(&t, &e[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		assert_ptr_equal(cg_hidx_find(&t, e[i].k), &e[i]);
	cg_hidx_del(&t, &e[1]); /* middle */
	assert_null(cg_hidx_find(&t, e[1].k));
	hidx_order(&t, (struct hent *[]){&e[0], &e[2], &e[3]}, 3);
	cg_hidx_del(&t, &e[0]); /* head */
	cg_hidx_del(&t, &e[3]); /* tail */
	hidx_order(&t, (struct hent *[]){&e[2]}, 1);
	assert_int_equal(cg_hidx_add(&t, &e[1]), 0);
	hidx_order(&t, (struct hent *[]){&e[2], &e[1]}, 2);
	/* a make-and-drop loop of one handle: its dead slot taken again */
	size_t used = t.used;
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(cg_hidx_add(&t, &e[0]), 0);
		assert_ptr_equal(cg_hidx_find(&t, e[0].k), &e[0]);
		cg_hidx_del(&t, &e[0]);
		assert_null(cg_hidx_find(&t, e[0].k));
	}
	assert_int_equal(t.used, used);
	/* many strided keys: rebuilt and grown, all found, order kept */
	all = calloc(5000, sizeof *all);
	assert_non_null(all);
	for (int i = 0; i < 5000; i++) {
		all[i].k = (void *)(uintptr_t)(0x7f0000100000ull + 0x10ull * (uint64_t)i);
		assert_int_equal(cg_hidx_add(&t, &all[i]), 0);
	}
	assert_true(t.mask + 1 >= 2 * 5002 && t.used * 2 <= t.mask + 1);
	for (int i = 0; i < 5000; i++)
		assert_ptr_equal(cg_hidx_find(&t, all[i].k), &all[i]);
	assert_ptr_equal(cg_hidx_find(&t, e[2].k), &e[2]);
	for (int i = 0; i < 5000; i += 2)
		cg_hidx_del(&t, &all[i]);
	for (int i = 0; i < 5000; i++)
		assert_ptr_equal(cg_hidx_find(&t, all[i].k), i % 2 ? &all[i] : NULL);
	struct hent *x, *tmp;
	int k = 0;
	CG_HIDX_EACH(&t, x, tmp)
	{
		if (k == 0)
			assert_ptr_equal(x, &e[2]);
		else if (k == 1)
			assert_ptr_equal(x, &e[1]);
		else
			assert_ptr_equal(x, &all[2 * (k - 2) + 1]);
		k++;
	}
	assert_int_equal(k, 2502);
	/* everything out: no dead slot is left (each emptied once no probe
	 * passes it) */
	CG_HIDX_EACH(&t, x, tmp)
	cg_hidx_del(&t, x);
	assert_int_equal(t.n, 0);
	assert_int_equal(t.used, 0);
	assert_null(t.head);
	assert_null(t.tail);
	free(all);
	free(t.slot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(spare_reused_only_when_size_fits),
	    cmocka_unit_test(spare_of_any_size_fits_its_own),
	    cmocka_unit_test(strided_keys_spread),
	    cmocka_unit_test(emptied_table_hands_on_clean_buckets),
	    cmocka_unit_test(hidx_finds_orders_and_reuses),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
