/*
 * bench/bench.h -- what the benchmark programs (workload, rewrite_bench,
 * query_cost, drvstate_probe) share: CLOCK_MONOTONIC in ns, the median of
 * n doubles (sorts them), and MUST (a runtime call that must succeed, else
 * exit 1). After scenario.h (the runtime, or the stand-in's).
 */
#ifndef CGSHIM_BENCH_H
#define CGSHIM_BENCH_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define MUST(call)                                                                                                     \
	do {                                                                                                           \
		int rc_ = (int)(call);                                                                                 \
		if (rc_ != cudaSuccess) {                                                                              \
			printf("%s: rc=%d (%s) line %d\n", #call, rc_, cudaGetErrorName((cudaError_t)rc_), __LINE__);  \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

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
