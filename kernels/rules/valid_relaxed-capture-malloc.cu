/*
 * kernels/rules/valid_relaxed-capture-malloc.cu -- must stay silent.
 *
 * A caching allocator's pattern: during a Global-mode capture the thread
 * switches itself to Relaxed with cudaThreadExchangeStreamCaptureMode,
 * grows with cudaMalloc (allowed in Relaxed mode, cuda-facts §6), and restores
 * its mode; the capture ends normally.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, *grown = NULL;
	enum cudaStreamCaptureMode mode;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	mode = cudaStreamCaptureModeRelaxed;
	CHECK(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
	CHECK(cudaMalloc((void **)&grown, N * sizeof(float)), cudaSuccess);
	CHECK(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess); /* restore */
	EXPECT(mode == cudaStreamCaptureModeRelaxed);
	LAUNCH_COPY(s, grown, buf, N);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(grown), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
