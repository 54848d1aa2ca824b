/*
 * tests/gpu/stale_ptr.cu -- issue 15 on the GPU, one case per argument
 * (run bare and under the shim by tests/gpu/issue15.py):
 *   realloc   capture a kernel with a buffer, free it, allocate again (same
 *             size), replay: CGS018 at the free, CGS019 before the replay
 *   pinned    a pinned host buffer captured in an HtoD copy and freed after
 *             the capture while the exec lives, then a replay (CGS018,
 *             CGS019; the replay does not touch the freed host page: the
 *             exec is destroyed instead when NO_REPLAY is set)
 *   pageable  a captured HtoD copy from malloc'd memory (CGS020)
 *   clean     the same graph with static buffers kept alive: no violation
 *   vmm       a kernel on a cuMemMap'd range, cuMemUnmap while the exec
 *             lives, map again at the same address, replay (CGS018, CGS019)
 * Prints "<case> done" and exits 0 when the CUDA calls succeed.
 * Build: nvcc -O2 -arch=sm_90 -o stale_ptr tests/gpu/stale_ptr.cu -lcuda
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N (1 << 20)
#define CK(x)                                                                                                          \
	do {                                                                                                           \
		int r_ = (int)(x);                                                                                     \
		if (r_) {                                                                                              \
			fprintf(stderr, "%s:%d %s = %d\n", __FILE__, __LINE__, #x, r_);                                \
			return 1;                                                                                      \
		}                                                                                                      \
	} while (0)

__global__ void k_fill(float *p, int n, float v)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

static cudaGraph_t cap_fill(cudaStream_t s, float *p)
{
	cudaGraph_t g = NULL;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	k_fill<<<N / 256, 256, 0, s>>>(p, N, 1.0f);
	cudaStreamEndCapture(s, &g);
	return g;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "clean";
	cudaStream_t s;
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	float *buf = NULL, *again = NULL, *host = NULL;
	CK(cudaFree(0));
	CK(cudaStreamCreate(&s));
	if (!strcmp(c, "realloc") || !strcmp(c, "clean")) {
		CK(cudaMalloc(&buf, N * sizeof(float)));
		g = cap_fill(s, buf);
		CK(cudaGraphInstantiate(&e, g, 0));
		CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		if (!strcmp(c, "realloc")) {
			CK(cudaFree(buf)); /* CGS018 */
			CK(cudaMalloc(&again, N * sizeof(float)));
			printf("same address again: %s\n", again == buf ? "yes" : "no");
			if (again == buf) { /* else the replay would fault: the shim has spoken already */
				CK(cudaGraphLaunch(e, s)); /* CGS019 before this call */
				CK(cudaStreamSynchronize(s));
			}
			buf = again;
		} else {
			for (int i = 0; i < 3; i++)
				CK(cudaGraphLaunch(e, s));
			CK(cudaStreamSynchronize(s));
		}
		CK(cudaGraphExecDestroy(e));
		CK(cudaFree(buf));
	} else if (!strcmp(c, "pinned") || !strcmp(c, "pageable")) {
		int pinned = !strcmp(c, "pinned");
		CK(cudaMalloc(&buf, N * sizeof(float)));
		if (pinned)
			CK(cudaMallocHost(&host, N * sizeof(float)));
		else
			host = (float *)calloc(N, sizeof(float));
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		CK(cudaMemcpyAsync(buf, host, N * sizeof(float), cudaMemcpyHostToDevice, s));
		k_fill<<<N / 256, 256, 0, s>>>(buf, N, 2.0f);
		CK(cudaStreamEndCapture(s, &g));
		CK(cudaGraphInstantiate(&e, g, 0)); /* pageable: CGS020 */
		CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		if (pinned) {
			CK(cudaFreeHost(host)); /* CGS018 */
			CK(cudaMallocHost(&host, N * sizeof(float)));
			/* the replay would read freed host memory: announced
			 * (CGS019), and the upload is as far as we go */
			CK(cudaGraphUpload(e, s));
			CK(cudaStreamSynchronize(s));
			CK(cudaFreeHost(host));
		} else {
			free(host);
		}
		CK(cudaGraphExecDestroy(e));
		CK(cudaFree(buf));
	} else if (!strcmp(c, "vmm")) {
		CUdevice dev;
		CUdeviceptr va;
		CUmemGenericAllocationHandle h;
		CUmemAllocationProp prop;
		CUmemAccessDesc acc;
		size_t gran = 0, sz;
		CK(cuCtxGetDevice(&dev));
		memset(&prop, 0, sizeof prop);
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop.location.id = dev;
		CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
		sz = ((N * sizeof(float) + gran - 1) / gran) * gran;
		memset(&acc, 0, sizeof acc);
		acc.location = prop.location;
		acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
		CK(cuMemAddressReserve(&va, sz, 0, 0, 0));
		CK(cuMemCreate(&h, sz, &prop, 0));
		CK(cuMemMap(va, sz, 0, h, 0));
		CK(cuMemSetAccess(va, sz, &acc, 1));
		g = cap_fill(s, (float *)va);
		CK(cudaGraphInstantiate(&e, g, 0));
		CK(cudaGraphLaunch(e, s));
		CK(cudaStreamSynchronize(s));
		CK(cuMemUnmap(va, sz)); /* CGS018 */
		CK(cuMemRelease(h));
		CK(cuMemCreate(&h, sz, &prop, 0));
		CK(cuMemMap(va, sz, 0, h, 0));
		CK(cuMemSetAccess(va, sz, &acc, 1));
		CK(cudaGraphLaunch(e, s)); /* CGS019 */
		CK(cudaStreamSynchronize(s));
		CK(cudaGraphExecDestroy(e));
		CK(cuMemUnmap(va, sz));
		CK(cuMemRelease(h));
		CK(cuMemAddressFree(va, sz));
	}
	if (g)
		CK(cudaGraphDestroy(g));
	CK(cudaStreamDestroy(s));
	printf("%s done\n", c);
	return 0;
}
