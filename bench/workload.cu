/*
 * bench/workload.cu -- the workloads of the cost-per-call-type benchmark
 * (bench/run.py runs them bare, under the shim and with CGSHIM_DISABLE=1).
 *
 * usage: workload CASE [NODES] [ITERS] [BATCH]
 *   launch         cudaGraphLaunch of a 1-node graph (the empty kernel), ITERS launches in batches
 *                  of BATCH (each batch ends with a stream synchronize)
 *   eager          cudaLaunchKernel of an empty kernel, the same batches
 *   capture        capture of NODES nodes (cudaMallocAsync, NODES-2 kernels,
 *                  cudaFreeAsync: one memory node pair), instantiate with
 *                  AutoFreeOnLaunch, destroy exec and graph; ITERS iterations
 *   update-same    whole-graph cudaGraphExecUpdate of an exec of a NODES-kernel
 *                  chain from an identical graph captured once and reused every
 *                  iteration (the replay/update loop of a serving engine)
 *   update-fresh   the same update from a graph captured anew every iteration
 *                  (other kernel arguments); the capture is not timed
 *   update-alt     the update alternating between two graphs of the exec's
 *                  topology with other kernel arguments, both captured once
 *                  and kept (a replay loop keeping one graph per batch
 *                  variant); the update alone timed
 *   update-capture a step of the vLLM/SGLang shape: a fresh capture (other
 *                  kernel arguments), the update from it, the graph destroyed;
 *                  the whole step timed
 * (NODES is ignored by launch and eager; defaults: NODES 64, ITERS 300,
 * BATCH 1000.)
 *
 * Output contract (bench/run.py parses it), one line:
 *   result CASE nodes N iters I median_ns M p25_ns A p75_ns B
 * M is the median over iterations (launch, eager: over batches, per launch)
 * of the timed call(s) alone. Timing is CLOCK_MONOTONIC inside the process
 * around the timed calls only: process start-up, context creation, the shim's
 * set-up and the warm-up iterations are excluded, so the ratios compare the
 * calls and not the loader.
 *
 * Lockstep (bench/run.py's default, bench/baton.h): with BENCH_BATON set, every
 * case prints "iter I NS" per iteration (launch, eager: per batch) and passes the baton
 * after every iteration (warm-up included, so every side takes the same
 * number of turns).
 *
 * Builds with nvcc (bench/build.sh: nvcc -O2 -arch=sm_90 -Ikernels -Ibench)
 * and, for a CPU smoke test, as C against the stand-in runtime
 * (gcc -x c -Ikernels -Itests/standin -Ibench -I/usr/local/cuda/include ... -lcudart).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>

#include "scenario.h"
#include "baton.h"
#include "bench.h"

#ifdef __CUDACC__
__global__ void k_empty(void)
{
}
#else
static void k_empty(void **a, unsigned long n)
{
	(void)a;
	(void)n;
}
#endif

#define BUF 1024L

/* BENCH_PHASES=1 (bench/phases.py): the capture and update-capture cases
 * also stamp the clock between their calls and print, per phase, the
 * median over iterations: "phase NAME median_ns M". */
#define PH_MAX 8
static double *ph_t; /* iters x PH_MAX phase durations, NULL when off */
static int ph_iters;
static double ph_last;
/* BENCH_TOUCH=N (with BENCH_PHASES=1, no shim: bench/phases.py --before
 * <an empty .so> --before-env BENCH_TOUCH=N): at the start of each phase,
 * before its driver call, N distinct cache lines of that phase's own are
 * read (the same lines every cycle, as a hook's code and tables are): what
 * a footprint of the shim's size costs, and whether it slows the driver's
 * calls after it (docs/measurements.md, nineteenth session). */
#define TCH_MAX 256
static char tch_area[PH_MAX * TCH_MAX * 64];
static int tch_n; /* lines a phase, set by ph_start */
static void tch_phase(int k)
{
	for (int i = 0; i < tch_n && k < PH_MAX; i++)
		(void)*(volatile char *)&tch_area[((size_t)k * TCH_MAX + i) * 64];
}
static void ph_start(int iters)
{
	const char *e = getenv("BENCH_PHASES");
	if (e && *e == '1' && !ph_t) {
		ph_t = (double *)calloc((size_t)iters * PH_MAX, sizeof *ph_t);
		ph_iters = iters;
		e = getenv("BENCH_TOUCH");
		tch_n = e ? atoi(e) : 0;
		tch_n = tch_n < 0 ? 0 : tch_n > TCH_MAX ? TCH_MAX : tch_n;
	}
}
static void ph_mark(int r, int k)
{
	if (!ph_t)
		return;
	double t = now_ns();
	if (r >= 0 && r < ph_iters && k > 0)
		ph_t[(size_t)r * PH_MAX + k - 1] = t - ph_last;
	ph_last = t;
	tch_phase(k);
}
/* BENCH_MIMIC=1 (bench/phases.py --before-env, with no shim): the capture
 * case makes, in each phase, the driver queries the shim makes there at
 * cb1905b (bench/callers.py on the stand-in: one capture-info query after
 * the begin and before the alloc, the free and the end; the current device
 * at the alloc, the free and the instantiate; the graph's id and node count
 * after the end; the node count and the exec's id at the instantiate), so
 * that what they cost cold on the real driver is measured apart from the
 * shim's own code. */
