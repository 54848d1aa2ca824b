/*
 * kernels/rules/valid_free-under-idle-exec.cu -- must stay silent (no warn
 * or error record; CGS018 at the free is a hint: docs/rules/CGS018.md).
 *
 * A correct cleanup order (issue 31): an executable whose kernel points
 * into buf is launched and synchronized; buf is freed, and the executable
 * is never launched again, nor destroyed (the process exits with it). No
 * replay reads the freed memory; a launch after the free would be CGS019.
 */
#include "scenario.h"

#define N 4096L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, first = 0;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 3.0);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaMemcpy(&first, buf, sizeof first, cudaMemcpyDeviceToHost), cudaSuccess);
	printf("buf[0] = %g (want 3)\n", (double)first);
	EXPECT(first == 3.0f);
	CHECK(cudaFree(buf), cudaSuccess); /* e still points into buf: never launched again */
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT(); /* e and g are left to the process's exit */
}
