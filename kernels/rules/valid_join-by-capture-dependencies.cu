/*
 * kernels/rules/valid_join-by-capture-dependencies.cu -- must stay silent.
 *
 * Joins that no event wait on the origin makes, the way NCCL captures its
 * collectives (its strong streams): a fork that did work is joined by
 * adding the fork's frontier to the origin's capture dependencies
 * (cudaStreamGetCaptureInfo on a helper stream that waited on an event
 * recorded after the fork's work, then cudaStreamUpdateCaptureDependencies
 * on the origin); the helper is destroyed inside the capture (0), and a
 * second fork that captures nothing is never joined. The driver ends the
 * capture with 0 (H200, tests/gpu/fidelity): a stream's capture
 * dependencies that are the origin's ancestors need no join
 * (shim/model/joins.c). The shim's stream model alone took both for
 * unjoined forks (a false CGS008 under NCCL, issue 18).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s, s2, s3, helper;
	cudaEvent_t fork, done;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *a = NULL, *b = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamCreate(&s2), cudaSuccess);
	CHECK(cudaStreamCreate(&s3), cudaSuccess);
	CHECK(cudaStreamCreate(&helper), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess); /* a fork with work */
	LAUNCH_FILL(s2, b, N, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s3, fork, 0), cudaSuccess); /* a fork that captures nothing */
	sc_join_by_dependencies(s, s2, helper, done);	      /* s2 joined without a wait; the helper gone */
	for (int i = 0; i < 3; i++) { /* the join ends up a few nodes deep in the origin's ancestors */
		LAUNCH_ADD(s, a, N, 1.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	EXPECT(g != NULL);

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaEventDestroy(fork), cudaSuccess);
	CHECK(cudaEventDestroy(done), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(s3), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
