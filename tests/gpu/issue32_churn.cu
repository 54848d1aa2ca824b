// tests/gpu/issue32_churn.cu -- re-capture churn and eager fallback on a GPU
// (issue 32, tests/gpu/issue32.py). One capture site (capture()) for every
// graph; modes:
//   same      the same two-kernel graph captured, instantiated, launched and
//             destroyed 12 times                        (CGS026 once, at 10)
//   batches   vLLM-shaped: one graph per batch size 1..32 (6 sizes, kept and
//             replayed), then batch size 8 captured again 12 times
//                                                       (CGS026 once, for 8)
//   fallback  a runner with graphs for batch sizes up to 8 serves 40 decode
//             steps at batch 16: every step runs eagerly (coverage ~0)
//   graphed   the same runner at batch 4: every step replays its graph
// Prints "sum S": the buffer's sum after the work, equal bare and shimmed.
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "issue32_ck.h"

#define N 8192

__global__ void scale(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = p[i] * v + 1.0f;
}

__global__ void shift(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] -= v;
}

static cudaStream_t s;
static float *buf;

// A step of batch size bs: two kernels over bs*256 elements.
static void step(int bs)
{
	int n = bs * 256;
	scale<<<(n + 127) / 128, 128, 0, s>>>(buf, n, 0.5f);
	shift<<<(n + 127) / 128, 128, 0, s>>>(buf, n, 0.25f);
}

// The one capture site.
__attribute__((noinline)) static cudaGraph_t capture(int bs)
{
	cudaGraph_t g = nullptr;
	if (cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal) != cudaSuccess)
		return nullptr;
	step(bs);
	if (cudaStreamEndCapture(s, &g) != cudaSuccess)
		return nullptr;
	return g;
}

static int replay(cudaGraph_t g, bool keep, cudaGraphExec_t *out)
{
	cudaGraphExec_t e;
	CK(cudaGraphInstantiate(&e, g, 0));
	CK(cudaGraphLaunch(e, s));
	CK(cudaStreamSynchronize(s));
	if (keep) {
		*out = e;
		return 0;
	}
	CK(cudaGraphExecDestroy(e));
	CK(cudaGraphDestroy(g));
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "same";
	std::vector<float> h(N);
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&buf, N * sizeof(float)));
	CK(cudaMemset(buf, 0, N * sizeof(float)));
	CK(cudaDeviceSynchronize());

	if (!std::strcmp(mode, "same")) {
		for (int i = 0; i < 12; i++) {
			cudaGraph_t g = capture(4);
			if (!g || replay(g, false, nullptr))
				return 1;
		}
	} else if (!std::strcmp(mode, "batches")) {
		const int sizes[] = {1, 2, 4, 8, 16, 32};
		std::vector<int> plan(sizes, sizes + 6);
		for (int i = 0; i < 12; i++)
			plan.push_back(8);
		std::vector<cudaGraphExec_t> kept;
		for (size_t i = 0; i < plan.size(); i++) {
			bool warm = i < 6;
			cudaGraphExec_t e = nullptr;
			cudaGraph_t g = capture(plan[i]);
			if (!g || replay(g, warm, &e))
				return 1;
			if (warm)
				kept.push_back(e);
		}
		for (cudaGraphExec_t e : kept)
			CK(cudaGraphExecDestroy(e));
	} else if (!std::strcmp(mode, "fallback") || !std::strcmp(mode, "graphed")) {
		// the runner: graphs for batch sizes 1, 2, 4, 8, captured once
		const int sizes[] = {1, 2, 4, 8};
		cudaGraphExec_t ex[4];
		for (int k = 0; k < 4; k++) {
			cudaGraph_t g = capture(sizes[k]);
			if (!g)
				return 1;
			CK(cudaGraphInstantiate(&ex[k], g, 0));
			CK(cudaGraphDestroy(g));
		}
		int bs = !std::strcmp(mode, "fallback") ? 16 : 4;
		for (int t = 0; t < 40; t++) {
			int k = -1;
			for (int j = 0; j < 4; j++)
				if (sizes[j] == bs)
					k = j;
			if (k >= 0)
				CK(cudaGraphLaunch(ex[k], s));
			else
				step(bs); // the silent fallback: no graph for this batch size
		}
		CK(cudaStreamSynchronize(s));
		for (int k = 0; k < 4; k++)
			CK(cudaGraphExecDestroy(ex[k]));
	} else {
		std::printf("unknown mode %s\n", mode);
		return 2;
	}
	CK(cudaMemcpy(h.data(), buf, N * sizeof(float), cudaMemcpyDeviceToHost));
	double sum = 0;
	for (float x : h)
		sum += x;
	std::printf("sum %.4f\n", sum);
	CK(cudaFree(buf));
	CK(cudaStreamDestroy(s));
	return 0;
}
