/*
 * kernels/rules/cgs018_stale-pointer-freed.cu -- CGS018 (hint: no launch follows).
 *
 * A graph captured with a kernel on buf is instantiated and launched; then
 * buf is freed while the executable lives. The exec's kernel node still
 * holds buf in parameter 0: the free is reported, naming the exec, the
 * kernel, the parameter, the allocation and the allocation, capture and
 * free sites. The exec is destroyed without another launch (no CGS019).
 */
#include "scenario.h"

#define N 4096L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess); /* CGS018: exec e still points into buf */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
