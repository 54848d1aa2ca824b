/*
 * tests/integration/dump_more.c -- a host stuck in blocking calls other than
 * a stream synchronize, for the dump (issue 33; dump.py runs it under the
 * shim on the stand-in, whose synchronous copies, memsets and synchronize
 * calls wait while STANDIN_SYNC_UNTIL's file is missing, and whose NCCL
 * teardown calls wait while STANDIN_NCCL_TEARDOWN_UNTIL's file is missing).
 *
 * usage: dump_more MODE
 *   copy      stream s (blocking) is given a kernel and event ev recorded;
 *             thread "copier" blocks in cudaMemcpy device to host (the
 *             runtime's cuMemcpyDtoH_v2, reached through cuGetProcAddress),
 *             "setter" in cuMemsetD32_v2_ptds (the per-thread stream),
 *             "devsync" in cudaDeviceSynchronize, "evsync" in
 *             cudaEventSynchronize(ev); prints "host 0x.. dev 0x.." and
 *             "ready" once the four threads are started, "done" when all
 *             four have returned
 *   teardown  a one-rank communicator's all-reduce (the stand-in's
 *             libnccl.so.2, dlopen'ed RTLD_LOCAL) captured into a graph,
 *             instantiated and launched; thread "teardown" blocks in
 *             ncclCommDestroy with the executable alive; prints
 *             "comm 0x.. exec 0x..", "ready", and "done" once the call
 *             returned and the graph is destroyed
 * Every thread returns when the release file exists; the program then
 * exits 0.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Not declared by cuda.h without CUDA_API_PER_THREAD_DEFAULT_STREAM. */
CUresult cuMemsetD32_v2_ptds(CUdeviceptr dstDevice, unsigned int ui, size_t N);

static void kern(void **p, unsigned long n)
{
	(void)p;
	(void)n;
}

static void say(const char *m)
{
	(void)!write(1, m, strlen(m));
}

static CUcontext ctx;
static CUstream s;
static CUevent ev;
static CUdeviceptr d;
static unsigned char host[4096];

static void named(const char *name)
{
	cuCtxSetCurrent(ctx);
	pthread_setname_np(pthread_self(), name);
}

static void *copier(void *arg)
{
	(void)arg;
	named("copier");
	cudaMemcpy(host, (void *)(uintptr_t)d, sizeof host, cudaMemcpyDeviceToHost);
	return NULL;
}

static void *setter(void *arg)
{
	(void)arg;
	named("setter");
	cuMemsetD32_v2_ptds(d, 0x5a5a5a5au, sizeof host / 4);
	return NULL;
}

static void *devsync(void *arg)
{
	(void)arg;
	named("devsync");
	cudaDeviceSynchronize();
	return NULL;
}

static void *evsync(void *arg)
{
	(void)arg;
	named("evsync");
	cudaEventSynchronize((cudaEvent_t)ev);
	return NULL;
}

static int copy_mode(void)
{
	void *(*fns[])(void *) = {copier, setter, devsync, evsync};
	pthread_t t[4];
	void *pp[] = {&d, NULL};
	char line[96];
	cuMemAlloc(&d, sizeof host);
	cuStreamCreate(&s, CU_STREAM_DEFAULT); /* blocking: the legacy stream's copies wait for it */
	cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 32, 1, 1, 0, s, pp, NULL);
	cuEventCreate(&ev, 0);
	cuEventRecord(ev, s);
	snprintf(line, sizeof line, "host 0x%lx dev 0x%lx\n", (unsigned long)(uintptr_t)host, (unsigned long)d);
	say(line);
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, fns[i], NULL);
	say("ready\n");
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	say("done\n");
	return 0;
}

/* NCCL's ABI, without its header (kernels/nccl_scenario.h does the same). */
typedef void *nccl_comm;
static int (*nccl_destroy)(nccl_comm);
static nccl_comm comm;
static int destroy_rc = -1;

static void *teardown(void *arg)
{
	(void)arg;
	named("teardown");
	destroy_rc = nccl_destroy(comm);
	return NULL;
}

static int teardown_mode(void)
{
	void *h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	int (*init_all)(nccl_comm *, int, const int *);
	int (*all_reduce)(const void *, void *, size_t, int, int, nccl_comm, CUstream);
	int dev = 0;
	CUgraph g;
	CUgraphExec x;
	pthread_t t;
	char line[96];
	if (!h) {
		say("no libnccl.so.2\n");
		return 1;
	}
	*(void **)&init_all = dlsym(h, "ncclCommInitAll");
	*(void **)&all_reduce = dlsym(h, "ncclAllReduce");
	*(void **)&nccl_destroy = dlsym(h, "ncclCommDestroy");
	if (!init_all || !all_reduce || !nccl_destroy)
		return 1;
	cuMemAlloc(&d, sizeof host);
	cuStreamCreate(&s, CU_STREAM_NON_BLOCKING);
	if (init_all(&comm, 1, &dev))
		return 1;
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	all_reduce((void *)(uintptr_t)d, (void *)(uintptr_t)d, 16, 7 /* float32 */, 0 /* sum */, comm, s);
	cuStreamEndCapture(s, &g);
	cuGraphInstantiate(&x, g, 0);
	cuGraphLaunch(x, s); /* no synchronize: the stand-in's waits for the release */
	snprintf(line, sizeof line, "comm 0x%lx exec 0x%lx\n", (unsigned long)(uintptr_t)comm,
		 (unsigned long)(uintptr_t)x);
	say(line);
	pthread_create(&t, NULL, teardown, NULL);
	say("ready\n");
	pthread_join(t, NULL);
	cuGraphExecDestroy(x);
	cuGraphDestroy(g);
	say(destroy_rc == 0 ? "done\n" : "destroy failed\n");
	return destroy_rc != 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "copy";
	CUdevice dev;
	cuInit(0);
	cuDeviceGet(&dev, 0);
	cuDevicePrimaryCtxRetain(&ctx, dev);
	cuCtxSetCurrent(ctx);
	if (!strcmp(mode, "copy"))
		return copy_mode();
	if (!strcmp(mode, "teardown"))
		return teardown_mode();
	return 2;
}
