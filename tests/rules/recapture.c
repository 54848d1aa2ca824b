/*
 * tests/rules/recapture.c -- re-capture churn (issue 32, CGS026), checked by
 * check_recapture.py. One capture site per function, each capture
 * instantiated, launched once and destroyed unless said:
 *   cap_same     the same two-kernel graph 15 times, one buffer: CGS026 once
 *                (at the 10th), recapture captures 15, buffer_sets 1
 *   cap_batch    vLLM-shaped: one graph per batch size 1..12 (grid grows),
 *                executables kept, then batch size 4 again 12 times: CGS026
 *                once, for batch size 4 only (13 captures), 12 fingerprints
 *   cap_buffers  the same graph over 3 buffers in turn, 10 times: CGS026,
 *                buffer_sets 3
 *   cap_nine     the same graph 9 times: below the threshold, no CGS026
 *   cap_forked   a fork/join graph over two streams, 10 times (the capture
 *                tally is off: every capture walked): CGS026
 * Prints the buffers' first values (outputs equal bare).
 */
#include "scenario.h"

#define N 1024L
#define BATCHES 12

static float *buf[3];
static cudaStream_t s, s2;

static void run_once(cudaGraph_t g, int keep)
{
	cudaGraphExec_t e = NULL;
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	if (!keep) {
		CHECK(cudaGraphExecDestroy(e), cudaSuccess);
		CHECK(cudaGraphDestroy(g), cudaSuccess);
	}
}

__attribute__((noinline)) cudaGraph_t cap_same(float *p, long n)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, p, n, 1.0);
	LAUNCH_SCALE(s, p, n, 3.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

__attribute__((noinline)) cudaGraph_t cap_batch(long n)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf[1], n, 2.0);
	LAUNCH_ADD(s, buf[1], n, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

__attribute__((noinline)) cudaGraph_t cap_buffers(float *p)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, p, N, 5.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

__attribute__((noinline)) cudaGraph_t cap_nine(void)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_SCALE(s, buf[2], N, 1.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

__attribute__((noinline)) cudaGraph_t cap_forked(cudaEvent_t fork, cudaEvent_t join)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
	LAUNCH_FILL(s, buf[0], N, 7.0);
	LAUNCH_FILL(s2, buf[2], N, 8.0);
	CHECK(cudaEventRecord(join, s2), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s, join, 0), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

int main(void)
{
	cudaGraph_t kept[BATCHES];
	long sizes[BATCHES + 12];
	cudaEvent_t fork, join;
	float h[3];
	int i;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);
	for (i = 0; i < 3; i++)
		CHECK(cudaMalloc((void **)&buf[i], BATCHES * 256 * sizeof(float) + N * sizeof(float)), cudaSuccess);

	for (i = 0; i < 15; i++)
		run_once(cap_same(buf[0], N), 0);
	/* one call site: the warm-up's batch sizes, then the decode loop's */
	for (i = 0; i < BATCHES + 12; i++)
		sizes[i] = (i < BATCHES ? i + 1 : 4) * 256L;
	for (i = 0; i < BATCHES + 12; i++) {
		int warm = i < BATCHES;
		cudaGraph_t g = cap_batch(sizes[i]);
		if (warm)
			kept[i] = g;
		run_once(g, warm);
	}
	for (i = 0; i < 10; i++)
		run_once(cap_buffers(buf[i % 3]), 0);
	for (i = 0; i < 9; i++)
		run_once(cap_nine(), 0);
	for (i = 0; i < 10; i++)
		run_once(cap_forked(fork, join), 0);

	for (i = 0; i < 3; i++)
		CHECK(cudaMemcpy(&h[i], buf[i], sizeof h[i], cudaMemcpyDeviceToHost), cudaSuccess);
	printf("values %g %g %g\n", h[0], h[1], h[2]);
	for (i = 0; i < BATCHES; i++)
		CHECK(cudaGraphDestroy(kept[i]), cudaSuccess);
	for (i = 0; i < 3; i++)
		CHECK(cudaFree(buf[i]), cudaSuccess);
	CHECK(cudaEventDestroy(fork), cudaSuccess);
	CHECK(cudaEventDestroy(join), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
