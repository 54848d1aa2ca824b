/*
 * kernels/model/device_reset.cu -- cudaDeviceReset with graphs, an
 * executable, a pool and an outstanding graph allocation live, then new
 * ones, some on the handles of the dead (tests/gpu/reset is its GPU twin).
 *
 * Before the reset: pool P; graph g1 captured with a 1 MiB allocation it
 * never frees, instantiated as e1 and launched (the allocation outstanding
 * when the device is reset); graph g2 allocating 2 MiB from P and freeing it,
 * instantiated as e2, launched, then e2 and g2 destroyed (so that, on the
 * stand-in run with STANDIN_REUSE_HANDLES=1, the handles the driver gives
 * next are g1's, e1's and P's, which the reset destroyed).
 * After it: pool P2, a stream, graph g3 allocating 1 MiB from P2 and freeing
 * it, instantiated as e3, launched, e3 and g3 destroyed; P2 kept to the exit.
 * A correct program: the shim must name nothing (the reset gave the
 * outstanding allocation back; g3, e3 and P2 are new objects whatever their
 * handles). Handles go to stderr ("graph g1 0x...", "reuse graph 1 exec 1
 * pool 1"), stdout is deterministic.
 * With DEVICE_RESET_OTHER=1 (tests/model: the stand-in with two devices)
 * the program first captures on device 1 a graph g4 whose 1 MiB allocation
 * stays outstanding, instantiated as e4 and launched, and keeps it to the
 * exit: the reset of device 0 leaves it, and the exit names its allocation
 * (CGS011, a hint: true, device 1 was not reset).
 * With DEVICE_RESET_REWRITE=1 (tests/model, under
 * CGSHIM_ON_UPDATE_FAILURE=reinstantiate) an exec e5 is updated from a graph
 * of another topology before the reset (the shim re-instantiates it behind
 * e5), and after it two new execs fill a new buffer with 5 and 7, each
 * checked, then destroyed with their graphs: on the stand-in they get the
 * dead replacement's and e5's handles, and a policy that still held e5's
 * rewrite destroyed the new graph on its dead clone's handle when e7 went.
 * Prints "rewrite ok" or "rewrite FAILED ..." on stderr.
 */
#include <stdint.h>
#include <stdlib.h>
#include "scenario.h"

#define N1 (1L << 18) /* 1 MiB of floats */
#define N2 (2L << 18) /* 2 MiB */

static cudaGraphExec_t cycle(cudaStream_t s, cudaGraph_t *g, cudaMemPool_t pool, long n, int free_it)
{
	cudaGraphExec_t e = NULL;
	float *p = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	if (pool)
		CHECK(cudaMallocFromPoolAsync((void **)&p, n * sizeof(float), pool, s), cudaSuccess);
	else
		CHECK(cudaMallocAsync((void **)&p, n * sizeof(float), s), cudaSuccess);
	LAUNCH_FILL(s, p, n, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	if (free_it)
		CHECK(cudaFreeAsync(p, s), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, *g, 0), cudaSuccess);
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	return e;
}

/* A one-kernel capture filling p with v, instantiated (flags 0). */
static cudaGraphExec_t fill_exec(cudaStream_t s, cudaGraph_t *g, float *p, double v, int add)
{
	cudaGraphExec_t e = NULL;
	CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal), cudaSuccess);
	LAUNCH_FILL(s, p, N1, v);
	if (add)
		LAUNCH_ADD(s, p, N1, 1.0);
	CHECK(cudaGetLastError(), cudaSuccess);
	CHECK(cudaStreamEndCapture(s, g), cudaSuccess);
	CHECK(cudaGraphInstantiate(&e, *g, 0), cudaSuccess);
	return e;
}

/* Launches e on s and reads p's first value back. */
static float run_read(cudaGraphExec_t e, cudaStream_t s, const float *p)
{
	float h = -1;
	CHECK(cudaGraphLaunch(e, s), cudaSuccess);
	CHECK(cudaStreamSynchronize(s), cudaSuccess);
	CHECK(cudaMemcpy(&h, p, sizeof h, cudaMemcpyDeviceToHost), cudaSuccess);
	return h;
}

/* Before the reset: e5 (fill 1) updated from a graph of two kernels (fill
 * 2, add 1): the driver refuses, the policy re-instantiates. */
