/*
 * shim/hooks/runtime-abi.c -- the runtime wrappers' ABI check, at build
 * time; no code. runtime.c cannot include cuda_runtime_api.h (it defines
 * the same names with the argument forms of both runtime majors, handles
 * as void *), so the check lives here: for every RTHOOK row, the header's
 * signature is the one runtime.c forwards from CUDA 12 on, and every type
 * in it has the size and kind of the form runtime.c passes (a handle is a
 * pointer, an enum or cudaError_t an int). A row of rt-hooks.def without
 * a line here fails the build (RT_ABI_<name> undefined), as a driver hook
 * without its PFN does (resolve.h).
 */
#include <cuda_runtime_api.h>

#define RT_SIG(name, ...)                                                                          \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), cudaError_t (*)(__VA_ARGS__)), \
		       #name ": the runtime's signature is not the form hooks/runtime.c forwards");   \
	enum { RT_ABI_OK_##name = 1 };
#define RT_PTR(t) _Static_assert(sizeof(t) == sizeof(void *), #t " is not pointer-sized");
#define RT_INT(t) _Static_assert(sizeof(t) == sizeof(int), #t " is not int-sized");

RT_INT(cudaError_t)
RT_INT(enum cudaStreamCaptureMode)
RT_PTR(cudaGraph_t)
RT_PTR(cudaGraphExec_t)
RT_PTR(cudaStream_t)
RT_PTR(cudaMemPool_t)

#define RT_ABI_cudaGraphInstantiate RT_SIG(cudaGraphInstantiate, cudaGraphExec_t *, cudaGraph_t, unsigned long long)
#define RT_ABI_cudaGraphInstantiateWithFlags                                                       \
	RT_SIG(cudaGraphInstantiateWithFlags, cudaGraphExec_t *, cudaGraph_t, unsigned long long)
#define RT_ABI_cudaGraphInstantiateWithParams                                                      \
	RT_SIG(cudaGraphInstantiateWithParams, cudaGraphExec_t *, cudaGraph_t, cudaGraphInstantiateParams *)
#define RT_ABI_cudaGraphExecUpdate                                                                 \
	RT_SIG(cudaGraphExecUpdate, cudaGraphExec_t, cudaGraph_t, cudaGraphExecUpdateResultInfo *)
#define RT_ABI_cudaGraphLaunch RT_SIG(cudaGraphLaunch, cudaGraphExec_t, cudaStream_t)
#define RT_ABI_cudaGraphUpload RT_SIG(cudaGraphUpload, cudaGraphExec_t, cudaStream_t)
#define RT_ABI_cudaMallocAsync RT_SIG(cudaMallocAsync, void **, size_t, cudaStream_t)
#define RT_ABI_cudaMallocFromPoolAsync RT_SIG(cudaMallocFromPoolAsync, void **, size_t, cudaMemPool_t, cudaStream_t)
#define RT_ABI_cudaFreeAsync RT_SIG(cudaFreeAsync, void *, cudaStream_t)
#define RT_ABI_cudaStreamBeginCapture RT_SIG(cudaStreamBeginCapture, cudaStream_t, enum cudaStreamCaptureMode)
#define RT_ABI_cudaStreamEndCapture RT_SIG(cudaStreamEndCapture, cudaStream_t, cudaGraph_t *)

#define RTHOOK(name) RT_ABI_##name _Static_assert(RT_ABI_OK_##name, #name " has no ABI line here");
#include "../rt-hooks.def"
#undef RTHOOK

/* ISO C: a translation unit holds at least one declaration. */
typedef int cgh_runtime_abi_checked;
