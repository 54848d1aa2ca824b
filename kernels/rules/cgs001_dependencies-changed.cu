/*
 * kernels/rules/cgs001_dependencies-changed.cu -- reproducer for CGS001 when
 * only the edges differ.
 *
 * The executable of a chain of three empty nodes (0 -> 1 -> 2) is updated
 * from a fork-join of three (0, 1 -> 2): same node count, same types, node 1
 * has one dependency in the exec and none in the graph. cudaGraphExecUpdate
 * returns 910 cudaErrorGraphExecUpdateFailure with result 2 TopologyChanged
 * and the exec stays launchable. CGS001 gives the reason "node 1 (empty) has
 * 1 dependencies in the exec and 0 in the graph".
 */
#include "scenario.h"

int main(void)
{
	cudaStream_t s;
	cudaGraph_t chain = NULL, fork = NULL;
	cudaGraphNode_t a[3], b[3];
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaGraphCreate(&chain, 0), cudaSuccess);
	CHECK(cudaGraphAddEmptyNode(&a[0], chain, NULL, 0), cudaSuccess);
	CHECK(cudaGraphAddEmptyNode(&a[1], chain, &a[0], 1), cudaSuccess);
	CHECK(cudaGraphAddEmptyNode(&a[2], chain, &a[1], 1), cudaSuccess);
	CHECK(cudaGraphCreate(&fork, 0), cudaSuccess);
	CHECK(cudaGraphAddEmptyNode(&b[0], fork, NULL, 0), cudaSuccess);
	CHECK(cudaGraphAddEmptyNode(&b[1], fork, NULL, 0), cudaSuccess);
	CHECK(cudaGraphAddEmptyNode(&b[2], fork, b, 2), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, chain, 0), cudaSuccess);

	memset(&info, 0, sizeof info);
	/* CGS001: node 1 lost its dependency */
	CHECK(cudaGraphExecUpdate(e, fork, &info), cudaErrorGraphExecUpdateFailure);
	printf("update result=%d (want 2 TopologyChanged)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	/* a failed update leaves the exec launchable */
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(chain), cudaSuccess);
	CHECK(cudaGraphDestroy(fork), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
