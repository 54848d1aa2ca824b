/*
 * kernels/rules/cgs026_capture-made-again.cu -- reproducer for CGS026.
 *
 * One capture site captures the same two-kernel graph 10 times, each time
 * instantiating, launching and destroying it (a loop that re-records where
 * it could replay). The 10th capture's end is named once, with the count
 * (10 captures, 9 instantiations so far) and the time spent; the exit's
 * "recapture" record has the totals. Output: the buffer after the last
 * replay.
 */
#include "scenario.h"

#define N 1024L
#define ROUNDS 10

static cudaGraph_t capture(cudaStream_t s, float *a)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	LAUNCH_SCALE(s, a, N, 3.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess); /* CGS026 at the 10th */
	return g;
}

int main(void)
{
	cudaStream_t s;
	float *a = NULL, h = 0;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	for (int i = 0; i < ROUNDS; i++) {
		cudaGraph_t g = capture(s, a);
		cudaGraphExec_t e = NULL;
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
		CHECK(cudaGraphExecDestroy(e), cudaSuccess);
		CHECK(cudaGraphDestroy(g), cudaSuccess);
	}
	CHECK(cudaMemcpy(&h, a, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
	printf("a[0] = %g\n", h);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
