/*
 * kernels/policy/solver_loop.cu -- an iterative solver in the style of
 * NVIDIA's jacobiCudaGraphs sample: every iteration re-captures its step,
 * calls cudaGraphExecUpdate on the one exec and launches it.
 *
 * The step is the affine iteration x <- 0.5 x + 1 (scale, add); the
 * topology switches every K iterations between that and a step with an
 * extra kernel (x <- 0.5 x + 1 + 0.25). usage: solver_loop [K] (default 5;
 * K=1 switches every iteration: the update fails at every step, which the
 * shim reports as thrashing). The final vector is checked against the same
 * iteration computed on the host.
 *
 * Bare (no shim): the first update after a switch returns 910
 * cudaErrorGraphExecUpdateFailure: exit 1.
 * Under libcgshim.so with CGSHIM_ON_UPDATE_FAILURE=reinstantiate: one
 * rewrite per switch (ITERS/K - 1 of them with ITERS=60), exit 0.
 */
#include <math.h>
#include <stdlib.h>
#include "policy_scenario.h"

#define N 8192L
#define ITERS 60

/* quiet in the loop: print only what goes wrong */
#define QUIET(call)                                                                                                    \
	do {                                                                                                           \
		int rc_ = (int)(call);                                                                                 \
		if (rc_ != cudaSuccess) {                                                                              \
			printf("%s: rc=%d (%s) UNEXPECTED\nABORT (line %d)\n", #call, rc_,                             \
			       cudaGetErrorName((cudaError_t)rc_), __LINE__);                                          \
			exit(1);                                                                                       \
		}                                                                                                      \
	} while (0)

int main(int argc, char **argv)
{
	int K = argc > 1 ? atoi(argv[1]) : 5, switches = 0;
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t e = NULL;
	cudaGraphExecUpdateResultInfo info;
	float *x = NULL, host = 0.0f, *h;

	if (K < 1)
		K = 1;
	MUST(cudaFree(0));
	MUST(cudaStreamCreate(&s));
	MUST(cudaMalloc((void **)&x, N * sizeof(float)));
	MUST(cudaMemset(x, 0, N * sizeof(float)));

	for (int it = 0; it < ITERS; it++) {
		int extra = (it / K) % 2;
		if (it && extra != ((it - 1) / K) % 2)
			switches++;
		QUIET(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		LAUNCH_SCALE(s, x, N, 0.5);
		QUIET(cudaGetLastError());
		LAUNCH_ADD(s, x, N, 1.0);
		QUIET(cudaGetLastError());
		if (extra) {
			LAUNCH_ADD(s, x, N, 0.25);
			QUIET(cudaGetLastError());
		}
		QUIET(cudaStreamEndCapture(s, &g));
		if (!e) {
			QUIET(cudaGraphInstantiate(&e, g, 0));
		} else {
			memset(&info, 0xff, sizeof info);
			QUIET(cudaGraphExecUpdate(e, g, &info));
			if (info.result != cudaGraphExecUpdateSuccess) {
				printf("ABORT: iteration %d: update result %d\n", it, (int)info.result);
				exit(1);
			}
			QUIET(cudaGetLastError());
		}
		QUIET(cudaGraphDestroy(g));
		QUIET(cudaGraphLaunch(e, s));
		/* host reference, the same float operations */
		host = host * 0.5f;
		host = host + 1.0f;
		if (extra)
			host = host + 0.25f;
	}
	MUST(cudaStreamSynchronize(s));
	h = (float *)malloc(N * sizeof(float));
	MUST(cudaMemcpy(h, x, N * sizeof(float), cudaMemcpyDeviceToHost));
	long bad = 0;
	for (long i = 0; i < N; i++)
		bad += fabsf(h[i] - host) > 1e-6f * fabsf(host);
	printf("K=%d iterations=%d topology switches=%d\n", K, ITERS, switches);
	printf("x: %.6f (host %.6f)%s\n", (double)h[0], (double)host, bad ? " MISMATCH" : "");
	free(h);
	if (bad) {
		printf("ABORT: wrong numbers\n");
		return 1;
	}
	MUST(cudaGraphExecDestroy(e));
	MUST(cudaFree(x));
	MUST(cudaStreamDestroy(s));
	printf("solver_loop: OK\n");
	return SCENARIO_EXIT();
}