typedef int (*mim_gci_t)(void *, int *, unsigned long long *, void **, const void **, const void **, size_t *);
typedef int (*mim_dev_t)(int *);
typedef int (*mim_gid_t)(void *, unsigned int *);
typedef int (*mim_nodes_t)(void *, void **, size_t *);
static struct {
	int on;
	mim_gci_t gci;
	mim_dev_t dev;
	mim_gid_t gid, eid;
	mim_nodes_t nodes;
} mim;
static void mim_start(void)
{
	const char *e = getenv("BENCH_MIMIC");
	void *h;
	if (!e || *e != '1' || !(h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)))
		return;
	mim.gci = (mim_gci_t)dlsym(h, "cuStreamGetCaptureInfo_v3");
	mim.dev = (mim_dev_t)dlsym(h, "cuCtxGetDevice");
	mim.gid = (mim_gid_t)dlsym(h, "cuGraphGetId");
	mim.eid = (mim_gid_t)dlsym(h, "cuGraphExecGetId");
	mim.nodes = (mim_nodes_t)dlsym(h, "cuGraphGetNodes");
	mim.on = mim.gci && mim.dev && mim.gid && mim.eid && mim.nodes;
	if (!mim.on)
		fprintf(stderr, "BENCH_MIMIC: a driver entry is missing\n");
}
static void mim_gci(void *s)
{
	int st;
	unsigned long long id;
	void *g;
	if (mim.on)
		mim.gci(s, &st, &id, &g, NULL, NULL, NULL);
}
static void mim_dev(void)
{
	int d;
	if (mim.on)
		mim.dev(&d);
}
static void mim_graph(void *g, int exec)
{
	unsigned int id;
	size_t n = 0;
	if (!mim.on)
		return;
	if (exec)
		mim.eid(g, &id);
	else
		mim.gid(g, &id), mim.nodes(g, NULL, &n);
}
static void mim_count(void *g)
{
	size_t n = 0;
	if (mim.on)
		mim.nodes(g, NULL, &n);
}

/* BENCH_FLUSH=MB: after every capture or update iteration (untimed), write
 * one byte a cache line of an MB-megabyte buffer, so the next iteration
 * starts with cold caches as in lockstep, where the partners' turns evict
 * them: under callgrind --cache-sim=yes the misses of each function are
 * then what the lockstep harness pays (bench/phases.py's diff). */
static void bench_flush(void)
{
	static unsigned char *buf;
	static size_t n = (size_t)-1;
	if (n == (size_t)-1) {
		const char *e = getenv("BENCH_FLUSH");
		n = e ? (size_t)atol(e) << 20 : 0;
		buf = n ? (unsigned char *)malloc(n) : NULL;
		if (!buf)
			n = 0;
	}
	for (size_t i = 0; i < n; i += 64)
		buf[i]++;
}

static void ph_report(const char *const *names, int n)
{
	double *v = (double *)malloc((size_t)ph_iters * sizeof *v);
	for (int k = 0; ph_t && v && k < n; k++) {
		for (int r = 0; r < ph_iters; r++)
			v[r] = ph_t[(size_t)r * PH_MAX + k];
		qsort(v, (size_t)ph_iters, sizeof *v, cmp_double);
		printf("phase %s median_ns %.1f\n", names[k], v[ph_iters / 2]);
	}
	free(v);
}

/* Sorts v; prints the result line. */
static void report(const char *name, int nodes, int n, double *v)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	double med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	printf("result %s nodes %d iters %d median_ns %.1f p25_ns %.1f p75_ns %.1f\n", name, nodes, n, med, v[n / 4],
	       v[(3 * n) / 4]);
}

static cudaGraph_t chain_at(cudaStream_t s, float *buf, int nodes, double v, int r)
{
	cudaGraph_t g;
	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
	ph_mark(r, 1);
	for (int i = 0; i < nodes; i++)
		LAUNCH_ADD(s, buf, BUF, v);
	MUST(cudaGetLastError());
	ph_mark(r, 2);
	MUST(cudaStreamEndCapture(s, &g));
	ph_mark(r, 3);
	return g;
}

