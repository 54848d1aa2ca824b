/*
 * tests/gpu/devsync.cu -- issue 11 (c): cudaDeviceSynchronize inside a
 * global-mode capture (CUDA 13's runtime reaches cuCtxSynchronize at
 * version 13000). The driver answers 900 and the capture's end 901.
 */
#include <cstdio>
#include <cuda_runtime.h>

__global__ void k(float *p)
{
	p[threadIdx.x] += 1.0f;
}

int main()
{
	cudaStream_t s;
	cudaGraph_t g = NULL;
	float *p;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaMalloc(&p, 256 * sizeof(float));
	printf("sync outside capture: %d\n", (int)cudaDeviceSynchronize());
	printf("begin: %d\n", (int)cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	k<<<1, 256, 0, s>>>(p);
	printf("sync inside capture: %d\n", (int)cudaDeviceSynchronize());
	printf("end: %d\n", (int)cudaStreamEndCapture(s, &g));
	cudaGetLastError();
	return 0;
}
