/*
 * bench/query_cost.cu -- what the driver queries the shim makes in a
 * capture cycle cost on the real driver, paired in one process (issue 17
 * point 4): the harness's capture-64 cycle (begin, cudaMallocAsync, 62
 * kernels, cudaFreeAsync, end, instantiate AutoFreeOnLaunch, destroy both)
 * bare, alternating per iteration with the same cycle plus a set of the
 * shim's own queries at the points where the shim makes them:
 *   flags   cuStreamGetFlags before the begin (CGS014's blocking test)
 *   info    cuStreamGetCaptureInfo_v3: 2 after the begin, 1 after the
 *           alloc, 1 before the free (the capture map)
 *   count   cuGraphGetNodes(NULL) after the end (the node count)
 *   types   cuGraphGetNodes + 64 cuGraphNodeGetType after the instantiate
 *           (the copy check)
 *   all     every one of them
 * Prints per variant the median cycle (ns), the median of the per-pair
 * differences variant - bare (ns) and the ratio of medians.
 *   nvcc -O2 -arch=sm_90 -Ikernels -Ibench -o query_cost bench/query_cost.cu -lcuda
 * usage: query_cost [PAIRS (default 2000)]
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "scenario.h"
#include "bench.h"

enum { Q_FLAGS = 1, Q_INFO = 2, Q_COUNT = 4, Q_TYPES = 8 };

static void info(CUstream s)
{
	CUstreamCaptureStatus st;
	cuuint64_t id;
	CUgraph g;
	cuStreamGetCaptureInfo_v3(s, &st, &id, &g, NULL, NULL, NULL);
}

static double cycle(cudaStream_t s, int q)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *p = NULL;
	double t0 = now_ns();
	if (q & Q_FLAGS) {
		unsigned fl;
		cuStreamGetFlags((CUstream)s, &fl);
	}
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	if (q & Q_INFO)
		info((CUstream)s), info((CUstream)s);
	cudaMallocAsync((void **)&p, 1024 * sizeof(float), s);
	if (q & Q_INFO)
		info((CUstream)s);
	for (int k = 0; k < 62; k++)
		LAUNCH_ADD(s, p, 1024L, 1.0);
	if (q & Q_INFO)
		info((CUstream)s);
	cudaFreeAsync(p, s);
	cudaStreamEndCapture(s, &g);
	if (q & Q_COUNT) {
		size_t n = 0;
		cuGraphGetNodes((CUgraph)g, NULL, &n);
	}
	cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch);
	if (q & Q_TYPES) {
		CUgraphNode nodes[256];
		size_t n = 256;
		cuGraphGetNodes((CUgraph)g, nodes, &n);
		for (size_t i = 0; i < n; i++) {
			CUgraphNodeType t;
			cuGraphNodeGetType(nodes[i], &t);
		}
	}
	cudaGraphExecDestroy(e);
	cudaGraphDestroy(g);
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	int pairs = argc > 1 ? atoi(argv[1]) : 2000;
	const char *names[] = {"flags", "info", "count", "types", "all"};
	int qs[] = {Q_FLAGS, Q_INFO, Q_COUNT, Q_TYPES, Q_FLAGS | Q_INFO | Q_COUNT | Q_TYPES};
	int nv = 5;
	cudaStream_t s;
	if (cudaFree(0) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
		return 2;
	double *bare = (double *)malloc(sizeof(double) * pairs * nv),
	       *with = (double *)malloc(sizeof(double) * pairs * nv);
	double *d = (double *)malloc(sizeof(double) * pairs);
	for (int r = 0; r < 50; r++)
		cycle(s, r & 1 ? 15 : 0);
	for (int r = 0; r < pairs; r++)
		for (int v = 0; v < nv; v++) { /* the pair's order alternates */
			if (r & 1) {
				with[v * pairs + r] = cycle(s, qs[v]);
				bare[v * pairs + r] = cycle(s, 0);
			} else {
				bare[v * pairs + r] = cycle(s, 0);
				with[v * pairs + r] = cycle(s, qs[v]);
			}
		}
	for (int v = 0; v < nv; v++) {
		double *b = bare + v * pairs, *w = with + v * pairs;
		for (int r = 0; r < pairs; r++)
			d[r] = w[r] - b[r];
		double md = median(d, pairs), mb = median(b, pairs), mw = median(w, pairs);
		printf("%-6s bare %9.0f with %9.0f diff %7.0f ns ratio %.4f\n", names[v], mb, mw, md, mw / mb);
	}
	return 0;
}
