/*
 * kernels/policy/threads.cu -- several host threads launch a rewritten exec.
 *
 * Graph A (fill + count) is instantiated and launched; the exec is then
 * updated from a graph with more nodes (fill, add, scale, count), which the
 * driver refuses (topology changed) and the shim rewrites. Four pthreads
 * then launch the application's exec handle 200 times each, each on its own
 * stream. Every launch recomputes buf = (1 + 2) * 2 = 6 and adds 1 to a
 * counter: the counter must equal the total number of launches and buf 6.
 * Needs pthreads (POSIX hosts).
 *
 * Bare (no shim): the update returns 910 cudaErrorGraphExecUpdateFailure:
 * exit 1. Under libcgshim.so with CGSHIM_ON_UPDATE_FAILURE=reinstantiate:
 * one rewrite (predicted), 802 launches, exit 0.
 */
#include <pthread.h>
#include <stdlib.h>
#include "policy_scenario.h"

#define N 4096L
#define THREADS 4
#define LAUNCHES 200

static cudaGraphExec_t exec_;
static int thread_failures;
static pthread_mutex_t fail_lock = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	cudaStream_t s;
	int rc, bad = 0;
	(void)arg;
	if ((rc = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)) != cudaSuccess)
		bad = 1;
	for (int i = 0; !bad && i < LAUNCHES; i++)
		if ((rc = cudaGraphLaunch(exec_, s)) != cudaSuccess)
			bad = 1;
	if (!bad && (rc = cudaStreamSynchronize(s)) != cudaSuccess)
		bad = 1;
	if (!bad && (rc = cudaStreamDestroy(s)) != cudaSuccess)
		bad = 1;
	if (bad) {
		pthread_mutex_lock(&fail_lock);
		printf("thread: rc=%d (%s) UNEXPECTED\n", rc, cudaGetErrorName((cudaError_t)rc));
		thread_failures++;
		pthread_mutex_unlock(&fail_lock);
	}
	return NULL;
}

static float read1(const float *dev, long n, float want)
{
	float *h = (float *)malloc(n * sizeof(float));
	long bad = 0;
	float v;
	MUST(cudaMemcpy(h, dev, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (long i = 0; i < n; i++)
		bad += h[i] != want;
	v = h[0];
	free(h);
	return bad ? -1.0f : v;
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g;
	pthread_t th[THREADS];
	float *buf = NULL, *cnt = NULL, v;

	MUST(cudaFree(0));
	MUST(cudaStreamCreate(&s));
	MUST(cudaMalloc((void **)&buf, N * sizeof(float)));
	MUST(cudaMalloc((void **)&cnt, sizeof(float)));
	MUST(cudaMemset(cnt, 0, sizeof(float)));

	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	LAUNCH_FILL(s, buf, N, 1.0);
	KERNEL_OK();
	LAUNCH_ADD(s, cnt, 1, 1.0);
	KERNEL_OK();
	MUST(cudaStreamEndCapture(s, &g));
	MUST(cudaGraphInstantiate(&exec_, g, 0));
	MUST(cudaGraphDestroy(g));
	MUST(cudaGraphLaunch(exec_, s));
	MUST(cudaStreamSynchronize(s));

	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	LAUNCH_FILL(s, buf, N, 1.0);
	KERNEL_OK();
	LAUNCH_ADD(s, buf, N, 2.0);
	KERNEL_OK();
	LAUNCH_SCALE(s, buf, N, 2.0);
	KERNEL_OK();
	LAUNCH_ADD(s, cnt, 1, 1.0);
	KERNEL_OK();
	MUST(cudaStreamEndCapture(s, &g));
	sc_must_update(exec_, g);
	MUST(cudaGraphDestroy(g));
	MUST(cudaGraphLaunch(exec_, s));
	MUST(cudaStreamSynchronize(s));

	for (int i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, worker, NULL)) {
			printf("ABORT: pthread_create\n");
			return 1;
		}
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	MUST(cudaDeviceSynchronize());
	if (thread_failures) {
		printf("ABORT: %d thread(s) failed\n", thread_failures);
		return 1;
	}
	v = read1(buf, N, 6.0f);
	printf("buf: %g (want 6)\n", (double)v);
	float c = read1(cnt, 1, (float)(2 + THREADS * LAUNCHES));
	printf("launches counted: %g (want %d)\n", (double)c, 2 + THREADS * LAUNCHES);
	if (v != 6.0f || c != (float)(2 + THREADS * LAUNCHES)) {
		printf("ABORT: wrong numbers\n");
		return 1;
	}
	MUST(cudaGraphExecDestroy(exec_));
	MUST(cudaFree(buf));
	MUST(cudaFree(cnt));
	MUST(cudaStreamDestroy(s));
	printf("threads: OK\n");
	return SCENARIO_EXIT();
}
