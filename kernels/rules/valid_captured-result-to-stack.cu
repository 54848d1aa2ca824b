/*
 * kernels/rules/valid_captured-result-to-stack.cu -- must stay silent (no
 * warn or error record; CGS020 is a hint: docs/rules/CGS020.md).
 *
 * The pattern of NVIDIA's own samples (issue 31): a function captures a
 * kernel and the copy of its result (8 bytes) into a variable on its own
 * stack, instantiates, launches and synchronizes before it returns. The
 * copy's host operand is pageable, and alive for every launch.
 */
#include "scenario.h"

#define N 256L

/* Captures, launches and synchronizes; the exec and graph die before the
 * return, so nothing can replay into the frame after it is gone. */
static float fill_and_read(cudaStream_t s, float *buf, double v)
{
	float result[2] = {0, 0}; /* 8 bytes on this function's stack */
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, v);
	CHECK(cudaMemcpyAsync(result, buf, sizeof result, cudaMemcpyDeviceToHost, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	return result[0] + result[1];
}

int main(void)
{
	cudaStream_t s;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	for (int i = 1; i <= 3; i++) {
		float got = fill_and_read(s, buf, (double)i);
		printf("result %d: %g (want %d)\n", i, (double)got, 2 * i);
		EXPECT(got == (float)(2 * i));
	}
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
