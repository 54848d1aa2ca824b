/*
 * tests/rules/ledger_cases.c -- allocation-ledger cases (issue 15), one per
 * argument, checked by check_ledger.py:
 *   pinned    a pinned staging buffer captured in a copy, freed after the
 *             capture while the exec lives, then an upload (CGS018, CGS019)
 *   async     a stream-ordered buffer (cudaMallocAsync outside capture)
 *             freed with cudaFreeAsync, then an upload (CGS018, CGS019)
 * (uploads, not replays: on the stand-in a replay would really touch the
 * freed host memory, which a sanitizer build reports)
 *   graphmem  the graph's own allocation (alloc + kernel + free inside the
 *             capture) and an unrelated buffer freed: nothing
 *   update    stale after a free, then updated from a capture on a live
 *             buffer: the replay is clean (CGS018 only)
 *   refuse-kind, refuse-memset  updates the driver refuses for a node
 *             detail: a copy's kind (HtoD -> DtoD), a memset's extent;
 *             the shim predicts both (CGS001, ParametersChanged)
 *   vmm       a kernel on a VMM mapping (cuMemAddressReserve/Create/Map,
 *             PyTorch's expandable segments); cuMemUnmap while the exec
 *             lives (CGS018, alloc_kind "VMM mapping"), then a replay
 *             (CGS019). Driver entry points through dlsym(RTLD_DEFAULT)
 *             (the shim's under LD_PRELOAD).
 *   repoint   an update that moves a kernel parameter from buffer a to
 *             buffer b (both live): an info update_diff, no violation
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>
#include <string.h>

#include "scenario.h"

#define N 1024L

/* A driver entry point as the application would get it: the global
 * definition (the shim's under LD_PRELOAD), else libcuda's own. */
static void *drv(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);
	void *h;
	if (!p && (h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)))
		p = dlsym(h, name);
	return p;
}

static cudaGraph_t cap_kernel(cudaStream_t s, float *p)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, p, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

/* Two parents of one child graph node each (c1 cloned into *g, c2 into
 * *g2), *g instantiated as *e and updated from *g2, which fails (910):
 * the child graphs differ in a way the driver refuses. The node of *g2. */
static cudaGraphNode_t parents_refused(cudaGraph_t c1, cudaGraph_t c2, cudaGraph_t *g, cudaGraph_t *g2,
				       cudaGraphExec_t *e)
{
	cudaGraphNode_t n1 = NULL, n2 = NULL;
	cudaGraphExecUpdateResultInfo info;
	CHECK(cudaGraphCreate(g, 0), cudaSuccess);
	CHECK(cudaGraphCreate(g2, 0), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&n1, *g, NULL, 0, c1), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&n2, *g2, NULL, 0, c2), cudaSuccess);
	CHECK(cudaGraphInstantiate(e, *g, 0), cudaSuccess);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(*e, *g2, &info), cudaErrorGraphExecUpdateFailure);
	return n2;
}

