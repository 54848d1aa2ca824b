/*
 * bench/launch_bench.cu -- a tight cudaGraphLaunch loop of a one-kernel
 * graph. Prints "ns_per_launch <value>" for one run of ITER launches (after
 * a warm-up). Kept because tests/gpu/run builds it; the launch bar is
 * measured by bench/run.py (case launch, bench/workload.cu).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <cuda_runtime.h>

__global__ void k_nop(int *p)
{
	if (threadIdx.x == 0 && p)
		p[0] += 1;
}

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 20000;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t e;
	int *d;
	cudaMalloc(&d, sizeof(int));
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	k_nop<<<1, 32, 0, s>>>(d);
	cudaStreamEndCapture(s, &g);
	if (cudaGraphInstantiate(&e, g, 0) != cudaSuccess) {
		printf("instantiate failed\n");
		return 1;
	}
	for (int i = 0; i < 2000; i++)
		cudaGraphLaunch(e, s);
	cudaStreamSynchronize(s);
	double t0 = now_ns();
	for (int i = 0; i < iters; i++)
		cudaGraphLaunch(e, s);
	cudaStreamSynchronize(s);
	double t1 = now_ns();
	printf("ns_per_launch %.1f\n", (t1 - t0) / iters);
	return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
