/*
 * bench/rewrite_bench.cu -- the cost of CGSHIM_ON_UPDATE_FAILURE=reinstantiate
 * (issue 5). Graph G1 is a chain of NODES kernel nodes, G2 one of NODES+1
 * (a different topology: the driver refuses the update G1 -> G2).
 * Prints, medians over REPS repetitions:
 *   instantiate_ns          cudaGraphInstantiate(G2) alone (the old exec destroyed beforehand, untimed)
 *   destroy_instantiate_ns  cudaGraphExecDestroy(old) + cudaGraphInstantiate(G2): the application's own fallback
 *   rewrite_ns              cudaGraphExecUpdate(e, G2) of an exec of G1; only where it succeeds (under the
 *                           shim with reinstantiate: a rewrite); "nan" where the driver refuses it (bare)
 *   cold_ns, cold_instantiate_ns, cold_instantiate_alive_ns
 *                           a new topology every update: the update (shim: a fresh re-instantiation) or,
 *                           bare, the app's destroy+instantiate, the instantiate alone, and the instantiate
 *                           alone with the replaced exec still alive (the driver state a rewrite meets)
 *   launch_ns               per cudaGraphLaunch of the exec that runs G2 (bare: instantiated from G2;
 *                           under the shim: the rewritten exec), ITERS launches per sample
 * usage: rewrite_bench [REPS=200] [ITERS=5000] [NODES=64]
 *
 * Lockstep mode (bench/rewrite_lockstep.py), with BENCH_BATON=RFD,WFD,FIRST
 * in the environment: only the cold rewrites, REPS of them (shapes NODES+2 ..
 * NODES+41, in turn), each iteration (capture, then the timed update or
 * destroy+instantiate) taken while holding a baton that two processes, one
 * bare and one under the shim, pinned to one core, pass back and forth
 * through pipes: iteration i of one runs right after iteration i of the
 * other, so the pair shares the host's speed of the moment. Prints
 * "iter I NS START" per iteration (NS: the timed call, bare: the instantiate
 * alone; START: CLOCK_MONOTONIC at the iteration's start) and "lockstep_done".
 * BENCH_KEEP=1 (bare): instantiate while the exec being replaced and the
 * first one are still alive, the driver state a rewrite keeps (information).
 * Builds with nvcc (-O2 -arch=sm_90 -Ikernels) and, for a smoke test, as C
 * against the CPU stand-in (gcc -x c ... -Ikernels -Itests/standin -lcudart).
 * bench/run.py runs it bare, under the shim and disabled, interleaved (cases
 * rewrite-warm: rewrite_ns / bare instantiate_ns; rewrite-launch: launch_ns).
 */
#include <math.h>
#include <stdlib.h>
#include <time.h>
#include "scenario.h"
#include "bench.h"
#include "baton.h"

