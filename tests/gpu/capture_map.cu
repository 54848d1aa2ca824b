/*
 * tests/gpu/capture_map.cu -- the capture map, measured (issue 14, point 1).
 *
 * For every way a call can be refused during, or break, a stream capture,
 * in each capture mode (global, thread_local, relaxed), made from the
 * capturing thread and from another thread, record the real driver's
 * answer: the call's result, the capture's status right after it, and the
 * result of ending the capture. One line per (route, mode, thread):
 *   route | mode | thread | call rc | status after | end rc
 * status: active, INVALIDATED, none. The routes that concern the capture
 * machinery itself (903, 904, 905, 908, 902) are measured once per mode.
 * Build: nvcc -O2 -arch=sm_90 capture_map.cu -lcuda -o capture_map
 */
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <thread>
#include <vector>

__global__ void k(float *p)
{
	p[threadIdx.x] += 1.0f;
}

static const char ptx[] = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry e() { ret; }\n";

struct Ctx {
	cudaStream_t s;	      /* capturing stream (blocking or not, per route) */
	cudaStream_t other;   /* a non-blocking stream, not capturing */
	cudaEvent_t ev_cap;   /* recorded inside the capture */
	cudaEvent_t ev_plain; /* recorded outside any capture */
	float *d, *d2;
	void *h, *pageable;
	cudaGraph_t pre_g;
	cudaGraphExec_t pre_x;
	CUmodule mod, mod_new = nullptr;  /* *_new: loaded by a load route inside the */
	CUlibrary lib, lib_new = nullptr; /* capture, unloaded by teardown after its end */
};

struct Route {
	const char *name;
	bool blocking; /* capture on a blocking stream (legacy-stream routes) */
	std::function<int(Ctx &)> fn;
};

static const char *status_name(cudaStreamCaptureStatus st)
{
	return st == cudaStreamCaptureStatusActive	  ? "active"
	       : st == cudaStreamCaptureStatusInvalidated ? "INVALIDATED"
							  : "none";
}

static const char *mode_name(int m)
{
	return m == cudaStreamCaptureModeGlobal	       ? "global"
	       : m == cudaStreamCaptureModeThreadLocal ? "thread_local"
						       : "relaxed";
}

