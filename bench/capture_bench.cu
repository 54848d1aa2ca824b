/*
 * bench/capture_bench.cu -- capture + instantiate + destroy of a 64-node
 * graph with a memory node: 62 kernels between one cudaMallocAsync and its
 * cudaFreeAsync (alloc node + 62 kernel nodes + free node = 64 nodes).
 *
 *   nvcc -O2 -arch=sm_90 -Ikernels -o capture_bench bench/capture_bench.cu
 * (also builds as C against the stand-in: gcc -x c -Ikernels -Itests/standin ...)
 * Usage: capture_bench [REPS]   (default 300)
 * Prints "capture_instantiate_ns <median ns per rep> nodes <n>"; bench/capture_ab.py
 * runs it bare and under the shim.
 */
#include <stdlib.h>
#include <time.h>

#include "scenario.h"
#include "baton.h"

#define KERNELS 62
#define N 1024L

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 300;
	long long *t = (long long *)calloc((size_t)reps, sizeof *t);
	cudaStream_t s;
	size_t nodes = 0;
	int lock;
	if (cudaFree(0) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
		return 2;
	lock = baton_init(); /* lockstep mode: "iter R NS" per rep, a turn each */
	for (int r = -20; r < reps; r++) { /* 20 warm-up reps */
		cudaGraph_t g = NULL;
		cudaGraphExec_t e = NULL;
		float *p = NULL;
		long long t0 = now_ns();
		if (cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal) != cudaSuccess)
			return 3;
		if (cudaMallocAsync((void **)&p, N * sizeof(float), s) != cudaSuccess)
			return 4;
		for (int k = 0; k < KERNELS; k++)
			LAUNCH_ADD(s, p, N, 1.0);
		if (cudaFreeAsync(p, s) != cudaSuccess)
			return 5;
		if (cudaStreamEndCapture(s, &g) != cudaSuccess)
			return 6;
		if (cudaGraphInstantiate(&e, g, 0) != cudaSuccess)
			return 7;
		if (r == 0)
			cudaGraphGetNodes(g, NULL, &nodes);
		cudaGraphExecDestroy(e);
		cudaGraphDestroy(g);
		if (r >= 0)
			t[r] = now_ns() - t0;
		if (lock) {
			if (r >= 0)
				printf("iter %d %lld\n", r, t[r]);
			baton_turn();
		}
	}
	if (lock)
		baton_pass();
	if (cudaStreamSynchronize(s) != cudaSuccess)
		return 8;
	qsort(t, (size_t)reps, sizeof *t, cmp_ll);
	printf("capture_instantiate_ns %lld nodes %zu\n", t[reps / 2], nodes);
	return 0;
}
