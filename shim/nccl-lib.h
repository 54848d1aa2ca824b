/*
 * shim/nccl-lib.h -- the process's libnccl, when it has one (issue 33).
 *
 * The shim links no NCCL and includes no NCCL header. It exports
 * ncclCommDestroy, ncclCommAbort and ncclCommFinalize (nccl-hooks.def,
 * hooks/nccl.c), which forward to the definition they hide: the next one in
 * the global search order (dlsym RTLD_NEXT), else the one of a libnccl the
 * process mapped into a local scope only (a library dlopen'ed RTLD_LOCAL
 * that needs it, as PyTorch's libtorch_cuda does: its calls bind to the
 * shim's export first, the global scope coming before its own).
 *
 * A libnccl is found by the basename of a loaded object ("libnccl.so...").
 * Once found its handle (dlopen RTLD_NOLOAD | RTLD_NODELETE: kept across an
 * application dlclose, since the shim keeps pointers into it) is cached for
 * the process; until then a question looks again only when an object was
 * loaded since the last look (dl_iterate_phdr's load count, read at its
 * first object: the loader's lock and one callback; asked at ends of
 * capture and NCCL teardown calls, never on a launch path).
 */
#ifndef CGSHIM_NCCL_LIB_H
#define CGSHIM_NCCL_LIB_H

#include "state.h"

/* The loaded libnccl's handle, NULL when the process has none. */
void *cg_nccl_handle(void) CG_HIDDEN;
/* Whether the process has a libnccl loaded. */
static inline int cg_nccl_loaded(void)
{
	return cg_nccl_handle() != NULL;
}
/* The definition of name that the shim's export of it hides, NULL when
 * the process has none (no libnccl loaded, or one without the name). */
void *cg_nccl_next(const char *name) CG_HIDDEN;
/* Whether a kernel's (mangled) name is one of NCCL's device kernels:
 * ncclDevKernel_* (NCCL >= 2.19) or ncclKernel_* (before), as a C symbol or
 * inside a C++ mangled name (_Z..ncclDevKernel_...). */
int cg_nccl_kernel_name(const char *name) CG_HIDDEN;

#endif
