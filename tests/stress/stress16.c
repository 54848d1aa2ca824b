/*
 * tests/stress/stress16.c -- 16 well-behaved threads against the stand-in,
 * run under the shim (and, in the tsan setup, under ThreadSanitizer).
 *
 *   stress16 [ROUNDS]
 *
 * Each thread, every round: captures a graph of 1-3 kernels on its own
 * stream (thread-local mode), instantiates it, launches it, updates its exec
 * from a graph of the same shape (succeeds) and of another shape (910, or a
 * rewrite under CGSHIM_ON_UPDATE_FAILURE=reinstantiate), launches again,
 * destroys everything. Meanwhile every thread launches one shared exec, and
 * thread 0 updates it and thread 1 destroys and re-instantiates it; the
 * application orders those against the launches with a rwlock, as a correct
 * program must, so every race left is the shim's own (lazy driver
 * resolution, the lock-free launch index, exec structs reused while other
 * threads launch). Exits 1 on any unexpected result code.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "standin.h"

/* cuda.h declares the _ptsz twin only in per-thread mode */
CUresult st_cuGraphLaunch_ptsz(CUgraphExec, CUstream) __asm__("cuGraphLaunch_ptsz");

#define NT 16

static CUcontext ctx;
static CUgraph shared_graph, same_graph;
static CUgraphExec shared_exec;
static pthread_rwlock_t shared_lock = PTHREAD_RWLOCK_INITIALIZER;
static pthread_barrier_t start;
static long counter;
static int rounds = 200;
static int failures;
static long n_launch, n_update, n_rewrite_or_910, n_reinst;

static void kern(void **params, unsigned long n)
{
	(void)params;
	(void)n;
	__atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}

static void expect(const char *what, int rc, int want, int also)
{
	if (rc != want && rc != also) {
		__atomic_fetch_add(&failures, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "stress16: %s: rc=%d (want %d)\n", what, rc, want);
	}
}

static CUgraph capture(CUstream s, int kernels)
{
	CUgraph g = NULL;
	/* the argument's own storage: the driver (and the shim, which reads a
	 * captured launch's arguments) reads it at the launch, while graph
	 * launches on other threads add to counter */
	long arg = 1;
	void *args[] = {&arg, NULL};
	expect("begin capture", cuStreamBeginCapture_v2(s, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), 0, 0);
	for (int i = 0; i < kernels; i++)
		expect("captured launch", cuLaunchKernel((CUfunction)(void *)kern, 1, 1, 1, 1, 1, 1, 0, s, args, NULL),
		       0, 0);
	expect("end capture", cuStreamEndCapture(s, &g), 0, 0);
	return g;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	CUstream s;
	long launches = 0, updates = 0, refused = 0, reinst = 0;
	expect("set ctx", cuCtxSetCurrent(ctx), 0, 0);
	expect("stream", cuStreamCreate(&s, 0), 0, 0);
	/* The process's first hooked calls, from 16 threads at once: they
	 * race the shim's lazy resolution of the driver. */
	pthread_barrier_wait(&start);
	{
		CUgraph g0 = capture(s, 1);
		expect("graph destroy", cuGraphDestroy(g0), 0, 0);
	}
	if (id == 0) {
		shared_graph = capture(s, 2);
		same_graph = capture(s, 2);
		expect("shared instantiate", cuGraphInstantiateWithFlags(&shared_exec, shared_graph, 0), 0, 0);
	}
	pthread_barrier_wait(&start);
	for (int r = 0; r < rounds; r++) {
		int k = 1 + (r + id) % 3;
		CUgraph g = capture(s, k), same = capture(s, k), other = capture(s, k % 3 + 1);
		CUgraphExec e = NULL;
		CUgraphExecUpdateResultInfo info;
		expect("instantiate", cuGraphInstantiateWithFlags(&e, g, 0), 0, 0);
		expect("launch", cuGraphLaunch(e, s), 0, 0);
		expect("update (same shape)", cuGraphExecUpdate_v2(e, same, &info), 0, 0);
		/* 910 bare, a rewrite (0) under reinstantiate */
		int rc = cuGraphExecUpdate_v2(e, other, &info);
		expect("update (other shape)", rc, CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 0);
		refused += rc == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
		expect("launch after update", cuGraphLaunch(e, s), 0, 0);
		launches += 2;
		updates += 2;

		/* the shared exec */
		if (id == 0 && r % 4 == 0) {
			pthread_rwlock_wrlock(&shared_lock);
			expect("shared update", cuGraphExecUpdate_v2(shared_exec, same_graph, &info), 0, 0);
			pthread_rwlock_unlock(&shared_lock);
			updates++;
		} else if (id == 1 && r % 4 == 2) {
			pthread_rwlock_wrlock(&shared_lock);
			expect("shared destroy", cuGraphExecDestroy(shared_exec), 0, 0);
			expect("shared instantiate", cuGraphInstantiateWithFlags(&shared_exec, shared_graph, 0), 0, 0);
			pthread_rwlock_unlock(&shared_lock);
			reinst++;
		}
		for (int i = 0; i < 4; i++) {
			pthread_rwlock_rdlock(&shared_lock);
			expect("shared launch", st_cuGraphLaunch_ptsz(shared_exec, s), 0, 0);
			pthread_rwlock_unlock(&shared_lock);
			launches++;
		}
		expect("exec destroy", cuGraphExecDestroy(e), 0, 0);
		expect("graph destroy", cuGraphDestroy(g), 0, 0);
		expect("graph destroy", cuGraphDestroy(same), 0, 0);
		expect("graph destroy", cuGraphDestroy(other), 0, 0);
	}
	expect("stream sync", cuStreamSynchronize(s), 0, 0);
	expect("stream destroy", cuStreamDestroy(s), 0, 0);
	__atomic_fetch_add(&n_launch, launches, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_update, updates, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_rewrite_or_910, refused, __ATOMIC_RELAXED);
	__atomic_fetch_add(&n_reinst, reinst, __ATOMIC_RELAXED);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[NT];
	CUdevice dev;
	if (argc > 1)
		rounds = atoi(argv[1]);
	/* no hooked call before the threads start (cuInit and the context
	 * calls are not hooked) */
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx)) {
		fprintf(stderr, "stress16: set-up failed\n");
		return 1;
	}
	pthread_barrier_init(&start, NULL, NT);
	for (int i = 0; i < NT; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(long)i)) {
			fprintf(stderr, "stress16: pthread_create failed\n");
			return 1;
		}
	for (int i = 0; i < NT; i++)
		pthread_join(t[i], NULL);
	expect("shared destroy", cuGraphExecDestroy(shared_exec), 0, 0);
	cuGraphDestroy(shared_graph);
	cuGraphDestroy(same_graph);
	printf("stress16: %d threads x %d rounds: %ld launches, %ld updates (%ld refused with 910), %ld shared "
	       "re-instantiations, %ld kernel runs, %d unexpected results\n",
	       NT, rounds, n_launch, n_update, n_rewrite_or_910, n_reinst, counter, failures);
	return failures ? 1 : 0;
}
