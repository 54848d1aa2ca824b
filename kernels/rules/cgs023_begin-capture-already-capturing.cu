/*
 * kernels/rules/cgs023_begin-capture-already-capturing.cu -- reproducer for
 * CGS023.
 *
 * A second cudaStreamBeginCapture on a stream that is capturing: refused
 * (captures do not nest; 401 cudaErrorIllegalState on the stand-in, the GPU
 * row measures the driver's code), and the first capture goes on: its own
 * end returns the graph.
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
	EXPECT(st == cudaStreamCaptureStatusActive);
	LAUNCH_SCALE(s, buf, N, 2.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	EXPECT(g != NULL);

	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
