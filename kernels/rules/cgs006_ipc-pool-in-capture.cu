/*
 * kernels/rules/cgs006_ipc-pool-in-capture.cu -- reproducer for CGS006.
 *
 * A pool created with handleTypes = cudaMemHandleTypePosixFileDescriptor
 * (IPC-capable) cannot back a graph allocation: cudaMallocFromPoolAsync
 * during capture fails with 801 cudaErrorNotSupported, yet the capture is
 * not invalidated and still ends with 0 (cuda-facts §4, §6, §7).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaMemPool_t pool = NULL;
	struct cudaMemPoolProps props;
	float *buf = NULL, *p = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	props = sc_pool_props(0, cudaMemHandleTypePosixFileDescriptor);
	CHECK(cudaMemPoolCreate(&pool, &props), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	/* CGS006: allocation from an IPC-capable pool during capture */
	CHECK(cudaMallocFromPoolAsync((void **)&p, N * sizeof(float), pool, s), cudaErrorNotSupported);
	CHECK(cudaGetLastError(), cudaErrorNotSupported);
	LAUNCH_FILL(s, buf, N, 1.0); /* work that does not use the failed pointer */
	CHECK(cudaGetLastError(), cudaSuccess);
	/* the capture was not invalidated */
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	EXPECT(g != NULL);

	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaMemPoolDestroy(pool), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
