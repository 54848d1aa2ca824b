/*
 * kernels/rules/cgs007_capture-unsafe-call.cu -- reproducer for CGS007.
 *
 * cudaMalloc while a Global-mode capture is live on this thread fails with
 * 900 cudaErrorStreamCaptureUnsupported and invalidates the capture: ending
 * it returns 901 cudaErrorStreamCaptureInvalidated and no graph
 * (cuda-facts §4, §6).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	float *buf = NULL, *tmp = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	/* CGS007: capture-unsafe call during a Global-mode capture */
	CHECK(cudaMalloc((void **)&tmp, N * sizeof(float)), cudaErrorStreamCaptureUnsupported);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError(); /* clear the sticky-free last error */

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
