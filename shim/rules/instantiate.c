/*
 * shim/rules/instantiate.c -- the instantiate and launch rules, pure
 * verdicts (verdict.h):
 *
 *   CGS004  second instantiation of a memory-node graph while its exec lives
 *   CGS010  DeviceLaunch with AutoFreeOnLaunch or memory nodes; a
 *           memory-node graph cloned or used as a child
 *   CGS005  relaunch with unfreed graph allocations, no AutoFreeOnLaunch
 *
 * The launch rule runs only on the launch path's cold branch (an exec
 * whose last launch left allocations unfreed): the hot path stays a
 * relaxed load. Nothing here writes, locks or calls the driver.
 */
#include <stdio.h>

#include "../hot.h"
#include "../rules.h"
#include "verdict.h"

static int instantiate_mem(const struct cg_instantiate_ev *ev)
{
	return ev->sum ? (int)(ev->sum->n_alloc + ev->sum->n_free) : 0;
}

CG_HOT int rules_instantiate_second(const struct cg_instantiate_ev *ev, const struct cg_model_view *mv,
				    struct cg_verdict *v)
{
	struct cg_exec_view live;
	int mem = instantiate_mem(ev);
	if (!mem || !mv->graph_live_exec(ev->g, &live))
		return 0;
	cg_verdict_init(v, R_SECOND_INSTANTIATE, CUDA_ERROR_NOT_SUPPORTED);
	snprintf(v->msg, 320,
		 "graph 0x%llx has %d memory node(s) and is already instantiated as exec 0x%llx "
		 "(launched %lld times); only one executable of such a graph may exist at a time: "
		 "destroy it first, or update it instead of instantiating again",
		 (unsigned long long)(uintptr_t)ev->g, mem, (unsigned long long)(uintptr_t)live.h, live.launches);
	cg_vf_hex(v, "graph", (uintptr_t)ev->g);
	cg_vf_hex(v, "other_exec", (uintptr_t)live.h);
	cg_vf_site(v, "site", ev->site);
	cg_vf_site(v, "exec_site", live.site);
	return 1;
}

CG_HOT int rules_instantiate_device_launch(const struct cg_instantiate_ev *ev, struct cg_verdict *v)
{
	int autofree = !!(ev->flags & CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH);
	if (!(ev->flags & CUDA_GRAPH_INSTANTIATE_FLAG_DEVICE_LAUNCH) || !(autofree || instantiate_mem(ev)))
		return 0;
	cg_verdict_init(v, R_DEVICE_LAUNCH_MEM, CUDA_ERROR_INVALID_VALUE);
	snprintf(v->msg, 320, "DeviceLaunch cannot be combined with %s",
		 autofree ? "AutoFreeOnLaunch" : "memory nodes in the graph");
	cg_vf_hex(v, "graph", (uintptr_t)ev->g);
	cg_vf_u64(v, "flags", ev->flags);
	cg_vf_site(v, "site", ev->site);
	return 1;
}

int rules_instantiate_compose(const struct cg_compose_ev *ev, struct cg_verdict *v)
{
	if (!ev->mem)
		return 0;
	cg_verdict_init(v, R_DEVICE_LAUNCH_MEM, -1);
	snprintf(v->msg, 256,
		 "graph 0x%llx holds %d memory node(s) and cannot be %s (only a child moved with "
		 "CU_GRAPH_CHILD_GRAPH_OWNERSHIP_MOVE through cuGraphAddNode, from CUDA 12.9)",
		 (unsigned long long)(uintptr_t)ev->g, ev->mem, ev->what);
	cg_vf_hex(v, "graph", (uintptr_t)ev->g);
	cg_vf_site(v, "site", ev->site);
	cg_vf_site(v, "graph_site", ev->graph_site);
	return 1;
}

int rules_instantiate_relaunch(const struct cg_launch_ev *ev, struct cg_verdict *v)
{
	if (!ev->unfreed || ev->autofree)
		return 0;
	cg_verdict_init(v, R_RELAUNCH_UNFREED, CUDA_ERROR_INVALID_VALUE);
	snprintf(v->msg, 320,
		 "exec 0x%llx is relaunched while %d graph allocation(s) of its previous launch are unfreed and it was "
		 "not instantiated with AutoFreeOnLaunch: free them (cuMemFreeAsync, a free node) or instantiate "
		 "with CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH",
		 (unsigned long long)(uintptr_t)ev->e, ev->unfreed);
	cg_vf_hex(v, "exec", (uintptr_t)ev->e);
	cg_vf_dptrs(v, "dptrs", ev->mem, ev->n);
	for (int i = 0; i < ev->n; i++)
		if (!ev->mem[i].is_free) {
			cg_vf_site(v, "alloc_site", ev->mem[i].site);
			break;
		}
	cg_vf_site_here(v, "site");
	return 1;
}
