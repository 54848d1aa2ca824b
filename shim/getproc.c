/*
 * shim/getproc.c -- cuGetProcAddress and cuGetProcAddress_v2.
 *
 * Contract: call the real function with the caller's exact arguments first,
 * then replace only a non-NULL returned pointer that the routing table
 * recognises (pointer identity with an exported name in hooks.def) by our
 * wrapper of that same name. Every status, error code and untouched *pfn of
 * the driver reaches the caller unchanged: unknown names, versions above
 * the driver's, v1's CUDA_ERROR_NOT_FOUND, symbolStatus == NULL. Self-lookups
 * need no special case: the real cuGetProcAddress (11030) and
 * cuGetProcAddress_v2 (12000) are in the table like any other entry point.
 */
#include <errno.h>

#include "call.h"

static void getproc_record(struct cg_call *c, CUresult rc, const char *symbol, int ver, cuuint64_t flags,
			   int status, int routed)
{
	struct cg_rec r;
	if (!cg_call_rec(&r, c, rc))
		return;
	rec_str(&r, "sym", symbol);
	rec_int(&r, "ver", ver);
	rec_u64(&r, "flags", flags);
	if (status >= 0)
		rec_int(&r, "status", status);
	rec_bool(&r, "routed", routed);
	rec_end(&r);
}

static int route(CUresult rc, void **pfn)
{
	void *w;
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (rc != CUDA_SUCCESS || !pfn || !*pfn || st == CG_OFF || st == CG_DEGRADED)
		return 0;
	w = cg_wrapper_by_real(*pfn);
	if (!w)
		return 0;
	*pfn = w;
	return 1;
}

CUresult cgh_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *symbolStatus)
{
	struct cg_call c;
	CUresult rc;
	int saved, routed, active;
	CG_REAL(cuGetProcAddress_v2);
	active = cg_call_begin(&c, HID_cuGetProcAddress_v2, 0);
	rc = CG_FWD(real_cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus));
	saved = errno;
	routed = route(rc, pfn);
	if (active)
		getproc_record(&c, rc, symbol, cudaVersion, flags, symbolStatus ? (int)*symbolStatus : -1, routed);
	errno = saved;
	return rc;
}

CUresult cgh_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	struct cg_call c;
	CUresult rc;
	int saved, routed, active;
	CG_REAL(cuGetProcAddress);
	active = cg_call_begin(&c, HID_cuGetProcAddress, 0);
	rc = CG_FWD(real_cuGetProcAddress(symbol, pfn, cudaVersion, flags));
	saved = errno;
	routed = route(rc, pfn);
	if (active)
		getproc_record(&c, rc, symbol, cudaVersion, flags, -1, routed);
	errno = saved;
	return rc;
}
