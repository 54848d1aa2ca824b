/*
 * kernels/rules/cgs020_pageable-copy-in-graph.cu -- CGS020 (hint).
 *
 * A captured host-to-device copy from malloc'd (pageable) memory: the
 * graph's copy node reads from memory the driver does not know, and every
 * replay reads whatever the program left there. Reported at instantiate.
 */
#include <stdlib.h>

#include "scenario.h"

#define N 4096L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, *host = (float *)calloc(N, sizeof(float));

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMemcpyAsync(buf, host, N * sizeof(float), cudaMemcpyHostToDevice, s), cudaSuccess);
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess); /* CGS020 */
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	free(host);
	return SCENARIO_EXIT();
}
