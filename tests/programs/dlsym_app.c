/*
 * tests/programs/dlsym_app.c -- XLA's way of reaching the driver: dlopen
 * libcuda.so.1 and dlsym each entry point by its exact exported name
 * (cuda-facts §1). Builds a graph explicitly, instantiates, launches, updates one
 * node, and captures into an existing graph.
 * Exit status 0 iff every result is the expected one.
 */
#define __CUDA_API_VERSION_INTERNAL 1 /* legacy PFN typedefs, no macro renames */
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <string.h>

#include "prog_util.h"
#include "standin.h"

#define N 1024L

#define SYM(var, pfn, name)                                                                                            \
	pfn var = (pfn)dlsym(h, name);                                                                                 \
	if (!var) {                                                                                                    \
		printf("missing %s\n", name);                                                                          \
		return 1;                                                                                              \
	}

static CUDA_KERNEL_NODE_PARAMS kparams(standin_kernel_fn fn, void **args)
{
	CUDA_KERNEL_NODE_PARAMS k;
	memset(&k, 0, sizeof k);
	k.func = (CUfunction)(void *)fn;
	k.gridDimX = (N + 255) / 256;
	k.gridDimY = k.gridDimZ = 1;
	k.blockDimX = 256;
	k.blockDimY = k.blockDimZ = 1;
	k.kernelParams = args;
	return k;
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		printf("dlopen failed\n");
		return 1;
	}
	SYM(init, PFN_cuInit_v2000, "cuInit")
	SYM(retain, PFN_cuDevicePrimaryCtxRetain_v7000, "cuDevicePrimaryCtxRetain")
	SYM(setCurrent, PFN_cuCtxSetCurrent_v4000, "cuCtxSetCurrent")
	SYM(streamCreate, PFN_cuStreamCreate_v2000, "cuStreamCreate")
	SYM(streamSync, PFN_cuStreamSynchronize_v2000, "cuStreamSynchronize")
	SYM(memAlloc, PFN_cuMemAlloc_v3020, "cuMemAlloc_v2")
	SYM(memFree, PFN_cuMemFree_v3020, "cuMemFree_v2")
	SYM(dtoh, PFN_cuMemcpyDtoH_v3020, "cuMemcpyDtoH_v2")
	SYM(graphCreate, PFN_cuGraphCreate_v10000, "cuGraphCreate")
	SYM(graphDestroy, PFN_cuGraphDestroy_v10000, "cuGraphDestroy")
	SYM(addNode, PFN_cuGraphAddNode_v12030, "cuGraphAddNode_v2")
	SYM(addKernel, PFN_cuGraphAddKernelNode_v12000, "cuGraphAddKernelNode_v2")
	SYM(instantiate, PFN_cuGraphInstantiateWithFlags_v11040, "cuGraphInstantiateWithFlags")
	SYM(launch, PFN_cuGraphLaunch_v10000, "cuGraphLaunch")
	SYM(setKernel, PFN_cuGraphExecKernelNodeSetParams_v12000, "cuGraphExecKernelNodeSetParams_v2")
	SYM(execDestroy, PFN_cuGraphExecDestroy_v10000, "cuGraphExecDestroy")
	SYM(getNodes, PFN_cuGraphGetNodes_v10000, "cuGraphGetNodes")
	SYM(beginToGraph, PFN_cuStreamBeginCaptureToGraph_v12030, "cuStreamBeginCaptureToGraph")
	SYM(endCapture, PFN_cuStreamEndCapture_v10000, "cuStreamEndCapture")
	SYM(allocAsync, PFN_cuMemAllocAsync_v11020, "cuMemAllocAsync")
	SYM(freeAsync, PFN_cuMemFreeAsync_v11020, "cuMemFreeAsync")
	SYM(launchKernel, PFN_cuLaunchKernel_v4000, "cuLaunchKernel")

	CUcontext ctx;
	CUstream s;
	CUdeviceptr dst;
	DCHECK("cuInit", init(0), CUDA_SUCCESS);
	DCHECK("cuDevicePrimaryCtxRetain", retain(&ctx, 0), CUDA_SUCCESS);
	DCHECK("cuCtxSetCurrent", setCurrent(ctx), CUDA_SUCCESS);
	DCHECK("cuStreamCreate", streamCreate(&s, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
	DCHECK("cuMemAlloc_v2", memAlloc(&dst, N * sizeof(float)), CUDA_SUCCESS);

	/* explicit graph: alloc -> fill(dst) -> add(dst) -> free */
	CUgraph g;
	DCHECK("cuGraphCreate", graphCreate(&g, 0), CUDA_SUCCESS);
	CUgraphNodeParams np;
	memset(&np, 0, sizeof np);
	np.type = CU_GRAPH_NODE_TYPE_MEM_ALLOC;
	np.alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	np.alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	np.alloc.poolProps.location.id = 0;
	np.alloc.bytesize = 1 << 20;
	CUgraphNode nalloc, nfill, nadd, nfree;
	DCHECK("cuGraphAddNode_v2(alloc)", addNode(&nalloc, g, NULL, NULL, 0, &np), CUDA_SUCCESS);
	CUdeviceptr gbuf = np.alloc.dptr;
	DEXPECT(gbuf != 0);

	float *pd = (float *)(uintptr_t)dst;
	long n = N;
	double v1 = 1.0, v2 = 2.0;
	void *afill[] = {&pd, &n, &v1, NULL};
	void *aadd[] = {&pd, &n, &v2, NULL};
	CUDA_KERNEL_NODE_PARAMS kf = kparams(k_fill, afill), ka = kparams(k_add, aadd);
	DCHECK("cuGraphAddKernelNode_v2(fill)", addKernel(&nfill, g, &nalloc, 1, &kf), CUDA_SUCCESS);
	DCHECK("cuGraphAddKernelNode_v2(add)", addKernel(&nadd, g, &nfill, 1, &ka), CUDA_SUCCESS);
	memset(&np, 0, sizeof np);
	np.type = CU_GRAPH_NODE_TYPE_MEM_FREE;
	np.free.dptr = gbuf;
	DCHECK("cuGraphAddNode_v2(free)", addNode(&nfree, g, &nadd, NULL, 1, &np), CUDA_SUCCESS);
	DCHECK("cuGraphAddNode_v2(free twice)", addNode(&nfree, g, &nadd, NULL, 1, &np), CUDA_ERROR_INVALID_VALUE);
	np.free.dptr = dst; /* not a graph allocation */
	DCHECK("cuGraphAddNode_v2(free plain)", addNode(&nfree, g, &nadd, NULL, 1, &np), CUDA_ERROR_INVALID_VALUE);

	CUgraphExec e;
	DCHECK("cuGraphInstantiateWithFlags", instantiate(&e, g, 0), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch", launch(e, s), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch(again)", launch(e, s), CUDA_SUCCESS);
	DCHECK("cuStreamSynchronize", streamSync(s), CUDA_SUCCESS);
	float host[N];
	DCHECK("cuMemcpyDtoH_v2", dtoh(host, dst, sizeof host), CUDA_SUCCESS);
	printf("value after launch: %.1f\n", host[N - 1]);
	DEXPECT(host[N - 1] == 3.0f);

	/* per-node update */
	double v3 = 10.0;
	void *aadd2[] = {&pd, &n, &v3, NULL};
	CUDA_KERNEL_NODE_PARAMS ka2 = kparams(k_add, aadd2);
	DCHECK("cuGraphExecKernelNodeSetParams_v2", setKernel(e, nadd, &ka2), CUDA_SUCCESS);
	DCHECK("cuGraphExecKernelNodeSetParams_v2(foreign node)", setKernel(e, (CUgraphNode)&n, &ka2),
	       CUDA_ERROR_INVALID_VALUE);
	DCHECK("cuGraphLaunch(updated)", launch(e, s), CUDA_SUCCESS);
	DCHECK("cuMemcpyDtoH_v2", dtoh(host, dst, sizeof host), CUDA_SUCCESS);
	printf("value after node update: %.1f\n", host[N - 1]);
	DEXPECT(host[N - 1] == 11.0f);
	DCHECK("cuGraphExecDestroy", execDestroy(e), CUDA_SUCCESS);

	/* capture into an existing graph after its last node */
	CUgraph g2;
	CUgraphNode root;
	DCHECK("cuGraphCreate", graphCreate(&g2, 0), CUDA_SUCCESS);
	memset(&np, 0, sizeof np);
	np.type = CU_GRAPH_NODE_TYPE_EMPTY;
	DCHECK("cuGraphAddNode_v2(empty)", addNode(&root, g2, NULL, NULL, 0, &np), CUDA_SUCCESS);
	DCHECK("cuStreamBeginCaptureToGraph", beginToGraph(s, g2, &root, NULL, 1, CU_STREAM_CAPTURE_MODE_GLOBAL),
	       CUDA_SUCCESS);
	CUdeviceptr cbuf;
	DCHECK("cuMemAllocAsync", allocAsync(&cbuf, 4096, s), CUDA_SUCCESS);
	float *pc = (float *)(uintptr_t)cbuf;
	void *afill2[] = {&pc, &n, &v1, NULL};
	n = 1024;
	DCHECK("cuLaunchKernel", launchKernel((CUfunction)(void *)k_fill, 4, 1, 1, 256, 1, 1, 0, s, afill2, NULL),
	       CUDA_SUCCESS);
	DCHECK("cuMemFreeAsync", freeAsync(cbuf, s), CUDA_SUCCESS);
	CUgraph got = NULL;
	DCHECK("cuStreamEndCapture", endCapture(s, &got), CUDA_SUCCESS);
	DEXPECT(got == g2);
	size_t cnt = 0;
	DCHECK("cuGraphGetNodes", getNodes(g2, NULL, &cnt), CUDA_SUCCESS);
	printf("nodes after capture to graph: %zu\n", cnt);
	DEXPECT(cnt == 4);
	DCHECK("cuGraphInstantiateWithFlags", instantiate(&e, g2, 0), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch", launch(e, s), CUDA_SUCCESS);
	DCHECK("cuGraphExecDestroy", execDestroy(e), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy", graphDestroy(g2), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy", graphDestroy(g), CUDA_SUCCESS);
	DCHECK("cuMemFree_v2", memFree(dst), CUDA_SUCCESS);
	DCHECK("cuMemFree_v2(again)", memFree(dst), CUDA_ERROR_INVALID_VALUE);
	printf("failures: %d\n", prog_failures);
	return prog_failures ? 1 : 0;
}
