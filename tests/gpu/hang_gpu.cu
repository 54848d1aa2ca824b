// tests/gpu/hang_gpu.cu -- two hangs on the real driver for the dump (issue 33,
// tests/gpu/hang.py). Build: nvcc -O2 -g -cudart shared -arch=sm_90 -o hang_gpu hang_gpu.cu -lpthread
// (the shared runtime: its frames are known as CUDA frames and skipped in the site)
//
// usage: hang_gpu spin|copy|waitevent (env HANG_RELEASE: a file path)
// Also built as libhang_gpu.so (-shared -Xcompiler -fPIC), driven from Python
// by tests/gpu/hang_c.py: hang_setup(mode), then hang_wait() in a thread.
//   spin       stream s is given a captured graph (launched once, completes),
//              then a kernel that spins until a flag in mapped pinned host
//              memory is set; thread "waiter" blocks in cudaStreamSynchronize(s).
//   copy       stream c (blocking: the legacy stream waits for it) is given
//              the spinning kernel; thread "waiter" blocks in cudaMemcpy of
//              1 KiB device to host (the legacy stream, behind the kernel).
//   waitevent  stream b is given the spinning kernel and event e is recorded
//              behind it; a graph captured on stream a holds a wait on e
//              (cudaStreamWaitEvent, cudaEventWaitExternal) and a kernel;
//              it is launched on a and thread "waiter" blocks in
//              cudaStreamSynchronize(a): behind the captured wait.
// Both print "ready" once the waiter is in its call (~0.2 s after), then a
// thread that makes no CUDA call sets the flag when the file HANG_RELEASE
// exists (or after 60 s), the kernel ends, the waiter returns and the
// program prints "released <seconds blocked>" and exits 0.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CK(x)                                                                                                          \
	do {                                                                                                           \
		cudaError_t e_ = (x);                                                                                  \
		if (e_ != cudaSuccess) {                                                                               \
			fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));             \
			exit(2);                                                                                       \
		}                                                                                                      \
	} while (0)

__global__ void spin_until_flag(volatile int *flag)
{
	while (*flag == 0)
		__nanosleep(1000);
}

__global__ void tiny(int *p)
{
	p[threadIdx.x] += 1;
}

static volatile int *host_flag;
static cudaStream_t waited;
static int copy_mode;
static int *copy_src;
static int copy_dst[256];

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

// The waiter: its own thread, so that the dump names a thread other than
// main; noinline so that its frame is in the site.
__attribute__((noinline)) void *waiter(void *)
{
	double t0 = now_s();
	if (copy_mode)
		CK(cudaMemcpy(copy_dst, copy_src, sizeof copy_dst, cudaMemcpyDeviceToHost));
	else
		CK(cudaStreamSynchronize(waited));
	printf("released %.2f\n", now_s() - t0);
	fflush(stdout);
	return NULL;
}

static void *releaser(void *)
{
	const char *rel = getenv("HANG_RELEASE");
	double t0 = now_s();
	while (now_s() - t0 < 60 && !(rel && access(rel, F_OK) == 0))
		usleep(10000);
	*host_flag = 1; // a plain store: no CUDA call
	return NULL;
}

static cudaStream_t a, b, c;
static cudaEvent_t e;
static cudaGraph_t g;
static cudaGraphExec_t x;
static pthread_t rel_thread;

// The work of mode ("spin" or "waitevent") given, the releaser started:
// hang_wait() then blocks. Returns 0.
extern "C" int hang_setup(const char *mode)
{
	int *hflag, *dflag, *buf;
	CK(cudaSetDeviceFlags(cudaDeviceMapHost));
	CK(cudaHostAlloc((void **)&hflag, sizeof(int), cudaHostAllocMapped));
	*hflag = 0;
	host_flag = hflag;
	CK(cudaHostGetDevicePointer((void **)&dflag, hflag, 0));
	CK(cudaMalloc(&buf, 256 * sizeof(int)));
	CK(cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking));
	CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
	if (!strcmp(mode, "spin")) {
		CK(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal));
		tiny<<<1, 32, 0, a>>>(buf);
		CK(cudaStreamEndCapture(a, &g));
		CK(cudaGraphInstantiate(&x, g, 0));
		CK(cudaGraphLaunch(x, a));
		CK(cudaStreamSynchronize(a));
		spin_until_flag<<<1, 1, 0, a>>>(dflag);
		CK(cudaGetLastError());
	} else if (!strcmp(mode, "copy")) {
		CK(cudaStreamCreate(&c)); // blocking: the legacy stream's copy waits for it
		spin_until_flag<<<1, 1, 0, c>>>(dflag);
		CK(cudaGetLastError());
		copy_mode = 1;
		copy_src = buf;
	} else {
		spin_until_flag<<<1, 1, 0, b>>>(dflag);
		CK(cudaGetLastError());
		CK(cudaEventRecord(e, b));
		CK(cudaStreamBeginCapture(a, cudaStreamCaptureModeGlobal));
		CK(cudaStreamWaitEvent(a, e, cudaEventWaitExternal));
		tiny<<<1, 32, 0, a>>>(buf);
		CK(cudaStreamEndCapture(a, &g));
		CK(cudaGraphInstantiate(&x, g, 0));
		CK(cudaGraphLaunch(x, a));
	}
	waited = a;
	pthread_create(&rel_thread, NULL, releaser, NULL);
	return 0;
}

// Blocks in cudaStreamSynchronize of the stuck stream until released.
extern "C" __attribute__((noinline)) int hang_wait(void)
{
	waiter(NULL);
	pthread_join(rel_thread, NULL);
	CK(cudaDeviceSynchronize());
	return 0;
}

int main(int argc, char **argv)
{
	pthread_t w;
	hang_setup(argc > 1 ? argv[1] : "spin");
	pthread_create(&w, NULL, waiter, NULL);
	pthread_setname_np(w, "waiter");
	usleep(200000);
	printf("ready\n");
	fflush(stdout);
	pthread_join(w, NULL);
	pthread_join(rel_thread, NULL);
	CK(cudaDeviceSynchronize());
	return 0;
}
