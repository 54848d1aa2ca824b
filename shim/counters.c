/* shim/counters.c -- process-wide counts (counters.h). */
#include <stdatomic.h>

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
