/*
 * tests/rules/graph_coverage.c -- graph coverage counts (issue 32), checked by
 * check_coverage.py against the counts the program prints itself:
 * eager kernels (the main thread's, a thread's that exits before the end,
 * one that escapes a capture) and kernels run through graph launches
 * (an exec of 3 kernels launched 4 times and destroyed, one of 2 kernels
 * launched 2 times and alive at exit, one of 2 kernels and a memset launched
 * 3 times, whose kernels the copy check's pass over the node types counts,
 * as the capture's tally cannot; the kernels captured are not eager).
 */
#include <pthread.h>

#include "scenario.h"

#define N 256L

static float *buf;
static long eager;

static void *worker(void *arg)
{
	cudaStream_t s;
	(void)arg;
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	for (int i = 0; i < 7; i++)
		LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return NULL;
}

static cudaGraphExec_t graph_of(cudaStream_t s, cudaStream_t side, int kernels, int escape, int memset)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	for (int i = 0; i < kernels; i++)
		LAUNCH_FILL(s, buf, N, 2.0);
	if (memset)
		CHECK(cudaMemsetAsync(buf, 0, N * sizeof(float), s), cudaSuccess);
	if (escape) {
		LAUNCH_FILL(side, buf, N, 3.0); /* CGS024: runs now, eagerly */
		eager++;
	}
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	return e;
}

int main(void)
{
	cudaStream_t s, side;
	cudaGraphExec_t a, b, c;
	pthread_t t;
	long graphed = 0;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	for (int i = 0; i < 5; i++, eager++)
		LAUNCH_FILL(s, buf, N, 1.0);
	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	eager += 7;
	a = graph_of(s, side, 3, 1, 0);
	b = graph_of(s, side, 2, 0, 0);
	c = graph_of(s, side, 2, 0, 1);
	for (int i = 0; i < 4; i++, graphed += 3)
		CHECK(cudaGraphLaunch(a, s), cudaSuccess);
	for (int i = 0; i < 2; i++, graphed += 2)
		CHECK(cudaGraphLaunch(b, s), cudaSuccess);
	for (int i = 0; i < 3; i++, graphed += 2)
		CHECK(cudaGraphLaunch(c, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaGraphExecDestroy(a), cudaSuccess);
	CHECK(cudaGraphExecDestroy(c), cudaSuccess);
	printf("eager %ld graphed %ld\n", eager, graphed);
	return SCENARIO_EXIT();
}
