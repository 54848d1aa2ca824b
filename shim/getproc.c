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
#include <string.h>

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

/* Each thread's last answers of route() (issue 36): a runtime that asks
 * again for entry points it asked before (the GPU's static cudart does,
 * twice a capture cycle) reads one line instead of the by_real search and,
 * for a name it does not route, the hooked-name search. Exact: by_real is
 * written once, before cg_driver_resolved (which CG_REAL has acquired), so
 * a real pointer's hook id never changes; a hook id < 0 is kept only with
 * the name that answered (a copy: the caller's string may change), whose
 * cg_hooked_base was NULL, and is answered only for that same name. A
 * hooked name that cannot be routed is never kept (its one warning is
 * cg_door_unroutable's to give). Libcuda stays loaded (RTLD_NODELETE), so
 * a kept pointer never names another function. */
#define GP_MEMO_N 4
#define GP_NAME_MAX 48
struct gp_memo {
	void *real[GP_MEMO_N];
	short hid[GP_MEMO_N]; /* -1: routes nothing, name[i] no hooked name */
	unsigned next;
	char name[GP_MEMO_N][GP_NAME_MAX];
};
static CG_TLS struct gp_memo gp_memo;

/* The hook id kept for real (asked as symbol): >= -1, or -2 when none is. */
static int memo_find(void *real, const char *symbol)
{
	for (int i = 0; i < GP_MEMO_N; i++)
		if (gp_memo.real[i] == real) {
			if (gp_memo.hid[i] >= 0)
				return gp_memo.hid[i];
			return symbol && !strcmp(gp_memo.name[i], symbol) ? -1 : -2;
		}
	return -2;
}

static void memo_keep(void *real, int hid, const char *symbol)
{
	unsigned i = gp_memo.next++ % GP_MEMO_N;
	if (hid < 0) {
		size_t n = symbol ? strnlen(symbol, GP_NAME_MAX) : GP_NAME_MAX;
		if (n >= GP_NAME_MAX)
			return; /* no name, or one too long to keep */
		memcpy(gp_memo.name[i], symbol, n + 1);
	}
	gp_memo.real[i] = real;
	gp_memo.hid[i] = (short)hid;
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
	hid = memo_find(*pfn, symbol);
	if (hid == -1)
		return 0;
	if (hid < 0) {
		hid = cg_hid_by_real(*pfn);
		if (hid < 0) {
			const char *base = symbol ? cg_hooked_base(symbol) : NULL;
			if (base) {
				cg_door_unroutable(base, ver, flags);
				return 0;
			}
		}
		memo_keep(*pfn, hid, symbol);
		if (hid < 0)
			return 0;
	}
	*pfn = cg_hook_wrappers[hid];
	cg_door_routed(hid, CG_DOOR_GETPROC);
	return 1;
}

/* The call record is written at trace, or at info when the call failed;
 * cg_call_rec also hands a runtime wrapper's via its result. None of that
 * applies to a successful lookup below trace outside a runtime wrapper,
 * so the record step is skipped there (the same records, issue 36). */
static inline int getproc_recorded(CUresult rc)
{
	return rc != CUDA_SUCCESS || cg_tls.via || cg_log_on(CG_L_TRACE);
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
	if (active && getproc_recorded(rc))
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
	if (active && getproc_recorded(rc))
		getproc_record(&c, rc, symbol, cudaVersion, flags, -1, routed);
	CG_RETURN(rc);
}
