/*
 * bench/timing.h -- the clock and the median of the benchmark programs
 * (workload, rewrite_bench, query_cost): CLOCK_MONOTONIC in ns, and the
 * median of n doubles (sorts them).
 */
#ifndef CGSHIM_BENCH_TIMING_H
#define CGSHIM_BENCH_TIMING_H

#include <stdlib.h>
#include <time.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Sorts v. */
static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
