/* shim/table.c -- the block cache behind uthash_malloc/uthash_free (table.h). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

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

void *cg_table_malloc(size_t sz)
{
	_Atomic(void *) *s = slots_for(sz);
	for (int i = 0; s && i < KEEP; i++) {
		void *p = atomic_exchange_explicit(&s[i], NULL, memory_order_acquire);
		if (p)
			return p; /* uthash zeroes what it takes */
	}
	return malloc(sz);
}

void cg_table_free(void *p, size_t sz)
{
	_Atomic(void *) *s = slots_for(sz);
	for (int i = 0; p && s && i < KEEP; i++) {
		void *none = NULL;
		if (atomic_compare_exchange_strong_explicit(&s[i], &none, p, memory_order_release,
							    memory_order_relaxed))
			return;
	}
	free(p);
}

void *cg_spare_calloc(struct cg_spare *s, size_t sz)
{
	void *p = sz == s->size ? atomic_exchange_explicit(&s->p, NULL, memory_order_acquire) : NULL;
	if (!p)
		return calloc(1, sz);
	memset(p, 0, sz);
	return p;
}

void cg_spare_free(struct cg_spare *s, void *p, size_t sz)
{
	void *none = NULL;
	if (p && sz == s->size &&
	    atomic_compare_exchange_strong_explicit(&s->p, &none, p, memory_order_release, memory_order_relaxed))
		return;
	free(p);
}
