/*
 * tests/gpu/dlsym_gpu.c -- the JAX/XLA way of reaching the driver: dlopen
 * libcuda.so.1 and dlsym every function by its exact exported name. Builds a
 * graph explicitly (alloc node -> memset node -> free node), instantiates it
 * with cuGraphInstantiateWithFlags, launches it three times, and checks the
 * memset wrote what it should through a second, plain allocation.
 * Prints deterministic lines; exit 0 on success.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <cuda.h>

#define SYM(name) name##_t p_##name = (name##_t)dlsym(h, #name)
#define CK(x)                                                                                                          \
	do {                                                                                                           \
		CUresult rc_ = (x);                                                                                    \
		printf("%s: rc=%d\n", #x, (int)rc_);                                                                   \
		if (rc_) {                                                                                             \
			printf("FAILED\n");                                                                            \
			return 1;                                                                                      \
		}                                                                                                      \
	} while (0)

typedef CUresult (*cuInit_t)(unsigned);
typedef CUresult (*cuDeviceGet_t)(CUdevice *, int);
typedef CUresult (*cuDevicePrimaryCtxRetain_t)(CUcontext *, CUdevice);
typedef CUresult (*cuCtxSetCurrent_t)(CUcontext);
typedef CUresult (*cuStreamCreate_t)(CUstream *, unsigned);
typedef CUresult (*cuStreamSynchronize_t)(CUstream);
typedef CUresult (*cuGraphCreate_t)(CUgraph *, unsigned);
typedef CUresult (*cuGraphAddMemAllocNode_t)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t,
					     CUDA_MEM_ALLOC_NODE_PARAMS *);
typedef CUresult (*cuGraphAddMemFreeNode_t)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t, CUdeviceptr);
typedef CUresult (*cuGraphAddNode_v2_t)(CUgraphNode *, CUgraph, const CUgraphNode *, const CUgraphEdgeData *, size_t,
					CUgraphNodeParams *);
typedef CUresult (*cuGraphInstantiateWithFlags_t)(CUgraphExec *, CUgraph, unsigned long long);
typedef CUresult (*cuGraphLaunch_t)(CUgraphExec, CUstream);
typedef CUresult (*cuGraphExecDestroy_t)(CUgraphExec);
typedef CUresult (*cuGraphDestroy_t)(CUgraph);
typedef CUresult (*cuMemAlloc_v2_t)(CUdeviceptr *, size_t);
typedef CUresult (*cuMemFree_v2_t)(CUdeviceptr);
typedef CUresult (*cuMemcpyDtoH_v2_t)(void *, CUdeviceptr, size_t);

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUgraph g;
	CUgraphNode na, nm, nf;
	CUgraphExec e;
	CUdeviceptr out;
	unsigned host[256];
	if (!h) {
		printf("no libcuda.so.1\n");
		return 77;
	}
	SYM(cuInit);
	SYM(cuDeviceGet);
	SYM(cuDevicePrimaryCtxRetain);
	SYM(cuCtxSetCurrent);
	SYM(cuStreamCreate);
	SYM(cuStreamSynchronize);
	SYM(cuGraphCreate);
	SYM(cuGraphAddMemAllocNode);
	SYM(cuGraphAddMemFreeNode);
	SYM(cuGraphAddNode_v2);
	SYM(cuGraphInstantiateWithFlags);
	SYM(cuGraphLaunch);
	SYM(cuGraphExecDestroy);
	SYM(cuGraphDestroy);
	SYM(cuMemAlloc_v2);
	SYM(cuMemFree_v2);
	SYM(cuMemcpyDtoH_v2);
	CK(p_cuInit(0));
	CK(p_cuDeviceGet(&dev, 0));
	CK(p_cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(p_cuCtxSetCurrent(ctx));
	CK(p_cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(p_cuMemAlloc_v2(&out, sizeof host));
	CK(p_cuGraphCreate(&g, 0));

	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	memset(&ap, 0, sizeof ap);
	ap.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	ap.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	ap.poolProps.location.id = 0;
	ap.bytesize = 1 << 20;
	CK(p_cuGraphAddMemAllocNode(&na, g, NULL, 0, &ap));

	/* memset the plain output buffer (the graph allocation is only
	 * allocated and freed: XLA's temporaries look like this) */
	CUgraphNodeParams mp;
	memset(&mp, 0, sizeof mp);
	mp.type = CU_GRAPH_NODE_TYPE_MEMSET;
	mp.memset.dst = out;
	mp.memset.value = 0x2a;
	mp.memset.elementSize = 4;
	mp.memset.width = 256;
	mp.memset.height = 1;
	mp.memset.pitch = 0;
	mp.memset.ctx = ctx;
	CK(p_cuGraphAddNode_v2(&nm, g, &na, NULL, 1, &mp));
	CK(p_cuGraphAddMemFreeNode(&nf, g, &nm, 1, ap.dptr));
	CK(p_cuGraphInstantiateWithFlags(&e, g, 0));
	for (int i = 0; i < 3; i++)
		CK(p_cuGraphLaunch(e, s));
	CK(p_cuStreamSynchronize(s));
	CK(p_cuMemcpyDtoH_v2(host, out, sizeof host));
	for (int i = 0; i < 256; i++)
		if (host[i] != 0x2a) {
			printf("wrong value at %d\n", i);
			return 1;
		}
	printf("memset values ok\n");
	CK(p_cuGraphExecDestroy(e));
	CK(p_cuGraphDestroy(g));
	CK(p_cuMemFree_v2(out));
	return 0;
}
