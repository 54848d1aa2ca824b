/*
 * kernels/rules/cgs008_work-after-join.cu -- reproducer for CGS008 past a
 * join the stream model cannot see.
 *
 * A fork (event recorded on the origin, waited on by s2) does work and is
 * joined the way NCCL joins, by adding its frontier (read on a helper
 * stream) to the origin's capture dependencies; then s2 captures more work
 * that nothing joins. Ending the capture fails with 904
 * cudaErrorStreamCaptureUnjoined: s2's last kernel is no ancestor of the
 * origin's dependencies. The stream model suspects s2 (no event chain back
 * to the origin) and the driver's view (shim/model/joins.c) confirms it;
 * valid_join-by-capture-dependencies is the same program without the late
 * work, and stays silent.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s, s2, helper;
	cudaEvent_t fork, done;
	cudaGraph_t g = NULL;
	float *a = NULL, *b = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamCreate(&s2), cudaSuccess);
	CHECK(cudaStreamCreate(&helper), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
	LAUNCH_FILL(s2, b, N, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	sc_join_by_dependencies(s, s2, helper, done);
	/* CGS008: s2 works on after the join, and nothing joins that */
	LAUNCH_ADD(s2, b, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_ADD(s, a, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureUnjoined);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaEventDestroy(fork), cudaSuccess);
	CHECK(cudaEventDestroy(done), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
