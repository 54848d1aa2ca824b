/*
 * kernels/model/deferred_refs.cu -- executables whose references (the
 * allocation ledger, issue 15) are worked out at the first free instead of
 * at the instantiation (issue 17: the node walk was most of the shim's cost
 * of a capture/instantiate/destroy loop):
 *
 *  D  five cycles of capture (a kernel on buf), instantiate, exec destroy,
 *     graph destroy: no graph is ever walked.
 *  E  a capture of a kernel on tmp (cudaMalloc'd), instantiated, its graph
 *     kept; an unrelated buffer freed: that free works out E's references
 *     (the one walk of the run), no violation; then tmp freed: CGS018 at
 *     that free, naming the kernel. The exec is destroyed unlaunched.
 *
 * The summary record's walks is 1 (6 when every instantiation walked).
 */
#include "scenario.h"

#define N 1024L

static cudaGraph_t capture(cudaStream_t s, float *buf)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaStream_t s;
	float *buf = NULL, *tmp = NULL, *other = NULL;
	cudaGraph_t g;
	cudaGraphExec_t e;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&tmp, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&other, N * sizeof(float)), cudaSuccess);

	/* D */
	for (int i = 0; i < 5; i++) {
		g = capture(s, buf);
		CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
		CHECK(cudaGraphExecDestroy(e), cudaSuccess);
		CHECK(cudaGraphDestroy(g), cudaSuccess);
	}
	/* E */
	g = capture(s, tmp);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaFree(other), cudaSuccess); /* works out e's references */
	CHECK(cudaFree(tmp), cudaSuccess);   /* CGS018: e points into tmp */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
