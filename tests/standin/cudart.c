/*
 * tests/standin/cudart.c -- CPU stand-in for the shared CUDA runtime (TEST DOUBLE).
 *
 * Built twice: libcudart.so.13 (default) and, with -DSTANDIN_CUDART_MAJOR=11,
 * libcudart.so.11.0 with the 11.x ABI of the calls whose signature changed in
 * 12.0 (cudaGraphInstantiate, cudaGraphExecUpdate, cudaStreamGetCaptureInfo,
 * cudaGetDriverEntryPoint). Never installed.
 *
 * It reaches the driver exactly as the real runtimes do (cuda-facts §1): on first
 * use, dlopen("libcuda.so.1"), ONE dlsym(handle, "cuGetProcAddress_v2"),
 * through it the queries "" , "cuInit"@2000, "cuGetProcAddress"@11030 and
 * @12000, and every other entry point through the pointer the @12000 query
 * returned, at the runtime's own version (13000 / 11080), flags 0. No other
 * CUDA name is ever dlsym'd; the stand-in's own standin_runtime_kernel is
 * (below: kernels).
 *
 * Error codes map 1:1 (cudaError_t == CUresult for every code used here).
 * The last non-success result is kept per thread for cudaGetLastError /
 * cudaPeekAtLastError.
 */
#define _GNU_SOURCE
/* for the legacy PFN typedefs (e.g. PFN_cuGraphInstantiate_v11000) */
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#ifndef STANDIN_CUDART_MAJOR
#define STANDIN_CUDART_MAJOR 13
#endif

#if STANDIN_CUDART_MAJOR >= 12
#define RT_VERSION 13000
#define RT12 1
#define PFN_cuCtxSynchronize_vRT PFN_cuCtxSynchronize_v13000
#else
#define RT_VERSION 11080
#define RT12 0
#define PFN_cuCtxSynchronize_vRT PFN_cuCtxSynchronize_v2000
#endif

#define EXPORT __attribute__((visibility("default")))

/* Driver entry points: field, base name requested, PFN of the variant the
 * driver returns at RT_VERSION. */
