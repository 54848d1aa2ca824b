/*
 * tests/integration/capture_parity.c -- the capture map through the driver
 * API (issue 14, point 1): the same route x mode x thread matrix as
 * tests/gpu/capture_map.cu, for the routes the CPU stand-in implements,
 * printed as the rows of docs/capture-map.md's table:
 *   | route | mode | thread | call rc | capture after | end rc |
 * Built against the stand-in (tests/integration, meson) and, unchanged,
 * against the real driver:
 *   gcc -O2 -I/usr/local/cuda/include tests/integration/capture_parity.c -lcuda -lpthread -ldl -o capture_parity
 * The CPU test compares the output with capture_parity.expected, whose rows
 * are copied from the measured table (tests/integration/run.py
 * capture_parity); run on a GPU, the same comparison checks the map again.
 *
 * Each row is a fresh set-up, as in capture_map.cu: a non-blocking
 * capturing stream (blocking for the legacy-stream rows) with one kernel and
 * one recorded event captured, then the call, then cuStreamIsCapturing and
 * cuStreamEndCapture. The other thread makes the context current first
 * (the runtime does that for the map's cuda* calls); rows the map measured
 * without a context (201) are not in the expected file.
 * Kernel: on the stand-in a CUfunction is a host function
 * (tests/standin/standin.h); on a GPU, an empty PTX entry (the stand-in has
 * no cuModuleGetFunction).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static CUcontext ctx;
static CUfunction kfn;

static void k_cpu(void **params, unsigned long nt)
{
	(void)params;
	(void)nt;
}

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n"
			  ".visible .entry e(.param .u64 p) { ret; }\n";

static void kernel_init(void)
{
	typedef CUresult (*load_t)(CUmodule *, const void *);
	typedef CUresult (*getf_t)(CUfunction *, CUmodule, const char *);
	load_t load = (load_t)dlsym(RTLD_DEFAULT, "cuModuleLoadData");
	getf_t getf = (getf_t)dlsym(RTLD_DEFAULT, "cuModuleGetFunction");
	CUmodule m;
	kfn = (CUfunction)(void *)k_cpu; /* the stand-in's modules have no functions */
	if (load && getf && load(&m, ptx) == CUDA_SUCCESS && getf(&kfn, m, "e") != CUDA_SUCCESS)
		kfn = (CUfunction)(void *)k_cpu;
}

static CUresult launch(CUstream s, CUdeviceptr p)
{
	void *args[] = {&p, NULL};
	return cuLaunchKernel(kfn, 1, 1, 1, 32, 1, 1, 0, s, args, NULL);
}

struct ctxs {
	CUstream s, other;
	CUevent ev_cap, ev_plain;
	CUdeviceptr d, d2;
	void *h, *pageable;
	CUgraph pre_g;
	CUgraphExec pre_x;
	CUmodule mod, mod_new;	/* mod_new/lib_new: loaded by a load route inside */
	CUlibrary lib, lib_new; /* the capture, unloaded by teardown after its end */
};

struct route {
	const char *name;
	int blocking;
	CUresult (*fn)(struct ctxs *c);
};

