/*
 * kernels/rules/valid_sync-copy-other-thread.cu -- must stay silent.
 *
 * While one thread captures a non-blocking stream in global mode, another
 * thread (its own mode global too) copies synchronously (cudaMemcpy device
 * to host) and sets memory (cudaMemset). Both run on the legacy stream,
 * which a non-blocking capture does not join: measured on an H200 (driver
 * 580.159.04, 2026-11-29) they return 0, run now and leave the capture
 * alone (its graph: the one kernel). Not CGS014 (no blocking capture), not
 * CGS024 (the work is the other thread's own, not the capturing thread's).
 */
#include <pthread.h>

#include "scenario.h"

#define N 1024L

static pthread_barrier_t in_capture, copied;
static float *a, *c;
static float host[N];

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&in_capture);
	CHECK(cudaMemcpy(host, c, N * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
	CHECK(cudaMemset(c, 0, N * sizeof(float)), cudaSuccess);
	pthread_barrier_wait(&copied);
	return NULL;
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	size_t n = 0;
	pthread_t t;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&c, N * sizeof(float)), cudaSuccess);
	pthread_barrier_init(&in_capture, NULL, 2);
	pthread_barrier_init(&copied, NULL, 2);
	pthread_create(&t, NULL, worker, NULL);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	pthread_barrier_wait(&in_capture);
	pthread_barrier_wait(&copied); /* the other thread's copy and memset, during the capture */
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
	EXPECT(n == 1);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	pthread_join(t, NULL);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(c), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
