/*
 * tests/programs/driver_app.c -- code linked with -lcuda: binds to the
 * exported names directly (cuda.h's macro renames apply: cuMemAlloc ->
 * cuMemAlloc_v2, cuStreamBeginCapture -> _v2, ...), and calls the per-thread
 * cuGraphLaunch_ptsz explicitly. Exercises the measured graph-memory and
 * capture rules of docs/cuda-facts.md. Exit status 0 iff all results match.
 */
#include <cuda.h>
#include <pthread.h>
#include <string.h>

#include "prog_util.h"
#include "standin.h"

CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);

#define N 256L
#define MiB (1024ull * 1024ull)

static CUresult launch_add(CUstream s, CUdeviceptr p, double v)
{
	float *fp = (float *)(uintptr_t)p;
	long n = N;
	void *args[] = {&fp, &n, &v, NULL};
	return cuLaunchKernel((CUfunction)(void *)k_add, 1, 1, 1, N, 1, 1, 0, s, args, NULL);
}

/* capture: alloc (size) [+ add] [+ free] */
static CUgraph cap(CUstream s, size_t size, int kernel, int with_free)
{
	CUgraph g = NULL;
	CUdeviceptr p = 0;
	DCHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	DCHECK("cuMemAllocAsync", cuMemAllocAsync(&p, size, s), CUDA_SUCCESS);
	if (kernel)
		DCHECK("cuLaunchKernel", launch_add(s, p, 1.0), CUDA_SUCCESS);
	if (with_free)
		DCHECK("cuMemFreeAsync", cuMemFreeAsync(p, s), CUDA_SUCCESS);
	DCHECK("cuStreamEndCapture", cuStreamEndCapture(s, &g), CUDA_SUCCESS);
	return g;
}

static CUstream g_s;
static void *end_from_other_thread(void *arg)
{
	CUgraph g;
	(void)arg;
	DCHECK("cuStreamEndCapture(other thread)", cuStreamEndCapture(g_s, &g), CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD);
	return NULL;
}