static std::vector<Route> routes()
{
	std::vector<Route> r;
	auto add = [&](const char *n, bool b, std::function<int(Ctx &)> f) { r.push_back({n, b, f}); };
	add("control: cudaGetDevice (no driver work)", false, [](Ctx &) {
		int d;
		return (int)cudaGetDevice(&d);
	});
	add("control: cudaFree(NULL)", false, [](Ctx &) { return (int)cudaFree(nullptr); });
	add("cudaStreamSynchronize(capturing)", false, [](Ctx &c) { return (int)cudaStreamSynchronize(c.s); });
	add("cudaStreamQuery(capturing)", false, [](Ctx &c) { return (int)cudaStreamQuery(c.s); });
	add("cudaEventSynchronize(captured event)", false, [](Ctx &c) { return (int)cudaEventSynchronize(c.ev_cap); });
	add("cudaEventQuery(captured event)", false, [](Ctx &c) { return (int)cudaEventQuery(c.ev_cap); });
	add("cudaDeviceSynchronize (cuCtxSynchronize_v2)", false, [](Ctx &) { return (int)cudaDeviceSynchronize(); });
	add("cuCtxSynchronize (2000 form)", false, [](Ctx &) { return (int)cuCtxSynchronize(); });
	add("cudaStreamSynchronize(other stream)", false, [](Ctx &c) { return (int)cudaStreamSynchronize(c.other); });
	add("cudaMemcpy D2H (sync)", false,
	    [](Ctx &c) { return (int)cudaMemcpy(c.h, c.d, 256, cudaMemcpyDeviceToHost); });
	add("cudaMemcpy H2D pageable (sync)", false,
	    [](Ctx &c) { return (int)cudaMemcpy(c.d, c.pageable, 256, cudaMemcpyHostToDevice); });
	add("cudaMemset (sync)", false, [](Ctx &c) { return (int)cudaMemset(c.d, 0, 256); });
	add("cudaMalloc (cuMemAlloc_v2)", false, [](Ctx &) {
		void *p = nullptr;
		int rc = (int)cudaMalloc(&p, 1 << 20);
		if (!rc)
			cudaFree(p);
		return rc;
	});
	add("cudaFree (cuMemFree_v2)", false, [](Ctx &c) {
		int rc = (int)cudaFree(c.d2);
		if (!rc)
			c.d2 = nullptr;
		return rc;
	});
	add("cuMemHostAlloc", false, [](Ctx &) {
		void *p = nullptr;
		int rc = (int)cuMemHostAlloc(&p, 1 << 20, 0);
		if (!rc)
			cuMemFreeHost(p);
		return rc;
	});
	add("cudaHostAlloc", false, [](Ctx &) {
		void *p = nullptr;
		int rc = (int)cudaHostAlloc(&p, 1 << 20, 0);
		if (!rc)
			cudaFreeHost(p);
		return rc;
	});
	add("cuMemAllocHost", false, [](Ctx &) {
		void *p = nullptr;
		int rc = (int)cuMemAllocHost(&p, 1 << 20);
		if (!rc)
			cuMemFreeHost(p);
		return rc;
	});
	add("cuMemHostRegister", false, [](Ctx &c) {
		int rc = (int)cuMemHostRegister(c.pageable, 4096, 0);
		if (!rc)
			cuMemHostUnregister(c.pageable);
		return rc;
	});
	add("cuMemFreeHost", false, [](Ctx &c) {
		int rc = (int)cuMemFreeHost(c.h);
		if (!rc)
			c.h = nullptr;
		return rc;
	});
	add("cudaMallocManaged", false, [](Ctx &) {
		void *p = nullptr;
		int rc = (int)cudaMallocManaged(&p, 1 << 20);
		if (!rc)
			cudaFree(p);
		return rc;
	});
	add("cuModuleLoadData", false, [](Ctx &c) { return (int)cuModuleLoadData(&c.mod_new, ptx); });
	add("cuModuleUnload", false, [](Ctx &c) {
		int rc = (int)cuModuleUnload(c.mod);
		if (!rc)
			c.mod = nullptr;
		return rc;
	});
	add("cuLibraryLoadData", false,
	    [](Ctx &c) { return (int)cuLibraryLoadData(&c.lib_new, ptx, 0, 0, 0, 0, 0, 0); });
	add("cuLibraryUnload", false, [](Ctx &c) {
		int rc = (int)cuLibraryUnload(c.lib);
		if (!rc)
			c.lib = nullptr;
		return rc;
	});
	add("kernel on legacy stream (blocking capture)", true, [](Ctx &c) {
		k<<<1, 32, 0, 0>>>(c.d2 ? c.d2 : c.d);
		return (int)cudaGetLastError();
	});
	add("cudaStreamQuery(legacy) (blocking capture)", true, [](Ctx &) { return (int)cudaStreamQuery(0); });
	add("cudaStreamSynchronize(legacy) (blocking capture)", true,
	    [](Ctx &) { return (int)cudaStreamSynchronize(0); });
	add("cudaMemcpyAsync on legacy (blocking capture)", true,
	    [](Ctx &c) { return (int)cudaMemcpyAsync(c.h, c.d, 256, cudaMemcpyDeviceToHost, 0); });
	add("cudaStreamWaitEvent(uncaptured event)", false,
	    [](Ctx &c) { return (int)cudaStreamWaitEvent(c.s, c.ev_plain, 0); });
	add("cudaGraphExecDestroy (unrelated exec)", false, [](Ctx &c) {
		int rc = (int)cudaGraphExecDestroy(c.pre_x);
		if (!rc)
			c.pre_x = nullptr;
		return rc;
	});
	add("cudaGraphDestroy (unrelated graph)", false, [](Ctx &c) {
		int rc = (int)cudaGraphDestroy(c.pre_g);
		if (!rc)
			c.pre_g = nullptr;
		return rc;
	});
	add("cudaGraphLaunch (unrelated exec, other stream)", false,
	    [](Ctx &c) { return (int)cudaGraphLaunch(c.pre_x, c.other); });
	add("cudaStreamAttachMemAsync", false,
	    [](Ctx &c) { return (int)cudaStreamAttachMemAsync(c.s, c.d, 0, cudaMemAttachSingle); });
	add("cudaEventRecord(other stream) + query", false, [](Ctx &c) {
		cudaEventRecord(c.ev_plain, c.other);
		return (int)cudaEventQuery(c.ev_plain);
	});
	add("cudaStreamIsCapturing(legacy) (blocking capture)", true, [](Ctx &) {
		cudaStreamCaptureStatus st;
		return (int)cudaStreamIsCapturing(0, &st);
	});
	return r;
}

