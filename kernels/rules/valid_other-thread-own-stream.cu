/*
 * kernels/rules/valid_other-thread-own-stream.cu -- must stay silent.
 *
 * Work that is not the capturing thread's, and work that joined the
 * capture: while one thread captures a non-blocking stream in global mode,
 * another thread launches on a stream of its own (it began no capture: its
 * work escapes nothing), and the capturing thread forks a second stream
 * into the capture with an event wait, launches there and joins it back.
 * Neither is CGS024; the graph holds both of the capturing thread's
 * kernels.
 */
#include <pthread.h>

#include "scenario.h"

#define N 1024L

static pthread_barrier_t in_capture, launched;
static cudaStream_t other;
static float *c;

static void *worker(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&in_capture);
	LAUNCH_FILL(other, c, N, 3.0); /* its own stream, during the other thread's capture */
	pthread_barrier_wait(&launched);
	return NULL;
}

int main(void)
{
	cudaStream_t s, s2;
	cudaEvent_t fork, join;
	cudaGraph_t g = NULL;
	size_t n = 0;
	float *a = NULL, *b = NULL;
	pthread_t t;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&other, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&join, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&c, N * sizeof(float)), cudaSuccess);
	pthread_barrier_init(&in_capture, NULL, 2);
	pthread_barrier_init(&launched, NULL, 2);
	pthread_create(&t, NULL, worker, NULL);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	CHECK(cudaEventRecord(fork, s), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s2, fork, 0), cudaSuccess); /* s2 joins the capture */
	LAUNCH_FILL(s2, b, N, 2.0);
	CHECK(cudaEventRecord(join, s2), cudaSuccess);
	CHECK(cudaStreamWaitEvent(s, join, 0), cudaSuccess);
	pthread_barrier_wait(&in_capture);
	pthread_barrier_wait(&launched);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	pthread_join(t, NULL);
	CHECK(cudaGraphGetNodes(g, NULL, &n), cudaSuccess);
	EXPECT(n == 2);
	CHECK(cudaStreamSynchronize(other), cudaSuccess);

	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaFree(c), cudaSuccess);
	CHECK(cudaEventDestroy(fork), cudaSuccess);
	CHECK(cudaEventDestroy(join), cudaSuccess);
	CHECK(cudaStreamDestroy(other), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
