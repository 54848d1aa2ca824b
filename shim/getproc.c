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
#include "hooks/exports.h"
#include "hooks/hooks.h"

static void getproc_record(struct cg_call *c, CUresult rc, const char *symbol, int ver, cuuint64_t flags, int status,
			   int routed)
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

/* A hooked name whose returned entry is not one of the exported symbols in
 * hooks.def (a version listed in unrouted.def, or one this build does not
 * know) is answered unchanged, with one warning per name. */
static int route(CUresult rc, const char *symbol, void **pfn, int ver, cuuint64_t flags)
{
	int hid;
	int st = atomic_load_explicit(&cg_state, memory_order_acquire);
	if (rc != CUDA_SUCCESS || !pfn || !*pfn || st != CG_READY)
		return 0;
	hid = cg_hid_by_real(*pfn);
	if (hid < 0) {
		const char *base = symbol ? cg_hooked_base(symbol) : NULL;
		if (base)
			cg_door_unroutable(base, ver, flags);
		return 0;
	}
	*pfn = cg_hook_wrappers[hid];
	cg_door_routed(hid, CG_DOOR_GETPROC);
	return 1;
}

CUresult cgh_cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
				 CUdriverProcAddressQueryResult *symbolStatus)
{
	struct cg_call c;
	CUresult rc;
	int routed, active;
	CG_REAL(cuGetProcAddress_v2);
	active = cg_call_begin(&c, HID_cuGetProcAddress_v2, 0);
	CG_FWD_OUT(rc, real_cuGetProcAddress_v2(symbol, pfn, cudaVersion, flags, symbolStatus));
	routed = route(rc, symbol, pfn, cudaVersion, flags);
	if (active)
		getproc_record(&c, rc, symbol, cudaVersion, flags, symbolStatus ? (int)*symbolStatus : -1, routed);
	CG_RETURN(rc);
}

CUresult cgh_cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
	struct cg_call c;
	CUresult rc;
	int routed, active;
	CG_REAL(cuGetProcAddress);
	active = cg_call_begin(&c, HID_cuGetProcAddress, 0);
	CG_FWD_OUT(rc, real_cuGetProcAddress(symbol, pfn, cudaVersion, flags));
	routed = route(rc, symbol, pfn, cudaVersion, flags);
	if (active)
		getproc_record(&c, rc, symbol, cudaVersion, flags, -1, routed);
	CG_RETURN(rc);
}
