// tests/gpu/crash_gpu.cu -- issue 30.4 on a GPU: three launches of a captured
// graph, a capture left open, then a fatal signal (crash_gpu raise|fault|handler).
// handler: the program's own SIGSEGV handler (installed before the first CUDA
// call) prints and _exits 42. Run bare and under the shim by issue30_crash.py.
#include <cuda_runtime.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__global__ void k(float *p)
{
	p[threadIdx.x] += 1.0f;
}

static void own(int)
{
	static const char m[] = "app handler ran\n";
	(void)!write(1, m, sizeof m - 1);
	_exit(42);
}

int main(int argc, char **argv)
{
	const char *m = argc > 1 ? argv[1] : "raise";
	if (!strcmp(m, "handler"))
		signal(SIGSEGV, own);
	float *d;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t x;
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaMalloc(&d, 1024);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	k<<<1, 32, 0, s>>>(d);
	cudaStreamEndCapture(s, &g);
	cudaGraphInstantiate(&x, g, 0);
	for (int i = 0; i < 3; i++)
		cudaGraphLaunch(x, s);
	cudaStreamSynchronize(s);
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal); // left open
	printf("about to crash\n");
	fflush(stdout);
	if (!strcmp(m, "fault"))
		*(volatile int *)(uintptr_t)(argc - 2) = 1;
	raise(SIGSEGV);
	return 0;
}
