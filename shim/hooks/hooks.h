/*
 * shim/hooks/hooks.h -- private header of the hand-written driver wrappers
 * (the CUSTOM rows of hooks.def), split by API family: graph.c (graphs and
 * nodes), exec.c (instantiate, exec destroy), update.c, launch.c (launch,
 * upload), capture.c (stream capture, events, synchronize), memory.c
 * (allocation, pools); capture-map.c (the capture map's other routes),
 * capture-rules.c (the capture rules' lookups), gen.c (generated
 * wrappers), runtime.c, vmm.c.
 *
 * The sequence a hook follows (contract):
 *   1. translate the arguments (the application's handle to the real one)
 *   2. look the model up (summaries, captures, pools)
 *   3. ask the rules for verdicts (rules/verdict.h: pure, no writes)
 *   4. let the policy decide (abort, reinstantiate, count instead of write)
 *   5. hand the verdicts to rules.c (the one writer of violation records)
 *      and call the driver
 *   6. update the model with the driver's answer
 *   7. write the call's record
 * Each step runs once; no step calls back into an earlier one. This is
 * the target contract (issue 13, point 1). Today the rules are pure
 * (step 3) and rules.c alone writes violations (step 5), but no hook yet
 * runs the steps strictly in this order: the update hook writes its
 * verdicts before the policy's abort check and consults the policy on
 * the way in (cg_policy_exec), out (reinstantiate) and in between
 * (cg_policy_rewritten_before).
 */
#ifndef CGSHIM_HOOKS_H
#define CGSHIM_HOOKS_H

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../call.h"
#include "cgshim/record.h"
#include "../config.h"
#include "../ledger.h"
#include "../model.h"
#include "../nodes.h"
#include "../policy.h"
#include "../rules.h"
#include "../rules/verdict.h"
#include "../site.h"

/* Frames of the shim between a wrapper and cg_site_here's caller: the
 * wrapper itself. */
#define SITE_SKIP 1

/* model.c: the graph-memory record (first launch, exec destroy). */
extern void cg_model_graphmem(const char *when, CUgraphExec e);

/* Set by the first cuGraphExecUpdate of the process (update.c); from then
 * on graphs are walked as their capture ends (capture.c). */
extern _Atomic int cgh_updates_seen;

/* Node records of summary s of graph g at level (exec.c): side "exec" or
 * "graph" (exec e) for both sides of a refused update, NULL at debug
 * level for every instantiated graph. */
void cgh_emit_nodes_at(CUgraph g, const struct cg_summary *s, int level, const char *side, CUgraphExec e);

#endif
