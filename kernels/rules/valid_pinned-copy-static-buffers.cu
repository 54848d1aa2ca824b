/*
 * kernels/rules/valid_pinned-copy-static-buffers.cu -- must stay silent.
 *
 * The pattern done right: a pinned staging buffer and a device buffer that
 * outlive the executable; new input is copied into the static buffers
 * before each replay; everything is freed after the exec is destroyed.
 */
#include "scenario.h"

#define N 4096L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, *host = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMallocHost((void **)&host, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMemcpyAsync(buf, host, N * sizeof(float), cudaMemcpyHostToDevice, s), cudaSuccess);
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	for (int i = 0; i < 3; i++) {
		host[0] = (float)i;
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	}
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaFreeHost(host), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
