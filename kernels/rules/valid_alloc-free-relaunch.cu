/*
 * kernels/rules/valid_alloc-free-relaunch.cu -- must stay silent.
 *
 * A graph that allocates, uses and frees its buffer relaunches freely,
 * without AutoFreeOnLaunch (cuda-facts §3 last bullet).
 */
#include "scenario.h"

#define N (1L << 18) /* 1 MiB of floats */

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, *out = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&out, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_COPY(s, out, buf, N);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	for (int i = 0; i < 3; i++)
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(out), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