static CUresult r_ctxdev(struct ctxs *c)
{
	CUdevice d;
	(void)c;
	return cuCtxGetDevice(&d);
}
static CUresult r_free0(struct ctxs *c)
{
	(void)c;
	return cuMemFree(0);
}
static CUresult r_sync_cap(struct ctxs *c)
{
	return cuStreamSynchronize(c->s);
}
static CUresult r_query_cap(struct ctxs *c)
{
	return cuStreamQuery(c->s);
}
static CUresult r_evsync(struct ctxs *c)
{
	return cuEventSynchronize(c->ev_cap);
}
static CUresult r_evquery(struct ctxs *c)
{
	return cuEventQuery(c->ev_cap);
}
static CUresult r_devsync(struct ctxs *c)
{
	(void)c;
	return cuCtxSynchronize_v2(NULL);
}
static CUresult r_ctxsync(struct ctxs *c)
{
	typedef CUresult (*f_t)(void);
	f_t f = (f_t)dlsym(RTLD_DEFAULT, "cuCtxSynchronize"); /* the 2000 form (cuda.h renames it) */
	(void)c;
	return f ? f() : CUDA_ERROR_NOT_FOUND;
}
static CUresult r_sync_other(struct ctxs *c)
{
	return cuStreamSynchronize(c->other);
}
static CUresult r_malloc(struct ctxs *c)
{
	CUdeviceptr p = 0;
	CUresult rc = cuMemAlloc(&p, 1 << 20);
	(void)c;
	if (!rc)
		cuMemFree(p);
	return rc;
}
static CUresult r_free(struct ctxs *c)
{
	CUresult rc = cuMemFree(c->d2);
	if (!rc)
		c->d2 = 0;
	return rc;
}
static CUresult r_hostalloc(struct ctxs *c)
{
	void *p = NULL;
	CUresult rc = cuMemHostAlloc(&p, 1 << 20, 0);
	(void)c;
	if (!rc)
		cuMemFreeHost(p);
	return rc;
}
static CUresult r_allochost(struct ctxs *c)
{
	void *p = NULL;
	CUresult rc = cuMemAllocHost(&p, 1 << 20);
	(void)c;
	if (!rc)
		cuMemFreeHost(p);
	return rc;
}
static CUresult r_register(struct ctxs *c)
{
	CUresult rc = cuMemHostRegister(c->pageable, 4096, 0);
	if (!rc)
		cuMemHostUnregister(c->pageable);
	return rc;
}
static CUresult r_freehost(struct ctxs *c)
{
	CUresult rc = cuMemFreeHost(c->h);
	if (!rc)
		c->h = NULL;
	return rc;
}
static CUresult r_modload(struct ctxs *c)
{
	return cuModuleLoadData(&c->mod_new, ptx);
}
static CUresult r_modunload(struct ctxs *c)
{
	CUresult rc = cuModuleUnload(c->mod);
	if (!rc)
		c->mod = NULL;
	return rc;
}
static CUresult r_libload(struct ctxs *c)
{
	return cuLibraryLoadData(&c->lib_new, ptx, 0, 0, 0, 0, 0, 0);
}
static CUresult r_libunload(struct ctxs *c)
{
	CUresult rc = cuLibraryUnload(c->lib);
	if (!rc)
		c->lib = NULL;
	return rc;
}
static CUresult r_legacy_kernel(struct ctxs *c)
{
	return launch(NULL, c->d2 ? c->d2 : c->d);
}
static CUresult r_legacy_query(struct ctxs *c)
{
	(void)c;
	return cuStreamQuery(NULL);
}
static CUresult r_legacy_sync(struct ctxs *c)
{
	(void)c;
	return cuStreamSynchronize(NULL);
}
static CUresult r_legacy_copy(struct ctxs *c)
{
	return cuMemcpyDtoHAsync(c->h, c->d, 256, NULL);
}
static CUresult r_wait_plain(struct ctxs *c)
{
	return cuStreamWaitEvent(c->s, c->ev_plain, 0);
}
static CUresult r_execdestroy(struct ctxs *c)
{
	CUresult rc = cuGraphExecDestroy(c->pre_x);
	if (!rc)
		c->pre_x = NULL;
	return rc;
}
static CUresult r_graphdestroy(struct ctxs *c)
{
	CUresult rc = cuGraphDestroy(c->pre_g);
	if (!rc)
		c->pre_g = NULL;
	return rc;
}
static CUresult r_graphlaunch(struct ctxs *c)
{
	return cuGraphLaunch(c->pre_x, c->other);
}
static CUresult r_legacy_iscap(struct ctxs *c)
{
	CUstreamCaptureStatus st;
	(void)c;
	return cuStreamIsCapturing(NULL, &st);
}

