/*
 * bench/eager_calls.c -- N eager launches of an empty kernel from one call
 * site, nothing else: the instruction count per eager launch under
 * callgrind is the difference of two runs (N = 10,000 and 20,000) over
 * 10,000, start-up and exit cancelling (docs/measurements.md, issue 32).
 * Stand-in only (the kernel is a host function of its convention):
 *   gcc -O2 -x c -Ikernels -Itests/standin -I/usr/local/cuda/include bench/eager_calls.c \
 *       -Lbuild/tests/standin -lcudart -o eager_calls
 *   LD_LIBRARY_PATH=build/tests/standin LD_PRELOAD=build/shim/libcgshim.so CGSHIM_LOG=info \
 *       CGSHIM_LOG_FILE=/tmp/l-%p.jsonl valgrind --tool=callgrind ./eager_calls 10000
 * usage: eager_calls N
 */
#include <stdlib.h>

#include "scenario.h"

static void k_empty(void **a, unsigned long n)
{
	(void)a;
	(void)n;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000;
	cudaStream_t s;
	void *args[] = {NULL};
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), cudaSuccess);
	for (long i = 0; i < n; i++)
		(void)cudaLaunchKernel((const void *)k_empty, (dim3){1, 1, 1}, (dim3){1, 1, 1}, args, 0, s);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	return 0;
}
