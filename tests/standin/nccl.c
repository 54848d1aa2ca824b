/*
 * tests/standin/nccl.c -- a CPU stand-in for libnccl.so.2 (TEST DOUBLE,
 * never installed): the few entry points the NCCL rule reproducers use
 * (kernels/rules/cgs027_*, cgs028_*, valid_nccl-*), with NCCL's own ABI
 * (ncclComm_t an opaque pointer, ncclResult_t an int, ncclFloat32 7,
 * ncclSum 0).
 *
 * Model (inferred from NCCL's documentation): ncclCommInitAll gives one
 * communicator per listed device; ncclAllReduce enqueues one device kernel
 * on the stream through the driver (cuLaunchKernel), so a capture records
 * it as a kernel node, named as NCCL's are (ncclDevKernel_*, C++-mangled);
 * with one rank the sum is the input. ncclCommDestroy, ncclCommAbort and
 * ncclCommFinalize return at once: this stand-in is NCCL before 2.26, which
 * did not wait for the graphs that captured work on the communicator (2.26
 * and later do; the reproducers tear down from a second thread, so a real
 * NCCL's wait ends when the main thread destroys the graphs).
 *
 * STANDIN_NCCL_TEARDOWN_UNTIL=path: the three teardown calls wait until the
 * file path exists (polled every 5 ms), standing for NCCL 2.26's wait for
 * graphs never destroyed (the dump's teardown test, docs/dump.md).
 */
#include <cuda.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "standin.h"

#define EXPORT __attribute__((visibility("default")))

struct standin_nccl_comm {
	int dev, rank, nranks, finalized;
};
typedef struct standin_nccl_comm *ncclComm_t;

/* NCCL's all-reduce kernel, by its mangled name (a C++ kernel of NCCL
 * 2.19+): recv[i] = send[i] (one rank). Parameters: send, recv, count. */
void standin_nccl_allreduce(void **a, unsigned long nthreads) __asm__(
    "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE");
EXPORT void standin_nccl_allreduce(void **a, unsigned long nthreads)
{
	const float *s = STANDIN_ARG(a, 0, const float *);
	float *d = STANDIN_ARG(a, 1, float *);
	unsigned long n = STANDIN_ARG(a, 2, unsigned long);
	(void)nthreads;
	for (unsigned long i = 0; i < n; i++)
		d[i] = s[i];
}

EXPORT int ncclGetVersion(int *version)
{
	if (!version)
		return 4; /* ncclInvalidArgument */
	*version = 22305;
	return 0;
}

EXPORT int ncclCommInitAll(ncclComm_t *comms, int ndev, const int *devlist)
{
	if (!comms || ndev < 1)
		return 4;
	for (int i = 0; i < ndev; i++) {
		comms[i] = calloc(1, sizeof **comms);
		if (!comms[i])
			return 2; /* ncclSystemError */
		comms[i]->dev = devlist ? devlist[i] : i;
		comms[i]->rank = i;
		comms[i]->nranks = ndev;
	}
	return 0;
}

EXPORT int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, ncclComm_t comm,
			 CUstream stream)
{
	void *args[] = {(void *)&send, (void *)&recv, (void *)&count, NULL};
	if (!comm || !send || !recv || datatype != 7 || op != 0)
		return 4;
	return cuLaunchKernel((CUfunction)(void *)standin_nccl_allreduce, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL)
		   ? 1 /* ncclUnhandledCudaError */
		   : 0;
}

static void teardown_wait(void)
{
	const char *until = getenv("STANDIN_NCCL_TEARDOWN_UNTIL");
	while (until && *until && access(until, F_OK) != 0) {
		struct timespec t = {0, 5000000L};
		nanosleep(&t, NULL);
	}
}

EXPORT int ncclCommFinalize(ncclComm_t comm)
{
	if (!comm)
		return 4;
	teardown_wait();
	comm->finalized = 1;
	return 0;
}

EXPORT int ncclCommDestroy(ncclComm_t comm)
{
	if (!comm)
		return 4;
	teardown_wait();
	free(comm);
	return 0;
}

EXPORT int ncclCommAbort(ncclComm_t comm)
{
	if (!comm)
		return 4;
	teardown_wait();
	free(comm);
	return 0;
}
