/*
 * shim/hooks/vmm.c -- virtual memory management hooks (issue 15): a
 * mapping (cuMemMap) is a device range of the allocation ledger; an unmap
 * (cuMemUnmap) or an address free (cuMemAddressFree) of mapped memory a
 * live executable points into is CGS018, as a free is. PyTorch's
 * expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
 * grow and shrink through these calls. cuMemCreate and cuMemRelease are
 * generated (hooks/gen.c): a handle is not an address. The others are
 * ENV rows: their wrappers are generated (gen-hooks.py), these are their
 * post parts.
 */
#include "hooks.h"

void cgh_cuMemMap_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdeviceptr ptr, size_t size, size_t offset,
		       CUmemGenericAllocationHandle handle, unsigned long long flags)
{
	if (rc == CUDA_SUCCESS)
		ledger_add(ptr, size, LG_VMM, cg_site_here(SITE_SKIP_PART));
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
