/*
 * tests/rules/node_details.c -- a captured graph with one node of each kind
 * nodes.c describes (issue 15): a kernel, a host-to-device copy from a
 * pinned buffer and a memset; instantiated at debug level so
 * the shim writes its node records, then updated from a capture that
 * changes the kernel's grid and pointer parameter (an "update_diff").
 * Checked by check_nodes.py.
 */
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture(cudaStream_t s, float *buf, const float *host, long n)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMemcpyAsync(buf, host, 256, cudaMemcpyHostToDevice, s), cudaSuccess);
	CHECK(cudaMemsetAsync(buf + 64, 7, 128, s), cudaSuccess);
	LAUNCH_ADD(s, buf, n, 2.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *a = NULL, *b = NULL, *host = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMallocHost((void **)&host, N * sizeof(float)), cudaSuccess); /* pinned: no CGS020 */
	cudaGraph_t g1 = capture(s, a, host, N / 4);
	CHECK(cudaGraphInstantiate(&e, g1, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	/* same copy and memset; the kernel runs on b with 4x the grid */
	cudaGraph_t g2 = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMemcpyAsync(a, host, 256, cudaMemcpyHostToDevice, s), cudaSuccess);
	CHECK(cudaMemsetAsync(a + 64, 7, 128, s), cudaSuccess);
	LAUNCH_ADD(s, b, N / 4, 2.0);
	CHECK(cudaStreamEndCapture(s, &g2), cudaSuccess);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaFreeHost(host), cudaSuccess);
	return SCENARIO_EXIT();
}