#if RT12
#define DRV_VERSIONED(X)                                                                                               \
	X(streamBeginCapture, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010)                                 \
	X(streamGetCaptureInfo, "cuStreamGetCaptureInfo", PFN_cuStreamGetCaptureInfo_v12030)                           \
	X(streamUpdateCaptureDependencies, "cuStreamUpdateCaptureDependencies",                                        \
	  PFN_cuStreamUpdateCaptureDependencies_v12030)                                                                \
	X(graphInstantiate, "cuGraphInstantiateWithFlags", PFN_cuGraphInstantiateWithFlags_v11040)                     \
	X(graphInstantiateWithParams, "cuGraphInstantiateWithParams", PFN_cuGraphInstantiateWithParams_v12000)         \
	X(graphExecGetFlags, "cuGraphExecGetFlags", PFN_cuGraphExecGetFlags_v12000)                                    \
	X(graphExecUpdate, "cuGraphExecUpdate", PFN_cuGraphExecUpdate_v12000)                                          \
	X(graphAddKernelNode, "cuGraphAddKernelNode", PFN_cuGraphAddKernelNode_v12000)                                 \
	X(graphKernelNodeGetParams, "cuGraphKernelNodeGetParams", PFN_cuGraphKernelNodeGetParams_v12000)               \
	X(graphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", PFN_cuGraphExecKernelNodeSetParams_v12000)
#else
#define DRV_VERSIONED(X)                                                                                               \
	X(streamBeginCapture, "cuStreamBeginCapture", PFN_cuStreamBeginCapture_v10010)                                 \
	X(streamGetCaptureInfo, "cuStreamGetCaptureInfo", PFN_cuStreamGetCaptureInfo_v11030)                           \
	X(graphInstantiate, "cuGraphInstantiate", PFN_cuGraphInstantiate_v11000)                                       \
	X(graphExecUpdate, "cuGraphExecUpdate", PFN_cuGraphExecUpdate_v10020)                                          \
	X(graphAddKernelNode, "cuGraphAddKernelNode", PFN_cuGraphAddKernelNode_v10000)                                 \
	X(graphKernelNodeGetParams, "cuGraphKernelNodeGetParams", PFN_cuGraphKernelNodeGetParams_v10000)               \
	X(graphExecKernelNodeSetParams, "cuGraphExecKernelNodeSetParams", PFN_cuGraphExecKernelNodeSetParams_v10010)
#endif

#define DRV_LIST(X)                                                                                                    \
	X(driverGetVersion, "cuDriverGetVersion", PFN_cuDriverGetVersion_v2020)                                        \
	X(deviceGetCount, "cuDeviceGetCount", PFN_cuDeviceGetCount_v2000)                                              \
	X(deviceGet, "cuDeviceGet", PFN_cuDeviceGet_v2000)                                                             \
	X(primaryCtxRetain, "cuDevicePrimaryCtxRetain", PFN_cuDevicePrimaryCtxRetain_v7000)                            \
	X(primaryCtxReset, "cuDevicePrimaryCtxReset", PFN_cuDevicePrimaryCtxReset_v11000)                              \
	X(ctxSetCurrent, "cuCtxSetCurrent", PFN_cuCtxSetCurrent_v4000)                                                 \
	X(ctxSynchronize, "cuCtxSynchronize", PFN_cuCtxSynchronize_vRT)                                                \
	X(getErrorName, "cuGetErrorName", PFN_cuGetErrorName_v6000)                                                    \
	X(getErrorString, "cuGetErrorString", PFN_cuGetErrorString_v6000)                                              \
	X(streamCreate, "cuStreamCreate", PFN_cuStreamCreate_v2000)                                                    \
	X(streamDestroy, "cuStreamDestroy", PFN_cuStreamDestroy_v4000)                                                 \
	X(streamSynchronize, "cuStreamSynchronize", PFN_cuStreamSynchronize_v2000)                                     \
	X(streamWaitEvent, "cuStreamWaitEvent", PFN_cuStreamWaitEvent_v3020)                                           \
	X(streamEndCapture, "cuStreamEndCapture", PFN_cuStreamEndCapture_v10000)                                       \
	X(streamIsCapturing, "cuStreamIsCapturing", PFN_cuStreamIsCapturing_v10000)                                    \
	X(threadExchangeStreamCaptureMode, "cuThreadExchangeStreamCaptureMode",                                        \
	  PFN_cuThreadExchangeStreamCaptureMode_v10010)                                                                \
	X(eventCreate, "cuEventCreate", PFN_cuEventCreate_v2000)                                                       \
	X(eventDestroy, "cuEventDestroy", PFN_cuEventDestroy_v4000)                                                    \
	X(eventRecord, "cuEventRecord", PFN_cuEventRecord_v2000)                                                       \
	X(eventSynchronize, "cuEventSynchronize", PFN_cuEventSynchronize_v2000)                                        \
	X(eventQuery, "cuEventQuery", PFN_cuEventQuery_v2000)                                                          \
	X(libraryLoadData, "cuLibraryLoadData", PFN_cuLibraryLoadData_v12000)                                          \
	X(libraryUnload, "cuLibraryUnload", PFN_cuLibraryUnload_v12000)                                                \
	X(streamQuery, "cuStreamQuery", PFN_cuStreamQuery_v2000)                                                       \
	X(memAlloc, "cuMemAlloc", PFN_cuMemAlloc_v3020)                                                                \
	X(memFree, "cuMemFree", PFN_cuMemFree_v3020)                                                                   \
	X(memHostAlloc, "cuMemHostAlloc", PFN_cuMemHostAlloc_v2020)                                                    \
	X(memFreeHost, "cuMemFreeHost", PFN_cuMemFreeHost_v2000)                                                       \
	X(memGetInfo, "cuMemGetInfo", PFN_cuMemGetInfo_v3020)                                                          \
	X(memcpy, "cuMemcpy", PFN_cuMemcpy_v4000)                                                                      \
	X(memcpyHtoD, "cuMemcpyHtoD", PFN_cuMemcpyHtoD_v3020)                                                          \
	X(memcpyDtoH, "cuMemcpyDtoH", PFN_cuMemcpyDtoH_v3020)                                                          \
	X(memcpyDtoD, "cuMemcpyDtoD", PFN_cuMemcpyDtoD_v3020)                                                          \
	X(memcpyAsync, "cuMemcpyAsync", PFN_cuMemcpyAsync_v4000)                                                       \
	X(memcpyHtoDAsync, "cuMemcpyHtoDAsync", PFN_cuMemcpyHtoDAsync_v3020)                                           \
	X(memcpyDtoHAsync, "cuMemcpyDtoHAsync", PFN_cuMemcpyDtoHAsync_v3020)                                           \
	X(memcpyDtoDAsync, "cuMemcpyDtoDAsync", PFN_cuMemcpyDtoDAsync_v3020)                                           \
	X(memsetD8, "cuMemsetD8", PFN_cuMemsetD8_v3020)                                                                \
	X(memsetD8Async, "cuMemsetD8Async", PFN_cuMemsetD8Async_v3020)                                                 \
	X(memAllocAsync, "cuMemAllocAsync", PFN_cuMemAllocAsync_v11020)                                                \
	X(memAllocFromPoolAsync, "cuMemAllocFromPoolAsync", PFN_cuMemAllocFromPoolAsync_v11020)                        \
	X(memFreeAsync, "cuMemFreeAsync", PFN_cuMemFreeAsync_v11020)                                                   \
	X(memPoolCreate, "cuMemPoolCreate", PFN_cuMemPoolCreate_v11020)                                                \
	X(memPoolDestroy, "cuMemPoolDestroy", PFN_cuMemPoolDestroy_v11020)                                             \
	X(memPoolSetAttribute, "cuMemPoolSetAttribute", PFN_cuMemPoolSetAttribute_v11020)                              \
	X(memPoolGetAttribute, "cuMemPoolGetAttribute", PFN_cuMemPoolGetAttribute_v11020)                              \
	X(deviceGetDefaultMemPool, "cuDeviceGetDefaultMemPool", PFN_cuDeviceGetDefaultMemPool_v11020)                  \
	X(deviceGetMemPool, "cuDeviceGetMemPool", PFN_cuDeviceGetMemPool_v11020)                                       \
	X(deviceSetMemPool, "cuDeviceSetMemPool", PFN_cuDeviceSetMemPool_v11020)                                       \
	X(deviceGetGraphMemAttribute, "cuDeviceGetGraphMemAttribute", PFN_cuDeviceGetGraphMemAttribute_v11040)         \
	X(deviceSetGraphMemAttribute, "cuDeviceSetGraphMemAttribute", PFN_cuDeviceSetGraphMemAttribute_v11040)         \
	X(deviceGraphMemTrim, "cuDeviceGraphMemTrim", PFN_cuDeviceGraphMemTrim_v11040)                                 \
	X(launchKernel, "cuLaunchKernel", PFN_cuLaunchKernel_v4000)                                                    \
	X(graphCreate, "cuGraphCreate", PFN_cuGraphCreate_v10000)                                                      \
	X(graphDestroy, "cuGraphDestroy", PFN_cuGraphDestroy_v10000)                                                   \
	X(graphClone, "cuGraphClone", PFN_cuGraphClone_v10000)                                                         \
	X(graphInstantiateWithFlags, "cuGraphInstantiateWithFlags", PFN_cuGraphInstantiateWithFlags_v11040)            \
	X(graphLaunch, "cuGraphLaunch", PFN_cuGraphLaunch_v10000)                                                      \
	X(graphUpload, "cuGraphUpload", PFN_cuGraphUpload_v11010)                                                      \
	X(graphExecDestroy, "cuGraphExecDestroy", PFN_cuGraphExecDestroy_v10000)                                       \
	X(graphGetNodes, "cuGraphGetNodes", PFN_cuGraphGetNodes_v10000)                                                \
	X(graphDestroyNode, "cuGraphDestroyNode", PFN_cuGraphDestroyNode_v10000)                                       \
	X(graphNodeGetType, "cuGraphNodeGetType", PFN_cuGraphNodeGetType_v10000)                                       \
	X(graphAddMemAllocNode, "cuGraphAddMemAllocNode", PFN_cuGraphAddMemAllocNode_v11040)                           \
	X(graphAddMemFreeNode, "cuGraphAddMemFreeNode", PFN_cuGraphAddMemFreeNode_v11040)                              \
	X(graphMemAllocNodeGetParams, "cuGraphMemAllocNodeGetParams", PFN_cuGraphMemAllocNodeGetParams_v11040)         \
	X(graphAddEmptyNode, "cuGraphAddEmptyNode", PFN_cuGraphAddEmptyNode_v10000)                                    \
	X(graphAddChildGraphNode, "cuGraphAddChildGraphNode", PFN_cuGraphAddChildGraphNode_v10000)                     \
	X(graphChildGraphNodeGetGraph, "cuGraphChildGraphNodeGetGraph", PFN_cuGraphChildGraphNodeGetGraph_v10000)      \
	DRV_VERSIONED(X)

static struct {
	PFN_cuInit_v2000 init;
	PFN_cuGetProcAddress_v11030 getProcAddress_v1;
	PFN_cuGetProcAddress_v12000 getProcAddress; /* the self-looked-up pointer */
#define X(field, name, pfn) pfn field;
	DRV_LIST(X)
#undef X
} d;

/* The stand-in driver's CUkernel of a host function (driver.c), NULL with
 * another driver. */
typedef CUresult (*standin_rtk_fn)(CUkernel *out, const void *fn);
static standin_rtk_fn g_rtk;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static cudaError_t g_init_err;
static CUcontext g_ctx;
static __thread int t_ctx_set;
static __thread cudaError_t t_last;
static __thread int t_device;

static void init_once(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW);
	if (!h) {
		g_init_err = cudaErrorInsufficientDriver;
		return;
	}
	PFN_cuGetProcAddress_v12000 gpa = (PFN_cuGetProcAddress_v12000)dlsym(h, "cuGetProcAddress_v2");
	g_rtk = (standin_rtk_fn)dlsym(h, "standin_runtime_kernel");
	if (!gpa) {
		g_init_err = cudaErrorInsufficientDriver;
		return;
	}
	void *p = NULL;
	CUdriverProcAddressQueryResult st;
	gpa("", &p, 0, 0, &st);
	p = NULL;
	gpa("cuInit", &p, 2000, 0, &st);
	d.init = (PFN_cuInit_v2000)p;
	p = NULL;
	gpa("cuGetProcAddress", &p, 11030, 0, &st);
	d.getProcAddress_v1 = (PFN_cuGetProcAddress_v11030)p;
	p = NULL;
	gpa("cuGetProcAddress", &p, 12000, 0, &st);
	d.getProcAddress = (PFN_cuGetProcAddress_v12000)p;
	if (!d.init || !d.getProcAddress) {
		g_init_err = cudaErrorInsufficientDriver;
		return;
	}
#define X(field, name, pfn)                                                                                            \
	p = NULL;                                                                                                      \
	d.getProcAddress(name, &p, RT_VERSION, 0, NULL);                                                               \
	d.field = (pfn)p;
	DRV_LIST(X)
#undef X
	if (d.init(0) != CUDA_SUCCESS) {
		g_init_err = cudaErrorInitializationError;
		return;
	}
	if (!d.primaryCtxRetain || d.primaryCtxRetain(&g_ctx, 0) != CUDA_SUCCESS)
		g_init_err = cudaErrorNoDevice;
}

