/*
 * kernels/scenario.h -- one scenario source for the real GPU and the stand-in.
 *
 * A scenario (kernels/<name>.cu) includes only this header. Built by nvcc
 * (__CUDACC__ defined) the kernels are real __global__ functions launched with
 * <<<(n+255)/256, 256, 0, stream>>>. Built as C by gcc
 *   gcc -x c -I/usr/local/cuda/include -Ikernels -Itests/standin x.cu -lcudart
 * against the CPU stand-in runtime, they are host functions following the
 * stand-in convention (tests/standin/standin.h: 8-byte parameters, NULL-
 * terminated argument array) launched through cudaLaunchKernel.
 *
 * Kernels (all parameters 8 bytes wide):
 *   k_add(float *p, long n, double v)          p[i] += v
 *   k_fill(float *p, long n, double v)         p[i]  = v
 *   k_scale(float *p, long n, double v)        p[i] *= v
 *   k_copy(float *dst, const float *src, long n) dst[i] = src[i]
 * Launch macros are statements; check the launch with
 *   CHECK(cudaGetLastError(), cudaSuccess)
 * which behaves the same on both sides.
 *
 * CHECK(call, expected) prints "<function>: rc=<int> (<cudaGetErrorName>)",
 * adds " UNEXPECTED (want <int>)" and counts a failure when rc != expected,
 * and evaluates to rc. SCENARIO_EXIT() returns the process status.
 * Print only deterministic text (no addresses, no timings): outputs of the
 * two builds are compared line by line.
 */
#ifndef CGSHIM_SCENARIO_H
#define CGSHIM_SCENARIO_H

#include <stdio.h>
#include <string.h>
#include <cuda_runtime_api.h>

static int scenario_failures;

static inline int scenario_check(const char *call, int rc, int expected)
{
	int len = 0;
	while (call[len] && call[len] != '(' && call[len] != ' ')
		len++;
	printf("%.*s: rc=%d (%s)", len, call, rc, cudaGetErrorName((cudaError_t)rc));
	if (rc != expected) {
		printf(" UNEXPECTED (want %d)", expected);
		scenario_failures++;
	}
	printf("\n");
	fflush(stdout);
	return rc;
}

#define CHECK(call, expected) scenario_check(#call, (int)(call), (int)(expected))
#define EXPECT(cond)                                                                                                   \
	do {                                                                                                           \
		if (!(cond)) {                                                                                         \
			printf("EXPECT failed: %s (line %d)\n", #cond, __LINE__);                                      \
			scenario_failures++;                                                                           \
		}                                                                                                      \
	} while (0)
#define SCENARIO_EXIT() (scenario_failures ? 1 : 0)

/* A device pool's properties as the scenarios ask for one: pinned memory
 * on device dev, exportable through handles (cudaMemHandleTypeNone: not). */
static inline struct cudaMemPoolProps sc_pool_props(int dev, enum cudaMemAllocationHandleType handles)
{
	struct cudaMemPoolProps p;
	memset(&p, 0, sizeof p);
	p.allocType = cudaMemAllocationTypePinned;
	p.handleTypes = handles;
	p.location.type = cudaMemLocationTypeDevice;
	p.location.id = dev;
	return p;
}

/* Inside a capture: joins stream fork into origin the way NCCL does, with
 * no event wait on the origin. A helper stream waits on `done` recorded on
 * the fork, and the origin's capture dependencies gain the helper's (the
 * fork's frontier); then the helper is destroyed, inside the capture, as
 * NCCL's is. helper and done are made by the caller before the capture;
 * done is destroyed by it after. (docs/rules/CGS008.md) */
static inline void sc_join_by_dependencies(cudaStream_t origin, cudaStream_t fork, cudaStream_t helper,
					   cudaEvent_t done)
{
	enum cudaStreamCaptureStatus st;
	const cudaGraphNode_t *deps = NULL;
	cudaGraphNode_t front[8];
	size_t nd = 0;
	CHECK(cudaEventRecord(done, fork), cudaSuccess);
	CHECK(cudaStreamWaitEvent(helper, done, 0), cudaSuccess);
	CHECK(cudaStreamGetCaptureInfo(helper, &st, NULL, NULL, &deps, NULL, &nd), cudaSuccess);
	EXPECT(st == cudaStreamCaptureStatusActive && nd >= 1 && nd <= 8);
	if (nd > 8)
		nd = 8;
	for (size_t i = 0; i < nd; i++)
		front[i] = deps[i];
	CHECK(cudaStreamUpdateCaptureDependencies(origin, front, NULL, nd, cudaStreamAddCaptureDependencies),
	      cudaSuccess);
	CHECK(cudaStreamDestroy(helper), cudaSuccess);
}

#ifdef __CUDACC__

__global__ void k_add(float *p, long n, double v)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] += (float)v;
}

__global__ void k_fill(float *p, long n, double v)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = (float)v;
}

