/*
 * kernels/model/condensed.cu -- the records of a steady capture cycle left
 * to debug level (issue 17: at info, a loop of identical captures wrote
 * nine records a cycle, most of the shim's cost of the loop):
 *
 *  A  70 cycles, all from one begin site: capture (cudaMallocAsync of 4 KiB,
 *     a kernel on it, cudaFreeAsync), instantiate with AutoFreeOnLaunch,
 *     exec destroy, graph destroy. Once the site is steady (its last two
 *     cycles the same shape, nothing unattributed, as many executables
 *     alive), a cycle takes no memory sample and, having seen nothing go
 *     wrong, writes none of its lifecycle records below debug: they are
 *     counted (records_condensed), nine per cycle. Every 64th steady
 *     capture is sampled and written in full.
 *  B  one more cycle from the same site that also frees, inside the
 *     capture, the allocation of graph G (captured before the loop,
 *     launched once, kept alive): CGS009, as in the rule's reproducer. A
 *     steady capture at its begin, but not a repeat from the violation on:
 *     its begin, capture, end, instantiate and destroy records are
 *     written; the three it made before the violation (its alloc record
 *     and call, its first free) stay condensed.
 *  C  two more plain cycles: the site is judged again (B's shape differed).
 *
 * On the stand-in: captures 1-4 (the first's begin site waits for its
 * walk and is not judged), 68 (the recheck), 71 (B), 72 and 73 of the loop
 * are written; the other 65 cycles are condensed (585 records, and B's 3).
 */
#include "scenario.h"

#define N 1024L

static void cycle(cudaStream_t s, float *foreign)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *p = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&p, N * sizeof(float), s), cudaSuccess);
	LAUNCH_ADD(s, p, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(p, s), cudaSuccess);
	if (foreign)
		CHECK(cudaFreeAsync(foreign, s), cudaSuccess); /* CGS009 */
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiateWithFlags(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *foreign = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	/* G: a graph allocation, live after one launch */
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&foreign, N * sizeof(float), s), cudaSuccess);
	LAUNCH_ADD(s, foreign, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	/* One call site for A, B and C: a site is the whole backtrace. */
	for (int i = 0; i < 73; i++)
		cycle(s, i == 70 ? foreign : NULL); /* A, B, C */
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaFree(foreign), cudaSuccess); /* B was never launched */
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
