/* shim/counters.c -- process-wide counts (counters.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "counters.h"
#include "hot.h"
#include "locks.h"

static _Atomic long long n_fail;

void cg_count_failure(int hid, CUresult rc)
{
	(void)hid;
	(void)rc;
	atomic_fetch_add_explicit(&n_fail, 1, memory_order_relaxed);
	cg_count_noted();
}

long long cg_failures_total(void)
{
	return atomic_load_explicit(&n_fail, memory_order_relaxed);
}

static _Atomic long long n_condensed, n_noted;

void cg_count_noted(void)
{
	atomic_fetch_add_explicit(&n_noted, 1, memory_order_relaxed);
}

CG_HOT long long cg_noted_total(void)
{
	return atomic_load_explicit(&n_noted, memory_order_relaxed);
}

CG_HOT void cg_count_condensed(void)
{
	atomic_fetch_add_explicit(&n_condensed, 1, memory_order_relaxed);
}

long long cg_condensed_total(void)
{
	return atomic_load_explicit(&n_condensed, memory_order_relaxed);
}

/* ---- eager kernel launches, per thread ---------------------------------- */
__thread __attribute__((tls_model("initial-exec"))) struct cg_eager_tls cg_eager_tls;

#define EAGER_SLOTS 1024
static _Atomic(struct cg_eager_tls *) eager_slot[EAGER_SLOTS];
static _Atomic long long eager_folded; /* counts of threads gone, or with no slot */
static _Atomic int eager_key_state;    /* 0 none, 2 being made, 1 made, -1 none can be */
static pthread_key_t eager_key;
static _Atomic long long eager_period; /* CGSHIM_EAGER_SAMPLE, 0 off */
/* Under eager_lock: the tables of threads gone, merged (a full one keeps
 * the excess as lost), and their lost samples. */
#define EAGER_FOLD_ENTS 1024
static struct cg_eager_ent eager_fold_tab[EAGER_FOLD_ENTS];
static long long eager_fold_lost;

void cg_eager_period_set(long long p)
{
	atomic_store(&eager_period, p > 0 ? p : 0);
}

long long cg_eager_period(void)
{
	return atomic_load_explicit(&eager_period, memory_order_relaxed);
}

/* xorshift64*, the thread's own state: the gap to the next sample. */
void cg_eager_next_gap(void)
{
	struct cg_eager_tls *t = &cg_eager_tls;
	long long p = cg_eager_period(), n = atomic_load_explicit(&t->n, memory_order_relaxed);
	uint64_t x = t->rng ? t->rng : 0x9E3779B97F4A7C15ull;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	t->rng = x;
	t->next = p > 0 ? n + 1 + (long long)((x * 0x2545F4914F6CDD1Dull >> 1) % (uint64_t)(2 * p - 1)) : -1;
}

static size_t eager_hash(uintptr_t fn, uint32_t site, uint32_t gen)
{
	uint64_t h = ((uint64_t)fn ^ (uint64_t)site << 32 ^ gen) * 0x9E3779B97F4A7C15ull;
	return (size_t)(h >> 40);
}

/* The entry of key in tab (cap a power of two), claimed when free. */
static struct cg_eager_ent *eager_find(struct cg_eager_ent *tab, size_t cap, uintptr_t fn, uint32_t site, uint32_t gen)
{
	for (size_t k = 0, i = eager_hash(fn, site, gen) & (cap - 1); k < cap; k++, i = (i + 1) & (cap - 1)) {
		struct cg_eager_ent *e = &tab[i];
		if (!atomic_load_explicit(&e->samples, memory_order_acquire) && !e->fn) {
			e->fn = fn ? fn : 1; /* 1: a NULL function's key (the driver refuses it anyway) */
			e->site = site;
			e->gen = gen;
			e->name[0] = 0;
			return e;
		}
		if (e->fn == (fn ? fn : 1) && e->site == site && e->gen == gen)
			return e;
	}
	return NULL;
}

struct cg_eager_ent *cg_eager_ent_for(uintptr_t fn, uint32_t site, uint32_t gen)
{
	struct cg_eager_ent *e = cg_eager_tls.tab ? eager_find(cg_eager_tls.tab, CG_EAGER_ENTS, fn, site, gen) : NULL;
	if (!e)
		atomic_fetch_add_explicit(&cg_eager_tls.lost, 1, memory_order_relaxed);
	return e;
}

/* Under eager_lock: tab's counted entries into eager_fold_tab. */
static void eager_fold_locked(const struct cg_eager_ent *tab, size_t n)
{
	for (size_t i = 0; tab && i < n; i++) {
		long long c = atomic_load_explicit(&tab[i].samples, memory_order_acquire);
		struct cg_eager_ent *e;
		if (!c)
			continue;
		e = eager_find(eager_fold_tab, EAGER_FOLD_ENTS, tab[i].fn, tab[i].site, tab[i].gen);
		if (!e) {
			eager_fold_lost += c;
			continue;
		}
		if (!e->name[0])
			memcpy(e->name, tab[i].name, sizeof e->name);
		atomic_store_explicit(&e->samples, atomic_load_explicit(&e->samples, memory_order_relaxed) + c,
				      memory_order_release);
	}
}

/* Thread exit: its count joins the process's, its slot is freed, its
 * samples join the folded table and its table is freed (under eager_lock,
 * which a reader of the registered tables holds). */
