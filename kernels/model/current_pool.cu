/*
 * kernels/model/current_pool.cu -- cudaMallocAsync during capture takes the
 * device's *current* pool at capture time (issue 3, provenance).
 *
 * Capture 1: cudaDeviceSetMemPool(0, C) first; cudaMallocAsync (1 MiB) must
 * be attributed to pool C (pool_default false).
 * Capture 2: the default pool restored; cudaMallocAsync (2 MiB) must be
 * attributed to the default pool (pool_default true).
 * Both graphs free their allocation. Handles go to stderr as
 *   pool C 0x...   pool default 0x...
 */
#include <stdint.h>
#include "scenario.h"

#define N1 (1L << 18)
#define N2 (2L << 18)

static int capture_one(cudaStream_t s, long n, double v)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *p = NULL;
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
	cudaStream_t s;
	cudaMemPool_t pc = NULL, pd = NULL, cur = NULL;
	struct cudaMemPoolProps props;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	props = sc_pool_props(0, cudaMemHandleTypeNone);
	CHECK(cudaMemPoolCreate(&pc, &props), cudaSuccess);
	CHECK(cudaDeviceGetDefaultMemPool(&pd, 0), cudaSuccess);
	fprintf(stderr, "pool C 0x%llx\npool default 0x%llx\n", (unsigned long long)(uintptr_t)pc,
		(unsigned long long)(uintptr_t)pd);

	CHECK(cudaDeviceSetMemPool(0, pc), cudaSuccess);
	CHECK(cudaDeviceGetMemPool(&cur, 0), cudaSuccess);
	EXPECT(cur == pc);
	printf("capture 1 (current pool C)\n");
	capture_one(s, N1, 1.0);

	CHECK(cudaDeviceSetMemPool(0, pd), cudaSuccess);
	printf("capture 2 (current pool default)\n");
	capture_one(s, N2, 2.0);

	CHECK(cudaMemPoolDestroy(pc), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
