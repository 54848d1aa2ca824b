/*
 * kernels/rules/cgs001_update-will-fail.cu -- reproducer for CGS001.
 *
 * The executable of a one-kernel graph is updated from a graph with one
 * extra kernel node: cudaGraphExecUpdate returns 910
 * cudaErrorGraphExecUpdateFailure with result 2 TopologyChanged, and the
 * exec stays unchanged and launchable (cuda-facts §4, §5 table last row).
 */
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture(cudaStream_t s, float *buf, int kernels)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	if (kernels > 1) {
		LAUNCH_ADD(s, buf, N, 2.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
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

	cudaGraph_t g1 = capture(s, buf, 1);
	CHECK(cudaGraphInstantiate(&e, g1, 0), cudaSuccess);
	cudaGraph_t g2 = capture(s, buf, 2);

	memset(&info, 0, sizeof info);
	/* CGS001: one more node than the exec */
	CHECK(cudaGraphExecUpdate(e, g2, &info), cudaErrorGraphExecUpdateFailure);
	printf("update result=%d (want 2 TopologyChanged)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	/* a failed update leaves the exec launchable */
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
