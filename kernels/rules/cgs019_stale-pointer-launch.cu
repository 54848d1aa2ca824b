/*
 * kernels/rules/cgs019_stale-pointer-launch.cu -- CGS019 (error), with
 * CGS018 at the free.
 *
 * The stale-pointer bug of vLLM #40038 and friends in a few lines: capture
 * with a buffer, free it, allocate again (same size: the driver usually
 * hands the same address back, so the replay does not crash, it silently
 * writes into whatever now lives there) and replay. The shim says so
 * before the upload and the launch.
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
	CHECK(cudaFree(buf), cudaSuccess); /* CGS018 */
	CHECK(cudaMalloc((void **)&again, N * sizeof(float)), cudaSuccess);
	/* The upload is announced (CGS019) and runs nothing. The replay then
	 * writes where buf was: only where that is the new buffer (the usual
	 * case on the GPU) is it safe to run here; elsewhere (a sanitizer's
	 * quarantine on the stand-in) it would touch freed memory. */
	CHECK(cudaGraphUpload(e, s), cudaSuccess); /* CGS019, before the call */
	if (again == buf) {
		CHECK(cudaGraphLaunch(e, s), cudaSuccess); /* counted */
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	}
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(again), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
