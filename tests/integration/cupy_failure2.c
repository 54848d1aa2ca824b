/*
 * tests/integration/cupy_failure2.c -- CuPy's test_stream_capture_failure2
 * (tests/cupy_tests/cuda_tests/test_graph.py) as a C program, through the
 * runtime API as CuPy makes it (relaxed mode, CuPy's default), against the
 * stand-in (issue 31, the bar): the case 'cupy_failure2' of run.py checks
 * that both refusals are named before the call with predicted_rc equal to
 * the answer, and that the origin's 901 links back to the joined end.
 *
 *   s1.begin_capture()
 *   s2.end_capture()        -> cudaErrorIllegalState (401)          CGS021
 *   e2.record(s1); s2.wait_event(e2); b = a**3 on s2
 *   s2.end_capture()        -> cudaErrorStreamCaptureUnmatched (903) CGS022
 *   s1.end_capture()        -> cudaErrorStreamCaptureInvalidated (901)
 *   neither stream captures; both synchronize
 */
#include "scenario.h"

#define N 100L

int main(void)
{
	cudaStream_t s1, s2;
	cudaEvent_t e2;
	cudaGraph_t g = NULL;
	enum cudaStreamCaptureStatus st1 = cudaStreamCaptureStatusActive, st2 = cudaStreamCaptureStatusActive;
	float *a = NULL, *b = NULL;

	CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreate(&e2), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
	LAUNCH_FILL(s1, a, N, 0.5);
	CHECK(cudaStreamSynchronize(s1), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s1, cudaStreamCaptureModeRelaxed), cudaSuccess);
	CHECK(cudaStreamEndCapture(s2, &g), cudaErrorIllegalState);
	(void)cudaGetLastError();
	CHECK(cudaEventRecord(e2, s1), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, e2, 0), cudaSuccess);
	LAUNCH_COPY(s2, b, a, N);
	CHECK(cudaStreamEndCapture(s2, &g), cudaErrorStreamCaptureUnmatched);
	(void)cudaGetLastError();
	CHECK(cudaStreamEndCapture(s1, &g), cudaErrorStreamCaptureInvalidated);
	(void)cudaGetLastError();
	EXPECT(g == NULL);

	CHECK(cudaStreamIsCapturing(s1, &st1), cudaSuccess);
	CHECK(cudaStreamIsCapturing(s2, &st2), cudaSuccess);
	EXPECT(st1 == cudaStreamCaptureStatusNone && st2 == cudaStreamCaptureStatusNone);
	CHECK(cudaStreamSynchronize(s1), cudaSuccess);
	CHECK(cudaStreamSynchronize(s2), cudaSuccess);

	CHECK(cudaEventDestroy(e2), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(s1), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	return SCENARIO_EXIT();
}
