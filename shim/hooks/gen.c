/*
 * shim/hooks/gen.c -- the class helpers and parts of the generated rows of
 * hooks.def that are not ENV/LIFE (gen-hooks.py writes their wrappers):
 * GEN rows forward, then record (trace level, or info on failure); EXEC
 * rows first translate the exec handle through the policy module, so after
 * a re-instantiation every per-exec call reaches the executable that now
 * stands behind the application's handle (EXECN rows their node too).
 * UNSAFE rows check CGS007 before the call; CAPINFO rows tell the model
 * what an Invalidated answer shows.
 */
#define _GNU_SOURCE
#include "exports.h"
#include "hooks.h"

void *const cg_hook_wrappers[HID_COUNT] = {
#define HOOK(name, pfn, params, args, cls) (void *)&cgh_##name,
#include "../hooks.def"
#undef HOOK
};

/* Node of the rewritten exec standing for the application's node. With no
 * counterpart the driver gets the original node and answers with its own
 * error; the record says why. */
CUgraphNode cgh_exec_node(CUgraphExec app, CUgraphNode node, const char *api)
{
	int found;
	CUgraphNode n = cg_policy_node(app, node, &found);
	if (!found)
		cg_warn("%s: node %p of exec %p has no counterpart in the re-instantiated executable; "
			"the driver's error is returned",
			api, (void *)node, (void *)app);
	return n;
}

/* An Invalidated answer: the capture is dead (the other thread's call
 * that broke it may be one the shim does not hook); only then a lock. */
void cgh_capinfo_seen(CUresult rc, CUstream s, const CUstreamCaptureStatus *st, const cuuint64_t *id, int ptsz,
		      const char *api)
{
	if (rc == CUDA_SUCCESS && st && *st == CU_STREAM_CAPTURE_STATUS_INVALIDATED)
		model_capture_seen_invalid(s, ptsz, id ? *id : 0, api);
}

/* Calls that give device memory back or change how much a pool keeps: the
 * next memory sample is a real one (model_mem_moved). */
void cgh_cuMemPoolTrimTo_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool pool,
			      size_t minBytesToKeep)
{
	model_mem_moved();
}

void cgh_cuMemPoolSetAttribute_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmemoryPool pool,
				    CUmemPool_attribute attr, void *value)
{
	model_mem_moved();
}

void cgh_cuDeviceGraphMemTrim_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdevice device)
{
	model_mem_moved();
}

void cgh_cuDeviceSetGraphMemAttribute_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUdevice device,
					   CUgraphMem_attribute attr, void *value)
{
	model_mem_moved();
}

/* The UNSAFE rows that are pinned host memory calls put their ranges into
 * the allocation ledger after a successful call (ledger.h); the module and
 * library unloads tell the node details, whose function descriptions die
 * with the handles (nodes.h). */
void cgh_cuModuleUnload_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUmodule hmod)
{
	if (rc == CUDA_SUCCESS)
		nodes_module_unloaded(hmod);
}

void cgh_cuLibraryUnload_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, CUlibrary library)
{
	if (rc == CUDA_SUCCESS)
		nodes_library_unloaded();
}

void cgh_cuMemHostAlloc_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void **pp, size_t bytesize,
			     unsigned int Flags)
{
	if (rc == CUDA_SUCCESS && pp && *pp)
		ledger_add((uintptr_t)*pp, bytesize, LG_PINNED, cg_site_here(SITE_SKIP_PART));
}

void cgh_cuMemAllocHost_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void **pp, unsigned int bytesize)
{
	if (rc == CUDA_SUCCESS && pp && *pp)
		ledger_add((uintptr_t)*pp, bytesize, LG_PINNED, cg_site_here(SITE_SKIP_PART));
}

void cgh_cuMemAllocHost_v2_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void **pp, size_t bytesize)
{
	if (rc == CUDA_SUCCESS && pp && *pp)
		ledger_add((uintptr_t)*pp, bytesize, LG_PINNED, cg_site_here(SITE_SKIP_PART));
}

void cgh_cuMemHostRegister_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void *p, size_t bytesize,
				unsigned int Flags)
{
	if (rc == CUDA_SUCCESS)
		ledger_add((uintptr_t)p, bytesize, LG_REGISTERED, cg_site_here(SITE_SKIP_PART));
}

void cgh_cuMemHostRegister_v2_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void *p, size_t bytesize,
				   unsigned int Flags)
{
	if (rc == CUDA_SUCCESS)
		ledger_add((uintptr_t)p, bytesize, LG_REGISTERED, cg_site_here(SITE_SKIP_PART));
}

void cgh_cuMemFreeHost_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void *p)
{
	if (rc == CUDA_SUCCESS && cgh_ledger_free((uintptr_t)p, 0, 1, "cuMemFreeHost"))
		c->flags |= CG_CALL_LIFE;
}

void cgh_cuMemHostUnregister_post(struct cg_call *c, struct cgh_frame *f, CUresult rc, void *p)
{
	if (rc == CUDA_SUCCESS && cgh_ledger_free((uintptr_t)p, 0, 1, "cuMemHostUnregister"))
		c->flags |= CG_CALL_LIFE;
}
