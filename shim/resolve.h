/*
 * shim/resolve.h -- real entry points, exported wrappers and routing, all
 * expanded from hooks.def.
 */
#ifndef CGSHIM_RESOLVE_H
#define CGSHIM_RESOLVE_H

#include "cuda-abi.h"
#include "state.h"

enum cg_hook_id {
#define HOOK(name, pfn, params, args, cls) HID_##name,
#include "hooks.def"
#undef HOOK
	HID_COUNT
};

enum cg_hook_class {
	CG_CLS_GEN,
	CG_CLS_EXEC,
	CG_CLS_EXECN,
	CG_CLS_UNSAFE,
	CG_CLS_CAPINFO,
	CG_CLS_ENV,
	CG_CLS_LIFE,
	CG_CLS_BLOCK, /* blocks the calling thread until work completes (hooks.def) */
	CG_CLS_CUSTOM
};

/* real_<name>: the driver's own function, NULL until resolved or if this
 * driver lacks the name. Written once under the resolve lock, before the
 * release store that publishes cg_driver_resolved. */
#define HOOK(name, pfn, params, args, cls)                                                                             \
	extern pfn real_##name CG_HIDDEN;                                                                              \
	CUresult cgh_##name params __asm__(#name) __attribute__((visibility("default")));                              \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&cgh_##name), pfn), "hooks.def: wrong ABI for " #name);
#include "hooks.def"
#undef HOOK

/* drv_<name>: driver functions the shim calls for itself (driver-calls.def). */
#define DRV(name, pfn) extern pfn drv_##name CG_HIDDEN;
#include "driver-calls.def"
#undef DRV
/* ...and those hooks.def lists: the same pointer as the hook's real_<name>
 * (one resolution, cg_resolve_driver), under the name the shim's own calls
 * use. */
#define CG_DRV_HOOKED(name) real_##name
#define drv_cuStreamGetCaptureInfo_v3 CG_DRV_HOOKED(cuStreamGetCaptureInfo_v3)
#define drv_cuStreamGetCaptureInfo_v3_ptsz CG_DRV_HOOKED(cuStreamGetCaptureInfo_v3_ptsz)
#define drv_cuGraphDestroy CG_DRV_HOOKED(cuGraphDestroy)
#define drv_cuThreadExchangeStreamCaptureMode CG_DRV_HOOKED(cuThreadExchangeStreamCaptureMode)

/* The wrappers (cgh_<name>) are hooks/exports.h's cg_hook_wrappers, by the
 * same hook id. */
struct cg_route {
	const char *name;
	void **real; /* &real_<name> */
	int cls;
};
extern const struct cg_route cg_routes[HID_COUNT] CG_HIDDEN;

extern void *(*cg_real_dlsym)(void *, const char *)CG_HIDDEN;
extern void *cg_libcuda CG_HIDDEN;

/* Resolve real_* from libcuda.so.1 once it is loaded. Returns 0 when the
 * driver is resolved (now or before), -1 when libcuda is not loaded yet. */
int cg_resolve_driver(void) CG_HIDDEN;
extern _Atomic int cg_driver_resolved CG_HIDDEN;

static inline int cg_driver_ok(void)
{
	return CG_LIKELY(atomic_load_explicit(&cg_driver_resolved, memory_order_acquire)) || cg_resolve_driver() == 0;
}

/* Hook id of an exact exported name, or -1. */
int cg_hook_by_name(const char *name) CG_HIDDEN;
/* Hook id of a real driver address returned by cuGetProcAddress, or -1. */
int cg_hid_by_real(void *real) CG_HIDDEN;
/* The table's copy of name if it is the base name of a hooked entry point
 * (cuGetProcAddress's spelling: "cuCtxSynchronize"), else NULL. */
const char *cg_hooked_base(const char *name) CG_HIDDEN;

/* The (mangled) name of the function a launch names, the driver's string
 * (it lives as long as the function's module or library), or NULL. A
 * launch handle is a CUfunction or a CUkernel: the CUDA runtime launches
 * by a CUkernel, on which the cuFunc* queries answer 400 (measured, H200,
 * CUDA 13.0, 2026-11-29: docs/measurements.md), so cuFuncGetName, and on
 * INVALID_HANDLE cuKernelGetName. Every launch handle the shim names is
 * named here (eager sample, escape, dump). No allocation, no lock; errno
 * kept. */
const char *cg_launch_name(CUfunction f) CG_HIDDEN;

/* Real dlsym bootstrap, without ever calling the public dlsym. */
void cg_resolve_dlsym(void) CG_HIDDEN;

#endif
