/*
 * kernels/rules/cgs024_work-escapes-capture.cu -- reproducer for CGS024.
 *
 * A stream handle cached before the capture: while a non-blocking stream
 * captures, the capturing thread launches a kernel on another stream that
 * never joined the capture. The driver accepts it and runs it once, now;
 * the graph holds only the kernel on the capturing stream, so every replay
 * skips the second one (b stays as the eager run left it).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s, cached;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *a = NULL, *b = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&cached, cudaStreamNonBlocking), cudaSuccess); /* cached before the capture */
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	/* CGS024: the cached stream is not in the capture; this runs now, once */
	LAUNCH_FILL(cached, b, N, 2.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaStreamSynchronize(cached), cudaSuccess);

	CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(cached), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
