/*
 * kernels/rules/cgs005_relaunch-unfreed.cu -- reproducer for CGS005.
 *
 * An alloc-only graph (captured cudaMallocAsync, no free) instantiated
 * without AutoFreeOnLaunch launches once; the relaunch finds the previous
 * launch's allocation unfreed and fails with 1 cudaErrorInvalidValue
 * (cuda-facts §3 last bullet, §4 second row).
 */
#include "scenario.h"

#define N (1L << 18) /* 1 MiB of floats */

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess); /* no AutoFreeOnLaunch */
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	/* CGS005: the first launch's allocation is still live */
	CHECK(cudaGraphLaunch(e, s), cudaErrorInvalidValue);
	CHECK(cudaGetLastError(), cudaErrorInvalidValue);

	/* free the allocation (cuda-facts §3: cudaFree frees a graph allocation) */
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
