/*
 * kernels/rules/cgs021_end-capture-not-capturing.cu -- reproducer for CGS021.
 *
 * cudaStreamEndCapture on a stream that is not capturing: 401
 * cudaErrorIllegalState, no graph (measured on the H100 in every mode,
 * docs/capture-map.md "end capture, stream not capturing"; CuPy's
 * test_stream_capture_failure2 asserts it). Here a second end of a capture
 * that already ended.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL, g2 = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	EXPECT(g != NULL);
	/* CGS021: the capture is over; the stream captures nothing */
	CHECK(cudaStreamEndCapture(s, &g2), cudaErrorIllegalState);
	EXPECT(g2 == NULL);
	(void)cudaGetLastError();

	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
