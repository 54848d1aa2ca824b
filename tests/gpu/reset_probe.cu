// tests/gpu/reset_probe.cu -- a program that resets the device with graphs, executables,
// a pool and an outstanding graph allocation live, then (mode "again") goes on
// with new captures, instantiations and a new pool (tests/gpu/reset).
// usage: reset_probe exit|again
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <string.h>
__global__ void k(float *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += 1.f;
}
static cudaGraphExec_t cycle(cudaStream_t s, cudaGraph_t *pg, int free_in_graph, cudaMemPool_t pool)
{
	float *p = NULL;
	cudaGraph_t g;
	cudaGraphExec_t x;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	if (pool)
		cudaMallocFromPoolAsync((void **)&p, 1 << 20, pool, s);
	else
		cudaMallocAsync((void **)&p, 1 << 20, s);
	k<<<1, 256, 0, s>>>(p, 256);
	if (free_in_graph)
		cudaFreeAsync(p, s);
	printf("end %d\n", (int)cudaStreamEndCapture(s, &g));
	printf("inst %d\n", (int)cudaGraphInstantiate(&x, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
	printf("launch %d\n", (int)cudaGraphLaunch(x, s));
	printf("sync %d\n", (int)cudaStreamSynchronize(s));
	*pg = g;
	return x;
}
int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	cudaStream_t s;
	cudaGraph_t g1, g2;
	cudaGraphExec_t x1, x2;
	cudaMemPool_t pool, def0, def1;
	cudaMemPoolProps pp;
	memset(&pp, 0, sizeof pp);
	pp.allocType = cudaMemAllocationTypePinned;
	pp.location.type = cudaMemLocationTypeDevice;
	pp.location.id = 0;
	cudaSetDevice(0);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	printf("poolcreate %d\n", (int)cudaMemPoolCreate(&pool, &pp));
	cudaDeviceGetDefaultMemPool(&def0, 0);
	x1 = cycle(s, &g1, 0, NULL); /* leaves an allocation outstanding */
	x2 = cycle(s, &g2, 1, pool);
	printf("reset %d\n", (int)cudaDeviceReset());
	if (!strcmp(mode, "again")) {
		cudaStream_t s2;
		cudaGraph_t g3;
		cudaGraphExec_t x3;
		cudaDeviceGetDefaultMemPool(&def1, 0);
		printf("default pool same handle %d\n", def0 == def1);
		cudaMemPool_t p2;
		printf("poolcreate2 %d same %d\n", (int)cudaMemPoolCreate(&p2, &pp), p2 == pool);
		cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
		for (int i = 0; i < 3; i++) {
			x3 = cycle(s2, &g3, 1, i == 2 ? p2 : NULL);
			printf("x3 %d same x1 %d x2 %d g3 same g1 %d\n", i, x3 == x1, x3 == x2, g3 == g1);
			cudaGraphExecDestroy(x3);
			cudaGraphDestroy(g3);
		}
		x3 = cycle(s2, &g3, 0, NULL); /* outstanding again, then exec destroy: CGS011 is true here */
		printf("exec destroy %d\n", (int)cudaGraphExecDestroy(x3));
		cudaGraphDestroy(g3);
		cudaMemPoolDestroy(p2);
		cudaStreamDestroy(s2);
	}
	printf("done\n");
	return 0;
}
