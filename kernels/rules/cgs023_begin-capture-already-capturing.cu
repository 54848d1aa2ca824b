/*
 * kernels/rules/cgs023_begin-capture-already-capturing.cu -- reproducer for
 * CGS023.
 *
 * A second cudaStreamBeginCapture on a stream that is capturing: refused
 * (captures do not nest: 401 cudaErrorIllegalState), and the refusal
 * invalidates the capture in progress. Measured on the H200 (driver 580,
 * CUDA 13.0, 2026-11-28): the stream's status then reads invalidated, and
 * its own end returns 901 cudaErrorStreamCaptureInvalidated and no graph;
 * the stream is out of capture mode after that end.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	enum cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	/* CGS023: s is capturing already */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaErrorIllegalState);
	(void)cudaGetLastError();
	CHECK(cudaStreamIsCapturing(s, &st), cudaSuccess);
	EXPECT(st == cudaStreamCaptureStatusInvalidated);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();
	CHECK(cudaStreamIsCapturing(s, &st), cudaSuccess);
	EXPECT(st == cudaStreamCaptureStatusNone);

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