/* The map's route names: the rows compare with docs/capture-map.md as they are. */
static const struct route routes[] = {
    {"control: cudaGetDevice (no driver work)", 0, r_ctxdev},
    {"control: cudaFree(NULL)", 0, r_free0},
    {"cudaStreamSynchronize(capturing)", 0, r_sync_cap},
    {"cudaStreamQuery(capturing)", 0, r_query_cap},
    {"cudaEventSynchronize(captured event)", 0, r_evsync},
    {"cudaEventQuery(captured event)", 0, r_evquery},
    {"cudaDeviceSynchronize (cuCtxSynchronize_v2)", 0, r_devsync},
    {"cuCtxSynchronize (2000 form)", 0, r_ctxsync},
    {"cudaStreamSynchronize(other stream)", 0, r_sync_other},
    {"cudaMalloc (cuMemAlloc_v2)", 0, r_malloc},
    {"cudaFree (cuMemFree_v2)", 0, r_free},
    {"cuMemHostAlloc", 0, r_hostalloc},
    {"cuMemAllocHost", 0, r_allochost},
    {"cuMemHostRegister", 0, r_register},
    {"cuMemFreeHost", 0, r_freehost},
    {"cuModuleLoadData", 0, r_modload},
    {"cuModuleUnload", 0, r_modunload},
    {"cuLibraryLoadData", 0, r_libload},
    {"cuLibraryUnload", 0, r_libunload},
    {"kernel on legacy stream (blocking capture)", 1, r_legacy_kernel},
    {"cudaStreamQuery(legacy) (blocking capture)", 1, r_legacy_query},
    {"cudaStreamSynchronize(legacy) (blocking capture)", 1, r_legacy_sync},
    {"cudaMemcpyAsync on legacy (blocking capture)", 1, r_legacy_copy},
    {"cudaStreamWaitEvent(uncaptured event)", 0, r_wait_plain},
    {"cudaGraphExecDestroy (unrelated exec)", 0, r_execdestroy},
    {"cudaGraphDestroy (unrelated graph)", 0, r_graphdestroy},
    {"cudaGraphLaunch (unrelated exec, other stream)", 0, r_graphlaunch},
    {"cudaStreamIsCapturing(legacy) (blocking capture)", 1, r_legacy_iscap},
};

static const char *mode_name(int m)
{
	return m == CU_STREAM_CAPTURE_MODE_GLOBAL	  ? "global"
	       : m == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL ? "thread_local"
							  : "relaxed";
}

static const char *status_name(CUstreamCaptureStatus st)
{
	return st == CU_STREAM_CAPTURE_STATUS_ACTIVE	    ? "active"
	       : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "INVALIDATED"
							    : "none";
}

static void setup(struct ctxs *c, int blocking)
{
	memset(c, 0, sizeof *c);
	cuStreamCreate(&c->s, blocking ? CU_STREAM_DEFAULT : CU_STREAM_NON_BLOCKING);
	cuStreamCreate(&c->other, CU_STREAM_NON_BLOCKING);
	cuEventCreate(&c->ev_cap, 0);
	cuEventCreate(&c->ev_plain, 0);
	cuMemAlloc(&c->d, 1 << 16);
	cuMemAlloc(&c->d2, 1 << 16);
	cuMemAllocHost(&c->h, 1 << 16);
	c->pageable = aligned_alloc(4096, 1 << 16);
	cuEventRecord(c->ev_plain, c->other);
	/* an unrelated graph and exec, made before the capture */
	cuStreamBeginCapture(c->other, CU_STREAM_CAPTURE_MODE_GLOBAL);
	launch(c->other, c->d);
	cuStreamEndCapture(c->other, &c->pre_g);
	cuGraphInstantiateWithFlags(&c->pre_x, c->pre_g, 0);
	cuModuleLoadData(&c->mod, ptx);
	cuLibraryLoadData(&c->lib, ptx, 0, 0, 0, 0, 0, 0);
	cuCtxSynchronize();
}

static void teardown(struct ctxs *c)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph g = NULL;
	if (cuStreamIsCapturing(c->s, &st) == CUDA_SUCCESS && st != CU_STREAM_CAPTURE_STATUS_NONE)
		cuStreamEndCapture(c->s, &g);
	if (g)
		cuGraphDestroy(g);
	cuCtxSynchronize();
	if (c->pre_x)
		cuGraphExecDestroy(c->pre_x);
	if (c->pre_g)
		cuGraphDestroy(c->pre_g);
	if (c->mod)
		cuModuleUnload(c->mod);
	if (c->lib)
		cuLibraryUnload(c->lib);
	if (c->mod_new)
		cuModuleUnload(c->mod_new);
	if (c->lib_new)
		cuLibraryUnload(c->lib_new);
	if (c->d)
		cuMemFree(c->d);
	if (c->d2)
		cuMemFree(c->d2);
	if (c->h)
		cuMemFreeHost(c->h);
	free(c->pageable);
	cuEventDestroy(c->ev_cap);
	cuEventDestroy(c->ev_plain);
	cuStreamDestroy(c->s);
	cuStreamDestroy(c->other);
}

static void begin(struct ctxs *c, int mode)
{
	cuStreamBeginCapture(c->s, (CUstreamCaptureMode)mode);
	launch(c->s, c->d);
	cuEventRecord(c->ev_cap, c->s);
}

struct job {
	const struct route *r;
	struct ctxs *c;
	CUresult rc;
};