static cudaError_t ret(CUresult rc)
{
	if (rc != CUDA_SUCCESS)
		t_last = (cudaError_t)rc;
	return (cudaError_t)rc;
}

static cudaError_t rt_init(void)
{
	pthread_once(&g_once, init_once);
	if (g_init_err)
		return g_init_err;
	if (!t_ctx_set) {
		t_ctx_set = 1;
		if (d.ctxSetCurrent)
			d.ctxSetCurrent(g_ctx);
	}
	return cudaSuccess;
}

#define INIT()                                                                                                         \
	do {                                                                                                           \
		cudaError_t e_ = rt_init();                                                                            \
		if (e_)                                                                                                \
			return ret((CUresult)e_);                                                                      \
	} while (0)

/* Call driver entry point `field`; CUDA_ERROR_NOT_FOUND if the driver lacked it. */
#define DRV(field, ...) ret(d.field ? d.field(__VA_ARGS__) : CUDA_ERROR_NOT_FOUND)

#define CUS(s) ((CUstream)(s))
#define DP(p) ((CUdeviceptr)(uintptr_t)(p))

/* ------------------------------------------------------------------------ */
/* errors, versions, devices                                                 */

EXPORT cudaError_t cudaGetLastError(void)
{
	cudaError_t e = t_last;
	t_last = cudaSuccess;
	return e;
}

EXPORT cudaError_t cudaPeekAtLastError(void)
{
	return t_last;
}

struct rtname {
	int code;
	const char *name;
};

static const struct rtname g_rtnames[] = {
    {0, "cudaSuccess"},
    {1, "cudaErrorInvalidValue"},
    {2, "cudaErrorMemoryAllocation"},
    {3, "cudaErrorInitializationError"},
    {35, "cudaErrorInsufficientDriver"},
    {100, "cudaErrorNoDevice"},
    {101, "cudaErrorInvalidDevice"},
    {201, "cudaErrorDeviceUninitialized"},
    {400, "cudaErrorInvalidResourceHandle"},
    {401, "cudaErrorIllegalState"},
    {500, "cudaErrorSymbolNotFound"},
    {600, "cudaErrorNotReady"},
    {801, "cudaErrorNotSupported"},
    {900, "cudaErrorStreamCaptureUnsupported"},
    {901, "cudaErrorStreamCaptureInvalidated"},
    {902, "cudaErrorStreamCaptureMerge"},
    {903, "cudaErrorStreamCaptureUnmatched"},
    {904, "cudaErrorStreamCaptureUnjoined"},
    {905, "cudaErrorStreamCaptureIsolation"},
    {906, "cudaErrorStreamCaptureImplicit"},
    {907, "cudaErrorCapturedEvent"},
    {908, "cudaErrorStreamCaptureWrongThread"},
    {910, "cudaErrorGraphExecUpdateFailure"},
    {999, "cudaErrorUnknown"},
};

