/*
 * kernels/model/destroy_outstanding.cu -- lifetime ledger (issue 3,
 * acceptance 4): an alloc-only graph (2 MiB from the default pool, no free
 * node) is launched once and its exec destroyed with the allocation still
 * outstanding. Expected: a "leak" record (when exec_destroy) with the
 * allocation site (this file's make_graph), and a CGS011 violation with
 * "alloc_site". The allocation is then freed outside the graph, so nothing
 * is outstanding at exit.
 */
#include <stdint.h>
#include "scenario.h"

#define N (1L << 19) /* 2 MiB of floats */

static __attribute__((noinline)) float *make_graph(cudaStream_t s, cudaGraph_t *g)
{
	float *buf = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, g), cudaSuccess);
	return buf;
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	buf = make_graph(s, &g);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess); /* allocation outstanding */
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
