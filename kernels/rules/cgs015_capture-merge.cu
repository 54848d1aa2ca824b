/*
 * kernels/rules/cgs015_capture-merge.cu -- reproducer for CGS015.
 *
 * Two captures live at once; a stream of the first waits on an event
 * recorded in the second: 902 cudaErrorStreamCaptureMerge, and both
 * captures are invalidated (both ends return 901; docs/capture-map.md).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s1, s2;
	cudaEvent_t e2;
	cudaGraph_t g1 = NULL, g2 = NULL;
	float *a = NULL, *b = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreate(&e2), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s1, a, N, 1.0);
	CHECK(cudaStreamBeginCapture(s2, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s2, b, N, 2.0);
	CHECK(cudaEventRecord(e2, s2), cudaSuccess);
	/* CGS015: capture 1 waits on an event of capture 2 */
	CHECK(cudaStreamWaitEvent(s1, e2, 0), cudaErrorStreamCaptureMerge);
	CHECK(cudaStreamEndCapture(s1, &g1), cudaErrorStreamCaptureInvalidated);
	CHECK(cudaStreamEndCapture(s2, &g2), cudaErrorStreamCaptureInvalidated);
	EXPECT(g1 == NULL && g2 == NULL);
	(void)cudaGetLastError();

	CHECK(cudaEventDestroy(e2), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(s1), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	return SCENARIO_EXIT();
}
