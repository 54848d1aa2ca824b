/*
 * kernels/rules/valid_update-child-params.cu -- a correct update through a
 * child graph node: no violation (issue 31, precision).
 *
 * Two parents, each one child graph node holding fill -> scale with the
 * same topology; only the kernels' values and the buffer differ. The
 * update is recursive and takes the child's new parameters (0, Success);
 * the shim walks both children (model/graphs.c) and must predict no
 * refusal. A second update from the same graph is the identical-update
 * path (memo), also silent.
 */
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture_child(cudaStream_t s, float *x, double v)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, x, N, v);
	LAUNCH_SCALE(s, x, N, 2.0 * v);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t one, two, p1 = NULL, p2 = NULL;
	cudaGraphNode_t n1 = NULL, n2 = NULL;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *x = NULL, *y = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&y, N * sizeof(float)), cudaSuccess);
	one = capture_child(s, x, 1.0);
	two = capture_child(s, y, 3.0);
	CHECK(cudaGraphCreate(&p1, 0), cudaSuccess);
	CHECK(cudaGraphCreate(&p2, 0), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&n1, p1, NULL, 0, one), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&n2, p2, NULL, 0, two), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, p1, 0), cudaSuccess);
	for (int i = 0; i < 2; i++) {
		memset(&info, 0, sizeof info);
		CHECK(cudaGraphExecUpdate(e, p2, &info), cudaSuccess);
		EXPECT(info.result == cudaGraphExecUpdateSuccess);
		CHECK(cudaGraphLaunch(e, s), cudaSuccess);
		CHECK(cudaStreamSynchronize(s), cudaSuccess);
	}

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(p1), cudaSuccess);
	CHECK(cudaGraphDestroy(p2), cudaSuccess);
	CHECK(cudaGraphDestroy(one), cudaSuccess);
	CHECK(cudaGraphDestroy(two), cudaSuccess);
	CHECK(cudaFree(x), cudaSuccess);
	CHECK(cudaFree(y), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
