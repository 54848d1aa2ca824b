/*
 * bench/update_bench.cu -- cost of cudaGraphExecUpdate (the issue-4 bar:
 * update including the shim's prediction <= 1.25x a bare update).
 * A chain of N kernel nodes is captured and instantiated; then, R times,
 * a graph of the same topology (other arguments) is captured and the exec
 * updated from it. Prints the median update time and the median
 * capture(+end) time, in microseconds. Usage: update_bench N R
 */
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <vector>
#include <cuda_runtime.h>

#include "baton.h"

__global__ void k_axpy(float *p, float a)
{
	p[threadIdx.x] = p[threadIdx.x] * a + 1.0f;
}

static double now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static cudaGraph_t capture(cudaStream_t s, float *d, int n, float a)
{
	cudaGraph_t g;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
	for (int i = 0; i < n; i++)
		k_axpy<<<1, 32, 0, s>>>(d, a);
	cudaStreamEndCapture(s, &g);
	return g;
}

static double median(std::vector<double> v)
{
	std::sort(v.begin(), v.end());
	return v[v.size() / 2];
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 64, reps = argc > 2 ? atoi(argv[2]) : 200;
	cudaStream_t s;
	float *d;
	cudaGraphExec_t e;
	std::vector<double> upd, cap;
	cudaMalloc(&d, 32 * sizeof(float));
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaGraph_t g0 = capture(s, d, n, 1.0f);
	if (cudaGraphInstantiate(&e, g0, 0) != cudaSuccess)
		return 1;
	int lock = baton_init(); /* lockstep mode: "iter R NS" (the update) per rep, a turn each */
	for (int r = 0; r < reps; r++) {
		double t0 = now_us();
		cudaGraph_t g = capture(s, d, n, 1.0f + r * 1e-3f);
		double t1 = now_us();
		cudaGraphExecUpdateResultInfo info;
		cudaError_t rc = cudaGraphExecUpdate(e, g, &info);
		double t2 = now_us();
		if (rc != cudaSuccess) {
			printf("update failed %d\n", (int)rc);
			return 1;
		}
		cap.push_back(t1 - t0);
		upd.push_back(t2 - t1);
		cudaGraphDestroy(g);
		if (r % 16 == 0)
			cudaGraphLaunch(e, s);
		if (lock) {
			printf("iter %d %.0f\n", r, (t2 - t1) * 1e3);
			baton_turn();
		}
	}
	if (lock)
		baton_pass();
	cudaStreamSynchronize(s);
	printf("nodes %d update_us %.2f capture_us %.2f\n", n, median(upd), median(cap));
	return 0;
}
