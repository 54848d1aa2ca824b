/*
 * kernels/rules/cgs009_free-foreign-in-capture.cu -- reproducer for CGS009.
 *
 * Graph A allocates a buffer (captured cudaMallocAsync, no free) and is
 * launched once, so the allocation is live. A second capture, graph B,
 * frees that buffer with cudaFreeAsync. The driver accepts it (0): the free
 * becomes a free node of B and ends the allocation's lifetime whenever B is
 * launched (cuda-facts §3 "Lifetime", "Free rules"). Nothing ties B's launches to
 * A's: launching B twice, or A again after B, is the hazard.
 *
 * Not used here: freeing in a capture memory that no graph allocated (plain
 * cudaMallocAsync outside capture). NVIDIA documents a free node of an
 * address not from an alloc node as an error (cuda-facts §4, "Doc, not tested"),
 * and the stand-in returns 1 for it; the shim reports CGS009 in both cases.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t ga = NULL, gb = NULL;
	cudaGraphExec_t ea = NULL, eb = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &ga), cudaSuccess);
	CHECK(cudaGraphInstantiate(&ea, ga, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(ea, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	/* CGS009: frees memory this capture did not allocate */
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &gb), cudaSuccess);

	CHECK(cudaGraphInstantiate(&eb, gb, 0), cudaSuccess);
	/* B is not launched here: launching it would free A's allocation, and
	 * launching it twice would free it twice. Free it directly instead. */
	CHECK(cudaFree(buf), cudaSuccess);

	CHECK(cudaGraphExecDestroy(eb), cudaSuccess);
	CHECK(cudaGraphExecDestroy(ea), cudaSuccess);
	CHECK(cudaGraphDestroy(gb), cudaSuccess);
	CHECK(cudaGraphDestroy(ga), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
