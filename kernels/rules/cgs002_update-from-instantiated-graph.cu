/*
 * kernels/rules/cgs002_update-from-instantiated-graph.cu -- reproducer for CGS002.
 *
 * Exec A comes from a graph with memory nodes (alloc, kernel, free). Graph B
 * has the same shape and its own live executable. Updating A from B returns
 * 801 cudaErrorNotSupported and leaves result 0 (cuda-facts §4 third row, §5).
 */
#include "scenario.h"

#define N (1L << 18) /* 1 MiB of floats */

static cudaGraph_t capture(cudaStream_t s, double v)
{
	cudaGraph_t g = NULL;
	float *buf = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, v);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t ea = NULL, eb = NULL;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	cudaGraph_t ga = capture(s, 1.0);
	cudaGraph_t gb = capture(s, 2.0);
	CHECK(cudaGraphInstantiate(&ea, ga, 0), cudaSuccess);
	CHECK(cudaGraphInstantiate(&eb, gb, 0), cudaSuccess);

	memset(&info, 0, sizeof info);
	/* CGS002: graph B holds memory nodes and exec B lives */
	CHECK(cudaGraphExecUpdate(ea, gb, &info), cudaErrorNotSupported);
	printf("update result=%d (want 0)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateSuccess);
	CHECK(cudaGetLastError(), cudaErrorNotSupported);

	CHECK(cudaGraphExecDestroy(ea), cudaSuccess);
	CHECK(cudaGraphExecDestroy(eb), cudaSuccess);
	CHECK(cudaGraphDestroy(ga), cudaSuccess);
	CHECK(cudaGraphDestroy(gb), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
