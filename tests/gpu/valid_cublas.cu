/*
 * tests/gpu/valid_cublas.cu -- a correct program linked with cuBLAS (issue 31,
 * precision on real stacks): a GEMM and a scaling kernel captured on a
 * non-blocking stream after a warm-up call, instantiated, launched ten times,
 * then the same capture made again and the exec updated from it (same
 * topology: the driver accepts), launched again. Every call is checked; the
 * result is printed. The shim must write no warn or error record.
 */
#include <cstdio>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define N 64
#define OK(x)                                                                                                          \
	do {                                                                                                           \
		int rc_ = (int)(x);                                                                                    \
		if (rc_) {                                                                                             \
			printf("%s: %d\n", #x, rc_);                                                                   \
			return 1;                                                                                      \
		}                                                                                                      \
	} while (0)

__global__ void scale(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] *= v;
}

static int capture(cudaStream_t s, cublasHandle_t h, float *a, float *b, float *c, cudaGraph_t *g)
{
	float one = 1.0f, zero = 0.0f;
	OK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N));
	scale<<<N, N, 0, s>>>(c, N * N, 0.5f);
	OK(cudaStreamEndCapture(s, g));
	return 0;
}

int main()
{
	cublasHandle_t h;
	cudaStream_t s;
	cudaGraph_t g, g2;
	cudaGraphExec_t e;
	cudaGraphExecUpdateResultInfo info;
	float *a, *b, *c, host[N * N];
	float one = 1.0f, zero = 0.0f;

	OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	OK(cublasCreate(&h));
	OK(cublasSetStream(h, s));
	OK(cudaMalloc(&a, sizeof host));
	OK(cudaMalloc(&b, sizeof host));
	OK(cudaMalloc(&c, sizeof host));
	for (int i = 0; i < N * N; i++)
		host[i] = (float)(i % 7) * 0.25f;
	OK(cudaMemcpy(a, host, sizeof host, cudaMemcpyHostToDevice));
	OK(cudaMemcpy(b, host, sizeof host, cudaMemcpyHostToDevice));
	/* warm-up outside the capture: cuBLAS loads its kernels and workspace */
	OK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, a, N, b, N, &zero, c, N));
	OK(cudaStreamSynchronize(s));
	if (capture(s, h, a, b, c, &g))
		return 1;
	OK(cudaGraphInstantiate(&e, g, 0));
	for (int i = 0; i < 10; i++)
		OK(cudaGraphLaunch(e, s));
	OK(cudaStreamSynchronize(s));
	if (capture(s, h, a, b, c, &g2))
		return 1;
	OK(cudaGraphExecUpdate(e, g2, &info));
	OK(cudaGraphLaunch(e, s));
	OK(cudaStreamSynchronize(s));
	OK(cudaMemcpy(host, c, sizeof host, cudaMemcpyDeviceToHost));
	double sum = 0;
	for (int i = 0; i < N * N; i++)
		sum += host[i];
	printf("cublas graph sum %.3f\n", sum);
	OK(cudaGraphExecDestroy(e));
	OK(cudaGraphDestroy(g));
	OK(cudaGraphDestroy(g2));
	OK(cublasDestroy(h));
	OK(cudaFree(a));
	OK(cudaFree(b));
	OK(cudaFree(c));
	OK(cudaStreamDestroy(s));
	return 0;
}
