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
 * failure when the result is not ncclSuccess.
 *
 * Ranks: one process, one thread, one rank per visible device, TWO when
 * cudaGetDeviceCount says at least two, else one. With one rank NCCL's
 * all-reduce captures no kernel of its own (measured on H200s, 2026-11-29:
 * the graph held only the program's k_add, so CGS027/CGS028 had nothing to
 * name); with two, each rank's capture holds an ncclDevKernel_*. The two
 * ranks' all-reduces go between ncclGroupStart and ncclGroupEnd (one
 * thread driving several devices must group them: NCCL would otherwise
 * wait in the first for the second), the two captures are live at once,
 * one per device, begun and ended by this thread, and each graph is one
 * device's. With one rank the calls are the ones made before two were
 * used: no group, no cudaSetDevice. On the stand-in, STANDIN_DEVICES=2
 * gives the two-rank path (tests/rules/meson.build: the *-2ranks tests);
 * the default, one device, the one-rank path.
 *
 * What every scenario does first: sc_nccl_start(&r) (NCCL loaded, the
 * runtime started on each rank's device, a stream per rank),
 * sc_nccl_warm(&r, n) (r.x[i] filled, the communicators, an eager
 * all-reduce) and sc_nccl_capture(&r, n) (per rank a kernel and an
 * all-reduce of r.x[i] captured into r.g[i] and instantiated into r.e[i]).
 * sc_nccl_teardown(&r) destroys the communicators, in rank order, on a
 * second thread: with NCCL >= 2.26 a teardown waits until every graph that
 * captured work on the communicator is destroyed (and, the ranks being one
 * process's, the last rank's ncclCommDestroy waits for every rank's:
 * NCCL's init.cc, commReclaim), which a single thread that destroys its
 * graphs after it would never see; sc_nccl_wait(ms) says whether it
 * returned within ms.
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
	int (*group_start)(void);
	int (*group_end)(void);
} sc_nccl;

/* One rank per device, at most two (see above). */
#define SC_NCCL_MAX_RANKS 2
struct sc_nccl_ranks {
	int n;			    /* ranks: 2 with two devices visible, else 1 */
	int dev[SC_NCCL_MAX_RANKS]; /* rank i's device: i */
	cudaStream_t s[SC_NCCL_MAX_RANKS];
	sc_nccl_comm_t comm[SC_NCCL_MAX_RANKS];
	float *x[SC_NCCL_MAX_RANKS]; /* the caller's: the data rank i reduces */
	cudaGraph_t g[SC_NCCL_MAX_RANKS];
	cudaGraphExec_t e[SC_NCCL_MAX_RANKS];
};

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
	*(void **)&sc_nccl.group_start = dlsym(sc_nccl.h, "ncclGroupStart");
	*(void **)&sc_nccl.group_end = dlsym(sc_nccl.h, "ncclGroupEnd");
	if (!sc_nccl.init_all || !sc_nccl.all_reduce || !sc_nccl.destroy || !sc_nccl.group_start ||
	    !sc_nccl.group_end) {
		printf("libnccl.so.2 lacks ncclCommInitAll, ncclAllReduce, ncclCommDestroy, ncclGroupStart or "
		       "ncclGroupEnd\n");
		return 0;
	}
	return 1;
}

/* Rank i's device made current: only with two ranks (one rank makes the
 * calls it made before, without cudaSetDevice). */
static inline void sc_nccl_on(const struct sc_nccl_ranks *r, int i)
{
	if (r->n > 1)
		CHECK(cudaSetDevice(r->dev[i]), cudaSuccess);
}

/* libnccl.so.2 loaded, the ranks counted (printed: "nccl ranks: N"), the
 * runtime started and a non-blocking stream in r->s[i] on each rank's
 * device; device 0 current after. 0 when NCCL is missing (the scenario
 * then exits 1). */
static inline int sc_nccl_start(struct sc_nccl_ranks *r)
{
	int ndev = 0;
	memset(r, 0, sizeof *r);
	if (!sc_nccl_load())
		return 0;
	CHECK(cudaGetDeviceCount(&ndev), cudaSuccess);
	r->n = ndev >= 2 ? 2 : 1;
	printf("nccl ranks: %d\n", r->n);
	for (int i = 0; i < r->n; i++) {
		r->dev[i] = i;
		sc_nccl_on(r, i);
		CHECK(cudaFree(0), cudaSuccess);
		CHECK(cudaStreamCreateWithFlags(&r->s[i], cudaStreamNonBlocking), cudaSuccess);
	}
	sc_nccl_on(r, 0);
	return 1;
}

/* r->x[i] (n floats on rank i's device, the caller's) from cudaMalloc. */
static inline void sc_nccl_alloc(struct sc_nccl_ranks *r, long n)
{
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		CHECK(cudaMalloc((void **)&r->x[i], n * sizeof(float)), cudaSuccess);
	}
	sc_nccl_on(r, 0);
}

