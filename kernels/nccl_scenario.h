/*
 * kernels/nccl_scenario.h -- NCCL for the NCCL rule scenarios (issue 33),
 * on top of scenario.h, for both builds: nvcc on a GPU host (the real
 * libnccl.so.2: PyTorch's wheel has it under nvidia/nccl/lib, which
 * tests/gpu/fidelity puts on LD_LIBRARY_PATH) and gcc against the stand-in
 * (tests/standin/nccl.c).
 *
 * No NCCL header: libnccl.so.2 is dlopen'ed RTLD_LOCAL and its entry points
 * taken with dlsym on its handle (as XLA's NCCL stub does); ncclComm_t is
 * an opaque pointer, ncclResult_t an int, ncclFloat32 7, ncclSum 0.
 *
 * NCHECK(call) prints "<function>: nccl rc=<int>" like CHECK and counts a
 * failure when the result is not ncclSuccess. sc_nccl_teardown(comm)
 * destroys the communicator on a second thread: with NCCL >= 2.26 the call
 * waits until every graph that captured work on it is destroyed, which a
 * single thread that destroys its graphs after it would never see;
 * sc_nccl_wait(ms) says whether it returned within ms.
 *
 * What every scenario does first: sc_nccl_start(&s) (NCCL loaded, the
 * runtime started, a stream), sc_nccl_warm(s, x, n, &comm, &dev) (x
 * filled, a one-rank communicator, an eager all-reduce) and
 * sc_nccl_capture(s, x, n, comm, &g, &e) (a kernel and an all-reduce of x
 * captured and instantiated).
 */
#ifndef CGSHIM_NCCL_SCENARIO_H
#define CGSHIM_NCCL_SCENARIO_H

#include <dlfcn.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

#include "scenario.h"

typedef struct sc_nccl_comm *sc_nccl_comm_t;
#define SC_NCCL_FLOAT32 7
#define SC_NCCL_SUM 0

static struct {
	void *h;
	int (*init_all)(sc_nccl_comm_t *, int, const int *);
	int (*all_reduce)(const void *, void *, size_t, int, int, sc_nccl_comm_t, cudaStream_t);
	int (*destroy)(sc_nccl_comm_t);
} sc_nccl;

static inline int sc_nccl_check(const char *call, int rc)
{
	int len = 0;
	while (call[len] && call[len] != '(' && call[len] != ' ')
		len++;
	printf("%.*s: nccl rc=%d%s\n", len, call, rc, rc ? " UNEXPECTED (want 0)" : "");
	fflush(stdout);
	if (rc)
		scenario_failures++;
	return rc;
}
#define NCHECK(call) sc_nccl_check(#call, (int)(call))

/* 1 when libnccl.so.2 and its entry points were found. */
static inline int sc_nccl_load(void)
{
	sc_nccl.h = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
	if (!sc_nccl.h) {
		printf("no libnccl.so.2 (put NCCL's lib directory on LD_LIBRARY_PATH)\n");
		return 0;
	}
	*(void **)&sc_nccl.init_all = dlsym(sc_nccl.h, "ncclCommInitAll");
	*(void **)&sc_nccl.all_reduce = dlsym(sc_nccl.h, "ncclAllReduce");
	*(void **)&sc_nccl.destroy = dlsym(sc_nccl.h, "ncclCommDestroy");
	if (!sc_nccl.init_all || !sc_nccl.all_reduce || !sc_nccl.destroy) {
		printf("libnccl.so.2 lacks ncclCommInitAll, ncclAllReduce or ncclCommDestroy\n");
		return 0;
	}
	return 1;
}

/* libnccl.so.2 loaded, the runtime started and a non-blocking stream in
 * *s; 0 when NCCL is missing (the scenario then exits 1). */
static inline int sc_nccl_start(cudaStream_t *s)
{
	if (!sc_nccl_load())
		return 0;
	CHECK(cudaFree(0), cudaSuccess);
	CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking), cudaSuccess);
	return 1;
}

/* x[0..n) filled with 1 on s, a one-rank communicator on *dev in *comm and
 * an eager all-reduce of x over it (the warm-up), synchronized. */
static inline void sc_nccl_warm(cudaStream_t s, float *x, long n, sc_nccl_comm_t *comm, int *dev)
{
	LAUNCH_FILL(s, x, n, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	NCHECK(sc_nccl.init_all(comm, 1, dev));
	NCHECK(sc_nccl.all_reduce(x, x, n, SC_NCCL_FLOAT32, SC_NCCL_SUM, *comm, s));
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
}

/* A global capture on s of a kernel adding 1 to x[0..n) and an all-reduce
 * of x over comm, in *g, instantiated into *e. */
static inline void sc_nccl_capture(cudaStream_t s, float *x, long n, sc_nccl_comm_t comm, cudaGraph_t *g,
				   cudaGraphExec_t *e)
{
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_ADD(s, x, n, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	NCHECK(sc_nccl.all_reduce(x, x, n, SC_NCCL_FLOAT32, SC_NCCL_SUM, comm, s));
	CHECK(cudaStreamEndCapture(s, g), cudaSuccess);
	CHECK(cudaGraphInstantiate(e, *g, 0), cudaSuccess);
}

static int sc_nccl_done, sc_nccl_rc = -1;

static void *sc_nccl_teardown_main(void *comm)
{
	int rc = sc_nccl.destroy((sc_nccl_comm_t)comm);
	__atomic_store_n(&sc_nccl_rc, rc, __ATOMIC_RELAXED);
	__atomic_store_n(&sc_nccl_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static inline pthread_t sc_nccl_teardown(sc_nccl_comm_t comm)
{
	pthread_t t;
	pthread_create(&t, NULL, sc_nccl_teardown_main, comm);
	return t;
}

static inline int sc_nccl_wait(int ms)
{
	struct timespec ts = {0, 10 * 1000 * 1000};
	for (int i = 0; i < ms / 10 && !__atomic_load_n(&sc_nccl_done, __ATOMIC_ACQUIRE); i++)
		nanosleep(&ts, NULL);
	return __atomic_load_n(&sc_nccl_done, __ATOMIC_ACQUIRE);
}

#endif
