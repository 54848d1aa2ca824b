/*
 * shim/ledger.h -- the allocation ledger (issue 15): every device and host
 * range the driver knows of that the shim saw made (cuMemAlloc, stream-
 * ordered and pool allocations outside capture, VMM mappings, pinned and
 * registered host memory), and, per live executable, the pointers into
 * those ranges that its nodes hold (kernel parameters, copy and memset
 * operands). Pageable memory is memory the driver does not know: it is in
 * no range.
 *
 * A free or unmap of a range that a live executable references makes that
 * executable stale (CGS018, warn, at the free); its next launch or upload
 * is an error before the call (CGS019). Graph allocations (memory nodes and
 * allocations made inside a capture) are never in the ledger, so a graph's
 * own memory nodes do not count.
 *
 * Locks: lg_lock (a leaf: no other model lock is taken under it, no driver
 * call is made under it). The launch path pays one relaxed load
 * (ledger_launch): the count of stale executables, zero in a healthy
 * program.
 */
#ifndef CGSHIM_LEDGER_H
#define CGSHIM_LEDGER_H

#include <stdatomic.h>
#include <stdint.h>

#include "cuda-abi.h"

enum { LG_DEVICE = 1, LG_ASYNC, LG_VMM, LG_PINNED, LG_REGISTERED };

/* What the ledger finds: an executable holding a pointer into a range that
 * went (CGS018, CGS019). The ledger only finds; the hooks hand the findings
 * to the rules' writer (rules.c), so the model never calls up into rules. */
enum { CG_REF_PARAM, CG_REF_DST, CG_REF_SRC };
struct cg_stale {
	CUgraphExec e;
	CUgraph g;
	uint64_t capture;
	uint32_t node;
	const char *kernel;  /* mangled name, NULL for a copy or memset */
	int param;	     /* kernel parameter index, -1 for an operand */
	int what, embedded;  /* CG_REF_*; the pointer sits inside a struct parameter */
	uint64_t val;	     /* the pointer the node holds */
	uint64_t base, size; /* the freed range */
	int kind;	     /* LG_* */
	int nrefs;	     /* the exec's pointers into the range */
	uint32_t alloc_site, exec_site, capture_site, free_site;
};

#define LEDGER_FOUND 16
/* The executables one free or unmap made stale: the first LEDGER_FOUND in
 * full, the rest counted. n is 0 while Python finalizes (its globals go in
 * no order: no warning; the execs are still marked stale). */
struct lg_holder;
struct ledger_freed {
	uint64_t base, size;
	int n, more;
	struct cg_stale s[LEDGER_FOUND];
	/* every exec made stale (handle, serial), for ledger_free_site,
	 * which releases it; malloc'd, NULL when none */
	struct lg_holder *marked;
	int n_marked, cap_marked;
};

/* Whether v can be an address at all (x86-64 and CUDA's unified address
 * space are 48-bit; the first page is never mapped): a cheap test before a
 * ledger lookup for kernel arguments that are doubles, sizes or flags. */
#define CG_PTRISH(v) ((uint64_t)(v) >= 4096 && (uint64_t)(v) < (1ull << 48))

/* A range the driver handed out or took (after the call succeeded). */
void ledger_add(uint64_t base, uint64_t size, int kind, uint32_t site);
/* base was freed (host: a host range) or [base, base+size) unmapped (size
 * 0: the range starting at base). Checks every live executable for pointers
 * into it and marks those stale; what it found goes to *out. Returns the
 * number of executables it made stale (the hook then logs the call at info,
 * so the CGS018 record has its call beside it). */
int ledger_free(uint64_t base, uint64_t size, int host, struct ledger_freed *out);
/* [base, base+size) mapped again (cuMemMap succeeded): the live
 * executables an earlier unmap there made stale (their first stale
 * reference, the unmapped range, its free site), the first max copied to
 * out. Returns how many. One relaxed load while no exec is stale. */
int ledger_remapped(uint64_t base, uint64_t size, struct cg_stale *out, int max);
/* The free's site, once known, for the launch check's record (CGS019). */
void ledger_free_site(struct ledger_freed *f, uint32_t site);
/* Holder entries frees and unmaps examined (the summary's ledger_examined):
 * the interval index's work, the execs that pointed into the freed ranges,
 * never every live exec. */
long long ledger_examined(void);
/* Changes of the ledger's ranges so far (an add, a free, an unmap): equal
 * values, the same ledger_tracked answers. */
uint64_t ledger_epoch(void);
/* Whether v points into a range of the ledger (node walks). */
int ledger_tracked(uint64_t v);
/* Base of the range holding v, 0 if none. */
uint64_t ledger_base(uint64_t v);

struct cg_summary;
/* Copies of an executable whose host operand is pageable (CGS020). */
struct ledger_pageable {
	CUgraphExec e;
	CUgraph g;
	uint32_t exec_site, capture_site;
	int n;
	struct {
		uint32_t node;
		int what; /* CG_REF_SRC or CG_REF_DST */
		uint64_t host, bytes;
	} c[8];
};
/* A new executable e of graph g (instantiate) or one whose nodes changed
 * (update, re-instantiation): its references, from a full summary of its
 * nodes; the pageable host operands of its copies go to *out. */
void ledger_exec_set(CUgraphExec e, CUgraph g, uint32_t exec_site, const struct cg_summary *sum,
		     struct ledger_pageable *out);
/* (exec_site 0: an update; the exec keeps its instantiation's graph and sites) */
void ledger_exec_gone(CUgraphExec e);
/* A new executable e of graph g with no copy nodes whose references are
 * worked out only when first needed: before the next scan of the ranges
 * (a free or unmap), from its full summary (model_exec_summary: the graph
 * walked then, or when a hook changes or destroys it first). A loop that
 * instantiates and destroys without freeing anything never walks. */
/* capture, capture_site: g's capture and its begin site (model_graph_info,
 * which the instantiation already asked). Where the ledger has no entry for
 * e (ledger_exec_known 0: a steady loop's every exec), the instantiation
 * keeps this entry on the model's exec instead (model_exec_new lg_pending:
 * no ledger entry, lock or allocation), and the exec's destroy owes no
 * ledger_exec_gone while it is still there (model_exec_destroy); the
 * ledger takes it as its own at the exec's first ledger_exec_set (the
 * working out, an update) and works it out with its own pending ones. */
void ledger_exec_pending(CUgraphExec e, CUgraph g, uint32_t exec_site, uint64_t capture, uint32_t capture_site);
/* Whether the ledger has an entry for e (one load while it has none). */
int ledger_exec_known(CUgraphExec e);

extern _Atomic int ledger_stale_n;
int ledger_launch_slow(CUgraphExec e, struct cg_stale *why, int *first);
/* Launch/upload path: a relaxed load unless an executable is stale. Returns
 * 1 when e is stale, with why it is and whether this is its first launch
 * since (CGS019, written by the hook before the call). */
static inline int ledger_launch(CUgraphExec e, struct cg_stale *why, int *first)
{
	if (__builtin_expect(atomic_load_explicit(&ledger_stale_n, memory_order_relaxed) != 0, 0))
		return ledger_launch_slow(e, why, first);
	return 0;
}

#endif
