/*
 * tests/integration/devsync_app.c -- cudaDeviceSynchronize inside a
 * global-mode capture, through the shared runtime (the 13.0 stand-in asks
 * for cuCtxSynchronize at 13000, as the real 13.0 runtime does). The driver
 * refuses with 900 and invalidates the capture; its end gives 901.
 */
#include <cuda_runtime_api.h>
#include <stdio.h>

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	printf("sync outside capture: %d\n", (int)cudaDeviceSynchronize());
	printf("begin: %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	printf("sync inside capture: %d\n", (int)cudaDeviceSynchronize());
	printf("end: %d\n", (int)cudaStreamEndCapture(s, &g));
	return 0;
}
