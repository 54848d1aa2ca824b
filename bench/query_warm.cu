/*
 * bench/query_warm.cu -- the warm per-call cost of each driver query the
 * shim makes around a captured 64-kernel chain (issue 36): each query
 * 20,000 times in a row, ns per call. A probe run by hand (no bar); the
 * figures of 2026-11-29 are in docs/measurements.md.
 *   nvcc -O2 -arch=sm_90 -Ikernels -Ibench -o query_warm bench/query_warm.cu -lcuda
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include "scenario.h"
#include "bench.h"
#define N 20000
#define T(name, stmt)                                                                                                  \
	do {                                                                                                           \
		double t0 = now_ns();                                                                                  \
		for (int i = 0; i < N; i++) {                                                                          \
			stmt;                                                                                          \
		}                                                                                                      \
		printf("%-34s %8.1f ns\n", name, (now_ns() - t0) / N);                                                 \
	} while (0)
int main(void)
{
	cudaStream_t s;
	float *p;
	CUgraph g;
	CUgraphNode nodes[256];
	CUgraphNode from[512], to[512];
	cudaFree(0);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaMalloc(&p, 4096);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	CUstreamCaptureStatus st;
	cuuint64_t id;
	CUgraph cg;
	const CUgraphNode *deps;
	size_t nd;
	T("cuStreamGetCaptureInfo_v3 (live)", cuStreamGetCaptureInfo_v3((CUstream)s, &st, &id, &cg, &deps, NULL, &nd));
	T("cuStreamGetCaptureInfo_v3 status+id",
	  cuStreamGetCaptureInfo_v3((CUstream)s, &st, &id, NULL, NULL, NULL, NULL));
	T("cuStreamIsCapturing", cuStreamIsCapturing((CUstream)s, &st));
	for (int k = 0; k < 64; k++)
		LAUNCH_ADD(s, p, 1024L, 1.0 + k);
	cudaStreamEndCapture(s, (cudaGraph_t *)&g);
	size_t n = 256, ne = 512;
	T("cuGraphGetNodes count", (n = 0, cuGraphGetNodes(g, NULL, &n)));
	T("cuGraphGetNodes list (room 256)", (n = 256, cuGraphGetNodes(g, nodes, &n)));
	T("cuGraphGetEdges_v2 (room 512)", (ne = 512, cuGraphGetEdges_v2(g, from, to, NULL, &ne)));
	CUDA_KERNEL_NODE_PARAMS kp;
	T("cuGraphKernelNodeGetParams_v2", cuGraphKernelNodeGetParams_v2(nodes[5], &kp));
	CUgraphNodeType t;
	T("cuGraphNodeGetType", cuGraphNodeGetType(nodes[5], &t));
	size_t off, sz;
	T("cuFuncGetParamInfo(func)", cuFuncGetParamInfo(kp.func, 0, &off, &sz));
	const char *nm;
	T("cuFuncGetName(func)", cuFuncGetName(&nm, kp.func));
	T("cuKernelGetName(kern)", cuKernelGetName(&nm, kp.kern));
	unsigned fl;
	T("cuStreamGetFlags", cuStreamGetFlags((CUstream)s, &fl));
	CUcontext c;
	T("cuCtxGetCurrent", cuCtxGetCurrent(&c));
	T("cuStreamGetCtx", cuStreamGetCtx((CUstream)s, &c));
	unsigned long long sid;
	T("cuStreamGetId", cuStreamGetId((CUstream)s, &sid));
	CUlaunchAttributeValue av;
	T("cuGraphKernelNodeGetAttribute(coop)",
	  cuGraphKernelNodeGetAttribute(nodes[5], CU_LAUNCH_ATTRIBUTE_COOPERATIVE, &av));
	printf("nodes %zu edges %zu\n", n, ne);
	return 0;
}
