/*
 * kernels/rules/valid_recapture-update-stack-result.cu -- must stay silent
 * (no warn or error record; CGS020 is a hint, and its repeats fold into one
 * record with a count: docs/rules/CGS020.md).
 *
 * The loop of issue 31 (2,954 warnings in one run before): each step
 * captures a kernel and the copy of its result (8 bytes) into a variable on
 * the step's stack, updates one long-lived executable from the new graph
 * (instantiating it the first time), launches and synchronizes, then
 * returns. The executable outlives the frame, but every launch follows an
 * update that points it at the live one. 3,000 steps on the GPU, 200 on the
 * stand-in.
 */
#include "scenario.h"

#define N 256L
#ifdef __CUDACC__
#define STEPS 3000
#else
#define STEPS 200
#endif

static int failures;

#define QUIET(call, want)                                                                                              \
	do {                                                                                                           \
		if ((int)(call) != (int)(want))                                                                        \
			failures++;                                                                                    \
	} while (0)

static float step(cudaStream_t s, float *buf, cudaGraphExec_t *e, double v)
{
	float result[2] = {0, 0}; /* 8 bytes on this step's stack */
	cudaGraph_t g = NULL;
	cudaGraphExecUpdateResultInfo info;
	QUIET(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, v);
	QUIET(cudaMemcpyAsync(result, buf, sizeof result, cudaMemcpyDeviceToHost, s), cudaSuccess);
	QUIET(cudaStreamEndCapture(s, &g), cudaSuccess);
	if (!*e)
		QUIET(cudaGraphInstantiate(e, g, 0), cudaSuccess);
	else
		QUIET(cudaGraphExecUpdate(*e, g, &info), cudaSuccess);
	QUIET(cudaGraphLaunch(*e, s), cudaSuccess);
	QUIET(cudaStreamSynchronize(s), cudaSuccess);
	QUIET(cudaGraphDestroy(g), cudaSuccess);
	return result[0] + result[1];
}

int main(void)
{
	cudaStream_t s;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;
	int wrong = 0;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	for (int i = 0; i < STEPS; i++)
		wrong += step(s, buf, &e, (double)(i % 7)) != (float)(2 * (i % 7));
	printf("%d steps: %d failed calls, %d wrong results\n", STEPS, failures, wrong);
	EXPECT(failures == 0 && wrong == 0);
	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
