/*
 * tests/rules/escape_routes.c -- CGS024/CGS025 routes on the CPU stand-in
 * (issue 32), checked by check_escape.py. One capture per case, on a
 * non-blocking stream s, each with one kernel of its own on s unless said:
 *   1 a kernel on a stream cached before the capture     other_stream
 *   2 a kernel on the legacy stream                      legacy_stream
 *   3 only a kernel on the per-thread stream              per_thread_stream,
 *     then CGS025 (the graph has no kernel node)
 *   4 a memset, 5 a copy, on the cached stream            other_stream
 *   6 silent: a stream joined by an event wait, a capture of the per-thread
 *     stream launching on it, and another thread's launch on its own stream
 *     during a global capture
 */
#include <pthread.h>

#include "scenario.h"

#define N 256L

static cudaStream_t other;
static float *c;
static pthread_barrier_t bar;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&bar);
	LAUNCH_FILL(other, c, N, 3.0);
	pthread_barrier_wait(&bar);
	return NULL;
}

static void end(cudaStream_t s)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	if (g)
		CHECK(cudaGraphDestroy(g), cudaSuccess);
}

int main(void)
{
	cudaStream_t s, cached, s2;
	cudaEvent_t fork, join;
	float *a = NULL, *b = NULL;
	pthread_t t;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&cached, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&c, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* 1 */
	LAUNCH_FILL(s, a, N, 1.0);
	LAUNCH_FILL(cached, b, N, 2.0);
	end(s);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* 2 */
	LAUNCH_FILL(s, a, N, 1.0);
	LAUNCH_FILL(cudaStreamLegacy, b, N, 2.0);
	end(s);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* 3 */
	LAUNCH_FILL(cudaStreamPerThread, b, N, 2.0);
	end(s);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess); /* 4, 5 */
	LAUNCH_FILL(s, a, N, 1.0);
	CHECK(cudaMemsetAsync(b, 0, N * sizeof(float), cached), cudaSuccess);
	CHECK(cudaMemcpyAsync(b, a, N * sizeof(float), cudaMemcpyDeviceToDevice, cached), cudaSuccess);
	end(s);

	pthread_barrier_init(&bar, NULL, 2); /* 6 */
	pthread_create(&t, NULL, worker, NULL);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess);
	LAUNCH_FILL(s2, b, N, 2.0);
	CHECK(cudaEventRecord(join, s2), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s, join, 0), cudaSuccess);
	pthread_barrier_wait(&bar);
	pthread_barrier_wait(&bar);
	end(s);
	pthread_join(t, NULL);
	CHECK(cudaStreamBeginCapture(cudaStreamPerThread, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(cudaStreamPerThread, a, N, 1.0);
	end(cudaStreamPerThread);

	CHECK(cudaDeviceSynchronize(), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaFree(c), cudaSuccess);
	return SCENARIO_EXIT();
}