static cudaGraph_t chain(cudaStream_t s, float *buf, int nodes, double v)
{
	return chain_at(s, buf, nodes, v, -1);
}

static void launch_empty(cudaStream_t s)
{
	dim3 one = {1, 1, 1};
#ifdef __CUDACC__
	MUST(cudaLaunchKernel((const void *)k_empty, one, one, NULL, 0, s));
#else
	void *args[] = {NULL};
	MUST(cudaLaunchKernel((const void *)k_empty, one, one, args, 0, s));
#endif
}

/* launch, eager: per-launch ns of each batch (the batch's closing
 * synchronize included, amortized over BATCH launches). In lockstep (lock)
 * the warm-up is a count, 100 batches, so every side takes as many turns,
 * and the partners' batches keep the GPU's clocks up meanwhile. */
static int launches(int eager, int iters, int batch, cudaStream_t s, float *buf, int lock)
{
	int nb = iters / batch > 0 ? iters / batch : 1;
	double *t = (double *)malloc((size_t)nb * sizeof *t);
	cudaGraph_t g = NULL;
	cudaGraphExec_t e = NULL;
	(void)buf;
	if (!eager) { /* the same empty kernel, captured: the launch path dominates, not the GPU */
		MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
		launch_empty(s);
		MUST(cudaStreamEndCapture(s, &g));
		MUST(cudaGraphInstantiate(&e, g, 0));
	}
	/* Warm-up of 300 ms, not a count: a GPU left idle by the process
	 * start-up runs these launches at ~1.8 us until its clocks rise, ~1.4
	 * after (H200, 2026-11-28); 2,000 launches left one run's processes
	 * in either state, bare or not. */
	double w0 = now_ns();
	int warm = 0;
	do {
		for (int i = 0; i < 1000; i++)
			if (eager)
				launch_empty(s);
			else
				MUST(cudaGraphLaunch(e, s));
		MUST(cudaStreamSynchronize(s));
		if (lock)
			baton_turn();
	} while (lock ? ++warm < 100 : now_ns() - w0 < 300e6);
	for (int b = 0; b < nb; b++) {
		double t0 = now_ns();
		if (eager)
			for (int i = 0; i < batch; i++)
				launch_empty(s);
		else
			for (int i = 0; i < batch; i++)
				MUST(cudaGraphLaunch(e, s));
		MUST(cudaStreamSynchronize(s));
		t[b] = (now_ns() - t0) / batch;
		if (lock) {
			printf("iter %d %.1f\n", b, t[b]);
			baton_turn();
		}
	}
	report(eager ? "eager" : "launch", eager ? 0 : 1, nb, t);
	if (!eager) {
		MUST(cudaGraphExecDestroy(e));
		MUST(cudaGraphDestroy(g));
	}
	free(t);
	return 0;
}

/* capture + instantiate (AutoFreeOnLaunch) + destroy, the whole cycle timed. */
static int capture(int nodes, int iters, cudaStream_t s, int lock)
{
	double *t = (double *)malloc((size_t)iters * sizeof *t);
	static const char *const ph_names[] = {"begin", "alloc", "launches", "free", "end", "instantiate", "exec_destroy", "graph_destroy"};
	ph_start(iters);
	mim_start();
	for (int r = -20; r < iters; r++) { /* 20 warm-up iterations */
		cudaGraph_t g = NULL;
		cudaGraphExec_t e = NULL;
		float *p = NULL;
		double t0 = now_ns();
		ph_mark(r, 0);
		MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		mim_gci(s);
		ph_mark(r, 1);
		mim_dev(), mim_gci(s);
		MUST(cudaMallocAsync((void **)&p, BUF * sizeof(float), s));
		ph_mark(r, 2);
		for (int k = 0; k < nodes - 2; k++)
			LAUNCH_ADD(s, p, BUF, 1.0);
		ph_mark(r, 3);
		mim_dev(), mim_gci(s);
		MUST(cudaFreeAsync(p, s));
		ph_mark(r, 4);
		mim_gci(s);
		MUST(cudaStreamEndCapture(s, &g));
		mim_graph(g, 0);
		ph_mark(r, 5);
		mim_count(g);
		MUST(cudaGraphInstantiate(&e, g, cudaGraphInstantiateFlagAutoFreeOnLaunch));
		mim_graph(e, 1), mim_dev();
		ph_mark(r, 6);
		MUST(cudaGraphExecDestroy(e));
		ph_mark(r, 7);
		MUST(cudaGraphDestroy(g));
		ph_mark(r, 8);
		double dt = now_ns() - t0;
		if (r >= 0)
			t[r] = dt;
		bench_flush();
		if (lock) {
			if (r >= 0)
				printf("iter %d %.0f\n", r, dt);
			baton_turn();
		}
	}
	report("capture", nodes, iters, t);
	ph_report(ph_names, 8);
	free(t);
	return 0;
}

