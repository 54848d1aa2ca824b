/*
 * kernels/model/update_capture.cu -- the vLLM/SGLang step (issue 36, bench
 * case update-capture-64): per step a fresh capture of KERNELS kernels from
 * one site, cudaGraphExecUpdate of one executable from it, the graph
 * destroyed; every 4th step the executable launched.
 *
 * usage: model_update_capture [STEPS] (default 12). run_model.py counts
 * the driver calls the shim makes a step (the stand-in's trace at two step
 * counts, less the bare program's): the end of capture's walk of the graph
 * (a type and a kernel parameters query a node, the node list and edges)
 * and nothing per node beyond it.
 */
#include <stdlib.h>

#include "scenario.h"

#define N 1024L
#define KERNELS 16

static cudaGraph_t chain(cudaStream_t s, float *buf, double v)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int i = 0; i < KERNELS; i++)
		LAUNCH_ADD(s, buf, N, v); /* one site: the loop's */
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(int argc, char **argv)
{
	int steps = argc > 1 ? atoi(argv[1]) : 12;
	cudaStream_t s;
	float *buf = NULL;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	cudaGraph_t g0 = chain(s, buf, 1.0);
	CHECK(cudaGraphInstantiate(&e, g0, 0), cudaSuccess);
	for (int r = 0; r < steps; r++) {
		cudaGraph_t g = chain(s, buf, 2.0 + r);
		CHECK(cudaGraphExecUpdate(e, g, &info), cudaSuccess);
		CHECK(cudaGraphDestroy(g), cudaSuccess);
		if (r % 4 == 0)
			CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	}
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g0), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	printf("steps %d\n", steps);
	return SCENARIO_EXIT();
}