__global__ void k_scale(float *p, long n, double v)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= (float)v;
}

__global__ void k_copy(float *dst, const float *src, long n)
{
	long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		dst[i] = src[i];
}

#define SC_GRID(n) ((unsigned)(((n) + 255) / 256))
#define LAUNCH_ADD(s, p, n, v) k_add<<<SC_GRID(n), 256, 0, (s)>>>((p), (long)(n), (double)(v))
#define LAUNCH_FILL(s, p, n, v) k_fill<<<SC_GRID(n), 256, 0, (s)>>>((p), (long)(n), (double)(v))
#define LAUNCH_SCALE(s, p, n, v) k_scale<<<SC_GRID(n), 256, 0, (s)>>>((p), (long)(n), (double)(v))
#define LAUNCH_COPY(s, d, src, n) k_copy<<<SC_GRID(n), 256, 0, (s)>>>((d), (src), (long)(n))

#else /* stand-in build */

#include "standin.h"

/* The kernels carry the mangled names nvcc gives the __global__ functions
 * above (asm labels) and are exported, so a program linked with
 * -rdynamic lets the stand-in's cuFuncGetName answer as the driver would
 * (dladdr). One translation unit per program includes this header. */

void k_add(void **a, unsigned long nthreads) __asm__("_Z5k_addPfld");
__attribute__((used, visibility("default"))) void k_add(void **a, unsigned long nthreads)
{
	float *p = STANDIN_ARG(a, 0, float *);
	long n = STANDIN_ARG(a, 1, long);
	double v = STANDIN_ARG(a, 2, double);
	for (long i = 0; i < n && (unsigned long)i < nthreads; i++)
		p[i] += (float)v;
}

void k_fill(void **a, unsigned long nthreads) __asm__("_Z6k_fillPfld");
__attribute__((used, visibility("default"))) void k_fill(void **a, unsigned long nthreads)
{
	float *p = STANDIN_ARG(a, 0, float *);
	long n = STANDIN_ARG(a, 1, long);
	double v = STANDIN_ARG(a, 2, double);
	for (long i = 0; i < n && (unsigned long)i < nthreads; i++)
		p[i] = (float)v;
}

void k_scale(void **a, unsigned long nthreads) __asm__("_Z7k_scalePfld");
__attribute__((used, visibility("default"))) void k_scale(void **a, unsigned long nthreads)
{
	float *p = STANDIN_ARG(a, 0, float *);
	long n = STANDIN_ARG(a, 1, long);
	double v = STANDIN_ARG(a, 2, double);
	for (long i = 0; i < n && (unsigned long)i < nthreads; i++)
		p[i] *= (float)v;
}

void k_copy(void **a, unsigned long nthreads) __asm__("_Z6k_copyPfPKfl");
__attribute__((used, visibility("default"))) void k_copy(void **a, unsigned long nthreads)
{
	float *d = STANDIN_ARG(a, 0, float *);
	const float *s = STANDIN_ARG(a, 1, const float *);
	long n = STANDIN_ARG(a, 2, long);
	for (long i = 0; i < n && (unsigned long)i < nthreads; i++)
		d[i] = s[i];
}

static inline void sc_launch(standin_kernel_fn fn, cudaStream_t s, long n, void **args)
{
	dim3 g = {(unsigned)((n + 255) / 256), 1, 1}, b = {256, 1, 1};
	(void)cudaLaunchKernel((const void *)fn, g, b, args, 0, s);
}

#define SC_LAUNCH3(fn, s, a0, a1, a2, n)                                                                               \
	do {                                                                                                           \
		void *sc_args_[] = {(void *)&(a0), (void *)&(a1), (void *)&(a2), NULL};                                \
		sc_launch(fn, (s), (long)(n), sc_args_);                                                               \
	} while (0)

#define SC_PVD(fn, s, p, n, v)                                                                                         \
	do {                                                                                                           \
		float *sc_p_ = (p);                                                                                    \
		long sc_n_ = (long)(n);                                                                                \
		double sc_v_ = (double)(v);                                                                            \
		SC_LAUNCH3(fn, s, sc_p_, sc_n_, sc_v_, sc_n_);                                                         \
	} while (0)

#define LAUNCH_ADD(s, p, n, v) SC_PVD(k_add, s, p, n, v)
#define LAUNCH_FILL(s, p, n, v) SC_PVD(k_fill, s, p, n, v)
#define LAUNCH_SCALE(s, p, n, v) SC_PVD(k_scale, s, p, n, v)
#define LAUNCH_COPY(s, d, src, n)                                                                                      \
	do {                                                                                                           \
		float *sc_d_ = (d);                                                                                    \
		const float *sc_s_ = (src);                                                                            \
		long sc_n_ = (long)(n);                                                                                \
		SC_LAUNCH3(k_copy, s, sc_d_, sc_s_, sc_n_, sc_n_);                                                     \
	} while (0)

#endif /* __CUDACC__ */

#endif
