/*
 * shim/policy.h -- what the shim does about a failing update
 * (CGSHIM_ON_UPDATE_FAILURE) and the exec-handle translation it implies.
 *
 * After a re-instantiation the application's exec handle stands for a new
 * real executable. The application's original executable is kept alive
 * (not destroyed) until the application destroys its handle, so the driver
 * can never hand out the same handle value again while the mapping exists.
 */
#ifndef CGSHIM_POLICY_H
#define CGSHIM_POLICY_H

#include "cuda-abi.h"
#include "emit.h"
#include "model.h"

extern _Atomic int cg_policy_active;  /* set once the first rewrite happened */
extern _Atomic int cg_policy_pending; /* handles with graph allocations to free at their next launch */

/* Real exec behind an application handle (the handle itself when none). */
CUgraphExec cg_policy_exec_slow(CUgraphExec app);
static inline CUgraphExec cg_policy_exec(CUgraphExec app)
{
	if (__builtin_expect(!atomic_load_explicit(&cg_policy_active, memory_order_relaxed), 1))
		return app;
	return cg_policy_exec_slow(app);
}
/* Node of the rewritten exec's graph standing for a node of the graph the
 * application instantiated; *found = 0 when there is no counterpart. */
CUgraphNode cg_policy_node(CUgraphExec app, CUgraphNode node, int *found);

/* What a re-instantiation did, for its records, which the update hook
 * writes: the "rewrite" record's facts at level (0: none), and whether the
 * thrashing warning is owed (thrash, with the handle's counts). o->rec's
 * lists point into o. */
struct cg_rewrite_facts {
	int level;
	struct ev_rewrite rec;
	unsigned long long carried[8];
	struct emit_hexes carried_list;
	int thrash;
	long long rewrites, launches, reuses;
};

/* Try to replace a failing update of app by re-instantiation from g; nu is
 * g's summary as the update hook holds it (borrowed; NULL: looked up).
 * Returns 1 when done (the update then reports success); *o (zeroed by
 * the caller): its records' facts. */
int cg_policy_reinstantiate(CUgraphExec app, CUgraph g, struct cg_summary *nu, const char *reason, int rc_update,
			    const char *why, struct cg_rewrite_facts *o);
/* Whether app has been rewritten before (its handle has a proxy). */
int cg_policy_rewritten_before(CUgraphExec app);
/* The application destroys its handle: destroys the extra real exec too.
 * Inline, a load while no rewrite ever happened (every exec destroy asks):
 * no call, no frame. */
void cg_policy_forget_slow(CUgraphExec app);
static inline void cg_policy_forget(CUgraphExec app)
{
	if (__builtin_expect(atomic_load_explicit(&cg_policy_active, memory_order_relaxed) != 0, 0))
		cg_policy_forget_slow(app);
}
/* A device's primary context was reset (hooks/reset.c): the executables
 * apps (n of them; n < 0: every handle) are gone, and with them every
 * replacement, cached executable and held graph of theirs; their handles
 * are forgotten without a driver call (the driver destroyed those objects,
 * and a destroy of a dead handle may crash it). The retired replacements
 * waiting for cg_policy_collect go the same way: the policy does not know
 * their device, and leaving one of another device alive (a leak) is safer
 * than destroying a dead one. Before model_reset_device: the model still
 * knows the handles. */
void cg_policy_reset(const CUgraphExec *apps, int n);
/* The application destroys graph g. Returns 1 when a re-instantiated exec
 * still runs from g itself (a graph with memory nodes, which the driver will
 * not clone; every other replacement runs from the shim's own clone): the
 * shim then keeps g alive (destroying it with that exec) and the
 * application's destroy reports success. */
int cg_policy_graph_destroy(CUgraph g);
/* Destroy replacements retired by rewrites (deferred out of the update
 * call). Called at graph lifecycle calls, before the real call, never
 * inside a live capture of the calling thread's making. Inline, a load of
 * cg_policy_garbage (set while retired ones wait; on cg_policy_active's
 * line) where the call's 1.3 KB frame wrote a cold stack line each time. */
extern _Atomic int cg_policy_garbage;
void cg_policy_collect_slow(void);
static inline void cg_policy_collect(void)
{
	if (__builtin_expect(atomic_load_explicit(&cg_policy_garbage, memory_order_relaxed) != 0, 0))
		cg_policy_collect_slow();
}
/* AutoFreeOnLaunch kept across a rewrite: before the first launch of the
 * handle after it, free (on the launch stream) the allocations the replaced
 * executable's last launch left. */
void cg_policy_launch_pending(CUgraphExec app, CUstream s, int ptsz);

#endif
