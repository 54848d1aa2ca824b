/* shim/counters.c -- process-wide counts (counters.h). */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

#include "counters.h"

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

long long cg_noted_total(void)
{
	return atomic_load_explicit(&n_noted, memory_order_relaxed);
}

void cg_count_condensed(void)
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

/* Thread exit: its count joins the process's, its slot is freed. */
static void eager_exit(void *arg)
{
	(void)arg;
	for (int i = 0; i < EAGER_SLOTS; i++) {
		struct cg_eager_tls *me = &cg_eager_tls;
		if (atomic_load_explicit(&eager_slot[i], memory_order_relaxed) == me &&
		    atomic_compare_exchange_strong(&eager_slot[i], &me, NULL))
			break;
	}
	atomic_fetch_add(&eager_folded, atomic_exchange(&cg_eager_tls.n, 0));
}

void cg_eager_register(void)
{
	int none = 0, i, saved = errno; /* on the application's launch: its errno kept */
	cg_eager_tls.reg = 2;
	if (atomic_compare_exchange_strong(&eager_key_state, &none, 2))
		atomic_store(&eager_key_state, pthread_key_create(&eager_key, eager_exit) == 0 ? 1 : -1);
	if (atomic_load(&eager_key_state) != 1 || pthread_setspecific(eager_key, &cg_eager_tls) != 0) {
		errno = saved;
		return; /* counted, never summed: the summary falls short */
	}
	cg_eager_tls.reg = 1;
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

void cg_eager_after_fork_child(void)
{
	for (int i = 0; i < EAGER_SLOTS; i++)
		if (atomic_load_explicit(&eager_slot[i], memory_order_relaxed) != &cg_eager_tls)
			atomic_store(&eager_slot[i], NULL);
	atomic_store(&eager_folded, 0);
	atomic_store(&cg_eager_tls.n, 0);
}
