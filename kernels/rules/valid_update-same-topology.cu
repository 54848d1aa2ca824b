/*
 * kernels/rules/valid_update-same-topology.cu -- must stay silent.
 *
 * The exec of a one-kernel graph is updated from a graph with the same
 * single kernel node but a different grid: 0, result 0 (cuda-facts §5 table).
 */
#include "scenario.h"

#define N 4096L

static cudaGraph_t capture(cudaStream_t s, float *buf, long n)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, n, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	cudaGraph_t g1 = capture(s, buf, N / 4); /* 4 blocks */
	CHECK(cudaGraphInstantiate(&e, g1, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	cudaGraph_t g2 = capture(s, buf, N); /* 16 blocks */
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess);
	printf("update result=%d (want 0)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
