/*
 * shim/counters.h -- process-wide counts that several modules write and
 * the exit summary reads. A leaf: it calls nothing of the shim, so any
 * module may count here without calling up into the one that reports.
 * Relaxed atomics: a count is exact once its writers are done.
 */
#ifndef CGSHIM_COUNTERS_H
#define CGSHIM_COUNTERS_H

#include "cuda-abi.h"

/* A hooked call the driver failed (the summary's "failures"). */
void cg_count_failure(int hid, CUresult rc);
long long cg_failures_total(void);

#endif
