/*
 * kernels/rules/cgs004_second-instantiation.cu -- reproducer for CGS004.
 *
 * A graph that holds a memory node (captured cudaMallocAsync, never freed)
 * is instantiated once; instantiating it a second time while that first
 * executable lives fails with 801 cudaErrorNotSupported
 * (cuda-facts §3 last bullet, §4 first row).
 */
#include "scenario.h"

#define N (1L << 18) /* 1 MiB of floats */

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e1 = NULL, e2 = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e1, g, 0), cudaSuccess);
	/* CGS004: the first executable still lives */
	CHECK(cudaGraphInstantiate(&e2, g, 0), cudaErrorNotSupported);
	CHECK(cudaGetLastError(), cudaErrorNotSupported);

	/* never launched: no allocation is outstanding */
	CHECK(cudaGraphExecDestroy(e1), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
