/*
 * shim/table.h -- uthash configured for a guest process. The only file that
 * includes uthash.h. An allocation failure inside a table operation must
 * never end the host: HASH_NONFATAL_OOM makes uthash report it, the table
 * counts it (struct cg_table), and its owner degrades the shim to
 * pass-through.
 *
 * A table that empties frees its header and bucket array, and allocates
 * them again with its next item: a capture loop (one capture, graph and
 * exec alive at a time) did that for five tables every iteration. Freed
 * blocks of those two sizes are kept for reuse (a few of each, lock-free).
 * A bucket array is kept only when the table emptied by deleting its one
 * item: its one used bucket is zeroed then (cg_table_emptying), so the
 * array is all zero and its next table takes it without zeroing 512 bytes
 * (8 cache lines, each a miss when a capture loop shares its core: issue
 * 36). Any other bucket array of that size is freed.
 */
#ifndef CGSHIM_TABLE_H
#define CGSHIM_TABLE_H

#include "hot.h"
#include <stdatomic.h>
#include <stddef.h>

/* One table's allocation failures, reported by that table only. uthash
 * tells a failed add (the item is then not in the table) through
 * uthash_nonfatal_oom on the adding thread; cg_table_add_failed, called by
 * that thread right after the add, under the table's own lock, takes that
 * report and counts it on the table. Nothing is shared between tables or
 * threads. The owner decides what a failure costs: the shim's contract is
 * one warning and pass-through from then on (cg_degrade). */
struct cg_table {
	const char *name;
	_Atomic long long failures;
};
#define CG_TABLE_INIT(n)                                                                                               \
	{                                                                                                              \
		.name = (n)                                                                                            \
	}
extern __thread __attribute__((tls_model("initial-exec"))) int cg_table_oom_here;
/* Returns 1 when the add this thread just made to t failed, counted on t. */
static inline int cg_table_add_failed(struct cg_table *t)
{
	if (__builtin_expect(!cg_table_oom_here, 1))
		return 0;
	cg_table_oom_here = 0;
	atomic_fetch_add_explicit(&t->failures, 1, memory_order_relaxed);
	return 1;
}
static inline long long cg_table_failures(struct cg_table *t)
{
	return atomic_load_explicit(&t->failures, memory_order_relaxed);
}

#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(obj) (cg_table_oom_here = 1)
void *cg_table_malloc(size_t sz);
void cg_table_free(void *p, size_t sz);
/* One spare block (an item of a table whose items come and go every
 * step: a graph, a ledger exec), kept instead of freed and handed out
 * again zeroed, lock-free, only for a request of its own size. size: the
 * one size the slot keeps, 0 any (a block of a capture loop's steady
 * shape: a graph's memory nodes, a partial summary). A kept block holds
 * its size in its first word; a take of another size frees it. */
struct cg_spare {
	size_t size;
	_Atomic(void *) p;
};
#define CG_SPARE_INIT(sz)                                                                                              \
	{                                                                                                              \
		.size = (sz)                                                                                           \
	}
/* head: the bytes of a kept block zeroed (the rest is written before it
 * is read: untouched lines are not fetched); a new block is all zero. */
void *cg_spare_calloc_head(struct cg_spare *s, size_t sz, size_t head);
static inline void *cg_spare_calloc(struct cg_spare *s, size_t sz)
{
	return cg_spare_calloc_head(s, sz, sz);
}
void cg_spare_free(struct cg_spare *s, void *p, size_t sz);
/* The kept bucket array cg_table_malloc just returned on this thread (all
 * zero), NULL when it returned anything else. */
extern __thread __attribute__((tls_model("initial-exec"))) void *cg_table_clean_got;
void cg_table_bzero(void *p, size_t n);
#define uthash_malloc(sz) cg_table_malloc(sz)
#define uthash_free(ptr, sz) cg_table_free((ptr), (sz))
#define uthash_bzero(p, n) cg_table_bzero((p), (n))
/* Most keys are 8 bytes (handles, device pointers, capture ids): murmur3's
 * 64-bit finalizer (fmix64) instead of Jenkins' (~190 instructions per
 * lookup, three lookups per cuGraphExecUpdate). Every input bit reaches
 * every output bit, so keys a fixed stride apart (16, 256, 512 bytes:
 * sub-allocated device pointers, call-site stubs) spread over the low bits
 * uthash takes the bucket from. A one-multiply mix did not: for such keys
 * uthash found its expansions ineffective and stopped expanding for good
 * (noexpand), and chains grew without bound (issue 30; tests/unit/
 * test-table.c). Other lengths (the site table's keys) keep Jenkins. */
