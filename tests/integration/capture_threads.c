/*
 * tests/integration/capture_threads.c -- issue 19 on the CPU stand-in: a
 * thread that allocates pinned host memory while another thread holds a
 * Global-mode capture. Linked with -lcuda (cuda.h's renames apply:
 * cuMemAllocHost -> _v2, cuStreamGetCaptureInfo -> _v3).
 *
 * usage: capture_threads MODE
 *   hostalloc  main begins a Global capture; a second thread calls
 *              cuMemHostAlloc (900, capture invalidated); main asks
 *              cuStreamGetCaptureInfo (Invalidated) and ends (901)
 *   query      as hostalloc, but main's stream is blocking and the second
 *              thread's call is a synchronous cuMemsetD16 (legacy stream:
 *              906, the capture invalidated; measured for its D8 twin on
 *              the H200, 2026-11-29), which the shim does not hook: the
 *              invalidation is only found through the application's
 *              capture-info query
 *   abandon    as hostalloc, but main never ends the capture (PyTorch raising
 *              out of capture_begin): its later cuCtxSynchronize fails with
 *              900, a new begin on the stream fails, the other thread's next
 *              allocation fails too, and the process exits with the capture
 *              open
 * Prints one line per driver answer; exit status 0 iff all are as expected.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad;

static void expect(const char *what, CUresult rc, CUresult want)
{
	printf("%s: %d%s\n", what, (int)rc, rc == want ? "" : " (unexpected)");
	if (rc != want)
		bad = 1;
}

static const char *mode;
static CUdeviceptr buf_dev;

/* The other thread's pinned host allocation, made while main's capture is
 * live. */
static void *other_thread(void *arg)
{
	void *p = NULL;
	(void)arg;
	pthread_setname_np(pthread_self(), "pt_pin_memory"); /* what the shim names the culprit by */
	if (!strcmp(mode, "query")) {
		/* A capture breaker the shim does not hook. */
		expect("other thread cuMemsetD16 (unhooked)", cuMemsetD16(buf_dev, 0, 8),
		       CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
		return NULL;
	}
	expect("other thread cuMemHostAlloc", cuMemHostAlloc(&p, 1 << 20, 0), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
	return NULL;
}

int main(int argc, char **argv)
{
	CUdevice dev;
	CUcontext ctx;
	CUstream s;
	CUgraph g = NULL;
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	cuuint64_t id = 0;
	pthread_t t;
	void *p = NULL;
	mode = argc > 1 ? argv[1] : "hostalloc";
	pthread_setname_np(pthread_self(), "EngineCore");
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&s, strcmp(mode, "query") ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT)) {
		printf("setup failed\n");
		return 1;
	}
	/* Outside any capture a pinned allocation and its free are fine. */
	expect("cuMemAllocHost outside capture", cuMemAllocHost(&p, 4096), CUDA_SUCCESS);
	expect("cuMemFreeHost outside capture", cuMemFreeHost(p), CUDA_SUCCESS);
	expect("cuMemAlloc outside capture", cuMemAlloc(&buf_dev, 4096), CUDA_SUCCESS);

	expect("main cuStreamBeginCapture global", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
	       CUDA_SUCCESS);
	pthread_create(&t, NULL, other_thread, NULL);
	pthread_join(t, NULL);
	expect("main cuStreamGetCaptureInfo", cuStreamGetCaptureInfo(s, &st, &id, NULL, NULL, NULL, NULL),
	       CUDA_SUCCESS);
	printf("capture status: %d%s\n", (int)st, st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "" : " (unexpected)");
	if (st != CU_STREAM_CAPTURE_STATUS_INVALIDATED)
		bad = 1;
	if (!strcmp(mode, "abandon")) {
		/* The application raised out of its capture: the capture stays. */
		expect("main cuCtxSynchronize later", cuCtxSynchronize(), CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
		expect("main cuStreamBeginCapture again", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL),
		       CUDA_ERROR_ILLEGAL_STATE);
		/* The other thread keeps allocating: refused while it stays open. */
		pthread_create(&t, NULL, other_thread, NULL);
		pthread_join(t, NULL);
		printf("exit with the capture open\n");
		return bad;
	}
	expect("main cuStreamEndCapture", cuStreamEndCapture(s, &g), CUDA_ERROR_STREAM_CAPTURE_INVALIDATED);
	return bad;
}
