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

/* A range the driver handed out or took (after the call succeeded). */
void ledger_add(uint64_t base, uint64_t size, int kind, uint32_t site);
/* base was freed (kind_host: a host range) or [base, base+size) unmapped
 * (size 0: the range starting at base). Checks every live executable for
 * pointers into it (CGS018). api names the call. */
int ledger_free(uint64_t base, uint64_t size, int host, const char *api);
/* (returns the number of executables it made stale: the hook then logs the
 * call at info, so the CGS018 record has its call beside it) */
/* Whether v points into a range of the ledger (node walks). */
int ledger_tracked(uint64_t v);
/* Base of the range holding v, 0 if none. */
uint64_t ledger_base(uint64_t v);

struct cg_summary;
/* A new executable e of graph g (instantiate) or one whose nodes changed
 * (update, re-instantiation): its references, from a full summary of its
 * nodes; pageable host operands of its copies are flagged (CGS020). */
void ledger_exec_set(CUgraphExec e, CUgraph g, uint32_t exec_site, const struct cg_summary *sum, const char *api);
/* (exec_site 0: an update; the exec keeps its instantiation's graph and sites) */
void ledger_exec_gone(CUgraphExec e);

extern _Atomic int ledger_stale_n;
int ledger_launch_slow(CUgraphExec e, const char *api);
/* Launch/upload path: a relaxed load unless an executable is stale. Returns
 * 1 when e is stale (CGS019 was said or counted, before the call). */
static inline int ledger_launch(CUgraphExec e, const char *api)
{
	if (__builtin_expect(atomic_load_explicit(&ledger_stale_n, memory_order_relaxed) != 0, 0))
		return ledger_launch_slow(e, api);
	return 0;
}

#endif
