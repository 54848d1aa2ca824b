/*
 * kernels/model/three_pools.cu -- provenance: pool of every captured
 * allocation (issue 3, acceptance 3).
 *
 * Two explicit pools A and B with EQUAL properties, plus the device's
 * default pool. One capture takes cudaMallocFromPoolAsync from A (1 MiB),
 * from B (2 MiB) and cudaMallocAsync from the current pool, which is the
 * default one (3 MiB); kernels use all three and the graph frees them. The
 * graph node parameters carry only pool *properties*, equal for A and B: the
 * shim must attribute each node to the handle the program passed.
 *
 * stdout is deterministic; the pool handles go to stderr as
 *   pool A 0x...   pool B 0x...   pool default 0x...
 * for the test to compare with the shim's "alloc" records.
 */
#include <stdint.h>
#include "scenario.h"

#define NA (1L << 18) /* 1 MiB of floats */
#define NB (2L << 18) /* 2 MiB */
#define ND (3L << 18) /* 3 MiB */

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	cudaMemPool_t pa = NULL, pb = NULL, pd = NULL;
	struct cudaMemPoolProps props;
	float *a = NULL, *b = NULL, *d = NULL, *out = NULL;
	float host[3] = {0, 0, 0};

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	props = sc_pool_props(0, cudaMemHandleTypeNone);
	CHECK(cudaMemPoolCreate(&pa, &props), cudaSuccess);
	CHECK(cudaMemPoolCreate(&pb, &props), cudaSuccess);
	CHECK(cudaDeviceGetDefaultMemPool(&pd, 0), cudaSuccess);
	EXPECT(pa != pb && pa != pd && pb != pd);
	fprintf(stderr, "pool A 0x%llx\npool B 0x%llx\npool default 0x%llx\n", (unsigned long long)(uintptr_t)pa,
		(unsigned long long)(uintptr_t)pb, (unsigned long long)(uintptr_t)pd);
	CHECK(cudaMalloc((void **)&out, 3 * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocFromPoolAsync((void **)&a, NA * sizeof(float), pa, s), cudaSuccess);
	CHECK(cudaMallocFromPoolAsync((void **)&b, NB * sizeof(float), pb, s), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&d, ND * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, a, NA, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_FILL(s, b, NB, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_FILL(s, d, ND, 3.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_COPY(s, out, a, 1);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_COPY(s, out + 1, b, 1);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_COPY(s, out + 2, d, 1);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(a, s), cudaSuccess);
	CHECK(cudaFreeAsync(b, s), cudaSuccess);
	CHECK(cudaFreeAsync(d, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost), cudaSuccess);
	printf("values %.1f %.1f %.1f\n", host[0], host[1], host[2]);
	EXPECT(host[0] == 1.0f && host[1] == 2.0f && host[2] == 3.0f);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(out), cudaSuccess);
	CHECK(cudaMemPoolDestroy(pa), cudaSuccess);
	CHECK(cudaMemPoolDestroy(pb), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
