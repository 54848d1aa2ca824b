/*
 * shim/hooks/exports.h -- the hook wing's exported wrappers, for the
 * lookups that hand them out instead of the driver's or the runtime's own
 * (intercept.c's dlsym, getproc.c's cuGetProcAddress). Here, in the hook
 * wing: resolve.c, far below, keeps the names and the real pointers and
 * never refers up to a wrapper (shim/layers.txt).
 */
#ifndef CGSHIM_HOOKS_EXPORTS_H
#define CGSHIM_HOOKS_EXPORTS_H

#include "../resolve.h"

/* The exported wrapper (cgh_<name>) of every row of hooks.def, by hook id
 * (hooks/gen.c). */
extern void *const cg_hook_wrappers[HID_COUNT] CG_HIDDEN;

/* The shim's own exported runtime wrapper of an exact rt-hooks.def name, or
 * NULL (hooks/runtime.c). */
void *cg_rt_export(const char *name) CG_HIDDEN;
/* The same for an exact nccl-hooks.def name (hooks/nccl.c). */
void *cg_nccl_export(const char *name) CG_HIDDEN;
/* The door's wiring, handed to start-up by every door (cg_ensure_init):
 * the hook wing's writers for the records owed below it (hooks/wire.c). */
void cgh_wire(void) CG_HIDDEN;

#endif
