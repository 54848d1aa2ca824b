/*
 * kernels/model/multi_device.cu -- per-device truth on two devices (issue 18).
 *
 * Needs 2 devices (the stand-in with STANDIN_DEVICES=2, or a 2-GPU host);
 * with fewer it prints "needs 2 devices" and exits 77.
 *
 * 1. Graph M, built on device 0's context: an allocation node on device 0
 *    that device 1 may read and write (accessDescs 1:rw), an allocation
 *    node on device 1 that device 0 may (accessDescs 0:rw), each freed by
 *    a free node. Instantiated on device 0, launched first from device 1's
 *    context (into device 0's stream), then from device 0's: the graph
 *    memory stays attributed to the devices of the memory nodes.
 * 2. Pool C created on device 1 and made device 1's current pool; a
 *    capture on device 1's stream allocates from it (cudaMallocAsync), a
 *    capture on device 0's stream from device 0's default pool.
 * 3. MULTI_DEVICE_LEAK=1: one more graph on device 0 whose allocation is
 *    never freed, launched once (CGS011 at exit: the violation one rank
 *    of tests/model's multi_rank case has and the other lacks).
 *
 * stdout is deterministic; stderr carries the handles and, per device,
 * cudaDeviceGetGraphMemAttribute at the end:
 *   pool default0 0x...   pool default1 0x...   pool C 0x...
 *   graphmem D used U used_high UH reserved R reserved_high RH
 */
#include <stdint.h>
#include <stdlib.h>
#include "scenario.h"

#define MiB (1L << 20)

static void mem_node_params(struct cudaMemAllocNodeParams *p, int dev, size_t bytes, struct cudaMemAccessDesc *acc,
			    int nacc)
{
	memset(p, 0, sizeof *p);
	p->poolProps = sc_pool_props(dev, cudaMemHandleTypeNone);
	p->accessDescs = acc;
	p->accessDescCount = (size_t)nacc;
	p->bytesize = bytes;
}

static void access(struct cudaMemAccessDesc *a, int dev)
{
	memset(a, 0, sizeof *a);
	a->location.type = cudaMemLocationTypeDevice;
	a->location.id = dev;
	a->flags = cudaMemAccessFlagsProtReadWrite;
}

static int capture_on(int dev, cudaStream_t s, long n, double v)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *p = NULL;
	CHECK(cudaSetDevice(dev), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&p, n * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, p, n, v);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(p, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	return 0;
}

