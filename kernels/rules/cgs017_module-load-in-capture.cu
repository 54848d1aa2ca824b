/*
 * kernels/rules/cgs017_module-load-in-capture.cu -- reproducer for CGS017.
 *
 * A library loaded with the driver API (cuLibraryLoadData) while a
 * Global-mode capture is live on this thread: the load succeeds, and the
 * capture is invalidated without any call failing; its end returns 901
 * (docs/capture-map.md). The runtime's cudaLibraryLoadData and its own lazy
 * loads do not invalidate the capture (measured on the H100), which is why
 * CGS017 is off by default. Linked with the driver (-lcuda).
 */
#include <cuda.h>

#include "scenario.h"

#define N 1024L

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e() { ret; }\n";

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	CUlibrary lib = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	/* CGS017: succeeds, and the capture is invalidated */
	CHECK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cuLibraryUnload(lib), CUDA_SUCCESS);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