static void setup(Ctx &c, bool blocking)
{
	memset(&c, 0, sizeof c);
	cudaStreamCreateWithFlags(&c.s, blocking ? cudaStreamDefault : cudaStreamNonBlocking);
	cudaStreamCreateWithFlags(&c.other, cudaStreamNonBlocking);
	cudaEventCreate(&c.ev_cap);
	cudaEventCreate(&c.ev_plain);
	cudaMalloc(&c.d, 1 << 16);
	cudaMalloc(&c.d2, 1 << 16);
	cudaMallocHost(&c.h, 1 << 16);
	c.pageable = aligned_alloc(4096, 1 << 16);
	cudaEventRecord(c.ev_plain, c.other);
	/* an unrelated graph and exec, made before the capture */
	cudaStreamBeginCapture(c.other, cudaStreamCaptureModeGlobal);
	k<<<1, 32, 0, c.other>>>(c.d);
	cudaStreamEndCapture(c.other, &c.pre_g);
	cudaGraphInstantiate(&c.pre_x, c.pre_g, 0);
	cuModuleLoadData(&c.mod, ptx);
	cuLibraryLoadData(&c.lib, ptx, 0, 0, 0, 0, 0, 0);
	cudaDeviceSynchronize();
}

static void teardown(Ctx &c)
{
	cudaStreamCaptureStatus st;
	cudaGraph_t g = nullptr;
	if (cudaStreamIsCapturing(c.s, &st) == cudaSuccess && st != cudaStreamCaptureStatusNone)
		cudaStreamEndCapture(c.s, &g);
	if (g)
		cudaGraphDestroy(g);
	cudaGetLastError();
	cudaDeviceSynchronize();
	cudaGetLastError();
	if (c.pre_x)
		cudaGraphExecDestroy(c.pre_x);
	if (c.pre_g)
		cudaGraphDestroy(c.pre_g);
	if (c.mod)
		cuModuleUnload(c.mod);
	if (c.lib)
		cuLibraryUnload(c.lib);
	if (c.mod_new)
		cuModuleUnload(c.mod_new);
	if (c.lib_new)
		cuLibraryUnload(c.lib_new);
	if (c.d)
		cudaFree(c.d);
	if (c.d2)
		cudaFree(c.d2);
	if (c.h)
		cudaFreeHost(c.h);
	free(c.pageable);
	cudaEventDestroy(c.ev_cap);
	cudaEventDestroy(c.ev_plain);
	cudaStreamDestroy(c.s);
	cudaStreamDestroy(c.other);
	cudaGetLastError();
}

/* Begin a capture in `mode` with one kernel and the captured event. */
static void begin(Ctx &c, int mode)
{
	cudaStreamBeginCapture(c.s, (cudaStreamCaptureMode)mode);
	k<<<1, 32, 0, c.s>>>(c.d);
	cudaEventRecord(c.ev_cap, c.s);
}

