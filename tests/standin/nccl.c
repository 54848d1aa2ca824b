/*
 * tests/standin/nccl.c -- a CPU stand-in for libnccl.so.2 (TEST DOUBLE,
 * never installed): the few entry points the NCCL rule reproducers use
 * (kernels/rules/cgs027_*, cgs028_*, valid_nccl-*), with NCCL's own ABI
 * (ncclComm_t an opaque pointer, ncclResult_t an int, ncclFloat32 7,
 * ncclSum 0).
 *
 * Model (inferred from NCCL's documentation): ncclCommInitAll gives one
 * communicator per listed device (a device outside the driver's count:
 * ncclInvalidArgument, one listed twice: ncclInvalidUsage, as NCCL's
 * init.cc checks); ncclAllReduce enqueues one device kernel on the stream
 * through the driver (cuLaunchKernel), under the communicator's device's
 * primary context (the caller's current context restored after, as NCCL
 * does with cudaSetDevice), so a capture records it as a kernel node,
 * named as NCCL's are (ncclDevKernel_*, C++-mangled). Between
 * ncclGroupStart and ncclGroupEnd (nested: the outermost end counts) the
 * all-reduces are only checked and kept, and launched at the end in call
 * order, as NCCL enqueues a group's work when it ends: that is how one
 * thread drives the ranks of several devices (STANDIN_DEVICES=2). The
 * kernel copies its input (the sum over one rank); over several ranks the
 * sum across devices is not computed (the reproducers do not read it), and
 * a multi-rank all-reduce outside a group, which NCCL would block in
 * waiting for the other ranks, is launched at once. ncclCommDestroy, ncclCommAbort and
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
	int total = 0;
	if (!comms || ndev < 1)
		return 4;
	if (cuDeviceGetCount(&total) != CUDA_SUCCESS)
		return 1; /* ncclUnhandledCudaError */
	for (int i = 0; devlist && i < ndev; i++) {
		if (devlist[i] < 0 || devlist[i] >= total)
			return 4;
		for (int j = 0; j < i; j++)
			if (devlist[j] == devlist[i])
				return 5; /* ncclInvalidUsage */
	}
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

/* One all-reduce's kernel on its stream, under its communicator's
 * device's primary context; the caller's context restored. */
static int launch_allreduce(const void *send, void *recv, size_t count, ncclComm_t comm, CUstream stream)
{
	void *args[] = {(void *)&send, (void *)&recv, (void *)&count, NULL};
	CUcontext saved = NULL, ctx = NULL;
	CUresult rc;
	if (cuCtxGetCurrent(&saved) != CUDA_SUCCESS || cuDevicePrimaryCtxRetain(&ctx, comm->dev) != CUDA_SUCCESS ||
	    cuCtxSetCurrent(ctx) != CUDA_SUCCESS)
		return 1; /* ncclUnhandledCudaError */
	rc = cuLaunchKernel((CUfunction)(void *)standin_nccl_allreduce, 1, 1, 1, 1, 1, 1, 0, stream, args, NULL);
	cuCtxSetCurrent(saved);
	return rc ? 1 : 0;
}

/* The calling thread's open group: its depth and the all-reduces kept for
 * its end (NCCL's group state is per thread too). */
#define GROUP_MAX 64
static __thread int t_group_depth, t_group_n;
static __thread struct {
	const void *send;
	void *recv;
	size_t count;
	ncclComm_t comm;
	CUstream stream;
} t_group[GROUP_MAX];

EXPORT int ncclGroupStart(void)
{
	t_group_depth++;
	return 0;
}

EXPORT int ncclGroupEnd(void)
{
	int rc = 0;
	if (t_group_depth < 1)
		return 5; /* ncclInvalidUsage: no group open */
	if (--t_group_depth)
		return 0;
	for (int i = 0; i < t_group_n; i++) {
		int r = launch_allreduce(t_group[i].send, t_group[i].recv, t_group[i].count, t_group[i].comm,
					 t_group[i].stream);
		if (r && !rc)
			rc = r;
	}
	t_group_n = 0;
	return rc;
}

EXPORT int ncclAllReduce(const void *send, void *recv, size_t count, int datatype, int op, ncclComm_t comm,
			 CUstream stream)
{
	if (!comm || !send || !recv || datatype != 7 || op != 0)
		return 4;
	if (!t_group_depth)
		return launch_allreduce(send, recv, count, comm, stream);
	if (t_group_n == GROUP_MAX)
		return 2; /* ncclSystemError: the stand-in's group is full */
	t_group[t_group_n].send = send;
	t_group[t_group_n].recv = recv;
	t_group[t_group_n].count = count;
	t_group[t_group_n].comm = comm;
	t_group[t_group_n].stream = stream;
	t_group_n++;
	return 0;
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
