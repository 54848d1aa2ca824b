/*
 * kernels/model/relaxed_malloc.cu -- memory ledger of a capture during which
 * a caching allocator grows with plain cudaMalloc in relaxed mode (issue 3).
 *
 * Capture: one graph allocation of 1 MiB (cudaMallocAsync, freed in the
 * graph) and, with the thread switched to relaxed mode, cudaMalloc of
 * 4 MiB + 2 MiB. Expected "capture" record: alloc_nodes 1, alloc_bytes
 * 1 MiB, malloc_bytes 6 MiB, delta = free_before - free_after,
 * unattributed = delta - malloc_bytes. A second capture with no cudaMalloc
 * must have malloc_bytes 0.
 */
#include <stdint.h>
#include "scenario.h"

#define N (1L << 18)

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL, g2 = NULL;
	cudaGraphExec_t e = NULL, e2 = NULL;
	float *tmp = NULL, *seg1 = NULL, *seg2 = NULL;
	enum cudaStreamCaptureMode mode;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&tmp, N * sizeof(float), s), cudaSuccess);
	mode = cudaStreamCaptureModeRelaxed;
	CHECK(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
	CHECK(cudaMalloc((void **)&seg1, 4L << 20), cudaSuccess);
	CHECK(cudaMalloc((void **)&seg2, 2L << 20), cudaSuccess);
	CHECK(cudaThreadExchangeStreamCaptureMode(&mode), cudaSuccess);
	LAUNCH_FILL(s, tmp, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_COPY(s, seg1, tmp, N);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(tmp, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, seg2, N, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g2), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e2, g2, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaGraphLaunch(e2, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e2), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaFree(seg1), cudaSuccess);
	CHECK(cudaFree(seg2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
