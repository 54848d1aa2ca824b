/* shim/table.c -- the block cache behind uthash_malloc/uthash_free (table.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define CG_TABLE_EXPAND_HERE /* uthash's own HASH_EXPAND_BUCKETS, for cg_table_expand */
#include "hot.h"
#include "table.h"

__thread __attribute__((tls_model("initial-exec"))) int cg_table_oom_here;

#define KEEP 4

static _Atomic(void *) keep_tbl[KEEP], keep_bkt[KEEP];

static _Atomic(void *) *slots_for(size_t sz)
{
	if (sz == sizeof(UT_hash_table))
		return keep_tbl;
	if (sz == HASH_INITIAL_NUM_BUCKETS * sizeof(UT_hash_bucket))
		return keep_bkt;
	return NULL;
}

__thread __attribute__((tls_model("initial-exec"))) void *cg_table_clean_got;
/* The bucket array cg_table_emptying found clean, freed next (this thread) */
static __thread __attribute__((tls_model("initial-exec"))) void *clean_freed;

CG_HOT void *cg_table_malloc(size_t sz)
{
	_Atomic(void *) *s = slots_for(sz);
	cg_table_clean_got = NULL;
	for (int i = 0; s && i < KEEP; i++) {
		void *p = atomic_exchange_explicit(&s[i], NULL, memory_order_acquire);
		if (p) {
			if (s == keep_bkt)
				cg_table_clean_got = p; /* kept clean: uthash's zeroing is skipped */
			return p;			/* a header: uthash zeroes it */
		}
	}
	return malloc(sz);
}

CG_HOT void cg_table_bzero(void *p, size_t n)
{
	if (p && p == cg_table_clean_got) {
		cg_table_clean_got = NULL;
		return;
	}
	memset(p, 0, n);
}

CG_HOT void cg_table_emptying(struct UT_hash_table *tbl)
{
	clean_freed = NULL;
	if (tbl->num_items != 1 || tbl->num_buckets != HASH_INITIAL_NUM_BUCKETS || !tbl->tail)
		return;
	/* every other bucket emptied as its items were deleted (uthash's
	 * HASH_DEL_IN_BKT leaves count 0, hh_head NULL); expand_mult is set
	 * only in an expanded table's buckets */
	memset(&tbl->buckets[tbl->tail->hashv & (HASH_INITIAL_NUM_BUCKETS - 1u)], 0, sizeof(UT_hash_bucket));
	clean_freed = tbl->buckets;
}

CG_HOT void cg_table_free(void *p, size_t sz)
{
	_Atomic(void *) *s = slots_for(sz);
	if (s == keep_bkt) {
		int clean = p && p == clean_freed;
		clean_freed = NULL;
		if (!clean)
			s = NULL; /* a bucket array with items in it: freed */
	}
	for (int i = 0; p && s && i < KEEP; i++) {
		void *none = NULL;
		if (atomic_compare_exchange_strong_explicit(&s[i], &none, p, memory_order_release,
							    memory_order_relaxed))
			return;
	}
	free(p);
}

static int spare_fits(const struct cg_spare *s, size_t sz)
{
	return sz >= sizeof(size_t) && (!s->size || sz == s->size);
}

CG_HOT void *cg_spare_calloc_head(struct cg_spare *s, size_t sz, size_t head)
{
	void *p = spare_fits(s, sz) ? atomic_exchange_explicit(&s->p, NULL, memory_order_acquire) : NULL;
	if (p && *(size_t *)p != sz) { /* kept for another size */
		free(p);
		p = NULL;
	}
	/* A new block from calloc, 16-byte aligned: an entry of one or two
	 * lines may straddle one more. Not posix_memalign'd on 64 bytes: under
	 * ASan (GCC 12's libasan has no fork handlers) harm-fork's children
	 * hung in its allocator 3 times in 32 runs with it, 0 in 24 without
	 * (2026-11-29). */
	if (!p)
		return calloc(1, sz);
	memset(p, 0, head < sz ? head : sz);
	return p;
}

CG_HOT void cg_spare_free(struct cg_spare *s, void *p, size_t sz)
{
	void *none = NULL;
	if (p && spare_fits(s, sz)) {
		*(size_t *)p = sz; /* the slot's alone from here to its take */
		if (atomic_compare_exchange_strong_explicit(&s->p, &none, p, memory_order_release,
							    memory_order_relaxed))
			return;
	}
	free(p);
}

/* uthash's expansion of tbl's buckets (table.h): 1 when its bucket array
 * could not be allocated (the table stays as it was). */
CG_COLD int cg_table_expand(struct UT_hash_table *tbl)
{
	int oomed = 0;
	HASH_EXPAND_BUCKETS(hh, tbl, oomed);
	return oomed;
}