int main(void)
{
	CUcontext ctx;
	CUstream s, s2;
	CUgraphExec e, e2;
	CUgraph g;
	DCHECK("cuInit", cuInit(0), CUDA_SUCCESS);
	{ /* no context current yet: the driver answers 201 (the stand-in answered device 0) */
		CUdevice d;
		DCHECK("cuCtxGetDevice(no context)", cuCtxGetDevice(&d), CUDA_ERROR_INVALID_CONTEXT);
	}
	DCHECK("cuDevicePrimaryCtxRetain", cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	DCHECK("cuCtxSetCurrent", cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	DCHECK("cuStreamCreate", cuStreamCreate(&s, 0), CUDA_SUCCESS);
	DCHECK("cuStreamCreate", cuStreamCreate(&s2, 0), CUDA_SUCCESS);

	/* §3: alloc-only graph relaunch without AutoFree -> 1, on the per-thread stream */
	g = cap(s, MiB, 1, 0);
	DCHECK("cuGraphInstantiate", cuGraphInstantiate(&e, g, 0), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch_ptsz", cuGraphLaunch_ptsz(e, 0), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch_ptsz(relaunch)", cuGraphLaunch_ptsz(e, 0), CUDA_ERROR_INVALID_VALUE);
	DCHECK("cuGraphInstantiate(second)", cuGraphInstantiate(&e2, g, 0), CUDA_ERROR_NOT_SUPPORTED);
	CUgraph clone;
	DCHECK("cuGraphClone(memory nodes)", cuGraphClone(&clone, g), CUDA_ERROR_NOT_SUPPORTED);
	cuuint64_t v = 0;
	DCHECK("cuDeviceGetGraphMemAttribute",
	       cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &v), CUDA_SUCCESS);
	printf("graph reserved: %llu MiB\n", (unsigned long long)(v / MiB));
	DEXPECT(v == 32 * MiB);
	/* free the outstanding allocation, then relaunch works */
	CUDA_MEM_ALLOC_NODE_PARAMS ap;
	size_t nn = 1;
	CUgraphNode first;
	DCHECK("cuGraphGetNodes", cuGraphGetNodes(g, &first, &nn), CUDA_SUCCESS);
	DCHECK("cuGraphMemAllocNodeGetParams", cuGraphMemAllocNodeGetParams(first, &ap), CUDA_SUCCESS);
	DEXPECT(ap.bytesize == MiB);
	DCHECK("cuMemFree(graph allocation)", cuMemFree(ap.dptr), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch(after free)", cuGraphLaunch(e, s), CUDA_SUCCESS);
	DCHECK("cuGraphExecDestroy", cuGraphExecDestroy(e), CUDA_SUCCESS);
	/* destroying the exec frees nothing: the allocation is still live */
	DCHECK("cuMemFreeAsync(after exec destroy)", cuMemFreeAsync(ap.dptr, s), CUDA_SUCCESS);
	DCHECK("cuMemFreeAsync(twice)", cuMemFreeAsync(ap.dptr, s), CUDA_ERROR_INVALID_VALUE);
	DCHECK("cuDeviceGraphMemTrim", cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
	DCHECK("cuDeviceGetGraphMemAttribute",
	       cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT, &v), CUDA_SUCCESS);
	printf("graph reserved after trim: %llu MiB\n", (unsigned long long)(v / MiB));
	DEXPECT(v == 0);
	v = 1;
	DCHECK("cuDeviceSetGraphMemAttribute(high=1)",
	       cuDeviceSetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH, &v), CUDA_ERROR_INVALID_VALUE);

	/* §5: AutoFree exec; update alloc-only -> alloc+free: 910 / 2 */
	DCHECK("cuGraphInstantiate(AutoFree)",
	       cuGraphInstantiate(&e, g, CUDA_GRAPH_INSTANTIATE_FLAG_AUTO_FREE_ON_LAUNCH), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch", cuGraphLaunch(e, s), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch", cuGraphLaunch(e, s), CUDA_SUCCESS);
	CUgraph g2 = cap(s, MiB, 1, 1);
	CUgraphExecUpdateResultInfo ri;
	DCHECK("cuGraphExecUpdate(extra free node)", cuGraphExecUpdate(e, g2, &ri),
	       CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	printf("update result: %d\n", (int)ri.result);
	DEXPECT(ri.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED && ri.errorNode == NULL);
	/* §5: alloc 64 MiB adopts the new graph's allocation */
	CUgraph g3 = cap(s, 64 * MiB, 1, 0);
	DCHECK("cuGraphExecUpdate(64 MiB)", cuGraphExecUpdate(e, g3, &ri), CUDA_SUCCESS);
	DCHECK("cuGraphLaunch", cuGraphLaunch(e, s), CUDA_SUCCESS);
	CUgraphNode n3;
	nn = 1;
	DCHECK("cuGraphGetNodes", cuGraphGetNodes(g3, &n3, &nn), CUDA_SUCCESS);
	CUDA_MEM_ALLOC_NODE_PARAMS ap3;
	DCHECK("cuGraphMemAllocNodeGetParams", cuGraphMemAllocNodeGetParams(n3, &ap3), CUDA_SUCCESS);
	float hbuf[4];
	DCHECK("cuMemcpyDtoH(new address)", cuMemcpyDtoH(hbuf, ap3.dptr, sizeof hbuf), CUDA_SUCCESS);
	DCHECK("cuMemcpyDtoH(old address)", cuMemcpyDtoH(hbuf, ap.dptr, sizeof hbuf), CUDA_ERROR_INVALID_VALUE);
	DCHECK("cuGraphExecDestroy", cuGraphExecDestroy(e), CUDA_SUCCESS);
	/* §4: update from a graph with its own live exec -> 801, result 0 */
	DCHECK("cuGraphInstantiate", cuGraphInstantiate(&e, g2, 0), CUDA_SUCCESS);
	DCHECK("cuGraphInstantiate", cuGraphInstantiate(&e2, g, 0), CUDA_SUCCESS);
	memset(&ri, 0x55, sizeof ri);
	DCHECK("cuGraphExecUpdate(live exec)", cuGraphExecUpdate(e2, g2, &ri), CUDA_ERROR_NOT_SUPPORTED);
	DEXPECT(ri.result == CU_GRAPH_EXEC_UPDATE_SUCCESS);
	DCHECK("cuGraphExecDestroy", cuGraphExecDestroy(e), CUDA_SUCCESS);
	DCHECK("cuGraphExecDestroy", cuGraphExecDestroy(e2), CUDA_SUCCESS);
	/* node type change: kernel-only vs alloc-first */
	CUgraph gk;
	DCHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	CUdeviceptr plain;
	DCHECK("cuMemsetD8Async", cuMemsetD8Async(ap3.dptr, 0, 16, s), CUDA_SUCCESS);
	DCHECK("cuLaunchKernel", launch_add(s, ap3.dptr, 1.0), CUDA_SUCCESS);
	DCHECK("cuStreamEndCapture", cuStreamEndCapture(s, &gk), CUDA_SUCCESS);
	DCHECK("cuGraphInstantiate", cuGraphInstantiate(&e, g3, 0), CUDA_SUCCESS);
	DCHECK("cuGraphExecUpdate(type changed)", cuGraphExecUpdate(e, gk, &ri), CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
	printf("update result: %d\n", (int)ri.result);
	DEXPECT(ri.result == CU_GRAPH_EXEC_UPDATE_ERROR_NODE_TYPE_CHANGED && ri.errorNode != NULL);
	DCHECK("cuGraphExecDestroy", cuGraphExecDestroy(e), CUDA_SUCCESS);
	/* dependencies changed, same nodes: a chain of three empty nodes
	 * against a fork-join of three */
	{
		CUgraph ga, gb;
		CUgraphNode a[3], b[3];
		DCHECK("cuGraphCreate", cuGraphCreate(&ga, 0), CUDA_SUCCESS);
		DCHECK("cuGraphCreate", cuGraphCreate(&gb, 0), CUDA_SUCCESS);
		DCHECK("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&a[0], ga, NULL, 0), CUDA_SUCCESS);
		DCHECK("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&a[1], ga, &a[0], 1), CUDA_SUCCESS);
		DCHECK("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&a[2], ga, &a[1], 1), CUDA_SUCCESS);
		DCHECK("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&b[0], gb, NULL, 0), CUDA_SUCCESS);
		DCHECK("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&b[1], gb, NULL, 0), CUDA_SUCCESS);
		DCHECK("cuGraphAddEmptyNode", cuGraphAddEmptyNode(&b[2], gb, b, 2), CUDA_SUCCESS);
		DCHECK("cuGraphInstantiate", cuGraphInstantiate(&e, ga, 0), CUDA_SUCCESS);
		DCHECK("cuGraphExecUpdate(dependencies changed)", cuGraphExecUpdate(e, gb, &ri),
		       CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);
		printf("update result: %d\n", (int)ri.result);
		DEXPECT(ri.result == CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED);
		DCHECK("cuGraphExecDestroy", cuGraphExecDestroy(e), CUDA_SUCCESS);
		DCHECK("cuGraphDestroy", cuGraphDestroy(ga), CUDA_SUCCESS);
		DCHECK("cuGraphDestroy", cuGraphDestroy(gb), CUDA_SUCCESS);
	}

	/* §6: IPC pool alloc under capture -> 801, capture not invalidated */
	CUmemPoolProps pp;
	memset(&pp, 0, sizeof pp);
	pp.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
	pp.handleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
	pp.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	CUmemoryPool ipc;
	DCHECK("cuMemPoolCreate(ipc)", cuMemPoolCreate(&ipc, &pp), CUDA_SUCCESS);
	CUdeviceptr untouched = 7;
	DCHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	DCHECK("cuMemAllocFromPoolAsync(ipc)", cuMemAllocFromPoolAsync(&untouched, 4096, ipc, s),
	       CUDA_ERROR_NOT_SUPPORTED);
	DEXPECT(untouched == 7);
	CUstreamCaptureStatus st;
	DCHECK("cuStreamIsCapturing", cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
	DEXPECT(st == CU_STREAM_CAPTURE_STATUS_ACTIVE);
	/* fork into s2 and do not join back -> 904 */
	CUevent ev;
	DCHECK("cuEventCreate", cuEventCreate(&ev, 0), CUDA_SUCCESS);
	DCHECK("cuEventRecord", cuEventRecord(ev, s), CUDA_SUCCESS);
	DCHECK("cuStreamWaitEvent", cuStreamWaitEvent(s2, ev, 0), CUDA_SUCCESS);
	DCHECK("cuLaunchKernel(s2)", launch_add(s2, ap3.dptr, 1.0), CUDA_SUCCESS);
	CUgraph gu = (CUgraph)&st;
	DCHECK("cuStreamEndCapture(unjoined)", cuStreamEndCapture(s, &gu), CUDA_ERROR_STREAM_CAPTURE_UNJOINED);
	DEXPECT(gu == NULL);
	DCHECK("cuStreamIsCapturing(s2)", cuStreamIsCapturing(s2, &st), CUDA_SUCCESS);
	DEXPECT(st == CU_STREAM_CAPTURE_STATUS_NONE);

	/* capture-map.md: querying an event recorded in the capture -> 907, and
	 * the capture is invalidated (end -> 901) */
	DCHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	DCHECK("cuEventRecord", cuEventRecord(ev, s), CUDA_SUCCESS);
	DCHECK("cuEventQuery(captured)", cuEventQuery(ev), CUDA_ERROR_CAPTURED_EVENT);
	DCHECK("cuStreamEndCapture(after 907)", cuStreamEndCapture(s, &gu), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);

	/* §6: Global-mode rules: cuMemAlloc -> 900, sync -> 900, end -> 901 */
	DCHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	DCHECK("cuMemAlloc(during capture)", cuMemAlloc(&plain, 64), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	DCHECK("cuStreamSynchronize(capturing)", cuStreamSynchronize(s), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	DCHECK("cuLaunchKernel(invalidated)", launch_add(s, ap3.dptr, 1.0), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	DCHECK("cuStreamIsCapturing", cuStreamIsCapturing(s, &st), CUDA_SUCCESS);
	DEXPECT(st == CU_STREAM_CAPTURE_STATUS_INVALIDATED);
	DCHECK("cuStreamEndCapture", cuStreamEndCapture(s, &gu), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	/* Relaxed thread mode: unsafe calls allowed */
	DCHECK("cuStreamBeginCapture", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL), CUDA_SUCCESS);
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	DCHECK("cuThreadExchangeStreamCaptureMode", cuThreadExchangeStreamCaptureMode(&m), CUDA_SUCCESS);
	DCHECK("cuMemAlloc(relaxed)", cuMemAlloc(&plain, 64), CUDA_SUCCESS);
	DCHECK("cuMemFree(relaxed)", cuMemFree(plain), CUDA_SUCCESS);
	DCHECK("cuThreadExchangeStreamCaptureMode", cuThreadExchangeStreamCaptureMode(&m), CUDA_SUCCESS);
	DEXPECT(m == CU_STREAM_CAPTURE_MODE_RELAXED);
	g_s = s;
	pthread_t t;
	pthread_create(&t, NULL, end_from_other_thread, NULL);
	pthread_join(t, NULL);
	/* the 908 ended the capture (docs/capture-map.md): nothing left to end */
	DCHECK("cuStreamEndCapture(not capturing)", cuStreamEndCapture(s, &gu), CUDA_ERROR_ILLEGAL_STATE);
	DCHECK("cuStreamBeginCapture(legacy)", cuStreamBeginCapture(CU_STREAM_LEGACY, CU_STREAM_CAPTURE_MODE_GLOBAL),
	       CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);

	/* child graph with memory nodes -> 801 */
	CUgraph parent;
	CUgraphNode cn;
	DCHECK("cuGraphCreate", cuGraphCreate(&parent, 0), CUDA_SUCCESS);
	DCHECK("cuGraphAddChildGraphNode(memory nodes)", cuGraphAddChildGraphNode(&cn, parent, NULL, 0, g2),
	       CUDA_ERROR_NOT_SUPPORTED);
	DCHECK("cuGraphAddChildGraphNode", cuGraphAddChildGraphNode(&cn, parent, NULL, 0, gk), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy(garbage)", cuGraphDestroy((CUgraph)&m), CUDA_ERROR_INVALID_VALUE);
	DCHECK("cuGraphLaunch(garbage)", cuGraphLaunch((CUgraphExec)&m, s), CUDA_ERROR_INVALID_VALUE);

	size_t fr, tot;
	DCHECK("cuMemGetInfo", cuMemGetInfo(&fr, &tot), CUDA_SUCCESS);
	printf("total memory: %zu GiB\n", tot >> 30);
	DCHECK("cuGraphDestroy", cuGraphDestroy(parent), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy", cuGraphDestroy(gk), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy", cuGraphDestroy(g3), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy", cuGraphDestroy(g2), CUDA_SUCCESS);
	DCHECK("cuGraphDestroy", cuGraphDestroy(g), CUDA_SUCCESS);
	DCHECK("cuMemPoolDestroy", cuMemPoolDestroy(ipc), CUDA_SUCCESS);
	DCHECK("cuEventDestroy", cuEventDestroy(ev), CUDA_SUCCESS);
	DCHECK("cuStreamDestroy", cuStreamDestroy(s2), CUDA_SUCCESS);
	DCHECK("cuStreamDestroy", cuStreamDestroy(s), CUDA_SUCCESS);
	printf("failures: %d\n", prog_failures);
	return prog_failures ? 1 : 0;
}
