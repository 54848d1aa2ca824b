/*
 * kernels/rules/valid_module-load-in-capture.cu -- a valid program: a
 * library loaded with the driver API (cuLibraryLoadData) and a module
 * (cuModuleLoadData) while a Global-mode capture is live on this thread.
 * Both loads succeed and leave the capture alone (measured on the H100,
 * docs/capture-map.md); the capture ends, instantiates and replays; the
 * unloads come after the end (an unload inside the capture is refused with
 * 900: CGS007). The shim must stay silent. This program once stood for
 * CGS017, retired: docs/rules/CGS017.md. Linked with the driver (-lcuda).
 */
#include <cuda.h>

#include "scenario.h"

#define N 1024L

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e() { ret; }\n";

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t x = NULL;
	CUlibrary lib = NULL;
	CUmodule mod = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cuLibraryLoadData(&lib, ptx, NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS);
	CHECK(cuModuleLoadData(&mod, ptx), CUDA_SUCCESS);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	EXPECT(g != NULL);
	CHECK(cudaGraphInstantiate(&x, g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(x, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);

	CHECK(cuModuleUnload(mod), CUDA_SUCCESS);
	CHECK(cuLibraryUnload(lib), CUDA_SUCCESS);
	CHECK(cudaGraphExecDestroy(x), cudaSuccess);
	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
