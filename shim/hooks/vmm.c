/*
 * shim/hooks/vmm.c -- virtual memory management hooks (issue 15): a
 * mapping (cuMemMap) is a device range of the allocation ledger; an unmap
 * (cuMemUnmap) or an address free (cuMemAddressFree) of mapped memory a
 * live executable points into is CGS018, as a free is; a mapping again at
 * such addresses under an executable holding NCCL work is CGS028. PyTorch's
 * expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
 * grow and shrink through these calls. cuMemCreate and cuMemRelease are
 * generated (hooks/gen.c): a handle is not an address. The others are
 * ENV rows: their wrappers are generated (gen-hooks.py), these are their
 * post parts.
 */
#include "hooks.h"

/* CGS028: a mapping at addresses an earlier unmap released under a live
 * executable that holds NCCL work (issue 33). Written after the map
 * succeeded, before its call record; one relaxed load while no exec is
 * stale (ledger_remapped). */
static CGH_FRAMED int vmm_remapped(CUdeviceptr ptr, size_t size)
{
	struct cg_stale st[4];
	struct cg_verdict v;
	int n = ledger_remapped(ptr, size, st, 4), said = 0;
	for (int i = 0; i < n && i < 4; i++)
		if (rules_nccl_remap(ptr, size, &st[i], model_nccl_exec(st[i].e), &v))
			said += cg_verdict_write(&v, "cuMemMap", 0, SITE_SKIP_PART + 1);
	CGH_FRAME_END();
	return said;
}

void cgh_cuMemMap_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr ptr, size_t size, size_t offset,
		       CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	if (rc == CUDA_SUCCESS) {
		if (vmm_remapped(ptr, size))
			c->flags |= CG_CALL_LIFE;
		ledger_add(ptr, size, LG_VMM, cg_site_here(SITE_SKIP_PART));
	}
}

/* Unmapping or freeing the addresses: every ledger range inside goes. */
void cgh_cuMemUnmap_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr ptr, size_t size)
{
	if (rc == CUDA_SUCCESS && cgh_ledger_free(ptr, size, 0, "cuMemUnmap"))
		c->flags |= CG_CALL_LIFE;
}

void cgh_cuMemAddressFree_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr ptr, size_t size)
{
	if (rc == CUDA_SUCCESS && cgh_ledger_free(ptr, size, 0, "cuMemAddressFree"))
		c->flags |= CG_CALL_LIFE;
}
