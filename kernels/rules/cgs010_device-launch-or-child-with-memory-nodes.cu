/*
 * kernels/rules/cgs010_device-launch-or-child-with-memory-nodes.cu --
 * reproducer for CGS010.
 *
 * A graph with memory nodes (alloc, kernel, free) cannot be cloned, and no
 * graph can be instantiated with DeviceLaunch together with AutoFreeOnLaunch
 * (or memory nodes). Both calls fail; NVIDIA documents the rule but not the
 * code, which is printed as it comes (cuda-facts §3 "Composition", "Device
 * launch"; §4 last row).
 */
#include "scenario.h"

#define N 1024L

int main(void)
{
	cudaStream_t s;
	cudaGraph_t g = NULL, clone = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL;
	int rc;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);

	/* CGS010: clone of a graph with memory nodes */
	rc = (int)cudaGraphClone(&clone, g);
	printf("cudaGraphClone: failed=%s rc=%d (%s)\n", rc ? "yes" : "no", rc, cudaGetErrorName((cudaError_t)rc));
	EXPECT(rc != 0);
	if (rc == 0)
		CHECK(cudaGraphDestroy(clone), cudaSuccess);
	(void)cudaGetLastError();

	/* CGS010: DeviceLaunch combined with AutoFreeOnLaunch */
	rc = (int)cudaGraphInstantiateWithFlags(
	    &e, g, cudaGraphInstantiateFlagDeviceLaunch | cudaGraphInstantiateFlagAutoFreeOnLaunch);
	printf("cudaGraphInstantiateWithFlags(DeviceLaunch|AutoFreeOnLaunch): failed=%s rc=%d (%s)\n",
	       rc ? "yes" : "no", rc, cudaGetErrorName((cudaError_t)rc));
	EXPECT(rc != 0);
	if (rc == 0)
		CHECK(cudaGraphExecDestroy(e), cudaSuccess);
	(void)cudaGetLastError();

	CHECK(cudaGraphDestroy(g), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	return SCENARIO_EXIT();
}
