/*
 * shim/hooks/gen.c -- wrappers generated for the GEN and EXEC rows of
 * hooks.def: forward, then record (trace level, or info on failure). EXEC
 * rows first translate the exec handle through the policy module, so after
 * a re-instantiation every per-exec call reaches the executable that now
 * stands behind the application's handle. UNSAFE rows check CGS007 before
 * the call; CAPINFO rows tell the model what an Invalidated answer shows.
 */
#include <errno.h>

#include "../call.h"
#include "../ledger.h"
#include "../model.h"
#include "../nodes.h"
#include "../policy.h"
#include "../rules.h"
#include "../site.h"

/* Node of the rewritten exec standing for the application's node. With no
 * counterpart the driver gets the original node and answers with its own
 * error; the record says why. */
static CUgraphNode exec_node(CUgraphExec app, CUgraphNode node, const char *api)
{
	int found;
	CUgraphNode n = cg_policy_node(app, node, &found);
	if (!found)
		cg_warn("%s: node %p of exec %p has no counterpart in the re-instantiated executable; "
			"the driver's error is returned",
			api, (void *)node, (void *)app);
	return n;
}

#define HOOK_GEN2(name, params, args, pre, check, post)                                             \
	CUresult cgh_##name params                                                                 \
	{                                                                                          \
		struct cg_call c;                                                                  \
		CUresult rc;                                                                       \
		int saved, verdict;                                                                \
		CG_REAL(name);                                                                     \
		pre;                                                                               \
		if (!cg_call_begin(&c, HID_##name, 0))                                             \
			return CG_FWD(real_##name args);                                           \
		verdict = check;                                                                   \
		rc = CG_FWD(real_##name args);                                                     \
		saved = errno;                                                                     \
		post;                                                                              \
		if (MEM_MOVER(name))                                                               \
			model_mem_moved();                                                         \
		cg_call_end(&c, rc);                                                               \
		errno = saved;                                                                     \
		return rc;                                                                         \
	}
/* Calls that give device memory back or change how much a pool keeps: the
 * next memory sample is a real one (model_mem_moved; constant-folded). */
#define MEM_MOVER(name)                                                                            \
	(!__builtin_strcmp(#name, "cuMemPoolTrimTo") || !__builtin_strcmp(#name, "cuMemPoolSetAttribute") || \
	 !__builtin_strcmp(#name, "cuDeviceGraphMemTrim") || !__builtin_strcmp(#name, "cuDeviceSetGraphMemAttribute"))
#define HOOK_GEN(name, params, args, pre) HOOK_GEN2(name, params, args, pre, 0, (void)verdict)

/* Whether an exported name is a per-thread-default-stream (_ptsz) twin. */
#define IS_PTSZ(name) (sizeof(#name) > 5 && !__builtin_strcmp(#name + sizeof(#name) - 6, "_ptsz"))

/* An Invalidated answer: the capture is dead (the other thread's call
 * that broke it may be one the shim does not hook); only then a lock. */
#define CAPINFO_POST(name)                                                                         \
	if (rc == CUDA_SUCCESS && captureStatus_out && *captureStatus_out == CU_STREAM_CAPTURE_STATUS_INVALIDATED) \
	model_capture_seen_invalid(hStream, IS_PTSZ(name), id_out ? *id_out : 0, #name)

/* The UNSAFE rows that are pinned host memory calls put their ranges into
 * the allocation ledger after a successful call (ledger.h); the module and
 * library unloads have nothing to record. */
#define LEDGER_POST_cuModuleUnload                                                                 \
	if (rc == CUDA_SUCCESS)                                                                    \
	nodes_module_unloaded(hmod)
#define LEDGER_POST_cuLibraryUnload (void)0
#define LEDGER_HOST_ALLOC(pp, size)                                                                \
	if (rc == CUDA_SUCCESS && (pp) && *(pp))                                                   \
	ledger_add((uintptr_t) * (pp), (size), LG_PINNED, cg_site_here(1))
#define LEDGER_POST_cuMemHostAlloc LEDGER_HOST_ALLOC(pp, bytesize)
#define LEDGER_POST_cuMemAllocHost LEDGER_HOST_ALLOC(pp, bytesize)
#define LEDGER_POST_cuMemAllocHost_v2 LEDGER_HOST_ALLOC(pp, bytesize)
#define LEDGER_POST_cuMemHostRegister                                                              \
	if (rc == CUDA_SUCCESS)                                                                    \
	ledger_add((uintptr_t)p, bytesize, LG_REGISTERED, cg_site_here(1))
#define LEDGER_POST_cuMemHostRegister_v2 LEDGER_POST_cuMemHostRegister
#define LEDGER_POST_cuMemFreeHost                                                                  \
	if (rc == CUDA_SUCCESS)                                                                    \
	c.flags |= ledger_free((uintptr_t)p, 0, 1, "cuMemFreeHost") ? CG_CALL_LIFE : 0
#define LEDGER_POST_cuMemHostUnregister                                                            \
	if (rc == CUDA_SUCCESS)                                                                    \
	c.flags |= ledger_free((uintptr_t)p, 0, 1, "cuMemHostUnregister") ? CG_CALL_LIFE : 0

#define HOOK_CLS_GEN(name, params, args) HOOK_GEN(name, params, args, (void)0)
#define HOOK_CLS_UNSAFE(name, params, args)                                                        \
	HOOK_GEN2(name, params, args, (void)0, cg_rule_capture_unsafe(#name, NULL),                \
		  cg_rule_capture_unsafe_after(#name, verdict, rc); LEDGER_POST_##name)
#define HOOK_CLS_CAPINFO(name, params, args)                                                       \
	HOOK_GEN2(name, params, args, (void)0, 0, (void)verdict; CAPINFO_POST(name))
#define HOOK_CLS_EXEC(name, params, args) HOOK_GEN(name, params, args, hGraphExec = cg_policy_exec(hGraphExec))
#define HOOK_CLS_EXECN(name, params, args)                                                         \
	HOOK_GEN(name, params, args, hNode = exec_node(hGraphExec, hNode, #name);                  \
		 hGraphExec = cg_policy_exec(hGraphExec))
#define HOOK_CLS_CUSTOM(name, params, args)
#define HOOK_CLS_ENV(name, params, args) /* gen-hooks.py */
#define HOOK_CLS_LIFE(name, params, args)
#define HOOK(name, pfn, params, args, cls) HOOK_CLS_##cls(name, params, args)
#include "../hooks.def"
#undef HOOK
