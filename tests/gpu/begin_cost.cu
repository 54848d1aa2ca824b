/*
 * tests/gpu/begin_cost.cu -- how long cudaStreamBeginCapture takes, as the
 * application sees it, on the first capture of the process and in steady
 * state (issue 19: the shim's work inside the begin hook widened the window
 * in which another thread's pinned allocation breaks a Global capture).
 * Run bare and under the shim; tests/gpu/issue19.py takes the difference.
 *
 * usage: begin_cost [N]   (N captures, default 21: the first + 20)
 * Prints "first_ns V" and "median_ns V" (median of captures 2..N) and
 * "begin_ns i V" per capture. Each capture records one kernel and ends.
 */
#include <algorithm>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void k(float *p)
{
	p[threadIdx.x] += 1.0f;
}

static long long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 21;
	float *p;
	cudaStream_t s;
	long long *t = (long long *)calloc(n, sizeof *t);
	if (n < 2 || !t || cudaMalloc(&p, 256 * sizeof(float)) ||
	    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) {
		printf("setup failed\n");
		return 1;
	}
	k<<<1, 256, 0, s>>>(p); /* warm-up: module load, launch path */
	cudaStreamSynchronize(s);
	for (int i = 0; i < n; i++) {
		cudaGraph_t g;
		long long t0 = now_ns();
		cudaError_t rc = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
		t[i] = now_ns() - t0;
		if (rc) {
			printf("begin %d failed: %d\n", i, (int)rc);
			return 1;
		}
		k<<<1, 256, 0, s>>>(p);
		if (cudaStreamEndCapture(s, &g)) {
			printf("end %d failed\n", i);
			return 1;
		}
		cudaGraphDestroy(g);
	}
	for (int i = 0; i < n; i++)
		printf("begin_ns %d %lld\n", i, t[i]);
	printf("first_ns %lld\n", t[0]);
	std::sort(t + 1, t + n);
	printf("median_ns %lld\n", t[1 + (n - 1) / 2]);
	return 0;
}
