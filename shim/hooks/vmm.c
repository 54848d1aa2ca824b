/*
 * shim/hooks/vmm.c -- virtual memory management hooks (issue 15): a
 * mapping (cuMemMap) is a device range of the allocation ledger; an unmap
 * (cuMemUnmap) or an address free (cuMemAddressFree) of mapped memory a
 * live executable points into is CGS018, as a free is. PyTorch's
 * expandable segments (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True)
 * grow and shrink through these calls. cuMemCreate and cuMemRelease are
 * generated (hooks/gen.c): a handle is not an address.
 */
#include <errno.h>

#include "../call.h"
#include "hooks.h"
#include "../ledger.h"
#include "../site.h"

CUresult cgh_cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		      unsigned long long flags)
{
	struct cg_call c;
	CUresult rc;
	CG_REAL(cuMemMap);
	if (!cg_call_begin(&c, HID_cuMemMap, 0))
		return CG_FWD(real_cuMemMap(ptr, size, offset, handle, flags));
	rc = CG_FWD(real_cuMemMap(ptr, size, offset, handle, flags));
	int saved = errno;
	if (rc == CUDA_SUCCESS)
		ledger_add(ptr, size, LG_VMM, cg_site_here(1));
	cg_call_end(&c, rc);
	errno = saved;
	return rc;
}

/* Unmapping or freeing the addresses: every ledger range inside goes. */
#define VMM_DROP(name)                                                                             \
	CUresult cgh_##name(CUdeviceptr ptr, size_t size)                                          \
	{                                                                                          \
		struct cg_call c;                                                                  \
		CUresult rc;                                                                       \
		CG_REAL(name);                                                                     \
		if (!cg_call_begin(&c, HID_##name, 0))                                             \
			return CG_FWD(real_##name(ptr, size));                                     \
		rc = CG_FWD(real_##name(ptr, size));                                               \
		int saved = errno;                                                                 \
		if (rc == CUDA_SUCCESS && cgh_ledger_free(ptr, size, 0, #name))                        \
			c.flags |= CG_CALL_LIFE;                                                   \
		cg_call_end(&c, rc);                                                               \
		errno = saved;                                                                     \
		return rc;                                                                         \
	}
VMM_DROP(cuMemUnmap)
VMM_DROP(cuMemAddressFree)