static void eager_exit(void *arg)
{
	struct cg_eager_ent *tab;
	(void)arg;
	pthread_mutex_lock(&eager_lock);
	for (int i = 0; i < EAGER_SLOTS; i++) {
		struct cg_eager_tls *me = &cg_eager_tls;
		if (atomic_load_explicit(&eager_slot[i], memory_order_relaxed) == me &&
		    atomic_compare_exchange_strong(&eager_slot[i], &me, NULL))
			break;
	}
	atomic_fetch_add(&eager_folded, atomic_exchange(&cg_eager_tls.n, 0));
	tab = cg_eager_tls.tab;
	cg_eager_tls.tab = NULL;
	eager_fold_locked(tab, CG_EAGER_ENTS);
	eager_fold_lost += atomic_exchange(&cg_eager_tls.lost, 0);
	pthread_mutex_unlock(&eager_lock);
	free(tab);
}

void cg_eager_register(void)
{
	int none = 0, i, saved = errno; /* on the application's launch: its errno kept */
	cg_eager_tls.reg = 2;
	cg_eager_tls.rng = 0x9E3779B97F4A7C15ull; /* every thread the same draws: a test's runs repeat */
	cg_eager_next_gap();
	if (atomic_compare_exchange_strong(&eager_key_state, &none, 2))
		atomic_store(&eager_key_state, pthread_key_create(&eager_key, eager_exit) == 0 ? 1 : -1);
	if (atomic_load(&eager_key_state) != 1 || pthread_setspecific(eager_key, &cg_eager_tls) != 0) {
		errno = saved;
		return; /* counted, never summed: the summary falls short */
	}
	cg_eager_tls.reg = 1;
	/* the sample table, once (freed at the thread's exit): not on any later launch */
	if (cg_eager_period() > 0)
		cg_eager_tls.tab = calloc(CG_EAGER_ENTS, sizeof *cg_eager_tls.tab);
	for (i = 0; i < EAGER_SLOTS; i++) {
		struct cg_eager_tls *free_slot = NULL;
		if (atomic_compare_exchange_strong(&eager_slot[i], &free_slot, &cg_eager_tls))
			break;
	}
	/* no slot: the count is folded at the thread's exit only */
	errno = saved;
}

long long cg_eager_total(void)
{
	long long n = atomic_load(&eager_folded);
	for (int i = 0; i < EAGER_SLOTS; i++) {
		struct cg_eager_tls *t = atomic_load(&eager_slot[i]);
		if (t)
			n += atomic_load_explicit(&t->n, memory_order_relaxed);
	}
	return n;
}

static int eager_by_samples(const void *a, const void *b)
{
	long long x = atomic_load(&((const struct cg_eager_ent *)a)->samples);
	long long y = atomic_load(&((const struct cg_eager_ent *)b)->samples);
	return x < y ? 1 : x > y ? -1 : 0;
}

int cg_eager_top(struct cg_eager_ent **out, long long *samples)
{
	size_t cap = EAGER_FOLD_ENTS * 2, n = 0;
	struct cg_eager_ent *m = calloc(cap, sizeof *m), *all;
	long long lost;
	*out = NULL;
	*samples = 0;
	if (!m)
		return 0;
	pthread_mutex_lock(&eager_lock);
	lost = eager_fold_lost;
	for (size_t i = 0; i < EAGER_FOLD_ENTS; i++) {
		long long c = atomic_load_explicit(&eager_fold_tab[i].samples, memory_order_relaxed);
		struct cg_eager_ent *e;
		if (!c)
			continue;
		e = eager_find(m, cap, eager_fold_tab[i].fn, eager_fold_tab[i].site, eager_fold_tab[i].gen);
		if (!e) { /* cannot be: cap is twice the folded table's */
			lost += c;
			continue;
		}
		memcpy(e->name, eager_fold_tab[i].name, sizeof e->name);
		atomic_store(&e->samples, c);
	}
	for (int s = 0; s < EAGER_SLOTS; s++) {
		struct cg_eager_tls *t = atomic_load(&eager_slot[s]);
		if (!t)
			continue;
		lost += atomic_load_explicit(&t->lost, memory_order_relaxed);
		for (size_t i = 0; t->tab && i < CG_EAGER_ENTS; i++) {
			const struct cg_eager_ent *x = &t->tab[i];
			long long c = atomic_load_explicit(&x->samples, memory_order_acquire);
			struct cg_eager_ent *e;
			if (!c)
				continue;
			e = eager_find(m, cap, x->fn, x->site, x->gen);
			if (!e) {
				lost += c;
				continue;
			}
			if (!e->name[0])
				memcpy(e->name, x->name, sizeof e->name);
			atomic_store(&e->samples, atomic_load(&e->samples) + c);
		}
	}
	pthread_mutex_unlock(&eager_lock);
	all = calloc(cap, sizeof *all);
	for (size_t i = 0; all && i < cap; i++)
		if (atomic_load(&m[i].samples)) {
			*samples += atomic_load(&m[i].samples);
			all[n++] = m[i];
		}
	free(m);
	*samples += lost;
	if (!all || !n) {
		free(all);
		return 0;
	}
	qsort(all, n, sizeof *all, eager_by_samples);
	*out = all;
	return (int)n;
}

void cg_eager_after_fork_child(void)
{
	for (int i = 0; i < EAGER_SLOTS; i++)
		if (atomic_load_explicit(&eager_slot[i], memory_order_relaxed) != &cg_eager_tls)
			atomic_store(&eager_slot[i], NULL); /* other threads' tables: left to the child's heap */
	atomic_store(&eager_folded, 0);
	atomic_store(&cg_eager_tls.n, 0);
	memset(eager_fold_tab, 0, sizeof eager_fold_tab);
	eager_fold_lost = 0;
	if (cg_eager_tls.tab)
		memset(cg_eager_tls.tab, 0, CG_EAGER_ENTS * sizeof *cg_eager_tls.tab);
	atomic_store(&cg_eager_tls.lost, 0);
	if (cg_eager_tls.reg)
		cg_eager_next_gap();
}
