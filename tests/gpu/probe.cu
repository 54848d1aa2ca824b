/*
 * tests/gpu/probe.cu -- measurements the shim's design depends on:
 * the cost of the queries the shim makes (cuMemGetInfo, capture info,
 * node types, backtrace, dladdr) and what capture queries answer after a
 * capture was invalidated. Prints "name value" lines.
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <time.h>

__global__ void k(float *p)
{
	p[threadIdx.x] += 1.0f;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define TIME(name, reps, stmt)                                                                                         \
	do {                                                                                                           \
		double t0 = now_ns();                                                                                  \
		for (int i_ = 0; i_ < reps; i_++) {                                                                    \
			stmt;                                                                                          \
		}                                                                                                      \
		printf("%-32s %.0f ns\n", name, (now_ns() - t0) / reps);                                               \
	} while (0)

int main(void)
{
	float *d;
	cudaStream_t s;
	cudaGraph_t g;
	size_t fr, tot, n = 64;
	CUgraphNode nodes[64];
	CUgraphNodeType t;
	CUstreamCaptureStatus st;
	cuuint64_t id;
	void *pcs[32];
	Dl_info di;
	cudaMalloc(&d, 1024);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	for (int i = 0; i < 64; i++)
		k<<<1, 32, 0, s>>>(d);
	cudaStreamEndCapture(s, &g);
	struct timespec tsp;
	TIME("clock_gettime(MONOTONIC)", 100000, clock_gettime(CLOCK_MONOTONIC, &tsp));
	TIME("clock_gettime(MONOTONIC_COARSE)", 100000, clock_gettime(CLOCK_MONOTONIC_COARSE, &tsp));
	TIME("cuMemGetInfo", 1000, cuMemGetInfo(&fr, &tot));
	TIME("cuStreamGetCaptureInfo(idle)", 1000,
	     cuStreamGetCaptureInfo((CUstream)s, &st, &id, NULL, NULL, NULL, NULL));
	TIME("cuGraphGetNodes(64)", 1000, cuGraphGetNodes((CUgraph)g, nodes, &n));
	TIME("cuGraphNodeGetType", 1000, cuGraphNodeGetType(nodes[5], &t));
	TIME("backtrace(32)", 1000, backtrace(pcs, 32));
	TIME("dladdr", 1000, dladdr((void *)&main, &di));
	cuuint64_t v;
	TIME("cuDeviceGetGraphMemAttribute", 1000,
	     cuDeviceGetGraphMemAttribute(0, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT, &v));

	/* after invalidation */
	void *p;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	printf("malloc in capture rc %d\n", (int)cudaMalloc(&p, 16));
	CUresult rc = cuStreamGetCaptureInfo((CUstream)s, &st, &id, NULL, NULL, NULL, NULL);
	printf("invalidated: cuStreamGetCaptureInfo_v3 rc %d status %d\n", (int)rc, (int)st);
	rc = cuStreamIsCapturing((CUstream)s, &st);
	printf("invalidated: cuStreamIsCapturing rc %d status %d\n", (int)rc, (int)st);
	cudaGraph_t g2;
	printf("invalidated: end capture rc %d\n", (int)cudaStreamEndCapture(s, &g2));
	cudaGetLastError();
	return 0;
}
