/*
 * kernels/rules/cgs022_end-capture-unmatched.cu -- reproducer for CGS022.
 *
 * CuPy's test_stream_capture_failure2 (tests/cupy_tests/cuda_tests/
 * test_graph.py), after its first end: s2 joins s1's capture (an event
 * recorded on s1, waited on by s2), captures a kernel, and then ends the
 * capture itself: 903 cudaErrorStreamCaptureUnmatched, and the capture is
 * invalidated, so s1's own end returns 901 (CuPy asserts both and passes on
 * the GPU). Both streams leave capture mode.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s1, s2;
	cudaEvent_t e2;
	cudaGraph_t g = NULL;
	enum cudaStreamCaptureStatus st1, st2;
	float *a = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreate(&e2), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaEventRecord(e2, s1), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, e2, 0), cudaSuccess);
	LAUNCH_SCALE(s2, a, N, 3.0);
	/* CGS022: s2 joined the capture; only s1 may end it */
	CHECK(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched);
	EXPECT(g == NULL);
	CHECK(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();
	CHECK(cudaStreamIsCapturing(s1, &st1), cudaSuccess);
	CHECK(cudaStreamIsCapturing(s2, &st2), cudaSuccess);
	EXPECT(st1 == cudaStreamCaptureStatusNone && st2 == cudaStreamCaptureStatusNone);

	CHECK(cudaEventDestroy(e2), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaStreamDestroy(s1), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	return SCENARIO_EXIT();
}
