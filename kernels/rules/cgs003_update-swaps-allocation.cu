/*
 * kernels/rules/cgs003_update-swaps-allocation.cu -- reproducer for CGS003.
 *
 * An exec holds a captured, unfreed 1 MiB allocation. Updating it from a
 * graph that captured a 2 MiB allocation succeeds (0, result 0): the exec
 * silently adopts the new graph's allocation, address and size; pointers
 * from the first capture are dead after the next launch (cuda-facts §5).
 */
#include "scenario.h"

#define MiB (1L << 20)

static cudaGraph_t capture(cudaStream_t s, long bytes)
{
	cudaGraph_t g = NULL;
	float *buf = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, (size_t)bytes, s), cudaSuccess);
	LAUNCH_FILL(s, buf, 1024, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	cudaGraph_t g1 = capture(s, 1 * MiB);
	CHECK(cudaGraphInstantiate(&e, g1, 0), cudaSuccess);
	cudaGraph_t g2 = capture(s, 2 * MiB);

	memset(&info, 0, sizeof info);
	/* CGS003: accepted, but the exec's 1 MiB allocation becomes g2's 2 MiB one */
	CHECK(cudaGraphExecUpdate(e, g2, &info), cudaSuccess);
	printf("update result=%d (want 0)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateSuccess);

	/* never launched: no allocation is outstanding */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
