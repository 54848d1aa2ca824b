/*
 * kernels/model/begin_flags.cu -- the begin hook's memory of which streams
 * are blocking (CGS014's premise, hooks/capture.c stream_blocking): asked of
 * the driver once per stream and thread, forgotten when any stream is
 * destroyed, so a handle handed out again is asked again.
 *
 *  A  a blocking stream S1: 3 captures (the first begin asks, the others
 *     remember), then a fourth with a query of the legacy stream inside:
 *     CGS014 named before the driver's 906, the end 901.
 *  B  S1 destroyed; non-blocking streams created until one has S1's handle
 *     (S2; the stand-in's malloc hands it out again: "reused 1"); the others
 *     destroyed; a capture on S2 with the same query: the
 *     legacy stream does not join a non-blocking stream, so no CGS014 (906):
 *     the query is the unsafe class instead (CGS007, 900, the end 901; the
 *     stand-in answered 0 here until the H200 said 900).
 */
#include "scenario.h"

#define N 1024L

static void capture(cudaStream_t s, float *buf, int query_legacy, cudaError_t query_rc, cudaError_t end_rc)
{
	cudaGraph_t g = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, buf, N, 1.0);
	if (query_legacy)
		CHECK(cudaStreamQuery(0), query_rc);
	CHECK(cudaStreamEndCapture(s, &g), end_rc);
	(void)cudaGetLastError();
	if (g)
		CHECK(cudaGraphDestroy(g), cudaSuccess);
}

int main(void)
{
	cudaStream_t s1, s2;
	float *buf = NULL;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaMalloc((void **)&buf, N * sizeof(float)), cudaSuccess);
	CHECK(cudaStreamCreate(&s1), cudaSuccess); /* A: blocking */
	for (int i = 0; i < 3; i++)
		capture(s1, buf, 0, cudaSuccess, cudaSuccess);
	capture(s1, buf, 1, cudaErrorStreamCaptureImplicit, cudaErrorStreamCaptureInvalidated);

	CHECK(cudaStreamSynchronize(s1), cudaSuccess); /* B */
	{ /* 7 streams freed first: glibc's calloc (the stand-in's) then finds
	   * S1's chunk outside the per-thread cache it does not take from */
		cudaStream_t pad[7];
		for (int i = 0; i < 7; i++)
			CHECK(cudaStreamCreateWithFlags(&pad[i], cudaStreamNonBlocking), cudaSuccess);
		for (int i = 0; i < 7; i++)
			CHECK(cudaStreamDestroy(pad[i]), cudaSuccess);
	}
	CHECK(cudaStreamDestroy(s1), cudaSuccess);
	{ /* non-blocking streams until one has S1's handle (up to 16) */
		cudaStream_t tried[16];
		int n = 0;
		do
			CHECK(cudaStreamCreateWithFlags(&tried[n], cudaStreamNonBlocking), cudaSuccess);
		while (tried[n++] != s1 && n < 16);
		s2 = tried[n - 1];
		for (int i = 0; i < n - 1; i++)
			CHECK(cudaStreamDestroy(tried[i]), cudaSuccess);
	}
	printf("reused %d\n", s2 == s1);
	/* measured on the H200 (driver 580, 2026-11-29): the legacy stream's
	 * query is capture-unsafe under a global capture even when the
	 * capturing stream is non-blocking: 900, the capture invalidated */
	capture(s2, buf, 1, cudaErrorStreamCaptureUnsupported, cudaErrorStreamCaptureInvalidated);

	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	CHECK(cudaFree(buf), cudaSuccess);
	printf("done\n");
	return SCENARIO_EXIT();
}