EXPORT const char *cudaGetErrorName(cudaError_t error)
{
	for (size_t i = 0; i < sizeof g_rtnames / sizeof g_rtnames[0]; i++)
		if (g_rtnames[i].code == (int)error)
			return g_rtnames[i].name;
	return "unrecognized error code";
}

EXPORT const char *cudaGetErrorString(cudaError_t error)
{
	const char *s = NULL;
	if (rt_init() == cudaSuccess && d.getErrorString && d.getErrorString((CUresult)error, &s) == CUDA_SUCCESS && s)
		return s;
	return "unrecognized error code";
}

EXPORT cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)
{
	if (!runtimeVersion)
		return ret(CUDA_ERROR_INVALID_VALUE);
	*runtimeVersion = RT_VERSION;
	return cudaSuccess;
}

EXPORT cudaError_t cudaDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return ret(CUDA_ERROR_INVALID_VALUE);
	if (rt_init() != cudaSuccess) {
		*driverVersion = 0;
		return cudaSuccess;
	}
	return DRV(driverGetVersion, driverVersion);
}

EXPORT cudaError_t cudaGetDeviceCount(int *count)
{
	INIT();
	return DRV(deviceGetCount, count);
}

/* The device's primary context becomes the thread's current one, as the
 * real runtime does (the stand-in driver has STANDIN_DEVICES devices). */
EXPORT cudaError_t cudaSetDevice(int device)
{
	int n = 0;
	CUcontext ctx = NULL;
	INIT();
	if (!d.deviceGetCount || d.deviceGetCount(&n) != CUDA_SUCCESS || device < 0 || device >= n)
		return ret((CUresult)cudaErrorInvalidDevice);
	if (!d.primaryCtxRetain || d.primaryCtxRetain(&ctx, device) != CUDA_SUCCESS)
		return ret((CUresult)cudaErrorInvalidDevice);
	if (d.ctxSetCurrent)
		d.ctxSetCurrent(ctx);
	t_device = device;
	return cudaSuccess;
}

/* Peer access: every pair of stand-in devices can reach each other; the
 * driver keeps no peer state (memory is host memory). */
EXPORT cudaError_t cudaDeviceCanAccessPeer(int *canAccessPeer, int device, int peerDevice)
{
	int n = 0;
	INIT();
	if (!canAccessPeer || !d.deviceGetCount || d.deviceGetCount(&n) != CUDA_SUCCESS)
		return ret(CUDA_ERROR_INVALID_VALUE);
	if (device < 0 || device >= n || peerDevice < 0 || peerDevice >= n)
		return ret((CUresult)cudaErrorInvalidDevice);
	*canAccessPeer = device != peerDevice;
	return cudaSuccess;
}

EXPORT cudaError_t cudaDeviceEnablePeerAccess(int peerDevice, unsigned int flags)
{
	int n = 0;
	INIT();
	if (flags || !d.deviceGetCount || d.deviceGetCount(&n) != CUDA_SUCCESS)
		return ret(CUDA_ERROR_INVALID_VALUE);
	if (peerDevice < 0 || peerDevice >= n || peerDevice == t_device)
		return ret((CUresult)cudaErrorInvalidDevice);
	return cudaSuccess;
}

EXPORT cudaError_t cudaGetDevice(int *device)
{
	INIT();
	if (!device)
		return ret(CUDA_ERROR_INVALID_VALUE);
	*device = t_device;
	return cudaSuccess;
}

/* The current device's primary context is reset (the 11000 form, which
 * both runtime versions ask for), as the real runtime's cudaDeviceReset:
 * every object the program made on the device goes; the context stays
 * current on this thread (the stand-in driver's context handle does not
 * change). Parity: the real runtime also drops its own state of the
 * device (its module registrations, made again at the next launch); the
 * stand-in runtime keeps none that the reset invalidates. */
EXPORT cudaError_t cudaDeviceReset(void)
{
	INIT();
	return DRV(primaryCtxReset, (CUdevice)t_device);
}

EXPORT cudaError_t cudaDeviceSynchronize(void)
{
	INIT();
#if RT12
	return DRV(ctxSynchronize, NULL); /* 13.0 asks for the 13000 form (the context: NULL = current) */
#else
	return DRV(ctxSynchronize);
#endif
}

/* ------------------------------------------------------------------------ */
/* streams, events                                                           */

EXPORT cudaError_t cudaStreamCreate(cudaStream_t *pStream)
{
	INIT();
	return DRV(streamCreate, (CUstream *)pStream, 0);
}

EXPORT cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)
{
	INIT();
	return DRV(streamCreate, (CUstream *)pStream, flags);
}

EXPORT cudaError_t cudaStreamDestroy(cudaStream_t stream)
{
	INIT();
	return DRV(streamDestroy, CUS(stream));
}

EXPORT cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
	INIT();
	return DRV(streamSynchronize, CUS(stream));
}

EXPORT cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)
{
	INIT();
	return DRV(streamWaitEvent, CUS(stream), (CUevent)event, flags);
}

EXPORT cudaError_t cudaEventCreate(cudaEvent_t *event)
{
	INIT();
	return DRV(eventCreate, (CUevent *)event, 0);
}

EXPORT cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)
{
	INIT();
	return DRV(eventCreate, (CUevent *)event, flags);
}

