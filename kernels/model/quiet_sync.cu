/*
 * kernels/model/quiet_sync.cu -- the memory sample a first begin-capture
 * reuses (issue 19). Memory moves (cudaMalloc, a launch), more than the
 * 1 ms a sample is reused for passes, then the program synchronizes the
 * device and begins a capture at once, as torch.cuda.graph does. The
 * synchronize's hook takes the sample (a quiet point with a move owed);
 * the begin's hook reuses it and queries nothing inside its window.
 *
 * On the stand-in, whose driver counts every cuMemGetInfo of the process
 * (standin_meminfo_calls, looked up in libcuda.so.1; the real driver has none),
 * stderr gets "quiet_sync: sync +S begin +B gap_us G": the queries made
 * during the synchronize and during the begin, and the time from the
 * synchronize's call to the begin's return (the sample's age at the begin
 * is less). The capture itself records
 * free_before/free_after as any capture does.
 */
#include <dlfcn.h>
#include <time.h>
#include <unistd.h>
#include "scenario.h"

#define N (1L << 16)

static long now_us(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000L + t.tv_nsec / 1000;
}

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;
	unsigned long (*calls)(void) = NULL;
	void *drv;
	unsigned long c0 = 0, c1 = 0, c2 = 0;
	long t1 = 0, t2 = 0;

	CHECK(cudaFree(0), cudaSuccess);
	drv = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD); /* loaded by the runtime, maybe locally */
	if (drv)
		calls = (unsigned long (*)(void))dlsym(drv, "standin_meminfo_calls");
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	usleep(5000); /* the cudaMalloc's own sample is now too old to reuse */

	if (calls)
		c0 = calls();
	t1 = now_us(); /* the sample is taken inside the synchronize: its age at the begin is under t2 - t1 */
	CHECK(cudaDeviceSynchronize(), cudaSuccess);
	if (calls)
		c1 = calls();
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	t2 = now_us();
	if (calls)
		c2 = calls();
	LAUNCH_ADD(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	if (calls)
		fprintf(stderr, "quiet_sync: sync +%lu begin +%lu gap_us %ld\n", c1 - c0, c2 - c1, t2 - t1);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
