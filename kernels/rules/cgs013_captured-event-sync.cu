/*
 * kernels/rules/cgs013_captured-event-sync.cu -- reproducer for CGS013.
 *
 * cudaEventQuery on an event recorded inside a live capture fails with 907
 * cudaErrorCapturedEvent and invalidates the capture: its end returns 901
 * (docs/capture-map.md, every mode, any thread). The NCCL-watchdog shape:
 * a host-side poll of an event the capture recorded.
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaEvent_t ev;
	cudaGraph_t g = NULL;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreate(&ev), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);

	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaEventRecord(ev, s), cudaSuccess);
	/* CGS013: the host asks about an event recorded in the capture */
	CHECK(cudaEventQuery(ev), cudaErrorCapturedEvent);
	CHECK(cudaStreamEndCapture(s, &g), cudaErrorStreamCaptureInvalidated);
	EXPECT(g == NULL);
	(void)cudaGetLastError();

	CHECK(cudaEventDestroy(ev), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