EXPORT cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	INIT();
	return DRV(eventRecord, (CUevent)event, CUS(stream));
}

EXPORT cudaError_t cudaEventDestroy(cudaEvent_t event)
{
	INIT();
	return DRV(eventDestroy, (CUevent)event);
}

EXPORT cudaError_t cudaEventSynchronize(cudaEvent_t event)
{
	INIT();
	return DRV(eventSynchronize, (CUevent)event);
}

EXPORT cudaError_t cudaEventQuery(cudaEvent_t event)
{
	INIT();
	return DRV(eventQuery, (CUevent)event);
}

EXPORT cudaError_t cudaLibraryLoadData(cudaLibrary_t *library, const void *code, enum cudaJitOption *jitOptions,
				       void **jitOptionsValues, unsigned int numJitOptions,
				       enum cudaLibraryOption *libraryOptions, void **libraryOptionValues,
				       unsigned int numLibraryOptions)
{
	INIT();
	return DRV(libraryLoadData, (CUlibrary *)library, code, (CUjit_option *)jitOptions, jitOptionsValues,
		   numJitOptions, (CUlibraryOption *)libraryOptions, libraryOptionValues, numLibraryOptions);
}

EXPORT cudaError_t cudaLibraryUnload(cudaLibrary_t library)
{
	INIT();
	return DRV(libraryUnload, (CUlibrary)library);
}

EXPORT cudaError_t cudaStreamQuery(cudaStream_t stream)
{
	INIT();
	return DRV(streamQuery, CUS(stream));
}

/* ------------------------------------------------------------------------ */
/* capture                                                                   */

EXPORT cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)
{
	INIT();
	return DRV(streamBeginCapture, CUS(stream), (CUstreamCaptureMode)mode);
}

EXPORT cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	INIT();
	return DRV(streamEndCapture, CUS(stream), (CUgraph *)pGraph);
}

EXPORT cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus)
{
	INIT();
	return DRV(streamIsCapturing, CUS(stream), (CUstreamCaptureStatus *)pCaptureStatus);
}

#if RT12
EXPORT cudaError_t cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *captureStatus_out,
					    unsigned long long *id_out, cudaGraph_t *graph_out,
					    const cudaGraphNode_t **dependencies_out,
					    const cudaGraphEdgeData **edgeData_out, size_t *numDependencies_out)
{
	INIT();
	return DRV(streamGetCaptureInfo, CUS(stream), (CUstreamCaptureStatus *)captureStatus_out, (cuuint64_t *)id_out,
		   (CUgraph *)graph_out, (const CUgraphNode **)dependencies_out, (const CUgraphEdgeData **)edgeData_out,
		   numDependencies_out);
}

EXPORT cudaError_t cudaStreamUpdateCaptureDependencies(cudaStream_t stream, cudaGraphNode_t *dependencies,
						       const cudaGraphEdgeData *dependencyData, size_t numDependencies,
						       unsigned int flags)
{
	INIT();
	return DRV(streamUpdateCaptureDependencies, CUS(stream), (CUgraphNode *)dependencies,
		   (const CUgraphEdgeData *)dependencyData, numDependencies, flags);
}
#else
EXPORT cudaError_t rt11_cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus,
						 unsigned long long *pId) __asm__("cudaStreamGetCaptureInfo");
EXPORT cudaError_t rt11_cudaStreamGetCaptureInfo(cudaStream_t stream, enum cudaStreamCaptureStatus *pCaptureStatus,
						 unsigned long long *pId)
{
	INIT();
	return DRV(streamGetCaptureInfo, CUS(stream), (CUstreamCaptureStatus *)pCaptureStatus, (cuuint64_t *)pId, NULL,
		   NULL, NULL);
}
#endif

EXPORT cudaError_t cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	INIT();
	return DRV(threadExchangeStreamCaptureMode, (CUstreamCaptureMode *)mode);
}

/* ------------------------------------------------------------------------ */
/* memory                                                                    */

EXPORT cudaError_t cudaFree(void *devPtr)
{
	INIT(); /* cudaFree(0): initialise the runtime */
	if (!devPtr)
		return cudaSuccess;
	return DRV(memFree, DP(devPtr));
}

EXPORT cudaError_t cudaHostAlloc(void **pHost, size_t size, unsigned int flags)
{
	INIT();
	return DRV(memHostAlloc, pHost, size, flags);
}

EXPORT cudaError_t cudaMallocHost(void **ptr, size_t size)
{
	INIT();
	return DRV(memHostAlloc, ptr, size, 0);
}

EXPORT cudaError_t cudaFreeHost(void *ptr)
{
	INIT();
	return DRV(memFreeHost, ptr);
}

EXPORT cudaError_t cudaMalloc(void **devPtr, size_t size)
{
	INIT();
	if (!devPtr)
		return ret(CUDA_ERROR_INVALID_VALUE);
	return DRV(memAlloc, (CUdeviceptr *)devPtr, size);
}

EXPORT cudaError_t cudaMemGetInfo(size_t *free, size_t *total)
{
	INIT();
	return DRV(memGetInfo, free, total);
}

EXPORT cudaError_t cudaMemcpy(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	INIT();
	switch (kind) {
	case cudaMemcpyHostToHost:
		if (count)
			memmove(dst, src, count);
		return cudaSuccess;
	case cudaMemcpyHostToDevice:
		return DRV(memcpyHtoD, DP(dst), src, count);
	case cudaMemcpyDeviceToHost:
		return DRV(memcpyDtoH, dst, DP(src), count);
	case cudaMemcpyDeviceToDevice:
		return DRV(memcpyDtoD, DP(dst), DP(src), count);
	case cudaMemcpyDefault:
		return DRV(memcpy, DP(dst), DP(src), count);
	default:
		return ret((CUresult)cudaErrorInvalidMemcpyDirection);
	}
}

