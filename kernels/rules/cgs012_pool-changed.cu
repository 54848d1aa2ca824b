/*
 * kernels/rules/cgs012_pool-changed.cu -- reproducer for CGS012.
 *
 * Graph 1 captures an allocation from the device's default pool and is
 * instantiated. The device's current pool is then set to a created pool
 * (same properties) and graph 2 captures an allocation of the same size,
 * now from that pool. Updating exec 1 from graph 2 returns 0: the driver
 * never checks pool identity (cuda-facts §3 "Pool identity is lost", §5, §7).
 */
#include "scenario.h"

#define N (1L << 18) /* 1 MiB of floats */

static cudaGraph_t capture(cudaStream_t s)
{
	cudaGraph_t g = NULL;
	float *buf = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	cudaMemPool_t defpool = NULL, pool = NULL;
	struct cudaMemPoolProps props;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaDeviceGetDefaultMemPool(&defpool, 0), cudaSuccess);

	cudaGraph_t g1 = capture(s); /* from the default pool */
	CHECK(cudaGraphInstantiate(&e, g1, 0), cudaSuccess);

	props = sc_pool_props(0, cudaMemHandleTypeNone);
	CHECK(cudaMemPoolCreate(&pool, &props), cudaSuccess);
	CHECK(cudaDeviceSetMemPool(0, pool), cudaSuccess);
	cudaGraph_t g2 = capture(s); /* from the created pool */

	memset(&info, 0, sizeof info);
	/* CGS012: accepted although the allocation now comes from another pool */
	CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess);
	printf("update result=%d (want 0)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateSuccess);

	/* never launched: no allocation is outstanding */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaDeviceSetMemPool(0, defpool), cudaSuccess);
	CHECK(cudaMemPoolDestroy(pool), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