static void rewrite_before(cudaStream_t s)
{
	cudaGraph_t g5, gx;
	cudaGraphExec_t e5;
	float *p = NULL, v;
	CHECK(cudaMalloc((void **)&p, N1 * sizeof(float)), cudaSuccess);
	e5 = fill_exec(s, &g5, p, 1.0, 0);
	cudaGraphExec_t ex = fill_exec(s, &gx, p, 2.0, 1);
	CHECK(cudaGraphExecDestroy(ex), cudaSuccess);
	(void)cudaGraphExecUpdate(e5, gx, NULL); /* 910 bare, rewritten under the policy */
	v = run_read(e5, s, p);
	if (v != 3.0f)
		fprintf(stderr, "rewrite FAILED before the reset: %g (want 3)\n", v);
}

/* After it: two new execs, each checked, destroyed with their graphs. */
static void rewrite_after(void)
{
	cudaStream_t s;
	cudaGraph_t g6, g7;
	cudaGraphExec_t e6, e7;
	float *p = NULL, v6, v7;
	int bad = 0;
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	CHECK(cudaMalloc((void **)&p, N1 * sizeof(float)), cudaSuccess);
	e6 = fill_exec(s, &g6, p, 5.0, 0);
	e7 = fill_exec(s, &g7, p, 7.0, 0);
	v6 = run_read(e6, s, p);
	v7 = run_read(e7, s, p);
	bad += cudaGraphExecDestroy(e7) != cudaSuccess;
	bad += cudaGraphDestroy(g7) != cudaSuccess;
	bad += cudaGraphExecDestroy(e6) != cudaSuccess;
	bad += cudaGraphDestroy(g6) != cudaSuccess;
	if (v6 != 5.0f || v7 != 7.0f || bad)
		fprintf(stderr, "rewrite FAILED after the reset: %g %g (want 5 7), %d destroys refused\n", v6, v7, bad);
	else
		fprintf(stderr, "rewrite ok\n");
	CHECK(cudaFree(p), cudaSuccess);
	CHECK(cudaStreamDestroy(s), cudaSuccess);
}

int main(void)
{
	cudaStream_t s, s2;
	cudaGraph_t g1 = NULL, g2 = NULL, g3 = NULL;
	cudaGraphExec_t e1, e2, e3;
	cudaMemPool_t pool = NULL, pool2 = NULL;
	struct cudaMemPoolProps props;

	CHECK(cudaFree(0), cudaSuccess);
	if (getenv("DEVICE_RESET_OTHER")) {
		cudaStream_t s1;
		cudaGraph_t g4 = NULL;
		CHECK(cudaSetDevice(1), cudaSuccess);
		CHECK(cudaStreamCreate(&s1), cudaSuccess);
		(void)cycle(s1, &g4, NULL, N1, 0); /* outstanding on device 1 to the exit */
		CHECK(cudaSetDevice(0), cudaSuccess);
	}
	CHECK(cudaStreamCreate(&s), cudaSuccess);
	props = sc_pool_props(0, cudaMemHandleTypeNone);
	CHECK(cudaMemPoolCreate(&pool, &props), cudaSuccess);
	e1 = cycle(s, &g1, NULL, N1, 0); /* its allocation stays outstanding */
	e2 = cycle(s, &g2, pool, N2, 1);
	CHECK(cudaGraphExecDestroy(e2), cudaSuccess);
	CHECK(cudaGraphDestroy(g2), cudaSuccess);
	if (getenv("DEVICE_RESET_REWRITE"))
		rewrite_before(s);
	fprintf(stderr, "graph g1 %p\nexec e1 %p\npool P %p\n", (void *)g1, (void *)e1, (void *)pool);

	CHECK(cudaDeviceReset(), cudaSuccess);

	CHECK(cudaMemPoolCreate(&pool2, &props), cudaSuccess);
	CHECK(cudaStreamCreate(&s2), cudaSuccess);
	e3 = cycle(s2, &g3, pool2, N1, 1);
	fprintf(stderr, "graph g3 %p\nexec e3 %p\npool P2 %p\n", (void *)g3, (void *)e3, (void *)pool2);
	fprintf(stderr, "reuse graph %d exec %d pool %d\n", g3 == g1, e3 == e1, pool2 == pool);
	CHECK(cudaGraphExecDestroy(e3), cudaSuccess);
	CHECK(cudaGraphDestroy(g3), cudaSuccess);
	CHECK(cudaStreamDestroy(s2), cudaSuccess);
	if (getenv("DEVICE_RESET_REWRITE"))
		rewrite_after();
	/* P2 stays to the exit: its "pool" record counts what it gave */
	return SCENARIO_EXIT();
}
