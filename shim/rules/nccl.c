/*
 * shim/rules/nccl.c -- collectives inside graphs (issue 33), pure verdicts
 * (verdict.h):
 *
 *   CGS027  a communicator torn down (ncclCommDestroy, ncclCommAbort,
 *           ncclCommFinalize) while live executables hold NCCL kernels:
 *           NCCL >= 2.26 keeps a communicator's resources until every
 *           graph that captured work on it is destroyed, and the teardown
 *           waits for that; a thread that destroys its graphs after the
 *           teardown never gets there
 *   CGS028  memory unmapped and mapped again at the same address
 *           (cuMemUnmap, cuMemMap) under an executable holding NCCL work:
 *           its replay runs the collective over memory re-backed under it
 *
 * Which executables hold NCCL work is the model's (model/nccl.c: kernel
 * names from the walk at the end of capture); which exec an unmap made
 * stale is the ledger's (model/ledger.c). Nothing here writes, locks or
 * calls the driver or NCCL.
 */
#include <stdio.h>
#include <string.h>

#include "../rules.h"
#include "verdict.h"

int rules_nccl_teardown(const struct cg_nccl_teardown_ev *ev, struct cg_verdict *v)
{
	const struct model_nccl_exec *x = ev->x;
	size_t len;
	if (ev->n <= 0 || ev->shown <= 0 || !x)
		return 0;
	cg_verdict_init(v, R_NCCL_TEARDOWN, -1);
	len = (size_t)snprintf(v->msg, sizeof v->msg,
			       "%s of communicator 0x%llx while %d live executable%s hold%s NCCL kernels: "
			       "NCCL >= 2.26 waits in it until every CUDA graph that captured work on the "
			       "communicator is destroyed;",
			       ev->api, (unsigned long long)(uintptr_t)ev->comm, ev->n, ev->n == 1 ? "" : "s",
			       ev->n == 1 ? "s" : "");
	for (int i = 0; i < ev->shown && len < sizeof v->msg; i++)
		len += (size_t)snprintf(v->msg + len, sizeof v->msg - len,
					" exec 0x%llx (capture %llu, %d NCCL kernel%s%s%s)%s",
					(unsigned long long)(uintptr_t)x[i].e, (unsigned long long)x[i].capture,
					x[i].nccl, x[i].nccl == 1 ? "" : "s", ev->where[i][0] ? ", captured at " : "",
					ev->where[i], i + 1 < ev->shown ? "," : "");
	if (len < sizeof v->msg)
		snprintf(v->msg + len, sizeof v->msg - len,
			 "%s; destroy the graphs first (cudaGraphExecDestroy and cudaGraphDestroy; PyTorch: "
			 "del or reset() every torch.cuda.CUDAGraph), then the communicator",
			 ev->n > ev->shown ? " and more" : "");
	cg_vf_hex(v, "comm", (uintptr_t)ev->comm);
	cg_vf_int(v, "execs_live", ev->n);
	cg_vf_handles(v, "execs", (void *const *)ev->handles, ev->shown);
	cg_vf_hex(v, "exec", (uintptr_t)x[0].e);
	cg_vf_hex(v, "graph", (uintptr_t)x[0].g);
	cg_vf_u64(v, "capture", x[0].capture);
	cg_vf_int(v, "nccl_kernels", x[0].nccl);
	cg_vf_int(v, "dev", x[0].dev);
	cg_vf_int(v, "launches", x[0].launches);
	cg_vf_caller(v);
	cg_vf_site_here(v, "site");
	cg_vf_site(v, "capture_site", x[0].cap_site);
	cg_vf_site(v, "exec_site", x[0].exec_site);
	return 1;
}

int rules_nccl_remap(uint64_t base, uint64_t size, const struct cg_stale *s, int nccl, struct cg_verdict *v)
{
	if (!s || nccl <= 0 || s->base >= base + size || base >= s->base + s->size)
		return 0;
	cg_verdict_init(v, R_NCCL_REMAP, -1);
	snprintf(v->msg, sizeof v->msg,
		 "cuMemMap backs [0x%llx, +%llu) again at the address an unmap released while exec 0x%llx "
		 "(capture %llu, %d NCCL kernel%s) points into it (node %u holds 0x%llx): the addresses are "
		 "valid again but the memory behind them is new, and NCCL work captured over the old backing "
		 "(registered buffers, peer mappings) replays over it, which can hang the collective or "
		 "read other data; destroy the graphs before unmapping and capture them again after mapping",
		 (unsigned long long)base, (unsigned long long)size, (unsigned long long)(uintptr_t)s->e,
		 (unsigned long long)s->capture, nccl, nccl == 1 ? "" : "s", s->node, (unsigned long long)s->val);
	cg_vf_hex(v, "exec", (uintptr_t)s->e);
	cg_vf_hex(v, "graph", (uintptr_t)s->g);
	cg_vf_u64(v, "capture", s->capture);
	cg_vf_int(v, "nccl_kernels", nccl);
	cg_vf_hex(v, "dptr", base);
	cg_vf_u64(v, "size", size);
	cg_vf_hex(v, "unmapped", s->base);
	cg_vf_u64(v, "unmapped_size", s->size);
	cg_vf_u64(v, "node_index", s->node);
	cg_vf_hex(v, "ptr", s->val);
	if (s->kernel)
		cg_vf_str(v, "kernel", s->kernel);
	cg_vf_site_here(v, "site");
	cg_vf_site(v, "unmap_site", s->free_site);
	cg_vf_site(v, "capture_site", s->capture_site);
	cg_vf_site(v, "exec_site", s->exec_site);
	return 1;
}
