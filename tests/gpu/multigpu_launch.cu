/*
 * tests/gpu/multigpu_launch.cu -- graph launch loop on each GPU (issue 18 bar:
 * the shim stays <= 1.02x bare on every device).
 *
 * For each device d (all of them, or argv[2]): a one-kernel graph captured
 * on a stream of d, instantiated there, warmed up, then ITERS launches and
 * a synchronize timed around the loop only (start-up excluded), ROUNDS
 * times (bench/run.py's launch case: batches of 1000); prints the median
 * per launch:
 *   dev D ns_per_launch X
 * usage: multigpu_launch [ITERS [DEV]]   (default 1000, every device)
 */
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define ROUNDS 25

__global__ void k_empty(int *p)
{
	if (p && threadIdx.x == 1024)
		*p = 0;
}

#define CK(x)                                                                                                          \
	do {                                                                                                           \
		cudaError_t e_ = (x);                                                                                  \
		if (e_ != cudaSuccess) {                                                                               \
			fprintf(stderr, "%s: %s\n", #x, cudaGetErrorName(e_));                                         \
			return 1;                                                                                      \
		}                                                                                                      \
	} while (0)

static int one_device(int d, int iters)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t e;
	std::vector<double> per;
	CK(cudaSetDevice(d));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	k_empty<<<1, 32, 0, s>>>(nullptr);
	CK(cudaStreamEndCapture(s, &g));
	CK(cudaGraphInstantiate(&e, g, 0));
	/* Warm-up of 300 ms: a GPU that was idle runs a 1-node graph at ~1.8 us
	 * until its clocks rise, ~1.4 us after (H200): a short warm-up left the
	 * processes of one run in either state, bare or not. */
	auto w0 = std::chrono::steady_clock::now();
	do {
		for (int i = 0; i < 1000; i++)
			CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
	} while (std::chrono::steady_clock::now() - w0 < std::chrono::milliseconds(300));
	for (int r = 0; r < ROUNDS; r++) {
		auto t0 = std::chrono::steady_clock::now();
		for (int i = 0; i < iters; i++)
			CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		auto t1 = std::chrono::steady_clock::now();
		per.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / iters);
	}
	std::sort(per.begin(), per.end());
	printf("dev %d ns_per_launch %.1f\n", d, per[ROUNDS / 2]);
	fflush(stdout);
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	return 0;
}

int main(int argc, char **argv)
{
	int n = 0, iters = argc > 1 ? atoi(argv[1]) : 1000;
	CK(cudaGetDeviceCount(&n));
	if (argc > 2)
		return one_device(atoi(argv[2]), iters);
	for (int d = 0; d < n; d++)
		if (one_device(d, iters))
			return 1;
	return 0;
}
