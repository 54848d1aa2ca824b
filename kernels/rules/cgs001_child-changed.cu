/*
 * kernels/rules/cgs001_child-changed.cu -- reproducer for CGS001 when the
 * two graphs differ only inside a child graph node (issue 31).
 *
 * Two parent graphs of one node each, a child graph node (cloned in by
 * cudaGraphAddChildGraphNode): in the first the child holds one kernel
 * (fill), in the second two (fill -> scale). The parents have the same
 * node count, types and edges; only the child's topology differs. Updating
 * the first parent's executable from the second returns 910
 * cudaErrorGraphExecUpdateFailure (the update is recursive, and a child's
 * topology must match: cuGraphExecChildGraphNodeSetParams' contract) and
 * leaves the exec launchable. CGS001 looks inside the child (its walked
 * summary, model/graphs.c): "node 0 (graph): its child graph differs: node
 * count differs". The result code is the stand-in's (the nested check's,
 * TopologyChanged); the GPU row measures the driver's.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t one = NULL, two = NULL, p1 = NULL, p2 = NULL;
	cudaGraphNode_t n1 = NULL, n2 = NULL;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *x = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);

	/* child one: fill; child two: fill -> scale */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, x, N, 1.0);
	CHECK(cudaStreamEndCapture(s, &one), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, x, N, 1.0);
	LAUNCH_SCALE(s, x, N, 2.0);
	CHECK(cudaStreamEndCapture(s, &two), cudaSuccess);

	CHECK(cudaGraphCreate(&p1, 0), cudaSuccess);
	CHECK(cudaGraphCreate(&p2, 0), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&n1, p1, NULL, 0, one), cudaSuccess);
	CHECK(cudaGraphAddChildGraphNode(&n2, p2, NULL, 0, two), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, p1, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	memset(&info, 0, sizeof info);
	/* CGS001: the child node's graph has one node in the exec, two in p2 */
	CHECK(cudaGraphExecUpdate(e, p2, &info), cudaErrorGraphExecUpdateFailure);
	printf("update result=%d (stand-in: 2 TopologyChanged)\n", (int)info.result);
	EXPECT(info.result != cudaGraphExecUpdateSuccess);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	/* a failed update leaves the exec launchable */
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(p1), cudaSuccess);
	CHECK(cudaGraphDestroy(p2), cudaSuccess);
	CHECK(cudaGraphDestroy(one), cudaSuccess);
	CHECK(cudaGraphDestroy(two), cudaSuccess);
	CHECK(cudaFree(x), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
