/*
 * kernels/rules/cgs014_sync-copy-in-capture.cu -- reproducer for CGS014
 * (a synchronous copy).
 *
 * A synchronous copy runs on the legacy default stream, which would
 * synchronise with a *blocking* stream that captures: cuMemcpyDtoH (the
 * driver's own entry point, cuMemcpyDtoH_v2, its answer checked) fails with
 * 906 cudaErrorStreamCaptureImplicit and invalidates the capture, whose end
 * returns 901 and no graph. Then the same with cudaMemcpy device to host.
 * Measured on an H200 (driver 580.159.04, 2026-11-29): cudaMemcpy
 * D2H/H2D/D2D (pageable or pinned), cudaMemset, cuMemcpyDtoH/DtoD and
 * cuMemsetD8 alike, in every capture mode and from any thread.
 */
#include <stdint.h>
#include <cuda.h>

#include "scenario.h"

#define N 1024L

static float host[N];

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess); /* blocking: the legacy stream joins it */
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	/* CGS014: a synchronous copy on the legacy stream while a blocking stream captures */
	CHECK(cuMemcpyDtoH(host, (CUdeviceptr)(uintptr_t)buf, N * sizeof(float)), CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 2.0);
	CHECK(cudaMemcpy(host, buf, N * sizeof(float), cudaMemcpyDeviceToHost), cudaErrorStreamCaptureImplicit);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