static void one(const Route &r, int mode, bool other_thread)
{
	Ctx c;
	int rc = -1, end_rc;
	cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
	cudaGraph_t g = nullptr;
	setup(c, r.blocking);
	begin(c, mode);
	if (other_thread) {
		std::thread t([&] { rc = r.fn(c); });
		t.join();
	} else {
		rc = r.fn(c);
	}
	cudaStreamIsCapturing(c.s, &st);
	end_rc = (int)cudaStreamEndCapture(c.s, &g);
	if (g)
		cudaGraphDestroy(g);
	printf("%-48s | %-12s | %-6s | %4d | %-11s | %d\n", r.name, mode_name(mode), other_thread ? "other" : "same",
	       rc, status_name(st), end_rc);
	fflush(stdout);
	teardown(c);
}

/* The capture machinery's own refusals, once per mode. */
static void machinery(int mode)
{
	Ctx c;
	cudaGraph_t g = nullptr;
	int rc;
	const char *m = mode_name(mode);
	cudaStreamCaptureStatus st;

	setup(c, false); /* 903: end on a stream that is not capturing */
	rc = (int)cudaStreamEndCapture(c.other, &g);
	printf("%-48s | %-12s | %-6s | %4d | %-11s | -\n", "end capture, stream not capturing", m, "same", rc, "none");
	teardown(c);

	setup(c, false); /* 904: fork to another stream, not joined */
	begin(c, mode);
	cudaStreamWaitEvent(c.other, c.ev_cap, 0);
	k<<<1, 32, 0, c.other>>>(c.d2);
	cudaStreamIsCapturing(c.s, &st);
	rc = (int)cudaStreamEndCapture(c.s, &g);
	printf("%-48s | %-12s | %-6s | %4d | %-11s | %d\n", "end capture, forked stream not joined", m, "same", 0,
	       status_name(st), rc);
	if (g)
		cudaGraphDestroy(g);
	g = nullptr;
	teardown(c);

	setup(c, false); /* 908: end from another thread */
	begin(c, mode);
	std::thread t([&] { rc = (int)cudaStreamEndCapture(c.s, &g); });
	t.join();
	cudaStreamIsCapturing(c.s, &st);
	printf("%-48s | %-12s | %-6s | %4d | %-11s | -\n", "end capture from another thread", m, "other", rc,
	       status_name(st));
	if (g)
		cudaGraphDestroy(g);
	g = nullptr;
	teardown(c);

	setup(c, false); /* 902: join two captures through an event */
	{
		cudaStream_t s2;
		cudaEvent_t e2;
		cudaGraph_t g2 = nullptr;
		cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking);
		cudaEventCreate(&e2);
		begin(c, mode);
		cudaStreamBeginCapture(s2, (cudaStreamCaptureMode)mode);
		k<<<1, 32, 0, s2>>>(c.d2);
		cudaEventRecord(e2, s2);
		rc = (int)cudaStreamWaitEvent(c.s, e2, 0);
		cudaStreamIsCapturing(c.s, &st);
		int e1 = (int)cudaStreamEndCapture(c.s, &g);
		int e2rc = (int)cudaStreamEndCapture(s2, &g2);
		printf("%-48s | %-12s | %-6s | %4d | %-11s | %d (other capture's end %d)\n",
		       "wait on an event of another capture", m, "same", rc, status_name(st), e1, e2rc);
		if (g)
			cudaGraphDestroy(g);
		if (g2)
			cudaGraphDestroy(g2);
		g = nullptr;
		cudaEventDestroy(e2);
		cudaStreamDestroy(s2);
	}
	teardown(c);
}

int main()
{
	cudaFree(0);
	cuInit(0);
	int drv = 0;
	cuDriverGetVersion(&drv);
	printf("driver %d\n", drv);
	printf("%-48s | %-12s | %-6s | %4s | %-11s | %s\n", "route", "mode", "thread", "rc", "after", "end rc");
	auto rs = routes();
	for (auto &r : rs)
		for (int mode :
		     {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed})
			for (bool ot : {false, true})
				one(r, mode, ot);
	for (int mode : {cudaStreamCaptureModeGlobal, cudaStreamCaptureModeThreadLocal, cudaStreamCaptureModeRelaxed})
		machinery(mode);
	return 0;
}