EXPORT cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
				   cudaStream_t stream)
{
	INIT();
	switch (kind) {
	case cudaMemcpyHostToDevice:
		return DRV(memcpyHtoDAsync, DP(dst), src, count, CUS(stream));
	case cudaMemcpyDeviceToHost:
		return DRV(memcpyDtoHAsync, dst, DP(src), count, CUS(stream));
	case cudaMemcpyDeviceToDevice:
		return DRV(memcpyDtoDAsync, DP(dst), DP(src), count, CUS(stream));
	case cudaMemcpyHostToHost:
	case cudaMemcpyDefault:
		return DRV(memcpyAsync, DP(dst), DP(src), count, CUS(stream));
	default:
		return ret((CUresult)cudaErrorInvalidMemcpyDirection);
	}
}

EXPORT cudaError_t cudaMemset(void *devPtr, int value, size_t count)
{
	INIT();
	return DRV(memsetD8, DP(devPtr), (unsigned char)value, count);
}

EXPORT cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)
{
	INIT();
	return DRV(memsetD8Async, DP(devPtr), (unsigned char)value, count, CUS(stream));
}

EXPORT cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)
{
	INIT();
	return DRV(memAllocAsync, (CUdeviceptr *)devPtr, size, CUS(hStream));
}

EXPORT cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)
{
	INIT();
	return DRV(memFreeAsync, DP(devPtr), CUS(hStream));
}

EXPORT cudaError_t cudaMallocFromPoolAsync(void **ptr, size_t size, cudaMemPool_t memPool, cudaStream_t stream)
{
	INIT();
	return DRV(memAllocFromPoolAsync, (CUdeviceptr *)ptr, size, (CUmemoryPool)memPool, CUS(stream));
}

_Static_assert(sizeof(struct cudaMemPoolProps) == sizeof(CUmemPoolProps), "pool props layout");

EXPORT cudaError_t cudaMemPoolCreate(cudaMemPool_t *memPool, const struct cudaMemPoolProps *poolProps)
{
	INIT();
	return DRV(memPoolCreate, (CUmemoryPool *)memPool, (const CUmemPoolProps *)poolProps);
}

EXPORT cudaError_t cudaMemPoolDestroy(cudaMemPool_t memPool)
{
	INIT();
	return DRV(memPoolDestroy, (CUmemoryPool)memPool);
}

EXPORT cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	INIT();
	return DRV(memPoolSetAttribute, (CUmemoryPool)memPool, (CUmemPool_attribute)attr, value);
}

EXPORT cudaError_t cudaMemPoolGetAttribute(cudaMemPool_t memPool, enum cudaMemPoolAttr attr, void *value)
{
	INIT();
	return DRV(memPoolGetAttribute, (CUmemoryPool)memPool, (CUmemPool_attribute)attr, value);
}

EXPORT cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t *memPool, int device)
{
	INIT();
	return DRV(deviceGetDefaultMemPool, (CUmemoryPool *)memPool, device);
}

EXPORT cudaError_t cudaDeviceSetMemPool(int device, cudaMemPool_t memPool)
{
	INIT();
	return DRV(deviceSetMemPool, device, (CUmemoryPool)memPool);
}

EXPORT cudaError_t cudaDeviceGetMemPool(cudaMemPool_t *memPool, int device)
{
	INIT();
	return DRV(deviceGetMemPool, (CUmemoryPool *)memPool, device);
}

EXPORT cudaError_t cudaDeviceGetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
	INIT();
	return DRV(deviceGetGraphMemAttribute, device, (CUgraphMem_attribute)attr, value);
}

EXPORT cudaError_t cudaDeviceSetGraphMemAttribute(int device, enum cudaGraphMemAttributeType attr, void *value)
{
	INIT();
	return DRV(deviceSetGraphMemAttribute, device, (CUgraphMem_attribute)attr, value);
}

EXPORT cudaError_t cudaDeviceGraphMemTrim(int device)
{
	INIT();
	return DRV(deviceGraphMemTrim, device);
}

/* ------------------------------------------------------------------------ */
/* kernels                                                                   */

/* func is a standin_kernel_fn; args must be NULL-terminated (standin.h).
 * As the real runtime (measured, kprobe, H200, CUDA 13.0, 2026-11-29:
 * docs/measurements.md), the driver's launch gets the kernel's CUkernel
 * (cudaGetKernel's), not a CUfunction: the runtime's registration of its
 * kernels is private, here standin_runtime_kernel. */
EXPORT cudaError_t cudaLaunchKernel(const void *func, dim3 gridDim, dim3 blockDim, void **args, size_t sharedMem,
				    cudaStream_t stream)
{
	CUkernel k = NULL;
	INIT();
	if (!func || !g_rtk || g_rtk(&k, func) != CUDA_SUCCESS)
		k = (CUkernel)(uintptr_t)func; /* another driver: the function as it is */
	return DRV(launchKernel, (CUfunction)(void *)k, gridDim.x, gridDim.y, gridDim.z, blockDim.x, blockDim.y,
		   blockDim.z, (unsigned)sharedMem, CUS(stream), args, NULL);
}

#if RT12
/* The runtime's CUkernel of a kernel (CUDA 12.0+): what its launches pass
 * to the driver (cudaLaunchKernel above). */
EXPORT cudaError_t cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	INIT();
	if (!kernelPtr || !entryFuncAddr)
		return ret(CUDA_ERROR_INVALID_VALUE);
	return ret(g_rtk ? g_rtk((CUkernel *)kernelPtr, entryFuncAddr) : CUDA_ERROR_NOT_FOUND);
}
#endif

/* ------------------------------------------------------------------------ */
/* graphs                                                                    */

EXPORT cudaError_t cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
	INIT();
	return DRV(graphCreate, (CUgraph *)pGraph, flags);
}

EXPORT cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
	INIT();
	return DRV(graphDestroy, (CUgraph)graph);
}

EXPORT cudaError_t cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
	INIT();
	return DRV(graphClone, (CUgraph *)pGraphClone, (CUgraph)originalGraph);
}

#if RT12
EXPORT cudaError_t cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph, unsigned long long flags)
{
	INIT();
	return DRV(graphInstantiate, (CUgraphExec *)pGraphExec, (CUgraph)graph, flags);
}

