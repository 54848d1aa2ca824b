/*
 * tests/programs/rt_app.c -- a process using the shared runtime
 * (libcudart.so.13), like PyTorch or CuPy: every driver call goes through the
 * runtime's self-looked-up cuGetProcAddress pointer (cuda-facts §1).
 * Exit status 0 iff every result is the expected one.
 */
#include "scenario.h"

#define N 4096L

static cudaGraph_t capture(cudaStream_t s, float *dst, double add, int with_free)
{
	cudaGraph_t g = NULL;
	float *buf = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMallocAsync((void **)&buf, N * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	LAUNCH_ADD(s, buf, N, add);
	LAUNCH_COPY(s, dst, buf, N);
	CHECK(cudaGetLastError(), cudaSuccess);
	if (with_free)
		CHECK(cudaFreeAsync(buf, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, &g), cudaSuccess);
	return g;
}

static double sum(const float *dst)
{
	static float h[N];
	double t = 0;
	CHECK(cudaMemcpy(h, dst, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
	for (long i = 0; i < N; i++)
		t += h[i];
	return t;
}

int main(void)
{
	int v = 0;
	cudaStream_t s;
	float *dst;
	cudaGraphExec_t e1, e2;
	cudaGraphExecUpdateResultInfo info;

	CHECK(cudaRuntimeGetVersion(&v), cudaSuccess);
	printf("runtime version %d\n", v);
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&dst, N * sizeof(float)), cudaSuccess);

	/* alloc + kernel + free, 3 launches, successful update */
	cudaGraph_t g1 = capture(s, dst, 2.0, 1);
	size_t n = 0;
	CHECK(cudaGraphGetNodes(g1, NULL, &n), cudaSuccess);
	printf("captured nodes: %zu\n", n);
	EXPECT(n == 5);
	CHECK(cudaGraphInstantiate(&e1, g1, 0), cudaSuccess);
	for (int i = 0; i < 3; i++)
		CHECK(cudaGraphLaunch(e1, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	printf("checksum: %.1f\n", sum(dst));
	EXPECT(sum(dst) == 3.0 * N);
	cudaGraph_t g2 = capture(s, dst, 4.0, 1);
	memset(&info, 0, sizeof info);
	CHECK(cudaGraphExecUpdate(e1, g2, &info), cudaSuccess);
	CHECK(cudaGraphLaunch(e1, s), cudaSuccess);
	printf("checksum after update: %.1f\n", sum(dst));
	EXPECT(sum(dst) == 5.0 * N);

	/* cuda-facts §3/§4: second instantiate of a memory-node graph -> 801 */
	CHECK(cudaGraphInstantiate(&e2, g1, 0), cudaErrorNotSupported);
	/* cuda-facts §4: update from a graph with its own live exec -> 801, result 0 */
	cudaGraphExec_t e3;
	CHECK(cudaGraphInstantiate(&e3, g2, 0), cudaSuccess);
	memset(&info, 0xff, sizeof info);
	CHECK(cudaGraphExecUpdate(e1, g2, &info), cudaErrorNotSupported);
	printf("update from instantiated graph: result=%d\n", (int)info.result);
	EXPECT(info.result == 0);
	CHECK(cudaGraphExecDestroy(e3), cudaSuccess);
	CHECK(cudaGetLastError(), cudaErrorNotSupported); /* sticky last error */

	/* cuda-facts §3: alloc-only graph: relaunch without AutoFree -> 1, with -> 0 */
	cudaGraph_t g3 = capture(s, dst, 1.0, 0);
	cudaGraphExec_t e4;
	CHECK(cudaGraphInstantiate(&e4, g3, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e4, s), cudaSuccess);
	CHECK(cudaGraphLaunch(e4, s), cudaErrorInvalidValue);
	CHECK(cudaGetLastError(), cudaErrorInvalidValue);
	CHECK(cudaGraphExecDestroy(e4), cudaSuccess);
	CHECK(cudaGraphInstantiateWithFlags(&e4, g3, cudaGraphInstantiateFlagAutoFreeOnLaunch), cudaSuccess);
	unsigned long long fl = 0;
	CHECK(cudaGraphExecGetFlags(e4, &fl), cudaSuccess);
	printf("exec flags: %llu\n", fl);
	CHECK(cudaGraphLaunch(e4, s), cudaSuccess);
	CHECK(cudaGraphLaunch(e4, s), cudaSuccess);
	unsigned long long used = 0;
	CHECK(cudaDeviceGetGraphMemAttribute(0, cudaGraphMemAttrReservedMemCurrent, &used), cudaSuccess);
	EXPECT(used > 0);
	CHECK(cudaGraphExecDestroy(e4), cudaSuccess);

	/* cuda-facts §6: cudaMalloc during a Global capture -> 900, end -> 901 */
	void *p = NULL;
	cudaGraph_t gbad = (cudaGraph_t)&p;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	CHECK(cudaMalloc(&p, 16), cudaErrorStreamCaptureUnsupported);
	CHECK(cudaStreamEndCapture(s, &gbad), cudaErrorStreamCaptureInvalidated);
	EXPECT(gbad == NULL);

	CHECK(cudaGraphExecDestroy(e1), cudaSuccess);
	CHECK(cudaGraphDestroy(g1), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	CHECK(cudaGraphDestroy(g3), cudaSuccess);
	CHECK(cudaFree(dst), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
	printf("failures: %d\n", scenario_failures);
	return SCENARIO_EXIT();
}
