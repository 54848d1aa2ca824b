/*
 * tests/integration/hang_lib.c -- tests/gpu/hang_gpu.cu's library interface
 * on the stand-in (tests/gpu/hang.py's self-test of tests/gpu/hang_c.py):
 * hang_setup(mode) gives stream s a graph launch and a kernel, hang_wait()
 * blocks in cuStreamSynchronize(s), or for mode "copy" in a synchronous
 * copy of 1024 bytes device to host, cuMemcpyDtoH_v2 (the stand-in waits
 * until the file STANDIN_SYNC_UNTIL exists, which the harness sets to
 * HANG_RELEASE).
 */
#include <cuda.h>
#include <stddef.h>
#include <string.h>

#include "host_util.h"

static CUstream s;
static CUcontext ctx;
static CUdeviceptr dbuf;
static int copy_mode;
static unsigned char hbuf[1024];

int hang_setup(const char *mode)
{
	CUdevice dev;
	CUdeviceptr d;
	CUgraph g;
	CUgraphExec x;
	void *pp[] = {&d, NULL};
	copy_mode = mode && !strcmp(mode, "copy");
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx))
		return 1;
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	cuMemAlloc(&d, 4096);
	dbuf = d;
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, s, pp, NULL);
	cuStreamEndCapture(s, &g);
	cuGraphInstantiate(&x, g, 0);
	cuGraphLaunch(x, s);
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, s, pp, NULL);
	return 0;
}

__attribute__((noinline)) int hang_wait(void)
{
	cuCtxSetCurrent(ctx);
	if (copy_mode)
		return cuMemcpyDtoH(hbuf, dbuf, sizeof hbuf) != CUDA_SUCCESS;
	return cuStreamSynchronize(s) != CUDA_SUCCESS;
}
