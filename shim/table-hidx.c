/* shim/table-hidx.c -- the handle index (table.h). Its slot arrays come
 * from cg_table_malloc and go back through cg_table_free, as uthash's
 * blocks do (a test's allocator failures reach them). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hot.h"
#include "table.h"

#define HIDX_MIN 256

static CG_HOT size_t hidx_home(size_t mask, const void *k)
{
	uint64_t x = (uint64_t)(uintptr_t)k;
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x & mask;
}

static CG_HOT const void *hidx_key(const struct cg_hidx *t, const void *item)
{
	const void *k;
	memcpy(&k, (const char *)item + t->key_off, sizeof k);
	return k;
}

static CG_HOT struct cg_hlink *hidx_link(const struct cg_hidx *t, void *item)
{
	return (struct cg_hlink *)((char *)item + t->link_off);
}

CG_HOT void *cg_hidx_find(const struct cg_hidx *t, const void *k)
{
	if (!t->mask)
		return NULL;
	for (size_t i = hidx_home(t->mask, k);; i = (i + 1) & t->mask) {
		void *x = t->slot[i];
		if (!x)
			return NULL;
		if (x != CG_HIDX_DEAD && hidx_key(t, x) == k)
			return x;
	}
}

/* item into the first dead or empty slot of its probe (the array has an
 * empty one). */
static CG_HOT void hidx_place(struct cg_hidx *t, void **slot, size_t mask, void *item, size_t *used)
{
	size_t i = (size_t)-1, j;
	for (j = hidx_home(mask, hidx_key(t, item)); slot[j]; j = (j + 1) & mask)
		if (slot[j] == CG_HIDX_DEAD && i == (size_t)-1)
			i = j;
	if (i == (size_t)-1) {
		i = j;
		++*used;
	}
	slot[i] = item;
}

/* The array rebuilt without its dead slots, at a size a quarter live or
 * less. -1 when no memory (the array stays). */
static CG_COLD int hidx_rebuild(struct cg_hidx *t)
{
	size_t cap = HIDX_MIN, used = 0;
	void **s;
	while (cap < (t->n + 1) * 4)
		cap *= 2;
	if (!(s = cg_table_malloc(cap * sizeof *s)))
		return -1;
	memset(s, 0, cap * sizeof *s);
	for (void *x = t->head; x; x = cg_hidx_next(t, x))
		hidx_place(t, s, cap - 1, x, &used);
	if (t->slot)
		cg_table_free(t->slot, (t->mask + 1) * sizeof *s);
	t->slot = s;
	t->mask = cap - 1;
	t->used = used;
	return 0;
}

CG_HOT int cg_hidx_add(struct cg_hidx *t, void *item)
{
	struct cg_hlink *l;
	/* live and dead slots under half the array after this add; past
	 * three quarters (a failed rebuild) no add: a probe must end */
	if (__builtin_expect((t->used + 1) * 2 > t->mask + 1, 0) && hidx_rebuild(t) &&
	    (t->used + 2) * 4 > (t->mask + 1) * 3) {
		cg_table_oom_here = 1; /* as uthash reports it (cg_table_add_failed) */
		return -1;
	}
	hidx_place(t, t->slot, t->mask, item, &t->used);
	t->n++;
	l = hidx_link(t, item);
	l->next = NULL;
	l->prev = t->tail;
	if (t->tail)
		hidx_link(t, t->tail)->next = item;
	else
		t->head = item;
	t->tail = item;
	return 0;
}

CG_HOT void cg_hidx_del(struct cg_hidx *t, void *item)
{
	struct cg_hlink *l = hidx_link(t, item);
	for (size_t i = hidx_home(t->mask, hidx_key(t, item)); t->slot[i]; i = (i + 1) & t->mask)
		if (t->slot[i] == item) {
			t->slot[i] = CG_HIDX_DEAD;
			t->n--;
			/* no probe passes an empty next slot: this one and
			 * the dead ones before it empty too (a table of a few
			 * items keeps no dead slots, and is never rebuilt) */
			for (size_t j = i; t->slot[j] == CG_HIDX_DEAD && !t->slot[(j + 1) & t->mask];
			     j = (j - 1) & t->mask) {
				t->slot[j] = NULL;
				t->used--;
			}
			break;
		}
	if (l->prev)
		hidx_link(t, l->prev)->next = l->next;
	else
		t->head = l->next;
	if (l->next)
		hidx_link(t, l->next)->prev = l->prev;
	else
		t->tail = l->prev;
	l->prev = l->next = NULL;
}
