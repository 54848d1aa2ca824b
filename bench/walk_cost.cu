/*
 * bench/walk_cost.cu -- what the shim's graph walk costs on the real driver:
 * a 64-node captured graph (alloc + 62 kernels + free), timed: the whole
 * capture + instantiate + destroy, cuGraphGetNodes, 64 cuGraphNodeGetType,
 * cuGraphGetEdges (count + fill), the memory-node parameter queries, and the
 * node-detail queries (62 kernel-node parameter reads, cooperative attribute
 * reads, function-name reads on top of the parameter reads).
 *   nvcc -O2 -arch=sm_90 -Ikernels -o walk_cost bench/walk_cost.cu -lcuda
 * Prints medians in ns over REPS (default 300).
 */
#include <cuda.h>
#include <stdlib.h>
#include <time.h>

#include "scenario.h"

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

#define NT 9
int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 300;
	long long *t[NT];
	const char *names[NT] = {"cycle", "get_nodes", "node_types_x64", "get_edges", "mem_params", "end_capture", "kernel_params_x62", "coop_attr_x62", "func_name_x62"};
	cudaStream_t s;
	for (int i = 0; i < NT; i++)
		t[i] = (long long *)calloc((size_t)reps, sizeof(long long));
	if (cudaFree(0) != cudaSuccess || cudaStreamCreate(&s) != cudaSuccess)
		return 2;
	for (int r = -20; r < reps; r++) {
		cudaGraph_t g = NULL;
		cudaGraphExec_t e = NULL;
		float *p = NULL;
		CUgraphNode nodes[128], from[256], to[256];
		size_t n = 128, ne = 0;
		long long t0 = now_ns(), a, b;
		cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
		cudaMallocAsync((void **)&p, 1024 * sizeof(float), s);
		for (int k = 0; k < 62; k++)
			LAUNCH_ADD(s, p, 1024L, 1.0);
		cudaFreeAsync(p, s);
		a = now_ns();
		cudaStreamEndCapture(s, &g);
		b = now_ns();
		if (r >= 0)
			t[5][r] = b - a;
		a = now_ns();
		cuGraphGetNodes((CUgraph)g, nodes, &n);
		b = now_ns();
		if (r >= 0)
			t[1][r] = b - a;
		CUgraphNodeType ty[128];
		a = now_ns();
		for (size_t i = 0; i < n; i++)
			cuGraphNodeGetType(nodes[i], &ty[i]);
		b = now_ns();
		if (r >= 0)
			t[2][r] = b - a;
		a = now_ns();
		cuGraphGetEdges((CUgraph)g, NULL, NULL, NULL, &ne);
		if (ne > 256)
			ne = 256;
		cuGraphGetEdges((CUgraph)g, from, to, NULL, &ne);
		b = now_ns();
		if (r >= 0)
			t[3][r] = b - a;
		a = now_ns();
		for (size_t i = 0; i < n; i++) {
			if (ty[i] == CU_GRAPH_NODE_TYPE_MEM_ALLOC) {
				CUDA_MEM_ALLOC_NODE_PARAMS mp;
				cuGraphMemAllocNodeGetParams(nodes[i], &mp);
			} else if (ty[i] == CU_GRAPH_NODE_TYPE_MEM_FREE) {
				CUdeviceptr d;
				cuGraphMemFreeNodeGetParams(nodes[i], &d);
			}
		}
		b = now_ns();
		if (r >= 0)
			t[4][r] = b - a;
		a = now_ns();
		for (size_t i = 0; i < n; i++)
			if (ty[i] == CU_GRAPH_NODE_TYPE_KERNEL) {
				CUDA_KERNEL_NODE_PARAMS kp;
				cuGraphKernelNodeGetParams(nodes[i], &kp);
			}
		b = now_ns();
		if (r >= 0)
			t[6][r] = b - a;
		a = now_ns();
		for (size_t i = 0; i < n; i++)
			if (ty[i] == CU_GRAPH_NODE_TYPE_KERNEL) {
				CUlaunchAttributeValue v;
				cuGraphKernelNodeGetAttribute(nodes[i], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &v);
			}
		b = now_ns();
		if (r >= 0)
			t[7][r] = b - a;
		a = now_ns();
		for (size_t i = 0; i < n; i++)
			if (ty[i] == CU_GRAPH_NODE_TYPE_KERNEL) {
				CUDA_KERNEL_NODE_PARAMS kp;
				const char *nm;
				cuGraphKernelNodeGetParams(nodes[i], &kp);
				cuFuncGetName(&nm, kp.func);
			}
		b = now_ns();
		if (r >= 0)
			t[8][r] = b - a - t[6][r > 0 ? r : 0];
		cudaGraphInstantiate(&e, g, 0);
		cudaGraphExecDestroy(e);
		cudaGraphDestroy(g);
		if (r >= 0)
			t[0][r] = now_ns() - t0;
	}
	for (int i = 0; i < NT; i++) {
		qsort(t[i], (size_t)reps, sizeof(long long), cmp_ll);
		printf("%s %lld\n", names[i], t[i][reps / 2]);
	}
	return 0;
}
