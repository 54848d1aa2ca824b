/* tests/programs/prog_util.h -- result checking and the stand-in's kernels
 * for the driver-level programs. */
#ifndef CGSHIM_PROG_UTIL_H
#define CGSHIM_PROG_UTIL_H

#include <stdio.h>

#include "standin.h"

static int prog_failures;

static inline int prog_check(const char *what, int rc, int want)
{
	printf("%s: rc=%d%s\n", what, rc, rc == want ? "" : " UNEXPECTED");
	if (rc != want)
		prog_failures++;
	fflush(stdout);
	return rc;
}

/* DCHECK("label", call, expected) */
#define DCHECK(what, call, want) prog_check(what, (int)(call), (int)(want))
#define DEXPECT(cond)                                                                                                  \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("EXPECT failed: %s (line %d)\n", #cond, __LINE__);                                      \
			prog_failures++;                                                                               \
		}                                                                                                      \
	} while (0)

/* Kernels as the stand-in runs them (a host function given as the
 * CUfunction): p[i] = v and p[i] += v for i < n, the arguments (float *p,
 * long n, double v) and nt the threads launched. */
static inline void k_fill(void **a, unsigned long nt)
{
	float *p = STANDIN_ARG(a, 0, float *);
	long n = STANDIN_ARG(a, 1, long);
	double v = STANDIN_ARG(a, 2, double);
	for (long i = 0; i < n && (unsigned long)i < nt; i++)
		p[i] = (float)v;
}

static inline void k_add(void **a, unsigned long nt)
{
	float *p = STANDIN_ARG(a, 0, float *);
	long n = STANDIN_ARG(a, 1, long);
	double v = STANDIN_ARG(a, 2, double);
	for (long i = 0; i < n && (unsigned long)i < nt; i++)
		p[i] += (float)v;
}

#endif
