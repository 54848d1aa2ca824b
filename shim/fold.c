/*
 * shim/fold.c -- the fold table and the print limit (fold.h).
 *
 * A slot is claimed by one compare-and-swap of its tag (the key's hash,
 * never 0) and published by its ready flag; a reader that finds the tag
 * compares the whole key once the slot is ready. Counts are relaxed
 * atomics: exact once the writers are done (the exit).
 */
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#include "config.h"
#include "fold.h"

struct fold_slot {
	_Atomic uint64_t tag;
	_Atomic int ready;
	struct cg_fold_key k;
	_Atomic uint64_t count;
};

static struct fold_slot slots[CG_FOLD_SLOTS];
static _Atomic uint64_t n_repeats, n_full, n_printed, n_unprinted;

static uint64_t fold_hash(const struct cg_fold_key *k)
{
	uint64_t h = (uint64_t)k->rule * 0x9e3779b97f4a7c15ull;
	h ^= (uint64_t)k->site + 0x632be59bd9b4e019ull + (h << 6) + (h >> 2);
	h ^= k->obj + 0x85ebca6bull + (h << 6) + (h >> 2);
	h ^= (uint64_t)k->node + 0xc2b2ae35ull + (h << 6) + (h >> 2);
	h ^= k->capture + 0x27d4eb2full + (h << 6) + (h >> 2);
	h ^= k->obj_id + 0x165667b1ull + (h << 6) + (h >> 2);
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	return h | 1; /* 0: an empty slot */
}

static int fold_same(const struct cg_fold_key *a, const struct cg_fold_key *b)
{
	return a->rule == b->rule && a->site == b->site && a->obj == b->obj && a->node == b->node &&
	       a->capture == b->capture && a->obj_id == b->obj_id;
}

int cg_fold_note(const struct cg_fold_key *k)
{
	uint64_t h = fold_hash(k);
	for (int p = 0; p < CG_FOLD_PROBES; p++) {
		struct fold_slot *s = &slots[(h + (uint64_t)p) & (CG_FOLD_SLOTS - 1)];
		uint64_t t = atomic_load_explicit(&s->tag, memory_order_acquire);
		if (!t) {
			uint64_t zero = 0;
			if (atomic_compare_exchange_strong(&s->tag, &zero, h)) {
				s->k = *k;
				atomic_store_explicit(&s->count, 1, memory_order_relaxed);
				atomic_store_explicit(&s->ready, 1, memory_order_release);
				return 1;
			}
			t = zero; /* another thread claimed it first: its tag */
		}
		if (t != h)
			continue;
		/* The claimer fills a few words between its CAS and ready: wait
		 * briefly (yielding), then treat the slot as another key's. */
		for (int w = 0; w < 64 && !atomic_load_explicit(&s->ready, memory_order_acquire); w++)
			sched_yield();
		if (atomic_load_explicit(&s->ready, memory_order_acquire) && fold_same(&s->k, k)) {
			atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
			atomic_fetch_add_explicit(&n_repeats, 1, memory_order_relaxed);
			return 0;
		}
	}
	atomic_fetch_add_explicit(&n_full, 1, memory_order_relaxed);
	return 1;
}

int cg_fold_next(int *pos, struct cg_fold_key *k, uint64_t *count)
{
	for (; *pos < CG_FOLD_SLOTS; (*pos)++) {
		struct fold_slot *s = &slots[*pos];
		uint64_t n;
		if (!atomic_load_explicit(&s->ready, memory_order_acquire))
			continue;
		n = atomic_load_explicit(&s->count, memory_order_relaxed);
		if (n < 2)
			continue;
		*k = s->k;
		*count = n;
		(*pos)++;
		return 1;
	}
	return 0;
}

uint64_t cg_fold_repeats(void)
{
	return atomic_load_explicit(&n_repeats, memory_order_relaxed);
}

uint64_t cg_fold_full(void)
{
	return atomic_load_explicit(&n_full, memory_order_relaxed);
}

int cg_print_limited(void)
{
	const char *f = cg_cfg.log_file;
	if (cg_cfg.print_limit <= 0)
		return 0;
	return !f || !*f || !strcmp(f, "stderr") || !strcmp(f, "stdout");
}

int cg_print_take(void)
{
	if (!cg_print_limited())
		return 1;
	if (atomic_fetch_add_explicit(&n_printed, 1, memory_order_relaxed) < (uint64_t)cg_cfg.print_limit)
		return 1;
	atomic_fetch_add_explicit(&n_unprinted, 1, memory_order_relaxed);
	return 0;
}

uint64_t cg_print_unprinted(void)
{
	return atomic_load_explicit(&n_unprinted, memory_order_relaxed);
}

void cg_fold_after_fork_child(void)
{
	memset(slots, 0, sizeof slots);
	atomic_store(&n_repeats, 0);
	atomic_store(&n_full, 0);
	atomic_store(&n_printed, 0);
	atomic_store(&n_unprinted, 0);
}