EXPORT cudaError_t cudaGraphInstantiateWithParams(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
						  cudaGraphInstantiateParams *instantiateParams)
{
	INIT();
	if (!instantiateParams)
		return ret(CUDA_ERROR_INVALID_VALUE);
	CUDA_GRAPH_INSTANTIATE_PARAMS p = {
	    .flags = instantiateParams->flags,
	    .hUploadStream = CUS(instantiateParams->uploadStream),
	};
	cudaError_t e = DRV(graphInstantiateWithParams, (CUgraphExec *)pGraphExec, (CUgraph)graph, &p);
	instantiateParams->errNode_out = (cudaGraphNode_t)p.hErrNode_out;
	instantiateParams->result_out = (enum cudaGraphInstantiateResult)p.result_out;
	return e;
}

EXPORT cudaError_t cudaGraphExecGetFlags(cudaGraphExec_t graphExec, unsigned long long *flags)
{
	INIT();
	return DRV(graphExecGetFlags, (CUgraphExec)graphExec, (cuuint64_t *)flags);
}

EXPORT cudaError_t cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
				       cudaGraphExecUpdateResultInfo *resultInfo)
{
	INIT();
	CUgraphExecUpdateResultInfo info = {0};
	cudaError_t e = DRV(graphExecUpdate, (CUgraphExec)hGraphExec, (CUgraph)hGraph, resultInfo ? &info : NULL);
	if (resultInfo) {
		resultInfo->result = (enum cudaGraphExecUpdateResult)info.result;
		resultInfo->errorNode = (cudaGraphNode_t)info.errorNode;
		resultInfo->errorFromNode = (cudaGraphNode_t)info.errorFromNode;
	}
	return e;
}
#else
EXPORT cudaError_t rt11_cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					     cudaGraphNode_t *pErrorNode, char *pLogBuffer,
					     size_t bufferSize) __asm__("cudaGraphInstantiate");
EXPORT cudaError_t rt11_cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
					     cudaGraphNode_t *pErrorNode, char *pLogBuffer, size_t bufferSize)
{
	INIT();
	return DRV(graphInstantiate, (CUgraphExec *)pGraphExec, (CUgraph)graph, (CUgraphNode *)pErrorNode, pLogBuffer,
		   bufferSize);
}

EXPORT cudaError_t
rt11_cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph, cudaGraphNode_t *hErrorNode_out,
			 enum cudaGraphExecUpdateResult *updateResult_out) __asm__("cudaGraphExecUpdate");
EXPORT cudaError_t rt11_cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
					    cudaGraphNode_t *hErrorNode_out,
					    enum cudaGraphExecUpdateResult *updateResult_out)
{
	INIT();
	return DRV(graphExecUpdate, (CUgraphExec)hGraphExec, (CUgraph)hGraph, (CUgraphNode *)hErrorNode_out,
		   (CUgraphExecUpdateResult *)updateResult_out);
}
#endif

EXPORT cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
						 unsigned long long flags)
{
	INIT();
	return DRV(graphInstantiateWithFlags, (CUgraphExec *)pGraphExec, (CUgraph)graph, flags);
}

EXPORT cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	INIT();
	return DRV(graphLaunch, (CUgraphExec)graphExec, CUS(stream));
}

EXPORT cudaError_t cudaGraphUpload(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	INIT();
	return DRV(graphUpload, (CUgraphExec)graphExec, CUS(stream));
}

EXPORT cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	INIT();
	return DRV(graphExecDestroy, (CUgraphExec)graphExec);
}

EXPORT cudaError_t cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes, size_t *numNodes)
{
	INIT();
	return DRV(graphGetNodes, (CUgraph)graph, (CUgraphNode *)nodes, numNodes);
}

EXPORT cudaError_t cudaGraphDestroyNode(cudaGraphNode_t node)
{
	INIT();
	return DRV(graphDestroyNode, (CUgraphNode)node);
}

EXPORT cudaError_t cudaGraphChildGraphNodeGetGraph(cudaGraphNode_t node, cudaGraph_t *pGraph)
{
	INIT();
	return DRV(graphChildGraphNodeGetGraph, (CUgraphNode)node, (CUgraph *)pGraph);
}

EXPORT cudaError_t cudaGraphNodeGetType(cudaGraphNode_t node, enum cudaGraphNodeType *pType)
{
	INIT();
	return DRV(graphNodeGetType, (CUgraphNode)node, (CUgraphNodeType *)pType);
}

EXPORT cudaError_t cudaGraphAddMemAllocNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					    const cudaGraphNode_t *pDependencies, size_t numDependencies,
					    struct cudaMemAllocNodeParams *nodeParams)
{
	INIT();
	if (!nodeParams)
		return ret(CUDA_ERROR_INVALID_VALUE);
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	memset(&p, 0, sizeof p);
	memcpy(&p.poolProps, &nodeParams->poolProps, sizeof p.poolProps);
	p.accessDescs = (const CUmemAccessDesc *)nodeParams->accessDescs;
	p.accessDescCount = nodeParams->accessDescCount;
	p.bytesize = nodeParams->bytesize;
	cudaError_t e = DRV(graphAddMemAllocNode, (CUgraphNode *)pGraphNode, (CUgraph)graph,
			    (const CUgraphNode *)pDependencies, numDependencies, &p);
	if (e == cudaSuccess)
		nodeParams->dptr = (void *)(uintptr_t)p.dptr;
	return e;
}

EXPORT cudaError_t cudaGraphMemAllocNodeGetParams(cudaGraphNode_t node, struct cudaMemAllocNodeParams *params_out)
{
	INIT();
	if (!params_out)
		return ret(CUDA_ERROR_INVALID_VALUE);
	CUDA_MEM_ALLOC_NODE_PARAMS p;
	cudaError_t e = DRV(graphMemAllocNodeGetParams, (CUgraphNode)node, &p);
	if (e == cudaSuccess) {
		memcpy(&params_out->poolProps, &p.poolProps, sizeof p.poolProps);
		params_out->accessDescs = (const struct cudaMemAccessDesc *)p.accessDescs;
		params_out->accessDescCount = p.accessDescCount;
		params_out->bytesize = p.bytesize;
		params_out->dptr = (void *)(uintptr_t)p.dptr;
	}
	return e;
}

