/*
 * kernels/rules/cgs014_legacy-stream-in-capture.cu -- reproducer for CGS014.
 *
 * While a *blocking* stream captures, the legacy default stream (stream 0)
 * would synchronise with it: a query of stream 0 fails with 906
 * cudaErrorStreamCaptureImplicit and invalidates the capture, whose end
 * returns 901 (docs/capture-map.md: kernels, async copies, queries and
 * synchronizes on stream 0 alike, every mode, any thread).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess); /* blocking: the legacy stream joins it */
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	/* CGS014: the legacy stream while a blocking stream captures */
	CHECK(cudaStreamQuery(0), cudaErrorStreamCaptureImplicit);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
