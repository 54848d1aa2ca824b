/*
 * tests/rules/fold_updates.c -- repeats folded and the print limit (issue
 * 31), on the CPU stand-in: N failing updates (CGS001, 910 TopologyChanged:
 * the exec has one kernel node, the graph two).
 *
 *   fold_updates same N   N updates of one exec from one call site: one
 *                         record, folded repeats counted
 *   fold_updates many N   N execs, each updated once from one call site:
 *                         N keys, stderr stops at CGSHIM_PRINT_LIMIT
 *   fold_updates reuse N  N execs, each updated once and destroyed before
 *                         the next: the allocator gives a destroyed exec's
 *                         handle again, and each is still its own object
 *
 * Prints "failed N" (the 910s it got) and, for reuse, "handles K" (the
 * distinct exec handles); exit 0 when every update failed so.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

#define NELEM 256L

static cudaGraph_t capture(cudaStream_t s, float *buf, int kernels)
{
	cudaGraph_t g = NULL;
	if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
		return NULL;
	LAUNCH_FILL(s, buf, NELEM, 1.0);
	if (kernels > 1)
		LAUNCH_ADD(s, buf, NELEM, 2.0);
	if (cudaStreamEndCapture(s, &g) != cudaSuccess)
		return NULL;
	return g;
}

/* The one call site of every update. */
static __attribute__((noinline)) int update_once(cudaGraphExec_t e, cudaGraph_t g)
{
	cudaGraphExecUpdateResultInfo info;
	memset(&info, 0, sizeof info);
	return cudaGraphExecUpdate(e, g, &info) == cudaErrorGraphExecUpdateFailure &&
	       info.result == cudaGraphExecUpdateErrorTopologyChanged;
}

int main(int argc, char **argv)
{
	int many = argc > 1 && !strcmp(argv[1], "many"), n = argc > 2 ? atoi(argv[2]) : 1000, failed = 0;
	int reuse = argc > 1 && !strcmp(argv[1], "reuse"), handles = 0;
	cudaStream_t s;
	float *buf = NULL;
	cudaGraphExec_t e = NULL, *all = calloc((size_t)n + 1, sizeof *all);

	if (cudaFree(0) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
	    cudaMalloc((void **)&buf, NELEM * sizeof(float)) != cudaSuccess)
		return 2;
	cudaGraph_t g1 = capture(s, buf, 1), g2 = capture(s, buf, 2);
	if (!g1 || !g2)
		return 2;
	/* same: one exec, made before the loop, so that the loop's condition
	 * is invariant (an optimiser that peels a first-iteration branch
	 * gives the first update another call site) */
	if (!many && !reuse) {
		if (cudaGraphInstantiate(&e, g1, 0) != cudaSuccess)
			return 2;
		all[0] = e;
	}
	for (int i = 0; i < n; i++) {
		/* many: every exec stays alive to the end, so no two share a handle */
		if (many || reuse) {
			if (cudaGraphInstantiate(&e, g1, 0) != cudaSuccess)
				return 2;
			all[i] = e;
		}
		failed += update_once(e, g2);
		(void)cudaGetLastError();
		if (reuse) { /* count the new handles, then destroy this exec */
			int seen = 0;
			for (int j = 0; j < i && !seen; j++)
				seen = all[j] == e;
			handles += !seen;
			cudaGraphExecDestroy(e);
		}
	}
	if (reuse) {
		memset(all, 0, (size_t)n * sizeof *all);
		printf("handles %d\n", handles);
	}
	for (int i = 0; i < n; i++)
		if (all[i])
			cudaGraphExecDestroy(all[i]);
	free(all);
	cudaGraphDestroy(g1);
	cudaGraphDestroy(g2);
	cudaFree(buf);
	cudaStreamDestroy(s);
	printf("failed %d\n", failed);
	return failed == n ? 0 : 1;
}