/* The update cases (workload usage above): the graph each iteration
 * updates from, and what is timed. */
enum upd_kind { UPD_SAME, UPD_FRESH, UPD_ALT, UPD_CAPTURE };
static const char *const upd_name[] = {"update-same", "update-fresh", "update-alt", "update-capture"};

/* update-same, -fresh, -alt: the update alone timed; update-capture: the
 * capture, the update and the graph's destroy. Every 16th iteration the
 * exec is launched (untimed), as a replay loop does between updates. */
static int update(enum upd_kind kind, int nodes, int iters, cudaStream_t s, float *buf, int lock)
{
	double *t = (double *)malloc((size_t)iters * sizeof *t);
	cudaGraph_t g0 = chain(s, buf, nodes, 1.0), same = NULL, alt = NULL;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	int fresh = kind == UPD_FRESH || kind == UPD_CAPTURE;
	static const char *const ph_names[] = {"begin", "launches", "end", "update", "graph_destroy"};
	MUST(cudaGraphInstantiate(&e, g0, 0));
	if (kind == UPD_CAPTURE)
		ph_start(iters);
	if (kind == UPD_SAME)
		same = chain(s, buf, nodes, 1.0); /* identical to g0, captured once */
	if (kind == UPD_ALT) {			  /* the exec's topology, other arguments */
		same = chain(s, buf, nodes, 2.0);
		alt = chain(s, buf, nodes, 3.0);
	}
	for (int r = -10; r < iters; r++) { /* 10 warm-up iterations */
		double t0 = now_ns();
		ph_mark(r, 0);
		cudaGraph_t g = kind == UPD_ALT ? (r % 2 ? alt : same)
				: fresh	       ? chain_at(s, buf, nodes, 1.0 + (r + 10) * 1e-3, r)
					       : same;
		if (kind != UPD_CAPTURE)
			t0 = now_ns(); /* the capture is not timed */
		MUST(cudaGraphExecUpdate(e, g, &info));
		ph_mark(r, 4);
		double dt = now_ns() - t0;
		if (fresh)
			MUST(cudaGraphDestroy(g));
		ph_mark(r, 5);
		if (kind == UPD_CAPTURE)
			dt = now_ns() - t0;
		if (r >= 0)
			t[r] = dt;
		if ((r + 10) % 16 == 0)
			MUST(cudaGraphLaunch(e, s));
		bench_flush();
		if (lock) {
			if (r >= 0)
				printf("iter %d %.0f\n", r, dt);
			baton_turn();
		}
	}
	MUST(cudaStreamSynchronize(s));
	report(upd_name[kind], nodes, iters, t);
	if (kind == UPD_CAPTURE)
		ph_report(ph_names, 5);
	MUST(cudaGraphExecDestroy(e));
	MUST(cudaGraphDestroy(g0));
	if (same)
		MUST(cudaGraphDestroy(same));
	if (alt)
		MUST(cudaGraphDestroy(alt));
	free(t);
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	int nodes = argc > 2 ? atoi(argv[2]) : 64;
	int iters = argc > 3 ? atoi(argv[3]) : 300;
	int batch = argc > 4 ? atoi(argv[4]) : 1000;
	cudaStream_t s;
	float *buf;
	int lock, rc;
	if (iters < 1 || batch < 1 || nodes < 1 || (!strcmp(c, "capture") && nodes < 3)) {
		printf("usage: workload launch|eager|capture|update-same|update-fresh|update-alt|update-capture [NODES] "
		       "[ITERS] [BATCH]\n");
		return 2;
	}
	MUST(cudaFree(0));
	MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	MUST(cudaMalloc((void **)&buf, BUF * sizeof(float)));
	lock = baton_init(); /* after the set-up: the turns pair iterations only */
	if (!strcmp(c, "launch") || !strcmp(c, "eager"))
		rc = launches(c[0] == 'e', iters, batch, s, buf, lock);
	else if (!strcmp(c, "capture"))
		rc = capture(nodes, iters, s, lock);
	else {
		rc = -1;
		for (int k = UPD_SAME; k <= UPD_CAPTURE; k++)
			if (!strcmp(c, upd_name[k]))
				rc = update((enum upd_kind)k, nodes, iters, s, buf, lock);
	}
	if (rc == -1) {
		printf("unknown case '%s'\n", c);
		rc = 2;
	}
	if (lock)
		baton_pass(); /* a partner still waiting goes on */
	MUST(cudaFree(buf));
	return rc;
}
