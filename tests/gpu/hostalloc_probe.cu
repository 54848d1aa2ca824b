/*
 * tests/gpu/hostalloc_probe.cu -- the real driver's answer to the pinned
 * host memory calls (issue 19) while a capture is live: for each call, each
 * capture mode (global, thread_local, relaxed) and each caller (the
 * capturing thread; another thread in its default Global mode; another
 * thread that switched itself to Relaxed), the call's rc, the capture's
 * status after it, and the end of capture's rc. Driver API only, so the
 * runtime adds nothing. Prints a Markdown table (paste into
 * docs/host-memory-capture.md) and, last, "N rows, N invalidating".
 * Build: nvcc -O2 -o hostalloc_probe tests/gpu/hostalloc_probe.cu -lcuda -lpthread
 */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { C_HOSTALLOC, C_ALLOCHOST, C_ALLOCHOST_V1, C_REGISTER, C_FREEHOST, C_UNREGISTER, C_N };
static const char *call_name[C_N] = {"cuMemHostAlloc",	     "cuMemAllocHost_v2", "cuMemAllocHost (v1)",
				     "cuMemHostRegister_v2", "cuMemFreeHost",	  "cuMemHostUnregister"};
static const char *mode_name[3] = {"global", "thread_local", "relaxed"};
static const char *caller_name[3] = {"capturing thread", "other thread (global)", "other thread (relaxed)"};

typedef CUresult (*pfn_allochost_v1)(void **, unsigned int);
static pfn_allochost_v1 allochost_v1;
static CUcontext ctx;

struct job {
	int call, relaxed;
	void *arg; /* pointer to free / unregister, prepared outside the capture */
	void *out; /* what an allocation returned */
	CUresult rc;
};

static void do_call(struct job *j)
{
	static char reg_buf[1 << 16] __attribute__((aligned(4096)));
	switch (j->call) {
	case C_HOSTALLOC:
		j->rc = cuMemHostAlloc(&j->out, 1 << 20, 0);
		break;
	case C_ALLOCHOST:
		j->rc = cuMemAllocHost(&j->out, 1 << 20);
		break;
	case C_ALLOCHOST_V1:
		j->rc = allochost_v1 ? allochost_v1(&j->out, 1 << 20) : CUDA_ERROR_NOT_FOUND;
		break;
	case C_REGISTER:
		j->rc = cuMemHostRegister(reg_buf, sizeof reg_buf, 0);
		j->out = j->rc ? NULL : reg_buf;
		break;
	case C_FREEHOST:
		j->rc = cuMemFreeHost(j->arg);
		break;
	case C_UNREGISTER:
		j->rc = cuMemHostUnregister(j->arg);
		break;
	}
}

static void *other(void *v)
{
	struct job *j = (struct job *)v;
	cuCtxSetCurrent(ctx);
	if (j->relaxed) {
		CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
		cuThreadExchangeStreamCaptureMode(&m);
	}
	do_call(j);
	return NULL;
}

/* Undo what a call did (outside any capture). */
static void cleanup(struct job *j)
{
	if (j->rc != CUDA_SUCCESS)
		return;
	if (j->call == C_REGISTER)
		cuMemHostUnregister(j->out);
	else if (j->call <= C_ALLOCHOST_V1 && j->out)
		cuMemFreeHost(j->out);
}

/* A failed free/unregister leaves the prepared pointer: release it now. */
static void release_arg(struct job *j)
{
	if (j->rc == CUDA_SUCCESS || !j->arg)
		return;
	if (j->call == C_FREEHOST)
		cuMemFreeHost(j->arg);
	else
		cuMemHostUnregister(j->arg);
}

int main(void)
{
	CUdevice dev;
	CUstream s;
	int driver = 0, rows = 0, inval = 0;
	static char unreg_buf[1 << 16] __attribute__((aligned(4096)));
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuStreamCreate(&s, CU_STREAM_NON_BLOCKING)) {
		printf("setup failed\n");
		return 1;
	}
	cuDriverGetVersion(&driver);
	{
		CUdriverProcAddressQueryResult q;
		cuGetProcAddress("cuMemAllocHost", (void **)&allochost_v1, 2000, 0, &q);
	}
	printf("hostalloc_probe: driver %d; other threads make current the same context\n\n", driver);
	printf("| call | capture mode | caller | rc | status after | end rc |\n");
	printf("|---|---|---|---|---|---|\n");
	for (int call = 0; call < C_N; call++)
		for (int mode = 0; mode < 3; mode++)
			for (int caller = 0; caller < 3; caller++) {
				struct job j;
				CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
				CUgraph g = NULL;
				CUresult erc;
				memset(&j, 0, sizeof j);
				j.call = call;
				j.relaxed = caller == 2;
				if (call == C_FREEHOST && cuMemHostAlloc(&j.arg, 1 << 20, 0))
					j.arg = NULL;
				if (call == C_UNREGISTER) {
					j.arg = unreg_buf;
					if (cuMemHostRegister(unreg_buf, sizeof unreg_buf, 0))
						j.arg = NULL;
				}
				if (cuStreamBeginCapture(s, (CUstreamCaptureMode)mode)) {
					printf("| %s | %s | %s | begin failed | | |\n", call_name[call],
					       mode_name[mode], caller_name[caller]);
					continue;
				}
				if (caller == 0) {
					do_call(&j);
				} else {
					pthread_t t;
					pthread_create(&t, NULL, other, &j);
					pthread_join(t, NULL);
				}
				cuStreamGetCaptureInfo(s, &st, NULL, NULL, NULL, NULL, NULL);
				erc = cuStreamEndCapture(s, &g);
				if (g)
					cuGraphDestroy(g);
				cleanup(&j);
				release_arg(&j);
				rows++;
				inval += st == CU_STREAM_CAPTURE_STATUS_INVALIDATED;
				printf("| %s | %s | %s | %d | %s | %d |\n", call_name[call], mode_name[mode],
				       caller_name[caller], (int)j.rc,
				       st == CU_STREAM_CAPTURE_STATUS_ACTIVE	    ? "active"
				       : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "invalidated"
										    : "none",
				       (int)erc);
			}
	printf("\n%d rows, %d invalidating\n", rows, inval);
	return 0;
}
