/*
 * kernels/rules/cgs017_module-load-in-capture.cu -- reproducer for CGS017.
 *
 * A library (or module) loaded while a Global-mode capture is live on this
 * thread: the load succeeds, and the capture is invalidated without any call
 * failing; its end returns 901 (docs/capture-map.md). This is lazy module
 * loading's signature: the first use of a kernel loads its module, inside
 * the capture.
 */
#include "scenario.h"

#define N 1024L

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e() { ret; }\n";

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaLibrary_t lib = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	/* CGS017: succeeds, and the capture is invalidated */
	CHECK(cudaLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaLibraryUnload(lib), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
