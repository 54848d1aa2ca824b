/*
 * bench/node_memory.c -- heap bytes per tracked graph node, measured.
 *
 * Builds G graphs by stream capture, keeps every graph and its exec alive,
 * and prints the heap growth (glibc mallinfo2().uordblks, which counts the
 * shim's malloc/calloc/realloc since the shim allocates from the same heap)
 * per captured node, for three node kinds:
 *   kernel   G graphs of M kernel nodes
 *   alloc    G graphs of M cudaMallocAsync nodes (alloc only)
 *   allocfree G graphs of M cudaMallocAsync + M cudaFreeAsync nodes
 * Output, one line per kind:  "<kind> nodes=<n> bytes=<delta> per_node=<x>"
 * Run it bare and under LD_PRELOAD=libcgshim.so (CGSHIM_LOG=info): the
 * shim's cost per node is shim.per_node - bare.per_node (the bare figure is
 * the runtime's own: the stand-in's, or the real driver's heap use).
 * tests/model/run_model.py --node-memory does that and checks the bar
 * (<= 256 bytes per tracked node).
 *
 * Builds both ways: gcc against the stand-in (tests/model/meson.build) or
 *   nvcc -O2 -arch=sm_90 -Ikernels -x cu -o node_memory bench/node_memory.c
 * Usage: node_memory [G] [M]   (defaults 64 64)
 */
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

#include "scenario.h"

static size_t heap(void)
{
	struct mallinfo2 mi = mallinfo2();
	return mi.uordblks + mi.hblkhd;
}

static int build(const char *kind, int G, int M, cudaStream_t s, float *buf, cudaGraph_t *gs, cudaGraphExec_t *es)
{
	size_t before, after;
	long nodes = 0;
	void **ptrs = (void **)calloc((size_t)M, sizeof *ptrs);
	int alloc = strcmp(kind, "kernel") != 0, frees = strcmp(kind, "allocfree") == 0;
	before = heap();
	for (int g = 0; g < G; g++) {
		if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
			return 1;
		for (int i = 0; i < M; i++) {
			if (alloc) {
				if (cudaMallocAsync(&ptrs[i], 256, s) != cudaSuccess)
					return 1;
			} else {
				LAUNCH_ADD(s, buf, 1, 1.0);
			}
			nodes++;
		}
		if (frees)
			for (int i = 0; i < M; i++) {
				if (cudaFreeAsync(ptrs[i], s) != cudaSuccess)
					return 1;
				nodes++;
			}
		if (cudaStreamEndCapture(s, &gs[g]) != cudaSuccess)
			return 1;
		if (cudaGraphInstantiate(&es[g], gs[g], 0) != cudaSuccess)
			return 1;
	}
	after = heap();
	printf("%s nodes=%ld bytes=%ld per_node=%.1f\n", kind, nodes, (long)(after - before),
	       (double)(long)(after - before) / (double)nodes);
	fflush(stdout);
	free(ptrs);
	return 0;
}

int main(int argc, char **argv)
{
	int G = argc > 1 ? atoi(argv[1]) : 64, M = argc > 2 ? atoi(argv[2]) : 64;
	const char *kinds[] = {"kernel", "alloc", "allocfree"};
	cudaStream_t s;
	float *buf = NULL;
	cudaGraph_t *gs = (cudaGraph_t *)calloc((size_t)G * 3, sizeof *gs);
	cudaGraphExec_t *es = (cudaGraphExec_t *)calloc((size_t)G * 3, sizeof *es);

	if (cudaFree(0) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess ||
	    cudaMalloc((void **)&buf, 256 * sizeof(float)) != cudaSuccess)
		return 2;
	/* warm-up capture: first-use allocations of the runtime and the shim */
	if (build("warmup", 1, M, s, buf, gs, es))
		return 3;
	for (int k = 0; k < 3; k++)
		if (build(kinds[k], G, M, s, buf, gs + (size_t)k * G, es + (size_t)k * G))
			return 4;
	/* everything stays alive until exit: the shim still tracks it */
	return 0;
}
