/*
 * shim/hooks/runtime-abi.c -- the runtime wrappers' ABI check, at build
 * time; no code. runtime.c cannot include cuda_runtime_api.h (it defines
 * the same names with the argument forms of both runtime majors, handles
 * as void *), so the check lives here: for every RTHOOK row, the header's
 * signature is the one runtime.c forwards from CUDA 12 on, and every type
 * in it has the size and kind of the form runtime.c passes (a handle is a
 * pointer, an enum or cudaError_t an int). The signature is the row's abi
 * column (rt-hooks.def), so a row cannot lack its check, as a driver hook
 * cannot lack its PFN (resolve.h).
 */
#include <cuda_runtime_api.h>

#define RT_SIG(name, ...)                                                                                              \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&name), cudaError_t (*)(__VA_ARGS__)),                  \
		       #name ": the runtime's signature is not the form hooks/runtime.c forwards");
#define RT_PTR(t) _Static_assert(sizeof(t) == sizeof(void *), #t " is not pointer-sized");
#define RT_INT(t) _Static_assert(sizeof(t) == sizeof(int), #t " is not int-sized");

RT_INT(cudaError_t)
RT_INT(enum cudaStreamCaptureMode)
RT_PTR(cudaGraph_t)
RT_PTR(cudaGraphExec_t)
RT_PTR(cudaStream_t)
RT_PTR(cudaMemPool_t)

#define RT_UNPAREN(...) __VA_ARGS__
#define RTHOOK(name, cls, params, args, abi) RT_SIG(name, RT_UNPAREN abi)
#include "../rt-hooks.def"
#undef RTHOOK

/* ISO C: a translation unit holds at least one declaration. */
typedef int cgh_runtime_abi_checked;
