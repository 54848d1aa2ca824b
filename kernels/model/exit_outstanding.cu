/*
 * kernels/model/exit_outstanding.cu -- lifetime ledger at exit (issue 3):
 * an alloc-only graph (1 MiB) is launched and the process exits with the
 * exec alive and the allocation outstanding. Expected: a "leak" record with
 * when "exit" and the allocation site; the summary counts one leak; "pool"
 * records at exit.
 */
#include <stdint.h>
#include "scenario.h"

#define N (1L << 18)

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	/* exit with e alive and buf outstanding */
	return SCENARIO_EXIT();
}
