/*
 * kernels/rules/cgs014_stale-pointer-launch.cu -- CGS014 (error), with
 * CGS013 at the free.
 *
 * The stale-pointer bug of vLLM #40038 and friends in a few lines: capture
 * with a buffer, free it, allocate again (same size: the driver usually
 * hands the same address back, so the replay does not crash, it silently
 * writes into whatever now lives there) and replay. The shim says so
 * before the launch. (The CPU stand-in reuses the address too.)
 */
#include "scenario.h"

#define N 4096L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, *again = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess); /* CGS013 */
	CHECK(cudaMalloc((void **)&again, N * sizeof(float)), cudaSuccess);
	/* The replay writes where buf was. Only where that is the new buffer
	 * (the usual case) is it safe to run here; elsewhere it would fault,
	 * and the program says so instead (the shim has warned at the free). */
	if (again == buf) {
		CHECK(cudaGraphLaunch(e, s), cudaSuccess); /* CGS014, before the call */
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	} else {
		printf("the driver gave another address: replay skipped\n");
	}
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(again), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
