/*
 * shim/counters.h -- process-wide counts that several modules write and
 * the exit summary reads. A leaf: it calls nothing of the shim, so any
 * module may count here without calling up into the one that reports.
 * Relaxed atomics: a count is exact once its writers are done.
 */
#ifndef CGSHIM_COUNTERS_H
#define CGSHIM_COUNTERS_H

#include <stdatomic.h>
#include <stdint.h>

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
 * folded counts and the words of threads still registered.
 *
 * The top eager kernels by call site (CGSHIM_EAGER_SAMPLE): the add also
 * says when the launch is this thread's next sample (n reached next, one
 * compare); the caller then takes the site and the function
 * (model_eager_sample) into the thread's table, a fixed array allocated
 * when the thread registers (CG_EAGER_ENTS entries, open addressing),
 * written by its owner only: key fields first, then the sample count with
 * a release store, so a reader that sees a count sees its key. The gap to
 * the next sample is drawn on the sample's path, uniform in [1, 2P-1]
 * (mean P, the period; P = 1: every launch): a fixed gap would alias with a
 * loop whose launch count divides it. */
#define CG_EAGER_ENTS 64
#define CG_EAGER_NAME 112
struct cg_eager_ent {
	uintptr_t fn;
	uint32_t site, gen; /* gen: the module unloads when taken (a reused handle is another key) */
	_Atomic long long samples;
	char name[CG_EAGER_NAME]; /* the kernel's name, cut to fit ("" unknown) */
};
struct cg_eager_tls {
	_Atomic long long n;
	long long next;		  /* n of the next sample; -1 none (sampling off) */
	int reg;		  /* 0 not yet, 1 registered (slot or key), 2 cannot be */
	int busy;		  /* a sample in progress (a signal handler's launch takes none) */
	struct cg_eager_ent *tab; /* NULL: no table (every sample lost) */
	_Atomic long long lost;	  /* samples not kept: no table, table full, busy */
	uint64_t rng;
};
extern __thread __attribute__((tls_model("initial-exec"))) struct cg_eager_tls cg_eager_tls;
void cg_eager_register(void);
/* The add alone, for a caller that checked cg_eager_tls.reg (the launch
 * wrappers register in a cold branch of their own, so that a thread's first
 * launch samples from the same stack depth as any). Nonzero: this launch
 * is a sample. */
static inline int cg_eager_add(void)
{
	long long n = atomic_load_explicit(&cg_eager_tls.n, memory_order_relaxed) + 1;
	atomic_store_explicit(&cg_eager_tls.n, n, memory_order_relaxed);
	return __builtin_expect(n == cg_eager_tls.next, 0);
}
static inline int cg_count_eager(void)
{
	if (__builtin_expect(!cg_eager_tls.reg, 0))
		cg_eager_register();
	return cg_eager_add();
}
long long cg_eager_total(void);
/* In the child after fork: only its own thread's count stays, at 0, and
 * its table empty (the child starts fresh). */
void cg_eager_after_fork_child(void);

/* The sampling period P (CGSHIM_EAGER_SAMPLE; 0 off), set once at start
 * before any launch is counted; a thread draws its first gap at its
 * registration. */
void cg_eager_period_set(long long p);
long long cg_eager_period(void);
/* The owner's sample: draws the next gap (call it first), then the entry
 * of key (fn, site, gen) in its table, claimed if new (name "" then:
 * the caller fills it before the first count), or NULL (counted lost). */
void cg_eager_next_gap(void);
struct cg_eager_ent *cg_eager_ent_for(uintptr_t fn, uint32_t site, uint32_t gen);
/* Every thread's entries, merged by key (the exited threads' folded
 * table, then each registered thread's), into a malloc'd array (*out,
 * free it), the most sampled first; returns their number (0: *out NULL).
 * *samples: all samples taken (kept and lost). Cold: exit and dump. */
int cg_eager_top(struct cg_eager_ent **out, long long *samples);

#endif