EXPORT cudaError_t cudaGraphAddMemFreeNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					   const cudaGraphNode_t *pDependencies, size_t numDependencies, void *dptr)
{
	INIT();
	return DRV(graphAddMemFreeNode, (CUgraphNode *)pGraphNode, (CUgraph)graph, (const CUgraphNode *)pDependencies,
		   numDependencies, DP(dptr));
}

EXPORT cudaError_t cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					 const cudaGraphNode_t *pDependencies, size_t numDependencies)
{
	INIT();
	return DRV(graphAddEmptyNode, (CUgraphNode *)pGraphNode, (CUgraph)graph, (const CUgraphNode *)pDependencies,
		   numDependencies);
}

EXPORT cudaError_t cudaGraphAddChildGraphNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					      const cudaGraphNode_t *pDependencies, size_t numDependencies,
					      cudaGraph_t childGraph)
{
	INIT();
	return DRV(graphAddChildGraphNode, (CUgraphNode *)pGraphNode, (CUgraph)graph,
		   (const CUgraphNode *)pDependencies, numDependencies, (CUgraph)childGraph);
}

#if RT12
typedef CUDA_KERNEL_NODE_PARAMS_v2 drv_kparams;
#else
typedef CUDA_KERNEL_NODE_PARAMS_v1 drv_kparams;
#endif

static void kp_to_drv(const struct cudaKernelNodeParams *k, drv_kparams *p)
{
	memset(p, 0, sizeof *p);
	p->func = (CUfunction)k->func;
	p->gridDimX = k->gridDim.x;
	p->gridDimY = k->gridDim.y;
	p->gridDimZ = k->gridDim.z;
	p->blockDimX = k->blockDim.x;
	p->blockDimY = k->blockDim.y;
	p->blockDimZ = k->blockDim.z;
	p->sharedMemBytes = k->sharedMemBytes;
	p->kernelParams = k->kernelParams;
	p->extra = k->extra;
}

EXPORT cudaError_t cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
					  const cudaGraphNode_t *pDependencies, size_t numDependencies,
					  const struct cudaKernelNodeParams *pNodeParams)
{
	INIT();
	if (!pNodeParams)
		return ret(CUDA_ERROR_INVALID_VALUE);
	drv_kparams p;
	kp_to_drv(pNodeParams, &p);
	return DRV(graphAddKernelNode, (CUgraphNode *)pGraphNode, (CUgraph)graph, (const CUgraphNode *)pDependencies,
		   numDependencies, &p);
}

EXPORT cudaError_t cudaGraphKernelNodeGetParams(cudaGraphNode_t node, struct cudaKernelNodeParams *pNodeParams)
{
	INIT();
	if (!pNodeParams)
		return ret(CUDA_ERROR_INVALID_VALUE);
	drv_kparams p;
	cudaError_t e = DRV(graphKernelNodeGetParams, (CUgraphNode)node, &p);
	if (e == cudaSuccess) {
		pNodeParams->func = (void *)p.func;
		pNodeParams->gridDim.x = p.gridDimX;
		pNodeParams->gridDim.y = p.gridDimY;
		pNodeParams->gridDim.z = p.gridDimZ;
		pNodeParams->blockDim.x = p.blockDimX;
		pNodeParams->blockDim.y = p.blockDimY;
		pNodeParams->blockDim.z = p.blockDimZ;
		pNodeParams->sharedMemBytes = p.sharedMemBytes;
		pNodeParams->kernelParams = p.kernelParams;
		pNodeParams->extra = p.extra;
	}
	return e;
}

EXPORT cudaError_t cudaGraphExecKernelNodeSetParams(cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
						    const struct cudaKernelNodeParams *pNodeParams)
{
	INIT();
	if (!pNodeParams)
		return ret(CUDA_ERROR_INVALID_VALUE);
	drv_kparams p;
	kp_to_drv(pNodeParams, &p);
	return DRV(graphExecKernelNodeSetParams, (CUgraphExec)hGraphExec, (CUgraphNode)node, &p);
}

/* ------------------------------------------------------------------------ */
/* driver entry points: through the runtime's stored cuGetProcAddress pointer */

static cudaError_t entry_point(const char *symbol, void **funcPtr, int ver, unsigned long long flags,
			       enum cudaDriverEntryPointQueryResult *status)
{
	INIT();
	if (!symbol || !funcPtr)
		return ret(CUDA_ERROR_INVALID_VALUE);
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SUCCESS;
	CUresult rc = d.getProcAddress(symbol, funcPtr, ver, flags, &st);
	if (rc == CUDA_SUCCESS && status)
		*status = (enum cudaDriverEntryPointQueryResult)st;
	return ret(rc);
}

#if RT12
EXPORT cudaError_t cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags,
					   enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, RT_VERSION, flags, driverStatus);
}

EXPORT cudaError_t cudaGetDriverEntryPointByVersion(const char *symbol, void **funcPtr, unsigned int cudaVersion,
						    unsigned long long flags,
						    enum cudaDriverEntryPointQueryResult *driverStatus)
{
	return entry_point(symbol, funcPtr, (int)cudaVersion, flags, driverStatus);
}
#else
EXPORT cudaError_t rt11_cudaGetDriverEntryPoint(const char *symbol, void **funcPtr,
						unsigned long long flags) __asm__("cudaGetDriverEntryPoint");
EXPORT cudaError_t rt11_cudaGetDriverEntryPoint(const char *symbol, void **funcPtr, unsigned long long flags)
{
	return entry_point(symbol, funcPtr, RT_VERSION, flags, NULL);
}
#endif
