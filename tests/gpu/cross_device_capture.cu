/*
 * tests/gpu/cross_device_capture.cu -- what the driver answers to a capture
 * that records work on a stream of another device (issue 31 point 3,
 * "cross-device capture"). A measurement, not a rule's reproducer: NVIDIA
 * documents no refusal (cudaStreamWaitEvent: "event may be from a
 * different device than stream"; cudaEventRecord: event and stream on the
 * same device), so the shim predicts none (docs/update-refusals.md, "Capture
 * refusals not predicted"). Run bare and under the shim by
 * tests/gpu/multigpu.py (case cross_device_capture); each line is
 * "CASE CALL rc=N" so the two runs compare line by line.
 *
 *   fork    capture on device 0's stream s0, forked to device 1's stream s1
 *           by an event (recorded on s0, waited on by s1 with device 1
 *           current), a kernel on s1, joined back by an event of device 1;
 *           end, instantiate, launch, and the values both kernels wrote
 *   foreign capture on s0, a kernel launched into s0 while device 1 is
 *           current (the runtime's launch into a stream of another device)
 *   record  capture on s0, cudaEventRecord of an event of device 1 into s0
 *
 * Needs 2 devices; with fewer prints "needs 2 devices" and exits 77.
 */
#include "scenario.h"

#define N 1024L

static void rc_line(const char *c, const char *call, int rc)
{
	printf("%s %s rc=%d (%s)\n", c, call, rc, cudaGetErrorName((cudaError_t)rc));
}

static void end_and_run(const char *c, cudaStream_t s0, float *x, float *y)
{
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	size_t n = 0;
	int rc = (int)cudaStreamEndCapture(s0, &g);
	rc_line(c, "cudaStreamEndCapture", rc);
	(void)cudaGetLastError();
	if (rc || !g)
		return;
	cudaGraphGetNodes(g, NULL, &n);
	printf("%s nodes=%zu\n", c, n);
	rc = (int)cudaGraphInstantiate(&e, g, 0);
	rc_line(c, "cudaGraphInstantiate", rc);
	if (!rc) {
		rc_line(c, "cudaGraphLaunch", (int)cudaGraphLaunch(e, s0));
		rc_line(c, "cudaStreamSynchronize", (int)cudaStreamSynchronize(s0));
		float hx = -1, hy = -1;
		cudaSetDevice(0);
		cudaMemcpy(&hx, x, sizeof hx, cudaMemcpyDeviceToHost);
		cudaSetDevice(1);
		cudaMemcpy(&hy, y, sizeof hy, cudaMemcpyDeviceToHost);
		cudaSetDevice(0);
		printf("%s values x=%g y=%g\n", c, hx, hy);
		cudaGraphExecDestroy(e);
	}
	(void)cudaGetLastError();
	cudaGraphDestroy(g);
}

int main(void)
{
	int ndev = 0;
	cudaStream_t s0, s1;
	cudaEvent_t e0, e1;
	float *x = NULL, *y = NULL;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev < 2) {
		printf("needs 2 devices\n");
		return 77;
	}
	CHECK(cudaSetDevice(1), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&e1, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&y, N * sizeof(float)), cudaSuccess);
	CHECK(cudaSetDevice(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaEventCreateWithFlags(&e0, cudaEventDisableTiming), cudaSuccess);
	CHECK(cudaMalloc((void **)&x, N * sizeof(float)), cudaSuccess);

	/* fork: device 0's capture forked onto device 1's stream and joined */
	CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s0, x, N, 1.0);
	rc_line("fork", "cudaEventRecord(e0,s0)", (int)cudaEventRecord(e0, s0));
	cudaSetDevice(1);
	rc_line("fork", "cudaStreamWaitEvent(s1,e0)", (int)cudaStreamWaitEvent(s1, e0, 0));
	LAUNCH_FILL(s1, y, N, 2.0);
	rc_line("fork", "launch(s1)", (int)cudaGetLastError());
	rc_line("fork", "cudaEventRecord(e1,s1)", (int)cudaEventRecord(e1, s1));
	cudaSetDevice(0);
	rc_line("fork", "cudaStreamWaitEvent(s0,e1)", (int)cudaStreamWaitEvent(s0, e1, 0));
	end_and_run("fork", s0, x, y);

	/* foreign: a launch into device 0's capturing stream, device 1 current */
	CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s0, x, N, 3.0);
	cudaSetDevice(1);
	LAUNCH_FILL(s0, x, N, 4.0);
	rc_line("foreign", "launch(s0, device 1 current)", (int)cudaGetLastError());
	cudaSetDevice(0);
	end_and_run("foreign", s0, x, y);

	/* record: an event of device 1 recorded into device 0's capturing stream */
	CHECK(cudaStreamBeginCapture(s0, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s0, x, N, 5.0);
	rc_line("record", "cudaEventRecord(e1,s0)", (int)cudaEventRecord(e1, s0));
	end_and_run("record", s0, x, y);

	cudaFree(x);
	cudaSetDevice(1);
	cudaFree(y);
	cudaSetDevice(0);
	return 0;
}