int main(int argc, char **argv)
{
	cudaStream_t s;
	cudaGraph_t g = NULL, g2 = NULL;
	cudaGraphExec_t e = NULL;
	float *a = NULL, *b = NULL, *host = NULL;
	const char *c = argc > 1 ? argv[1] : "";

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	if (!strcmp(c, "pinned")) {
		CHECK(cudaMallocHost((void **)&host, N * sizeof(float)), cudaSuccess);
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		CHECK(cudaMemcpyAsync(a, host, N * sizeof(float), cudaMemcpyHostToDevice, s), cudaSuccess);
		CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(cudaFreeHost(host), cudaSuccess);
		CHECK(cudaMallocHost((void **)&host, N * sizeof(float)), cudaSuccess);
		CHECK(cudaGraphUpload(e, s), cudaSuccess); /* CGS019; runs nothing */
		CHECK(cudaFreeHost(host), cudaSuccess);
	} else if (!strcmp(c, "async")) {
		CHECK(cudaMallocAsync((void **)&b, N * sizeof(float), s), cudaSuccess);
		g = cap_kernel(s, b);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaFreeAsync(b, s), cudaSuccess);
		CHECK(cudaGraphUpload(e, s), cudaSuccess); /* CGS019; runs nothing */
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	} else if (!strcmp(c, "graphmem")) {
		CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		float *t = NULL;
		CHECK(cudaMallocAsync((void **)&t, N * sizeof(float), s), cudaSuccess);
		LAUNCH_FILL(s, t, N, 1.0);
		LAUNCH_COPY(s, a, t, N);
		CHECK(cudaFreeAsync(t, s), cudaSuccess);
		CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(cudaFree(b), cudaSuccess); /* not referenced */
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	} else if (!strcmp(c, "update")) {
		CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
		float *dead = NULL;
		CHECK(cudaMalloc((void **)&dead, N * sizeof(float)), cudaSuccess);
		g = cap_kernel(s, dead);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaFree(dead), cudaSuccess); /* CGS018 */
		g2 = cap_kernel(s, b);
		cudaGraphExecUpdateResultInfo info;
		memset(&info, 0, sizeof info);
		CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess); /* clean: the exec now points at b */
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	} else if (!strcmp(c, "vmm")) {
		PFN_cuMemAddressReserve_v10020 reserve = (PFN_cuMemAddressReserve_v10020)drv("cuMemAddressReserve");
		PFN_cuMemCreate_v10020 create = (PFN_cuMemCreate_v10020)drv("cuMemCreate");
		PFN_cuMemMap_v10020 map = (PFN_cuMemMap_v10020)drv("cuMemMap");
		PFN_cuMemUnmap_v10020 unmap = (PFN_cuMemUnmap_v10020)drv("cuMemUnmap");
		PFN_cuMemRelease_v10020 release = (PFN_cuMemRelease_v10020)drv("cuMemRelease");
		PFN_cuMemAddressFree_v10020 afree = (PFN_cuMemAddressFree_v10020)drv("cuMemAddressFree");
		CUdeviceptr va = 0;
		CUmemGenericAllocationHandle h = 0;
		CUmemAllocationProp prop;
		const size_t sz = 2u << 20;
		memset(&prop, 0, sizeof prop);
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		if (!reserve || !create || !map || !unmap || !release || !afree)
			return 2;
		CHECK(reserve(&va, 2 * sz, 0, 0, 0), CUDA_SUCCESS);
		CHECK(create(&h, sz, &prop, 0), CUDA_SUCCESS);
		CHECK(map(va + sz, sz, 0, h, 0), CUDA_SUCCESS); /* the second half */
		g = cap_kernel(s, (float *)(uintptr_t)(va + sz + 4096));
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(unmap(va + sz, sz), CUDA_SUCCESS); /* CGS018 */
		CHECK(release(h), CUDA_SUCCESS);
		CHECK(create(&h, sz, &prop, 0), CUDA_SUCCESS);
		CHECK(map(va + sz, sz, 0, h, 0), CUDA_SUCCESS); /* mapped again: the exec stays stale */
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);	/* CGS019 */
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(unmap(va + sz, sz), CUDA_SUCCESS);
		CHECK(release(h), CUDA_SUCCESS);
		CHECK(afree(va, 2 * sz), CUDA_SUCCESS);
	} else if (!strcmp(c, "repoint")) {
		CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
		g = cap_kernel(s, a);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		g2 = cap_kernel(s, b);
		cudaGraphExecUpdateResultInfo info;
		memset(&info, 0, sizeof info);
		CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess); /* info: a -> b */
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	} else if (!strcmp(c, "refuse-kind") || !strcmp(c, "refuse-memset")) {
		int kind = !strcmp(c, "refuse-kind");
		CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
		CHECK(cudaMallocHost((void **)&host, N * sizeof(float)), cudaSuccess);
		for (int k = 0; k < 2; k++) {
			CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
			if (kind)
				CHECK(cudaMemcpyAsync(a, k ? (const void *)b : (const void *)host, 256,
						      k ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, s),
				      cudaSuccess);
			else
				CHECK(cudaMemsetAsync(a, 0, k ? 256 : 128, s), cudaSuccess);
			CHECK(cudaStreamEndCapture(s, k ? &g2 : &g), cudaSuccess);
		}
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		cudaGraphExecUpdateResultInfo info;
		memset(&info, 0, sizeof info);
		CHECK(cudaGraphExecUpdate(e, g2, &info), cudaErrorGraphExecUpdateFailure);
		CHECK(cudaFreeHost(host), cudaSuccess);
	} else if (!strcmp(c, "refuse-type")) {
		/* memset -> kernel: NodeTypeChanged (docs/update-refusals.md) */
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		CHECK(cudaMemsetAsync(a, 0, 256, s), cudaSuccess);
		CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
		g2 = cap_kernel(s, a);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		cudaGraphExecUpdateResultInfo info;
		memset(&info, 0, sizeof info);
		CHECK(cudaGraphExecUpdate(e, g2, &info), cudaErrorGraphExecUpdateFailure);
	} else if (!strcmp(c, "child-inplace")) {
		/* the exec's child: fill; the graph's: fill -> scale (a refusal
		 * named); then the graph's child is changed in place through its
		 * handle (scale destroyed) and the same update succeeds: the
		 * parent's summary must not be the one walked before */
		cudaGraph_t c1, c2, kid = NULL;
		cudaGraphNode_t n2, kn[2];
		cudaGraphExecUpdateResultInfo info;
		size_t nk = 2;
		c1 = cap_kernel(s, a);
		CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
		LAUNCH_FILL(s, a, N, 1.0);
		LAUNCH_SCALE(s, a, N, 2.0);
		CHECK(cudaStreamEndCapture(s, &c2), cudaSuccess);
		n2 = parents_refused(c1, c2, &g, &g2, &e);
		(void)cudaGetLastError();
		CHECK(cudaGraphChildGraphNodeGetGraph(n2, &kid), cudaSuccess);
		CHECK(cudaGraphGetNodes(kid, kn, &nk), cudaSuccess);
		EXPECT(nk == 2);
		CHECK(cudaGraphDestroyNode(kn[1]), cudaSuccess);
		CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(cudaGraphDestroy(c1), cudaSuccess);
		CHECK(cudaGraphDestroy(c2), cudaSuccess);
	} else if (!strcmp(c, "refuse-child-kind")) {
		/* the copy kind changed inside a child graph node: the update is
		 * recursive, the child's copy obeys the same limit */
		cudaGraph_t c1 = NULL, c2 = NULL;
		CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
		CHECK(cudaMallocHost((void **)&host, N * sizeof(float)), cudaSuccess);
		for (int k = 0; k < 2; k++) {
			CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
			CHECK(cudaMemcpyAsync(a, k ? (const void *)b : (const void *)host, 256,
					      k ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice, s),
			      cudaSuccess);
			CHECK(cudaStreamEndCapture(s, k ? &c2 : &c1), cudaSuccess);
		}
		parents_refused(c1, c2, &g, &g2, &e);
		CHECK(cudaGraphDestroy(c1), cudaSuccess);
		CHECK(cudaGraphDestroy(c2), cudaSuccess);
		CHECK(cudaFreeHost(host), cudaSuccess);
	}
	if (e)
		CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	if (g)
		CHECK(cudaGraphDestroy(g), cudaSuccess);
	if (g2)
		CHECK(cudaGraphDestroy(g2), cudaSuccess);
	if (b && strcmp(c, "async") && strcmp(c, "graphmem"))
		CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
