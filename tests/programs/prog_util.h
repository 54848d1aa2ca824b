/* tests/programs/prog_util.h -- result checking for the driver-level programs. */
#ifndef CGSHIM_PROG_UTIL_H
#define CGSHIM_PROG_UTIL_H

#include <stdio.h>

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

#endif