static void *other_thread(void *arg)
{
	struct job *j = arg;
	cuCtxSetCurrent(ctx);
	j->rc = j->r->fn(j->c);
	return NULL;
}

static void one(const struct route *r, int mode, int other)
{
	struct ctxs c;
	struct job j = {r, &c, 0};
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	CUgraph g = NULL;
	CUresult end_rc;
	setup(&c, r->blocking);
	begin(&c, mode);
	if (other) {
		pthread_t t;
		pthread_create(&t, NULL, other_thread, &j);
		pthread_join(t, NULL);
	} else {
		j.rc = r->fn(&c);
	}
	cuStreamIsCapturing(c.s, &st);
	end_rc = cuStreamEndCapture(c.s, &g);
	if (g)
		cuGraphDestroy(g);
	printf("| %s | %s | %s | %d | %s | %d |\n", r->name, mode_name(mode), other ? "other" : "same", (int)j.rc,
	       status_name(st), (int)end_rc);
	fflush(stdout);
	teardown(&c);
}

struct endjob {
	struct ctxs *c;
	CUresult rc;
};

static void *end_other(void *arg)
{
	struct endjob *j = arg;
	CUgraph g = NULL;
	cuCtxSetCurrent(ctx);
	j->rc = cuStreamEndCapture(j->c->s, &g);
	if (g)
		cuGraphDestroy(g);
	return NULL;
}

/* The capture machinery's own answers, once per mode (capture_map.cu). */
static void machinery(int mode)
{
	struct ctxs c;
	CUgraph g = NULL;
	CUresult rc;
	CUstreamCaptureStatus st;
	const char *m = mode_name(mode);

	setup(&c, 0);
	rc = cuStreamEndCapture(c.other, &g);
	printf("| %s | %s | %s | %d | %s | - |\n", "end capture, stream not capturing", m, "same", (int)rc, "none");
	teardown(&c);

	setup(&c, 0);
	begin(&c, mode);
	cuStreamWaitEvent(c.other, c.ev_cap, 0);
	launch(c.other, c.d2);
	cuStreamIsCapturing(c.s, &st);
	rc = cuStreamEndCapture(c.s, &g);
	printf("| %s | %s | %s | %d | %s | %d |\n", "end capture, forked stream not joined", m, "same", 0,
	       status_name(st), (int)rc);
	if (g)
		cuGraphDestroy(g);
	g = NULL;
	teardown(&c);

	setup(&c, 0);
	begin(&c, mode);
	{
		struct endjob j = {&c, 0};
		pthread_t t;
		pthread_create(&t, NULL, end_other, &j);
		pthread_join(t, NULL);
		printf("| %s | %s | %s | %d | %s | - |\n", "end capture from another thread", m, "other", (int)j.rc,
		       "none");
	}
	teardown(&c);

	setup(&c, 0);
	{
		CUstream s2;
		CUevent e2;
		CUgraph g2 = NULL;
		CUresult e1, e2rc;
		cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING);
		cuEventCreate(&e2, 0);
		begin(&c, mode);
		cuStreamBeginCapture(s2, (CUstreamCaptureMode)mode);
		launch(s2, c.d2);
		cuEventRecord(e2, s2);
		rc = cuStreamWaitEvent(c.s, e2, 0);
		cuStreamIsCapturing(c.s, &st);
		e1 = cuStreamEndCapture(c.s, &g);
		e2rc = cuStreamEndCapture(s2, &g2);
		printf("| %s | %s | %s | %d | %s | %d (other capture's end %d) |\n",
		       "wait on an event of another capture", m, "same", (int)rc, status_name(st), (int)e1, (int)e2rc);
		if (g)
			cuGraphDestroy(g);
		if (g2)
			cuGraphDestroy(g2);
		cuEventDestroy(e2);
		cuStreamDestroy(s2);
	}
	teardown(&c);
}

int main(void)
{
	CUdevice dev;
	static const int modes[] = {CU_STREAM_CAPTURE_MODE_GLOBAL, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
				    CU_STREAM_CAPTURE_MODE_RELAXED};
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		printf("setup failed\n");
		return 1;
	}
	kernel_init();
	for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++)
		for (int m = 0; m < 3; m++)
			for (int o = 0; o < 2; o++)
				one(&routes[i], modes[m], o);
	for (int m = 0; m < 3; m++)
		machinery(modes[m]);
	return 0;
}
