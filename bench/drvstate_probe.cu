/* bench/drvstate_probe.cu -- which driver state makes cudaGraphInstantiate
 * slower (issue 5: a rewrite instantiates in the state the shim keeps)?
 * Each variant instantiates chains of 66..105 kernels (a new graph each
 * time, as a cold rewrite does) and times the instantiate alone; median per
 * variant, ROUNDS rounds interleaved (round 0 warms up), then the median of
 * the per-round medians relative to destroy-first.
 *   destroy-first     the previous exec destroyed just before (the bare fallback)
 *   alive             the previous exec destroyed just after (a rewrite's state)
 *   +K execs          K more executables of 64-node chains alive all along
 *   flush             32 MiB of host memory written before the instantiate
 *   alive+kill1/kill64  an unrelated exec of 1 / 64 nodes destroyed just
 *                     before (untimed): does a fresh destroy of *any* exec help?
 *   alive+prevgraph   the previous exec's graph kept alive too
 * Also prints the median cudaGraphExecDestroy time of a 66..105-node exec.
 *   nvcc -O2 -arch=sm_90 -Ikernels -Ibench -o drvstate_probe bench/drvstate_probe.cu */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "scenario.h"
#include "bench.h"

#define REPS 40
#define ROUNDS 6

static cudaStream_t s;
static float *buf;

static cudaGraph_t chain(int n)
{
	cudaGraph_t g;
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	for (int i = 0; i < n; i++)
		LAUNCH_ADD(s, buf, 1024L, 1.0);
	cudaStreamEndCapture(s, &g);
	return g;
}

static cudaGraphExec_t inst(int n)
{
	cudaGraph_t g = chain(n);
	cudaGraphExec_t e;
	cudaGraphInstantiate(&e, g, 0);
	cudaGraphDestroy(g);
	return e;
}

enum { DESTROY_FIRST, ALIVE, DF_X1, DF_X4, DF_X16, AL_X1, AL_X3, DF_FLUSH, AL_KILL1, AL_KILL64, AL_PREVGRAPH, NV };
static const char *names[NV] = {
    "destroy-first",  "alive",	       "destroy-first+1 exec", "destroy-first+4 execs", "destroy-first+16 execs",
    "alive+1 exec",   "alive+3 execs", "destroy-first+flush",  "alive+kill1",		"alive+kill64",
    "alive+prevgraph"};

int main(void)
{
	static char flush[32 << 20];
	double res[ROUNDS][NV], dtimes[ROUNDS * REPS];
	int nd = 0;
	cudaFree(0);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	cudaMalloc((void **)&buf, 1 << 20);
	for (int round = 0; round < ROUNDS; round++)
		for (int v = 0; v < NV; v++) {
			double t[REPS];
			cudaGraphExec_t f = NULL, extra[16];
			cudaGraph_t prev = NULL;
			int nx = v == DF_X1 || v == AL_X1 ? 1 : v == DF_X4 ? 4 : v == DF_X16 ? 16 : v == AL_X3 ? 3 : 0;
			int alive = v == ALIVE || v == AL_X1 || v == AL_X3 || v == AL_KILL1 || v == AL_KILL64 ||
				    v == AL_PREVGRAPH;
			for (int i = 0; i < nx; i++)
				extra[i] = inst(64);
			for (int r = 0; r < REPS; r++) {
				cudaGraph_t gc = chain(66 + r);
				cudaGraphExec_t f2 = NULL, k = NULL;
				if (v == AL_KILL1 || v == AL_KILL64)
					k = inst(v == AL_KILL1 ? 1 : 64);
				if (!alive && f) {
					double a = now_ns();
					cudaGraphExecDestroy(f);
					if (v == DESTROY_FIRST && round)
						dtimes[nd++] = now_ns() - a;
					f = NULL;
				}
				if (k)
					cudaGraphExecDestroy(k);
				if (v == DF_FLUSH)
					memset(flush, r, sizeof flush);
				double a = now_ns();
				cudaGraphInstantiate(&f2, gc, 0);
				t[r] = now_ns() - a;
				if (f)
					cudaGraphExecDestroy(f);
				f = f2;
				if (v == AL_PREVGRAPH) {
					if (prev)
						cudaGraphDestroy(prev);
					prev = gc;
				} else {
					cudaGraphDestroy(gc);
				}
			}
			if (f)
				cudaGraphExecDestroy(f);
			if (prev)
				cudaGraphDestroy(prev);
			for (int i = 0; i < nx; i++)
				cudaGraphExecDestroy(extra[i]);
			res[round][v] = median(t, REPS);
		}
	for (int round = 0; round < ROUNDS; round++) {
		printf("round %d:", round);
		for (int v = 0; v < NV; v++)
			printf(" %.0f", res[round][v]);
		printf("\n");
	}
	double base;
	{
		double m[ROUNDS - 1];
		for (int r = 1; r < ROUNDS; r++)
			m[r - 1] = res[r][0];
		base = median(m, ROUNDS - 1);
	}
	for (int v = 0; v < NV; v++) {
		double m[ROUNDS - 1], q[ROUNDS - 1];
		for (int r = 1; r < ROUNDS; r++) {
			m[r - 1] = res[r][v];
			q[r - 1] = res[r][v] / res[r][0];
		}
		printf("%-24s %7.0f ns  x%.3f (median of per-round ratios %.3f)\n", names[v], median(m, ROUNDS - 1),
		       median(m, ROUNDS - 1) / base, median(q, ROUNDS - 1));
	}
	printf("cudaGraphExecDestroy of a 66..105-node exec: %.0f ns median\n", median(dtimes, nd));
	return 0;
}