/* The ranks' all-reduces of x[i][0..n) on their streams; two in a group. */
static inline void sc_nccl_all_reduce(const struct sc_nccl_ranks *r, long n)
{
	if (r->n > 1)
		NCHECK(sc_nccl.group_start());
	for (int i = 0; i < r->n; i++)
		NCHECK(sc_nccl.all_reduce(r->x[i], r->x[i], n, SC_NCCL_FLOAT32, SC_NCCL_SUM, r->comm[i], r->s[i]));
	if (r->n > 1)
		NCHECK(sc_nccl.group_end());
}

/* x[i][0..n) filled with 1 on s[i], the communicators (ncclCommInitAll
 * over the ranks' devices) and an eager all-reduce (the warm-up, which
 * makes NCCL's connections before any capture), synchronized. */
static inline void sc_nccl_warm(struct sc_nccl_ranks *r, long n)
{
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		LAUNCH_FILL(r->s[i], r->x[i], n, 1.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
	sc_nccl_on(r, 0);
	NCHECK(sc_nccl.init_all(r->comm, r->n, r->dev));
	sc_nccl_all_reduce(r, n);
	for (int i = 0; i < r->n; i++)
		CHECK(cudaStreamSynchronize(r->s[i]), cudaSuccess);
}

/* Per rank a global capture on s[i] of a kernel adding 1 to x[i][0..n),
 * then the all-reduces of x over the communicators (grouped: both
 * captures live), each capture ended into g[i] and instantiated into e[i]
 * on its device. */
static inline void sc_nccl_capture(struct sc_nccl_ranks *r, long n)
{
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		CHECK(cudaStreamBeginCapture(r->s[i], cudaStreamCaptureModeGlobal), cudaSuccess);
		LAUNCH_ADD(r->s[i], r->x[i], n, 1.0);
		CHECK(cudaGetLastError(), cudaSuccess);
	}
	sc_nccl_on(r, 0);
	sc_nccl_all_reduce(r, n);
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		CHECK(cudaStreamEndCapture(r->s[i], &r->g[i]), cudaSuccess);
		CHECK(cudaGraphInstantiate(&r->e[i], r->g[i], 0), cudaSuccess);
	}
	sc_nccl_on(r, 0);
}

/* Every rank's executable launched `times` times on its stream, then the
 * streams synchronized. */
static inline void sc_nccl_replay(struct sc_nccl_ranks *r, int times)
{
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		for (int k = 0; k < times; k++)
			CHECK(cudaGraphLaunch(r->e[i], r->s[i]), cudaSuccess);
	}
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		CHECK(cudaStreamSynchronize(r->s[i]), cudaSuccess);
	}
	sc_nccl_on(r, 0);
}

/* Every rank's executable and graph destroyed. */
static inline void sc_nccl_destroy_graphs(struct sc_nccl_ranks *r)
{
	for (int i = 0; i < r->n; i++) {
		CHECK(cudaGraphExecDestroy(r->e[i]), cudaSuccess);
		CHECK(cudaGraphDestroy(r->g[i]), cudaSuccess);
	}
}

/* Every rank's communicator destroyed on this thread, in rank order. */
static inline void sc_nccl_destroy_comms(struct sc_nccl_ranks *r)
{
	for (int i = 0; i < r->n; i++)
		NCHECK(sc_nccl.destroy(r->comm[i]));
}

/* Every rank's x (when from sc_nccl_alloc) freed and stream destroyed,
 * each on its device. */
static inline void sc_nccl_finish(struct sc_nccl_ranks *r, int free_x)
{
	for (int i = 0; i < r->n; i++) {
		sc_nccl_on(r, i);
		if (free_x)
			CHECK(cudaFree(r->x[i]), cudaSuccess);
		CHECK(cudaStreamDestroy(r->s[i]), cudaSuccess);
	}
	sc_nccl_on(r, 0);
}

static int sc_nccl_done, sc_nccl_rc = -1;

/* The teardown thread: every communicator destroyed in rank order; the
 * first non-zero result kept (0 when all returned ncclSuccess). */
static void *sc_nccl_teardown_main(void *arg)
{
	struct sc_nccl_ranks *r = (struct sc_nccl_ranks *)arg;
	int rc = 0;
	for (int i = 0; i < r->n; i++) {
		int k = sc_nccl.destroy(r->comm[i]);
		if (k && !rc)
			rc = k;
	}
	__atomic_store_n(&sc_nccl_rc, rc, __ATOMIC_RELAXED);
	__atomic_store_n(&sc_nccl_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static inline pthread_t sc_nccl_teardown(struct sc_nccl_ranks *r)
{
	pthread_t t;
	pthread_create(&t, NULL, sc_nccl_teardown_main, r);
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
