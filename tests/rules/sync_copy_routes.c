/*
 * tests/rules/sync_copy_routes.c -- synchronous copies and memsets during a
 * capture on the CPU stand-in, checked by check_sync_copy.py. Measured on
 * an H200 (driver 580.159.04, 2026-11-29; docs/rules/CGS014.md): they run
 * on the legacy stream; while a blocking stream captures, 906 and the
 * capture invalidated in every mode and from any thread; while only a
 * non-blocking one captures, 0, run now, not in the graph. Each case is one
 * capture with one kernel on its stream, then the call; prints
 * "case <n> <api> <mode> <thread> call=<rc> end=<rc> nodes=<n>":
 *   1-18   blocking, each mode x the six legacy forms, same thread: CGS014
 *   19-21  blocking, cudaMemcpy D2H from another thread (its own mode
 *          relaxed), each capture mode: CGS014 naming both threads
 *   22-27  non-blocking, global, the six legacy forms, same thread: CGS024
 *          route legacy_stream
 *   28     non-blocking, global, cudaMemcpy from another thread: silent
 *   29-34  non-blocking, global, the six _ptds forms, same thread: CGS024
 *          route per_thread_stream
 *   35     blocking, global, cuMemcpyDtoH_v2_ptds, same thread: 0 (the
 *          per-thread stream is not the legacy one), CGS024 per_thread_stream
 * The driver entry points come through cudaGetDriverEntryPointByVersion
 * (the shim's wrappers under the shim), _ptds by the per-thread flag.
 */
#include <pthread.h>
#include <stdint.h>
#include <cuda.h>

#include "scenario.h"

#define N 256L

typedef CUresult (*copy_fn)(CUdeviceptr, CUdeviceptr, size_t);
typedef CUresult (*htod_fn)(CUdeviceptr, const void *, size_t);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);
typedef CUresult (*set8_fn)(CUdeviceptr, unsigned char, size_t);
typedef CUresult (*set32_fn)(CUdeviceptr, unsigned int, size_t);

static struct {
	copy_fn any, dtod;
	htod_fn htod;
	dtoh_fn dtoh;
	set8_fn d8;
	set32_fn d32;
} fn[2]; /* [1]: the _ptds forms */

static const char *names[6] = {"cuMemcpy",	  "cuMemcpyHtoD_v2", "cuMemcpyDtoH_v2",
			       "cuMemcpyDtoD_v2", "cuMemsetD8_v2",   "cuMemsetD32_v2"};
static const char *modes[3] = {"global", "thread_local", "relaxed"};
static float *a, *b;
static float host[N];
static int ncase;

static void entry(const char *name, void **p, int ptds)
{
	enum cudaDriverEntryPointQueryResult q;
	CHECK(cudaGetDriverEntryPointByVersion(name, p, 12000,
					       ptds ? cudaEnablePerThreadDefaultStream : cudaEnableDefault, &q),
	      cudaSuccess);
	EXPECT(*p && q == cudaDriverEntryPointSuccess);
}

static int op(int form, int ptds)
{
	CUdeviceptr da = (CUdeviceptr)(uintptr_t)a, db = (CUdeviceptr)(uintptr_t)b;
	switch (form) {
	case 0:
		return fn[ptds].any(db, da, N * sizeof(float));
	case 1:
		return fn[ptds].htod(da, host, N * sizeof(float));
	case 2:
		return fn[ptds].dtoh(host, da, N * sizeof(float));
	case 3:
		return fn[ptds].dtod(db, da, N * sizeof(float));
	case 4:
		return fn[ptds].d8(db, 0, N * sizeof(float));
	default:
		return fn[ptds].d32(db, 0, N);
	}
}

/* The call made by another thread (its own mode relaxed: no unsafe class). */
static void *other(void *arg)
{
	enum cudaStreamCaptureMode m = cudaStreamCaptureModeRelaxed;
	(void)arg;
	CHECK(cudaThreadExchangeStreamCaptureMode(&m), cudaSuccess);
	return (void *)(intptr_t)cudaMemcpy(host, a, N * sizeof(float), cudaMemcpyDeviceToHost);
}

/* One case: a capture of s in mode with one kernel, then the call (form, or
 * -1 cudaMemcpy on another thread), checked against want; then the end. */
static void run(cudaStream_t s, int mode, int form, int ptds, int want)
{
	cudaGraph_t g = NULL;
	size_t nodes = 0;
	int rc, end;
	pthread_t t;
	void *r = NULL;
	CHECK(cudaStreamBeginCapture(s, (enum cudaStreamCaptureMode)mode), cudaSuccess);
	LAUNCH_FILL(s, a, N, 1.0);
	if (form < 0) {
		pthread_create(&t, NULL, other, NULL);
		pthread_join(t, &r);
		rc = (int)(intptr_t)r;
	} else {
		rc = op(form, ptds);
	}
	end = cudaStreamEndCapture(s, &g);
	if (g)
		CHECK(cudaGraphGetNodes(g, NULL, &nodes), cudaSuccess);
	printf("case %d %s%s %s %s call=%d end=%d nodes=%zu\n", ++ncase, form < 0 ? "cudaMemcpy" : names[form],
	       ptds ? "_ptds" : "", modes[mode], form < 0 ? "other" : "same", rc, end, nodes);
	EXPECT(rc == want);
	EXPECT(want ? end == cudaErrorStreamCaptureInvalidated && !g : end == cudaSuccess && nodes == 1);
	if (g)
		CHECK(cudaGraphDestroy(g), cudaSuccess);
	(void)cudaGetLastError();
}

int main(void)
{
	cudaStream_t blocking, nonblocking;
	int p, m, f;

	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreate(&blocking), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(&nonblocking, cudaStreamNonBlocking), cudaSuccess);
	CHECK(cudaMalloc((void **)&a, N * sizeof(float)), cudaSuccess);
	CHECK(cudaMalloc((void **)&b, N * sizeof(float)), cudaSuccess);
	for (p = 0; p < 2; p++) {
		entry("cuMemcpy", (void **)&fn[p].any, p);
		entry("cuMemcpyHtoD", (void **)&fn[p].htod, p);
		entry("cuMemcpyDtoH", (void **)&fn[p].dtoh, p);
		entry("cuMemcpyDtoD", (void **)&fn[p].dtod, p);
		entry("cuMemsetD8", (void **)&fn[p].d8, p);
		entry("cuMemsetD32", (void **)&fn[p].d32, p);
	}

	for (m = 0; m < 3; m++) /* 1-18 */
		for (f = 0; f < 6; f++)
			run(blocking, m, f, 0, cudaErrorStreamCaptureImplicit);
	for (m = 0; m < 3; m++) /* 19-21 */
		run(blocking, m, -1, 0, cudaErrorStreamCaptureImplicit);
	for (f = 0; f < 6; f++) /* 22-27 */
		run(nonblocking, 0, f, 0, cudaSuccess);
	run(nonblocking, 0, -1, 0, cudaSuccess); /* 28 */
	for (f = 0; f < 6; f++)			 /* 29-34 */
		run(nonblocking, 0, f, 1, cudaSuccess);
	run(blocking, 0, 2, 1, cudaSuccess); /* 35 */

	CHECK(cudaFree(a), cudaSuccess);
	CHECK(cudaFree(b), cudaSuccess);
	CHECK(cudaStreamDestroy(blocking), cudaSuccess);
	CHECK(cudaStreamDestroy(nonblocking), cudaSuccess);
	return SCENARIO_EXIT();
}
