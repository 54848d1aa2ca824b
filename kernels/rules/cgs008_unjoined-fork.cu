/*
 * kernels/rules/cgs008_unjoined-fork.cu -- reproducer for CGS008.
 *
 * A second stream is forked into a capture (event recorded on the origin
 * stream, waited on by the second), work is launched on it, and it is not
 * joined back: ending the capture fails with 904
 * cudaErrorStreamCaptureUnjoined (cuda-facts §6 code table).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s, s2;
	cudaEvent_t fork;
	cudaGraph_t g = NULL;
	float *a = NULL, *b = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamCreate(&s2), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);	      /* fork ... */
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess); /* ... s2 joins the capture */
	LAUNCH_FILL(s2, b, N, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_ADD(s, a, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	/* CGS008: s2's work is never joined back into s */
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureUnjoined);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaEventDestroy(fork), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
