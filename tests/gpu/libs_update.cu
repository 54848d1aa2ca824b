/*
 * tests/gpu/libs_update.cu -- issue 11 (a)/(b): a binary linked with cuBLAS
 * (or cuSPARSE), nvcc's default static cudart. Its library's constructor
 * reaches the driver before the shim's constructor runs. It captures a graph
 * holding a library call, instantiates and launches it, then captures the
 * same call plus one more kernel and updates the exec from it: the driver
 * refuses with 910 (topology changed). With HANDLE_EARLY=1 the library
 * handle is created in a constructor, before main; else in main.
 * Prints deterministic text only.
 */
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
#ifdef WITH_CUSPARSE
#include <cusparse.h>
static cusparseHandle_t handle;
#define LIB "cusparse"
#else
#include <cublas_v2.h>
static cublasHandle_t handle;
#define LIB "cublas"
#endif

#define N 64

static void make_handle()
{
#ifdef WITH_CUSPARSE
	if (cusparseCreate(&handle) != CUSPARSE_STATUS_SUCCESS)
		printf("handle failed\n");
#else
	if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS)
		printf("handle failed\n");
#endif
}

__attribute__((constructor)) static void early_handle()
{
	const char *e = getenv("HANDLE_EARLY");
	if (e && *e == '1')
		make_handle();
}

__global__ void scale(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= v;
}

static float *a, *b, *c;
#ifdef WITH_CUSPARSE
static int *idx;
static cusparseSpVecDescr_t vx;
static cusparseDnVecDescr_t vy;
#endif

static void lib_call(cudaStream_t s)
{
	float one = 1.0f, zero = 0.0f;
#ifdef WITH_CUSPARSE
	(void)zero;
	cusparseSetStream(handle, s);
	cusparseAxpby(handle, &one, vx, &one, vy);
#else
	cublasSetStream(handle, s);
	cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N);
#endif
}

static cudaGraph_t capture(cudaStream_t s, int extra)
{
	cudaGraph_t g = NULL;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	lib_call(s);
	if (extra)
		scale<<<1, N, 0, s>>>(c, N, 2.0f);
	cudaStreamEndCapture(s, &g);
	return g;
}

int main()
{
	cudaStream_t s;
	cudaGraphExec_t e;
	cudaGraphExecUpdateResultInfo info;
	float h[N * N];
	if (!handle)
		make_handle();
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaMalloc(&a, N * N * sizeof(float));
	cudaMalloc(&b, N * N * sizeof(float));
	cudaMalloc(&c, N * N * sizeof(float));
	for (int i = 0; i < N * N; i++)
		h[i] = 1.0f;
	cudaMemcpy(a, h, sizeof h, cudaMemcpyHostToDevice);
	cudaMemcpy(b, h, sizeof h, cudaMemcpyHostToDevice);
	cudaMemset(c, 0, sizeof h);
#ifdef WITH_CUSPARSE
	int hi[N];
	for (int i = 0; i < N; i++)
		hi[i] = i;
	cudaMalloc(&idx, sizeof hi);
	cudaMemcpy(idx, hi, sizeof hi, cudaMemcpyHostToDevice);
	cusparseCreateSpVec(&vx, N * N, N, idx, a, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, CUDA_R_32F);
	cusparseCreateDnVec(&vy, N * N, c, CUDA_R_32F);
#endif
	lib_call(s); /* warm-up outside capture (library workspace, lazy loading) */
	cudaStreamSynchronize(s);
	cudaGraph_t g1 = capture(s, 0), g2 = capture(s, 1);
	printf("captured: %s %s\n", g1 ? "yes" : "no", g2 ? "yes" : "no");
	printf("instantiate: %d\n", (int)cudaGraphInstantiate(&e, g1, 0));
	printf("launch: %d\n", (int)cudaGraphLaunch(e, s));
	cudaError_t rc = cudaGraphExecUpdate(e, g2, &info);
	printf("update: %d result=%d\n", (int)rc, (int)info.result);
	cudaGetLastError();
	printf("launch after update: %d\n", (int)cudaGraphLaunch(e, s));
	cudaStreamSynchronize(s);
	cudaMemcpy(h, c, sizeof h, cudaMemcpyDeviceToHost);
	printf("%s c[0]=%.1f c[%d]=%.1f\n", LIB, h[0], N * N - 1, h[N * N - 1]);
	return 0;
}
