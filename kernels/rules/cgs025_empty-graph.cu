/*
 * kernels/rules/cgs025_empty-graph.cu -- reproducer for CGS025 (with its
 * CGS024).
 *
 * Every kernel of the capture went to a stream outside it (a handle cached
 * before the capture): the capture ends with no node at all, and the
 * "graph" replays nothing. The launch is named when it escapes (CGS024),
 * the empty graph at the end of the capture (CGS025), with the kernel.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s, cached;
	cudaGraph_t g = NULL;
	float *a = NULL;
	size_t n = 99;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&cached, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(cached, a, N, 2.0); /* CGS024 */
	CHECK(cudaGetLastError(), cudaSuccess);
	/* CGS025: the graph has no kernel node */
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
	EXPECT(n == 0);
	CHECK(cudaStreamSynchronize(cached), cudaSuccess);

	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaStreamDestroy(cached), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