static cudaGraph_t chain(cudaStream_t s, float *buf, int nodes)
{
	cudaGraph_t g;
	MUST(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
	for (int i = 0; i < nodes; i++) {
		LAUNCH_ADD(s, buf, 256, 1.0);
		MUST(cudaGetLastError());
	}
	MUST(cudaStreamEndCapture(s, &g));
	return g;
}

/* Cold rewrites in lockstep: see the header. Under the shim the update of
 * f re-instantiates behind f (nothing cached: a shape recurs only after 40
 * others); bare, the application's fallback (destroy + instantiate), the
 * instantiate alone timed. */
static int lockstep(int reps, int nodes, cudaStream_t s, float *buf, cudaGraph_t g1)
{
	cudaGraphExec_t f = NULL;
	cudaGraphExecUpdateResultInfo info;
	cudaGraphExec_t orig;
	int rewrites = -1, keep = getenv("BENCH_KEEP") != NULL;
	MUST(cudaGraphInstantiate(&f, g1, 0));
	orig = f;
	if (!baton_init())
		return 2;
	for (int r = 0; r < reps; r++) {
		double start = now_ns(); /* CLOCK_MONOTONIC: comparable across the two processes */
		cudaGraph_t gc = chain(s, buf, nodes + 2 + r % 40);
		double t0, t;
		if (rewrites < 0) { /* the first: does this side rewrite? (untimed) */
			rewrites = cudaGraphExecUpdate(f, gc, &info) == cudaSuccess;
			(void)cudaGetLastError();
			MUST(cudaGraphDestroy(gc));
			gc = chain(s, buf, nodes + 2 + r % 40 + 40);
		}
		if (rewrites) {
			t0 = now_ns();
			MUST(cudaGraphExecUpdate(f, gc, &info));
			t = now_ns() - t0;
		} else if (keep) {
			/* the driver state a rewrite keeps, bare: the exec being
			 * replaced and the first one (the handle's original) alive */
			cudaGraphExec_t f2 = NULL;
			t0 = now_ns();
			MUST(cudaGraphInstantiate(&f2, gc, 0));
			t = now_ns() - t0;
			if (f != orig)
				MUST(cudaGraphExecDestroy(f));
			f = f2;
		} else {
			MUST(cudaGraphExecDestroy(f));
			t0 = now_ns();
			MUST(cudaGraphInstantiate(&f, gc, 0));
			t = now_ns() - t0;
		}
		MUST(cudaGraphDestroy(gc));
		printf("iter %d %.0f %.0f\n", r, t, start);
		baton_turn();
	}
	MUST(cudaGraphExecDestroy(f));
	if (keep && f != orig)
		MUST(cudaGraphExecDestroy(orig));
	printf("rewritten %d lockstep_done\n", rewrites);
	baton_pass();
	return 0;
}

int main(int argc, char **argv)
{
	int reps = argc > 1 ? atoi(argv[1]) : 200;
	int iters = argc > 2 ? atoi(argv[2]) : 5000;
	int nodes = argc > 3 ? atoi(argv[3]) : 64;
	int samples = 7;
	double *t = (double *)malloc((reps > samples ? reps : samples) * sizeof(double));
	cudaStream_t s;
	cudaGraph_t g1, g2;
	cudaGraphExec_t x = NULL, e = NULL, le;
	cudaGraphExecUpdateResultInfo info;
	float *buf;
	int rewrites;

	MUST(cudaFree(0));
	MUST(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	MUST(cudaMalloc((void **)&buf, 256 * sizeof(float)));
	g1 = chain(s, buf, nodes);
	if (getenv("BENCH_BATON"))
		return lockstep(reps, nodes, s, buf, g1);
	g2 = chain(s, buf, nodes + 1);

	/* warm-up: first instantiation loads modules */
	MUST(cudaGraphInstantiate(&x, g2, 0));
	MUST(cudaGraphLaunch(x, s));
	MUST(cudaStreamSynchronize(s));
	MUST(cudaGraphExecDestroy(x));

	for (int r = 0; r < reps; r++) {
		MUST(cudaGraphInstantiate(&x, g1, 0)); /* an old exec to destroy, as the fallback does */
		MUST(cudaGraphExecDestroy(x));
		double t0 = now_ns();
		MUST(cudaGraphInstantiate(&x, g2, 0));
		t[r] = now_ns() - t0;
		MUST(cudaGraphExecDestroy(x));
	}
	printf("instantiate_ns %.0f\n", median(t, reps));

	MUST(cudaGraphInstantiate(&x, g1, 0));
	for (int r = 0; r < reps; r++) {
		double t0 = now_ns();
		MUST(cudaGraphExecDestroy(x));
		MUST(cudaGraphInstantiate(&x, g2, 0));
		t[r] = now_ns() - t0;
		MUST(cudaGraphExecDestroy(x));
		MUST(cudaGraphInstantiate(&x, g1, 0));
	}
	MUST(cudaGraphExecDestroy(x));
	printf("destroy_instantiate_ns %.0f\n", median(t, reps));

	MUST(cudaGraphInstantiate(&e, g1, 0));
	MUST(cudaGraphLaunch(e, s));
	MUST(cudaStreamSynchronize(s));
	if (cudaGraphExecUpdate(e, g2, &info) != cudaSuccess) {
		(void)cudaGetLastError();
		printf("rewrite_ns nan\n");
		MUST(cudaGraphExecDestroy(e));
		MUST(cudaGraphInstantiate(&e, g2, 0));
		rewrites = 0;
	} else {
		for (int r = 0; r < reps; r++) {
			MUST(cudaGraphExecUpdate(e, g1, &info)); /* back to G1, untimed */
			double t0 = now_ns();
			MUST(cudaGraphExecUpdate(e, g2, &info));
			t[r] = now_ns() - t0;
		}
		printf("rewrite_ns %.0f\n", median(t, reps));
		rewrites = 1;
	}

	/* cold rewrites: every update brings a topology the handle has not
	 * had (chains of nodes+2, nodes+3, ...), so each one re-instantiates;
	 * after the shim's cache of 4 replacements is full, each also destroys
	 * the least recently used one. Bare: the application's own fallback. */
	{
		int cold = reps < 40 ? reps : 40;
		double *tc = (double *)malloc(cold * sizeof(double));
		double *tci = (double *)malloc(cold * sizeof(double));
		cudaGraph_t gc;
		cudaGraphExec_t f = NULL;
		if (rewrites)
			MUST(cudaGraphInstantiate(&f, g1, 0));
		for (int r = 0; r < cold; r++) {
			gc = chain(s, buf, nodes + 2 + r);
			double t0 = now_ns(), ti = 0;
			if (rewrites) {
				MUST(cudaGraphExecUpdate(f, gc, &info));
			} else {
				if (f)
					MUST(cudaGraphExecDestroy(f));
				ti = now_ns();
				MUST(cudaGraphInstantiate(&f, gc, 0));
				tci[r] = now_ns() - ti; /* the instantiate alone */
			}
			tc[r] = now_ns() - t0;
			MUST(cudaGraphDestroy(gc));
		}
		printf("cold_ns %.0f\n", median(tc, cold));
		if (!rewrites)
			printf("cold_instantiate_ns %.0f\n", median(tci, cold));
		if (!rewrites) {
			/* The same instantiations in the driver state a rewrite
			 * meets: the replaced executable still alive (the shim
			 * cannot destroy it before its replacement exists: if the
			 * instantiation failed, the application's handle must go on
			 * working), destroyed afterwards, untimed. */
			for (int r = 0; r < cold; r++) {
				cudaGraphExec_t f2 = NULL;
				gc = chain(s, buf, nodes + 2 + r); /* the same shapes as above */
				double t0 = now_ns();
				MUST(cudaGraphInstantiate(&f2, gc, 0));
				tci[r] = now_ns() - t0;
				if (f)
					MUST(cudaGraphExecDestroy(f));
				f = f2;
				MUST(cudaGraphDestroy(gc));
			}
			printf("cold_instantiate_alive_ns %.0f\n", median(tci, cold));
		}
		if (f)
			MUST(cudaGraphExecDestroy(f));
		free(tc);
		free(tci);
	}

	/* launches of the exec that runs G2 */
	le = e;
	for (int i = 0; i < 200; i++)
		MUST(cudaGraphLaunch(le, s));
	MUST(cudaStreamSynchronize(s));
	for (int k = 0; k < samples; k++) {
		double t0 = now_ns();
		for (int i = 0; i < iters; i++)
			MUST(cudaGraphLaunch(le, s));
		MUST(cudaStreamSynchronize(s));
		t[k] = (now_ns() - t0) / iters;
	}
	printf("launch_ns %.1f\n", median(t, samples));
	printf("rewritten %d nodes %d reps %d iters %d\n", rewrites, nodes, reps, iters);
	MUST(cudaGraphExecDestroy(e));
	MUST(cudaGraphDestroy(g1));
	MUST(cudaGraphDestroy(g2));
	MUST(cudaFree(buf));
	free(t);
	return 0;
}