#include <stdint.h>
#include <string.h>
#define HASH_FUNCTION(keyptr, keylen, hashv)                                                                           \
	do {                                                                                                           \
		if ((keylen) == 8) {                                                                                   \
			uint64_t k_;                                                                                   \
			memcpy(&k_, (keyptr), 8);                                                                      \
			k_ ^= k_ >> 33;                                                                                \
			k_ *= 0xff51afd7ed558ccdull;                                                                   \
			k_ ^= k_ >> 33;                                                                                \
			k_ *= 0xc4ceb9fe1a85ec53ull;                                                                   \
			k_ ^= k_ >> 33;                                                                                \
			(hashv) = (unsigned)k_;                                                                        \
		} else {                                                                                               \
			HASH_JEN(keyptr, keylen, hashv);                                                               \
		}                                                                                                      \
	} while (0)
#include <uthash.h>

/* A bucket expansion (a chain grew past its threshold: a few times in a
 * table's life) out of line, in table.c (issue 36): inline, uthash's
 * ~60 instructions sat inside every HASH_ADD, between the lines of the
 * hot functions that add (a capture's begin, its allocations, graphs,
 * executables), and a steady loop never runs them. Same algorithm, same
 * result (table.c expands with uthash's own macro); a failed expansion
 * reports the table's OOM as before. */
struct UT_hash_table;
int cg_table_expand(struct UT_hash_table *tbl);
#ifndef CG_TABLE_EXPAND_HERE
#undef HASH_EXPAND_BUCKETS
#define HASH_EXPAND_BUCKETS(hh, tbl, oomed)                                                                            \
	do {                                                                                                           \
		if (cg_table_expand(tbl))                                                                              \
			HASH_RECORD_OOM(oomed);                                                                        \
	} while (0)
#endif

/* uthash calls HASH_BLOOM_FREE (no bloom filter here: empty) first when a
 * table goes: the delete of its last item, or HASH_CLEAR. Here it zeroes
 * the one used bucket of a table of the initial size that holds one item
 * and marks its bucket array clean for cg_table_free, which frees it next
 * on the same thread, inside the same macro. */
void cg_table_emptying(struct UT_hash_table *tbl);
#undef HASH_BLOOM_FREE
#define HASH_BLOOM_FREE(tbl) cg_table_emptying(tbl)

/* ---- a handle index (issue 36) ------------------------------------------
 * Items keyed by a pointer-sized handle, under their owner's lock, where a
 * steady loop makes and drops one item a step (a graph, an executable's
 * ledger entry): uthash's table emptied with its last item (header and
 * bucket array freed, made again with the next, ~10 cache lines a step and
 * table). Here the slot array stays: open addressing, linear probing, a
 * deleted slot marked dead and reused by the next add that probes it (a
 * handle that comes back takes its own slot again), emptied where no
 * probe goes past it (the next slot empty), the array rebuilt
 * (grown when over a quarter live) once live and dead slots fill half of
 * it. A delete compares slot contents with the item (no key read), a find
 * reads one slot line and the item's key. The items are also on a list in
 * the order they were added (uthash's HASH_ITER order): link is a struct
 * cg_hlink inside the item. */
struct cg_hlink {
	void *prev, *next;
};
struct cg_hidx {
	void **slot;	      /* NULL: empty; CG_HIDX_DEAD: deleted */
	size_t mask, used, n; /* slots - 1 (0: no array yet); live + dead slots; live items */
	size_t key_off, link_off;
	void *head, *tail;
} __attribute__((aligned(64))); /* one cache line */
#define CG_HIDX_DEAD ((void *)1)
#define CG_HIDX_INIT(type, key, link)                                                                                  \
	{                                                                                                              \
		.key_off = offsetof(type, key), .link_off = offsetof(type, link)                                       \
	}
/* The item of key k, NULL when none. */
void *cg_hidx_find(const struct cg_hidx *t, const void *k);
/* item (its key not in t) goes in: 0; -1 when no memory (not added,
 * reported as a failed uthash add is: cg_table_add_failed). */
int cg_hidx_add(struct cg_hidx *t, void *item);
/* item (in t) goes out. */
void cg_hidx_del(struct cg_hidx *t, void *item);
static inline void *cg_hidx_next(const struct cg_hidx *t, const void *item)
{
	return ((const struct cg_hlink *)((const char *)item + t->link_off))->next;
}
/* Every item in the order added; x may be deleted in the body. */
#define CG_HIDX_EACH(t, x, tmp) for ((x) = (t)->head; (x) && ((tmp) = cg_hidx_next((t), (x)), 1); (x) = (tmp))

#endif
