/*
 * kernels/rules/cgs009_free-foreign-in-capture.cu -- reproducer for CGS009.
 *
 * Memory from cudaMallocAsync made outside any capture is freed with
 * cudaFreeAsync inside a capture. The driver accepts it (0): the free
 * becomes a free node of the graph and runs at every launch (facts §3
 * "Lifetime", "Free rules"). A second launch would free it again.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess); /* not captured */
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	/* CGS009: frees memory this capture did not allocate */
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	/* one launch: the free node releases the buffer, exactly once */
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
