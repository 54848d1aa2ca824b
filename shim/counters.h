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

/* A violation or a failed call: whatever makes a steady capture cycle
 * worth writing in full (model/captures.c compares it at begin and end). */
void cg_count_noted(void);
long long cg_noted_total(void);

/* A lifecycle record of a steady capture cycle left to debug level
 * (call.h, CG_CALL_REPEAT): the summary's "records_condensed". */
void cg_count_condensed(void);
long long cg_condensed_total(void);

#endif
