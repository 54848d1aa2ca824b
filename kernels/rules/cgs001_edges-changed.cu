/*
 * kernels/rules/cgs001_edges-changed.cu -- reproducer for CGS001 when the
 * two graphs differ only in their edges (issue 31).
 *
 * Two captures of the same three kernels a, b, c in the same order: a chain
 * a -> b -> c, and a fork/join a -> {b, c} (c on a second stream, joined
 * back). Same node count, same types, the same number of dependencies on
 * every node (0, 1, 1) and in all (2); only c's dependency differs (b in
 * the chain, a in the fork). Updating the chain's executable from the
 * fork's graph returns 910 cudaErrorGraphExecUpdateFailure with result 2
 * TopologyChanged and leaves the exec launchable; a comparison of counts
 * cannot see it, CGS001 compares the edges: "node 2 (kernel) has 1
 * dependencies in both, but on other nodes".
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s, s2;
	cudaEvent_t fork, join;
	cudaGraph_t chain = NULL, fj = NULL;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *x = NULL, *y = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&y, N * sizeof(float)), cudaSuccess);

	/* a -> b -> c */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, x, N, 1.0);
	LAUNCH_SCALE(s, x, N, 2.0);
	LAUNCH_FILL(s, y, N, 3.0);
	CHECK(cudaStreamEndCapture(s, &chain), cudaSuccess);

	/* a -> {b, c}: c on s2, forked after a and joined back */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, x, N, 1.0);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
	LAUNCH_SCALE(s, x, N, 2.0);
	LAUNCH_FILL(s2, y, N, 3.0);
	CHECK(cudaEventRecord(join, s2), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s, join, 0), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &fj), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, chain, 0), cudaSuccess);
	memset(&info, 0, sizeof info);
	/* CGS001: node 2's dependency moved from b to a */
	CHECK(cudaGraphExecUpdate(e, fj, &info), cudaErrorGraphExecUpdateFailure);
	printf("update result=%d (want 2 TopologyChanged)\n", (int)info.result);
	EXPECT(info.result == cudaGraphExecUpdateErrorTopologyChanged);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	/* a failed update leaves the exec launchable */
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(chain), cudaSuccess);
	CHECK(cudaGraphDestroy(fj), cudaSuccess);
	CHECK(cudaEventDestroy(fork), cudaSuccess);
	CHECK(cudaEventDestroy(join), cudaSuccess);
	CHECK(cudaFree(x), cudaSuccess);
	CHECK(cudaFree(y), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	return SCENARIO_EXIT();
}
