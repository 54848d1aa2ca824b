/*
 * kernels/rules/cgs016_end-capture-wrong-thread.cu -- reproducer for CGS016.
 *
 * A Global-mode capture ended from another thread than the one that began
 * it: 908 cudaErrorStreamCaptureWrongThread (thread-local too; a relaxed
 * capture may be ended anywhere; docs/capture-map.md). The capture stays
 * open and its own thread then ends it.
 */
#include <pthread.h>

#include "scenario.h"

#define N 1024L

static cudaStream_t s;

static void *ender(void *arg)
{
	cudaGraph_t g = NULL;
	(void)arg;
	/* CGS016: not the capturing thread */
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureWrongThread);
	EXPECT(g == NULL);
	return NULL;
}

int main(void)
{
	cudaGraph_t g = NULL;
	float *buf = NULL;
	pthread_t t;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	pthread_create(&t, NULL, ender, NULL);
	pthread_join(t, NULL);
	(void)cudaGetLastError();
	/* The 908 ended the capture (measured, docs/capture-map.md): the
	 * capturing thread's own end finds none. */
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorIllegalState);
	EXPECT(g == NULL);

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
