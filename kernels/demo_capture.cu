/*
 * kernels/demo_capture.cu -- demo scenario: capture with a graph allocation,
 * launch, whole-graph update (same topology: success; extra kernel: 910/2).
 * Builds with nvcc for the GPU and as C against the stand-in (scenario.h).
 */
#include "scenario.h"

#define N (1L << 18) /* 1 MiB of floats */

static cudaGraph_t capture(cudaStream_t s, float *dst, double add, int extra)
{
	cudaGraph_t g = NULL;
	float *buf = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	LAUNCH_ADD(s, buf, N, add);
	CHECK(cudaGetLastError(), cudaSuccess);
	if (extra) {
		LAUNCH_SCALE(s, buf, N, 2.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
	CHECK(cudaMemcpyAsync(dst, buf, N * sizeof(float), cudaMemcpyDeviceToDevice, s), cudaSuccess);
	CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

static double checksum(const float *dst, float *host)
{
	double sum = 0;
	CHECK(cudaMemcpy(host, dst, N * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
	for (long i = 0; i < N; i++)
		sum += host[i];
	return sum;
}

int main(void)
{
	static float host[N];
	cudaStream_t s;
	float *dst = NULL;
	cudaGraphExec_t exec = NULL;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&dst, N * sizeof(float)), cudaSuccess);

	cudaGraph_t g1 = capture(s, dst, 2.0, 0);
	CHECK(cudaGraphInstantiate(&exec, g1, 0), cudaSuccess);
	for (int i = 0; i < 3; i++)
		CHECK(cudaGraphLaunch(exec, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	printf("checksum after 3 launches: %.1f\n", checksum(dst, host));

	cudaGraph_t g2 = capture(s, dst, 5.0, 0);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(exec, g2, &info), cudaSuccess);
	printf("update same topology: result=%d\n", (int)info.result);
	CHECK(cudaGraphLaunch(exec, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	printf("checksum after update: %.1f\n", checksum(dst, host));

	cudaGraph_t g3 = capture(s, dst, 5.0, 1);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(exec, g3, &info), cudaErrorGraphExecUpdateFailure);
	printf("update extra kernel: result=%d\n", (int)info.result);
	CHECK(cudaGetLastError(), cudaErrorGraphExecUpdateFailure);
	CHECK(cudaGraphLaunch(exec, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	printf("checksum after failed update: %.1f\n", checksum(dst, host));

	CHECK(cudaGraphExecDestroy(exec), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaGraphDestroy(g3), cudaSuccess);
	CHECK(cudaFree(dst), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("failures: %d\n", scenario_failures);
	return SCENARIO_EXIT();
}
