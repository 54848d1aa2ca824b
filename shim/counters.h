/*
 * shim/counters.h -- process-wide counts that several modules write and
 * the exit summary reads. A leaf: it calls nothing of the shim, so any
 * module may count here without calling up into the one that reports.
 * Relaxed atomics: a count is exact once its writers are done.
 */
#ifndef CGSHIM_COUNTERS_H
#define CGSHIM_COUNTERS_H

#include <stdatomic.h>

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

/* Kernel launches that ran eagerly (issue 32, coverage): per thread, no
 * lock, no allocation on the launch path. The owner adds with a relaxed
 * load and store (a plain add); a thread's first count registers its word
 * (cold: a slot of a fixed table and a pthread key whose destructor folds
 * the count into the process's at thread exit). cg_eager_total sums the
 * folded counts and the words of threads still registered. */
struct cg_eager_tls {
	_Atomic long long n;
	int reg; /* 0 not yet, 1 registered (slot or key), 2 cannot be */
};
extern __thread __attribute__((tls_model("initial-exec"))) struct cg_eager_tls cg_eager_tls;
void cg_eager_register(void);
/* The add alone, for a caller that checked cg_eager_tls.reg (the launch
 * wrappers: their registering call is on their slow path, so the fast one
 * saves no argument across a call). */
static inline void cg_eager_add(void)
{
	atomic_store_explicit(&cg_eager_tls.n, atomic_load_explicit(&cg_eager_tls.n, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}
static inline void cg_count_eager(void)
{
	if (__builtin_expect(!cg_eager_tls.reg, 0))
		cg_eager_register();
	cg_eager_add();
}
long long cg_eager_total(void);
/* In the child after fork: only its own thread's count stays. */
void cg_eager_after_fork_child(void);

#endif