int main(void)
{
	int n = 0, can = 0;
	cudaStream_t s[2];
	cudaMemPool_t pd[2] = {NULL, NULL}, pc = NULL;
	struct cudaMemPoolProps props;
	struct cudaMemAccessDesc acc0[1], acc1[1];
	struct cudaMemAllocNodeParams a0, a1;
	cudaGraph_t gm = NULL;
	cudaGraphNode_t n0, n1, f0, f1;
	cudaGraphExec_t em = NULL;
	cudaError_t rc;

	if (cudaGetDeviceCount(&n) != cudaSuccess || n < 2) {
		printf("needs 2 devices\n");
		return 77;
	}
	for (int d = 0; d < 2; d++) {
		CHECK(cudaSetDevice(d), cudaSuccess);
		CHECK(cudaFree(0), cudaSuccess);
		CHECK(cudaStreamCreate(&s[d]), cudaSuccess);
		CHECK(cudaDeviceGetDefaultMemPool(&pd[d], d), cudaSuccess);
		fprintf(stderr, "pool default%d 0x%llx\n", d, (unsigned long long)(uintptr_t)pd[d]);
	}
	EXPECT(pd[0] != pd[1]);
	/* peer access both ways (a second enable answers "already enabled") */
	CHECK(cudaDeviceCanAccessPeer(&can, 0, 1), cudaSuccess);
	printf("device 0 can access device 1: %d\n", can);
	CHECK(cudaSetDevice(0), cudaSuccess);
	rc = cudaDeviceEnablePeerAccess(1, 0);
	printf("enable peer 0->1: %s\n",
	       rc == cudaSuccess || rc == cudaErrorPeerAccessAlreadyEnabled ? "ok" : "failed");
	CHECK(cudaSetDevice(1), cudaSuccess);
	rc = cudaDeviceEnablePeerAccess(0, 0);
	printf("enable peer 1->0: %s\n",
	       rc == cudaSuccess || rc == cudaErrorPeerAccessAlreadyEnabled ? "ok" : "failed");
	(void)cudaGetLastError();

	/* 1. memory nodes on both devices, instantiated on device 0 */
	CHECK(cudaSetDevice(0), cudaSuccess);
	access(&acc0[0], 1);
	access(&acc1[0], 0);
	mem_node_params(&a0, 0, 4 * MiB, acc0, 1);
	mem_node_params(&a1, 1, 8 * MiB, acc1, 1);
	CHECK(cudaGraphCreate(&gm, 0), cudaSuccess);
	CHECK(cudaGraphAddMemAllocNode(&n0, gm, NULL, 0, &a0), cudaSuccess);
	CHECK(cudaGraphAddMemAllocNode(&n1, gm, NULL, 0, &a1), cudaSuccess);
	CHECK(cudaGraphAddMemFreeNode(&f0, gm, &n0, 1, a0.dptr), cudaSuccess);
	CHECK(cudaGraphAddMemFreeNode(&f1, gm, &n1, 1, a1.dptr), cudaSuccess);
	{
		struct cudaMemAllocNodeParams out;
		CHECK(cudaGraphMemAllocNodeGetParams(n0, &out), cudaSuccess);
		printf("node on device 0: location %d, %d access descriptor(s)\n", out.poolProps.location.id,
		       (int)out.accessDescCount);
	}
	CHECK(cudaGraphInstantiate(&em, gm, 0), cudaSuccess);
	/* first launched from device 1's context, into device 0's stream */
	CHECK(cudaSetDevice(1), cudaSuccess);
	rc = cudaGraphLaunch(em, s[0]);
	printf("launch from device 1's context: %s\n", rc == cudaSuccess ? "ok" : "refused");
	(void)cudaGetLastError();
	CHECK(cudaStreamSynchronize(s[0]), cudaSuccess);
	CHECK(cudaSetDevice(0), cudaSuccess);
	CHECK(cudaGraphLaunch(em, s[0]), cudaSuccess);
	CHECK(cudaStreamSynchronize(s[0]), cudaSuccess);

	/* 2. per-device current pool */
	props = sc_pool_props(1, cudaMemHandleTypeNone);
	CHECK(cudaMemPoolCreate(&pc, &props), cudaSuccess);
	fprintf(stderr, "pool C 0x%llx\n", (unsigned long long)(uintptr_t)pc);
	CHECK(cudaDeviceSetMemPool(1, pc), cudaSuccess);
	printf("capture on device 1 (current pool C)\n");
	capture_on(1, s[1], 1 * MiB / 4, 1.0);
	printf("capture on device 0 (default pool)\n");
	capture_on(0, s[0], 2 * MiB / 4, 2.0);
	CHECK(cudaDeviceSetMemPool(1, pd[1]), cudaSuccess);

	/* 3. a graph allocation left outstanding (CGS011 at exit) */
	if (getenv("MULTI_DEVICE_LEAK") && atoi(getenv("MULTI_DEVICE_LEAK"))) {
		cudaGraph_t gl = NULL;
		cudaGraphExec_t el = NULL;
		cudaGraphNode_t nl;
		struct cudaMemAllocNodeParams al;
		CHECK(cudaSetDevice(0), cudaSuccess);
		mem_node_params(&al, 0, 2 * MiB, NULL, 0);
		CHECK(cudaGraphCreate(&gl, 0), cudaSuccess);
		CHECK(cudaGraphAddMemAllocNode(&nl, gl, NULL, 0, &al), cudaSuccess);
		CHECK(cudaGraphInstantiate(&el, gl, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(el, s[0]), cudaSuccess);
		CHECK(cudaStreamSynchronize(s[0]), cudaSuccess);
	}

	for (int d = 0; d < 2; d++) {
		unsigned long long v[4] = {0, 0, 0, 0};
		CHECK(cudaDeviceGetGraphMemAttribute(d, cudaGraphMemAttrUsedMemCurrent, &v[0]), cudaSuccess);
		CHECK(cudaDeviceGetGraphMemAttribute(d, cudaGraphMemAttrUsedMemHigh, &v[1]), cudaSuccess);
		CHECK(cudaDeviceGetGraphMemAttribute(d, cudaGraphMemAttrReservedMemCurrent, &v[2]), cudaSuccess);
		CHECK(cudaDeviceGetGraphMemAttribute(d, cudaGraphMemAttrReservedMemHigh, &v[3]), cudaSuccess);
		fprintf(stderr, "graphmem %d used %llu used_high %llu reserved %llu reserved_high %llu\n", d,
			(unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2],
			(unsigned long long)v[3]);
	}
	CHECK(cudaSetDevice(0), cudaSuccess);
	CHECK(cudaGraphExecDestroy(em), cudaSuccess);
	CHECK(cudaGraphDestroy(gm), cudaSuccess);
	CHECK(cudaMemPoolDestroy(pc), cudaSuccess);
	CHECK(cudaStreamDestroy(s[0]), cudaSuccess);
	CHECK(cudaSetDevice(1), cudaSuccess);
	CHECK(cudaStreamDestroy(s[1]), cudaSuccess);
	return SCENARIO_EXIT();
}
